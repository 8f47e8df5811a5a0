"""``TaskPublisher``: the upstream path onto ``rl.tasks`` for Python code and the CLI."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from producers.ingest.jsonl import LineError, parse_file
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

    def publish_file(self, path: Path, *, strict: bool = False) -> PublishReport:
        """Publish every valid line of a JSONL file.

        ``strict``: publish nothing at all when any line is bad (raises InputError listing them).
        Otherwise the valid lines are published and the bad ones come back in the report.
        """
        parsed = parse_file(path)
        if strict and parsed.errors:
            listing = "\n  ".join(str(e) for e in parsed.errors)
            raise InputError(
                f"{path}: {len(parsed.errors)} bad line(s), nothing published (--strict):\n  {listing}"
            )
        report = PublishReport(errors=parsed.errors)
        report.published = self.publish_many(task for _, task in parsed.tasks)
        return report
