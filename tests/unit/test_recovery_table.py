"""The fault suite's recovery table: every test's faults once, in the order they ran, one column per
figure any fault measured."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.recovery import table, throughput_back
from tests.reliability.recovery import PROPERTY, gathered


@dataclass
class _Report:
    nodeid: str
    user_properties: list[tuple[str, Any]] = field(default_factory=list)


def test_each_tests_faults_are_gathered_once_from_its_reports() -> None:
    broker = [{"fault": "kill -9 broker", "first_event_downstream_s": 12.5, "worker_exits_restarted": 0}]
    learner = [{"fault": "kill -9 learner", "learner_caught_up_s": 30.0}]
    reports = [
        _Report("t.py::test_a"),  # setup and call reports carry nothing
        _Report("t.py::test_a", [(PROPERTY, broker), ("other", 1)]),
        _Report("t.py::test_a", [(PROPERTY, broker)]),  # the same test's figures seen again
        _Report("t.py::test_b", [(PROPERTY, learner)]),
    ]
    entries = gathered(reports)
    assert entries == [{"test": "test_a", **broker[0]}, {"test": "test_b", **learner[0]}]
    lines = table(entries)
    assert lines[0].split(" | ")[0].strip() == "fault"
    assert [c.strip() for c in lines[0].split(" | ")[1:]] == [
        "first_event_downstream_s",
        "worker_exits_restarted",
        "learner_caught_up_s",
    ]
    assert [c.strip() for c in lines[1].split(" | ")] == ["kill -9 broker", "12.5", "0", "-"]
    assert [c.strip() for c in lines[2].split(" | ")] == ["kill -9 learner", "-", "-", "30.0"]
    assert len({len(line) for line in lines}) == 1  # aligned


def _steady(start: float, end: float, per_s: float) -> list[float]:
    n = round((end - start) * per_s)
    return [start + i / per_s for i in range(n)]


def test_throughput_back_is_when_the_output_runs_at_nine_tenths_of_its_rate_before_the_fault() -> None:
    before = _steady(0.0, 60.0, 2.0)
    # no slow-down at all: back at once
    assert throughput_back([*before, *_steady(60.0, 120.0, 2.0)], 60.0, 120.0) == 0.0
    # nothing for 12 s, then full speed: back when the first full window starts, about 12 s after
    back = throughput_back([*before, *_steady(72.0, 120.0, 2.0)], 60.0, 120.0)
    assert back is not None and 11.0 <= back <= 12.0
    # back at half speed only: never back
    assert throughput_back([*before, *_steady(72.0, 120.0, 1.0)], 60.0, 120.0) is None
    # not observed long enough after the restart to tell
    assert throughput_back([*before, *_steady(72.0, 80.0, 2.0)], 60.0, 80.0) is None
    # no output before the fault: no baseline
    assert throughput_back(_steady(70.0, 120.0, 2.0), 60.0, 120.0) is None
    # the baseline is the rate since the first output when that came less than 30 s before the fault
    assert throughput_back([*_steady(45.0, 60.0, 2.0), *_steady(60.0, 120.0, 2.0)], 60.0, 120.0) == 0.0
