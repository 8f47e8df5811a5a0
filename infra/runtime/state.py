"""A processor's state: typed records per input partition, with a lifetime.

What a processor keeps between records is declared as kinds of records (:class:`Kind`): a name and a
value type (``Kind("exec", SandboxExecuted)``); a handler reads and writes them per input partition
(``state.get(p, EXEC, sample_id)``), the runtime persists them to a changelog partitioned like the
input and restores them after a restart or a rebalance. The changelog key of a record is
``<kind>:<key>`` (the bare kind name for a kind with one value), its value the record's JSON.

Lifetime. A :class:`Marker` says that a unit of work is complete (a sample scored, a group emitted) so
that a re-delivered record of it is recognised; it is kept for ``grace_s`` of *stream time* (the newest
record timestamp seen on its partition) and then dropped, tombstone included, so the state and the time
to restore it stay bounded by the work in flight plus that recent past, however long a run lasts. Stream
time rather than the clock: a worker that was down for an hour must still recognise the records it
handled just before it went down, which come back first.

A record a processor can compute again (a task's reference run) is a :class:`Cached` kind: read with
:meth:`State.use`, which stamps it with the stream time of its use, and written with :meth:`State.keep`,
which keeps at most a given number of its kind per partition (the least recently used go first). It is
dropped ``grace_s`` of stream time after its last use, like a marker; one needed again after that is
computed again. So state holds what the work in flight uses, not one record per task the run has seen.

Writes are staged: those of the handler call in progress, then those of the batch in hand once the call
returned; a failed call's writes are dropped (:meth:`State.rollback`), and a runtime takes the batch's
writes (:meth:`State.take_writes`) only to persist them together with the batch's outputs. Committed
records live in a :class:`Store` the runtime chooses (a dict, a Faust table).

Pure: no client library, no clock of its own.
"""

from __future__ import annotations

import heapq
import itertools
import logging
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from pydantic import TypeAdapter

from schemas.base import Event
from schemas.registry import upcast

log = logging.getLogger(__name__)

V = TypeVar("V")
E = TypeVar("E", bound=Event)
#: a record's value as stored and written to the changelog (what ``json.dumps`` takes)
JSON = Any

#: how long a marker outlives the completion of its unit, in seconds of stream time: longer than any
#: redelivery window (a restart re-reads at most what was not committed) and than a group's deadline
DEFAULT_GRACE_S = 3600.0

_NEVER = float("-inf")

#: a cached record's time of use is written again once stream time moved past it by this share of the grace
RESTAMP_SHARE = 0.01

#: generations are unique across every State of the process: an agent that outlives its state (a
#: restarted processor keeping its instance) can never mistake a new state for the one it derived from
_generations = itertools.count(1)


def event_from_state(cls: type[E], raw: JSON) -> E:
    """An event kept in state as JSON, lifted from the version it was written in to the newest: state
    written before an event got a new version still reads back after an upgrade."""
    version = raw.get("schema_version", cls.version) if isinstance(raw, dict) else cls.version
    latest, body = upcast(f"{cls.event_type}.v{version}", dict(raw) if isinstance(raw, dict) else raw)
    event = latest.model_validate(body)
    assert isinstance(event, cls)
    return event


#: encoded records whose decoded event a kind keeps (per kind): a group's samples read the same few
DECODED_KEPT = 32


class Remembered(Generic[V]):
    """``decode`` of a frozen value (an event), remembered for the last ``kept`` encoded objects read or
    written: the same stored object (a dict or list, by identity; held here so its identity stays its
    own) gives the same value without validating it again. A record read once per sample (the filter's
    reference runs of a group's plan, tens of KB each) was validated anew each time, and each fresh
    object derived its event id anew too. An object this kind encoded reads back as the value it was
    encoded from (:meth:`encoding`), which decoding it gives, equal (an event's JSON reads back as the
    event): the filter's reference runs, kept with a group's first verdict, were decoded again for the
    second sample, which then read the runs (every answer parsed) and derived their id anew. Another
    stored object (a restore) is decoded anew."""

    def __init__(self, decode: Callable[[JSON], V], kept: int = DECODED_KEPT) -> None:
        self._decode = decode
        self._kept = kept
        self._seen: dict[int, tuple[JSON, V]] = {}
        #: value (by identity, held) -> the object :meth:`encoding` made of it, for ``once``
        self._made: dict[int, tuple[V, JSON]] = {}

    def _note(self, raw: JSON, value: V) -> None:
        if len(self._seen) >= self._kept:
            self._seen.clear()  # dict operations alone: safe for kinds read from several threads
        self._seen[id(raw)] = (raw, value)

    def __call__(self, raw: JSON) -> V:
        if not isinstance(raw, (dict, list)):
            return self._decode(raw)
        hit = self._seen.get(id(raw))
        if hit is not None and hit[0] is raw:
            return hit[1]
        value = self._decode(raw)
        self._note(raw, value)
        return value

    def encoding(self, encode: Callable[[V], JSON], *, once: bool = False) -> Callable[[V], JSON]:
        """``encode``, each object it gives remembered as the value it encodes. With ``once``, a value
        (frozen) encoded again gives the object it gave the first time, while the last ``kept`` are
        remembered: whoever holds it must not change it (the state's records are never changed in
        place, only replaced)."""

        def encoded(value: V) -> JSON:
            if once:
                made = self._made.get(id(value))
                if made is not None and made[0] is value:
                    return made[1]
            raw = encode(value)
            if isinstance(raw, (dict, list)):
                self._note(raw, value)
                if once:
                    if len(self._made) >= self._kept:
                        self._made.clear()
                    self._made[id(value)] = (value, raw)
            return raw

        return encoded


class Kind(Generic[V]):
    """One kind of record a processor keeps: its name (the changelog key prefix) and how its values
    are encoded (a type pydantic can validate, or explicit ``encode``/``decode`` functions). An event's
    value written in an older version of the event is upcast when read."""

    def __init__(
        self,
        name: str,
        value_type: type[V] | None = None,
        *,
        encode: Callable[[V], JSON] | None = None,
        decode: Callable[[JSON], V] | None = None,
    ) -> None:
        if not name or ":" in name:
            raise ValueError(f"a state kind needs a name without ':' (got {name!r})")
        if (encode is None or decode is None) and value_type is None:
            raise ValueError(f"state kind {name!r}: give a value type or both encode and decode")
        self.name = name
        adapter: TypeAdapter[V] | None = TypeAdapter(value_type) if value_type is not None else None
        self._encode: Callable[[V], JSON] = encode or (lambda v: adapter.dump_python(v, mode="json"))  # type: ignore[union-attr]
        if decode is None and isinstance(value_type, type) and issubclass(value_type, Event):
            event_cls: Any = value_type
            kept: Remembered[V] = Remembered(lambda raw: event_from_state(event_cls, raw))
            decode = kept
            if encode is None:
                self._encode = kept.encoding(self._encode)
        self._decode: Callable[[JSON], V] = decode or adapter.validate_python  # type: ignore[union-attr]

    def encode(self, value: V) -> JSON:
        return self._encode(value)

    def decode(self, raw: JSON) -> V:
        return self._decode(raw)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def _marker_time(raw: JSON) -> float:
    # a marker written before markers had a lifetime stores True: it is past its grace already
    if raw is True:
        return _NEVER
    return float(raw)


class Marker(Kind[float]):
    """A record that only says "done": its value is the stream time it was set at, and it is dropped
    ``grace_s`` of stream time later."""

    def __init__(self, name: str) -> None:
        super().__init__(name, encode=float, decode=_marker_time)


class Cached(Kind[V]):
    """A record that can be computed again: stored with the stream time of its last use
    (``{"used_s": t, "value": v}``), dropped ``grace_s`` of stream time after it, and bounded per
    partition by :meth:`State.keep`. ``legacy`` reads a record written before its kind was cached
    (default: its value as it is, last used at no time, so it is the first to go)."""

    def __init__(
        self,
        name: str,
        value_type: type[V],
        *,
        legacy: Callable[[JSON], tuple[float, JSON]] | None = None,
    ) -> None:
        super().__init__(name, value_type)
        self._legacy = legacy or (lambda raw: (_NEVER, raw))

    def unwrap(self, raw: JSON) -> tuple[float, JSON]:
        """(when it was last used, the encoded value) of a stored record."""
        if isinstance(raw, dict) and raw.keys() == {"used_s", "value"}:
            return float(raw["used_s"]), raw["value"]
        return self._legacy(raw)

    def decode(self, raw: JSON) -> V:
        return super().decode(self.unwrap(raw)[1])


def _stamp(kind: Kind[Any], raw: JSON) -> float:
    """The stream time a marker was set at, or a cached record last used at."""
    if isinstance(kind, Cached):
        return kind.unwrap(raw)[0]
    return _marker_time(raw)


def raw_key(kind: str, key: str) -> str:
    return kind if key == "" else f"{kind}:{key}"


def split_key(raw: str) -> tuple[str, str]:
    kind, _, key = raw.partition(":")
    return kind, key


class Store(Protocol):
    """Where a state's committed records live (encoded), by partition and kind."""

    def get(self, p: int, kind: str, key: str) -> JSON | None: ...

    def keys(self, p: int, kind: str) -> Iterable[str]: ...

    def set(self, p: int, kind: str, key: str, value: JSON | None) -> None:
        """Write a record; ``None`` deletes it."""

    def drop(self, p: int) -> None:
        """Forget a partition (its records are in the changelog; a new owner restores them)."""


class DictStore:
    """A :class:`Store` in a plain dict (the in-memory and the transactional runtimes)."""

    def __init__(self) -> None:
        self._data: dict[int, dict[str, dict[str, JSON]]] = {}

    def get(self, p: int, kind: str, key: str) -> JSON | None:
        return self._data.get(p, {}).get(kind, {}).get(key)

    def keys(self, p: int, kind: str) -> Iterable[str]:
        return self._data.get(p, {}).get(kind, {}).keys()

    def set(self, p: int, kind: str, key: str, value: JSON | None) -> None:
        if value is None:
            records = self._data.get(p, {}).get(kind)
            if records is not None:
                records.pop(key, None)
        else:
            self._data.setdefault(p, {}).setdefault(kind, {})[key] = value

    def drop(self, p: int) -> None:
        self._data.pop(p, None)

    def size(self, p: int) -> int:
        return sum(len(records) for records in self._data.get(p, {}).values())


#: a staged write: (partition, kind, key) -> encoded value, or None for a delete
Writes = dict[tuple[int, str, str], JSON | None]


class State:
    """The state of one processor instance: the partitions it owns and their typed records."""

    def __init__(
        self,
        kinds: Iterable[Kind[Any]] = (),
        *,
        store: Store | None = None,
        grace_s: float = DEFAULT_GRACE_S,
    ) -> None:
        self.kinds = {k.name: k for k in kinds}
        self.store: Store = store if store is not None else DictStore()
        self.grace_s = grace_s
        self._owned: set[int] = set()
        self._pending: Writes = {}
        self._scratch: Writes = {}
        self._clock: dict[int, float] = {}
        #: per partition, (set at, kind, key) of every marker, earliest first (entries whose marker was
        #: deleted or set again since are skipped when they come up)
        self._expiry: dict[int, list[tuple[float, str, str]]] = {}
        #: changes whenever partitions are restored or dropped, or writes are rolled back: agents that
        #: derive in-memory structures from the state (e.g. a queue) rebuild them when it changes
        self.generation = next(_generations)

    # -- what handlers use ------------------------------------------------------------------------
    def owned_partitions(self) -> list[int]:
        return sorted(self._owned)

    def get(self, p: int, kind: Kind[V], key: str = "") -> V | None:
        raw = self._read(p, kind.name, key)
        return None if raw is None else kind.decode(raw)

    def put(self, p: int, kind: Kind[V], key: str, value: V) -> None:
        self._scratch[(p, kind.name, key)] = kind.encode(value)

    def delete(self, p: int, kind: Kind[Any], key: str = "") -> None:
        self._scratch[(p, kind.name, key)] = None

    def keys(self, p: int, kind: Kind[Any]) -> list[str]:
        """The keys of ``kind``'s records in partition ``p``, sorted."""
        found = set(self.store.keys(p, kind.name))
        for staged in (self._pending, self._scratch):
            for (sp, sk, key), value in staged.items():
                if sp == p and sk == kind.name:
                    if value is None:
                        found.discard(key)
                    else:
                        found.add(key)
        return sorted(found)

    def items(self, p: int, kind: Kind[V]) -> Iterator[tuple[str, V]]:
        for key in self.keys(p, kind):
            value = self.get(p, kind, key)
            if value is not None:
                yield key, value

    def count(self, p: int, kind: Kind[Any]) -> int:
        return len(self.keys(p, kind))

    def use(self, p: int, kind: Cached[V], key: str) -> V | None:
        """A cached record, stamped as used now (stream time): it is dropped last and stays for
        ``grace_s`` from now. The stamp (the whole record, on the changelog) is written again only once
        stream time moved past it by a hundredth of the grace: a record used by every sample of a group
        is not written once per sample."""
        raw = self._read(p, kind.name, key)
        if raw is None:
            return None
        used, value = kind.unwrap(raw)
        now = self.now(p)
        if now - used >= self.grace_s * RESTAMP_SHARE:
            self._scratch[(p, kind.name, key)] = {"used_s": now, "value": value}
        return kind.decode(raw)

    def keep(self, p: int, kind: Cached[V], key: str, value: V, *, limit: int) -> None:
        """Write a cached record as used now; beyond ``limit`` records of its kind in the partition, the
        least recently used are deleted."""
        self._scratch[(p, kind.name, key)] = {"used_s": self.now(p), "value": kind.encode(value)}
        keys = self.keys(p, kind)
        if len(keys) <= limit:
            return
        # the record just written first, then the most recently used
        by_use = sorted(
            keys, key=lambda k: (k == key, _stamp(kind, self._read(p, kind.name, k))), reverse=True
        )
        for old in by_use[limit:]:
            self._scratch[(p, kind.name, old)] = None

    def mark(self, p: int, marker: Marker, key: str) -> None:
        """Record that ``key``'s unit is complete, as of the partition's stream time."""
        self.put(p, marker, key, self.now(p))

    def marked(self, p: int, marker: Marker, key: str) -> bool:
        return self._read(p, marker.name, key) is not None

    def now(self, p: int) -> float:
        """The partition's stream time: the newest record timestamp seen on it (seconds)."""
        return self._clock.get(p, 0.0)

    def _read(self, p: int, kind: str, key: str) -> JSON | None:
        k = (p, kind, key)
        if k in self._scratch:
            return self._scratch[k]
        if k in self._pending:
            return self._pending[k]
        return self.store.get(p, kind, key)

    # -- what runtimes use -----------------------------------------------------------------------
    def own(self, p: int) -> None:
        self._owned.add(p)

    def disown(self, p: int) -> None:
        """The partition moved away (or its state is to be restored again): forget it."""
        self.generation = next(_generations)
        self._owned.discard(p)
        self.store.drop(p)
        self._expiry.pop(p, None)
        self._clock.pop(p, None)
        for staged in (self._pending, self._scratch):
            for k in [k for k in staged if k[0] == p]:
                del staged[k]

    def load(self, p: int, raw: str, value: JSON | None) -> None:
        """Apply one changelog record while restoring."""
        kind, key = split_key(raw)
        self.store.set(p, kind, key, value)

    def restored(self, partitions: Iterable[int]) -> None:
        """The partitions' records are in the store (restored or carried over): own them and index
        their markers."""
        self.generation = next(_generations)
        for p in partitions:
            self._owned.add(p)
            heap: list[tuple[float, str, str]] = []
            for name, kind in self.kinds.items():
                if isinstance(kind, Marker | Cached):
                    for key in self.store.keys(p, name):
                        raw = self.store.get(p, name, key)
                        if raw is not None:
                            heap.append((_stamp(kind, raw), name, key))
            heapq.heapify(heap)
            self._expiry[p] = heap

    def advance(self, p: int, timestamp_s: float) -> None:
        """A record of partition ``p`` with this timestamp is being handled: stream time moves on."""
        if timestamp_s > self._clock.get(p, float("-inf")):
            self._clock[p] = timestamp_s

    def savepoint(self) -> None:
        """The handler call in progress returned: its writes join the batch's."""
        self._pending.update(self._scratch)
        self._scratch = {}

    def rollback(self) -> None:
        """The handler call in progress failed: its writes are dropped. A new generation: what an
        agent derived in memory from those writes (a queued task) is gone with them, and the records
        are handled again (one at a time, or in a later batch)."""
        self._scratch = {}
        self.generation = next(_generations)

    def discard(self) -> None:
        """The whole batch is given up (deferred, or its outputs could not be written); a new
        generation, as for :meth:`rollback`."""
        self._pending = {}
        self._scratch = {}
        self.generation = next(_generations)

    @property
    def dirty(self) -> bool:
        return bool(self._pending or self._scratch)

    def expire(self) -> int:
        """Stage the deletion of every marker, and every cached record not used, whose grace has passed in
        stream time; returns how many."""
        expired = 0
        for p, heap in self._expiry.items():
            horizon = self._clock.get(p)
            if horizon is None:
                continue
            horizon -= self.grace_s
            while heap and heap[0][0] <= horizon:
                at, kind, key = heapq.heappop(heap)
                raw = self._read(p, kind, key)
                if raw is not None and _stamp(self.kinds[kind], raw) == at:
                    self._pending[(p, kind, key)] = None
                    expired += 1
        return expired

    def take_writes(self) -> Writes:
        """The batch's writes, applied to the store now; the runtime persists them."""
        self.savepoint()
        writes, self._pending = self._pending, {}
        for (p, kind, key), value in writes.items():
            self.store.set(p, kind, key, value)
            known = self.kinds.get(kind)
            if value is not None and isinstance(known, Marker | Cached):
                heapq.heappush(self._expiry.setdefault(p, []), (_stamp(known, value), kind, key))
            elif known is None and kind not in _warned:
                _warned.add(kind)
                log.warning("state: records of undeclared kind %r are never expired", kind)
        return writes


_warned: set[str] = set()
