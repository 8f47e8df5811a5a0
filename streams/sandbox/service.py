"""The sandbox's Python API: run a program's cases, a check, or a whole script on one backend."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from schemas.errors import DependencyError, SandboxError, UsageError
from streams.sandbox import artifact
from streams.sandbox.config import SandboxConfig
from streams.sandbox.container import ContainerBackend
from streams.sandbox.limits import Limits, RawRun
from streams.sandbox.protocol import encode_job, new_nonce, read_verdicts
from streams.sandbox.result import ExecutionResult, Job, interpret
from streams.sandbox.router import failure_reason, static_reason


def default_cache_dir() -> Path:
    return Path.home() / ".rlstream" / "cache" / "sandbox"


class Sandbox:
    """One process's sandbox: backends are made on first use (the WASM engine is never shared
    across a fork). Thread-safe for concurrent jobs on different threads."""

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.cache_dir = self.config.cache_dir or default_cache_dir()
        self._lock = threading.Lock()
        self._wasm: Any = None
        self._container: ContainerBackend | None = None
        self._runtime_hash: str | None = None
        self._pid = os.getpid()

    # -- backends -----------------------------------------------------------------------------------
    def wasm(self) -> Any:
        if os.getpid() != self._pid:
            # a wasmtime engine does not survive fork (its threads and signal handlers stay behind)
            raise SandboxError(
                "this Sandbox was made in another process (forked)",
                hint="make one Sandbox per process; SandboxPool starts its workers with forkserver",
            )
        with self._lock:
            if self._wasm is None:
                from streams.sandbox.wasm import WasmBackend

                self._wasm = WasmBackend(artifact.load(self.cache_dir))
            return self._wasm

    def container(self) -> ContainerBackend:
        with self._lock:
            if self._container is None:
                self._container = ContainerBackend(
                    python=self.config.container_python,
                    require_cgroup=self.config.container_require_cgroup,
                )
            return self._container

    def ensure(self, backend: str) -> None:
        """Raise DependencyError (naming the set-up step) unless ``backend`` can run here."""
        if backend in ("wasm", "auto"):
            self.wasm()
        if backend in ("container", "auto"):
            self.container()

    def runtime_hash(self) -> str:
        if self._runtime_hash is None:
            self._runtime_hash = artifact.runtime_hash()
        return self._runtime_hash

    def limits(self, *, timeout_s: float | None = None, memory_mb: int | None = None) -> Limits:
        return Limits.from_config(self.config, timeout_s=timeout_s, memory_mb=memory_mb)

    # -- the API ------------------------------------------------------------------------------------
    def run_cases(
        self,
        code: str,
        entry_point: str,
        inputs: list[str] | tuple[str, ...],
        *,
        limits: Limits | None = None,
        backend: str | None = None,
    ) -> ExecutionResult:
        """Call ``entry_point`` on each input (a literal of its argument tuple); results come back as
        ``repr()`` text per case. Comparing them with expected outputs is the caller's business."""
        job = Job(
            mode="cases",
            code=code,
            entry_point=entry_point,
            inputs=tuple(inputs),
            limits=limits or self.limits(),
        )
        return self.execute(job, backend)

    def run_check(
        self,
        code: str,
        check_src: str,
        entry_point: str,
        *,
        limits: Limits | None = None,
        backend: str | None = None,
    ) -> ExecutionResult:
        """HumanEval-style ``check(candidate)``: passes when the check returns. Weaker than cases: the
        comparison runs inside the sandbox, next to the program."""
        job = Job(
            mode="check", code=code, entry_point=entry_point, check=check_src, limits=limits or self.limits()
        )
        return self.execute(job, backend)

    def run_script(
        self, code: str, *, limits: Limits | None = None, backend: str | None = None
    ) -> ExecutionResult:
        """A whole program as ``__main__``: exit code, stdout and stderr."""
        return self.execute(Job(mode="script", code=code, limits=limits or self.limits()), backend)

    def execute(self, job: Job, backend: str | None = None) -> ExecutionResult:
        name = backend or self.config.backend
        if name == "wasm":
            return self._run_on("wasm", job, "requested")
        if name == "container":
            return self._run_on("container", job, "requested")
        if name != "auto":
            raise UsageError(f"unknown sandbox backend {name!r}", hint="use wasm, container or auto")
        reason = static_reason(job.code + "\n" + job.check)
        if reason is not None:
            return self._run_on("container", job, reason)
        first = self._run_on("wasm", job, "auto: wasm first")
        if first.infra_error and first.infra_error.startswith("dependency:"):
            return self._run_on("container", job, f"auto: wasm unavailable ({first.infra_error})")
        why = failure_reason(first)
        if why is None:
            return first
        return self._run_on("container", job, f"auto: {why}")

    def _run_on(self, name: str, job: Job, reason: str) -> ExecutionResult:
        t0 = time.perf_counter()
        try:
            impl = self.wasm() if name == "wasm" else self.container()
            runtime_hash = (
                self.runtime_hash() if name == "wasm" else f"container:{self.config.container_python}"
            )
            raw, nonce = self._raw(impl, job)
        except DependencyError as exc:
            return ExecutionResult(
                backend=name,
                mode=job.mode,
                backend_reason=reason,
                infra_error=f"dependency: {exc}",
                duration_s=time.perf_counter() - t0,
            )
        except SandboxError as exc:
            return ExecutionResult(
                backend=name,
                mode=job.mode,
                backend_reason=reason,
                infra_error=f"sandbox: {exc}",
                duration_s=time.perf_counter() - t0,
            )
        verdicts = read_verdicts(raw.frames, nonce)
        result = interpret(job, raw, verdicts, runtime_hash=runtime_hash, reason=reason)
        return replace(result, cache_key=job.cache_key(name, runtime_hash))

    def _raw(self, impl: Any, job: Job) -> tuple[RawRun, str]:
        block, roots = impl.policy()
        nonce = new_nonce()

        def payload(channel: str) -> bytes:
            return encode_job(
                nonce=nonce,
                mode=job.mode,
                code=job.code,
                channel=channel,
                entry_point=job.entry_point,
                inputs=job.inputs,
                check=job.check,
                block=block,
                read_roots=roots,
            )

        raw: RawRun = impl.run(payload, job.limits)
        return raw, nonce
