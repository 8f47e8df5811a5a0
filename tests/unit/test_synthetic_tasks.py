"""The synthetic family: any small number completes a task correctly, anything else fails, and the
noise filter's task checks and hard-coding rule leave it alone (else every sample would be masked)."""

from __future__ import annotations

import ast

import pytest

from producers.generator.prompting import extract_code
from producers.ingest.synthetic import (
    FEEDBACK_OFFSETS,
    FEEDBACK_OFFSETS_WIDE,
    FEEDBACK_SOURCE,
    SAMPLING,
    feedback_tasks,
    synthetic_tasks,
)
from schemas.errors import InputError
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


@pytest.mark.parametrize("offsets", [FEEDBACK_OFFSETS, FEEDBACK_OFFSETS_WIDE], ids=["four", "wide"])
def test_feedback_family_is_solved_by_its_own_offset_only(offsets: tuple[int, ...]) -> None:
    tasks = feedback_tasks(offsets=offsets)
    assert [t.task_id for t in tasks] == [f"{FEEDBACK_SOURCE}/add{k}" for k in offsets]
    assert len({t.prompt for t in tasks}) == 1  # nothing in the prompt tells the tasks apart
    for task, k in zip(tasks, offsets, strict=True):
        assert [passes(task, str(j)) for j in offsets] == [j == k for j in offsets]
        # the visible case names the offset: the feedback on a wrong answer says what was expected
        assert task.tests[0].output == repr(k)
        assert not assess_task(task, CompareConfig().options(), min_cases=2).flagged


@pytest.mark.parametrize("offsets", [(0, 1), (2, 2), (-1, 3)])
def test_feedback_family_refuses_offsets_no_task_can_use(offsets: tuple[int, ...]) -> None:
    with pytest.raises(InputError, match="offsets"):
        feedback_tasks(offsets=offsets)
