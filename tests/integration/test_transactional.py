"""The exactly-once processor runtime on the real broker: kill -9 mid-run loses and duplicates nothing,
nor does a transactional call that never returns."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition

from infra.kafka import transactional
from infra.kafka.consumer import decode_message
from infra.kafka.producer import EventProducer
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.port import Emit, Hosted, Incoming
from infra.runtime.state import Kind, State, raw_key
from schemas.errors import BrokerError
from schemas.rollout import RolloutRequested
from schemas.task import TaskPublished, TestCase

ROOT = Path(__file__).resolve().parents[2]
COUNT = Kind("count", int)


def _tasks(n: int) -> list[TaskPublished]:
    return [
        TaskPublished(
            task_id=f"t{i}",
            prompt="def f(x):\n",
            entry_point="f",
            tests=(TestCase(input="(1,)", output="1"),),
        )
        for i in range(n)
    ]


def _read_all(bootstrap: str, topic: str, partitions: int) -> list[RolloutRequested]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check.{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    ends = {}
    for p in range(partitions):
        ends[p] = consumer.get_watermark_offsets(TopicPartition(topic, p), 10)[1]
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    out: list[RolloutRequested] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for msg in consumer.consume(500, 0.5):
            if msg.error() is None:
                event = decode_message(msg).event
                assert isinstance(event, RolloutRequested)
                out.append(event)
        positions = consumer.position([TopicPartition(topic, p) for p in range(partitions)])
        if all(tp.offset >= ends[tp.partition] for tp in positions):
            break
    consumer.close()
    return out


def _worker(bootstrap: str, tin: str, tout: str, name: str, delay: float) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.integration.txn_worker", bootstrap, tin, tout, name, str(delay)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_kill_9_mid_run_then_restart_gives_every_output_exactly_once(
    kafka_catalog: str, new_topic: Callable[..., str]
):
    tin, tout = new_topic(3), new_topic(3)
    n = 120
    with EventProducer(kafka_catalog, source="test") as producer:
        for task in _tasks(n):
            producer.publish(task, topic=tin)
        poison = TaskPublished(task_id="poison", prompt="p", entry_point="f", check="def check(c): pass")
        producer.publish(poison, topic=tin)
    name = f"txn{uuid.uuid4().hex[:8]}"
    first = _worker(kafka_catalog, tin, tout, name, delay=0.05)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(_read_all(kafka_catalog, tout, 3)) < 30:
        time.sleep(0.5)
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    produced_before = len(_read_all(kafka_catalog, tout, 3))
    assert 0 < produced_before < n, "the kill must land mid-run"

    second = _worker(kafka_catalog, tin, tout, name, delay=0.0)
    out, _ = second.communicate(timeout=240)
    assert second.returncode == 0, out
    events = _read_all(kafka_catalog, tout, 3)
    ids = Counter(e.event_id() for e in events)
    assert len(events) == n
    assert max(ids.values()) == 1
    assert {e.task_id for e in events} == {f"t{i}" for i in range(n)}
    # the state restored from the changelog counts every task once, across the crash
    assert f"COUNTS {n}" in out, out


def test_a_poison_record_is_dead_lettered_and_the_rest_processed(
    kafka_catalog: str, new_topic: Callable[..., str]
):
    from infra.kafka.replay import replay

    tin, tout = new_topic(1), new_topic(1)
    with EventProducer(kafka_catalog, source="test") as producer:
        for task in _tasks(3):
            producer.publish(task, topic=tin)
        producer.publish(TaskPublished(task_id="poison", prompt="p", entry_point="f", check="x"), topic=tin)
        producer.produce_raw(tin, b"not json", key=b"k", headers=[("ce_type", b"x")])
        for task in _tasks(6)[3:]:
            producer.publish(task, topic=tin)
    name = f"txn{uuid.uuid4().hex[:8]}"
    worker = _worker(kafka_catalog, tin, tout, name, delay=0.0)
    out, _ = worker.communicate(timeout=120)
    assert worker.returncode == 0, out
    assert sorted(e.task_id for e in _read_all(kafka_catalog, tout, 1)) == [f"t{i}" for i in range(6)]
    letters = [
        e.event for e in replay(kafka_catalog, "rl.dlq") if getattr(e.event, "original_topic", None) == tin
    ]
    assert len(letters) == 2
    errors = sorted(getattr(letter, "error", "") for letter in letters)
    assert any("poison" in e for e in errors)
    assert any("headers" in e or "ce_" in e for e in errors)


class _HangsOnce:
    """A transactional producer whose first send_offsets_to_transaction never returns, as librdkafka's
    did after a broker restart (the coordinator it cached was gone); everything else is the real one."""

    def __init__(self, real: Producer) -> None:
        self.real = real
        self.release = threading.Event()

    def send_offsets_to_transaction(self, *args: object) -> None:
        self.release.wait(120)

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


class _TransportFailsOnce:
    """A transactional producer whose first send_offsets_to_transaction fails with a broker transport
    failure, as when the coordinator's broker is killed mid-transaction; everything else is the real one."""

    def __init__(self, real: Producer) -> None:
        self.real = real
        self.release = threading.Event()
        self._failed = False

    def send_offsets_to_transaction(self, *args: Any) -> None:
        if not self._failed:
            self._failed = True
            raise KafkaException(KafkaError(KafkaError._TRANSPORT, "Broker transport failure"))
        self.real.send_offsets_to_transaction(*args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


@pytest.mark.parametrize("fault", [_HangsOnce, _TransportFailsOnce], ids=["stuck", "transport failure"])
def test_a_transaction_stuck_in_the_client_is_abandoned_and_a_fresh_producer_redoes_it(
    kafka_catalog: str,
    new_topic: Callable[..., str],
    monkeypatch: pytest.MonkeyPatch,
    fault: type[_HangsOnce | _TransportFailsOnce],
):
    """The stuck (or failed) producer's open transaction (outputs and state written, offsets not) is
    aborted by the fresh producer's init_transactions; the batch is read again and written once, in the
    same process."""
    monkeypatch.setattr(transactional, "TXN_CALL_LIMIT_S", 1.0)
    tin, tout = new_topic(3), new_topic(3)
    n = 30
    with EventProducer(kafka_catalog, source="test") as producer:
        for task in _tasks(n):
            producer.publish(task, topic=tin)

    def handler(batch: Sequence[Incoming], state: State) -> list[Emit]:
        out = []
        for msg in batch:
            task = msg.event
            assert isinstance(task, TaskPublished)
            state.put(msg.partition, COUNT, "", (state.get(msg.partition, COUNT) or 0) + 1)
            request = RolloutRequested(
                group_id=f"{task.task_id}/0", task_id=task.task_id, group_size=2, prompt="p", entry_point="f"
            )
            out.append(Emit(request, topic=tout))
        return out

    name = f"txn{uuid.uuid4().hex[:8]}"
    proc = TransactionalProcessor(
        Hosted(name, [tin], handler, kinds=(COUNT,), batch_size=10), bootstrap=kafka_catalog
    )
    proc.start()
    hanging = fault(proc._producer)
    proc._producer = cast(Producer, hanging)
    try:
        t0 = time.monotonic()
        idle_since = time.monotonic()
        while time.monotonic() - idle_since < 4.0 and time.monotonic() - t0 < 120:
            if proc.step() or not proc.assigned:
                idle_since = time.monotonic()
        counted = sum(proc.state.get(p, COUNT) or 0 for p in proc.state.owned_partitions())
        assert proc.producers_replaced == 1
        assert proc.stats.aborted == 1
    finally:
        hanging.release.set()
        proc.close()
    events = _read_all(kafka_catalog, tout, 3)
    assert sorted(e.task_id for e in events) == sorted(f"t{i}" for i in range(n))
    # the state restored from the changelog after the abandoned transaction counts every task once
    assert counted == n


def test_state_is_restored_up_to_a_transaction_whose_markers_are_not_written_yet(
    kafka_catalog: str, new_topic: Callable[..., str]
):
    """A commit returns before the transaction's markers reach the changelog, so a restore right after
    a rebalance can find the last committed records above the stable offset. Modelled with a
    transaction on the changelog that is still open when the restore starts and committed while it
    runs: the restore waits for it rather than stopping at the stable offset with stale state."""
    tin = new_topic(1)
    name = f"txn{uuid.uuid4().hex[:8]}"
    proc = TransactionalProcessor(
        Hosted(name, [tin], lambda batch, state: [], kinds=(COUNT,)), bootstrap=kafka_catalog
    )
    deadline = time.monotonic() + 30
    while True:  # the new topic's metadata reaches every client within moments
        try:
            proc._ensure_changelog()
            break
        except BrokerError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
    owner = Producer({"bootstrap.servers": kafka_catalog, "transactional.id": f"{name}.owner"})
    owner.init_transactions(30)
    owner.begin_transaction()
    owner.produce(proc.changelog_topic, key=raw_key("count", "").encode(), value=b"7", partition=0)
    assert owner.flush(30) == 0
    proc._pending_restore.add(0)
    restore = threading.Thread(target=proc._restore_pending)
    try:
        restore.start()
        time.sleep(2.0)
        assert restore.is_alive(), "the restore stopped at the stable offset, below a pending transaction"
        owner.commit_transaction(30)
        restore.join(60)
        assert not restore.is_alive()
        assert proc.state.owned_partitions() == [0]
        assert proc.state.get(0, COUNT) == 7
    finally:
        proc.close()
