"""The event bus against a real Apache Kafka broker: producer, consumer, dead letters, replay, tracing."""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer

from infra.kafka.consumer import ConsumedEvent, EventConsumer
from infra.kafka.producer import EventProducer
from infra.kafka.replay import replay, replay_windows
from schemas import export
from schemas.base import Event
from schemas.dlq import DeadLettered
from schemas.errors import BrokerError, EventDecodeError
from schemas.registry import EVENT_CLASSES, LATEST
from schemas.task import TaskPublished, TestCase
from schemas.topics import DLQ

pytestmark = pytest.mark.kafka

GOLDEN = Path(export.__file__).parent / "golden"


def golden(cls: type[Event]) -> tuple[Event, dict[str, Any]]:
    doc = json.loads((GOLDEN / f"{cls.ce_type()}.json").read_text())
    return cls.model_validate(doc["body"]), doc


def task(i: int, tenant: str = "default") -> TaskPublished:
    return TaskPublished(
        task_id=f"task-{i}",
        prompt=f"def f{i}(x):\n    '''return x + {i}'''\n",
        entry_point=f"f{i}",
        tests=(TestCase(input="(1,)", output=repr(1 + i)),),
        tenant=tenant,
    )


def consume_all(bootstrap: str, topic: str, n: int, **kw: Any) -> list[ConsumedEvent]:
    with EventConsumer(bootstrap, [topic], group_id=f"g-{uuid.uuid4().hex}", **kw) as consumer:
        out = list(consumer.events(max_events=n, idle_timeout_s=20))
    return out


def test_every_event_type_round_trips_with_its_envelope(kafka_bootstrap: str, new_topic: Callable[..., str]):
    topic = new_topic(partitions=1)
    sent = []
    with EventProducer(kafka_bootstrap, source="test/bus", run_id="run-rt") as producer:
        for i, cls in enumerate(EVENT_CLASSES):
            event, _ = golden(cls)
            cause = f"cause-{i}"
            event_id = producer.publish(event, topic=topic, causation_id=cause, attempt=i % 2)
            sent.append((cls, event, event_id, cause))
    got = consume_all(kafka_bootstrap, topic, len(sent))
    assert len(got) == len(EVENT_CLASSES)
    for (cls, event, event_id, cause), item in zip(sent, got, strict=True):
        assert item.envelope.id == event_id == event.event_id(sent.index((cls, event, event_id, cause)) % 2)
        assert item.envelope.type == cls.ce_type()  # written as that version ...
        assert type(item.event) is LATEST[cls.event_type]  # ... read as the newest
        if type(event) is type(item.event):
            assert item.event == event
        assert item.envelope.source == "test/bus"
        assert item.envelope.subject == event.key
        assert item.envelope.run_id == "run-rt"
        assert item.envelope.causation_id == cause
        assert item.key == event.key.encode()
        assert item.topic == topic and item.partition == 0
        assert item.timestamp is not None and abs((datetime.now(UTC) - item.timestamp).total_seconds()) < 120
    assert [i.offset for i in got] == list(range(len(sent)))


def test_plain_confluent_kafka_records_are_read_by_our_consumer(kafka_bootstrap: str, new_topic):
    topic = new_topic(partitions=1)
    event, doc = golden(TaskPublished)
    raw = Producer({"bootstrap.servers": kafka_bootstrap})
    headers = [(k, v.encode()) for k, v in doc["headers"].items()]
    raw.produce(topic, key=doc["key"].encode(), value=json.dumps(doc["body"]).encode(), headers=headers)
    assert raw.flush(30) == 0
    [item] = consume_all(kafka_bootstrap, topic, 1)
    assert item.event == event
    assert item.envelope.id == doc["headers"]["ce_id"]
    assert item.envelope.traceparent == doc["headers"]["traceparent"]
    assert item.envelope.time == datetime.fromisoformat(doc["headers"]["ce_time"])


def test_our_records_are_read_by_plain_confluent_kafka(kafka_bootstrap: str, new_topic):
    topic = new_topic(partitions=1)
    event = task(7)
    with EventProducer(kafka_bootstrap, source="test/interop", run_id="r1") as producer:
        event_id = producer.publish(event, topic=topic, causation_id="c1")
    raw = Consumer(
        {"bootstrap.servers": kafka_bootstrap, "group.id": uuid.uuid4().hex, "auto.offset.reset": "earliest"}
    )
    raw.subscribe([topic])
    msg = None
    deadline = time.monotonic() + 30
    while msg is None and time.monotonic() < deadline:
        m = raw.poll(0.5)
        if m is not None and m.error() is None:
            msg = m
    raw.close()
    assert msg is not None
    headers = {k: v.decode() if isinstance(v, bytes) else str(v) for k, v in list(msg.headers() or [])}
    assert headers["ce_specversion"] == "1.0"
    assert headers["ce_id"] == event_id
    written = event.as_written().ce_type()  # a task that sets no max_turns is written as v3
    assert headers["ce_type"] == written and written.startswith("rlstream.task.published.v")
    assert headers["ce_source"] == "test/interop"
    assert headers["ce_subject"] == "task-7"
    assert headers["content-type"] == "application/json"
    assert headers["rlstream_run_id"] == "r1"
    assert headers["rlstream_causation_id"] == "c1"
    datetime.fromisoformat(headers["ce_time"])
    assert msg.key() == b"task-7"
    assert json.loads(msg.value() or b"") == event.as_written().model_dump(mode="json")


def test_garbage_is_dead_lettered_and_consumption_continues(kafka_catalog: str, new_topic):
    bootstrap = kafka_catalog
    topic = new_topic(partitions=1)
    _, doc = golden(TaskPublished)
    good_headers = [(k, v.encode()) for k, v in doc["headers"].items()]
    bad_body = json.dumps({**doc["body"], "entry_point": 5}).encode()
    with EventProducer(bootstrap, source="test/dlq") as producer:
        first = producer.publish(task(1), topic=topic)
        producer.produce_raw(topic, b"\xff\x00 not an event", key=b"k-garbage")
        producer.produce_raw(topic, bad_body, key=b"task-x", headers=good_headers)
        last = producer.publish(task(2), topic=topic)
    group = f"g-{uuid.uuid4().hex}"
    with EventConsumer(bootstrap, [topic], group_id=group, stage="test-consumer") as consumer:
        got = list(consumer.events(max_events=2, idle_timeout_s=20))
        assert consumer.dead_lettered == 2
    assert [g.envelope.id for g in got] == [first, last]
    assert [g.offset for g in got] == [0, 3]

    letters = [
        e.event
        for e in replay(bootstrap, DLQ.name)
        if isinstance(e.event, DeadLettered) and e.event.original_topic == topic
    ]
    assert [(d.original_offset, d.stage) for d in letters] == [(1, "test-consumer"), (2, "test-consumer")]
    garbage, invalid = letters
    assert base64.b64decode(garbage.original_value_b64) == b"\xff\x00 not an event"
    assert base64.b64decode(garbage.original_key_b64 or "") == b"k-garbage"
    assert garbage.error_type == "EventDecodeError" and "ce_specversion" in garbage.error
    assert base64.b64decode(invalid.original_value_b64) == bad_body
    assert "entry_point" in invalid.error
    assert invalid.original_event_id == doc["headers"]["ce_id"]
    assert invalid.original_headers["ce_type"] == doc["headers"]["ce_type"]

    # everything, dead letters included, was committed: the group has nothing left to read
    with EventConsumer(bootstrap, [topic], group_id=group) as again:
        assert list(again.events(idle_timeout_s=4)) == []
        assert again.dead_lettered == 0


def test_an_event_left_unhandled_is_delivered_again(kafka_bootstrap: str, new_topic):
    topic = new_topic(partitions=1)
    with EventProducer(kafka_bootstrap, source="test/commit") as producer:
        ids = [producer.publish(task(i), topic=topic) for i in range(3)]
    group = f"g-{uuid.uuid4().hex}"
    with EventConsumer(kafka_bootstrap, [topic], group_id=group) as consumer:
        seen = []
        for item in consumer.events(idle_timeout_s=20):
            seen.append(item.envelope.id)
            if len(seen) == 2:
                break  # crash while handling the second event: it was never handled
        assert seen == ids[:2]
        # the same consumer, asked again, starts with the event it was not done with
        assert next(consumer.events(idle_timeout_s=20)).envelope.id == ids[1]
    with EventConsumer(kafka_bootstrap, [topic], group_id=group) as consumer:
        rest = [i.envelope.id for i in consumer.events(idle_timeout_s=5)]
    assert rest == ids[1:]


def test_replay_from_an_offset_and_from_a_time_returns_exactly_the_events_after_it(
    kafka_bootstrap: str, new_topic
):
    topic = new_topic(partitions=3)
    with EventProducer(kafka_bootstrap, source="test/replay") as producer:
        before = [producer.publish(task(i), topic=topic) for i in range(12)]
        producer.flush()
        time.sleep(0.05)
        t1 = datetime.now(UTC)
        time.sleep(0.05)
        window = [producer.publish(task(100 + i), topic=topic) for i in range(9)]
        producer.flush()
        time.sleep(0.05)
        t2 = datetime.now(UTC)
        time.sleep(0.05)
        after = [producer.publish(task(200 + i), topic=topic) for i in range(5)]

    everything = list(replay(kafka_bootstrap, topic, from_offset=0))
    assert sorted(e.envelope.id for e in everything) == sorted(before + window + after)
    assert len(everything) == len(before + window + after)
    for p in range(3):
        offsets = [e.offset for e in everything if e.partition == p]
        assert offsets == list(range(len(offsets)))  # in log order, nothing skipped, nothing twice

    from_t1 = list(replay(kafka_bootstrap, topic, from_time=t1))
    assert sorted(e.envelope.id for e in from_t1) == sorted(window + after)
    between = list(replay(kafka_bootstrap, topic, from_time=t1, to_time=t2))
    assert sorted(e.envelope.id for e in between) == sorted(window)
    assert all(e.timestamp is not None and t1 <= e.timestamp < t2 for e in between)
    # per partition the order is the log's order
    for p in range(3):
        assert [e.offset for e in between if e.partition == p] == sorted(
            e.offset for e in between if e.partition == p
        )

    windows = {w.partition: w for w in replay_windows(kafka_bootstrap, topic, from_offset=2)}
    from_two = list(replay(kafka_bootstrap, topic, from_offset=2))
    assert len(from_two) == sum(w.end - w.start for w in windows.values())
    assert all(e.offset >= 2 for e in from_two)
    assert list(replay(kafka_bootstrap, topic, from_time=datetime.now(UTC))) == []


def test_replay_reports_garbage_by_position_or_hands_it_over(kafka_bootstrap: str, new_topic):
    topic = new_topic(partitions=1)
    with EventProducer(kafka_bootstrap, source="test/replay") as producer:
        producer.publish(task(1), topic=topic)
        producer.produce_raw(topic, b"junk")
        producer.publish(task(2), topic=topic)
    with pytest.raises(EventDecodeError, match=rf"{topic}\[0\]@1"):
        list(replay(kafka_bootstrap, topic))
    bad: list[int] = []
    events = list(
        replay(kafka_bootstrap, topic, on_undecodable=lambda msg, exc: bad.append(msg.offset() or 0))
    )
    assert [e.offset for e in events] == [0, 2] and bad == [1]


def test_publish_to_a_missing_topic_is_a_broker_error(kafka_bootstrap: str):
    producer = EventProducer(kafka_bootstrap, source="test", delivery_timeout_s=5)
    producer.publish(task(1), topic=f"missing.{uuid.uuid4().hex}")
    with pytest.raises(BrokerError):
        producer.flush(20)


def test_trace_context_travels_from_producer_to_consumer(kafka_bootstrap: str, new_topic):
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    # what an entry point's configure_tracing does, plus an in-memory exporter to look at the spans
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    topic = new_topic(partitions=1)
    tracer = trace.get_tracer("test")
    with tracer.start_as_current_span("upstream") as root, EventProducer(kafka_bootstrap, source="t") as p:
        p.publish(task(1), topic=topic)
    trace_id = root.get_span_context().trace_id
    with EventConsumer(kafka_bootstrap, [topic], group_id=uuid.uuid4().hex) as consumer:
        items = []
        for item in consumer.events(max_events=1, idle_timeout_s=20):
            # while handling, the consumer span is current: what we publish now continues the trace
            assert trace.get_current_span().get_span_context().trace_id == trace_id
            items.append(item)
    assert trace.get_current_span().get_span_context().trace_id != trace_id  # detached after the loop
    spans = {s.name: s for s in exporter.get_finished_spans()}
    send, process = spans[f"send {topic}"], spans[f"process {topic}"]
    assert send.kind == trace.SpanKind.PRODUCER and process.kind == trace.SpanKind.CONSUMER
    assert send.context is not None and process.context is not None
    assert send.context.trace_id == process.context.trace_id == trace_id
    assert process.parent is not None and process.parent.span_id == send.context.span_id
    assert send.attributes is not None and send.attributes["messaging.system"] == "kafka"
    assert send.attributes["messaging.destination.name"] == topic
    assert (items[0].envelope.traceparent or "").startswith(
        f"00-{trace_id:032x}-{send.context.span_id:016x}-"
    )


def test_aiokafka_clients_interoperate_with_the_broker_and_our_envelope(kafka_bootstrap: str, new_topic):
    # the asyncio client (used by Faust-style apps) must speak what this Kafka version accepts
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    from schemas.codec import encode
    from schemas.envelope import Envelope

    topic = new_topic(partitions=3)
    event = task(42)
    record = encode(event, Envelope.for_event(event, source="test/aiokafka"))
    with EventProducer(kafka_bootstrap, source="test/ours") as producer:
        ours = producer.publish(task(43), topic=topic)

    async def run() -> list[tuple[str, dict[str, bytes]]]:
        p = AIOKafkaProducer(bootstrap_servers=kafka_bootstrap, enable_idempotence=True, acks="all")
        await p.start()
        try:
            await p.send_and_wait(topic, record.value, key=record.key, headers=list(record.headers))
        finally:
            await p.stop()
        group = uuid.uuid4().hex
        c = AIOKafkaConsumer(
            topic,
            bootstrap_servers=kafka_bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await c.start()
        seen: list[tuple[str, dict[str, bytes]]] = []
        try:
            deadline = time.monotonic() + 30
            while len(seen) < 2 and time.monotonic() < deadline:
                batch = await c.getmany(timeout_ms=1000)
                for msgs in batch.values():
                    seen.extend((m.value.decode() if m.value else "", dict(m.headers)) for m in msgs)
            await c.commit()
        finally:
            await c.stop()
        return seen

    seen = asyncio.run(run())
    assert sorted(h["ce_id"].decode() for _, h in seen) == sorted([ours, event.event_id()])
    got = consume_all(kafka_bootstrap, topic, 2)
    assert {g.envelope.source for g in got} == {"test/aiokafka", "test/ours"}


def test_configured_tracing_exports_spans_over_otlp_http(kafka_bootstrap: str, new_topic, tmp_path: Path):
    # configure_tracing installs a process-wide provider: run it in its own process
    import subprocess
    import sys
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    received: list[tuple[str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            received.append((self.path, body))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    topic = new_topic(partitions=1)
    script = f"""
from infra.kafka.producer import EventProducer
from infra.telemetry.config import TelemetryConfig
from infra.telemetry.tracing import configure_tracing, shutdown_tracing
from schemas.task import TaskPublished, TestCase
configure_tracing(TelemetryConfig(otlp_endpoint="http://127.0.0.1:{server.server_port}"), "test-service")
t = TaskPublished(task_id="x", prompt="p", entry_point="f", tests=(TestCase(input="(1,)", output="1"),))
with EventProducer({kafka_bootstrap!r}, source="t") as p:
    p.publish(t, topic={topic!r})
shutdown_tracing()
"""
    try:
        proc = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=Path(__file__).parents[2],
        )
    finally:
        server.shutdown()
    assert proc.returncode == 0, proc.stderr
    assert received and received[0][0] == "/v1/traces"
    payload = b"".join(body for _, body in received)
    assert f"send {topic}".encode() in payload and b"test-service" in payload
    [item] = consume_all(kafka_bootstrap, topic, 1)
    assert item.envelope.traceparent is not None  # real ids even from the SDK-configured process


def test_handled_offsets_stored_a_batch_at_a_time_are_what_a_commit_commits(kafka_catalog: str, new_topic):
    """Offsets are stored for the whole batch at once, not per record: a commit still covers exactly the
    events handled so far and the one in hand (which a commit marks handled), dead letters included, and
    a consumer of the group that comes after a close starts with the event that was in hand."""
    bootstrap = kafka_catalog
    topic = new_topic(partitions=1)
    with EventProducer(bootstrap, source="test/store") as producer:
        ids = [producer.publish(task(i), topic=topic) for i in range(2)]
        producer.produce_raw(topic, b"not an event", key=b"k")
        ids += [producer.publish(task(i), topic=topic) for i in range(2, 6)]
    group = f"g-{uuid.uuid4().hex}"
    with EventConsumer(bootstrap, [topic], group_id=group) as consumer:
        got = [consumer.poll(20) for _ in range(4)]
        assert [g.envelope.id if g else None for g in got] == ids[:4]
        # offsets 0 and 1 handled, the dead letter at 2, 3 handled, and the event at 4 in hand
        consumer.commit()
        (committed,) = consumer._consumer.committed(consumer.assignment(), 20)
        assert committed.offset == 5
        assert consumer.dead_lettered == 1
        # offset 5 handled, 6 in hand when the consumer closes: 6 is where the group goes on
        more = [consumer.poll(20), consumer.poll(20)]
        assert [g.envelope.id if g else None for g in more] == ids[4:6]
    with EventConsumer(bootstrap, [topic], group_id=group) as consumer:
        rest = [i.envelope.id for i in consumer.events(idle_timeout_s=5)]
    assert rest == ids[5:]
