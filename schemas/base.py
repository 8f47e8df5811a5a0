"""Base of every event: a frozen, versioned pydantic model with a deterministic identity."""

from __future__ import annotations

import functools
import hashlib
import uuid
import weakref
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar, cast

from pydantic import BaseModel, ConfigDict

#: namespace of every deterministic event id (UUIDv5); never change it, ids already on the log depend on it
EVENT_ID_NAMESPACE = uuid.UUID("6f1c2f8e-3a4b-5c6d-9e0f-7a8b9c0d1e2f")
_NAMESPACE_BYTES = EVENT_ID_NAMESPACE.bytes
#: a hex digit with its two top bits set to the RFC 4122 variant (10)
_VARIANT_DIGIT = {d: "89ab"[int(d, 16) & 0x3] for d in "0123456789abcdef"}


def make_event_id(ce_type: str, *causation: str, attempt: int = 0) -> str:
    """A UUIDv5 of the event type, what caused it and the attempt number.

    The same cause always yields the same id, so a retried or re-delivered write is recognisable and
    every consumer can be idempotent by event id.
    """
    name = "|".join((ce_type, *causation, str(attempt)))
    # RFC 4122 version 5, as uuid.uuid5 computes it, without building two UUID objects per event (a
    # third of an event's encoding cost): SHA-1 of namespace + name in hex, its version digit set to 5
    # and its variant digit's two top bits to 10 (by table: cheaper than editing the digest's bytes)
    h = hashlib.sha1(_NAMESPACE_BYTES + name.encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-5{h[13:16]}-{_VARIANT_DIGIT[h[16]]}{h[17:20]}-{h[20:32]}"


#: the event ids derived so far, per live event object (by id(), with a weak reference that tells the
#: object from a later one at the same address and drops the entry when the object goes):
#: {(derivation, attempt): event id}
_IDS: dict[int, tuple[weakref.ref[Any], dict[tuple[Any, int], Any]]] = {}

F = TypeVar("F", bound=Callable[..., str])


def _forget(key: int, ref: weakref.ref[Any]) -> None:
    entry = _IDS.get(key)
    if entry is not None and entry[0] is ref:
        _IDS.pop(key, None)


def remembered(derive: F) -> F:
    """An ``event_id`` method derived once per event object and attempt, then remembered while the
    object lives. An event is frozen, so its id never changes; deriving it again costs the written
    version (a model dump and validation per version step) and a content hash of the whole body, and a
    task's or a reference's id is asked for several times per sample (keys of the reward's and the
    filter's caches and state, the probe plan's seed)."""

    @functools.wraps(derive)
    def event_id(self: Any, attempt: int = 0) -> str:
        ids = _derived(self)
        found: str | None = ids.get((derive, attempt))
        if found is None:
            found = ids[(derive, attempt)] = derive(self, attempt)
        return found

    return cast(F, event_id)


def _derived(self: Any) -> dict[tuple[Any, int], Any]:
    """What has been derived of the live event object ``self`` (see :data:`_IDS`)."""
    key = id(self)
    entry = _IDS.get(key)
    if entry is None or entry[0]() is not self:
        entry = (weakref.ref(self, functools.partial(_forget, key)), {})
        _IDS[key] = entry
    return entry[1]


G = TypeVar("G", bound=Callable[[Any], Any])


def derived_once(derive: G) -> G:
    """A method of no argument derived once per event object, then remembered while the object lives
    (as :func:`remembered`): an event is frozen, so what it derives from itself alone never changes."""

    @functools.wraps(derive)
    def once(self: Any) -> Any:
        derived = _derived(self)
        marker = (derive, -1)
        if marker not in derived:
            derived[marker] = derive(self)
        return derived[marker]

    return cast(G, once)


def content_hash(payload: Any) -> str:
    """sha256 hex of a canonical JSON rendering (sorted keys) of ``payload``."""
    import json

    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class FrozenModel(BaseModel):
    """A value object inside an event."""

    # JSON has no NaN or infinity: a body that smuggles one in (Python's json accepts them) is invalid,
    # and a component that computes one fails where it happens instead of poisoning a gradient later
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Event(FrozenModel):
    """One immutable fact on the log.

    Subclasses set ``event_type`` (``rlstream.<aggregate>.<verb>``), ``version`` and ``schema_version``
    (a ``Literal`` equal to ``version``). A new version is a new class; the old one stays, and an
    upcaster turns its bodies into the next version when read.
    """

    event_type: ClassVar[str]
    version: ClassVar[int]
    #: the aggregate field whose value is the Kafka key and the CloudEvents subject
    key_field: ClassVar[str]

    schema_version: int

    @classmethod
    def ce_type(cls) -> str:
        return f"{cls.event_type}.v{cls.version}"

    @property
    def key(self) -> str:
        return str(getattr(self, self.key_field))

    def identity(self) -> tuple[str, ...]:
        """What makes this fact unique; feeds the deterministic event id. Default: the whole body."""
        return (content_hash(self.model_dump(mode="json")),)

    def previous_version(self) -> Event | None:
        """This fact as the previous version of its event, when that version can say all of it (every
        field added since holds the value that version implied); None otherwise.

        An event is written in the oldest version that carries it (:meth:`as_written`): a new field
        that most facts leave at its old meaning (a sample of a one-turn episode) leaves those facts'
        bytes and ids exactly as they were, and only the facts that use it are written in the new
        version. Reading upcasts every version to the newest class as always."""
        return None

    def as_written(self) -> Event:
        """The event in the version it is written (and identified) in: see :meth:`previous_version`."""
        event: Event = self
        while (older := event.previous_version()) is not None:
            event = older
        return event

    @remembered
    def event_id(self, attempt: int = 0) -> str:
        written = self.as_written()
        return make_event_id(written.ce_type(), *written.identity(), attempt=attempt)

    def _as_version(self, older: type[E], implied: Mapping[str, Any], exclude: Any = None) -> E | None:
        """This event as ``older`` when each field in ``implied`` holds the value given there (what the
        older version meant without it); the fields ``exclude`` names (nested, pydantic's form) are
        left out besides."""
        for name, value in implied.items():
            if getattr(self, name) != value:
                return None
        if exclude is None and _same_fields(type(self), older, frozenset(implied)):
            # each field is handed over as the value it is: a field the older version declares alike
            # (the same annotation, inherited with its validators) takes it as it is, where a dump and a
            # validation rebuilt every nested value object (a probe run's hundreds of cases, twice per
            # version step, ~1 ms per probe run written)
            data: dict[str, Any] = {k: v for k, v in self.__dict__.items() if k not in implied}
        else:
            left_out: Any = exclude if exclude is not None else set(implied)
            data = self.model_dump(exclude=left_out)
        data["schema_version"] = older.version
        return older.model_validate(data)


@functools.cache
def _same_fields(newer: type[BaseModel], older: type[BaseModel], implied: Any) -> bool:
    """Whether every field ``newer`` has beyond ``implied`` is declared by ``older`` with the same
    annotation and none of them holds an event (an event nested in an event is written in its own
    version, which only a dump and validation of it give)."""
    kept = {k: f for k, f in newer.model_fields.items() if k not in implied and k != "schema_version"}
    theirs = older.model_fields
    return all(
        k in theirs and theirs[k].annotation == f.annotation and not _holds_event(f.annotation)
        for k, f in kept.items()
    )


def _holds_event(annotation: Any) -> bool:
    if isinstance(annotation, type) and issubclass(annotation, Event):
        return True
    return any(_holds_event(a) for a in getattr(annotation, "__args__", ()))


E = TypeVar("E", bound=Event)
