"""Jobs, results, and turning what a backend and its call interface observed into a result (pure
functions).

Every label comes from something the program cannot fake: the host's deadline and output caps, the
WASM runtime's traps and the guest's linear memory, the container's cgroup counters, the host's own
protocol state (``harness_tamper``), and the records the guest's audit hook sent (a program can only
incriminate itself with those). Nothing is inferred from text the program prints: where no honest
signal exists (a file-size limit hit, a full /tmp), the case is simply the error it raised.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from schemas.rollout import (
    MAX_EVENT_OUTPUT_BYTES,
    MAX_EXECUTION_RESULT_BYTES,
    RESULT_NOT_KEPT,
    CaseResult,
    SandboxExecuted,
)
from streams.sandbox.limits import Limits, RawRun
from streams.sandbox.protocol import LOAD_FAILED, TAMPER, Mode, SessionFacts, case_results

#: labels the backends observe themselves, reported before what the program was caught trying
LIMIT_LABELS = ("output_limit", "pids_limit", "stack_overflow")


@dataclass(frozen=True)
class Job:
    """One execution request. Expected outputs are never part of it."""

    mode: Mode
    code: str
    entry_point: str = ""
    inputs: tuple[str, ...] = ()
    check: str = ""
    #: check mode: the task's prompt, run before the check in the check's own guest (its helpers)
    prelude: str = ""
    limits: Limits = field(default_factory=Limits)
    #: cases mode (probe runs): each call is made as a caller would make it, reusing its argument
    #: objects from call to call (see ``guest_harness.pysrc``)
    caller: bool = False
    #: with ``caller``: the task says its arguments must not change, so a call that changes one fails
    keep_args: bool = False

    #: case mode: (k, s): from input k on, each call must be answered within s seconds, or the run ends
    #: there as at its deadline (a probe's extremes: an input the program, or the reference, is too slow
    #: for says nothing, and waiting out the whole deadline for it costs a run's time for no evidence).
    #: Host-side only, like the deadline: the guest never sees it
    call_cap: tuple[int, float] | None = None
    #: which of the job's clock draws its WASM guests see (``streams.sandbox.clocks``): a run's index, so
    #: a program's re-run reads other clocks than its first run, and the same run again the same ones
    clock_draw: int = 0
    #: the WASM guest reads the host's real time, never a jump (a probe run's: ``streams.sandbox.clocks``)
    real_clocks: bool = False
    #: cases mode: the cases its result marks hidden as it reads them (a probe run's are all hidden), so
    #: the execution event takes them as they are instead of a copy of each to mark it (``to_event``
    #: still marks any case whose mark is not the one it is given). Host-side only, not in the cache key
    hidden: frozenset[int] = frozenset()
    #: cases mode: a continuation of a run (``streams/sandbox/resume.py``): what that run's answers before
    #: it took of an execution's results (JSON size), which the merged result keeps beside this run's:
    #: this run keeps its results within what is left, and the stub reports digests that much sooner, so
    #: a result the merged run cannot keep still comes with its digest
    answered_bytes: int = 0

    def cache_key(self, backend: str, runtime_hash: str) -> str:
        fields: list[object] = [
            self.mode,
            self.code,
            self.entry_point,
            list(self.inputs),
            self.check,
            self.prelude,
            self.limits.key(),
            *([] if self.call_cap is None else [list(self.call_cap)]),
            backend,
            runtime_hash,
        ]
        if self.caller:  # only then: every other job keeps the key it always had
            fields.append(["caller", self.keep_args])
        if self.clock_draw:  # likewise
            fields.append(["clock_draw", self.clock_draw])
        if self.real_clocks:  # likewise
            fields.append(["real_clocks"])
        if self.answered_bytes:  # likewise
            fields.append(["answered_bytes", self.answered_bytes])
        payload = json.dumps(fields, ensure_ascii=False)
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
    #: the host's clock: the guest's start to its first request, and to its last result
    load_s: float | None = None
    active_s: float | None = None
    #: the same two spans on the guest's own time (its thread's CPU plus the sleeps it asked for;
    #: ``Session.own_time``): None where the guest is another process (the jail)
    load_cpu_s: float | None = None
    active_cpu_s: float | None = None
    runtime_hash: str = ""
    cache_key: str = ""
    cache_hit: bool = False
    #: the sandbox itself failed: retry it, never score it as the program's failure
    infra_error: str | None = None
    #: the guest broke the call interface (what the host saw first); the run is labelled harness_tamper
    deviation: str | None = None
    #: modules the guest imported that another backend runs differently (``auto`` routes on them)
    route_hints: tuple[str, ...] = ()
    #: what the audit hook refused, (kind, detail), the first few
    refusals: tuple[tuple[str, str], ...] = ()
    #: cases mode: the case whose call the host stopped for its own output (``Session.output``: one
    #: call past the flood bound, not a run's chatter reaching the cap)
    output_flood: int | None = None
    #: cases mode: the cases whose error followed a RecursionError on one of the program's threads
    #: during the call (the stub's ``Rt``)
    thread_recursion: tuple[int, ...] = ()
    #: cases mode: the cases whose call raised a RecursionError on a deep stack of calls (the stub's
    #: ``Rd``); None: not recorded (no call of the run raised, or not cases mode)
    deep_recursion: tuple[int, ...] | None = None

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


@dataclass
class Outcome:
    """What one job's guests did: the candidate's, and in check mode the check's."""

    raw: RawRun
    facts: SessionFacts
    check_raw: RawRun | None = None
    check_facts: SessionFacts | None = None


#: a failed case's error text once the execution's total is reached
ERROR_NOT_KEPT = "error text not kept: the execution's results reached their total size"


def json_size(text: str) -> int:
    """The bytes ``text`` takes as a JSON string in an event (UTF-8, escapes included, no quotes)."""
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8", "surrogatepass")) - 2


def _prefix_within(text: str, room: int) -> str:
    """The longest prefix of ``text`` whose JSON size is at most ``room`` (binary search)."""
    lo, hi = 0, min(len(text), room)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if json_size(text[:mid]) <= room:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def bound_cases(
    cases: tuple[CaseResult, ...], budget: int = MAX_EXECUTION_RESULT_BYTES
) -> tuple[CaseResult, ...]:
    """The cases as an execution reports them: their results and error texts are kept in case order
    while their total JSON size stays within ``budget``. A result that would go past it is not kept
    and its case fails (:data:`~schemas.rollout.RESULT_NOT_KEPT`), keeping the digest the stub
    reported with it (``CaseResult.digest``: a result kept keeps none, so a run whose results fit is
    written as before); an error text is cut to what is left (or replaced by a short note). Nothing is
    lost silently: every case is still there."""
    # a JSON character takes at most 6 bytes: cases without digests whose texts fit that many times
    # over are all kept as they are (a probe run's hundreds of short answers: no JSON size to measure)
    if 6 * sum(len((c.result_repr if c.status == "ok" else c.error) or "") for c in cases) <= budget and all(
        c.digest is None for c in cases
    ):
        return cases
    return _bound_each(cases, budget)


def _bound_each(cases: tuple[CaseResult, ...], budget: int) -> tuple[CaseResult, ...]:
    """:func:`bound_cases` case by case, each text's JSON size measured."""
    left = budget
    out: list[CaseResult] = []
    for case in cases:
        text = case.result_repr if case.status == "ok" else case.error
        if case.status == "ok" and case.digest is not None and (not text or json_size(text) <= left):
            case = case.model_copy(update={"digest": None})
        if text:
            cost = json_size(text)
            if cost > left:
                if case.status == "ok":
                    case = case.model_copy(
                        update={"status": "error", "result_repr": None, "error": RESULT_NOT_KEPT}
                    )
                else:
                    kept = _prefix_within(text, left - 3) if left > 200 else ""
                    case = case.model_copy(update={"error": kept + "…" if kept else ERROR_NOT_KEPT})
                cost = json_size(case.error or "")
            left = max(0, left - cost)
        out.append(case)
    return tuple(out)


def clip_output(text: str, limit: int = MAX_EVENT_OUTPUT_BYTES) -> str:
    """``text`` cut to at most ``limit`` bytes of JSON, saying so at its end."""
    if len(text) * 6 <= limit or json_size(text) <= limit:
        return text
    note = f"\n[output cut: an execution event keeps {limit} bytes of it]"
    return _prefix_within(text, limit - json_size(note)) + note


def _seconds(at: float | None, start: float) -> float | None:
    return None if at is None else max(0.0, at - start)


def _own_seconds(at: float | None, start: float | None) -> float | None:
    return None if at is None or start is None else max(0.0, at - start)


def interpret(job: Job, outcome: Outcome, *, runtime_hash: str, reason: str) -> ExecutionResult:
    raw, facts = outcome.raw, outcome.facts
    check_raw, check_facts = outcome.check_raw, outcome.check_facts
    timed_out = raw.timed_out or bool(check_raw is not None and check_raw.timed_out)
    stderr = raw.stderr.decode("utf-8", "replace")
    if raw.trap and not timed_out:
        stderr += f"\n[sandbox] stopped by the runtime: {raw.trap}\n"
    violations = [v for v in LIMIT_LABELS if v in raw.limit_labels]
    violations += [v for v in raw.limit_labels if v not in violations]  # what the walls refused
    if facts.deviation is not None and TAMPER not in violations:  # the jail's watch may have said it
        violations.append(TAMPER)
    violations += [k for k in facts.kinds if k not in violations]

    ended = None
    if raw.trap and not timed_out:
        ended = f"the program was stopped by the runtime ({raw.trap})"
    elif raw.exit_code not in (None, 0):
        ended = f"the program ended with exit code {raw.exit_code}"
    cases: tuple[CaseResult, ...] = ()
    check_passed: bool | None = None
    loaded: bool | None = None
    if job.mode == "cases":
        cases = bound_cases(
            case_results(facts, len(job.inputs), timed_out=timed_out, ended=ended, hidden=job.hidden),
            # a continuation keeps what is left beside the answers it is merged with (resume.py)
            max(0, MAX_EXECUTION_RESULT_BYTES - job.answered_bytes),
        )
    elif job.mode == "check":
        assert check_facts is not None and check_raw is not None
        check_passed = bool(
            check_facts.check_done
            and check_facts.check_ok
            and not timed_out
            and facts.deviation is None
            and check_facts.deviation is None
        )
        if check_passed:
            case = CaseResult(index=0, status="ok", result_repr="True", duration_s=check_raw.duration_s)
        elif timed_out:
            case = CaseResult(index=0, status="timeout", error="wall-clock limit reached")
        else:
            why = (
                f"protocol deviation: {facts.deviation}"
                if facts.deviation
                else check_facts.check_error
                or (f"{LOAD_FAILED}{facts.load_error}" if facts.load_error else None)
                or "the check did not finish"
            )
            case = CaseResult(index=0, status="error", error=why, duration_s=check_raw.duration_s)
        cases = (case,)
    if job.mode != "script" and (facts.first_request_at is not None or facts.load_error is not None):
        loaded = facts.load_error is None
    return ExecutionResult(
        backend=raw.backend,
        mode=job.mode,
        backend_reason=reason,
        cases=cases,
        loaded=loaded,
        load_error=facts.load_error,
        check_passed=check_passed,
        exit_code=raw.exit_code,
        timed_out=timed_out,
        memory_exceeded=raw.memory_exceeded,
        violation=violations[0] if violations else None,
        violations=tuple(violations),
        stdout=raw.stdout.decode("utf-8", "replace"),
        stderr=stderr,
        duration_s=raw.duration_s,
        load_s=_seconds(facts.first_request_at, facts.started_at),
        active_s=_seconds(facts.last_result_at, facts.started_at),
        load_cpu_s=_own_seconds(facts.first_request_cpu, facts.started_cpu),
        active_cpu_s=_own_seconds(facts.last_result_cpu, facts.started_cpu),
        runtime_hash=runtime_hash,
        deviation=facts.deviation,
        route_hints=tuple(facts.hints),
        refusals=tuple([*raw.wall_refusals, *facts.records][:16]),
        output_flood=_flooding_call(facts) if job.mode == "cases" else None,
        thread_recursion=tuple(
            c.index for c in facts.cases if c.thread_recursion and c.answered_at is not None
        )
        if job.mode == "cases"
        else (),
        deep_recursion=_deep_calls(facts) if job.mode == "cases" else None,
    )


def _deep_calls(facts: SessionFacts) -> tuple[int, ...] | None:
    """The answered calls whose RecursionError the stub found deep, recorded where some call raised a
    RecursionError: a run in which none did is written as before (its bytes and id unchanged), since
    the note decides nothing there (filter v12 reads it only for a RecursionError)."""
    answered = [c for c in facts.cases if c.answered_at is not None]
    if not any(c.deep_recursion or (not c.ok and _raised_recursion(c.text)) for c in answered):
        return None
    return tuple(c.index for c in answered if c.deep_recursion)


def _raised_recursion(error: str) -> bool:
    # the error as the stub reports it, "Name: text" (filter's resource_limit reads it the same way)
    return error.partition(":")[0] == "RecursionError"


def _flooding_call(facts: SessionFacts) -> int | None:
    """The request the run was stopped at for its own output, where it is still unanswered (a call
    answered before the stop took effect did not end there)."""
    stop = facts.output_stop
    if stop is None or not 0 <= stop[0] < len(facts.cases):
        return None
    return stop[0] if facts.cases[stop[0]].answered_at is None else None


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
    # bounded here too: the event's size never depends on where its result came from
    # a case already marked as it should be is kept as it is (the same fields, written alike): copying
    # each of a probe run's hundreds of cases was a fifth of the sandbox processor's own CPU
    cases = tuple(
        c if c.hidden == (c.index in hidden) else c.model_copy(update={"hidden": c.index in hidden})
        for c in bound_cases(result.cases)
    )
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
        violations=result.violations,
        stdout=clip_output(result.stdout),
        stderr=clip_output(result.stderr),
        duration_s=result.duration_s,
        load_s=result.load_s,
        active_s=result.active_s,
        load_cpu_s=result.load_cpu_s,
        active_cpu_s=result.active_cpu_s,
        runtime_hash=result.runtime_hash,
        cache_key=result.cache_key,
        cache_hit=result.cache_hit,
        infra_error=result.infra_error,
        output_flood=result.output_flood,
        thread_recursion=result.thread_recursion,
        deep_recursion=result.deep_recursion,
    )
