"""Consumer-group lag: how far a group's committed offsets trail the end of a topic."""

from __future__ import annotations

from confluent_kafka import Consumer, KafkaException, TopicPartition

from schemas.errors import BrokerError


class LagProbe:
    """Reads a group's committed offsets without joining the group (no rebalance is triggered)."""

    def __init__(self, bootstrap: str, group_id: str, topic: str) -> None:
        self.group_id = group_id
        self.topic = topic
        self._consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group_id, "enable.auto.commit": False}
        )
        self._partitions: list[int] | None = None

    def lag(self, timeout_s: float = 10.0) -> int:
        try:
            if self._partitions is None:
                md = self._consumer.list_topics(self.topic, timeout_s).topics[self.topic]
                self._partitions = sorted(md.partitions)
            tps = [TopicPartition(self.topic, p) for p in self._partitions]
            committed = {tp.partition: tp.offset for tp in self._consumer.committed(tps, timeout_s)}
            total = 0
            for p in self._partitions:
                low, high = self._consumer.get_watermark_offsets(TopicPartition(self.topic, p), timeout_s)
                done = committed.get(p, -1)
                total += max(high - (done if done >= 0 else low), 0)
            return total
        except KafkaException as exc:
            raise BrokerError(f"cannot read lag of group {self.group_id} on {self.topic}: {exc}") from exc

    def close(self) -> None:
        self._consumer.close()
