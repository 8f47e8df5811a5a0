"""Spans of the event bus, named and attributed by the OpenTelemetry messaging semantic conventions.

Every record written gets a PRODUCER span ``send <topic>`` and every record handled a CONSUMER span
``process <topic>``; the producer span's context travels in the record's ``traceparent`` header, so the
consumer's span is its child and one trace follows a fact from hop to hop. Where a new fact is born
from another (a sample from its group's request, a group's experience from its samples) the new trace
is linked to the one it came from instead of growing it: each sample keeps a trace of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanContext, SpanKind, get_current_span, set_span_in_context

from infra.telemetry.tracing import extract, inject, tracer

SYSTEM = "kafka"


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
    return inject(set_span_in_context(span))


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
