"""Builders of tasks and stored sandbox executions for the reward and noise-filter tests."""

from __future__ import annotations

from collections.abc import Sequence

from harness.simulated import simulated_reference_probe as simulated_reference_probe
from harness.simulated import simulated_run as simulated_run
from harness.simulated import simulated_verdict as simulated_verdict
from schemas.rollout import CaseResult, SandboxExecuted
from schemas.task import TaskPublished, TestCase
from streams.reward.lint import LintReport


def make_task(
    visible: Sequence[tuple[str, str]] = (("(1, 2)", "3"), ("(2, 2)", "4")),
    hidden: Sequence[tuple[str, str]] = (("(10, 5)", "15"), ("(-1, 1)", "0")),
    *,
    entry_point: str = "add",
    reference: str | None = "def add(a, b):\n    return a + b\n",
    task_id: str = "t/add",
    check: str | None = None,
) -> TaskPublished:
    return TaskPublished(
        task_id=task_id,
        prompt=f"def {entry_point}(a, b):\n    '''Add.'''\n",
        entry_point=entry_point,
        tests=tuple(TestCase(input=i, output=o) for i, o in visible),
        hidden_tests=tuple(TestCase(input=i, output=o) for i, o in hidden),
        reference=reference,
        check=check,
    )


def execution(
    reprs: Sequence[str | None],
    *,
    sample_id: str = "s-1",
    run_index: int = 0,
    statuses: Sequence[str] | None = None,
    durations: Sequence[float] | None = None,
    **fields: object,
) -> SandboxExecuted:
    """An execution whose i-th case returned ``reprs[i]`` (None: the case raised)."""
    cases = []
    for i, r in enumerate(reprs):
        status = statuses[i] if statuses else ("ok" if r is not None else "error")
        cases.append(
            CaseResult(
                index=i,
                status=status,  # type: ignore[arg-type]
                result_repr=r if status == "ok" else None,
                error=None if status == "ok" else "ValueError: boom",
                duration_s=durations[i] if durations else 0.001,
            )
        )
    base: dict[str, object] = {
        "sample_id": sample_id,
        "group_id": "g-1",
        "task_id": "t/add",
        "run_index": run_index,
        "backend": "wasm",
        "cases": tuple(cases),
        "exit_code": 0,
        "duration_s": 0.05,
    }
    base.update(fields)
    return SandboxExecuted(**base)  # type: ignore[arg-type]


def passing(task: TaskPublished, **fields: object) -> SandboxExecuted:
    return execution([c.output for c in (*task.tests, *task.hidden_tests)], **fields)  # type: ignore[arg-type]


class FakeLinter:
    """A linter with a fixed answer, so reward unit tests run no process."""

    def __init__(self, findings: Sequence[str] = ()) -> None:
        self.findings = tuple(sorted(findings))

    def __call__(self, code: str) -> LintReport:
        return LintReport(self.findings, "fake 1.0")
