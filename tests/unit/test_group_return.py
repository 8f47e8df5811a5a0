"""A worker that falls out of its consumer group for good ends, to be restarted with fresh clients, rather
than poll a client that will never deliver again. A full run saw it after a broker restart: the
generator, a static member, lost its session, was fenced by its own earlier membership (a fatal error
polled in the same poll that lost its partitions, whose records the worker drops), and idled for ten
minutes with the whole pipeline waiting on it."""

from __future__ import annotations

import time
from typing import Any

import pytest
from confluent_kafka import KafkaError, TopicPartition

from infra.kafka.membership import REJOIN_LIMIT_S, RejoinWatch
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.port import Hosted
from schemas.errors import BrokerError


class _Polled:
    def __init__(self, error: KafkaError | None) -> None:
        self._error = error

    def error(self) -> KafkaError | None:
        return self._error


class _Client:
    """What the worker's consumer does in one poll: the group takes the partitions away (its callback
    runs inside the poll) and the poll returns ``polled``."""

    def __init__(self, proc: TransactionalProcessor, polled: _Polled | None, *, lose: bool) -> None:
        self.proc, self.polled, self.lose = proc, polled, lose

    def poll(self, timeout: float) -> _Polled | None:
        if self.lose:
            self.proc._on_lost(self, [TopicPartition("t", 0)])  # type: ignore[arg-type]
        return self.polled

    def consume(self, n: int, timeout: float) -> list[Any]:
        return []

    def position(self, partitions: list[TopicPartition]) -> list[TopicPartition]:
        return []


def _worker() -> TransactionalProcessor:
    # the clients are made, never used: nothing connects to this address
    proc = TransactionalProcessor(
        Hosted("rejoin-test", ["t"], lambda batch, state: []), bootstrap="127.0.0.1:9"
    )
    proc._assigned = {("t", 0)}
    return proc


def test_a_fatal_error_polled_with_the_loss_of_the_partitions_ends_the_worker() -> None:
    proc = _worker()
    fenced = KafkaError(KafkaError.FENCED_INSTANCE_ID, "static consumer fenced", fatal=True)
    proc._consumer = _Client(proc, _Polled(fenced), lose=True)  # type: ignore[assignment]
    with pytest.raises(BrokerError, match="failed for good.*fenced"):
        proc.step()


def test_a_worker_out_of_its_group_past_the_limit_ends() -> None:
    proc = _worker()
    proc._consumer = _Client(proc, None, lose=False)  # type: ignore[assignment]
    proc._rejoin.lost(time.monotonic() - REJOIN_LIMIT_S - 1)
    with pytest.raises(BrokerError, match="not back in group rlstream.rejoin-test"):
        proc.step()


def test_the_watch_counts_from_the_first_loss_and_stops_once_back() -> None:
    watch = RejoinWatch("w", "g", limit_s=10)
    watch.check(0.0)  # never out: nothing to say
    watch.lost(100.0)
    watch.lost(105.0)  # still out since the first loss
    watch.check(109.0)
    with pytest.raises(BrokerError, match="11s after"):
        watch.check(111.0)
    watch.back()  # an assignment, even an empty one: back in the group
    watch.check(1000.0)
