"""Jobs, results, and turning what a backend observed into a result (pure functions)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from schemas.rollout import CaseResult, SandboxExecuted
from streams.sandbox.limits import Limits, RawRun
from streams.sandbox.protocol import Mode, Verdicts, case_results

#: labels the backends observe themselves, reported before what the program was caught trying
LIMIT_LABELS = ("output_limit", "pids_limit", "file_size_limit", "stack_overflow")
#: errors that only a capability the runtime does not have produces, and what was tried
REFUSAL_SIGNATURES = (
    ("wasi does not support processes", "process"),
    ("has no attribute 'fork'", "process"),
    ("has no attribute 'system'", "process"),
    ("can't start new thread", "thread"),
    ("has no attribute 'kill'", "signal"),
    ("ctypes is unavailable", "ctypes"),
    ("module '_socket' has no attribute", "network"),
    ("[Errno 27] File too large", "file_size_limit"),
    ("No space left on device", "disk_full"),
)


@dataclass(frozen=True)
class Job:
    """One execution request. Expected outputs are never part of it."""

    mode: Mode
    code: str
    entry_point: str = ""
    inputs: tuple[str, ...] = ()
    check: str = ""
    limits: Limits = field(default_factory=Limits)

    def cache_key(self, backend: str, runtime_hash: str) -> str:
        payload = json.dumps(
            [
                self.mode,
                self.code,
                self.entry_point,
                list(self.inputs),
                self.check,
                self.limits.key(),
                backend,
                runtime_hash,
            ],
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ExecutionResult:
    backend: str
    mode: Mode
    backend_reason: str = ""
    cases: tuple[CaseResult, ...] = ()
    #: the program's code ran to its end without raising (None: not reported, e.g. killed first)
    loaded: bool | None = None
    load_error: str | None = None
    #: check mode only: the check function returned (weaker than case results; see README)
    check_passed: bool | None = None
    exit_code: int | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    violation: str | None = None
    violations: tuple[str, ...] = ()
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    runtime_hash: str = ""
    cache_key: str = ""
    cache_hit: bool = False
    #: the sandbox itself failed: retry it, never score it as the program's failure
    infra_error: str | None = None
    #: records on the channel that did not carry the job's nonce, or repeated a case
    forged_records: int = 0

    def cli_json(self) -> dict[str, Any]:
        """Exactly the fields of the ``rlstream sandbox exec --json`` contract."""
        return {
            "exit_code": self.exit_code,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "timed_out": self.timed_out,
            "memory_exceeded": self.memory_exceeded,
            "violation": self.violation,
            "backend": self.backend,
            "duration_s": round(self.duration_s, 6),
        }

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["cases"] = [c.model_dump() for c in self.cases]
        return d


def interpret(
    job: Job, raw: RawRun, verdicts: Verdicts, *, runtime_hash: str, reason: str
) -> ExecutionResult:
    timed_out = raw.timed_out
    stderr = raw.stderr.decode("utf-8", "replace")
    memory = raw.memory_exceeded or verdicts.memory_error
    if job.mode == "script" and not memory and not timed_out and raw.exit_code not in (0, None):
        memory = stderr.rstrip().endswith("MemoryError")
    if raw.trap and not timed_out:
        stderr += f"\n[sandbox] stopped by the runtime: {raw.trap}\n"
    violations = [v for v in LIMIT_LABELS if v in raw.limit_labels]
    violations += [v for v in verdicts.violations if v not in violations]
    texts = [stderr[-4000:], verdicts.load_error or ""] + [c.error or "" for c in verdicts.cases.values()]
    for sig, label in REFUSAL_SIGNATURES:
        if label not in violations and any(sig in t for t in texts):
            violations.append(label)
    n = 1 if job.mode == "check" else len(job.inputs)
    cases: tuple[CaseResult, ...] = ()
    check_passed: bool | None = None
    if job.mode != "script":
        cases = case_results(verdicts, n, timed_out=timed_out)
        if verdicts.loaded is False:
            cases = tuple(
                c
                if c.status != "missing"
                else CaseResult(index=c.index, status="error", error=f"program failed: {verdicts.load_error}")
                for c in cases
            )
        if job.mode == "check":
            check_passed = bool(cases and cases[0].status == "ok" and verdicts.done)
    return ExecutionResult(
        backend=raw.backend,
        mode=job.mode,
        backend_reason=reason,
        cases=cases,
        loaded=verdicts.loaded,
        load_error=verdicts.load_error,
        check_passed=check_passed,
        exit_code=raw.exit_code,
        timed_out=timed_out,
        memory_exceeded=memory,
        violation=violations[0] if violations else None,
        violations=tuple(violations),
        stdout=raw.stdout.decode("utf-8", "replace"),
        stderr=stderr,
        duration_s=raw.duration_s,
        runtime_hash=runtime_hash,
        forged_records=verdicts.forged,
    )


def to_event(
    result: ExecutionResult,
    *,
    sample_id: str,
    group_id: str,
    task_id: str,
    run_index: int = 0,
    hidden: frozenset[int] = frozenset(),
) -> SandboxExecuted:
    """The ``SandboxExecuted`` event for one result (pure; the stream agent publishes it). Cases whose
    index is in ``hidden`` are marked so (the reward keeps them out of anything shown to the model)."""
    cases = tuple(c.model_copy(update={"hidden": c.index in hidden}) for c in result.cases)
    backend = result.backend if result.backend in ("wasm", "container", "subprocess") else "wasm"
    return SandboxExecuted(
        sample_id=sample_id,
        group_id=group_id,
        task_id=task_id,
        run_index=run_index,
        backend=backend,  # type: ignore[arg-type]
        backend_reason=result.backend_reason,
        mode="check" if result.mode == "check" else "cases",
        cases=cases,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        memory_exceeded=result.memory_exceeded,
        violation=result.violation,
        stdout=result.stdout,
        stderr=result.stderr,
        duration_s=result.duration_s,
        runtime_hash=result.runtime_hash,
        cache_key=result.cache_key,
        cache_hit=result.cache_hit,
        infra_error=result.infra_error,
    )
