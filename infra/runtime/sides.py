"""Side inputs: what processors read besides their input stream, whichever runtime hosts them.

Some processors look things up rather than consume them: the sandbox, reward and filter read a task's
cases by id (``rl.tasks`` held whole), the generator follows every policy version (``rl.policy``), the
experience processor reads the human reviews in force (``rl.reviews``) and the scheduler the learner's
lag. Every instance reads these whole, like a Faust global table. :class:`SideInputs` is that seam:
the Kafka adapter (``infra.kafka.sides``) reads the topics from the broker, ``read_committed`` and with
their envelopes; :class:`MemorySideInputs` beside it reads a :class:`~infra.runtime.memory.MemoryLog`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from infra.runtime.memory import MemoryLog
from schemas.base import Event
from schemas.codec import decode
from schemas.errors import EventDecodeError
from schemas.policy import PolicyPublished
from schemas.rollout import ReviewRecorded
from schemas.task import TaskPublished
from schemas.topics import POLICY, REVIEWS, TASKS


class TaskTable(Protocol):
    def get(self, key: str) -> TaskPublished | None: ...


class PolicySource(Protocol):
    def catch_up(self) -> list[PolicyPublished]:
        """Every version published up to now (read once, at start)."""

    def poll(self) -> list[PolicyPublished]:
        """The versions published since the last call."""


class ReviewTable(Protocol):
    def refresh(self) -> None: ...

    def verdict(self, sample_id: str) -> str | None: ...


class SideInputs(Protocol):
    """The side inputs of one worker; ``close`` releases whatever they hold."""

    def tasks(self) -> TaskTable: ...

    def policy(self) -> PolicySource | None: ...

    def reviews(self, run_id: str | None = None) -> ReviewTable: ...

    def learner_lag(self) -> Callable[[bool], int]:
        """``lag(fresh)``: the learner's consumer lag (a reading up to a second old unless ``fresh``)."""

    def close(self) -> None: ...


class _TopicCursor:
    """Reads one topic of a MemoryLog from the start, handing over what is new at each call
    (undecodable records are skipped: the topic's processors dead-letter them)."""

    def __init__(self, log: MemoryLog, topic: str) -> None:
        self.log, self.topic = log, topic
        self._positions: dict[int, int] = {}

    def new(self) -> list[Event]:
        out: list[Event] = []
        for p in range(len(self.log.topic(self.topic))):
            start = self._positions.get(p, 0)
            raws = self.log.read(self.topic, p, start, self.log.end(self.topic, p) - start)
            self._positions[p] = start + len(raws)
            for raw in raws:
                try:
                    out.append(decode(raw.value, raw.headers).event)
                except EventDecodeError:
                    continue
        return out


class _MemoryTasks:
    def __init__(self, log: MemoryLog) -> None:
        self._cursor = _TopicCursor(log, TASKS.name)
        self._rows: dict[str, TaskPublished] = {}

    def get(self, key: str) -> TaskPublished | None:
        for event in self._cursor.new():
            if isinstance(event, TaskPublished):
                self._rows[event.task_id] = event
        return self._rows.get(key)


class _MemoryPolicy:
    def __init__(self, log: MemoryLog) -> None:
        self._cursor = _TopicCursor(log, POLICY.name)

    def catch_up(self) -> list[PolicyPublished]:
        return self.poll()

    def poll(self) -> list[PolicyPublished]:
        return [e for e in self._cursor.new() if isinstance(e, PolicyPublished)]


class _MemoryReviews:
    def __init__(self, log: MemoryLog, run_id: str | None) -> None:
        self._cursor = _TopicCursor(log, REVIEWS.name)
        self._prefix = f"{run_id}/" if run_id is not None else ""
        self._in_force: dict[str, str] = {}

    def refresh(self) -> None:
        for review in self._cursor.new():
            if isinstance(review, ReviewRecorded) and review.group_id.startswith(self._prefix):
                self._in_force[review.sample_id] = review.verdict

    def verdict(self, sample_id: str) -> str | None:
        return self._in_force.get(sample_id)


class MemorySideInputs:
    """Side inputs read from a :class:`MemoryLog`; the learner's lag is what ``lag`` says (default 0)."""

    def __init__(self, log: MemoryLog, lag: Callable[[bool], int] | None = None) -> None:
        self.log = log
        self._lag = lag or (lambda fresh: 0)

    def tasks(self) -> TaskTable:
        return _MemoryTasks(self.log)

    def policy(self) -> PolicySource | None:
        return _MemoryPolicy(self.log)

    def reviews(self, run_id: str | None = None) -> ReviewTable:
        return _MemoryReviews(self.log, run_id)

    def learner_lag(self) -> Callable[[bool], int]:
        return self._lag

    def close(self) -> None:
        return None
