"""``TaskPublisher``: the upstream path onto ``rl.tasks`` for Python code and the CLI."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from producers.ingest.jsonl import LineError, parse_file
from producers.ingest.split import HoldOut
from schemas.base import Event
from schemas.errors import InputError
from schemas.task import TaskPublished
from schemas.topics import TASKS


class EventSink(Protocol):
    """What the publisher needs of a producer (``infra.kafka`` provides the real one)."""

    def publish(self, event: Event, *, topic: str | None = None) -> str: ...

    def flush(self) -> None: ...


@dataclass
class PublishReport:
    published: list[str] = field(default_factory=list)  # event ids, in file order
    errors: list[LineError] = field(default_factory=list)
    #: of the published tasks, how many are held out for evaluation (split "eval")
    held_out: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors


class TaskPublisher:
    def __init__(self, sink: EventSink) -> None:
        self._sink = sink

    def publish(self, task: TaskPublished) -> str:
        """Publish one validated task; returns its event id (the same id for the same content)."""
        return self._sink.publish(task, topic=TASKS.name)

    def publish_many(self, tasks: Iterable[TaskPublished]) -> list[str]:
        ids = [self.publish(task) for task in tasks]
        self._sink.flush()
        return ids

    def publish_file(
        self, path: Path, *, strict: bool = False, hold_out: HoldOut | None = None
    ) -> PublishReport:
        """Publish every valid line of a JSONL file.

        ``strict``: publish nothing at all when any line is bad (raises InputError listing them).
        Otherwise the valid lines are published and the bad ones come back in the report.
        ``hold_out``: which of the valid tasks are published with ``split="eval"``.
        """
        parsed = parse_file(path)
        if strict and parsed.errors:
            listing = "\n  ".join(str(e) for e in parsed.errors)
            raise InputError(
                f"{path}: {len(parsed.errors)} bad line(s), nothing published (--strict):\n  {listing}"
            )
        tasks = [task for _, task in parsed.tasks]
        if hold_out is not None:
            tasks = hold_out.apply(tasks)
        report = PublishReport(errors=parsed.errors, held_out=sum(t.split == "eval" for t in tasks))
        report.published = self.publish_many(tasks)
        return report
