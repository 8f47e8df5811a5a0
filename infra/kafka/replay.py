"""Replay a topic: the events from an offset, or between two times, exactly once each, in log order.

A replay reads a fixed window decided when it starts — ``[start, end)`` per partition, where ``end`` is
the offset of the first record at or after ``to_time`` or else the partition's end at that moment — so
it always terminates, even while producers keep writing. It joins no consumer group and commits
nothing. Only committed records are read (``read_committed``): an aborted transaction's output was
never a fact.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, TopicPartition

from infra.kafka.admin import _reason, client_config, refusal
from infra.kafka.consumer import ConsumedEvent, decode_message
from schemas.errors import BrokerError, EventDecodeError, UsageError


@dataclass(frozen=True)
class PartitionWindow:
    partition: int
    #: first offset to read
    start: int
    #: first offset NOT to read
    end: int

    @property
    def empty(self) -> bool:
        return self.start >= self.end


UndecodableHandler = Callable[[Message, EventDecodeError], None]


def skip_undecodable(msg: Message, exc: EventDecodeError) -> None:
    """For a reader that collects facts of its own kind (a run's versions, its reviews, its alerts):
    a record that does not decode is not one of them, and reporting it is the dead-letter queue's job
    (every processor reading the topic letters it), so the reader goes on instead of failing on it."""


def _ms(t: datetime) -> int:
    if t.tzinfo is None:
        raise UsageError(
            f"time {t.isoformat()} has no time zone", hint="give times with an offset, e.g. ...Z"
        )
    return int(t.timestamp() * 1000)


#: answers while a partition's leader is being elected (a broker that just started or restarted): asked
#: again until the caller's timeout rather than failing the replay
_ELECTING = frozenset({KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE})


def _watermarks(consumer: Consumer, tp: TopicPartition, timeout_s: float) -> tuple[int, int]:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            low, high = consumer.get_watermark_offsets(tp, timeout=max(deadline - time.monotonic(), 0.1))
            return int(low), int(high)
        except KafkaException as exc:
            error = exc.args[0]
            electing = isinstance(error, KafkaError) and error.code() in _ELECTING
            if not electing or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def replay_windows(
    bootstrap: str,
    topic: str,
    *,
    from_offset: int | None = None,
    from_time: datetime | None = None,
    to_time: datetime | None = None,
    timeout_s: float = 30.0,
) -> list[PartitionWindow]:
    """The ``[start, end)`` offsets a replay of ``topic`` reads, per partition."""
    if from_offset is not None and from_time is not None:
        raise UsageError("give a start offset or a start time, not both")
    if from_offset is not None and from_offset < 0:
        raise UsageError(f"start offset must be >= 0, not {from_offset}")
    consumer = _consumer(bootstrap)
    try:
        md = consumer.list_topics(topic, timeout=timeout_s)
        info = md.topics.get(topic)
        refused = refusal(info.error if info is not None else None, f"describe {topic}")
        if refused is not None:
            raise refused
        if info is None or info.error is not None or not info.partitions:
            raise BrokerError(
                f"topic {topic} does not exist on {bootstrap}",
                hint="check the name (`rlstream topics create` creates the catalog)",
            )
        parts = sorted(info.partitions)
        marks = {p: _watermarks(consumer, TopicPartition(topic, p), timeout_s) for p in parts}
        starts = {p: max(from_offset or 0, marks[p][0]) for p in parts}
        if from_time is not None:
            starts = _offsets_at(consumer, topic, parts, _ms(from_time), marks, timeout_s)
        ends = {p: marks[p][1] for p in parts}
        if to_time is not None:
            ends = _offsets_at(consumer, topic, parts, _ms(to_time), marks, timeout_s)
        return [PartitionWindow(p, min(starts[p], ends[p]), ends[p]) for p in parts]
    except KafkaException as exc:
        raise BrokerError(f"could not read the offsets of {topic}: {_reason(exc)}") from None
    finally:
        consumer.close()


def replay(
    bootstrap: str,
    topic: str,
    *,
    from_offset: int | None = None,
    from_time: datetime | None = None,
    to_time: datetime | None = None,
    on_undecodable: UndecodableHandler | None = None,
    timeout_s: float = 30.0,
) -> Iterator[ConsumedEvent]:
    """Yield the events of ``topic`` in the window, each partition in offset order.

    ``from_offset`` applies to every partition (default 0: the whole log); ``from_time`` and
    ``to_time`` (timezone-aware) select by record timestamp, start inclusive and end exclusive. A
    record that does not decode raises :class:`EventDecodeError` unless ``on_undecodable`` is given,
    which then receives it and the replay goes on.
    """
    windows = [
        w
        for w in replay_windows(
            bootstrap,
            topic,
            from_offset=from_offset,
            from_time=from_time,
            to_time=to_time,
            timeout_s=timeout_s,
        )
        if not w.empty
    ]
    if not windows:
        return
    lo = _ms(from_time) if from_time is not None else None
    hi = _ms(to_time) if to_time is not None else None
    consumer = _consumer(bootstrap)
    ends = {w.partition: w.end for w in windows}
    try:
        consumer.assign([TopicPartition(topic, w.partition, w.start) for w in windows])
        last_progress = time.monotonic()
        while ends:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                last_progress = time.monotonic()
                p = msg.partition() or 0
                end = ends.get(p)
                offset = msg.offset() or 0
                if end is not None and offset < end:
                    if _in_time(msg, lo, hi):
                        try:
                            yield decode_message(msg)
                        except EventDecodeError as exc:
                            if on_undecodable is None:
                                raise EventDecodeError(
                                    f"{topic}[{p}]@{offset}: {exc.message}", hint=exc.hint
                                ) from None
                            on_undecodable(msg, exc)
                    if offset + 1 >= end:
                        ends.pop(p, None)
            elif msg is not None:
                err = msg.error()
                refused = refusal(err, f"read {topic}")
                if refused is not None:
                    raise refused
                if err is not None and err.code() != KafkaError._PARTITION_EOF and err.fatal():
                    raise BrokerError(f"replay of {topic} failed: {err.str()}")
            # transaction markers and aborted records occupy offsets that are never delivered:
            # a partition is done once the consumer's position has passed its window
            for tp in consumer.position([TopicPartition(topic, p) for p in list(ends)]):
                if tp.offset >= 0 and tp.offset >= ends[tp.partition]:
                    ends.pop(tp.partition, None)
            if ends and time.monotonic() - last_progress > timeout_s:
                raise BrokerError(
                    f"replay of {topic} stalled: no record for {timeout_s:.0f}s before the end of partitions "
                    f"{sorted(ends)}",
                    hint="an open transaction holds back read_committed readers; check the producers",
                )
    finally:
        consumer.close()


def _in_time(msg: Message, lo: int | None, hi: int | None) -> bool:
    # producer-set timestamps need not grow with offsets; the window is by time, so check each record
    _, ts = msg.timestamp()
    return (lo is None or ts >= lo) and (hi is None or ts < hi)


def _offsets_at(
    consumer: Consumer,
    topic: str,
    parts: list[int],
    ms: int,
    marks: dict[int, tuple[int, int]],
    timeout_s: float,
) -> dict[int, int]:
    found = consumer.offsets_for_times([TopicPartition(topic, p, ms) for p in parts], timeout=timeout_s)
    # -1: no record at or after that time, i.e. the end of the partition
    return {tp.partition: tp.offset if tp.offset >= 0 else marks[tp.partition][1] for tp in found}


def _consumer(bootstrap: str) -> Consumer:
    return Consumer(
        client_config(
            bootstrap,
            **{
                "group.id": f"rlstream-replay-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "enable.partition.eof": True,
                "isolation.level": "read_committed",
                "auto.offset.reset": "earliest",
            },
        )
    )
