"""The transactional runtime: exactly-once stream processing on Kafka transactions (the default runtime).

One loop per processor instance: poll a batch, hand the decoded events to the processor's pure handler
(:mod:`infra.runtime.host`), and in ONE Kafka transaction produce its output events, its state changes
(to a compacted changelog topic, partitioned like the input) and the consumed offsets. A crash anywhere
aborts the transaction, so after a restart the batch is processed again and nothing it produced before
is visible to ``read_committed`` readers: no lost group, no second event, no double count.

Faust (:mod:`infra.faust.runtime`) hosts the same processors with at-least-once delivery; this runtime
is the one that never writes a duplicate, and the faster of the two (``bench/runtimes.py``).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from infra.kafka.admin import client_config as base_config
from infra.kafka.admin import raise_message_limits, refusal
from infra.kafka.lag import assigned_lag
from infra.kafka.membership import RejoinWatch
from infra.runtime.host import Host, Raw, Write
from infra.runtime.port import Defer, Emit, Incoming, Processor, ProcessorStats
from infra.runtime.state import DEFAULT_GRACE_S, State, raw_key
from schemas.errors import BrokerError
from schemas.topics import MAX_RECORD_BYTES, STATE_MESSAGE_BYTES

log = logging.getLogger(__name__)


def _coordinator_busy(err: object) -> bool:
    """Whether starting transactions failed only because the coordinator is not ready (yet)."""
    if not isinstance(err, KafkaError) or err.fatal():
        return False
    busy = (
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError._TIMED_OUT,
        KafkaError._TRANSPORT,
    )
    return bool(err.retriable()) or err.code() in busy


#: one transactional call (init, send offsets, commit, abort) that has not returned after this long is
#: abandoned with its producer, and a fresh producer under the same transactional id takes over (its
#: init_transactions fences the old one and aborts or completes its open transaction). After a broker
#: restart librdkafka 2.16 can wait forever inside send_offsets_to_transaction, its own timeout
#: notwithstanding: the coordinator request's deadline is never checked, and a coordinator cached from
#: before the restart is never looked up again (librdkafka issues 5456 and 5511, open). Far above a
#: healthy commit (milliseconds) and a coordinator moving to another broker (a few seconds).
TXN_CALL_LIMIT_S = 10.0

#: how long a transaction may stay open on the broker before it aborts it (the client's default is a
#: minute): an instance that dies inside a transaction and is not replaced holds back every
#: read_committed reader of its output for this long (plus the broker's 10 s abort sweep). A batch's
#: transaction lasts from its first write to its commit: milliseconds to seconds.
TRANSACTION_TIMEOUT_MS = 20_000

#: a process that replaced its producer this often without a transaction committed in between starts
#: afresh (its supervisor restarts it): abandoned producers are kept, never destroyed while a call may
#: still be running inside them
MAX_ABANDONED_PRODUCERS = 8

#: last resort: a transaction (its writes and bounded calls) that has not ended after this long ends the
#: process, to be restarted by its supervisor. A restarted worker fences the stuck producer and redoes
#: the batch: nothing is lost or doubled, exactly as after a kill -9.
STUCK_TRANSACTION_S = 60.0
#: seconds between two measurements of a worker's consumer lag (its metric)
LAG_EVERY_S = 2.0

T = TypeVar("T")


class TransactionStuck(Exception):
    """A transactional call did not return within its limit; the producer is to be replaced."""


def bounded(call: Callable[[], T], limit_s: float, what: str) -> T:
    """``call()`` on a thread of its own, or :class:`TransactionStuck` when it has not returned after
    ``limit_s`` (the thread is left inside the client: a call blocked in C cannot be interrupted).
    The client's calls release the GIL while they wait, so the caller goes on meanwhile."""
    outcome: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))

    worker = threading.Thread(target=run, name=f"txn-{what}", daemon=True)
    worker.start()
    worker.join(limit_s)
    if not outcome:
        raise TransactionStuck(f"{what} did not return within {limit_s:.0f}s")
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def _bounded_call(method: Callable[..., T], *args: Any) -> T:
    """A transactional producer call with the client's own timeout as its last argument, bounded a
    little beyond that timeout (which the client does not always keep)."""
    return bounded(functools.partial(method, *args, TXN_CALL_LIMIT_S), TXN_CALL_LIMIT_S + 5, method.__name__)


def _exit_if_stuck(name: str, after_s: float) -> threading.Timer:
    def stuck() -> None:
        log.error(
            "%s: a transaction is stuck in the Kafka client for %.0fs; exiting to be restarted", name, after_s
        )
        logging.shutdown()
        os._exit(75)  # EX_TEMPFAIL: a supervisor restarts the worker

    timer = threading.Timer(after_s, stuck)
    timer.daemon = True
    timer.start()
    return timer


def _headers(msg: Message) -> list[tuple[str, bytes | str | None]]:
    raw = msg.headers()
    if raw is None:
        return []
    return list(raw.items()) if isinstance(raw, dict) else list(raw)


def raw_of(msg: Message) -> Raw:
    topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
    assert topic is not None and partition is not None and offset is not None
    key = msg.key()
    return Raw(
        topic,
        partition,
        offset,
        msg.timestamp()[1],
        key if isinstance(key, bytes) else None,
        msg.value(),
        _headers(msg),
    )


class TransactionalProcessor:
    """Hosts ``processor`` over its input topics with exactly-once output, state and offsets."""

    def __init__(
        self,
        processor: Processor,
        *,
        bootstrap: str,
        instance: str = "0",
        run_id: str | None = None,
        poll_timeout_s: float = 0.2,
        client_config: dict[str, Any] | None = None,
        consumer_config: dict[str, Any] | None = None,
        replication_factor: int = 1,
        grace_s: float = DEFAULT_GRACE_S,
    ) -> None:
        self._bootstrap = bootstrap
        self._replication_factor = replication_factor
        self.processor = processor
        self.name = name = processor.name
        self.input_topics = list(processor.input_topics)
        self.changelog_topic = f"rlstream.state.{name}.changelog"
        self._batch_size = processor.batch_size
        self._poll_timeout = poll_timeout_s
        self.state = State(processor.kinds, grace_s=grace_s)
        self.group_id = f"rlstream.{name}"
        self._client_id = f"rlstream.{name}.{instance}"
        self.host = Host(
            processor,
            run_id=run_id,
            group_id=self.group_id,
            client_id=self._client_id,
            transient=(KafkaException,),
        )
        base = base_config(bootstrap, **(client_config or {}))
        self._consumer = Consumer(
            {
                **base,
                "group.id": self.group_id,
                "client.id": self._client_id,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "partition.assignment.strategy": "cooperative-sticky",
                # a killed instance's partitions move to a live one after this long
                "session.timeout.ms": 10_000,
                "heartbeat.interval.ms": 2_000,
                # a fatal error (a static member fenced by another with its group.instance.id) reaches
                # no poll: the consumer just stops delivering, so it is caught here and ends the worker
                "error_cb": self._on_client_error,
                **(consumer_config or {}),
            }
        )
        self._producer_config = {
            **base,
            "client.id": self._client_id,
            "transactional.id": self._client_id,
            "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 5,
            "message.max.bytes": MAX_RECORD_BYTES,
        }
        self._producer = Producer(self._producer_config)
        #: producers given up while a call may still be running inside them: kept, never destroyed
        self._abandoned: list[Producer] = []
        self.producers_replaced = 0
        #: a replacement producer not yet registered (init_transactions)
        self._producer_fresh = True
        self._restore_consumer_config = {**base, "group.id": f"rlstream.{name}.restore.{instance}"}
        self._assigned: set[tuple[str, int]] = set()
        self._lag_at = float("-inf")
        self._pending_restore: set[int] = set()
        #: set when the group took the partitions away (session timed out, e.g. the broker restarted)
        self._lost = False
        #: out of its group since the group took the partitions away, until it hands partitions again
        self._rejoin = RejoinWatch(name, self.group_id)
        #: a fatal error of the consumer: it will deliver nothing more, so the next step ends the worker
        #: (whose supervisor starts a fresh one) rather than wait forever
        self._fatal: KafkaError | None = None

    @property
    def stats(self) -> ProcessorStats:
        return self.host.stats

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._ensure_changelog()
        self._init_transactions()
        self._consumer.subscribe(
            self.input_topics, on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost
        )

    def _init_transactions(self, wait_s: float = 120.0) -> None:
        """Register the producer's transactional id, fencing any earlier producer under it (whose open
        transaction the coordinator aborts, or completes if its commit had begun)."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                _bounded_call(self._producer.init_transactions)
                self._producer_fresh = False
                return
            except TransactionStuck as exc:
                if time.monotonic() >= deadline:
                    raise BrokerError(f"{self.name}: cannot start transactions: {exc}") from None
                self._abandon_producer(str(exc))
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                # a fresh, restarting or failed-over cluster: the transaction coordinator is loading or
                # moving
                if not _coordinator_busy(err) or time.monotonic() >= deadline:
                    raise BrokerError(f"{self.name}: cannot start transactions: {exc}") from exc
                log.info("%s: waiting for the transaction coordinator: %s", self.name, err)
                time.sleep(1.0)

    def _abandon_producer(self, reason: str) -> None:
        """Leave the producer (and any call still inside it) behind and build a fresh one under the same
        transactional id; :meth:`_init_transactions` must run before it is used."""
        if len(self._abandoned) >= MAX_ABANDONED_PRODUCERS:
            raise BrokerError(
                f"{self.name}: replaced its transactional producer {len(self._abandoned)} times; restarting"
            )
        log.warning("%s: replacing the transactional producer (%s)", self.name, reason)
        self._abandoned.append(self._producer)
        self._producer = Producer(self._producer_config)
        self._producer_fresh = True
        self.producers_replaced += 1

    def _ensure_changelog(self) -> None:
        """The changelog is compacted and has as many partitions as the widest input topic."""
        admin = AdminClient(base_config(self._bootstrap))
        md = admin.list_topics(timeout=30)
        widths = []
        for t in self.input_topics:
            meta = md.topics.get(t)
            if meta is None or meta.error is not None:
                raise BrokerError(
                    f"{self.name}: input topic {t} does not exist", hint="run: rlstream topics create"
                )
            widths.append(len(meta.partitions))
        if self.changelog_topic in md.topics:
            raise_message_limits(admin, {self.changelog_topic: STATE_MESSAGE_BYTES}, 30)
            return
        new = NewTopic(
            self.changelog_topic,
            num_partitions=max(widths),
            replication_factor=self._replication_factor,
            # one state value may hold several executions (schemas.topics.STATE_MESSAGE_BYTES)
            config={"cleanup.policy": "compact", "max.message.bytes": str(STATE_MESSAGE_BYTES)},
        )
        for fut in admin.create_topics([new]).values():
            try:
                fut.result(30)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
                    raise BrokerError(f"{self.name}: cannot create {self.changelog_topic}: {exc}") from exc

    def close(self) -> None:
        try:
            self._consumer.close()
        finally:
            self._producer.flush(5)

    def lag(self) -> int:
        """Records on this instance's input partitions not consumed yet (from cached watermarks)."""
        total = 0
        try:
            positions = self._consumer.position([TopicPartition(t, p) for t, p in list(self._assigned)])
            for tp in positions:
                _, high = self._consumer.get_watermark_offsets(tp, cached=True)
                if tp.offset >= 0 and high >= 0:
                    total += max(high - tp.offset, 0)
        except KafkaException:
            return -1
        return total

    @property
    def assigned(self) -> bool:
        """Whether this instance owns any input partition yet (after the group's rebalance)."""
        return bool(self._assigned)

    def run(self, stop: threading.Event, *, idle_exit_s: float | None = None) -> ProcessorStats:
        """Process until ``stop`` is set (or, with ``idle_exit_s``, until input stays empty that long
        once partitions are assigned)."""
        self.start()
        last_input = time.monotonic()
        try:
            while not stop.is_set():
                n = self.step()
                now = time.monotonic()
                if n or not self.assigned:
                    last_input = now
                elif idle_exit_s is not None and now - last_input >= idle_exit_s:
                    break
        finally:
            self.close()
        return self.stats

    # -- one iteration ---------------------------------------------------------------------------
    def step(self) -> int:
        try:
            return self._step()
        finally:
            self.host.end_batch()

    def _start_over(self) -> None:
        """The group took this worker's partitions away (its session timed out: the broker restarted or
        was unreachable): a fresh producer replaces the one whose cached coordinators may point at a
        broker that is gone (the old client was seen waiting forever inside send_offsets_to_transaction
        after such a loss), and every partition is read again from its committed offset with its state
        restored. The group may have handed partitions back within the same poll: what was polled for
        them is dropped too, so they are sought back rather than left past records never handled."""
        self._lost = False
        self._rejoin.lost(time.monotonic())
        self._abandon_producer("the group took this worker's partitions away")
        self._init_transactions()
        self._rewind(dict.fromkeys(self._assigned, 0))

    def _on_client_error(self, err: KafkaError) -> None:
        if err.fatal():
            self._fatal = err
        else:  # transient (a broker restarting): librdkafka retries by itself
            log.info("%s: %s", self.name, err.str())

    def _step(self) -> int:
        # wait for the first record only, then take what is already buffered: a batch call with a
        # timeout would hold every partial batch for the whole timeout
        first = self._consumer.poll(self._poll_timeout)
        polled = time.monotonic()
        msgs = [] if first is None else [first, *self._consumer.consume(self._batch_size - 1, 0)]
        # a fatal error comes through the error callback or as a polled record's error, once: it must
        # end the worker even when the same poll also lost the partitions (whose records are dropped)
        for msg in msgs:
            err = msg.error()
            if err is not None and err.fatal():
                self._fatal = err
        if self._fatal is not None:
            raise BrokerError(f"{self.name}: the consumer failed for good: {self._fatal.str()}")
        self._rejoin.check(polled)
        self._measure_lag()
        if self._lost:
            # what was polled is read again from the committed offsets once partitions are reassigned
            self._start_over()
            return 0
        self._restore_pending()
        raws: list[Raw] = []
        offsets: dict[tuple[str, int], int] = {}
        for msg in msgs:
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    continue
                refused = refusal(err, f"read {', '.join(self.input_topics)} as {self.name}")
                if refused is not None:
                    raise refused
                raise BrokerError(f"{self.name}: consume failed: {err}")
            raw = raw_of(msg)
            offsets[(raw.topic, raw.partition)] = raw.offset + 1
            raws.append(raw)
        batch, poison = self.host.decode(raws)
        emits: list[tuple[Emit, Incoming | None]] = []
        if batch:
            try:
                emits.extend(self.host.handle(batch, self.state))
            except Defer as deferred:
                log.info("%s: deferring %d record(s): %s", self.name, len(msgs), deferred)
                self._seek_to_first(msgs)
                time.sleep(deferred.delay_s)
                return 0
        emits.extend(self.host.tick(self.state, time.time()))
        if not offsets and not emits and not self.state.dirty:
            return 0
        self._commit(self.host.writes(emits, poison), offsets, raws, started=polled)
        self.stats.consumed += len(msgs)
        return len(msgs)

    def _commit(
        self,
        writes: Sequence[Write],
        offsets: dict[tuple[str, int], int],
        raws: Sequence[Raw] = (),
        *,
        started: float | None = None,
    ) -> None:
        watchdog = _exit_if_stuck(self.name, STUCK_TRANSACTION_S)
        try:
            self._transact(writes, offsets)
        except TransactionStuck as exc:
            self._give_up(f"transaction abandoned: {exc}")
            # the fresh producer's init resolves the open transaction before the offsets are read back
            self._abandon_producer(str(exc))
        except KafkaException as exc:
            self._give_up(f"transaction aborted: {exc}")
            err = exc.args[0] if exc.args else None
            if getattr(err, "txn_requires_abort", lambda: False)():
                try:
                    _bounded_call(self._producer.abort_transaction)
                except (TransactionStuck, KafkaException) as failed:
                    self._abandon_producer(f"abort failed: {failed}")
            elif _coordinator_busy(err):
                # the coordinator's broker went away mid-transaction (a restart, a failover): as with a
                # stuck call, a fresh producer fences this one and resolves its open transaction, and the
                # batch is read again, in this process rather than after an exit and a restart
                self._abandon_producer(f"transaction failed: {exc}")
            else:
                raise BrokerError(f"{self.name}: transaction failed: {exc}") from exc
        else:
            self.stats.transactions += 1
            self.stats.produced += len(writes)
            self.host.committed(raws, writes, started=started)
            return
        finally:
            # waiting for a cluster that is away (below) is no stuck client
            watchdog.cancel()
        if self._producer_fresh:
            self._init_transactions()
        self._rewind(offsets)

    def _transact(self, writes: Sequence[Write], offsets: dict[tuple[str, int], int]) -> None:
        """One transaction: the batch's output records, its state changes and its consumed offsets.
        The calls that wait on the broker are bounded (:func:`bounded`)."""
        p = self._producer
        p.begin_transaction()
        for write in writes:
            r = write.record
            p.produce(write.topic, key=r.key, value=r.value, headers=list(r.headers))
            p.poll(0)
        for (part, kind, key), value in self.state.take_writes().items():
            p.produce(
                self.changelog_topic,
                key=raw_key(kind, key).encode(),
                value=None if value is None else json.dumps(value).encode(),
                partition=part,
            )
        if offsets:
            tps = [TopicPartition(t, part, off) for (t, part), off in offsets.items()]
            _bounded_call(p.send_offsets_to_transaction, tps, self._consumer.consumer_group_metadata())
        _bounded_call(p.commit_transaction)

    def _measure_lag(self) -> None:
        """Per input topic, the records its partitions assigned here have not read yet (the broker's
        high watermarks as of the last fetch: no request of its own), at most every LAG_EVERY_S."""
        now = time.monotonic()
        if now - self._lag_at < LAG_EVERY_S:
            return
        self._lag_at = now
        try:
            self.stats.lag = assigned_lag(self._consumer, self._assigned, self.input_topics)
        except KafkaException as exc:  # a metric is not worth failing a worker for
            log.debug("%s: lag not measured: %s", self.name, exc)

    def _give_up(self, reason: str) -> None:
        self.stats.aborted += 1
        self.host.fail_batch(reason)

    def _seek_to_first(self, msgs: list[Message]) -> None:
        first: dict[tuple[str, int], int] = {}
        for msg in msgs:
            t, part, off = msg.topic(), msg.partition(), msg.offset()
            if t is None or part is None or off is None or msg.error() is not None:
                continue
            first[(t, part)] = min(off, first.get((t, part), off))
        for (t, part), off in first.items():
            self._consumer.seek(TopicPartition(t, part, off))

    def _rewind(self, offsets: dict[tuple[str, int], int]) -> None:
        # state is rebuilt from the changelog and the batch re-read from the last committed offsets
        # (every owned partition: the batch's tick may have written to a partition it read nothing from)
        self.state.discard()
        parts = {part for (_, part) in offsets} | {part for (_, part) in self._assigned}
        for part in parts:
            self.state.disown(part)
            self._pending_restore.add(part)
        if not offsets:
            return
        committed = self._consumer.committed([TopicPartition(t, part) for (t, part) in offsets], 30)
        for tp in committed:
            self._consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, 0)))

    # -- partition ownership and state restore ---------------------------------------------------
    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._rejoin.back()
        for tp in partitions:
            self._assigned.add((tp.topic, tp.partition))
            self._pending_restore.add(tp.partition)

    def _on_lost(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        self._on_revoke(consumer, partitions)
        self._lost = True

    def _on_revoke(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
        for tp in partitions:
            self._assigned.discard((tp.topic, tp.partition))
        still = {p for (_, p) in self._assigned}
        for tp in partitions:
            if tp.partition not in still:
                self.state.disown(tp.partition)
                self._pending_restore.discard(tp.partition)

    def _watermarks(self, client: Consumer, partition: int, deadline: float) -> tuple[int, int]:
        while True:
            try:
                lo, hi = client.get_watermark_offsets(TopicPartition(self.changelog_topic, partition), 10)
                return int(lo), int(hi)
            except KafkaException as exc:
                # a changelog created a moment ago has no leader yet, or the broker is restarting
                if time.monotonic() > deadline:
                    err = exc.args[0] if exc.args else exc
                    raise BrokerError(f"{self.name}: cannot read {self.changelog_topic}: {err}") from None
                time.sleep(0.5)

    def _restore_pending(self) -> None:
        """Rebuild the state of the partitions assigned since the last batch from the changelog.

        It is read (``read_committed``) up to the log's end taken first, markers included: not just to
        the last stable offset. A transaction's commit returns before its markers are written to the
        changelog, so right after another instance's (or this one's) last commit the stable offset can
        lag behind records already committed; stopping there would restore stale state. The end is
        reached once every transaction below it is marked (a dead instance's open one is aborted by
        the broker within ``transaction.timeout.ms``)."""
        if not self._pending_restore:
            return
        parts, self._pending_restore = sorted(self._pending_restore), set()
        restorer = Consumer(
            {
                **self._restore_consumer_config,
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "enable.partition.eof": False,
            }
        )
        # the log's end, uncommitted records included (a read_committed client reports the stable offset)
        ends_client = Consumer({**self._restore_consumer_config, "isolation.level": "read_uncommitted"})
        try:
            md = restorer.list_topics(self.changelog_topic, 10).topics.get(self.changelog_topic)
            if md is None or md.error is not None:
                self.state.restored(parts)
                return
            wanted = [p for p in parts if p in md.partitions]
            ends: dict[int, int] = {}
            deadline = time.monotonic() + 120
            for p in parts:
                self.state.disown(p)
            for p in wanted:
                lo, hi = self._watermarks(ends_client, p, deadline)
                if hi > lo:
                    ends[p] = hi
            if not ends:
                self.state.restored(parts)
                return
            restorer.assign([TopicPartition(self.changelog_topic, p, 0) for p in ends])
            left = set(ends)
            while left:
                if time.monotonic() > deadline:
                    raise BrokerError(f"{self.name}: restoring state from {self.changelog_topic} timed out")
                for msg in restorer.consume(500, 0.2):
                    err = msg.error()
                    if err is not None:
                        raise BrokerError(f"{self.name}: restore failed: {err}")
                    part = msg.partition()
                    assert part is not None
                    key = (msg.key() or b"").decode()
                    raw = msg.value()
                    self.state.load(part, key, None if raw is None else json.loads(raw))
                # the position moves past transaction markers and aborted records too
                positions = restorer.position([TopicPartition(self.changelog_topic, p) for p in left])
                left -= {tp.partition for tp in positions if tp.offset >= ends[tp.partition]}
            self.state.restored(parts)
        finally:
            restorer.close()
            ends_client.close()
