"""Probe runs resumed past a hang on an input near the cases (noise filter v25).

A probe run is one process: a call that hangs ends the run there, and every input after it goes
unanswered. Where that call is the reference's, nothing after it is judged for any program of the task:
HumanEval/39's reference (primality by trial division on Fibonacci numbers) hangs on ``n = 12``, the
second generated input of its plans, so on every seed one generated input of 76 was judged, and the
cases and the inputs asked again after many calls (``ProbePlan.late``) never were. Where the call is the
program's, it shields the rest of its own run the same way.

So a cases-mode probe run that ended at a hang (its deadline, or a call's cap) on a generated input near
the cases (not ``ProbePlan.far``: past the range a hang is a larger problem, and the runs' order puts the
far inputs, the extremes last, after every near one) with inputs left after it is run again, in a fresh
sandbox, on the inputs after it, at most :data:`MAX_RESUMES` times; the runs are merged into one result
whose cases keep the plan's positions (the hung call ``timeout`` at its place, the later calls as the
continuation answered them) and whose end (timed out, memory, exit) is the last run's. The later
repeats of an input the run hung on are passed over (``missing``), wherever they lie: on a seed whose
late section asks ``n = 12`` again fifty times, one resume reaches the cases asked again, and a repeat
p21 lays a few calls after the hang (:func:`passed_over`) spends no resume of its own. The reference's
runs are made once per task and plan (cached); a sample's probe run pays only where it hung on a near
input, which a program as fast as the reference does only where the reference hangs too.

What the filter makes of it is ``streams/noise/probe.py`` (``examine``'s ``resumed``): a hang there is
excused only where the reference did not settle the input either, and the inputs after it are judged.

(filter v32) A run whose deadline ran out on a call near the cases that it had held for less time than
the calls it answered before it (:func:`cut_at`) did not hang there: the deadline, set from the
program's first run, ran out while it answered, as it does for a correct program slower per call than
the reference on a machine whose load stretched the probe run more than the short first run. Through
v31 the filter read that end as a hang on an input the reference settles at once, the memorising
program's (red-team row ``a19c_ok_generator_upto``, a hand-written generator, rejected so in a full
test run beside other load; 5 ms held at its end). Such a call is asked again, first, in the fresh
sandbox the run resumes in, so it is judged as every other input: a program that hangs there on purpose
hangs again from the start of a fresh deadline (held then: that call is never asked a third time), and
one that answers is judged by its answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from streams.probe.plan import GENERATED, ProbePlan
from streams.sandbox.result import ExecutionResult, Job, json_size

#: how many times one probe run is resumed past a hang on a near input (each a fresh sandbox and a
#: deadline of its own): a program hanging on every near input gains nothing past the third hang (the
#: filter judges a hang on an input the reference settled as the memorising program's), and a
#: reference too slow for many near inputs costs at most three runs' time, once per task
MAX_RESUMES = 2


def _ended_for_time(result: ExecutionResult) -> bool:
    """Whether a cases run ended at its deadline (or a call's cap) alone: no violation, memory stop,
    output flood or failure of the sandbox."""
    return (
        result.mode == "cases"
        and not result.infra_error
        and result.timed_out
        and not result.memory_exceeded
        and result.violation is None
        and not result.violations
        and result.output_flood is None
    )


def resume_at(result: ExecutionResult, plan: ProbePlan, *, cases_again: bool = True) -> int | None:
    """The plan position to resume ``result`` (a run of ``plan``'s inputs, positions as the plan's) at:
    the first after the input whose call hung that holds no input the run hung on, where that is a
    generated input near the cases and the run ended at it for its time alone (no violation, memory
    stop, output flood or failure of the sandbox); None otherwise (or nothing left to run; without
    ``cases_again``, nothing left but the cases asked again and inputs past the range)."""
    if not _ended_for_time(result):
        return None
    # the hang the run ended at: past every answered call (a run resumed before answered past its hang)
    last = max((c.index for c in result.cases if c.status in ("ok", "error")), default=-1)
    hung = next((c.index for c in result.cases if c.status == "timeout" and c.index > last), None)
    if hung is None or hung in plan.far or plan.origin[hung] != GENERATED:
        return None
    # an input the run hung on before hangs again: its later repeats (the late section asks near inputs
    # again) are passed over, left unanswered, rather than spending a resume on each
    again = {
        plan.inputs[c.index] for c in result.cases if c.status == "timeout" and c.index < len(plan.inputs)
    }
    start = next((pos for pos in range(hung + 1, len(plan.inputs)) if plan.inputs[pos] not in again), None)
    if start is None or cases_again:
        return start
    # (the reference's runs) the cases asked again are judged against the program's own first run, not
    # the reference's answers: resumed only where a near generated input it has not hung on is left
    rest = range(start, len(plan.inputs))
    near = (
        p for p in rest if plan.origin[p] == GENERATED and p not in plan.far and plan.inputs[p] not in again
    )
    return start if next(near, None) is not None else None


def cut_at(
    result: ExecutionResult,
    plan: ProbePlan,
    *,
    retried: frozenset[int] = frozenset(),
    cases_again: bool = True,
) -> int | None:
    """(filter v32) The plan position of the call near the cases that ``result``'s deadline cut: the
    run ended for its time alone (as :func:`resume_at` asks) at a call near the cases, which it had held
    for less time than the calls it answered since it began or since the hang before it (``timeout``),
    or had not been handed yet (``missing``: the deadline fell between two calls); None otherwise, where
    that position was asked again once already (``retried``), or where an earlier call of the same
    input hung. Without ``cases_again`` (the reference's runs) only a generated input's, or one with a
    near generated input after it."""
    if not _ended_for_time(result):
        return None
    by_pos = {c.index: c for c in result.cases}
    last = max((c.index for c in result.cases if c.status in ("ok", "error")), default=-1)
    end = last + 1
    record = by_pos.get(end)
    if end >= len(plan.inputs) or end in plan.far or end in retried:
        return None
    if record is not None and record.status not in ("timeout", "missing"):
        return None
    hangs = [c.index for c in result.cases if c.status == "timeout" and c.index < end]
    if any(plan.inputs[pos] == plan.inputs[end] for pos in hangs):
        return None
    since = max(hangs, default=-1)
    spent = sum(c.duration_s for c in result.cases if since < c.index < end and c.status in ("ok", "error"))
    held = record.duration_s if record is not None else 0.0
    if held >= spent:
        return None
    if not cases_again and not any(
        plan.origin[p] == GENERATED and p not in plan.far for p in range(end, len(plan.inputs))
    ):
        return None
    return end


def passed_over(
    result: ExecutionResult, plan: ProbePlan, start: int, *, asked_again: int | None = None
) -> frozenset[int]:
    """The positions from ``start`` on that hold an input ``result`` hung on: a continuation from
    ``start`` leaves them unasked (``missing``), wherever they lie. A repeat of a hung input that is not
    next to it (p21 asks an input again after 2 to 12 other calls) would hang again and spend a resume
    the cases asked again need. ``asked_again`` (filter v32): the position of a call the deadline cut,
    which is no hang (:func:`cut_at`)."""
    again = {
        plan.inputs[c.index]
        for c in result.cases
        if c.status == "timeout" and c.index < len(plan.inputs) and c.index != asked_again
    }
    return frozenset(pos for pos in range(start, len(plan.inputs)) if plan.inputs[pos] in again)


def _kept(start: int, skip: frozenset[int], count: int) -> list[int]:
    """The plan positions of a continuation's ``count`` inputs: from ``start`` on, but ``skip``."""
    return [pos for pos in range(start, start + count + len(skip)) if pos not in skip][:count]


def answered_bytes(result: ExecutionResult, start: int) -> int:
    """What ``result``'s answers before position ``start`` take of an execution's results (the JSON
    size of their texts, as :func:`~streams.sandbox.result.bound_cases` counts it), which a
    continuation from ``start`` is merged with."""
    return sum(
        json_size(text)
        for c in result.cases
        if c.index < start and (text := c.result_repr if c.status == "ok" else c.error)
    )


def continuation(job: Job, start: int, skip: frozenset[int] = frozenset(), answered: int = 0) -> Job:
    """``job`` on its inputs from position ``start`` on but those in ``skip`` (a call cap shifted with
    them); ``answered``: what the run's answers before ``start`` took (:func:`answered_bytes`): the
    continuation keeps its results within what is left of an execution's, and its stub reports digests
    that much sooner, so a result the merged run cannot keep comes with its digest."""
    kept = _kept(start, skip, max(0, len(job.inputs) - start - len(skip)))
    cap = job.call_cap
    shifted = None if cap is None else (sum(1 for pos in kept if pos < cap[0]), cap[1])
    hidden = frozenset(i for i, pos in enumerate(kept) if pos in job.hidden)
    return replace(
        job,
        inputs=tuple(job.inputs[pos] for pos in kept),
        call_cap=shifted,
        hidden=hidden,
        answered_bytes=job.answered_bytes + answered,
    )


def merged(
    first: ExecutionResult, rest: ExecutionResult, start: int, skip: frozenset[int] = frozenset()
) -> ExecutionResult:
    """``first`` (ended by a hang before ``start``, or at ``start`` where its deadline cut that call:
    filter v32) and ``rest`` (its continuation from ``start``, with
    the positions in ``skip`` left out) as one result: ``first``'s cases before ``start`` and at the
    positions skipped (unanswered there), then ``rest``'s at their plan positions; the end of the run
    (timed out, memory, exit) is ``rest``'s, the time both runs'."""
    kept = _kept(start, skip, len(rest.cases))

    def at(index: int) -> int:
        return kept[index] if index < len(kept) else index + start + len(skip)

    cases = tuple(
        sorted(
            (
                *(c for c in first.cases if c.index < start or c.index in skip),
                *(c.model_copy(update={"index": at(c.index)}) for c in rest.cases),
            ),
            key=lambda c: c.index,
        )
    )
    deep = (
        None
        if first.deep_recursion is None and rest.deep_recursion is None
        else (*(first.deep_recursion or ()), *(at(i) for i in rest.deep_recursion or ()))
    )
    return replace(
        rest,
        cases=tuple(cases),
        loaded=first.loaded,
        load_error=first.load_error,
        stdout=first.stdout + rest.stdout,
        stderr=first.stderr + rest.stderr,
        duration_s=first.duration_s + rest.duration_s,
        load_s=first.load_s,
        active_s=None if rest.active_s is None else first.duration_s + rest.active_s,
        # the first run's own time up to its hang is not known (the hung call never answered): the
        # merged run's active span is read on wall time only
        load_cpu_s=first.load_cpu_s,
        active_cpu_s=None,
        cache_key=first.cache_key,
        cache_hit=False,
        violations=tuple(dict.fromkeys((*first.violations, *rest.violations))),
        deviation=first.deviation or rest.deviation,
        route_hints=tuple(dict.fromkeys((*first.route_hints, *rest.route_hints))),
        refusals=(*first.refusals, *rest.refusals),
        output_flood=None if rest.output_flood is None else at(rest.output_flood),
        thread_recursion=(*first.thread_recursion, *(at(i) for i in rest.thread_recursion)),
        deep_recursion=deep,
    )


def resumed(
    result: ExecutionResult,
    job: Job,
    plan: ProbePlan,
    execute: Callable[[Job], ExecutionResult],
    *,
    cases_again: bool = True,
    retry_cut: bool = False,
) -> ExecutionResult:
    """``result`` (``job``'s run of ``plan``) resumed past each hang on a near input, at most
    :data:`MAX_RESUMES` times, each continuation made by ``execute`` (a fresh sandbox); a continuation
    the sandbox itself failed is dropped (the run ends at its hang, as it did). Under ``retry_cut``
    (filter v32) a call near the cases that the deadline cut (:func:`cut_at`) is asked again first
    in the continuation, once."""
    retried: set[int] = set()
    for _ in range(MAX_RESUMES):
        cut = cut_at(result, plan, retried=frozenset(retried), cases_again=cases_again) if retry_cut else None
        if cut is not None:
            start = cut
            retried.add(cut)
            skip = passed_over(result, plan, start, asked_again=cut)
        else:
            found = resume_at(result, plan, cases_again=cases_again)
            if found is None:
                break
            start = found
            skip = passed_over(result, plan, start)
        rest = execute(continuation(job, start, skip, answered_bytes(result, start)))
        if rest.infra_error is not None:
            break
        result = merged(result, rest, start, skip)
    return result
