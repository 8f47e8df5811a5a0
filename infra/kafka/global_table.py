"""Reading a whole topic outside any consumer group: a follower that hands over new events as they
arrive, and a table every instance of a processor holds whole.

``rl.tasks`` keeps forever, so it is the table of tasks: each processor that needs a task's cases reads
all its partitions, catches up to the end at start and whenever a lookup misses. ``rl.policy`` is
followed the same way by the generator, so a restarted worker finds the newest version at once.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Generic, TypeVar

from confluent_kafka import Consumer, IsolationLevel, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import OffsetSpec  # type: ignore[attr-defined]  # re-exported untyped

from infra.kafka.admin import admin_client, client_config
from infra.kafka.consumer import decode_message
from schemas.base import Event
from schemas.errors import BrokerError, EventDecodeError

E = TypeVar("E", bound=Event)


class TopicFollower(Generic[E]):
    """Every partition of ``topic`` from offset 0 (``read_committed``); only events of ``event_type``
    are handed over, undecodable records are counted and skipped (the topic's processors dead-letter
    them)."""

    def __init__(self, bootstrap: str, topic: str, event_type: type[E]) -> None:
        self.topic = topic
        self._type = event_type
        self.skipped = 0
        self._consumer = Consumer(
            client_config(
                bootstrap,
                **{
                    "group.id": f"rlstream.follow.{uuid.uuid4().hex}",  # never commits: only assigns
                    "enable.auto.commit": False,
                    "isolation.level": "read_committed",
                    "auto.offset.reset": "earliest",
                },
            )
        )
        try:
            meta = self._consumer.list_topics(topic, 30).topics[topic]
        except (KafkaException, KeyError) as exc:
            raise BrokerError(
                f"cannot read topic {topic}: {exc}", hint="run: rlstream topics create"
            ) from exc
        if meta.error is not None:
            raise BrokerError(f"cannot read topic {topic}: {meta.error}", hint="run: rlstream topics create")
        self._partitions = sorted(meta.partitions)
        self._consumer.assign([TopicPartition(topic, p, 0) for p in self._partitions])
        # the end offsets are asked on a client of their own: on the consumer's connection each query
        # waited behind the fetch it keeps open (up to fetch.wait.max.ms, 0.5 s, per partition), which
        # made the learner's review refresh before every step cost 1-1.5 s with 3 partitions
        self._bootstrap = bootstrap
        self._admin = admin_client(bootstrap, client_id=f"rlstream-follow-{topic}")

    def poll(self, timeout_s: float = 0.0) -> list[E]:
        """The events that arrived since the last call."""
        out: list[E] = []
        for msg in self._consumer.consume(500, timeout_s):
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF or _transient(err):
                    continue  # a broker away or restarting: the client reconnects by itself
                raise BrokerError(f"reading {self.topic} failed: {err}")
            try:
                event = decode_message(msg).event
            except EventDecodeError:
                self.skipped += 1
                continue
            if isinstance(event, self._type):
                out.append(event)
        return out

    def catch_up(self, timeout_s: float = 30.0) -> list[E]:
        """Everything up to the end offsets seen now."""
        deadline = time.monotonic() + timeout_s
        ends = self._ends(deadline)
        out: list[E] = []
        while True:
            # positions first: a reader already at the end (the common case for a table refreshed
            # often, e.g. the reviews before each step) returns without waiting on an empty poll
            positions = self._consumer.position([TopicPartition(self.topic, p) for p in self._partitions])
            if all(tp.offset >= ends[tp.partition] or ends[tp.partition] == 0 for tp in positions):
                return out
            out.extend(self.poll(0.2))
            if time.monotonic() > deadline:
                raise BrokerError(f"catching up with {self.topic} took more than {timeout_s:.0f}s")

    def _ends(self, deadline: float) -> dict[int, int]:
        """Every partition's end as a ``read_committed`` reader sees it (the last stable offset), in
        one request per broker."""
        latest = OffsetSpec.latest()  # type: ignore[no-untyped-call]
        while True:
            try:
                futures = self._admin.list_offsets(
                    {TopicPartition(self.topic, p): latest for p in self._partitions},
                    isolation_level=IsolationLevel.READ_COMMITTED,
                    request_timeout=10,
                )
                return {tp.partition: int(f.result().offset) for tp, f in futures.items()}
            except KafkaException as exc:
                # e.g. the broker is restarting: wait for it, up to the caller's deadline
                if time.monotonic() > deadline:
                    raise BrokerError(f"cannot read the end of {self.topic}: {exc.args[0]}") from None
                time.sleep(0.5)
                # a fresh client: after a broker restart this one kept asking with the leader epoch it
                # had cached (FENCED_LEADER_EPOCH until the deadline)
                self._admin = admin_client(self._bootstrap, client_id=f"rlstream-follow-{self.topic}")

    def close(self) -> None:
        self._consumer.close()


def _transient(err: KafkaError) -> bool:
    return bool(err.retriable()) or err.code() in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN)


class GlobalTable(Generic[E]):
    """The newest event per key of a whole topic."""

    def __init__(self, bootstrap: str, topic: str, event_type: type[E], key: Callable[[E], str]) -> None:
        self.topic = topic
        self._follower = TopicFollower(bootstrap, topic, event_type)
        self._key = key
        self._rows: dict[str, E] = {}

    def __len__(self) -> int:
        return len(self._rows)

    def start(self, timeout_s: float = 60.0) -> None:
        self._absorb(self._follower.catch_up(timeout_s))

    def _absorb(self, events: list[E]) -> None:
        for event in events:
            self._rows[self._key(event)] = event

    def get(self, key: str) -> E | None:
        row = self._rows.get(key)
        if row is None:
            self._absorb(self._follower.catch_up())
            row = self._rows.get(key)
        return row

    def close(self) -> None:
        self._follower.close()
