"""Which sandbox job judges a sample of a task: its case inputs (visible first, then hidden; expected
values stay on the host) or, for a task without cases, its ``check``."""

from __future__ import annotations

from dataclasses import replace

from schemas.task import TaskPublished
from streams.probe.plan import ProbePlan, plan_for
from streams.sandbox.limits import Limits
from streams.sandbox.result import Job

#: a probe run calls the program on more inputs than the task has cases: its deadline grows with them,
#: up to this many times the task's own
PROBE_TIMEOUT_FACTOR = 4.0


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
    # the prompt goes with the check: its helpers run in the check's own guest, not the program's
    return Job(
        mode="check",
        code=code,
        entry_point=task.entry_point,
        check=task.check,
        prelude=task.prompt,
        limits=limits,
    ), frozenset()


def probe_job_for(task: TaskPublished, code: str, limits: Limits) -> tuple[Job, ProbePlan] | None:
    """The job of a sample's probe run (its program on the task's probe plan), or None for a task
    without cases. The deadline grows with the plan's length, so a program that answers the task's
    cases in time answers inputs like them in time too."""
    plan = plan_for(task)
    if plan is None:
        return None
    n = len(task.tests) + len(task.hidden_tests)
    scaled = replace(limits, timeout_s=limits.timeout_s * min(PROBE_TIMEOUT_FACTOR, len(plan.inputs) / n))
    job = Job(mode="cases", code=code, entry_point=task.entry_point, inputs=plan.inputs, limits=scaled)
    return job, plan
