"""Which sandbox job judges a sample of a task: its case inputs (visible first, then hidden; expected
values stay on the host) or, for a task without cases, its ``check``."""

from __future__ import annotations

from schemas.task import TaskPublished
from streams.sandbox.limits import Limits
from streams.sandbox.result import Job


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
