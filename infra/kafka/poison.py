"""What makes a record poison beyond failing to decode, and how much of it a dead letter keeps.

A catalog topic carries one event class (``schemas.topics``): a well-formed event of another class on
it (a producer writing to the wrong topic, or a hostile one) is dead-lettered like any bad record,
rather than silently ignored by a handler that only looks for its own types.

A dead letter keeps the original bytes so the record can be inspected or replayed, but never more
than :data:`MAX_KEPT_BYTES`: base64 grows a record by a third, and a letter larger than the broker's
message limit would fail the transaction that carries it, again on every restart.
"""

from __future__ import annotations

import base64

from confluent_kafka import Message

from schemas.base import Event
from schemas.codec import headers_dict
from schemas.dlq import DeadLettered
from schemas.errors import EventDecodeError
from schemas.topics import by_name

#: most bytes of an original record a dead letter keeps (its base64 stays well under 1 MiB)
MAX_KEPT_BYTES = 256 * 1024


def check_topic(topic: str, event: Event) -> None:
    """Raise EventDecodeError when ``topic`` is a catalog topic that carries another event class."""
    try:
        expected = by_name(topic).event
    except KeyError:  # not a catalog topic (e.g. a test's own): any event goes
        return
    if type(event).__name__ != expected:
        raise EventDecodeError(
            f"{topic} carries {expected} events, not {type(event).__name__} ({event.ce_type()})",
            location="header ce_type",
        )


def kept(raw: bytes | None) -> str:
    """``raw`` as the base64 a dead letter stores, cut to its first MAX_KEPT_BYTES."""
    return base64.b64encode((raw or b"")[:MAX_KEPT_BYTES]).decode()


def kept_note(raw: bytes | None) -> str:
    """What an error message adds when the letter keeps only part of the original."""
    size = len(raw or b"")
    return f" [original of {size} bytes: first {MAX_KEPT_BYTES} kept]" if size > MAX_KEPT_BYTES else ""


def letter_for(msg: Message, exc: Exception, *, stage: str) -> DeadLettered:
    """The dead letter of a raw record ``stage`` could not use (for consumers outside the
    transactional runtime, which builds its own)."""
    raw = msg.headers()
    try:
        headers = headers_dict(list(raw.items()) if isinstance(raw, dict) else raw)
    except EventDecodeError:
        headers = {}
    key, value = msg.key(), msg.value()
    partition, offset = msg.partition(), msg.offset()
    return DeadLettered(
        stage=stage,
        error_type=type(exc).__name__,
        error=str(exc)[:4000] + kept_note(value),
        original_topic=msg.topic() or "",
        original_partition=partition if partition is not None else -1,
        original_offset=offset if offset is not None else -1,
        original_event_id=headers.get("ce_id"),
        original_key_b64=base64.b64encode(key).decode() if key else None,
        original_value_b64=kept(value),
        original_headers=headers,
    )
