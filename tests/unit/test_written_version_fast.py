"""An event taken to an older version by handing its fields over as they are (``Event._as_version``'s
shortcut) is the event a dump and a validation give: equal, with the same body bytes and id, at every
step of the way to the version it is written in, for the golden sample of every event version and for
events whose nested values are many (a probe run's cases, with digests and hidden marks; a task's
tests)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import schemas.base as base
from harness.trivial import TASK
from schemas import export
from schemas.base import Event
from schemas.registry import EVENT_CLASSES
from schemas.rollout import CaseResult, SandboxExecuted
from schemas.task import TaskPublished, TestCase

GOLDEN = Path(export.__file__).parent / "golden"


def _golden(cls: type[Event]) -> Event:
    return cls.model_validate(json.loads((GOLDEN / f"{cls.ce_type()}.json").read_text())["body"])


def _steps(event: Event) -> list[Event]:
    out = [event]
    while (older := out[-1].previous_version()) is not None:
        out.append(older)
    return out


def _both(event: Event, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Event], list[Event]]:
    fast = _steps(event)
    with monkeypatch.context() as m:
        m.setattr(base, "_same_fields", lambda *_: False)  # the dump and validation of every field
        slow = _steps(event)
    return fast, slow


def _assert_alike(fast: list[Event], slow: list[Event]) -> None:
    assert [type(e) for e in fast] == [type(e) for e in slow]
    for a, b in zip(fast, slow, strict=True):
        assert a == b
        assert a.model_dump_json() == b.model_dump_json()
        assert a.event_id() == b.event_id()
        assert a.event_id(3) == b.event_id(3)


def _probe_run(**changes: object) -> SandboxExecuted:
    digest = "X:" + "ab" * 32 + ":12"
    cases = tuple(
        CaseResult(index=i, status="ok", result_repr=repr(i * 7), duration_s=1e-5, hidden=True)
        if i % 5
        else CaseResult(index=i, status="error", error="ValueError: no", hidden=i % 2 == 0, digest=digest)
        for i in range(256)
    )
    body = {
        "sample_id": "g/0",
        "group_id": "g",
        "task_id": "t",
        "run_index": 1,
        "backend": "wasm",
        "cases": cases,
        "violation": "harness_tamper",
        "violations": ("harness_tamper", "net"),
        "probe": "d" * 16,
        "probe_seed": "5e" * 8,
        **changes,
    }
    return SandboxExecuted.model_validate(body)


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.ce_type())
def test_every_golden_event_is_written_alike(cls: type[Event], monkeypatch: pytest.MonkeyPatch) -> None:
    _assert_alike(*_both(_golden(cls), monkeypatch))


@pytest.mark.parametrize(
    "changes",
    [
        {},  # written as v5 (it has a probe seed)
        {"probe_seed": None},  # v3: three steps
        {"probe_seed": None, "probe": None, "turn": 1, "max_turns": 3},  # v4
        {"output_flood": 4, "thread_recursion": (1, 2)},  # v6
        {"deep_recursion": (3,)},  # the newest
    ],
)
def test_a_run_of_many_cases_is_written_alike(
    changes: dict[str, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = _both(_probe_run(**changes), monkeypatch)
    _assert_alike(fast, slow)
    # the written event's cases are the run's own (nothing rebuilt), and they kept every mark
    assert fast[-1].cases == fast[0].cases  # type: ignore[attr-defined]


def test_a_task_with_tests_is_written_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    tests = tuple(TestCase(input=f"({i}, [1, 2])", output=f"{i}") for i in range(40))
    for task in (
        TASK,
        TASK.model_copy(update={"tests": tests}),
        TaskPublished.model_validate(TASK.model_dump()),
    ):
        _assert_alike(*_both(task, monkeypatch))


def test_the_shortcut_is_taken_where_fields_are_alike_and_not_where_they_hold_events() -> None:
    from schemas.reference import ReferenceExecutedV3

    older = SandboxExecuted.__mro__[1]
    assert base._same_fields(SandboxExecuted, older, frozenset({"deep_recursion"}))
    # a run nested in a reference's runs is written in its own version: dumped and validated
    assert not base._same_fields(ReferenceExecutedV3, ReferenceExecutedV3, frozenset())
