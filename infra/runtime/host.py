"""What every runtime does around a processor's pure core, in one place.

A runtime reads records and writes records; between the two, this host decodes each record (a record
that does not decode, or carries another event class than its topic, is poison), opens its ``process``
span, runs the handler — the whole batch, and when that fails one record at a time so that only the
bad record is dead-lettered — and turns the emitted events and dead letters into encoded records with
their envelopes and ``send`` spans. The runtimes differ only in how records come and go and how the
state and offsets are made durable with them.

A handler that cannot reach the broker (a side input it reads is away) failed for no fault of its
records: that is a :class:`~infra.runtime.port.Defer`, never a dead letter. Runtimes name the client
exceptions that mean "the broker is away" (``transient``); :class:`~schemas.errors.BrokerError` always does.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace

from opentelemetry import context as otel_context
from opentelemetry.context import Context
from opentelemetry.trace import Span, Status, StatusCode, set_span_in_context

from infra.runtime.port import (
    Defer,
    Emit,
    Incoming,
    Processor,
    ProcessorStats,
    UndeclaredOutput,
    check_topic,
    dead_letter,
    envelope_for,
    letter_for_event,
    text_headers,
)
from infra.runtime.state import State
from infra.telemetry.messaging import links_to, start_process, start_send, trace_context_of, traceparent_of
from infra.telemetry.tracing import extract
from schemas.base import Event
from schemas.codec import Record, decode, encode
from schemas.dlq import DeadLettered
from schemas.errors import BrokerError, EventDecodeError
from schemas.topics import DLQ, topic_for

log = logging.getLogger(__name__)

Headers = Sequence[tuple[str, bytes | str | None]]


@dataclass(frozen=True)
class Raw:
    """A record as a runtime read it."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    key: bytes | None
    value: bytes | None
    headers: Headers


@dataclass(frozen=True)
class Write:
    """A record a runtime is to write (and, for its metrics, the event in its newest version and the run
    its envelope names)."""

    topic: str
    record: Record
    event: Event | None = None
    run_id: str | None = None


def broker_away(exc: BaseException) -> Defer:
    """A handler that could not reach the broker failed for no fault of the record: the batch is read
    again after a pause, never dead-lettered."""
    return Defer(f"broker unavailable: {exc}", delay_s=1.0)


class Host:
    """Runs one processor's handler and tick on decoded batches and builds the records to write.

    One batch at a time: the ``process`` spans of the batch in hand end with :meth:`end_batch`.
    """

    def __init__(
        self,
        processor: Processor,
        *,
        run_id: str | None,
        group_id: str,
        client_id: str,
        transient: tuple[type[BaseException], ...] = (),
    ) -> None:
        self.processor = processor
        self.name = processor.name
        self.run_id = run_id
        self.group_id = group_id
        self.client_id = client_id
        self.source = f"rlstream/{processor.name}"
        self.stats = ProcessorStats()
        self._transient: tuple[type[BaseException], ...] = (BrokerError, *transient)
        #: the ``process`` span of each record of the batch in hand (by id() of its Incoming)
        self._spans: dict[int, Span] = {}

    # -- in ---------------------------------------------------------------------------------------
    def decode(self, raws: Iterable[Raw]) -> tuple[list[Incoming], list[tuple[Raw, Exception]]]:
        """The batch's events, and its poison records with what is wrong with each."""
        batch: list[Incoming] = []
        poison: list[tuple[Raw, Exception]] = []
        for raw in raws:
            try:
                decoded = decode(raw.value, raw.headers)
                check_topic(raw.topic, decoded.event)
            except EventDecodeError as exc:
                poison.append((raw, exc))
                continue
            envelope = decoded.envelope
            span = start_process(
                raw.topic,
                partition=raw.partition,
                offset=raw.offset,
                event_id=envelope.id,
                group=self.group_id,
                traceparent=envelope.traceparent,
                tracestate=envelope.tracestate,
                key=decoded.event.key,
                event=decoded.event,
            )
            item = Incoming(
                envelope,
                decoded.event,
                raw.topic,
                raw.partition,
                raw.offset,
                raw.timestamp_ms,
                trace=traceparent_of(span),
            )
            self._spans[id(item)] = span
            batch.append(item)
        return batch, poison

    # -- the core -------------------------------------------------------------------------------
    def handle(self, batch: list[Incoming], state: State) -> list[tuple[Emit, Incoming | None]]:
        """Run the handler on ``batch``; when it fails, one record at a time, dead-lettering the ones
        that fail alone. Raises :class:`Defer` (state writes of the batch dropped) to have the batch
        handled again later."""
        for item in batch:
            state.advance(item.partition, item.timestamp_ms / 1000.0)
        try:
            return self._call(batch, state)
        except Defer as deferred:
            state.discard()
            for span in self._spans.values():
                span.set_attribute("rlstream.deferred", str(deferred))
            raise
        except Exception as exc:
            if len(batch) == 1:
                return [self._dead_letter_event(batch[0], exc)]
            log.warning("%s: batch failed (%s); isolating the bad record", self.name, exc)
        # one record at a time: a poison record goes to the DLQ, the others are processed normally
        out: list[tuple[Emit, Incoming | None]] = []
        for item in batch:
            try:
                out.extend(self._call([item], state))
            except Defer:
                state.discard()
                raise
            except Exception as exc:
                out.append(self._dead_letter_event(item, exc))
        return out

    def _call(self, batch: list[Incoming], state: State) -> list[tuple[Emit, Incoming | None]]:
        try:
            with self._current(batch):
                emits = list(self.processor.handle(batch, state))
        except Defer:
            state.rollback()
            raise
        except self._transient as exc:
            state.rollback()
            raise broker_away(exc) from exc
        except Exception:
            state.rollback()
            raise
        state.savepoint()
        return self._pair(batch, emits)

    def tick(self, state: State, now: float) -> list[tuple[Emit, Incoming | None]]:
        """The processor's tick, then the expiry of the markers whose grace has passed. A tick that
        fails loses its writes and fails the worker (its supervisor restarts it)."""
        try:
            emits: list[tuple[Emit, Incoming | None]] = [(e, None) for e in self.processor.tick(state, now)]
        except BaseException:
            state.rollback()
            raise
        state.savepoint()
        state.expire()
        return emits

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

    # -- out --------------------------------------------------------------------------------------
    def writes(
        self, emits: Sequence[tuple[Emit, Incoming | None]], poison: Sequence[tuple[Raw, Exception]] = ()
    ) -> list[Write]:
        """The records to write: every emitted event with its envelope, then a dead letter per poison
        record."""
        out = [self._write(emit, cause) for emit, cause in emits]
        for raw, exc in poison:
            out.append(self._write(Emit(self._letter_of_raw(raw, exc), topic=DLQ.name), None))
        return out

    def _write(self, emit: Emit, cause: Incoming | None) -> Write:
        topic = emit.topic or topic_for(type(emit.event).__name__).name
        declared = self.processor.output_topics
        if declared is not None and topic != DLQ.name and topic not in declared:
            raise UndeclaredOutput(
                f"{self.name} emitted {type(emit.event).__name__} to {topic}, which is not among its "
                f"declared outputs ({', '.join(declared) or 'none'})"
            )
        newest = emit.event
        # the version it is written in, once (not again for the id, the envelope and the body)
        emit = replace(emit, event=emit.event.as_written())
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
        span = start_send(
            topic,
            event_id=emit.event.event_id(emit.attempt),
            key=emit.event.key,
            client_id=self.client_id,
            parent=parent,
            links=links_to(linked),
            event=emit.event,
        )
        try:
            traceparent, tracestate = trace_context_of(span)
            envelope = envelope_for(
                emit,
                cause,
                source=self.source,
                run_id=self.run_id,
                traceparent=traceparent,
                tracestate=tracestate,
            )
            return Write(topic, encode(emit.event, envelope), newest, envelope.run_id)
        finally:
            span.end()

    def committed(
        self, raws: Iterable[Raw], writes: Iterable[Write], *, started: float | None = None
    ) -> None:
        """Count a batch the runtime made durable: what it read and wrote (``started``: when its poll
        began, on the monotonic clock)."""
        topics = [r.topic for r in raws]
        self.stats.committed(topics, ((w.topic, w.event, w.run_id) for w in writes if w.event is not None))
        if topics:
            self.stats.batch_records.add(len(topics))
            if started is not None:
                self.stats.batch_seconds.add(time.monotonic() - started)

    def _dead_letter_event(self, item: Incoming, exc: Exception) -> tuple[Emit, Incoming | None]:
        self.stats.dead_lettered += 1
        self.stats.handler_errors += 1
        span = self._spans.get(id(item))
        if span is not None:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"dead-lettered: {type(exc).__name__}"))
        log.warning(
            "%s: dead-lettering %s@%s:%s: %s", self.name, item.topic, item.partition, item.offset, exc
        )
        return Emit(letter_for_event(self.name, item, exc), topic=DLQ.name), item

    def _letter_of_raw(self, raw: Raw, exc: Exception) -> DeadLettered:
        self.stats.dead_lettered += 1
        self.stats.decode_errors += 1
        log.warning("%s: dead-lettering %s@%s:%s: %s", self.name, raw.topic, raw.partition, raw.offset, exc)
        return dead_letter(
            self.name,
            exc,
            topic=raw.topic,
            partition=raw.partition,
            offset=raw.offset,
            key=raw.key,
            value=raw.value,
            headers=text_headers(raw.headers),
        )

    # -- the batch's spans ----------------------------------------------------------------------
    def fail_batch(self, reason: str) -> None:
        for span in self._spans.values():
            span.set_status(Status(StatusCode.ERROR, reason))

    def end_batch(self) -> None:
        """A record's span ends once its outputs are written (or the batch was given up)."""
        for span in self._spans.values():
            span.end()
        self._spans = {}
