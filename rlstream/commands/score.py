"""``rlstream score``: run one program against one task and show its reward and noise verdict."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from producers.ingest.jsonl import parse_line
from rlstream.commands._common import echo_json, handle_errors, printable
from rlstream.commands.sandbox import BACKENDS, sandbox_config
from rlstream.settings import get_settings
from schemas.errors import InputError, SandboxError, UsageError
from streams.noise.config import NoiseConfig
from streams.reward.config import RewardConfig
from streams.reward.evaluate import Evaluator
from streams.reward.function import available, get_reward_function
from streams.sandbox import Sandbox


def _read_task(path: Path):  # type: ignore[no-untyped-def]
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the task file: {exc}", location=str(path)) from exc
    try:
        return parse_line(text.strip())
    except InputError as exc:
        raise InputError(
            exc.message,
            location=str(path),
            hint="the task file is one TaskPublished JSON object (see DESIGN.md)",
        ) from exc


def register(app: typer.Typer) -> None:
    @app.command("score")
    @handle_errors
    def score(
        task: Path = typer.Option(..., "--task", help="TASK.json: one task in the TaskPublished format"),
        code: Path = typer.Option(..., "--code", help="FILE.py: the program to score"),
        backend: str = typer.Option(None, "--backend", help="wasm | container | auto (default: settings)"),
        reward: str = typer.Option(
            None, "--reward", help="registered reward function, name-version (default: settings, code-v7)"
        ),
        reruns: int = typer.Option(
            None, "--reruns", min=0, max=10, help="extra runs to detect flaky results"
        ),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
        probe_seed: str = typer.Option(
            None,
            "--probe-seed",
            help="hex seed of the probe plan (default: a fresh secret one), to reproduce a verdict",
        ),
    ) -> None:
        """Score FILE.py on TASK.json: sandbox run, versioned reward, noise-filter verdict."""
        if backend is not None and backend not in BACKENDS:
            raise UsageError(f"--backend {backend!r} is not one of {', '.join(BACKENDS)}")
        if probe_seed is not None and not re.fullmatch(r"[0-9a-f]{8,128}", probe_seed):
            raise UsageError(
                f"--probe-seed {probe_seed[:40]!r} is not 8 to 128 lower-case hex digits",
                hint="e.g. --probe-seed 0123456789abcdef0123456789abcdef",
            )
        settings = get_settings()
        reward = reward or settings.reward_function
        if reward not in available():
            raise UsageError(
                f"--reward {reward!r} is not registered", hint=f"choose one of {', '.join(available())}"
            )
        the_task = _read_task(task)
        try:
            # utf-8-sig: a byte-order mark an editor wrote is not part of the program (Python skips it too)
            source = code.read_text("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read the program: {exc}", location=str(code)) from exc
        # the settings object carries these once the composition root knows them; defaults otherwise
        reward_config = getattr(settings, "reward", None) or RewardConfig()
        noise_config = getattr(settings, "noise", None) or NoiseConfig()
        evaluator = Evaluator(
            Sandbox(sandbox_config()),
            get_reward_function(reward, reward_config),
            noise_config,
            reruns=reruns,
            probe_seed=probe_seed,
        )
        result = evaluator.evaluate(the_task, source, sample_id="cli", group_id="cli", backend=backend)  # type: ignore[arg-type]
        if result.execution.infra_error:
            raise SandboxError(
                f"the sandbox failed ({result.execution.backend}): {result.execution.infra_error}"
            )
        if as_json:
            echo_json(result.cli_json())
            return
        out = result.cli_json()
        typer.echo(
            f"reward {out['reward']:.4f} ({reward}) passed {out['passed']}/{out['total']} "
            f"verdict {out['verdict']} [{out['backend']}]"
        )
        for name, value in result.reward.components.items():
            typer.echo(f"  {name}: {value:.4f}")
        for r in result.verdict.reasons:
            typer.echo(printable(f"  reason {r.code}: {r.detail}"))
