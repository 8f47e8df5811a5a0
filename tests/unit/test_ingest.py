"""Task ingestion: JSONL lines reported by number and field, HumanEval converted faithfully."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path
from typing import Any

import pytest

from producers.ingest.humaneval import cases_from_check, humaneval_tasks, load_rows
from producers.ingest.jsonl import parse_lines
from producers.ingest.publisher import TaskPublisher
from schemas.base import Event
from schemas.errors import InputError
from schemas.task import TaskPublished

GOOD = {
    "task_id": "demo/add",
    "prompt": "def add(a, b):\n",
    "entry_point": "add",
    "tests": [{"input": "(1, 2)", "output": "3"}],
}


def line(**over: Any) -> str:
    return json.dumps({**GOOD, **over})


def test_bad_lines_are_reported_with_line_number_and_field():
    lines = [
        line(),
        "",
        "{not json",
        line(task_id="t2", tests=[{"input": "1", "output": "2"}]),
        line(task_id="t3", entry_point="not a name"),
        line(task_id="t4", tests=[]),
        line(),
        json.dumps([1, 2]),
        line(task_id="t5", schema_version=7),
    ]
    parsed = parse_lines(lines)
    assert [n for n, _ in parsed.tasks] == [1]
    messages = {e.line: e.message for e in parsed.errors}
    assert set(messages) == {3, 4, 5, 6, 7, 8, 9}
    assert "not JSON" in messages[3]
    assert "tests.0.input" in messages[4] and "tuple" in messages[4]
    assert "entry_point" in messages[5]
    assert "nothing could judge it" in messages[6]
    assert "already on line 1" in messages[7]
    assert "JSON object" in messages[8]
    assert "schema_version" in messages[9]


def test_v1_lines_are_upcast():
    parsed = parse_lines([line(schema_version=1)])
    assert not parsed.errors
    assert parsed.tasks[0][1].schema_version == 6 and parsed.tasks[0][1].split == "train"
    assert parsed.tasks[0][1].max_turns is None
    assert (parsed.tasks[0][1].difficulty, parsed.tasks[0][1].tags) == (None, ())


class RecordingSink:
    def __init__(self) -> None:
        self.events: list[Event] = []
        self.flushed = 0

    def publish(self, event: Event, *, topic: str | None = None) -> str:
        assert topic == "rl.tasks"
        self.events.append(event)
        return event.event_id()

    def flush(self) -> None:
        self.flushed += 1


def test_strict_publishes_nothing_when_any_line_is_bad(tmp_path: Path):
    path = tmp_path / "tasks.jsonl"
    path.write_text(line() + "\n" + line(task_id="t2", prompt="") + "\n")
    sink = RecordingSink()
    with pytest.raises(InputError, match=r"line 2: field prompt"):
        TaskPublisher(sink).publish_file(path, strict=True)
    assert sink.events == []
    report = TaskPublisher(sink).publish_file(path)
    assert len(report.published) == 1
    assert str(report.errors[0]).startswith("line 2:")
    assert sink.flushed == 1


def test_missing_file_is_a_plain_input_error(tmp_path: Path):
    with pytest.raises(InputError, match="no such file"):
        TaskPublisher(RecordingSink()).publish_file(tmp_path / "nope.jsonl")


def _strict_equal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_strict_equal(a[k], b[k]) for k in a)
    return bool(a == b)


def test_all_164_humaneval_tasks_convert_and_canonical_solutions_satisfy_their_cases():
    tasks = list(humaneval_tasks())
    assert len(tasks) == 164
    with_cases = [t for t in tasks if t.check is None]
    assert len(with_cases) >= 140
    for task in with_cases:
        assert task.reference is not None
        namespace: dict[str, Any] = {}
        exec(compile(task.reference, task.task_id, "exec"), namespace)  # trusted canonical code
        fn = namespace[task.entry_point]
        for case in (*task.tests, *task.hidden_tests):
            got = fn(*ast.literal_eval(case.input))
            assert _strict_equal(got, ast.literal_eval(case.output)), (task.task_id, case)


def test_hidden_cases_never_appear_in_the_prompt_and_check_tasks_keep_their_source():
    rows = {r.task_id: r for r in load_rows()}
    for task in humaneval_tasks():
        if task.check is not None:
            assert task.check == rows[task.task_id].test
            assert not task.tests and not task.hidden_tests
        for case in task.hidden_tests:
            inner = case.input[1:-1].rstrip(",").strip()
            assert f"{task.entry_point}({inner})" not in task.prompt


def test_a_check_with_a_loop_is_not_turned_into_cases():
    src = (
        "def check(candidate):\n    assert candidate(1) == 2\n"
        "    for x in range(3):\n        assert candidate(x)\n"
    )
    assert cases_from_check(src) is None
    folded = cases_from_check("def check(candidate):\n    assert candidate(3 * 19, 'a' + 'b') == [3, 19]\n")
    assert folded is not None and folded[0].input == "(57, 'ab')"


def test_task_round_trips_through_json():
    task = next(iter(humaneval_tasks(limit=1)))
    assert TaskPublished.model_validate_json(task.model_dump_json()) == task
