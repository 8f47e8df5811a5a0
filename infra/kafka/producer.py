"""The idempotent event producer: one event -> one Kafka record with its CloudEvents envelope.

Writes are idempotent on the broker (``enable.idempotence``: no duplicates or reordering from client
retries) and acknowledged by all in-sync replicas. Each publish runs in a PRODUCER span named
``send <topic>`` (messaging semantic conventions), and that span's context travels in the envelope as
W3C ``traceparent``, so a consumer continues the same trace.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer
from opentelemetry.trace import Link, use_span

from infra.kafka.admin import client_config, refusal
from infra.telemetry.messaging import current_trace_context, start_send, trace_context_of
from infra.telemetry.tracing import inject, recording
from schemas.base import Event, make_event_id
from schemas.codec import HeaderWriter, body_bytes, now_iso
from schemas.envelope import Envelope
from schemas.errors import BrokerError
from schemas.topics import MAX_RECORD_BYTES, topic_for


class EventProducer:
    """Publish rlstream events. Thread-safe; use as a context manager (or call :meth:`close`).

    ``publish`` queues the record and returns its event id at once; :meth:`flush` waits until every
    queued record is acknowledged and raises :class:`BrokerError` if any was not. A delivery failure
    seen before that is raised by the next ``publish``.
    """

    def __init__(
        self,
        bootstrap: str,
        *,
        source: str,
        run_id: str | None = None,
        client_id: str = "rlstream",
        delivery_timeout_s: float = 30.0,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        self.source = source
        self.run_id = run_id
        self.bootstrap = bootstrap
        self._client_id = client_id
        self._delivery_timeout_s = delivery_timeout_s
        self._errors: list[str] = []
        self._lock = threading.Lock()
        self._producer = Producer(
            client_config(
                bootstrap,
                **{
                    "client.id": client_id,
                    "enable.idempotence": True,
                    "acks": "all",
                    "linger.ms": 5,
                    # execution events and dead letters may be megabytes (schemas.topics)
                    "message.max.bytes": MAX_RECORD_BYTES,
                    # no compression: any client in any language can read the records (lz4, snappy
                    # and zstd need optional libraries in some, e.g. the asyncio Python client)
                    # only failures need a callback; successes would cost a Python call per record
                    "delivery.report.only.error": True,
                    "on_delivery": self._on_delivery,
                    "delivery.timeout.ms": int(delivery_timeout_s * 1000),
                    **(config or {}),
                },
            )
        )
        #: the envelope headers its records share, encoded once (remade if source or run_id is set anew)
        self._headers = HeaderWriter(source, run_id)
        self._closed = False

    def publish(
        self,
        event: Event,
        topic: str | None = None,
        causation_id: str | None = None,
        attempt: int = 0,
        *,
        links: Sequence[Link] = (),
    ) -> str:
        """Queue ``event`` on ``topic`` (default: the catalog topic of its class); returns its event id.

        Its span continues the current trace; ``links`` names spans of other traces it came from."""
        self._raise_pending()
        name = topic or topic_for(type(event).__name__).name
        event = event.as_written()  # once, not again in event_id() and encode()
        ce_type = event.ce_type()
        if type(event).event_id is Event.event_id:
            # what event.event_id(attempt) gives, without deriving the written version a second time
            event_id = make_event_id(ce_type, *event.identity(), attempt=attempt)
        else:  # a class with ids of its own (kept across its versions)
            event_id = event.event_id(attempt)
        key = event.key
        if not recording():
            # no SDK: the send span would be only the context it continues, so none is made (nor its
            # attributes); a trace this process continues (a valid current span) still travels in the
            # envelope, as start_send + trace_context_of would have written it
            self._send(name, event, ce_type, event_id, key, causation_id, *current_trace_context())
            return event_id
        span = start_send(
            name,
            event_id=event_id,
            key=key,
            client_id=self._client_id,
            links=links,
            event=event,
            attributes={
                "cloudevents.event_id": event_id,
                "cloudevents.event_type": ce_type,
                "cloudevents.event_source": self.source,
                "cloudevents.event_subject": key,
            },
        )
        if span.is_recording():
            # the send span is current while the record is built, so an error is recorded on it
            with use_span(span, end_on_exit=True):
                self._send(name, event, ce_type, event_id, key, causation_id, *inject())
        else:
            # an SDK that does not sample this span: nothing to record on; its context (a valid parent)
            # still travels in the envelope, without the cost of making the span current
            self._send(name, event, ce_type, event_id, key, causation_id, *trace_context_of(span))
        return event_id

    def _send(
        self,
        topic: str,
        event: Event,
        ce_type: str,
        event_id: str,
        key: str,
        causation_id: str | None,
        traceparent: str | None,
        tracestate: str | None,
    ) -> None:
        if not self.source:
            # the one field here an Envelope could refuse (the rest are made above, valid by
            # construction): refused as it always was, by the envelope's own validation
            Envelope(id=event_id, source=self.source, type=ce_type, time=datetime.now(UTC))
        writer = self._headers
        if writer.source != self.source or writer.run_id != self.run_id:  # set anew since the last record
            writer = self._headers = HeaderWriter(self.source, self.run_id)
        headers = writer.headers(
            event_id,
            ce_type,
            now_iso(),
            subject=key,
            traceparent=traceparent,
            tracestate=tracestate,
            causation_id=causation_id,
        )
        self._produce(topic, key.encode(), body_bytes(event), headers)

    def produce_raw(
        self,
        topic: str,
        value: bytes | None,
        key: bytes | None = None,
        headers: list[tuple[str, str | bytes | None]] | None = None,
    ) -> None:
        """Queue a record exactly as given (dead letters keep foreign bytes; tests write garbage)."""
        self._raise_pending()
        self._produce(topic, key, value, headers or [])

    def flush(self, timeout_s: float | None = None) -> None:
        """Wait until every queued record is acknowledged; BrokerError if any failed or timed out.

        By default it waits as long as a record may still be delivered (the delivery timeout, plus the
        moment its failure takes to be reported): waiting less would call a record lost that the client
        is still retrying, e.g. while a freshly started cluster hands out its first producer ids."""
        if timeout_s is None:
            timeout_s = self._delivery_timeout_s + 5.0
        left = self._producer.flush(timeout_s)
        self._raise_pending()
        if left:
            raise BrokerError(
                f"{left} record(s) not acknowledged by Kafka at {self.bootstrap} within {timeout_s:.0f}s",
                hint="check that the broker is up (`rlstream broker status`) and has enough in-sync replicas",
            )

    def close(self, timeout_s: float | None = None) -> None:
        if not self._closed:
            self._closed = True
            self.flush(timeout_s)

    def __enter__(self) -> EventProducer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            # don't mask the original error with a flush failure; still try to deliver what was queued
            with contextlib.suppress(BrokerError):
                self.close()

    # ---- internals -----------------------------------------------------------------------------

    def _produce(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: list[tuple[str, str | bytes | None]],
    ) -> None:
        while True:
            try:
                self._producer.produce(topic, value=value, key=key, headers=headers)
                break
            except BufferError:
                # local queue full: serve delivery reports until there is room again
                self._producer.poll(0.1)
            except KafkaException as exc:
                raise BrokerError(f"cannot publish to {topic}: {exc.args[0]}") from None
        self._producer.poll(0)

    def _on_delivery(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            refused = refusal(err, f"write {msg.topic()}")
            with self._lock:
                self._errors.append(refused.message if refused is not None else f"{msg.topic()}: {err.str()}")

    def _raise_pending(self) -> None:
        if not self._errors:
            # nothing reported (read without the lock, once per publish: a report landing just after
            # is raised by the next publish or flush, as one landing just after the lock would be)
            return
        with self._lock:
            errors, self._errors = self._errors, []
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            hint = "run `rlstream topics create`" if any("Unknown topic" in e for e in errors) else None
            raise BrokerError(f"Kafka did not accept a record: {errors[0]}{more}", hint=hint)
