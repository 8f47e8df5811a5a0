"""The event consumer: decode and validate each record, dead-letter what cannot be decoded.

At-least-once: a record's offset is stored for commit only after the caller has handled it (asked for
the next event) or after it was dead-lettered and the dead letter acknowledged. Handled offsets are
stored a batch at a time (before the next fetch, a commit, or leaving the loop), one call per
partition rather than one per record. A record that fails to
decode never stops the consumer and is never silently skipped: it is published to ``rl.dlq`` as a
:class:`DeadLettered` event (original bytes base64, the error, topic/partition/offset) and consumption
continues.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message, TopicPartition
from opentelemetry import context as otel_context
from opentelemetry.trace import INVALID_SPAN, set_span_in_context

from infra.kafka.admin import client_config, refusal
from infra.kafka.producer import EventProducer
from infra.runtime.port import dead_letter, text_headers
from infra.telemetry.messaging import remote_span, start_process
from infra.telemetry.tracing import recording
from schemas.base import Event
from schemas.codec import decode_body, decode_envelope
from schemas.dlq import DeadLettered
from schemas.envelope import Envelope
from schemas.errors import BrokerError, EventDecodeError
from schemas.topics import DLQ

#: the context a record without a ``traceparent`` is handled in when no SDK is installed (what
#: ``set_span_in_context(remote_span(None))`` makes: the invalid span), made once
_UNTRACED = set_span_in_context(INVALID_SPAN)


@dataclass(frozen=True, init=False)
class ConsumedEvent:
    envelope: Envelope
    event: Event
    topic: str
    partition: int
    offset: int
    #: the record's Kafka timestamp (UTC); None when the record carries none
    timestamp: datetime | None
    key: bytes | None = None

    def __init__(
        self,
        envelope: Envelope,
        event: Event,
        topic: str,
        partition: int,
        offset: int,
        timestamp: datetime | None,
        key: bytes | None = None,
    ) -> None:
        # the fields written into the instance's dict at once: a frozen dataclass's own __init__ sets
        # each through object.__setattr__, three times the cost of this (one per record consumed);
        # still frozen afterwards (assignment raises FrozenInstanceError), equal and hashed by fields
        fields = self.__dict__
        fields["envelope"] = envelope
        fields["event"] = event
        fields["topic"] = topic
        fields["partition"] = partition
        fields["offset"] = offset
        fields["timestamp"] = timestamp
        fields["key"] = key


def message_headers(msg: Message) -> list[tuple[str, bytes | str | None]]:
    raw = msg.headers()
    if raw is None:
        return []
    return list(raw.items()) if isinstance(raw, dict) else list(raw)


#: the last timestamp made and its milliseconds: the records of a batch often share their millisecond
#: (a producer's batch is stamped by the millisecond), and a datetime is immutable, so it is shared
_LAST_TIMESTAMP: tuple[int, datetime | None] = (-1, None)


def message_timestamp(msg: Message) -> datetime | None:
    global _LAST_TIMESTAMP
    kind, ms = msg.timestamp()
    if kind == 0 or ms < 0:  # TIMESTAMP_NOT_AVAILABLE
        return None
    last_ms, last = _LAST_TIMESTAMP
    if ms == last_ms:
        return last
    at = datetime.fromtimestamp(ms / 1000, tz=UTC)
    _LAST_TIMESTAMP = (ms, at)  # one tuple: another thread sees a pair that belongs together
    return at


def decode_message(msg: Message) -> ConsumedEvent:
    """Decode one Kafka message; :class:`EventDecodeError` when it is not a valid rlstream event."""
    raw = msg.headers()
    # the client's list of (name, value) pairs is read as it is, without a copy; what
    # schemas.codec.decode does, without its Decoded in between
    envelope = decode_envelope(raw if isinstance(raw, list) else message_headers(msg))
    event = decode_body(envelope.type, msg.value())
    key = msg.key()
    return ConsumedEvent(
        envelope,
        event,
        msg.topic() or "",
        msg.partition() or 0,
        msg.offset() or 0,
        message_timestamp(msg),
        key if isinstance(key, bytes) else None,
    )


def dead_letter_for(msg: Message, error: Exception, *, stage: str, attempt: int = 0) -> DeadLettered:
    """The DeadLettered event of ``msg`` with ``error`` as the reason (see ``infra.runtime.port``)."""
    key = msg.key()
    return dead_letter(
        stage,
        error,
        topic=msg.topic() or "",
        partition=msg.partition(),
        offset=msg.offset(),
        key=key if isinstance(key, bytes) else None,
        value=msg.value(),
        headers=text_headers(message_headers(msg)),
        attempt=attempt,
    )


class EventConsumer:
    """Consume decoded events from ``topics`` as member of consumer group ``group_id``.

    Iterate :meth:`events` (or call :meth:`poll`); each yielded event counts as handled when the next
    one is requested, and only then is its offset stored for commit (auto-committed every second and
    on :meth:`close`; :meth:`commit` commits at once). Leaving the loop early leaves the last yielded
    event uncommitted, so it is delivered again: handlers must be idempotent by event id.

    Each yielded event is the current OpenTelemetry context while the caller handles it: a CONSUMER
    span ``process <topic>`` whose parent is the producer's span from the envelope's ``traceparent``,
    so events published while handling continue the same trace.
    """

    def __init__(
        self,
        bootstrap: str,
        topics: Sequence[str],
        *,
        group_id: str,
        stage: str = "consumer",
        dead_letters: EventProducer | None = None,
        dlq_topic: str = DLQ.name,
        client_id: str = "rlstream",
        from_beginning: bool = True,
        batch_size: int = 500,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        self.batch_size = batch_size
        self.topics = list(topics)
        self.group_id = group_id
        self.stage = stage
        self.dlq_topic = dlq_topic
        self.dead_lettered = 0
        self._own_dlq = dead_letters is None
        self._dlq = dead_letters or EventProducer(bootstrap, source=f"rlstream/{stage}", client_id=client_id)
        self._consumer = Consumer(
            client_config(
                bootstrap,
                **{
                    "group.id": group_id,
                    "client.id": client_id,
                    "enable.auto.commit": True,
                    "auto.commit.interval.ms": 1000,
                    # offsets are stored by hand once a record is handled: at-least-once, never ahead
                    "enable.auto.offset.store": False,
                    "auto.offset.reset": "earliest" if from_beginning else "latest",
                    "isolation.level": "read_committed",
                    **(config or {}),
                },
            )
        )
        self._consumer.subscribe(self.topics)
        self._pending: Message | None = None
        #: (topic, partition) of the event yielded last and its offset: where its handling moves the
        #: partition's position to (read once, from the decoded event)
        self._pending_at: tuple[str, int, int] = ("", 0, 0)
        #: the next offset of each partition whose records up to it were handled (or dead-lettered),
        #: not yet stored: stored before the next fetch (the only place a rebalance can take a partition
        #: away), before a commit and when leaving the loop or closing
        self._handled: dict[tuple[str, int], int] = {}
        self._buffer: deque[Message] = deque()
        self._span_token: object | None = None
        self._span: Any = None
        self._closed = False

    # ---- reading -------------------------------------------------------------------------------

    def poll(self, timeout_s: float = 1.0) -> ConsumedEvent | None:
        """The next decodable event, or None when none arrived within ``timeout_s``.

        Calling it marks the event returned by the previous call as handled.
        """
        self._finish_pending()
        if not self._buffer:
            # fetch in batches; a rebalance can only happen inside this call, i.e. with nothing buffered
            # and every handled offset stored
            self._store_handled()
            self._buffer.extend(self._consumer.consume(self.batch_size, timeout_s))
        while self._buffer:
            msg = self._buffer.popleft()
            err = msg.error()
            if err is not None:
                self._on_error(err)
                continue
            try:
                item = decode_message(msg)
            except EventDecodeError as exc:
                self._dead_letter(msg, exc)
                continue
            self._pending = msg
            self._pending_at = (item.topic, item.partition, item.offset)
            self._open_span(item)
            return item
        return None

    def events(
        self, *, idle_timeout_s: float | None = None, max_events: int | None = None
    ) -> Iterator[ConsumedEvent]:
        """Yield events until ``max_events`` were yielded or nothing arrived for ``idle_timeout_s``.

        With neither set it runs until the consumer is closed.
        """
        count = 0
        idle = 0.0
        step = 0.5 if idle_timeout_s is None else min(0.5, idle_timeout_s)
        try:
            while not self._closed and (max_events is None or count < max_events):
                item = self.poll(step)
                if item is None:
                    idle += step
                    if idle_timeout_s is not None and idle >= idle_timeout_s:
                        return
                    continue
                idle = 0.0
                count += 1
                yield item
            self._finish_pending()
        finally:
            # leaving early (break, exception in the caller): the last event was not handled, so it
            # is the first one the next poll returns (and a new consumer of the group gets it again)
            self._close_span()
            if self._pending is not None:
                self._buffer.appendleft(self._pending)
                self._pending = None
            self._store_handled()

    def commit(self) -> None:
        """Mark the last event handled and commit the stored offsets now (synchronously)."""
        self._finish_pending()
        self._store_handled()
        try:
            self._consumer.commit(asynchronous=False)
        except KafkaException as exc:
            err = exc.args[0]
            if isinstance(err, KafkaError) and err.code() == KafkaError._NO_OFFSET:
                return
            raise BrokerError(f"could not commit offsets of group {self.group_id}: {err}") from None

    def assignment(self) -> list[TopicPartition]:
        return list(self._consumer.assignment())

    def seek_to_beginning(self) -> None:
        for tp in self._consumer.assignment():
            self._consumer.seek(TopicPartition(tp.topic, tp.partition, OFFSET_BEGINNING))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._close_span()
        self._pending = None
        try:
            try:
                self._store_handled()
            finally:
                self._consumer.close()  # commits the stored offsets
        finally:
            if self._own_dlq:
                self._dlq.close()

    def __enter__(self) -> EventConsumer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ---- internals -----------------------------------------------------------------------------

    def _finish_pending(self) -> None:
        self._close_span()
        if self._pending is not None:
            topic, partition, offset = self._pending_at
            self._handled[(topic, partition)] = offset + 1
            self._pending = None

    def _store(self, msg: Message) -> None:
        """Mark ``msg`` handled: its partition's position moves past it at the next store."""
        self._handled[(msg.topic() or "", msg.partition() or 0)] = (msg.offset() or 0) + 1

    def _store_handled(self) -> None:
        """Store the handled offsets for commit (auto-committed every second, or by :meth:`commit`)."""
        if self._handled:
            handled, self._handled = self._handled, {}
            self._consumer.store_offsets(
                offsets=[TopicPartition(t, p, offset) for (t, p), offset in handled.items()]
            )

    def _dead_letter(self, msg: Message, exc: Exception) -> None:
        letter = dead_letter_for(msg, exc, stage=self.stage)
        causation = letter.original_event_id
        self._dlq.publish(letter, topic=self.dlq_topic, causation_id=causation)
        # the record's offset moves on only once its dead letter is safely on the log
        self._dlq.flush()
        self._store(msg)
        self.dead_lettered += 1

    def _on_error(self, err: KafkaError) -> None:
        if err.code() == KafkaError._PARTITION_EOF:
            return
        if err.code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC):
            raise BrokerError(
                f"topic missing: {err.str()} (subscribed to {', '.join(self.topics)})",
                hint="run `rlstream topics create`",
            )
        refused = refusal(err, f"read {', '.join(self.topics)}")
        if refused is not None:
            raise refused
        if err.fatal():
            raise BrokerError(f"Kafka consumer failed: {err.str()}")
        # anything else is transient (a broker restarting, a rebalance): librdkafka retries by itself

    def _open_span(self, item: ConsumedEvent) -> None:
        if not recording():
            # no SDK: the span is only the sender's context, still current while the event is handled
            # so what the handler publishes continues the trace; nothing to name or attribute
            self._span = None
            traceparent = item.envelope.traceparent
            self._span_token = otel_context.attach(
                set_span_in_context(remote_span(traceparent, item.envelope.tracestate))
                if traceparent
                else _UNTRACED
            )
            return
        span = start_process(
            item.topic,
            partition=item.partition,
            offset=item.offset,
            event_id=item.envelope.id,
            group=self.group_id,
            traceparent=item.envelope.traceparent,
            tracestate=item.envelope.tracestate,
            key=item.key.decode("utf-8", "replace") if item.key is not None else None,
            event=item.event,
            attributes={
                "cloudevents.event_id": item.envelope.id,
                "cloudevents.event_type": item.envelope.type,
                "cloudevents.event_source": item.envelope.source,
            },
        )
        self._span = span
        self._span_token = otel_context.attach(set_span_in_context(span))

    def _close_span(self) -> None:
        if self._span_token is not None:
            with contextlib.suppress(Exception):  # detaching from another thread/context is harmless
                otel_context.detach(self._span_token)  # type: ignore[arg-type]
            self._span_token = None
        if self._span is not None:
            self._span.end()
            self._span = None
