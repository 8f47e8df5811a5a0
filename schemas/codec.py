"""Encode events to Kafka records and decode them back, validating everything on the way in.

A record is (key, value, headers): the key is the event's aggregate id, the value its JSON body and the
headers the envelope. Decoding checks the headers, the body's JSON and its schema, upcasts old versions,
and raises :class:`EventDecodeError` naming exactly what is wrong.
"""

from __future__ import annotations

import json
import time as _time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

from pydantic import ValidationError
from pydantic_core import SchemaValidator

from schemas import envelope as env
from schemas.base import Event
from schemas.envelope import (
    CONTENT_TYPE,
    H_CAUSATION_ID,
    H_CONTENT_TYPE,
    H_ID,
    H_RUN_ID,
    H_SOURCE,
    H_SPECVERSION,
    H_SUBJECT,
    H_TIME,
    H_TRACEPARENT,
    H_TRACESTATE,
    H_TYPE,
    SPECVERSION,
    Envelope,
)
from schemas.errors import EventDecodeError
from schemas.registry import BY_CE_TYPE, LATEST, upcast

E = TypeVar("E", bound=Event)

Header = tuple[str, bytes]

#: largest body we accept; protects consumers from a single hostile record
MAX_BODY_BYTES = 8 * 1024 * 1024

#: the newest version's validator of each CloudEvents type that is the newest of its event, looked up
#: once per record instead of the class, then the newest class of its event, then the validator
_NEWEST: dict[str, SchemaValidator] = {
    ce_type: cast(SchemaValidator, cls.__pydantic_validator__)
    for ce_type, cls in BY_CE_TYPE.items()
    if LATEST[cls.event_type] is cls
}
#: the envelope's validator, called directly (what ``Envelope.model_validate`` calls, less its wrapper)
_ENVELOPE = cast(SchemaValidator, Envelope.__pydantic_validator__)


@dataclass(frozen=True)
class Record:
    key: bytes | None
    value: bytes
    headers: tuple[Header, ...]


@dataclass(frozen=True)
class Decoded:
    envelope: Envelope
    event: Event


def encode(event: Event, envelope: Envelope) -> Record:
    """The record of ``event`` in the version it is written in (:meth:`Event.as_written`)."""
    return encode_written(event.as_written(), envelope)


def encode_written(event: Event, envelope: Envelope) -> Record:
    """:func:`encode` of an event already in its written version (a producer that has it saves
    deriving it again)."""
    if envelope.type != event.ce_type():
        raise ValueError(f"envelope type {envelope.type} does not match event {event.ce_type()}")
    return Record(
        key=event.key.encode(),
        value=body_bytes(event),
        headers=envelope_headers(
            envelope.id,
            envelope.source,
            envelope.type,
            envelope.time,
            subject=envelope.subject,
            traceparent=envelope.traceparent,
            tracestate=envelope.tracestate,
            run_id=envelope.run_id,
            causation_id=envelope.causation_id,
            specversion=envelope.specversion,
            content_type=envelope.content_type,
        ),
    )


def body_bytes(event: Event) -> bytes:
    """The JSON body of ``event``: the bytes ``event.model_dump_json().encode()`` gives, taken from the
    serializer as it makes them (``model_dump_json`` decodes them to text, which the record encodes
    back: two copies per record)."""
    return event.__pydantic_serializer__.to_json(event)


def envelope_headers(
    id: str,
    source: str,
    type: str,
    time: datetime,
    *,
    subject: str | None,
    traceparent: str | None,
    tracestate: str | None,
    run_id: str | None,
    causation_id: str | None,
    specversion: str = SPECVERSION,
    content_type: str = CONTENT_TYPE,
) -> tuple[Header, ...]:
    """The Kafka headers of an envelope with these fields (optional ones only when set), in one order.

    A producer that made every field itself (an event id, its own source, the event's type, now, a
    ``traceparent`` its propagator wrote) calls it directly, without an :class:`Envelope` in between."""
    headers = [
        (H_SPECVERSION, specversion.encode()),
        (H_ID, id.encode()),
        (H_SOURCE, source.encode()),
        (H_TYPE, type.encode()),
        (H_TIME, time.isoformat().encode()),
        (H_CONTENT_TYPE, content_type.encode()),
    ]
    if subject:
        headers.append((H_SUBJECT, subject.encode()))
    if traceparent:
        headers.append((H_TRACEPARENT, traceparent.encode()))
    if tracestate:
        headers.append((H_TRACESTATE, tracestate.encode()))
    if run_id:
        headers.append((H_RUN_ID, run_id.encode()))
    if causation_id:
        headers.append((H_CAUSATION_ID, causation_id.encode()))
    return tuple(headers)


#: the current second's ``datetime.isoformat()`` up to the seconds, and that second (Unix time)
_SECOND: tuple[int, str] = (-1, "")


def now_iso() -> str:
    """``datetime.now(UTC).isoformat()``, the envelope's ``ce_time`` of a record written now: the same
    clock, floored to the microsecond as ``datetime.now`` floors it, the same text (no fraction when the
    microsecond is 0). The date and time of day are formatted once per second, not per record (a
    datetime and its isoformat were a tenth of a publish)."""
    global _SECOND
    second, micro = divmod(_time.time_ns() // 1000, 1_000_000)
    cached, prefix = _SECOND
    if second != cached:
        prefix = datetime.fromtimestamp(second, UTC).isoformat()[:19]
        _SECOND = (second, prefix)  # one tuple: a thread reading it sees either second whole
    return f"{prefix}.{micro:06d}+00:00" if micro else f"{prefix}+00:00"


class HeaderWriter:
    """:func:`envelope_headers` for the records of one producer: the headers every record of its source
    and run shares are encoded once (and each event type's once), not per record. Gives the same headers
    in the same order."""

    def __init__(self, source: str, run_id: str | None) -> None:
        self.source = source
        self.run_id = run_id
        self._head = (H_SPECVERSION, SPECVERSION.encode())
        self._source = (H_SOURCE, source.encode())
        self._content_type = (H_CONTENT_TYPE, CONTENT_TYPE.encode())
        self._run: Header | None = (H_RUN_ID, run_id.encode()) if run_id else None
        #: by CloudEvents type: one entry per event class written (a few dozen at most)
        self._types: dict[str, Header] = {}

    def headers(
        self,
        id: str,
        type: str,
        time: str,
        *,
        subject: str | None,
        traceparent: str | None,
        tracestate: str | None,
        causation_id: str | None,
    ) -> list[tuple[str, str | bytes | None]]:
        """The headers of a record with these fields (``time``: ISO-8601 text, e.g. :func:`now_iso`)."""
        type_header = self._types.get(type)
        if type_header is None:
            type_header = self._types[type] = (H_TYPE, type.encode())
        headers: list[tuple[str, str | bytes | None]] = [
            self._head,
            (H_ID, id.encode()),
            self._source,
            type_header,
            (H_TIME, time.encode()),
            self._content_type,
        ]
        if subject:
            headers.append((H_SUBJECT, subject.encode()))
        if traceparent:
            headers.append((H_TRACEPARENT, traceparent.encode()))
        if tracestate:
            headers.append((H_TRACESTATE, tracestate.encode()))
        if self._run is not None:
            headers.append(self._run)
        if causation_id:
            headers.append((H_CAUSATION_ID, causation_id.encode()))
        return headers


def headers_dict(headers: Iterable[tuple[str, bytes | str | None]] | None) -> dict[str, str]:
    """Kafka headers as text; the last value wins for a repeated name. Undecodable bytes are an error."""
    # read twice where the fast path gives up: an iterator is taken into a list first
    pairs = headers if isinstance(headers, (list, tuple)) else list(headers or ())
    try:
        # the common case, every value UTF-8 bytes (what the client returns): one comprehension;
        # anything else (None, text, bad bytes) raises and is read by the loop below, which says why
        return {name: raw.decode() for name, raw in pairs}  # type: ignore[union-attr]
    except (AttributeError, UnicodeDecodeError):
        pass
    out: dict[str, str] = {}
    for name, raw in pairs:
        if raw is None:
            continue
        try:
            out[name] = raw.decode() if isinstance(raw, bytes) else str(raw)
        except UnicodeDecodeError:
            raise EventDecodeError("header is not UTF-8", location=f"header {name}") from None
    return out


def decode_envelope(headers: Sequence[tuple[str, bytes | str | None]] | None) -> Envelope:
    h = headers_dict(headers)
    get = h.get  # the header names below are this module's globals: read once per record each
    if not (get(H_SPECVERSION) and get(H_ID) and get(H_SOURCE) and get(H_TYPE) and get(H_TIME)):
        missing = [name for name in env.REQUIRED_HEADERS if not get(name)]
        raise EventDecodeError(
            "missing CloudEvents header(s): " + ", ".join(missing),
            location="headers",
            hint="publish with rlstream's producer or set the ce_* headers of CloudEvents binary mode",
        )
    if h[H_SPECVERSION] != SPECVERSION:
        raise EventDecodeError(
            f"unsupported specversion {h[H_SPECVERSION]!r}", location="header ce_specversion"
        )
    ctype = get(H_CONTENT_TYPE, CONTENT_TYPE)
    if not ctype.startswith(CONTENT_TYPE):
        raise EventDecodeError(
            f"content-type {ctype!r} is not {CONTENT_TYPE}", location="header content-type"
        )
    try:
        time = datetime.fromisoformat(h[H_TIME].replace("Z", "+00:00"))
    except ValueError:
        raise EventDecodeError(f"not an ISO-8601 time: {h[H_TIME]!r}", location="header ce_time") from None
    try:
        # validating a dict is a sixth cheaper than keyword arguments (one per record consumed)
        return _ENVELOPE.validate_python(  # type: ignore[no-any-return]
            {
                "id": h[H_ID],
                "source": h[H_SOURCE],
                "type": h[H_TYPE],
                "time": time,
                "subject": get(H_SUBJECT),
                "run_id": get(H_RUN_ID),
                "causation_id": get(H_CAUSATION_ID),
                "traceparent": get(H_TRACEPARENT),
                "tracestate": get(H_TRACESTATE),
            }
        )
    except ValidationError as exc:
        raise EventDecodeError(_first_error(exc), location="headers") from None


def decode_body(ce_type: str, value: bytes | None) -> Event:
    """Validate a JSON body written as ``ce_type`` and return it as the newest version of its event."""
    if value is None:
        raise EventDecodeError("record has no value (tombstone)", location="value")
    if len(value) > MAX_BODY_BYTES:
        raise EventDecodeError(f"body of {len(value)} bytes exceeds {MAX_BODY_BYTES}", location="value")
    newest = _NEWEST.get(ce_type)
    if newest is not None:
        # the common case, a body of the newest version: pydantic parses and validates in one pass
        # (about 3x faster); any failure falls through to the path below, which names what is wrong
        try:
            return newest.validate_json(value)  # type: ignore[no-any-return]
        except ValidationError:
            pass
    try:
        body: Any = json.loads(value)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EventDecodeError(f"body is not JSON: {exc}", location="value") from None
    except RecursionError:  # a hostile body nested thousands deep must not take the consumer down
        raise EventDecodeError(
            "body is not JSON this parser accepts: nested too deeply", location="value"
        ) from None
    if not isinstance(body, dict):
        raise EventDecodeError("body must be a JSON object", location="value")
    try:
        cls, body = upcast(ce_type, body)
    except (KeyError, ValueError) as exc:
        raise EventDecodeError(str(exc).strip("'\""), location="header ce_type") from None
    try:
        return cls.model_validate(body)
    except ValidationError as exc:
        raise EventDecodeError(_first_error(exc), location=f"{ce_type} body") from None


def decode(value: bytes | None, headers: Sequence[tuple[str, bytes | str | None]] | None) -> Decoded:
    envelope = decode_envelope(headers)
    return Decoded(envelope=envelope, event=decode_body(envelope.type, value))


def decode_as(
    cls: type[E], value: bytes | None, headers: Sequence[tuple[str, bytes | str | None]] | None
) -> tuple[Envelope, E]:
    decoded = decode(value, headers)
    if not isinstance(decoded.event, cls):
        raise EventDecodeError(
            f"expected {cls.ce_type()}, got {decoded.envelope.type}", location="header ce_type"
        )
    return decoded.envelope, decoded.event


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(root)"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"field {loc}: {first['msg']}{more}"
