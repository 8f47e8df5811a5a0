"""The Faust runtime: the same processors as agents of a ``faust.App`` (faust-streaming), at-least-once.

Each hosted processor becomes:

* an agent over its input topics (raw bytes: the CloudEvents envelope travels in the headers) that takes
  batches (``stream.take_events``) and hands them to the processor's pure core, in a thread of its own
  so that a blocking handler (a sandbox run, a generation) never stalls the event loop;
* a Faust ``Table`` (in memory, changelog-backed, partitioned like the input) holding its state;
* a Faust timer for its ``tick``.

What is committed when. A batch is done in this order: the handler runs (its state writes are staged,
never applied, until it returns); the emitted events are sent and acknowledged by the broker; the state
writes are applied to the table and sent to its changelog, and acknowledged; then the batch's records
are recorded as handled (:class:`Handled`). An input partition's committed offset moves only to the end
of the unbroken run of handled records (the lowest over the processors that read the topic), at Faust's commit
interval (``RLSTREAM_FAUST__COMMIT_INTERVAL_S``) and in the commit Faust makes when partitions are
revoked, after the batches in hand are done. Faust's own rule (commit what its streams acknowledged) is
not used for the processors' inputs: a stream acknowledges records it skips during a rebalance without
handing them to the agent, and its fetcher can count records as read that never reached a stream (a
rebalance suspending the flow mid-delivery): Faust committed past both (``tests/contract/stress.py``
measured the loss). The ledger commits the end of the *unbroken* run of handled offsets from where the
assignment started, so such a hole holds the partition's commit (logged with its offsets) and the next
owner handles the records again. Transaction markers are holes too: the Faust runtime's inputs are
written without transactions (by Faust agents and the idempotent producer); a topic that the
transactional runtime writes should not feed a Faust processor, whose commits it would hold back. The
stream queues keep the records fetched while an assignment starts (:class:`_FlowControl`).
A worker killed anywhere in between is restarted on the last committed offsets and handles those records
again: every record whose offset is committed had its outputs and its state acknowledged first, and what
a worker writes again carries the same deterministic event ids, which every consumer downstream is
idempotent by (the experience processor keeps one group per group id, the learner trains a group once,
the projections upsert by key). That is **at-least-once delivery with effectively-once results**;
duplicates on the log are possible and are counted by the tests and the bench. Faust's own
``exactly_once`` mode is available for measurement only (``RLSTREAM_FAUST__PROCESSING_GUARANTEE``): on
Kafka 4.4 it was measured to leak duplicates after a kill.

Outputs are partitioned as librdkafka partitions them (CRC-32 of the key), not with aiokafka's default
(murmur2): a group's records stay co-partitioned whichever runtime wrote them.

Side inputs (tasks, policy versions, reviews) are read by the agents' own followers of those topics,
which every instance reads whole like a Faust global table, ``read_committed`` and with their envelopes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import faust
from aiokafka.errors import KafkaError as AioKafkaError
from faust.tables.manager import TableManager
from faust.transport.drivers import aiokafka as faust_kafka
from faust.types import TP, EventT, TransportT
from mode.utils.objects import cached_property
from mode.utils.queues import FlowControlEvent

from infra.runtime.host import Host, Raw, Write
from infra.runtime.port import Defer, Emit, Incoming, Processor, ProcessorStats
from infra.runtime.state import DEFAULT_GRACE_S, JSON, State, raw_key, split_key
from schemas.errors import BrokerError
from schemas.topics import STATE_MESSAGE_BYTES

log = logging.getLogger(__name__)

T = TypeVar("T")

#: a state changelog keeps the newest record per key (a deleted record's tombstone, until compacted)
CHANGELOG_CONFIGS = {"cleanup.policy": "compact"}


def crc32_partition(key: bytes | None, partitions: int) -> int | None:
    """The partition librdkafka's default partitioner picks for ``key`` (None: let the client choose)."""
    if key is None:
        return None
    return zlib.crc32(key) % partitions


class TableStore:
    """A :class:`~infra.runtime.state.Store` over a Faust table: records live in the table's data under
    ``<partition>:<kind>:<key>`` (the table is one dict for all partitions); an index of the keys per
    partition and kind is rebuilt after each rebalance. Writes go to the table and its changelog."""

    def __init__(self, table: Any) -> None:
        self.table = table
        self._index: dict[int, dict[str, set[str]]] = {}
        self.pending: list[asyncio.Future[Any]] = []

    @staticmethod
    def _key(p: int, kind: str, key: str) -> bytes:
        return f"{p}:{raw_key(kind, key)}".encode()

    def get(self, p: int, kind: str, key: str) -> JSON | None:
        raw = self.table.data.get(self._key(p, kind, key))
        return None if raw is None else json.loads(raw)

    def keys(self, p: int, kind: str) -> Iterable[str]:
        return self._index.get(p, {}).get(kind, set())

    def set(self, p: int, kind: str, key: str, value: JSON | None) -> None:
        k = self._key(p, kind, key)
        records = self._index.setdefault(p, {}).setdefault(kind, set())
        if value is None:
            self.table.data.pop(k, None)
            records.discard(key)
            self.pending.append(
                self.table.send_changelog(p, k, None, key_serializer="raw", value_serializer="raw")
            )
        else:
            raw = json.dumps(value).encode()
            self.table.data[k] = raw
            records.add(key)
            self.pending.append(
                self.table.send_changelog(p, k, raw, key_serializer="raw", value_serializer="raw")
            )

    def drop(self, p: int) -> None:
        # the records stay in the table (Faust manages what a revoked partition leaves behind); only
        # this worker's view of them goes
        self._index.pop(p, None)

    def reindex(self, partitions: Iterable[int]) -> None:
        wanted = set(partitions)
        self._index = {p: {} for p in wanted}
        for k in list(self.table.data.keys()):
            text = k.decode() if isinstance(k, bytes) else str(k)
            part, _, raw = text.partition(":")
            if not part.isdigit() or int(part) not in wanted:
                continue
            kind, key = split_key(raw)
            self._index[int(part)].setdefault(kind, set()).add(key)


@dataclass
class _Run:
    """One reader's handled records of one partition in the current assignment."""

    #: where the run starts: the offset the consumer sought the partition to (None until it has)
    start: int | None = None
    #: one past the unbroken run of handled offsets that starts at the committed offset (None until the
    #: consumer has sought the partition there)
    end: int | None = None
    #: handled offsets past a hole in the run (or handled before its start was known)
    ahead: set[int] = field(default_factory=set)

    def absorb(self) -> None:
        if self.end is None:
            return
        self.ahead = {o for o in self.ahead if o >= self.end}
        while self.end in self.ahead:
            self.ahead.discard(self.end)
            self.end += 1


class Handled:
    """How far each input partition's committed offset may move: to the end of the unbroken run of
    records, from the offset the assignment started at, whose batch's outputs and state writes the broker
    acknowledged, the lowest over the hosted processors that read the topic. Held per partition from its
    assignment to its revocation (typed, with a lifetime).

    Faust itself commits what its streams *acknowledge*, and a stream acknowledges records it never
    handed to an agent: one taken off the queue while a rebalance has suspended the flow, or one fetched
    under the previous generation, is skipped and acknowledged; the consumer, which forgets its committed
    offsets when partitions are revoked, then commits past it in the revocation's own commit, and no
    worker ever handles it (tests/contract/stress.py lost records that way). Only this ledger moves
    offsets of the hosted processors' inputs, and never across a hole: a record Faust's fetcher counted
    as read without handing it to an agent holds the partition's commit where it is, so that the next
    owner handles it (and what follows it, again)."""

    def __init__(self) -> None:
        self._readers: dict[str, set[str]] = {}
        self._runs: dict[tuple[str, int], dict[str, _Run]] = {}

    def reads(self, processor: str, topics: Iterable[str]) -> None:
        """``processor`` is hosted and reads ``topics``: their offsets move only as it handles them."""
        for topic in topics:
            self._readers.setdefault(topic, set()).add(processor)

    def ours(self, topic: str) -> bool:
        return topic in self._readers

    def _of(self, topic: str, partition: int) -> dict[str, _Run]:
        runs = self._runs.setdefault((topic, partition), {})
        for reader in self._readers.get(topic, ()):
            runs.setdefault(reader, _Run())
        return runs

    def started(self, topic: str, partition: int, offset: int) -> None:
        """The consumer sought the partition to ``offset`` (its committed offset) for this assignment."""
        for run in self._of(topic, partition).values():
            if run.end is None or offset > run.end:
                run.start = run.end = offset
            run.absorb()

    def record(self, processor: str, records: Iterable[tuple[str, int, int]]) -> None:
        """``processor``'s outputs and state writes for these (topic, partition, offset) records were
        acknowledged by the broker."""
        for topic, partition, offset in records:
            run = self._of(topic, partition)[processor]
            run.ahead.add(offset)
            run.absorb()

    def committable(self, topic: str, partition: int) -> int | None:
        """The offset a commit may name for the partition now (None: not known yet)."""
        ends = [run.end for run in self._of(topic, partition).values()]
        if not ends or any(end is None for end in ends):
            return None
        return min(e for e in ends if e is not None)

    def since(self, topic: str, partition: int) -> int | None:
        """Where the partition's run of handled records starts in this assignment (None: not known yet):
        with :meth:`committable`, which of its records this worker has handled."""
        starts = [run.start for run in self._of(topic, partition).values()]
        if not starts or any(start is None for start in starts):
            return None
        return min(start for start in starts if start is not None)

    def hole(self, topic: str, partition: int) -> tuple[int, int] | None:
        """(first, last) offsets of records some reader never got although it handled later ones."""
        for run in self._of(topic, partition).values():
            if run.end is not None and run.ahead:
                return run.end, min(run.ahead) - 1
        return None

    def forget(self, partitions: Iterable[tuple[str, int]]) -> None:
        """The partitions were revoked (after their last commit as this worker's)."""
        for topic, partition in partitions:
            self._runs.pop((topic, partition), None)


class _Consumer(faust_kafka.Consumer):
    """Faust's Kafka consumer, committing the hosted processors' inputs by :class:`Handled` only."""

    app: App

    def _new_offset(self, tp: TP) -> int | None:
        handled = self.app.handled
        if not handled.ours(tp.topic):
            return super()._new_offset(tp)
        acknowledged = super()._new_offset(tp)
        # what Faust collected is not what is committed: it must not pile up
        self._acked[tp].clear()
        self._acked_index[tp].clear()
        offset = handled.committable(tp.topic, tp.partition)
        if acknowledged is not None and (offset is None or acknowledged > offset):
            log.warning(
                "%s: Faust would commit offset %d, past records never handled (up to %s): not committed",
                tp,
                acknowledged,
                offset,
            )
        hole = handled.hole(tp.topic, tp.partition)
        if hole is not None and self._holes.get(tp) != hole:
            self._holes[tp] = hole
            log.warning(
                "%s: records %d-%d never reached the agent (the fetcher counted them as read): the commit "
                "stays at %d, and the partition's next owner handles them",
                tp,
                hole[0],
                hole[1],
                hole[0],
            )
        return offset

    async def perform_seek(self) -> None:
        """Seek the partitions to their committed offsets (an assignment starts), and start the runs of
        handled records there (partitions never committed start at their earliest offset)."""
        await super().perform_seek()
        handled = self.app.handled
        ours = {tp for tp in self.assignment() if handled.ours(tp.topic)}
        committed = {tp: self._committed_offset.get(tp) for tp in ours}
        unknown = [tp for tp, offset in committed.items() if offset is None]
        if unknown:
            committed.update(await self.earliest_offsets(*unknown))
        for tp, offset in committed.items():
            if offset is not None:
                handled.started(tp.topic, tp.partition, offset)

    async def on_partitions_revoked(self, revoked: set[TP]) -> None:
        await super().on_partitions_revoked(revoked)  # commits what was handled, then lets them go
        self.app.handled.forget((tp.topic, tp.partition) for tp in revoked)
        for tp in revoked:
            self._holes.pop(tp, None)

    def on_init(self) -> None:
        super().on_init()
        self._holes: dict[TP, tuple[int, int]] = {}


class _Transport(faust_kafka.Transport):
    Consumer = _Consumer


class _FlowControl(FlowControlEvent):
    """Faust's flow control into the stream queues, except that resuming a flow that is not suspended
    keeps what the queues hold.

    After a rebalance Faust resumes the flow to restore the tables, then resumes the stream partitions,
    seeks them to their committed offsets and resumes the flow once more. That second resume cleared the
    queues of the records fetched meanwhile, while the fetcher had already counted them as read: fetched
    again after the seek, they were dropped as read, and the agent never saw them (a hole of one to a
    few records per partition at the start of an assignment, measured by ``tests/contract/stress.py``).
    Clearing belongs to the resume after a suspension (a revocation), which drops the previous
    generation's records."""

    def resume(self) -> None:
        if self.is_active():
            return
        super().resume()


class _Tables(TableManager):  # type: ignore[misc]
    """Faust's table manager without its pause at start. Faust's waits a second before it registers the
    tables' changelogs, for tables declared while the app starts; every table of an :class:`App` is
    declared when the app is built (:class:`FaustHosted`, before the worker starts), so the pause only
    delayed every worker's start, a restarted one's included. A table declared later still fails, as
    before: registering finalizes the tables."""

    async def on_start(self) -> None:
        if not self.should_stop:
            await self._update_channels()
            await self.recovery.start()


class App(faust.App):
    """A ``faust.App`` whose consumer commits the hosted processors' input offsets only as far as they
    were handled (:class:`Handled`), whose stream queues keep the records fetched while an assignment
    starts (:class:`_FlowControl`) and whose tables are registered without a pause at start
    (:class:`_Tables`); otherwise Faust's app, run by ``faust -A`` as usual."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.handled = Handled()
        kwargs.setdefault("TableManager", _Tables)
        super().__init__(*args, **kwargs)

    def _new_transport(self) -> TransportT:
        return _Transport(self.conf.broker_consumer, self)

    @cached_property
    def flow_control(self) -> FlowControlEvent:
        return _FlowControl(loop=self.loop)


def _raw_of(event: EventT[Any]) -> Raw:
    message = event.message
    headers = message.headers
    if isinstance(headers, Mapping):
        headers = list(headers.items())
    return Raw(
        message.topic,
        message.partition,
        message.offset,
        int(message.timestamp * 1000),
        message.key,
        message.value,
        list(headers or ()),
    )


class FaustHosted:
    """One processor as an agent, a table and a timer of ``app``."""

    def __init__(
        self,
        app: App,
        processor: Processor,
        *,
        run_id: str | None,
        partitions: TopicWidths,
        state_partitions: int,
        batch_wait_s: float = 0.2,
        grace_s: float = DEFAULT_GRACE_S,
        on_fatal: Callable[[BaseException], None] | None = None,
    ) -> None:
        self.app = app
        self.processor = processor
        self.name = processor.name
        self._partitions = partitions
        self._batch_wait_s = batch_wait_s
        self._on_fatal = on_fatal
        self.host = Host(
            processor,
            run_id=run_id,
            group_id=app.conf.id,
            client_id=f"{app.conf.id}.{processor.name}",
            transient=(AioKafkaError,),
        )
        table_name = processor.name.replace("/", "-") + "-state"
        self.table = app.Table(
            table_name,
            partitions=state_partitions,
            key_type=bytes,
            value_type=bytes,
            # one state value may hold several executions (schemas.topics.STATE_MESSAGE_BYTES)
            extra_topic_configs={"max.message.bytes": str(STATE_MESSAGE_BYTES)},
        )
        self.changelog_topic = self.table.changelog_topic.get_topic_name()
        self.store = TableStore(self.table)
        self.state = State(processor.kinds, store=self.store, grace_s=grace_s)
        self._topics: dict[str, Any] = {}
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"rlstream-{processor.name}")
        self._lock: asyncio.Lock | None = None
        self._indexed_generation = -1
        self.failure: BaseException | None = None
        app.handled.reads(processor.name, processor.input_topics)
        source = app.topic(*processor.input_topics, key_serializer="raw", value_serializer="raw")
        app.agent(source, name=f"rlstream.{processor.name}")(cast(Any, self._agent))
        app.timer(processor.tick_interval_s, name=f"rlstream.{processor.name}.tick")(self._tick)
        app.on_partitions_revoked.connect(self._revoked)  # type: ignore[arg-type]

    @property
    def stats(self) -> ProcessorStats:
        return self.host.stats

    def close(self) -> None:
        self._executor.shutdown(wait=True)

    # -- the agent and the timer -----------------------------------------------------------------
    async def _agent(self, stream: faust.Stream[Any]) -> None:
        async for events in stream.take_events(self.processor.batch_size, within=self._batch_wait_s):
            try:
                await self._batch(list(events))
            except Exception as exc:
                await self._fatal(exc)
                return

    async def _tick(self, app: Any = None) -> None:
        if not self._ready():
            return
        try:
            async with self._guard():
                try:
                    await self._reindex()
                    emits = await self._in_thread(self.host.tick, self.state, time.time())
                    if emits or self.state.dirty:
                        writes = self.host.writes(emits)
                        await self._write(writes)
                        self.host.committed((), writes)
                finally:
                    self.host.end_batch()  # while the lock is held: the spans are this tick's
        except Exception as exc:
            await self._fatal(exc)

    async def _revoked(self, app: Any, *args: Any, **kwargs: Any) -> None:
        """Partitions are being revoked: Faust has waited for the batches in hand; a tick in progress may
        still write state of those partitions, which their next owner restores only once this returns."""
        async with self._guard():
            pass

    async def _batch(self, events: list[EventT[Any]]) -> None:
        started = time.monotonic()
        raws = [_raw_of(e) for e in events]
        async with self._guard():
            await self._reindex()
            try:
                batch, poison = self.host.decode(raws)
                emits: list[tuple[Emit, Incoming | None]] = []
                while batch:
                    try:
                        emits = await self._in_thread(self.host.handle, batch, self.state)
                        break
                    except Defer as deferred:
                        log.info("%s: deferring %d record(s): %s", self.name, len(batch), deferred)
                        await asyncio.sleep(deferred.delay_s)
                writes = self.host.writes(emits, poison)
                await self._write(writes)
                # the records' offsets may be committed from now on (Handled)
                self.app.handled.record(self.name, ((r.topic, r.partition, r.offset) for r in raws))
                self.stats.consumed += len(events)
                self.host.committed(raws, writes, started=started)
            finally:
                self.host.end_batch()
        # Faust acknowledges the records when the stream takes the next batch; what is committed is what
        # was recorded as handled above

    async def _write(self, writes: Sequence[Write]) -> None:
        """Outputs first, then state: a crash in between handles the records again (a duplicate output,
        recognisable by its event id), never the reverse (a state that says done with no output)."""
        sent = [await self._send(w) for w in writes]
        if sent:
            await asyncio.gather(*sent)
        self.stats.produced += len(writes)
        self.state.take_writes()  # applied to the table, and sent to its changelog
        pending, self.store.pending = self.store.pending, []
        if pending:
            await asyncio.gather(*pending)

    async def _send(self, write: Write) -> asyncio.Future[Any]:
        topic = self._topics.get(write.topic)
        if topic is None:
            topic = self._topics[write.topic] = self.app.topic(
                write.topic, key_serializer="raw", value_serializer="raw"
            )
        r = write.record
        partitions = self._partitions.known(write.topic)
        if partitions is None:  # a topic not seen yet: read the cluster's metadata off the event loop
            partitions = await asyncio.get_running_loop().run_in_executor(None, self._partitions, write.topic)
        fut = await topic.send(
            key=r.key, value=r.value, partition=crc32_partition(r.key, partitions), headers=list(r.headers)
        )
        return cast("asyncio.Future[Any]", fut)

    # -- plumbing --------------------------------------------------------------------------------
    def _guard(self) -> asyncio.Lock:
        # the agent and the timer share the state: one of them at a time
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    async def _in_thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    @property
    def assigned(self) -> bool:
        """Whether this worker holds its partitions and their state (after the group's rebalance)."""
        return self._ready() and self._indexed_generation == self.app.consumer_generation_id

    def _ready(self) -> bool:
        recovery = cast(Any, self.app.tables).recovery
        return bool(recovery.completed.is_set()) and not self.app.rebalancing

    async def _reindex(self) -> None:
        """After a rebalance: the state partitions this worker owns now, and the index of their records."""
        generation = self.app.consumer_generation_id
        if generation == self._indexed_generation:
            return
        owned = sorted(
            tp.partition for tp in self.app.assignor.assigned_actives() if tp.topic == self.changelog_topic
        )
        for p in self.state.owned_partitions():
            if p not in owned:
                self.state.disown(p)
        self.store.reindex(owned)
        self.state.restored(owned)
        self._indexed_generation = generation
        log.info("%s: state partitions %s", self.name, owned)

    async def _fatal(self, exc: BaseException) -> None:
        """An error no retry can fix here (the broker refused a write, a tick failed): stop the worker for
        its supervisor to restart it; the records not acknowledged are handled again."""
        log.error("%s: stopping the worker: %s", self.name, exc, exc_info=exc)
        self.failure = exc
        if self._on_fatal is not None:
            self._on_fatal(exc)
        else:
            await self.app.crash(exc)


class TopicWidths:
    """Partition counts of topics, read once from the cluster and cached (outputs are partitioned by
    key like librdkafka does, which needs them)."""

    def __init__(self, read: Callable[[], Mapping[str, int]]) -> None:
        self._read = read
        self._widths: dict[str, int] = {}
        self._lock = threading.Lock()

    def known(self, topic: str) -> int | None:
        return self._widths.get(topic)

    def __call__(self, topic: str) -> int:
        with self._lock:
            if topic not in self._widths:
                self._widths.update(self._read())
            if topic not in self._widths:
                raise BrokerError(f"topic {topic} does not exist", hint="run: rlstream topics create")
            return self._widths[topic]


class FaustRunner:
    """Runs a Faust app hosting processors as a worker in this process: ``rlstream worker NAME
    --runtime faust`` and the tests (a Faust worker of its own for ``faust -A``)."""

    def __init__(self, app: App, hosted: Sequence[FaustHosted], closers: Sequence[Callable[[], None]] = ()):
        self.app = app
        self.hosted = list(hosted)
        self._closers = list(closers)
        self._worker: Any = None
        self._stop_reason: BaseException | None = None
        self._stopping: asyncio.Future[None] | None = None
        for h in self.hosted:
            h._on_fatal = self._fatal

    @property
    def stats(self) -> ProcessorStats:
        if len(self.hosted) == 1:
            return self.hosted[0].stats
        total = ProcessorStats()
        for h in self.hosted:
            total.consumed += h.stats.consumed
            total.produced += h.stats.produced
            total.dead_lettered += h.stats.dead_lettered
        return total

    def _fatal(self, exc: BaseException) -> None:
        self._stop_reason = exc
        if self._worker is not None:
            self._stopping = asyncio.ensure_future(self._worker.stop())

    def run(self, stop: threading.Event, *, idle_exit_s: float | None = None) -> ProcessorStats:
        """Run until ``stop`` is set (or SIGTERM/SIGINT in the main thread, or, with ``idle_exit_s``, no
        input for that long); raises BrokerError when a hosted processor failed."""
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        main = threading.current_thread() is threading.main_thread()
        worker = _Worker(self.app, loop=loop, signals=main, loglevel=None, quiet=True)
        self._worker = worker
        last = {"consumed": -1, "at": time.monotonic()}

        async def watch(app: Any = None) -> None:
            consumed = self.stats.consumed
            now = time.monotonic()
            if consumed != last["consumed"] or not all(h.assigned for h in self.hosted):
                last.update(consumed=consumed, at=now)
            idle = idle_exit_s is not None and now - last["at"] >= idle_exit_s
            if stop.is_set() or idle:
                await worker.stop()

        self.app.timer(0.5, name="rlstream.stop-watch")(watch)

        try:
            worker.execute_from_commandline()
        except SystemExit:
            pass
        finally:
            for h in self.hosted:
                h.close()
            for close in self._closers:
                try:
                    close()
                except Exception:  # a failing close must not hide the others
                    log.exception("closing failed")
            asyncio.set_event_loop(None)
        reason = self._stop_reason or next((h.failure for h in self.hosted if h.failure), None)
        if reason is not None:
            raise BrokerError(f"faust worker stopped: {reason}") from reason
        return self.stats


class _Worker(faust.Worker):
    """Faust's worker, with signal handlers only where there can be any (the main thread) and the
    process's logging left to the caller."""

    def __init__(self, app: faust.App, *, signals: bool, **kwargs: Any) -> None:
        super().__init__(app, override_logging=False, redirect_stdouts=False, **kwargs)
        self._signals = signals

    def install_signal_handlers(self) -> None:
        if self._signals:
            super().install_signal_handlers()
