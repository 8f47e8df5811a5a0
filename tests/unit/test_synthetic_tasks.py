"""The synthetic family: any small number completes a task correctly, anything else fails, and the
noise filter's task checks and hard-coding rule leave it alone (else every sample would be masked)."""

from __future__ import annotations

import ast

import pytest

from producers.generator.prompting import extract_code
from producers.ingest.synthetic import SAMPLING, synthetic_tasks
from schemas.task import TaskPublished
from streams.noise.rules import assess_task, hardcoding
from streams.reward.config import CompareConfig

TASKS = synthetic_tasks()


def passes(task: TaskPublished, completion: str) -> bool:
    code = extract_code(completion, task.prompt, task.entry_point).code
    namespace: dict[str, object] = {}
    try:
        exec(compile(code, "<program>", "exec"), namespace)  # our own tasks, not model output
        fn = namespace[task.entry_point]
        return all(
            fn(*ast.literal_eval(c.input)) == ast.literal_eval(c.output)  # type: ignore[operator]
            for c in (*task.tests, *task.hidden_tests)
        )
    except Exception:
        return False


def test_family_shape() -> None:
    assert len(TASKS) == 8
    assert len({t.task_id for t in TASKS}) == 8
    assert SAMPLING.max_tokens == 1
    assert synthetic_tasks(3) == TASKS[:3]


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.task_id)
def test_numbers_pass_and_other_tokens_fail(task: TaskPublished) -> None:
    for number in ("0", "7", " 2", "42", "True"):
        assert passes(task, number), number
    for other in ("x", "(", "", "None", "'a'"):
        assert not passes(task, other), other
    assert task.reference is not None and passes(task, task.reference.rsplit(" ", 1)[1])


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.task_id)
def test_noise_filter_leaves_the_family_alone(task: TaskPublished) -> None:
    quality = assess_task(task, CompareConfig().options(), min_cases=2)
    assert not quality.flagged, quality.reasons
    code = extract_code("42", task.prompt, task.entry_point).code
    assert hardcoding(task, code, threshold=0.3, min_inputs=1) is None
