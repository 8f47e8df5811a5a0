"""Which sandbox job judges a sample of a task: its case inputs (visible first, then hidden; expected
values stay on the host) or, for a task without cases, its ``check``."""

from __future__ import annotations

from dataclasses import replace

from schemas.task import TaskPublished
from streams.probe.caller import keeps_arguments
from streams.probe.plan import MAX_GENERATED, MIN_GENERATED, ProbePlan, plan_for
from streams.sandbox.limits import Limits
from streams.sandbox.result import Job

#: a probe run calls the program on more inputs than the task has cases: its deadline grows with them,
#: up to this many times the task's own
PROBE_TIMEOUT_FACTOR = 4.0
#: and is at most this many times what the program's own first run took (never under PROBE_MIN_S): an
#: input like the task's own that takes twenty times longer than all of them together is not answered
PROBE_SPEED_FACTOR = 20.0
PROBE_MIN_S = 1.0
#: (p8/c8) each of a probe plan's extremes (``ProbePlan.ends``: thousands of elements, integers at the
#: machine widths) must be answered within this many seconds (or as long as the program's whole first
#: run took, where that is longer; a quarter of the run's deadline at most), or the run ends there as at
#: its deadline:
#: a program (or reference) whose cost grows with a magnitude loops on 2^31 until the deadline, and the
#: input says nothing either way (past the range, neither a hang nor a refusal is held against a program)
PROBE_END_CALL_S = 0.25


def job_for(task: TaskPublished, code: str, limits: Limits) -> tuple[Job, frozenset[int]]:
    """The job and the indices of its hidden cases."""
    cases = (*task.tests, *task.hidden_tests)
    if cases or not task.check:
        job = Job(
            mode="cases",
            code=code,
            entry_point=task.entry_point,
            inputs=tuple(c.input for c in cases),
            limits=limits,
        )
        return job, frozenset(range(len(task.tests), len(cases)))
    return check_job(task, code, task.check, limits), frozenset()


def check_job(task: TaskPublished, code: str, check: str, limits: Limits) -> Job:
    """A check-mode job of ``check``; the prompt goes with the check: its helpers run in the check's own
    guest, not the program's."""
    return Job(
        mode="check", code=code, entry_point=task.entry_point, check=check, prelude=task.prompt, limits=limits
    )


def probe_job_for(
    task: TaskPublished,
    code: str,
    limits: Limits,
    *,
    seed: str | None = None,
    first_run_s: float | None = None,
) -> tuple[Job, ProbePlan] | None:
    """The job of a sample's probe run (its program on the task's probe plan drawn with ``seed``), or
    None for a task without a plan. Only the plan's inputs go into the job: the seed stays on the host.
    The deadline grows with the plan's length (against the cases, or the check's calls, it starts from),
    so a program that answers those in time answers inputs like them in time too; given how long the
    program's own first run took (``first_run_s``), it is also at most :data:`PROBE_SPEED_FACTOR` times
    that, so an input that sends the program into a long loop costs a second, not the task's whole time
    limit. A reseeded check (a plan with no inputs) runs like the task's own check, under its time
    limit: the check draws as many inputs as it did the first time."""
    plan = plan_for(task, seed)
    if plan is None:
        return None
    n = max(1, plan.seeds)
    # the cheap calls that ask the cases again at the end (p6/c6) do not lengthen it
    counted = len(plan.inputs) - plan.late
    factor = 1.0 if plan.check is not None else min(PROBE_TIMEOUT_FACTOR, counted / n)
    timeout = limits.timeout_s * factor
    if first_run_s is not None:
        # a seeded plan holds more inputs than one derived from the task alone (mirrors, inputs beyond
        # the cases' range): the bound grows with it, so a program as fast per input is as much in time
        base = n + min(MAX_GENERATED, max(MIN_GENERATED, 4 * n))
        longer = max(1.0, counted / base) if plan.seed is not None else 1.0
        timeout = min(timeout, max(PROBE_MIN_S, PROBE_SPEED_FACTOR * first_run_s * longer))
    scaled = replace(limits, timeout_s=timeout)
    # a probe run's guests read the host's real time (streams/sandbox/clocks.py): the run that judges
    # inputs no case shows sees what a program sees on any machine, never a tell of a judged run
    if plan.check is not None:
        return replace(check_job(task, code, plan.check, scaled), real_clocks=True), plan
    # (p8/c8) the extremes at the end: each under a cap of its own, well under what is left of the deadline:
    # as long as the program's whole first run took (at least PROBE_END_CALL_S; a loaded host slows both)
    per_call = max(PROBE_END_CALL_S, first_run_s or 0.0)
    cap = (len(plan.inputs) - plan.ends, min(per_call, timeout / 4)) if plan.ends else None
    job = Job(
        mode="cases",
        code=code,
        entry_point=task.entry_point,
        inputs=plan.inputs,
        limits=scaled,
        # its calls are made as a caller makes them (the reference's probe runs are made alike): argument
        # objects reused from call to call, the answer changed before the same question is asked again
        caller=True,
        keep_args=keeps_arguments(task),
        call_cap=cap,
        real_clocks=True,
    )
    return job, plan
