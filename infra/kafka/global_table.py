"""A table every instance of a processor holds whole, read from a topic that is its own changelog.

``rl.tasks`` keeps forever, so it is the table of tasks: each processor that needs a task's cases reads
all its partitions (no consumer group), catches up to the end at start and whenever a lookup misses.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Generic, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from infra.kafka.consumer import decode_message
from schemas.base import Event
from schemas.errors import BrokerError, EventDecodeError

E = TypeVar("E", bound=Event)


class GlobalTable(Generic[E]):
    def __init__(self, bootstrap: str, topic: str, event_type: type[E], key: Callable[[E], str]) -> None:
        self.topic = topic
        self._type = event_type
        self._key = key
        self._rows: dict[str, E] = {}
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"rlstream.table.{uuid.uuid4().hex}",  # never commits: only assigns
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
            }
        )
        self._partitions: list[int] = []
        self.skipped = 0

    def __len__(self) -> int:
        return len(self._rows)

    def start(self, timeout_s: float = 60.0) -> None:
        try:
            md = self._consumer.list_topics(self.topic, 30).topics[self.topic]
        except (KafkaException, KeyError) as exc:
            raise BrokerError(
                f"cannot read topic {self.topic}: {exc}", hint="run: rlstream topics create"
            ) from exc
        if md.error is not None:
            raise BrokerError(
                f"cannot read topic {self.topic}: {md.error}", hint="run: rlstream topics create"
            )
        self._partitions = sorted(md.partitions)
        self._consumer.assign([TopicPartition(self.topic, p, 0) for p in self._partitions])
        self.catch_up(timeout_s)

    def catch_up(self, timeout_s: float = 30.0) -> None:
        """Read until every partition's position reaches the end offset seen now."""
        ends = {
            p: self._consumer.get_watermark_offsets(TopicPartition(self.topic, p), 10)[1]
            for p in self._partitions
        }
        deadline = time.monotonic() + timeout_s
        while True:
            for msg in self._consumer.consume(500, 0.2):
                err = msg.error()
                if err is not None:
                    if err.code() != KafkaError._PARTITION_EOF:
                        raise BrokerError(f"reading {self.topic} failed: {err}")
                    continue
                try:
                    event = decode_message(msg).event
                except EventDecodeError:
                    self.skipped += 1  # the processors that own this topic dead-letter it
                    continue
                if isinstance(event, self._type):
                    self._rows[self._key(event)] = event
            positions = self._consumer.position([TopicPartition(self.topic, p) for p in self._partitions])
            if all(tp.offset >= ends[tp.partition] or ends[tp.partition] == 0 for tp in positions):
                return
            if time.monotonic() > deadline:
                raise BrokerError(f"catching up with {self.topic} took more than {timeout_s:.0f}s")

    def get(self, key: str) -> E | None:
        row = self._rows.get(key)
        if row is None:
            self.catch_up()
            row = self._rows.get(key)
        return row

    def close(self) -> None:
        self._consumer.close()
