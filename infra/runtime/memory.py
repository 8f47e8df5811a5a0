"""The in-memory runtime: any set of processors over in-process topics, deterministic, no broker.

:class:`MemoryLog` holds topics as lists of encoded records per partition (keys partitioned as
librdkafka partitions them, CRC-32 of the key); :class:`MemoryRuntime` hosts processors over it with the
same core as the Kafka runtimes (:mod:`infra.runtime.host`): records are decoded, poison records
dead-lettered, handlers isolated per record when a batch fails, envelopes and dead letters built the
same way. Each step of a processor is atomic, as a Kafka transaction is: its outputs, its state
changes (appended to its changelog) and its input positions are applied together, or — when a crash is
simulated (:meth:`MemoryRuntime.step` with ``crash=True``) — none of them. :meth:`MemoryRuntime.restart`
replaces a processor instance by a fresh one whose state is restored from its changelog alone, as a
restarted worker's is.

Time is a clock the caller owns (``MemoryRuntime.clock``): record timestamps, ticks and deferrals read
it, so a test decides when a deadline passes. Records are taken in a fixed order (input topics in order,
partitions ascending), so the same inputs always give the same outputs.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from infra.runtime.host import Host, Raw, Write
from infra.runtime.port import Defer, Emit, Incoming, Processor, ProcessorStats
from infra.runtime.state import DEFAULT_GRACE_S, JSON, State, raw_key
from schemas.base import Event
from schemas.codec import Record, decode
from schemas.errors import EventDecodeError, UsageError


@dataclass(frozen=True)
class Stored:
    """One record of a topic partition."""

    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp_ms: int


class MemoryLog:
    """Topics in memory. Unknown topics are created on first use with ``partitions`` partitions."""

    def __init__(self, partitions: int = 3, widths: dict[str, int] | None = None) -> None:
        self.partitions = partitions
        self._widths = dict(widths or {})
        self._topics: dict[str, list[list[Stored]]] = {}

    def topic(self, name: str) -> list[list[Stored]]:
        if name not in self._topics:
            self._topics[name] = [[] for _ in range(self._widths.get(name, self.partitions))]
        return self._topics[name]

    def partition_for(self, topic: str, key: bytes | None) -> int:
        parts = len(self.topic(topic))
        return zlib.crc32(key) % parts if key is not None else 0

    def append(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        headers: Iterable[tuple[str, bytes]] = (),
        *,
        timestamp_ms: int = 0,
        partition: int | None = None,
    ) -> tuple[int, int]:
        """Append a record; returns (partition, offset)."""
        parts = self.topic(topic)
        p = self.partition_for(topic, key) if partition is None else partition
        parts[p].append(Stored(key, value, tuple(headers), timestamp_ms))
        return p, len(parts[p]) - 1

    def publish(self, topic: str, record: Record, *, timestamp_ms: int = 0) -> tuple[int, int]:
        return self.append(topic, record.key, record.value, record.headers, timestamp_ms=timestamp_ms)

    def end(self, topic: str, partition: int) -> int:
        return len(self.topic(topic)[partition])

    def read(self, topic: str, partition: int, offset: int, limit: int) -> list[Raw]:
        records = self.topic(topic)[partition][offset : offset + limit]
        return [
            Raw(topic, partition, offset + i, r.timestamp_ms, r.key, r.value, r.headers)
            for i, r in enumerate(records)
        ]

    def sizes(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        return tuple((t, tuple(len(p) for p in parts)) for t, parts in sorted(self._topics.items()))

    def events(self, topic: str) -> list[tuple[str, Event]]:
        """Every decodable event of ``topic`` as (event id, event), partition by partition."""
        out: list[tuple[str, Event]] = []
        for records in self.topic(topic):
            for r in records:
                try:
                    decoded = decode(r.value, r.headers)
                except EventDecodeError:
                    continue
                out.append((decoded.envelope.id, decoded.event))
        return out


@dataclass
class _Slot:
    """One hosted processor: its instance, state, changelog, positions and deferral."""

    processor: Processor
    host: Host
    state: State
    changelog: list[tuple[int, str, JSON | None]] = field(default_factory=list)
    positions: dict[tuple[str, int], int] = field(default_factory=dict)
    deferred_until: float = float("-inf")


class MemoryRuntime:
    """Hosts processors over a :class:`MemoryLog`, one atomic step at a time."""

    def __init__(
        self,
        log: MemoryLog,
        processors: Sequence[Processor] = (),
        *,
        run_id: str | None = None,
        start: float = 1_000_000.0,
        grace_s: float = DEFAULT_GRACE_S,
    ) -> None:
        self.log = log
        self.run_id = run_id
        self.clock = start
        self.grace_s = grace_s
        self._slots: dict[str, _Slot] = {}
        for processor in processors:
            self.add(processor)

    # -- hosting ----------------------------------------------------------------------------------
    def add(self, processor: Processor) -> None:
        if processor.name in self._slots:
            raise UsageError(f"a processor named {processor.name!r} is hosted already")
        self._slots[processor.name] = self._slot(processor)
        self._restore(self._slots[processor.name])

    def _slot(self, processor: Processor, old: _Slot | None = None) -> _Slot:
        host = Host(processor, run_id=self.run_id, group_id=f"rlstream.{processor.name}", client_id="memory")
        slot = _Slot(processor, host, State(processor.kinds, grace_s=self.grace_s))
        if old is not None:
            slot.changelog, slot.positions = old.changelog, old.positions
        return slot

    def _restore(self, slot: _Slot) -> None:
        widest = max((len(self.log.topic(t)) for t in slot.processor.input_topics), default=1)
        for p, raw, value in slot.changelog:
            slot.state.load(p, raw, value)
        slot.state.restored(range(widest))

    def restart(self, name: str, processor: Processor | None = None) -> None:
        """A fresh instance of ``name`` (``processor``, else the same object) whose state is restored
        from the changelog; it resumes from the committed positions."""
        old = self._slots[name]
        slot = self._slot(processor or old.processor, old)
        self._restore(slot)
        self._slots[name] = slot

    def state(self, name: str) -> State:
        return self._slots[name].state

    def stats(self, name: str) -> ProcessorStats:
        return self._slots[name].host.stats

    def changelog_size(self, name: str) -> int:
        """Live records in ``name``'s changelog once compacted (what a restore reads)."""
        latest: dict[tuple[int, str], JSON | None] = {}
        for p, raw, value in self._slots[name].changelog:
            latest[(p, raw)] = value
        return sum(1 for v in latest.values() if v is not None)

    def lag(self, name: str) -> int:
        slot = self._slots[name]
        return sum(
            self.log.end(t, p) - slot.positions.get((t, p), 0)
            for t in slot.processor.input_topics
            for p in range(len(self.log.topic(t)))
        )

    # -- running ----------------------------------------------------------------------------------
    def step(self, name: str, *, crash: bool = False) -> int:
        """One batch of ``name`` and its tick; returns the records consumed. With ``crash`` the batch is
        handled and then lost as if the worker died before committing: nothing it did is kept."""
        slot = self._slots[name]
        if self.clock < slot.deferred_until:
            return 0
        raws = self._poll(slot)
        host, state = slot.host, slot.state
        try:
            batch, poison = host.decode(raws)
            emits: list[tuple[Emit, Incoming | None]] = []
            if batch:
                try:
                    emits.extend(host.handle(batch, state))
                except Defer as deferred:
                    slot.deferred_until = self.clock + deferred.delay_s
                    return 0
            emits.extend(host.tick(state, self.clock))
            if crash:
                state.discard()
                self.restart(name)
                return 0
            if not raws and not emits and not state.dirty:
                return 0
            self._commit(slot, host.writes(emits, poison), raws)
        finally:
            host.end_batch()
        host.stats.consumed += len(raws)
        return len(raws)

    def _poll(self, slot: _Slot) -> list[Raw]:
        room = slot.processor.batch_size
        out: list[Raw] = []
        for topic in slot.processor.input_topics:
            for p in range(len(self.log.topic(topic))):
                if room <= 0:
                    return out
                got = self.log.read(topic, p, slot.positions.get((topic, p), 0), room)
                out.extend(got)
                room -= len(got)
        return out

    def _commit(self, slot: _Slot, writes: Sequence[Write], raws: Sequence[Raw]) -> None:
        ts = int(self.clock * 1000)
        for write in writes:
            self.log.publish(write.topic, write.record, timestamp_ms=ts)
        for (p, kind, key), value in slot.state.take_writes().items():
            # through JSON, as on the broker: what a restore reads back is exactly what was written
            slot.changelog.append(
                (p, raw_key(kind, key), None if value is None else json.loads(json.dumps(value)))
            )
        for raw in raws:
            slot.positions[(raw.topic, raw.partition)] = raw.offset + 1
        slot.host.stats.transactions += 1
        slot.host.stats.produced += len(writes)
        slot.host.committed(raws, writes)

    def run(
        self, *, max_rounds: int = 10_000, advance_s: float = 0.0, until: Callable[[], bool] | None = None
    ) -> int:
        """Step every processor in turn until a whole round changes nothing (or ``until()``); each
        round moves the clock on by ``advance_s`` (and a round where everything is deferred, to the
        end of the earliest deferral). Returns the rounds run."""
        for rounds in range(1, max_rounds + 1):
            before = self._fingerprint()
            for name in list(self._slots):
                self.step(name)
            if until is not None and until():
                return rounds
            self.clock += advance_s
            if self._fingerprint() == before:
                waiting = [s.deferred_until for s in self._slots.values() if s.deferred_until > self.clock]
                if not waiting:
                    return rounds
                self.clock = min(waiting)
        raise RuntimeError(f"the processors did not settle within {max_rounds} rounds")

    def _fingerprint(self) -> tuple[Any, ...]:
        return (
            tuple(
                (name, tuple(sorted(s.positions.items())), len(s.changelog))
                for name, s in self._slots.items()
            )
            + self.log.sizes()
        )
