"""Consumer-group lag: how many records a group has yet to consume on a topic.

Offsets alone overcount on a transactional topic (every committed transaction leaves a marker that
takes an offset but is never delivered), so up to ``exact_up_to`` records the probe counts the
records themselves, reading ``read_committed`` from the group's committed offsets; past that the
offset difference is a good enough answer (and backpressure bounds keep lag below it anyway).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from infra.kafka.admin import client_config
from schemas.errors import BrokerError

#: errors of a committed-offsets request while the group's coordinator is being placed (librdkafka does
#: not mark them retriable on this call)
_COORDINATOR_MOVING = frozenset(
    {
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
    }
)


class LagProbe:
    """Reads a group's committed offsets without joining the group (no rebalance is triggered)."""

    def __init__(self, bootstrap: str, group_id: str, topic: str, *, exact_up_to: int = 2_000) -> None:
        self.group_id = group_id
        self.topic = topic
        self.exact_up_to = exact_up_to
        self._consumer = Consumer(
            client_config(bootstrap, **{"group.id": group_id, "enable.auto.commit": False})
        )
        # a separate reader, never committing, that counts the records behind the group's offsets
        self._reader = Consumer(
            client_config(
                bootstrap,
                **{
                    "group.id": f"rlstream.lag.{uuid.uuid4().hex}",
                    "enable.auto.commit": False,
                    "isolation.level": "read_committed",
                    "enable.partition.eof": True,
                },
            )
        )
        self._partitions: list[int] | None = None

    def partitions(self, timeout_s: float = 10.0) -> list[int]:
        """The topic's partitions (read once)."""
        if self._partitions is None:
            try:
                md = self._consumer.list_topics(self.topic, timeout_s).topics[self.topic]
            except KafkaException as exc:
                raise BrokerError(f"cannot read the partitions of {self.topic}: {exc}") from exc
            if md.error is not None:
                raise BrokerError(f"cannot read the partitions of {self.topic}: {md.error}")
            self._partitions = sorted(md.partitions)
        return self._partitions

    def lag(self, timeout_s: float = 10.0) -> int:
        try:
            partitions = self.partitions(timeout_s)
            tps = [TopicPartition(self.topic, p) for p in partitions]
            committed = {tp.partition: tp.offset for tp in self._committed(tps, timeout_s)}
            spans: dict[int, tuple[int, int]] = {}
            for p in partitions:
                low, high = self._consumer.get_watermark_offsets(TopicPartition(self.topic, p), timeout_s)
                start = committed.get(p, -1)
                start = start if start >= 0 else low
                if high > start:
                    spans[p] = (start, high)
            upper = sum(high - start for start, high in spans.values())
            if upper == 0 or upper > self.exact_up_to:
                return upper
            return self._count(spans, timeout_s)
        except KafkaException as exc:
            raise BrokerError(f"cannot read lag of group {self.group_id} on {self.topic}: {exc}") from exc

    def _committed(self, tps: list[TopicPartition], timeout_s: float) -> list[TopicPartition]:
        """The group's committed offsets. The first request for a group that has never committed finds
        no coordinator while the broker is still placing it (NOT_COORDINATOR, or the offsets topic
        loading): retried until ``timeout_s``, as the broker asks."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return list(self._consumer.committed(tps, max(deadline - time.monotonic(), 0.1)))
            except KafkaException as exc:
                error = exc.args[0]
                placing = isinstance(error, KafkaError) and (
                    error.retriable() or error.code() in _COORDINATOR_MOVING
                )
                if not placing or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _count(self, spans: dict[int, tuple[int, int]], timeout_s: float) -> int:
        self._reader.assign([TopicPartition(self.topic, p, start) for p, (start, _) in spans.items()])
        open_parts = set(spans)
        count = 0
        deadline = time.monotonic() + timeout_s
        while open_parts and time.monotonic() < deadline:
            for msg in self._reader.consume(500, 0.2):
                part = msg.partition()
                if part is None or part not in open_parts:
                    continue
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        open_parts.discard(part)
                    continue
                offset = msg.offset()
                if offset is not None and offset < spans[part][1]:
                    count += 1
                if offset is not None and offset + 1 >= spans[part][1]:
                    open_parts.discard(part)
        self._reader.unassign()
        if open_parts:  # ran out of time: the offset difference is the safe (larger) answer
            return sum(spans[p][1] - spans[p][0] for p in spans)
        return count

    def close(self) -> None:
        self._consumer.close()
        self._reader.close()


def assigned_lag(
    consumer: Consumer, partitions: Iterable[tuple[str, int]], topics: Iterable[str]
) -> dict[str, int]:
    """Per topic, the records ``consumer`` has not read yet on ``partitions`` (assigned to it), from the
    high watermarks of its last fetch (no request of its own; a partition never fetched counts 0)."""
    lag: dict[str, int] = dict.fromkeys(topics, 0)
    for tp in consumer.position([TopicPartition(t, p) for t, p in partitions]):
        _, high = consumer.get_watermark_offsets(tp, cached=True)
        if high >= 0 and tp.offset >= 0:
            lag[tp.topic] = lag.get(tp.topic, 0) + max(high - tp.offset, 0)
    return lag
