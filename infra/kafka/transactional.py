"""Exactly-once stream processing on Kafka transactions: the runtime every rlstream processor runs in.

One loop per processor instance: poll a batch, hand the decoded events to the processor's pure handler,
and in ONE Kafka transaction produce its output events, its state changes (to a compacted changelog
topic, partitioned like the input) and the consumed offsets. A crash anywhere aborts the transaction,
so after a restart the batch is processed again and nothing it produced before is visible to
``read_committed`` readers: no lost group, no second event, no double count.

Why not a Faust app (the first design): Faust's exactly-once mode is known to emit duplicates after a
rebalance, and its aiokafka client is several times slower than librdkafka here. This runtime keeps
Faust's model — agents as thin shells over pure cores, changelog-backed tables partitioned with their
input — on top of Kafka's own transactional consume-transform-produce protocol.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic
from opentelemetry import context as otel_context
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode, set_span_in_context

from infra.kafka.poison import check_topic, kept, kept_note
from infra.telemetry.messaging import links_to, start_process, start_send, traceparent_of
from infra.telemetry.tracing import extract, inject
from schemas.base import Event
from schemas.codec import decode, encode, headers_dict
from schemas.dlq import DeadLettered
from schemas.envelope import Envelope
from schemas.errors import BrokerError, EventDecodeError, RlstreamError
from schemas.topics import DLQ, topic_for

log = logging.getLogger(__name__)

_MISSING = object()


@dataclass(frozen=True)
class Incoming:
    envelope: Envelope
    event: Event
    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    #: W3C traceparent of this record's ``process`` span: where a handler that keeps the record for
    #: later (e.g. a sample waiting for its group) links back to
    trace: str | None = None


@dataclass(frozen=True)
class Emit:
    """An event the handler wants on the log; the runtime builds its envelope.

    Tracing: by default its ``send`` span continues the trace of the record that caused it. A fact
    that begins a story of its own (a sample born from its group's request) sets ``new_trace``: its
    trace starts here, linked to the cause. ``parent_trace`` continues another trace instead (e.g. the
    group's), and ``links`` names further spans it came from (e.g. each sample of an experience).
    """

    event: Event
    topic: str | None = None
    #: id of the event that caused this one (defaults to the incoming event's id)
    causation_id: str | None = None
    attempt: int = 0
    run_id: str | None = None
    new_trace: bool = False
    parent_trace: str | None = None
    links: tuple[str, ...] = ()


class PoisonRecord(RlstreamError):
    """A handler's way to say: this record cannot be processed, dead-letter it and move on."""


class Defer(Exception):
    """A handler's way to say: not now (e.g. the generator waits for newer weights). The batch's state
    writes are rolled back and the batch is read again after ``delay_s``; what the handler learned in
    memory before raising (e.g. a newer policy version) stays."""

    def __init__(self, reason: str, delay_s: float = 0.5) -> None:
        super().__init__(reason)
        self.delay_s = delay_s


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


#: a transaction the client has not finished after this long is abandoned by ending the process: after a
#: broker restart the client was seen waiting forever inside send_offsets_to_transaction (its own timeout
#: notwithstanding). A restarted worker fences the stuck producer and redoes the batch: nothing is lost
#: or doubled, exactly as after a kill -9.
STUCK_TRANSACTION_S = 240.0


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


def _broker_away(exc: Exception) -> Defer:
    """A handler that could not reach the broker (e.g. to read a table it follows) failed for no fault of
    the record: the batch is read again after a pause, never dead-lettered."""
    return Defer(f"broker unavailable: {exc}", delay_s=1.0)


def _headers(msg: Message) -> list[tuple[str, bytes | str | None]]:
    raw = msg.headers()
    if raw is None:
        return []
    return list(raw.items()) if isinstance(raw, dict) else list(raw)


class State:
    """Keyed JSON state of one processor, partitioned like its input and persisted to a changelog.

    Handlers see the partition of the record they handle; writes are buffered and committed with the
    batch's transaction, so state and outputs always agree.
    """

    def __init__(self) -> None:
        self._data: dict[int, dict[str, Any]] = {}
        self._dirty: dict[tuple[int, str], Any] = {}
        # what a failed handler call must undo: previous values since the last _savepoint()
        self._undo: dict[tuple[int, str], Any] = {}
        self._dirty_at_savepoint: dict[tuple[int, str], Any] = {}
        #: bumped whenever partitions are restored or dropped: agents that derive in-memory
        #: structures from the state (e.g. a queue) rebuild them when it changes
        self.generation = 0

    def partition(self, p: int) -> dict[str, Any]:
        return self._data.setdefault(p, {})

    def get(self, p: int, key: str, default: Any = None) -> Any:
        return self._data.get(p, {}).get(key, default)

    def put(self, p: int, key: str, value: Any) -> None:
        self._remember(p, key)
        self.partition(p)[key] = value
        self._dirty[(p, key)] = value

    def delete(self, p: int, key: str) -> None:
        self._remember(p, key)
        self.partition(p).pop(key, None)
        self._dirty[(p, key)] = None

    def _remember(self, p: int, key: str) -> None:
        if (p, key) not in self._undo:
            self._undo[(p, key)] = self.partition(p).get(key, _MISSING)

    def _savepoint(self) -> None:
        self._undo = {}
        self._dirty_at_savepoint = dict(self._dirty)

    def _rollback(self) -> None:
        for (p, key), previous in self._undo.items():
            if previous is _MISSING:
                self.partition(p).pop(key, None)
            else:
                self.partition(p)[key] = previous
        self._undo = {}
        self._dirty = dict(self._dirty_at_savepoint)

    def owned_partitions(self) -> list[int]:
        return sorted(self._data)

    def _load(self, p: int, key: str, value: Any) -> None:
        if value is None:
            self.partition(p).pop(key, None)
        else:
            self.partition(p)[key] = value

    def _drop(self, p: int) -> None:
        self.generation += 1
        self._data.pop(p, None)
        for k in [k for k in self._dirty if k[0] == p]:
            del self._dirty[k]

    def _take_dirty(self) -> dict[tuple[int, str], Any]:
        dirty, self._dirty = self._dirty, {}
        return dirty


#: a processor's pure core: one batch of decoded events (and the processor's state) in, events out
Handler = Callable[[Sequence[Incoming], State], Iterable[Emit]]


Tick = Callable[[State, float], Iterable[Emit]]


@dataclass
class ProcessorStats:
    consumed: int = 0
    produced: int = 0
    dead_lettered: int = 0
    transactions: int = 0
    aborted: int = 0
    started_at: float = field(default_factory=time.monotonic)

    def rate(self) -> float:
        return self.consumed / max(time.monotonic() - self.started_at, 1e-9)


class TransactionalProcessor:
    """Runs ``handler`` over ``input_topics`` with exactly-once output, state and offsets."""

    def __init__(
        self,
        name: str,
        *,
        bootstrap: str,
        input_topics: Sequence[str],
        handler: Handler,
        instance: str = "0",
        run_id: str | None = None,
        tick: Tick | None = None,
        batch_size: int = 64,
        poll_timeout_s: float = 0.2,
        client_config: dict[str, Any] | None = None,
        consumer_config: dict[str, Any] | None = None,
        replication_factor: int = 1,
    ) -> None:
        self._bootstrap = bootstrap
        self._replication_factor = replication_factor
        self.name = name
        self.input_topics = list(input_topics)
        self.changelog_topic = f"rlstream.state.{name}.changelog"
        self._handler = handler
        self._tick = tick
        self._run_id = run_id
        self._batch_size = batch_size
        self._poll_timeout = poll_timeout_s
        self.state = State()
        self.stats = ProcessorStats()
        base = {"bootstrap.servers": bootstrap, **(client_config or {})}
        self._consumer = Consumer(
            {
                **base,
                "group.id": f"rlstream.{name}",
                "client.id": f"rlstream.{name}.{instance}",
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "isolation.level": "read_committed",
                "partition.assignment.strategy": "cooperative-sticky",
                # a killed instance's partitions move to a live one after this long
                "session.timeout.ms": 10_000,
                "heartbeat.interval.ms": 2_000,
                **(consumer_config or {}),
            }
        )
        self._producer = Producer(
            {
                **base,
                "client.id": f"rlstream.{name}.{instance}",
                "transactional.id": f"rlstream.{name}.{instance}",
                "enable.idempotence": True,
                "acks": "all",
                "linger.ms": 5,
            }
        )
        self._restore_consumer_config = {**base, "group.id": f"rlstream.{name}.restore.{instance}"}
        self._assigned: set[tuple[str, int]] = set()
        self._pending_restore: set[int] = set()
        #: set when the group took the partitions away (session timed out, e.g. the broker restarted)
        self._lost = False
        self.group_id = f"rlstream.{name}"
        self._client_id = f"rlstream.{name}.{instance}"
        #: the ``process`` span of each record of the batch in hand (by id() of its Incoming)
        self._spans: dict[int, Span] = {}

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        self._ensure_changelog()
        deadline = time.monotonic() + 120
        while True:
            try:
                self._producer.init_transactions(30)
                break
            except KafkaException as exc:
                err = exc.args[0] if exc.args else None
                # a fresh or failed-over cluster: the transaction coordinator is loading or moving
                if _coordinator_busy(err) and time.monotonic() < deadline:
                    log.info("%s: waiting for the transaction coordinator: %s", self.name, err)
                    time.sleep(1.0)
                    continue
                raise BrokerError(f"{self.name}: cannot start transactions: {exc}") from exc
        self._consumer.subscribe(
            self.input_topics, on_assign=self._on_assign, on_revoke=self._on_revoke, on_lost=self._on_lost
        )

    def _ensure_changelog(self) -> None:
        """The changelog is compacted and has as many partitions as the widest input topic."""
        admin = AdminClient({"bootstrap.servers": self._bootstrap})
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
            return
        new = NewTopic(
            self.changelog_topic,
            num_partitions=max(widths),
            replication_factor=self._replication_factor,
            config={"cleanup.policy": "compact"},
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
        if self._lost:
            # after a lost assignment the client waits forever inside send_offsets_to_transaction (seen
            # after a broker restart): a fresh process (its supervisor restarts it) rejoins cleanly and
            # fences this one, exactly as after a kill -9
            raise BrokerError(f"{self.name}: the group took this worker's partitions away; restarting")
        try:
            return self._step()
        finally:
            # a record's span ends once its outputs are committed (or the batch was given up)
            for span in self._spans.values():
                span.end()
            self._spans = {}

    def _step(self) -> int:
        # wait for the first record only, then take what is already buffered: a batch call with a
        # timeout would hold every partial batch for the whole timeout
        first = self._consumer.poll(self._poll_timeout)
        msgs = [] if first is None else [first, *self._consumer.consume(self._batch_size - 1, 0)]
        self._restore_pending()
        batch: list[Incoming] = []
        poison: list[tuple[Message, Exception]] = []
        offsets: dict[tuple[str, int], int] = {}
        for msg in msgs:
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    continue
                raise BrokerError(f"{self.name}: consume failed: {err}")
            topic, partition, offset = msg.topic(), msg.partition(), msg.offset()
            assert topic is not None and partition is not None and offset is not None
            offsets[(topic, partition)] = offset + 1
            try:
                decoded = decode(msg.value(), _headers(msg))
                check_topic(topic, decoded.event)
            except EventDecodeError as exc:
                poison.append((msg, exc))
                continue
            ts = msg.timestamp()[1]
            envelope = decoded.envelope
            span = start_process(
                topic,
                partition=partition,
                offset=offset,
                event_id=envelope.id,
                group=self.group_id,
                traceparent=envelope.traceparent,
                tracestate=envelope.tracestate,
                key=decoded.event.key,
                event=decoded.event,
            )
            item = Incoming(envelope, decoded.event, topic, partition, offset, ts, trace=traceparent_of(span))
            self._spans[id(item)] = span
            batch.append(item)
        emits: list[tuple[Emit, Incoming | None]] = []
        if batch:
            try:
                emits.extend(self._handle(batch, poison))
            except Defer as deferred:
                log.info("%s: deferring %d record(s): %s", self.name, len(msgs), deferred)
                for span in self._spans.values():
                    span.set_attribute("rlstream.deferred", str(deferred))
                self._seek_to_first(msgs)
                time.sleep(deferred.delay_s)
                return 0
        if self._tick is not None:
            emits.extend((e, None) for e in self._tick(self.state, time.time()))
        if not offsets and not emits and not self.state._dirty:
            return 0
        self._commit(emits, poison, offsets)
        self.stats.consumed += len(msgs)
        return len(msgs)

    def _handle(
        self, batch: list[Incoming], poison: list[tuple[Message, Exception]]
    ) -> list[tuple[Emit, Incoming | None]]:
        self.state._savepoint()
        try:
            with self._current(batch):
                return self._pair(batch, list(self._handler(batch, self.state)))
        except Defer:
            self.state._rollback()
            raise
        except (BrokerError, KafkaException) as exc:
            self.state._rollback()
            raise _broker_away(exc) from exc
        except Exception as exc:
            self.state._rollback()
            if len(batch) == 1:
                return [self._dead_letter_event(batch[0], exc)]
            log.warning("%s: batch failed (%s); isolating the bad record", self.name, exc)
        # one record at a time: a poison record goes to the DLQ, the others are processed normally
        out: list[tuple[Emit, Incoming | None]] = []
        for item in batch:
            self.state._savepoint()
            try:
                with self._current([item]):
                    out.extend(self._pair([item], list(self._handler([item], self.state))))
            except Defer:
                self.state._rollback()
                raise
            except (BrokerError, KafkaException) as exc:
                self.state._rollback()
                raise _broker_away(exc) from exc
            except Exception as exc:
                self.state._rollback()
                out.append(self._dead_letter_event(item, exc))
        return out

    @contextlib.contextmanager
    def _current(self, batch: list[Incoming]) -> Iterator[None]:
        """While a handler works on one record, that record's span is current: spans the handler
        starts (e.g. a sandbox run) are its children."""
        span = self._spans.get(id(batch[0])) if len(batch) == 1 else None
        if span is None:
            yield
            return
        token = otel_context.attach(set_span_in_context(span))
        try:
            yield
        finally:
            otel_context.detach(token)

    @staticmethod
    def _pair(batch: list[Incoming], emits: Iterable[Emit]) -> list[tuple[Emit, Incoming | None]]:
        only = batch[0] if len(batch) == 1 else None
        by_id = {i.envelope.id: i for i in batch}
        return [(e, by_id.get(e.causation_id or "", only)) for e in emits]

    def _commit(
        self,
        emits: list[tuple[Emit, Incoming | None]],
        poison: list[tuple[Message, Exception]],
        offsets: dict[tuple[str, int], int],
    ) -> None:
        p = self._producer
        watchdog = _exit_if_stuck(self.name, STUCK_TRANSACTION_S)
        try:
            p.begin_transaction()
            for emit, cause in emits:
                self._produce(emit, cause)
            for msg, exc in poison:
                self._produce_dead_letter(msg, exc)
            for (part, key), value in self.state._take_dirty().items():
                p.produce(
                    self.changelog_topic,
                    key=key.encode(),
                    value=None if value is None else json.dumps(value).encode(),
                    partition=part,
                )
            if offsets:
                tps = [TopicPartition(t, part, off) for (t, part), off in offsets.items()]
                p.send_offsets_to_transaction(tps, self._consumer.consumer_group_metadata(), 30)
            p.commit_transaction(60)
            self.stats.transactions += 1
            self.stats.produced += len(emits)
        except KafkaException as exc:
            self.stats.aborted += 1
            for span in self._spans.values():
                span.set_status(Status(StatusCode.ERROR, f"transaction aborted: {exc}"))
            err = exc.args[0] if exc.args else None
            if err is not None and getattr(err, "txn_requires_abort", lambda: False)():
                p.abort_transaction(30)
                self._rewind(offsets)
                return
            raise BrokerError(f"{self.name}: transaction failed: {exc}") from exc
        finally:
            watchdog.cancel()

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
        parts = {part for (_, part) in offsets}
        for part in parts:
            self.state._drop(part)
            self._pending_restore.add(part)
        committed = self._consumer.committed([TopicPartition(t, part) for (t, part) in offsets], 30)
        for tp in committed:
            self._consumer.seek(TopicPartition(tp.topic, tp.partition, max(tp.offset, 0)))

    def _produce(self, emit: Emit, cause: Incoming | None) -> None:
        topic = emit.topic or topic_for(type(emit.event).__name__).name
        cause_span = self._spans.get(id(cause)) if cause is not None else None
        if emit.parent_trace is not None:
            parent: Context = extract(emit.parent_trace)
        elif cause_span is not None and not emit.new_trace:
            parent = set_span_in_context(cause_span)
        else:
            parent = Context()  # a new trace (never the caller's current context)
        linked = emit.links
        if cause_span is not None and (emit.new_trace or emit.parent_trace is not None):
            linked = (traceparent_of(cause_span) or "", *linked)
        links = links_to(linked)
        event_id = emit.event.event_id(emit.attempt)
        span = start_send(
            topic,
            event_id=event_id,
            key=emit.event.key,
            client_id=self._client_id,
            parent=parent,
            links=links,
            event=emit.event,
        )
        try:
            traceparent, tracestate = inject(set_span_in_context(span))
            envelope = Envelope.for_event(
                emit.event,
                source=f"rlstream/{self.name}",
                run_id=emit.run_id or (cause.envelope.run_id if cause else None) or self._run_id,
                causation_id=emit.causation_id or (cause.envelope.id if cause else None),
                attempt=emit.attempt,
                traceparent=traceparent,
                tracestate=tracestate,
            )
            record = encode(emit.event, envelope)
            self._producer.produce(topic, key=record.key, value=record.value, headers=list(record.headers))
            self._producer.poll(0)
        finally:
            span.end()

    def _dead_letter_event(self, item: Incoming, exc: Exception) -> tuple[Emit, Incoming | None]:
        self.stats.dead_lettered += 1
        span = self._spans.get(id(item))
        if span is not None:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"dead-lettered: {type(exc).__name__}"))
        log.warning(
            "%s: dead-lettering %s@%s:%s: %s", self.name, item.topic, item.partition, item.offset, exc
        )
        original = item.event.model_dump_json().encode()
        letter = DeadLettered(
            stage=self.name,
            error_type=type(exc).__name__,
            error=str(exc)[:4000] + kept_note(original),
            original_topic=item.topic,
            original_partition=item.partition,
            original_offset=item.offset,
            original_event_id=item.envelope.id,
            original_key_b64=base64.b64encode(item.event.key.encode()).decode(),
            original_value_b64=kept(original),
            original_headers={"ce_type": item.envelope.type, "ce_id": item.envelope.id},
        )
        return Emit(letter, topic=DLQ.name), item

    def _produce_dead_letter(self, msg: Message, exc: Exception) -> None:
        self.stats.dead_lettered += 1
        try:
            headers = headers_dict(_headers(msg))
        except EventDecodeError:
            headers = {}
        key = msg.key()
        letter = DeadLettered(
            stage=self.name,
            error_type=type(exc).__name__,
            error=str(exc)[:4000] + kept_note(msg.value()),
            original_topic=msg.topic() or "",
            original_partition=msg.partition() if msg.partition() is not None else -1,
            original_offset=msg.offset() if msg.offset() is not None else -1,
            original_event_id=headers.get("ce_id"),
            original_key_b64=base64.b64encode(key).decode() if key else None,
            original_value_b64=kept(msg.value()),
            original_headers=headers,
        )
        self._produce(Emit(letter, topic=DLQ.name, run_id=self._run_id), None)

    # -- partition ownership and state restore ---------------------------------------------------
    def _on_assign(self, consumer: Consumer, partitions: list[TopicPartition]) -> None:
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
                self.state._drop(tp.partition)
                self._pending_restore.discard(tp.partition)

    def _watermarks(self, restorer: Consumer, partition: int, deadline: float) -> tuple[int, int]:
        while True:
            try:
                lo, hi = restorer.get_watermark_offsets(TopicPartition(self.changelog_topic, partition), 10)
                return int(lo), int(hi)
            except KafkaException as exc:
                # a changelog created a moment ago has no leader yet, or the broker is restarting
                if time.monotonic() > deadline:
                    err = exc.args[0] if exc.args else exc
                    raise BrokerError(f"{self.name}: cannot read {self.changelog_topic}: {err}") from None
                time.sleep(0.5)

    def _restore_pending(self) -> None:
        if not self._pending_restore:
            return
        parts, self._pending_restore = sorted(self._pending_restore), set()
        restorer = Consumer(
            {
                **self._restore_consumer_config,
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "enable.partition.eof": True,
            }
        )
        try:
            md = restorer.list_topics(self.changelog_topic, 10).topics.get(self.changelog_topic)
            if md is None or md.error is not None:
                for p in parts:
                    self.state.partition(p)
                return
            self.state.generation += 1
            wanted = [p for p in parts if p in md.partitions]
            ends: dict[int, int] = {}
            deadline = time.monotonic() + 120
            for p in wanted:
                lo, hi = self._watermarks(restorer, p, deadline)
                if hi > lo:
                    ends[p] = hi
                self.state._drop(p)
                self.state.partition(p)
            if not ends:
                return
            restorer.assign([TopicPartition(self.changelog_topic, p, 0) for p in ends])
            done: set[int] = set()
            while len(done) < len(ends):
                if time.monotonic() > deadline:
                    raise BrokerError(f"{self.name}: restoring state from {self.changelog_topic} timed out")
                for msg in restorer.consume(500, 0.5):
                    err = msg.error()
                    part = msg.partition()
                    assert part is not None
                    if err is not None:
                        if err.code() == KafkaError._PARTITION_EOF:
                            done.add(part)
                            continue
                        raise BrokerError(f"{self.name}: restore failed: {err}")
                    key = (msg.key() or b"").decode()
                    raw = msg.value()
                    self.state._load(part, key, None if raw is None else json.loads(raw))
                    off = msg.offset()
                    if off is not None and off + 1 >= ends[part]:
                        done.add(part)
        finally:
            restorer.close()
