"""The processor port: what every rlstream stream processor is, whichever runtime hosts it.

A processor is a pure core behind one small interface (:class:`Processor`): it names its input topics,
takes a batch of decoded events together with its :class:`~infra.runtime.state.State` and returns the
events it wants on the log (:class:`Emit`); optionally it acts on time alone (``tick``). It may refuse a
record (:class:`PoisonRecord`: dead-letter it) or a whole batch for now (:class:`Defer`: read it again
later). It never sees a Kafka client, a transaction or a Faust stream: three runtimes host the same
processors unchanged (``infra.kafka.transactional``, ``infra.faust.runtime``, ``infra.runtime.memory``).

The records a runtime writes for a processor are built here, by pure functions every runtime shares:
:func:`envelope_for` (the CloudEvents envelope of an emitted event) and :func:`dead_letter` (the one
dead letter of a record that could not be used, with the one cap on the bytes it keeps). This module
imports no client library.
"""

from __future__ import annotations

import base64
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from infra.runtime.state import Kind, State
from infra.runtime.tally import EventTally, Summary
from schemas.base import Event
from schemas.dlq import DeadLettered
from schemas.envelope import H_ID, Envelope
from schemas.errors import EventDecodeError, RlstreamError
from schemas.topics import by_name

#: most bytes of an original record a dead letter keeps: base64 grows a record by a third, and a letter
#: larger than the broker's message limit would fail the write that carries it, again on every restart
MAX_KEPT_BYTES = 256 * 1024
#: most characters of an error message a dead letter keeps
MAX_ERROR_CHARS = 4000


@dataclass(frozen=True)
class Incoming:
    """One decoded record handed to a processor."""

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


class UndeclaredOutput(RlstreamError):
    """A processor emitted to a topic it does not declare among its outputs (a wiring bug)."""


class PoisonRecord(RlstreamError):
    """A handler's way to say: this record cannot be processed, dead-letter it and move on."""


class Defer(Exception):
    """A handler's way to say: not now (e.g. the generator waits for newer weights). The batch's state
    writes are discarded and the batch is handled again after ``delay_s``; what the handler learned in
    memory before raising (e.g. a newer policy version) stays."""

    def __init__(self, reason: str, delay_s: float = 0.5) -> None:
        super().__init__(reason)
        self.delay_s = delay_s


#: a processor's pure core: one batch of decoded events (and the processor's state) in, events out
Handler = Callable[[Sequence[Incoming], State], Iterable[Emit]]
#: what a processor does on time alone (e.g. issue groups, emit a group at its deadline)
Tick = Callable[[State, float], Iterable[Emit]]


@runtime_checkable
class Processor(Protocol):
    """A stream processor as every runtime hosts it.

    ``name`` is its consumer group and state (changelog) identity; ``input_topics`` what it reads;
    ``kinds`` the kinds of records its state holds (markers among them expire); ``handle`` its pure
    core; ``tick`` (called every ``tick_interval_s`` and after each batch, with the wall time) what it
    does on time alone — return nothing when there is nothing to do; ``batch_size`` the most records
    handed to ``handle`` at once. State writes made by a ``handle`` or ``tick`` call are kept only if
    the call returns; its emitted events and its state writes reach the log together (transactional,
    in-memory) or outputs first (Faust: at-least-once).
    """

    @property
    def name(self) -> str: ...

    @property
    def input_topics(self) -> Sequence[str]: ...

    @property
    def output_topics(self) -> Sequence[str] | None:
        """The topics its handler and tick may emit to (dead letters aside); None: not declared. The
        host refuses any other, so the declaration the access plan (``rlstream acls``) grants from is
        the one the processor is held to."""
        ...

    @property
    def kinds(self) -> Sequence[Kind[Any]]: ...

    @property
    def batch_size(self) -> int: ...

    @property
    def tick_interval_s(self) -> float: ...

    def handle(self, batch: Sequence[Incoming], state: State) -> Iterable[Emit]: ...

    def tick(self, state: State, now: float) -> Iterable[Emit]: ...


def _no_tick(state: State, now: float) -> Iterable[Emit]:
    return ()


@dataclass(frozen=True)
class Hosted:
    """A :class:`Processor` made of a handler and an optional tick (how the wiring builds one from an
    agent: ``Hosted("reward", INPUT_TOPICS, agent.handle)``)."""

    name: str
    input_topics: Sequence[str]
    handler: Handler
    on_tick: Tick = _no_tick
    output_topics: Sequence[str] | None = None
    kinds: Sequence[Kind[Any]] = ()
    batch_size: int = 32
    tick_interval_s: float = 0.5

    def handle(self, batch: Sequence[Incoming], state: State) -> Iterable[Emit]:
        return self.handler(batch, state)

    def tick(self, state: State, now: float) -> Iterable[Emit]:
        return self.on_tick(state, now)


@dataclass
class ProcessorStats:
    """What a worker did since it started (its metrics read these at scrape time). The per-topic counts
    and the tally count what was committed (an aborted transaction's records are counted when they are
    written again)."""

    consumed: int = 0
    produced: int = 0
    dead_lettered: int = 0
    transactions: int = 0
    aborted: int = 0
    started_at: float = field(default_factory=time.monotonic)
    #: committed records read per input topic, and written per output topic
    consumed_by_topic: Counter[str] = field(default_factory=Counter)
    produced_by_topic: Counter[str] = field(default_factory=Counter)
    #: records whose handler raised (each dead-lettered), and records that did not decode
    handler_errors: int = 0
    decode_errors: int = 0
    #: per input topic, records not yet read by the worker's consumer group (where the runtime measures it)
    lag: dict[str, int] = field(default_factory=dict)
    #: time from a batch's poll to its commit, and the records per committed batch
    batch_seconds: Summary = field(default_factory=Summary)
    batch_records: Summary = field(default_factory=Summary)
    tally: EventTally = field(default_factory=EventTally)

    def committed(self, consumed: Iterable[str], written: Iterable[tuple[str, Event, str | None]]) -> None:
        """Count a committed batch: the topics of the records it read, and each record it wrote as
        (topic, event in its newest version, run id of its envelope)."""
        self.consumed_by_topic.update(consumed)
        for topic, event, run in written:
            self.produced_by_topic[topic] += 1
            self.tally.observe(event, run)

    def rate(self) -> float:
        return self.consumed / max(time.monotonic() - self.started_at, 1e-9)


def check_topic(topic: str, event: Event) -> None:
    """Raise EventDecodeError when ``topic`` is a catalog topic that carries another event class.

    A catalog topic carries one event class (``schemas.topics``): a well-formed event of another class on
    it (a producer writing to the wrong topic, or a hostile one) is dead-lettered like any bad record,
    rather than silently ignored by a handler that only looks for its own types."""
    try:
        expected = by_name(topic).events
    except KeyError:  # not a catalog topic (e.g. a test's own): any event goes
        return
    if type(event).__name__ not in expected:
        raise EventDecodeError(
            f"{topic} carries {' or '.join(expected)} events, not {type(event).__name__} ({event.ce_type()})",
            location="header ce_type",
        )


def text_headers(headers: Iterable[tuple[str, bytes | str | None]] | None) -> dict[str, str]:
    """Kafka headers as text, never failing: bytes that are not UTF-8 are kept escaped."""
    out: dict[str, str] = {}
    for name, raw in headers or ():
        if raw is None:
            continue
        out[name] = raw.decode("utf-8", "backslashreplace") if isinstance(raw, bytes) else str(raw)
    return out


def dead_letter(
    stage: str,
    error: BaseException | str,
    *,
    topic: str,
    partition: int | None,
    offset: int | None,
    key: bytes | None,
    value: bytes | None,
    headers: Mapping[str, str],
    error_type: str | None = None,
    event_id: str | None = None,
    attempt: int = 0,
    disposition: Literal["dead", "retry"] = "dead",
) -> DeadLettered:
    """The dead letter of a record ``stage`` could not use (or, with ``disposition="retry"``, will try
    again): the error, where the record was, and its bytes — at most :data:`MAX_KEPT_BYTES` of them
    (the error then says how many there were)."""
    raw = value or b""
    note = (
        f" [original of {len(raw)} bytes: first {MAX_KEPT_BYTES} kept]" if len(raw) > MAX_KEPT_BYTES else ""
    )
    return DeadLettered(
        stage=stage,
        error_type=error_type or (type(error).__name__ if isinstance(error, BaseException) else "Error"),
        error=str(error)[:MAX_ERROR_CHARS] + note,
        attempt=attempt,
        original_topic=topic,
        original_partition=partition if partition is not None else -1,
        original_offset=offset if offset is not None else -1,
        original_event_id=event_id if event_id is not None else headers.get(H_ID),
        original_key_b64=base64.b64encode(key).decode() if key else None,
        original_value_b64=base64.b64encode(raw[:MAX_KEPT_BYTES]).decode(),
        original_headers=dict(headers),
        disposition=disposition,
    )


def letter_for_event(stage: str, item: Incoming, error: BaseException) -> DeadLettered:
    """The dead letter of a decoded record whose handling failed (the event's own JSON is kept)."""
    return dead_letter(
        stage,
        error,
        topic=item.topic,
        partition=item.partition,
        offset=item.offset,
        key=item.event.key.encode(),
        value=item.event.model_dump_json().encode(),
        headers={"ce_type": item.envelope.type, "ce_id": item.envelope.id},
        event_id=item.envelope.id,
    )


def envelope_for(
    emit: Emit,
    cause: Incoming | None,
    *,
    source: str,
    run_id: str | None,
    traceparent: str | None = None,
    tracestate: str | None = None,
) -> Envelope:
    """The envelope of an emitted event: its deterministic id, the run (the emit's, else its cause's,
    else the processor's ``run_id``) and what caused it (the emit's causation id, else its cause's id)."""
    return Envelope.for_event(
        emit.event,
        source=source,
        run_id=emit.run_id or (cause.envelope.run_id if cause else None) or run_id,
        causation_id=emit.causation_id or (cause.envelope.id if cause else None),
        attempt=emit.attempt,
        traceparent=traceparent,
        tracestate=tracestate,
    )
