"""A topic follower (the task table of sandbox/reward/filter, the learner's and experience processor's
reviews, the generator's policy) rides out a broker restart: catching up while the broker is away waits
for it instead of failing the worker, and reads every event once it is back."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.kafka.admin import ensure_topics
from infra.kafka.config import BrokerConfig, KafkaConfig
from infra.kafka.global_table import TopicFollower
from infra.kafka.local import LocalCluster, _wait_gone
from infra.kafka.producer import EventProducer
from schemas.task import TaskPublished, TestCase
from schemas.topics import CATALOG, TASKS
from tests.conftest import private_dir, start_test_cluster


@pytest.fixture
def one_broker(kafka_lib: Path, test_broker_config: BrokerConfig) -> Iterator[LocalCluster]:
    with private_dir("rlstream-test-follow-") as data_dir:
        cluster = start_test_cluster(test_broker_config, kafka_lib, data_dir)
        try:
            yield cluster
        finally:
            cluster.down()


def _task(i: int) -> TaskPublished:
    return TaskPublished(
        task_id=f"follow/{i}",
        prompt=f"def f{i}(x):\n",
        entry_point=f"f{i}",
        tests=(TestCase(input="(1,)", output=str(i)),),
    )


def test_catching_up_during_a_broker_restart_waits_for_the_broker(one_broker: LocalCluster) -> None:
    bootstrap = one_broker.running_bootstrap() or ""
    ensure_topics(bootstrap, KafkaConfig(), [t for t in CATALOG if t.name == TASKS.name])
    with EventProducer(bootstrap, source="test") as producer:
        producer.publish(_task(0))
    follower: TopicFollower[TaskPublished] = TopicFollower(bootstrap, TASKS.name, TaskPublished)
    try:
        assert [t.task_id for t in follower.catch_up()] == ["follow/0"]
        (node,) = one_broker.status(probe=False).nodes
        assert node.pid is not None
        os.kill(node.pid, signal.SIGKILL)
        _wait_gone(node.pid, 30)

        failed: list[BaseException] = []

        def catch_up() -> None:  # what a table lookup that misses does, while the broker is away
            try:
                follower.catch_up(timeout_s=300)
            except BaseException as exc:
                failed.append(exc)

        reader = threading.Thread(target=catch_up)
        reader.start()
        time.sleep(3)
        one_broker.up()
        reader.join(300)
        assert not reader.is_alive()
        assert not failed, failed
        with EventProducer(bootstrap, source="test") as producer:
            producer.publish(_task(1))
        assert [t.task_id for t in follower.catch_up(timeout_s=120)] == ["follow/1"]
    finally:
        follower.close()
