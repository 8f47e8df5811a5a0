"""The projector: a thin Kafka shell over :mod:`fold` and :mod:`store`.

It reads every event topic ``read_committed`` (so aborted processor transactions never reach a
table), starts each partition at the offset stored in the database — never Kafka's group offsets —
and applies each polled batch plus the new offsets in one SQL transaction. Killed at any point, it
restarts exactly where the database says, so each record lands in the tables exactly once.

Following the log (:meth:`Projector.run`), instances of one projection join one consumer group
(``rlstream.projector.<name>.<database>``) and share the partitions: each partition is handed to its new owner
at the offset the database stored. An instance that held a batch while its partition moved on (a
stall past the session timeout) finds the database past that batch when it applies it; the batch is
refused whole and the instance reads on from the stored offsets (:class:`~consumers.projections.store.
StaleBatch`). A catch-up (:meth:`Projector.catch_up`) reads every partition itself, to the end.

A record that does not decode is skipped with a counted warning (the processors already dead-letter
such records), recorded in ``skipped_records``, and its offset still advances.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from confluent_kafka import (
    OFFSET_BEGINNING,
    Consumer,
    IsolationLevel,
    KafkaError,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import OffsetSpec  # type: ignore[attr-defined]
from sqlalchemy import Engine

from consumers.projections.config import ProjectionConfig
from consumers.projections.fold import Batch, Position, fold, skip
from consumers.projections.store import StaleBatch, apply, migrate, stored_offsets
from infra.kafka.admin import admin_client, client_config
from infra.kafka.consumer import decode_message
from infra.kafka.membership import RejoinWatch
from infra.runtime.port import ProcessorStats
from schemas.errors import BrokerError, EventDecodeError
from schemas.topics import EVENT_TOPICS

log = logging.getLogger(__name__)

#: seconds between looks for topics or partitions created after the start (follow mode)
RESCAN_S = 10.0


@dataclass(frozen=True)
class CatchUp:
    """Where a catch-up stands: records applied so far and records left to the end seen at start."""

    applied: int
    remaining: int
    rate: float


class Projector:
    def __init__(
        self,
        bootstrap: str,
        engine: Engine,
        config: ProjectionConfig,
        *,
        topics: Sequence[str] | None = None,
        instance: str = "0",
    ) -> None:
        self.bootstrap = bootstrap
        self.engine = engine
        self.config = config
        self.name = config.name
        self.topics = list(topics or config.topics or [t.name for t in EVENT_TOPICS])
        self.instance = instance
        self.stats = ProcessorStats()
        self._consumer: Consumer | None = None
        self._assigned: set[tuple[str, int]] = set()
        self._last_scan = 0.0
        self._warned_missing: set[str] = set()
        #: following in a group (partitions come from rebalances) rather than reading every partition
        self._grouped = False
        #: batches refused because another instance had applied them first
        self.stale_batches = 0
        #: instances share partitions only when they write the same projection into the same database
        where = engine.url.render_as_string(hide_password=True)
        self.group_id = f"rlstream.projector.{self.name}.{hashlib.sha256(where.encode()).hexdigest()[:12]}"
        #: out of its group since the group took its partitions away, until it hands partitions again
        self._rejoin = RejoinWatch(f"{self.name}[{instance}]", self.group_id)

    # ---- lifecycle -------------------------------------------------------------------------------

    def start(self, *, grouped: bool = False) -> None:
        migrate(self.engine)
        self._grouped = grouped
        self._consumer = Consumer(
            client_config(
                self.bootstrap,
                **{
                    # no group offsets are ever committed: the database holds the offsets
                    "group.id": self.group_id,
                    "client.id": f"rlstream-projector-{self.name}-{self.instance}",
                    "enable.auto.commit": False,
                    "enable.auto.offset.store": False,
                    "isolation.level": "read_committed",
                    "auto.offset.reset": "earliest",
                    "enable.partition.eof": False,
                    "partition.assignment.strategy": "cooperative-sticky",
                    # static membership: an instance restarted under its name takes its partitions back
                    # at once instead of after the dead one's session timeout (a second process under the
                    # same name is fenced: instances need distinct --instance names)
                    "group.instance.id": f"{self.group_id}.{self.instance}",
                    # a killed instance's partitions move to a live one after this long
                    "session.timeout.ms": 10_000,
                    "heartbeat.interval.ms": 2_000,
                    # topics created after the start join the subscription within this long
                    "topic.metadata.refresh.interval.ms": int(RESCAN_S * 1000),
                },
            )
        )
        if grouped:
            self._consumer.subscribe(
                self.topics, on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost
            )
        else:
            self._assign_new()

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def run(self, stop: threading.Event, *, idle_exit_s: float | None = None) -> ProcessorStats:
        """Follow the log until ``stop`` is set (or nothing arrived for ``idle_exit_s``), sharing the
        partitions with the projection's other instances."""
        self.start(grouped=True)
        last_input = time.monotonic()
        try:
            while not stop.is_set():
                n = self.step()
                now = time.monotonic()
                if n:
                    last_input = now
                elif idle_exit_s is not None and now - last_input >= idle_exit_s:
                    break
                if not self._grouped and now - self._last_scan >= RESCAN_S:
                    self._assign_new()
        finally:
            self.close()
        return self.stats

    def catch_up(
        self,
        stop: threading.Event | None = None,
        *,
        progress: Callable[[CatchUp], None] | None = None,
        progress_every_s: float = 2.0,
    ) -> ProcessorStats:
        """Apply every record up to the end of each partition as it was at the start, then return."""
        self.start()
        assert self._consumer is not None
        try:
            targets = self._end_offsets()
            last = time.monotonic()
            while not (stop is not None and stop.is_set()):
                remaining = self._remaining(targets)
                if remaining == 0:
                    break
                self.step()
                now = time.monotonic()
                if progress is not None and now - last >= progress_every_s:
                    progress(CatchUp(self.stats.consumed, self._remaining(targets), self.stats.rate()))
                    last = now
            if progress is not None:
                progress(CatchUp(self.stats.consumed, self._remaining(targets), self.stats.rate()))
        finally:
            self.close()
        return self.stats

    # ---- one batch -------------------------------------------------------------------------------

    def step(self, timeout_s: float = 0.5) -> int:
        """Poll one batch and apply it with its offsets in one SQL transaction; records consumed."""
        assert self._consumer is not None
        msgs = self._consumer.consume(self.config.batch_size, timeout_s)
        if self._grouped:
            self._rejoin.check(time.monotonic())
        if not msgs:
            return 0
        batch = Batch()
        for msg in msgs:
            err = msg.error()
            if err is not None:
                self._on_error(err)
                continue
            position = Position(msg.topic() or "", msg.partition() or 0, msg.offset() or 0)
            try:
                item = decode_message(msg)
            except EventDecodeError as exc:
                log.warning(
                    "%s: skipping undecodable record %s[%d]@%d: %s",
                    self.name,
                    position.topic,
                    position.partition,
                    position.offset,
                    exc,
                )
                skip(batch, self.name, position, str(exc))
                continue
            fold(batch, item.envelope, item.event, position)
        if batch:
            try:
                apply(self.engine, batch, projector=self.name, ks=self.config.pass_k)
            except StaleBatch as stale:
                self._read_on_from_stored(stale)
                return 0
            self.stats.transactions += 1
        self.stats.consumed += batch.events + batch.skipped
        self.stats.dead_lettered += batch.skipped
        self.stats.produced += batch.row_count()
        return batch.events + batch.skipped

    # ---- partitions ------------------------------------------------------------------------------

    def _partitions(self) -> list[tuple[str, int]]:
        assert self._consumer is not None
        try:
            md = self._consumer.list_topics(timeout=30)
        except KafkaException as exc:
            raise BrokerError(
                f"cannot read topic metadata from {self.bootstrap}: {exc}",
                hint="check the broker: `rlstream broker status`",
            ) from None
        out: list[tuple[str, int]] = []
        for topic in self.topics:
            meta = md.topics.get(topic)
            if meta is None or meta.error is not None or not meta.partitions:
                if topic not in self._warned_missing:
                    log.warning("%s: topic %s does not exist yet; read once created", self.name, topic)
                    self._warned_missing.add(topic)
                continue
            out.extend((topic, p) for p in sorted(meta.partitions))
        return out

    def _assign_new(self) -> None:
        """Assign partitions not assigned yet, each at the offset the database stored for it."""
        assert self._consumer is not None
        self._last_scan = time.monotonic()
        new = [tp for tp in self._partitions() if tp not in self._assigned]
        if not new:
            return
        stored = stored_offsets(self.engine, self.name)
        parts = [TopicPartition(t, p, stored.get((t, p), OFFSET_BEGINNING)) for t, p in new]
        self._consumer.incremental_assign(parts)
        self._assigned.update(new)
        resumed = sum(1 for t, p in new if (t, p) in stored)
        log.info(
            "%s: reading %d partition(s) of %d topic(s); %d resumed at stored offsets",
            self.name,
            len(new),
            len({t for t, _ in new}),
            resumed,
        )

    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """Partitions handed to this instance start where the database says (a rebalance callback)."""
        stored = stored_offsets(self.engine, self.name)
        parts = [
            TopicPartition(tp.topic, tp.partition, stored.get((tp.topic, tp.partition), OFFSET_BEGINNING))
            for tp in partitions
        ]
        consumer.incremental_assign(parts)
        self._rejoin.back()
        self._assigned.update((tp.topic, tp.partition) for tp in partitions)
        if parts:
            log.info("%s[%s]: took %d partition(s)", self.name, self.instance, len(parts))

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        consumer.incremental_unassign(partitions)
        self._assigned.difference_update((tp.topic, tp.partition) for tp in partitions)
        if partitions:
            log.info("%s[%s]: handed over %d partition(s)", self.name, self.instance, len(partitions))

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        """The group took the partitions away (the session timed out): as a revocation, and the member
        must be back in its group within the rejoin limit."""
        self._rejoin.lost(time.monotonic())
        self._on_revoke(consumer, partitions)

    def _read_on_from_stored(self, stale: StaleBatch) -> None:
        """After a refused batch: every partition still held goes back to its stored offset (what was
        polled past it is read again; what another instance applied is not)."""
        assert self._consumer is not None
        self.stale_batches += 1
        log.warning("%s[%s]: %s; reading on from the stored offsets", self.name, self.instance, stale)
        stored = stored_offsets(self.engine, self.name)
        for topic, partition in sorted(self._assigned):
            at = TopicPartition(topic, partition, stored.get((topic, partition), OFFSET_BEGINNING))
            try:
                self._consumer.seek(at)
            except KafkaException:  # not fetching it yet: assigning it again sets where it starts
                self._consumer.incremental_unassign([TopicPartition(topic, partition)])
                self._consumer.incremental_assign([at])

    def _end_offsets(self) -> dict[tuple[str, int], int]:
        """The last stable offset of every assigned partition (one request): what a read_committed
        reader reaches once every transaction open now has ended."""
        if not self._assigned:
            return {}
        admin = admin_client(self.bootstrap)
        wanted = {TopicPartition(t, p): OffsetSpec.latest() for t, p in sorted(self._assigned)}  # type: ignore[no-untyped-call]
        try:
            futures = admin.list_offsets(
                wanted, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=30
            )
            return {(tp.topic, tp.partition): f.result(60).offset for tp, f in futures.items()}
        except KafkaException as exc:
            raise BrokerError(f"cannot read the end offsets of the event topics: {exc}") from None

    def _remaining(self, targets: dict[tuple[str, int], int]) -> int:
        """Records (and transaction markers) between the read position and the target offsets."""
        assert self._consumer is not None
        stored = stored_offsets(self.engine, self.name)
        positions = self._consumer.position([TopicPartition(t, p) for t, p in targets])
        left = 0
        for tp in positions:
            target = targets[(tp.topic, tp.partition)]
            at = max(tp.offset, stored.get((tp.topic, tp.partition), 0))
            left += max(0, target - at)
        return left

    def _on_error(self, err: KafkaError) -> None:
        if err.code() == KafkaError._PARTITION_EOF:
            return
        if err.code() == KafkaError.FENCED_INSTANCE_ID:
            raise BrokerError(
                f"another projector of {self.name} into this database runs as instance {self.instance!r}",
                hint="give every instance its own --instance name",
            )
        if err.fatal():
            raise BrokerError(f"Kafka consumer failed: {err.str()}")
        log.warning("%s: %s", self.name, err.str())
