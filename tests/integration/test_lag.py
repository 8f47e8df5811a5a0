"""The learner-lag probe counts records, not offsets (transaction markers take offsets too)."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from confluent_kafka import Consumer, Producer, TopicPartition

from infra.kafka.lag import LagProbe


def test_lag_counts_committed_records_behind_the_group(kafka_bootstrap: str, new_topic: Callable[..., str]):
    topic = new_topic(2)
    producer = Producer({"bootstrap.servers": kafka_bootstrap, "transactional.id": f"lag.{uuid.uuid4().hex}"})
    producer.init_transactions(30)
    for i in range(5):  # five transactions: five records and five markers
        producer.begin_transaction()
        producer.produce(topic, key=str(i).encode(), value=b"x", partition=i % 2)
        producer.commit_transaction(30)
    group = f"g.{uuid.uuid4().hex}"
    probe = LagProbe(kafka_bootstrap, group, topic)
    assert probe.lag() == 5
    consumer = Consumer(
        {"bootstrap.servers": kafka_bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    consumer.commit(offsets=[TopicPartition(topic, 0, 2)], asynchronous=False)  # past one record + marker
    assert probe.lag() == 4
    consumer.close()
    probe.close()
