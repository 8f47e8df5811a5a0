"""The event producer and consumer against an earlier revision of themselves, on one broker, in one
process.

Loads ``infra/kafka/producer.py`` and ``consumer.py`` as they are at a git revision beside this tree's
(both sides use this tree's codec and tracing), then per round publishes ``--count`` CodeGenerated
events with each side and the raw client, and consumes each topic back, the sides' order alternating
between rounds. Reported: this thread's CPU per event (what the Python of the bus costs; other processes
on shared cores do not inflate it), medians over rounds, with each side's ratio to raw bytes. Interleaving
round by round puts the machine's load on both revisions alike.

    .venv/bin/python -m bench.bus_ab [--rev main] [--count 10000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Producer

from bench.bus import PRODUCER_SETTINGS, Span, broker, make_topic, raw_consume
from bench.revision import load_at
from infra.kafka.consumer import EventConsumer
from infra.kafka.producer import EventProducer
from schemas import export
from schemas.codec import encode
from schemas.envelope import Envelope
from schemas.rollout import CodeGenerated


def produce(producer_cls: Any, server: str, topic: str, event: CodeGenerated, n: int) -> float:
    clock = Span()
    clock.start()
    with producer_cls(server, source="bench", run_id="bench") as producer:
        for _ in range(n):
            producer.publish(event, topic=topic)
    return clock.elapsed()[1] / n * 1e6


def consume(consumer_cls: Any, server: str, topic: str, n: int) -> float:
    got, clock = 0, Span()
    with consumer_cls(server, [topic], group_id=uuid.uuid4().hex) as consumer:
        for _ in consumer.events(max_events=n, idle_timeout_s=30):
            if not got:
                clock.start()
            got += 1
        cpu = clock.elapsed()[1]
    if got < n:
        raise SystemExit(f"consumer stalled at {got}/{n}")
    return cpu / n * 1e6


def raw_produce(
    server: str, topic: str, value: bytes, key: bytes | None, headers: list[Any], n: int
) -> float:
    raw = Producer({"bootstrap.servers": server, **PRODUCER_SETTINGS})
    clock = Span()
    clock.start()
    for _ in range(n):
        while True:
            try:
                raw.produce(topic, value=value, key=key, headers=headers)
                break
            except BufferError:
                raw.poll(0.05)
        raw.poll(0)
    raw.flush(60)
    return clock.elapsed()[1] / n * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", default="main", help="the revision to compare against")
    ap.add_argument("--count", type=int, default=10000, help="events per side and round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jar-dir", type=Path, default=Path.home() / ".rlstream" / "kafka")
    args = ap.parse_args()

    golden = Path(export.__file__).parent / "golden" / f"{CodeGenerated.ce_type()}.json"
    doc = json.loads(golden.read_text())
    event = CodeGenerated.model_validate(doc["body"])
    record = encode(event, Envelope.for_event(event, source="bench", run_id="bench"))
    with tempfile.TemporaryDirectory() as folder:
        old_producer = load_at("rlstream_producer_then", args.rev, "infra/kafka/producer.py", Path(folder))
        old_consumer = load_at("rlstream_consumer_then", args.rev, "infra/kafka/consumer.py", Path(folder))
    sides: dict[str, tuple[Any, Any]] = {
        args.rev: (old_producer.EventProducer, old_consumer.EventConsumer),
        "this tree": (EventProducer, EventConsumer),
    }
    cpu: dict[str, dict[str, list[float]]] = {
        side: {"produce": [], "consume": []} for side in [*sides, "raw"]
    }
    n = args.count
    with broker(None, args.jar_dir) as server:
        warm = f"bench.warm.{uuid.uuid4().hex[:8]}"
        make_topic(server, warm)
        for producer_cls, _ in sides.values():
            produce(producer_cls, server, warm, event, 200)
        for r in range(args.rounds):
            order = list(sides) if r % 2 == 0 else list(reversed(sides))
            topics = {side: f"bench.ab.{uuid.uuid4().hex[:8]}" for side in [*order, "raw"]}
            for topic in topics.values():
                make_topic(server, topic)
            for side in order:
                cpu[side]["produce"].append(produce(sides[side][0], server, topics[side], event, n))
            headers = list(record.headers)
            raw_cpu = raw_produce(server, topics["raw"], record.value, record.key, headers, n)
            cpu["raw"]["produce"].append(raw_cpu)
            for side in order:
                cpu[side]["consume"].append(consume(sides[side][1], server, topics[side], n))
            cpu["raw"]["consume"].append(raw_consume(server, topics["raw"], n)[1] / n * 1e6)
            print(
                f"round {r + 1}: "
                + ", ".join(
                    f"{side} {cpu[side]['produce'][-1]:.1f}/{cpu[side]['consume'][-1]:.1f}" for side in cpu
                )
                + " us/event (produce/consume)",
                flush=True,
            )
    load_avg = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n{n} CodeGenerated events per side and round, {args.rounds} rounds; load average now {load_avg}")
    print("CPU of this thread per event, median of rounds (range), and the ratio raw / side")
    for way in ("produce", "consume"):
        raw = statistics.median(cpu["raw"][way])
        for side in cpu:
            got = cpu[side][way]
            med = statistics.median(got)
            print(f"{way:8} {side:12} {med:6.2f} us ({min(got):.2f}-{max(got):.2f})   {raw / med:5.2f}x raw")


if __name__ == "__main__":
    main()
