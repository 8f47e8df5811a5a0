"""Spans of the event bus, named and attributed by the OpenTelemetry messaging semantic conventions.

Every record written gets a PRODUCER span ``send <topic>`` and every record handled a CONSUMER span
``process <topic>``; the producer span's context travels in the record's ``traceparent`` header, so the
consumer's span is its child and one trace follows a fact from hop to hop. Where a new fact is born
from another (a sample from its group's request, a group's experience from its samples) the new trace
is linked to the one it came from instead of growing it: each sample keeps a trace of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry.context import Context
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    NoOpTracer,
    Span,
    SpanContext,
    SpanKind,
    TraceFlags,
    format_span_id,
    format_trace_id,
    get_current_span,
    set_span_in_context,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from infra.telemetry.tracing import extract, inject, recording, tracer

SYSTEM = "kafka"

# Without an SDK (no tracing configured: the common case of a processor) a span is only the context
# it continues. The helpers below then start it with the no-op tracer itself and read/write the W3C
# headers with the W3C propagator itself, skipping the proxy tracer, the propagator chain and the
# attributes nobody records: what the global API would return, at a fraction of a record's cost.
_NO_SDK = NoOpTracer()
_W3C = TraceContextTextMapPropagator()
#: a version-00 ``traceparent`` without trailing fields, the W3C form (anything else: the propagator)
_PLAIN_TRACEPARENT = re.compile(r"00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_ZERO_TRACE, _ZERO_SPAN = "0" * 32, "0" * 16


def remote_span(traceparent: str | None, tracestate: str | None = None) -> Span:
    """The non-recording span a ``traceparent`` names (the invalid span when it names none): what a
    process without an SDK starts as its span of a record that carries it."""
    if not traceparent:
        return _NO_SDK.start_span("", context=Context())
    plain = _PLAIN_TRACEPARENT.fullmatch(traceparent) if not tracestate else None
    if plain is not None and plain[1] != _ZERO_TRACE and plain[2] != _ZERO_SPAN:
        # the form every rlstream record carries: read directly what the propagator would
        trace_id, span_id, flags = plain.groups()
        return NonRecordingSpan(
            SpanContext(int(trace_id, 16), int(span_id, 16), True, TraceFlags(int(flags, 16)))
        )
    carrier = {"traceparent": traceparent}
    if tracestate:
        carrier["tracestate"] = tracestate
    return _NO_SDK.start_span("", context=_W3C.extract(carrier))


def event_attributes(event: Any) -> dict[str, str]:
    """The rlstream ids an event names (searchable in a tracing backend: ``rlstream.sample_id=...``)."""
    out: dict[str, str] = {}
    for name in ("sample_id", "group_id", "task_id", "run_id"):
        value = getattr(event, name, None)
        if isinstance(value, str) and value:
            out[f"rlstream.{name}"] = value
    return out


def span_context(traceparent: str | None, tracestate: str | None = None) -> SpanContext | None:
    """The span a W3C ``traceparent`` names (None when it names none)."""
    if not traceparent:
        return None
    if not recording():
        ctx = remote_span(traceparent, tracestate).get_span_context()
        return ctx if ctx.is_valid else None
    ctx = get_current_span(extract(traceparent, tracestate)).get_span_context()
    return ctx if ctx.is_valid else None


def links_to(traceparents: Iterable[str | None]) -> list[Link]:
    """Span links to the spans the given ``traceparent`` values name (duplicates and blanks dropped)."""
    seen: set[tuple[int, int]] = set()
    out: list[Link] = []
    for tp in traceparents:
        ctx = span_context(tp)
        if ctx is None or (ctx.trace_id, ctx.span_id) in seen:
            continue
        seen.add((ctx.trace_id, ctx.span_id))
        out.append(Link(ctx))
    return out


def trace_context_of(span: Span) -> tuple[str | None, str | None]:
    """``(traceparent, tracestate)`` that continue ``span`` (both None when it has no valid context)."""
    if not span.get_span_context().is_valid:
        return None, None
    if not recording():
        # what the W3C propagator writes for it (see remote_span)
        ctx = span.get_span_context()
        ids = f"{format_trace_id(ctx.trace_id)}-{format_span_id(ctx.span_id)}"
        state = (ctx.trace_state.to_header() or None) if ctx.trace_state else None
        return f"00-{ids}-{ctx.trace_flags:02x}", state
    return inject(set_span_in_context(span))


def current_trace_context() -> tuple[str | None, str | None]:
    """Without an SDK, what ``trace_context_of(start_send(...))`` gives for a record sent now: the
    context of the current span when it is valid (a trace this thread continues), else none. Makes no
    span; with an SDK a send span is needed (see :func:`start_send`)."""
    return trace_context_of(get_current_span())


def traceparent_of(span: Span) -> str | None:
    """The ``traceparent`` that continues ``span`` (None when it has no valid context)."""
    return trace_context_of(span)[0]


def start_send(
    topic: str,
    *,
    event_id: str,
    key: str,
    client_id: str,
    parent: Context | None = None,
    links: Iterable[Link] = (),
    event: Any = None,
    attributes: Mapping[str, Any] | None = None,
) -> Span:
    """A PRODUCER span for one record written to ``topic`` (``event``: the ids it names become
    attributes).

    ``parent``: the context to continue; None continues the current one, an empty ``Context()``
    starts a new trace.
    """
    if not recording():
        return _NO_SDK.start_span("", context=parent)
    span = tracer().start_span(f"send {topic}", context=parent, kind=SpanKind.PRODUCER, links=list(links))
    if span.is_recording():
        span.set_attributes(
            {
                "messaging.system": SYSTEM,
                "messaging.destination.name": topic,
                "messaging.operation.type": "send",
                "messaging.operation.name": "send",
                "messaging.message.id": event_id,
                "messaging.kafka.message.key": key,
                "messaging.client.id": client_id,
                **event_attributes(event),
                **(attributes or {}),
            }
        )
    return span


def start_process(
    topic: str,
    *,
    partition: int,
    offset: int,
    event_id: str,
    group: str,
    traceparent: str | None,
    tracestate: str | None = None,
    key: str | None = None,
    event: Any = None,
    attributes: Mapping[str, Any] | None = None,
) -> Span:
    """A CONSUMER span for handling one record, a child of the span that sent it."""
    if not recording():
        return remote_span(traceparent, tracestate)
    span = tracer().start_span(
        f"process {topic}", context=extract(traceparent, tracestate), kind=SpanKind.CONSUMER
    )
    if span.is_recording():
        attrs: dict[str, Any] = {
            "messaging.system": SYSTEM,
            "messaging.destination.name": topic,
            "messaging.operation.type": "process",
            "messaging.operation.name": "process",
            "messaging.consumer.group.name": group,
            "messaging.destination.partition.id": str(partition),
            "messaging.kafka.offset": offset,
            "messaging.message.id": event_id,
            **event_attributes(event),
            **(attributes or {}),
        }
        if key is not None:
            attrs["messaging.kafka.message.key"] = key
        span.set_attributes(attrs)
    return span
