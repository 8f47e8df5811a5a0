"""The sandbox's Python API: run a program's cases, a check, or a whole script on one backend."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from schemas.errors import DependencyError, SandboxError, UsageError
from streams.sandbox import artifact
from streams.sandbox.clocks import clock_seed
from streams.sandbox.config import SandboxConfig
from streams.sandbox.container import ContainerBackend
from streams.sandbox.limits import Limits, Policy
from streams.sandbox.protocol import (
    DIGEST_AFTER,
    Bridge,
    CaseInputs,
    Session,
    caller_reuse_from,
    encode_job,
)
from streams.sandbox.result import ExecutionResult, Job, Outcome, interpret
from streams.sandbox.router import failure_reason, older_python_reason, static_reason


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
                    site=artifact.jail_site(self.cache_dir),
                    fork_server=self.config.container_fork_server,
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
        clock_draw: int = 0,
    ) -> ExecutionResult:
        """Call ``entry_point`` on each input (a literal of its argument tuple); results come back as
        ``repr()`` text per case. Comparing them with expected outputs is the caller's business.
        ``clock_draw``: ``Job.clock_draw`` (a run's index)."""
        job = Job(
            mode="cases",
            code=code,
            entry_point=entry_point,
            inputs=tuple(inputs),
            limits=limits or self.limits(),
            clock_draw=clock_draw,
        )
        return self.execute(job, backend)

    def run_check(
        self,
        code: str,
        check_src: str,
        entry_point: str,
        *,
        prelude: str = "",
        limits: Limits | None = None,
        backend: str | None = None,
        clock_draw: int = 0,
    ) -> ExecutionResult:
        """HumanEval-style ``check(candidate)``: passes when the check returns. The check (after
        ``prelude``, the task's prompt with its helpers) runs in a guest of its own that the program
        never touched; ``candidate`` hands plain literals to the program's guest and back."""
        job = Job(
            mode="check",
            code=code,
            entry_point=entry_point,
            check=check_src,
            prelude=prelude,
            limits=limits or self.limits(),
            clock_draw=clock_draw,
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
        reason = static_reason(job.code, numpy_in_container=self._container_has_site())
        if reason is not None:
            return self._back_to_wasm(job, self._run_on("container", job, reason))
        first = self._run_on("wasm", job, "auto: wasm first")
        if first.infra_error and first.infra_error.startswith("dependency:"):
            return self._run_on("container", job, f"auto: wasm unavailable ({first.infra_error})")
        why = failure_reason(first, numpy_in_container=self._container_has_site())
        if why is None:
            return first
        second = self._run_on("container", job, f"auto: {why}")
        return first if older_python_reason(second) is not None else second

    def _back_to_wasm(self, job: Job, result: ExecutionResult) -> ExecutionResult:
        """A program ``auto`` sent to the container that the jail's older Python cannot run is run in
        WASM after all: never judged by a Python that lacks what it uses."""
        why = older_python_reason(result)
        if why is None:
            return result
        again = self._run_on("wasm", job, f"auto: {result.backend_reason}, but {why}")
        return result if again.infra_error else again

    def _check_backend(self, impl: Any, job: Job) -> Any:
        """Where a check guest runs: beside a container candidate, on WASM when the runtime is
        there (a fresh instance costs milliseconds, a second jail tens of them); the check and the
        prompt are the task's, and only literals reach them either way. A check that imports numpy,
        pandas or scipy stays in the container, whose integers are the candidate's."""
        if impl is not self._container or static_reason(
            job.check + "\n" + job.prelude, numpy_in_container=True
        ):
            return impl
        try:
            return self.wasm()
        except (DependencyError, SandboxError):
            return impl

    def _cpu_clock(self, impl: Any) -> Callable[[], float] | None:
        """The clock a session reads each case's CPU time on: a WASM guest's messages reach the host on
        the thread that runs it (its door), so that thread's CPU clock holds the guest's own work and
        nothing else; a jailed guest is another process (None: wall time only)."""
        return time.thread_time if impl is not None and impl is self._wasm else None

    def _clocks(self, impl: Any, job: Job, key: str, role: str) -> dict[str, Any]:
        """A WASM guest's clocks are drawn from its job's cache key (``streams.sandbox.clocks``), or are
        the host's time under ``job.real_clocks``; the jail keeps the host's (README: the container jail)."""
        if impl is None or impl is not self._wasm:
            return {}
        return {"clock_seed": clock_seed(key, role), "real_clocks": job.real_clocks}

    def _container_has_site(self) -> bool:
        """Whether the jail has its own (64-bit) numpy, pandas and scipy to route their users to."""
        try:
            return self.container().has_site
        except DependencyError:
            return False

    def _run_on(self, name: str, job: Job, reason: str) -> ExecutionResult:
        t0 = time.perf_counter()
        try:
            impl = self.wasm() if name == "wasm" else self.container()
            runtime_hash = (
                self.runtime_hash() if name == "wasm" else f"container:{self.config.container_python}"
            )
            key = job.cache_key(name, runtime_hash)
            outcome = self._outcome(impl, job, key)
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
        result = interpret(job, outcome, runtime_hash=runtime_hash, reason=reason)
        return replace(result, cache_key=key)

    def _outcome(self, impl: Any, job: Job, key: str) -> Outcome:
        """``impl`` runs ``job``; its guests' clocks are drawn from ``key``, the job's cache key."""
        policy: Policy = impl.policy()
        deadline = time.perf_counter() + job.limits.timeout_s
        candidate_job = encode_job(
            role="candidate",
            mode="script" if job.mode == "script" else "cases",
            code=job.code,
            entry_point=job.entry_point,
            block=policy.block,
            read_roots=policy.read_roots,
            route=policy.route,
            site=policy.site,
            caller=job.caller and job.mode == "cases",
            keep_args=job.keep_args,
            reuse_from=caller_reuse_from(len(job.inputs)),
            digest_after=max(0, DIGEST_AFTER - job.answered_bytes),
        )
        # ``bench.sandbox --breakdown`` marks the host's steps where the backend collects marks
        spans = getattr(impl, "spans", None)
        if spans is not None:
            spans.append(("host", "encoded", time.perf_counter()))
        if job.mode != "check":
            session = Session(
                candidate_job,
                source=CaseInputs(job.inputs),
                call_cap=job.call_cap,
                cpu_clock=self._cpu_clock(impl),
            )
            raw = impl.run(
                session, job.limits, deadline=deadline, **self._clocks(impl, job, key, "candidate")
            )
            session.end()
            return Outcome(raw, session.facts)
        # Check mode: the check runs in a second, fresh guest; the bridge carries literals between.
        check_impl = self._check_backend(impl, job)
        bridge = Bridge(deadline)
        candidate = Session(candidate_job, source=bridge, cpu_clock=self._cpu_clock(impl))
        checker = Session(
            encode_job(
                role="check",
                mode="check",
                entry_point=job.entry_point,
                prelude=job.prelude,
                check=job.check,
                site=check_impl.policy().site,
            ),
            role="check",
            source=bridge,
            caller=bridge.call,
        )
        ran: dict[str, Any] = {}

        def run_candidate() -> None:
            try:
                ran["raw"] = impl.run(
                    candidate, job.limits, deadline=deadline, **self._clocks(impl, job, key, "candidate")
                )
            except BaseException as exc:  # re-raised on the calling thread
                ran["error"] = exc
            finally:
                bridge.candidate_gone("the program's guest ended")

        thread = threading.Thread(target=run_candidate, name="rlstream-candidate")
        thread.start()
        if spans is not None:
            spans.append(("host", "thread started", time.perf_counter()))
        try:
            check_raw = check_impl.run(
                checker, job.limits, deadline=deadline, **self._clocks(check_impl, job, key, "check")
            )
        finally:
            bridge.check_done()
            thread.join()
        if spans is not None:
            spans.append(("host", "thread joined", time.perf_counter()))
        if "error" in ran:
            raise ran["error"]
        return Outcome(ran["raw"], candidate.facts, check_raw, checker.facts)
