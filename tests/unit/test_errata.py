"""The corrected HumanEval references: each passes its task's own check, answers what its prompt asks
where the published one does not, and applies only to the exact text it was written against."""

from __future__ import annotations

from typing import Any

import pytest

from producers.ingest.errata import BY_TASK, ERRATA, corrected_solution, sha256
from producers.ingest.humaneval import HumanEvalRow, load_rows, to_task

#: per erratum, a call its prompt decides and the published solution answers wrongly
WITNESSES: dict[str, tuple[tuple[Any, ...], Any]] = {
    "HumanEval/44": ((0, 2), "0"),
    "HumanEval/49": ((0, 1), 0),
    "HumanEval/77": (((10**15 + 1) ** 3,), True),
    "HumanEval/91": (("love It ! I",), 1),
    "HumanEval/94": (([0, 81, 12, 1, 21],), 0),
    "HumanEval/95": (({"a": 1, "b": 2, "C": 3},), False),
    "HumanEval/97": ((76, -1), 6),
    "HumanEval/99": (("12345678901234567890",), 12345678901234567890),
    "HumanEval/103": ((2**53 + 1, 2**53 + 1), bin(2**53 + 1)),
    "HumanEval/122": (([-10, 5], 2), -5),
    "HumanEval/124": (("01-31-2000",), True),
    "HumanEval/137": ((2**53, 2**53 + 1), 2**53 + 1),
    "HumanEval/140": (("Example  ",), "Example__"),
    "HumanEval/141": (("\u00e9.txt",), "No"),
    "HumanEval/144": (("1/1", f"{2**53 + 1}/2"), False),
    "HumanEval/150": ((0, 1, 2), 2),
}


@pytest.fixture(scope="module")
def rows() -> dict[str, HumanEvalRow]:
    return {r.task_id: r for r in load_rows()}


def _function(row: HumanEvalRow, solution: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(row.prompt + solution, row.task_id, "exec"), namespace)
    return namespace[row.entry_point]


def test_every_erratum_is_written_against_the_installed_data_set(rows: dict[str, HumanEvalRow]) -> None:
    assert set(WITNESSES) == set(BY_TASK)
    for erratum in ERRATA:
        assert sha256(rows[erratum.task_id].canonical_solution) == erratum.original_sha256, erratum.task_id


@pytest.mark.parametrize("task_id", sorted(BY_TASK))
def test_the_corrected_reference_passes_its_tasks_check_and_answers_what_the_prompt_asks(
    rows: dict[str, HumanEvalRow], task_id: str
) -> None:
    row = rows[task_id]
    fixed = _function(row, BY_TASK[task_id].solution)
    published = _function(row, row.canonical_solution)
    check_ns: dict[str, Any] = {}
    exec(compile(row.test, f"{task_id} check", "exec"), check_ns)
    check_ns["check"](fixed)  # raises AssertionError on any case it fails
    args, expected = WITNESSES[task_id]
    assert fixed(*args) == expected
    assert published(*args) != expected


def test_the_task_carries_the_corrected_reference(rows: dict[str, HumanEvalRow]) -> None:
    for task_id, erratum in BY_TASK.items():
        task = to_task(rows[task_id])
        assert task.reference == rows[task_id].prompt + erratum.solution
    untouched = to_task(rows["HumanEval/0"])
    assert untouched.reference == rows["HumanEval/0"].prompt + rows["HumanEval/0"].canonical_solution


def test_a_changed_canonical_text_keeps_its_own_reference(caplog: pytest.LogCaptureFixture) -> None:
    other = "    return x if n > 1 else y\n"
    assert corrected_solution("HumanEval/150", other) == other
    assert "not the one its erratum corrects" in caplog.text
