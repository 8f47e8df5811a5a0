"""A handler that cannot reach the broker (a table it follows is unreadable while the broker restarts)
fails for no fault of the record: the runtime reads the batch again once the broker answers, and never
dead-letters a valid event for it (the experience processor lost a verdict that way in the broker-restart
fault test, and its group never completed)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from confluent_kafka import KafkaError, KafkaException

from infra.kafka.producer import EventProducer
from infra.kafka.replay import replay
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.port import Emit, Hosted, Incoming
from infra.runtime.state import State
from schemas.errors import BrokerError
from schemas.rollout import RolloutRequested
from schemas.task import TaskPublished, TestCase
from tests.e2e.conftest import read_topic


def test_a_handler_that_cannot_reach_the_broker_is_retried_never_dead_lettered(
    kafka_catalog: str, new_topic: Callable[..., str]
) -> None:
    tin, tout = new_topic(1), new_topic(1)
    with EventProducer(kafka_catalog, source="test") as producer:
        for i in range(3):
            producer.publish(
                TaskPublished(
                    task_id=f"b{i}", prompt="p", entry_point="f", tests=(TestCase(input="(1,)", output="1"),)
                ),
                topic=tin,
            )
    failures = iter(
        [
            BrokerError("cannot read the end of rl.reviews: Unknown partition"),
            KafkaException(KafkaError(KafkaError._TRANSPORT)),
        ]
    )
    calls: list[int] = []

    def handler(batch: Sequence[Incoming], state: State) -> list[Emit]:
        calls.append(len(batch))
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return [
            Emit(
                RolloutRequested(
                    group_id=f"{m.event.task_id}/0",  # type: ignore[attr-defined]
                    task_id=m.event.task_id,  # type: ignore[attr-defined]
                    group_size=1,
                    prompt="p",
                    entry_point="f",
                ),
                topic=tout,
            )
            for m in batch
        ]

    proc = TransactionalProcessor(
        Hosted(f"brokeraway-{tin}", [tin], handler, batch_size=10), bootstrap=kafka_catalog
    )
    stop = threading.Event()
    runner = threading.Thread(target=proc.run, args=(stop,))
    runner.start()
    deadline = time.monotonic() + 120
    while proc.stats.produced < 3 and time.monotonic() < deadline and runner.is_alive():
        time.sleep(0.2)
    stop.set()
    runner.join(60)

    assert proc.stats.dead_lettered == 0
    assert len(calls) >= 3, calls  # two failed attempts, then the batch again
    produced = [getattr(e, "task_id", None) for _, e in read_topic(kafka_catalog, tout)]
    assert sorted(map(str, produced)) == ["b0", "b1", "b2"]
    letters = [
        e.event for e in replay(kafka_catalog, "rl.dlq") if getattr(e.event, "original_topic", None) == tin
    ]
    assert letters == []
