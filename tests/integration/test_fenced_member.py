"""A processor whose consumer fails for good (a static member fenced by another member with its
``group.instance.id``) ends with an error naming it, on the real broker, instead of polling a consumer
that will deliver nothing more: its supervisor then starts a fresh one."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer

from infra.kafka.admin import ensure_topics
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.port import Hosted
from rlstream.settings import get_settings
from schemas.errors import BrokerError
from schemas.topics import Topic


def test_a_fenced_static_member_ends_its_worker(kafka_catalog: str) -> None:
    suffix = uuid.uuid4().hex[:8]
    topic = f"test.fenced.{suffix}"
    ensure_topics(kafka_catalog, get_settings().kafka, [Topic(topic, "task_id", "TaskPublished", "test")])
    instance = {"group.instance.id": f"rlstream.fenced-{suffix}.0"}
    proc = TransactionalProcessor(
        Hosted(f"fenced-{suffix}", [topic], lambda batch, state: []),
        bootstrap=kafka_catalog,
        consumer_config=instance,
    )
    proc.start()
    deadline = time.monotonic() + 60
    while not proc._assigned and time.monotonic() < deadline:
        proc.step()
    assert proc._assigned, "the processor never joined its group"
    # another member joins under the same instance id (as a standby taking an instance over does)
    other = Consumer(
        {
            "bootstrap.servers": kafka_catalog,
            "group.id": proc.group_id,
            "session.timeout.ms": 10_000,
            "partition.assignment.strategy": "cooperative-sticky",
            **instance,
        }
    )
    other.subscribe([topic])

    def until_it_fails() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            other.poll(0.2)
            proc.step()

    try:
        # the fatal error reaches the processor as a record's error or through the client's error
        # callback, depending on when the group learns of it; either way the step raises
        with pytest.raises(BrokerError, match="fenced"):
            until_it_fails()
    finally:
        other.close()
