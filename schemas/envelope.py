"""The envelope of every record: CloudEvents 1.0 binary-mode headers plus W3C trace context and the
rlstream run and causation ids. The body is the event's JSON; the envelope travels in Kafka headers."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import Field

from schemas.base import Event, FrozenModel

SPECVERSION = "1.0"
CONTENT_TYPE = "application/json"

# Kafka header names (CloudEvents Kafka protocol binding, binary content mode)
H_SPECVERSION = "ce_specversion"
H_ID = "ce_id"
H_SOURCE = "ce_source"
H_TYPE = "ce_type"
H_TIME = "ce_time"
H_SUBJECT = "ce_subject"
H_CONTENT_TYPE = "content-type"
H_TRACEPARENT = "traceparent"
H_TRACESTATE = "tracestate"
H_RUN_ID = "rlstream_run_id"
H_CAUSATION_ID = "rlstream_causation_id"

REQUIRED_HEADERS = (H_SPECVERSION, H_ID, H_SOURCE, H_TYPE, H_TIME)


class Envelope(FrozenModel):
    id: str = Field(min_length=1)
    source: str = Field(min_length=1)
    type: str = Field(min_length=1)
    time: datetime
    subject: str | None = None
    run_id: str | None = None
    causation_id: str | None = None
    traceparent: str | None = Field(
        default=None, pattern=r"^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$"
    )
    tracestate: str | None = None
    specversion: str = SPECVERSION
    content_type: str = CONTENT_TYPE

    @classmethod
    def for_event(
        cls,
        event: Event,
        *,
        source: str,
        run_id: str | None = None,
        causation_id: str | None = None,
        attempt: int = 0,
        time: datetime | None = None,
        traceparent: str | None = None,
        tracestate: str | None = None,
    ) -> Envelope:
        return cls(
            id=event.event_id(attempt),
            source=source,
            type=event.as_written().ce_type(),
            time=time or datetime.now(UTC),
            subject=event.key,
            run_id=run_id,
            causation_id=causation_id,
            traceparent=traceparent,
            tracestate=tracestate,
        )
