"""Events per second through rlstream's codec + producer/consumer, next to raw confluent-kafka bytes.

Both sides run in the same process against the same broker with the same producer settings
(idempotent, acks=all, linger 5 ms); the raw side sends the identical pre-encoded bytes and
headers, so the ratio is what the envelope, validation, deterministic ids, tracing and offset
bookkeeping cost. Consumption is timed from the first record received (group join excluded).

    .venv/bin/python bench/bus.py [--count N] [--repeats N] [--bootstrap HOST:PORT] [--tracing]

Without --bootstrap a throwaway single-node broker is started from the cached jars
(~/.rlstream/kafka, or --jar-dir) and stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.cimpl import NewTopic

from infra.kafka.admin import admin_client
from infra.kafka.config import BrokerConfig
from infra.kafka.consumer import EventConsumer
from infra.kafka.jars import require_jars
from infra.kafka.local import LocalCluster, find_free_base_port
from infra.kafka.producer import EventProducer
from infra.telemetry.config import TelemetryConfig
from infra.telemetry.tracing import configure_tracing
from schemas import export
from schemas.codec import Record, encode
from schemas.envelope import Envelope
from schemas.rollout import CodeGenerated

PRODUCER_SETTINGS = {"enable.idempotence": True, "acks": "all", "linger.ms": 5}


@contextmanager
def broker(bootstrap: str | None, jar_dir: Path) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    config = BrokerConfig()
    lib = require_jars(jar_dir, config.kafka_version)
    with tempfile.TemporaryDirectory(prefix="rlstream-bench-") as tmp:
        cluster = LocalCluster(
            config.model_copy(update={"base_port": find_free_base_port(config.host, 2), "heap_mb": 1024}),
            data_dir=Path(tmp),
            lib_dir=lib,
        )
        try:
            cluster.up(1)
            yield cluster.running_bootstrap() or ""
        finally:
            cluster.down()


def make_topic(bootstrap: str, name: str) -> None:
    admin = admin_client(bootstrap)
    for f in admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=-1)]).values():
        f.result(30)


class Span:
    """Wall-clock seconds and this thread's CPU seconds since :meth:`start` (the CPU figure is what
    the caller's Python costs; other processes of a shared machine do not inflate it, the client's
    own threads do not count)."""

    def start(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.thread_time()

    def elapsed(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.thread_time() - self.cpu


def raw_consume(bootstrap: str, topic: str, n: int) -> tuple[float, float]:
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex, "enable.auto.commit": False})
    c.assign([TopicPartition(topic, p, 0) for p in range(3)])
    got, clock = 0, Span()
    while got < n:
        batch = c.consume(500, 5.0)
        if not batch:
            raise SystemExit(f"raw consumer stalled at {got}/{n}")
        if not got:
            clock.start()
        got += sum(1 for m in batch if m.error() is None)
    elapsed = clock.elapsed()
    c.close()
    return elapsed


def ours_consume(bootstrap: str, topic: str, n: int) -> tuple[float, float]:
    got, clock = 0, Span()
    with EventConsumer(bootstrap, [topic], group_id=uuid.uuid4().hex) as consumer:
        for _ in consumer.events(max_events=n, idle_timeout_s=30):
            if not got:
                clock.start()
            got += 1
        elapsed = clock.elapsed()
    if got < n:
        raise SystemExit(f"event consumer stalled at {got}/{n}")
    return elapsed


def _one_round(
    server: str, event: CodeGenerated, record: Record, n: int, ours_first: bool
) -> dict[str, float]:
    """Seconds (wall, and ``*_cpu`` of this thread) for ``n`` events each way, raw and ours, on fresh
    topics (``ours_first``: which side goes first, alternated between rounds so a slow phase of a
    shared machine hits both sides)."""
    raw_topic, our_topic = f"bench.raw.{uuid.uuid4().hex[:8]}", f"bench.ours.{uuid.uuid4().hex[:8]}"
    make_topic(server, raw_topic)
    make_topic(server, our_topic)
    headers: list[tuple[str, str | bytes | None]] = list(record.headers)

    def raw_produce() -> tuple[float, float]:
        raw = Producer({"bootstrap.servers": server, **PRODUCER_SETTINGS})
        clock = Span()
        clock.start()
        for _ in range(n):
            while True:
                try:
                    raw.produce(raw_topic, value=record.value, key=record.key, headers=headers)
                    break
                except BufferError:
                    raw.poll(0.05)
            raw.poll(0)
        raw.flush(60)
        return clock.elapsed()

    def ours_produce() -> tuple[float, float]:
        clock = Span()
        clock.start()
        with EventProducer(server, source="bench", run_id="bench") as producer:
            for _ in range(n):
                producer.publish(event, topic=our_topic)
        return clock.elapsed()

    out: dict[str, float] = {}
    sides = [("ours", ours_produce, ours_consume, our_topic), ("raw", raw_produce, raw_consume, raw_topic)]
    if not ours_first:
        sides.reverse()
    for side, produce, _, _ in sides:
        out[f"{side}_produce"], out[f"{side}_produce_cpu"] = produce()
    for side, _, consume, topic in sides:
        out[f"{side}_consume"], out[f"{side}_consume_cpu"] = consume(server, topic, n)
    return out


def measure(
    count: int = 20000,
    bootstrap: str | None = None,
    jar_dir: Path = Path.home() / ".rlstream" / "kafka",
    tracing: bool = False,
    repeats: int = 1,
) -> dict[str, Any]:
    """Events/s produced and consumed by the raw client and by rlstream, and their ratios.

    With ``repeats`` > 1 the two sides are measured that many times, interleaved on one broker; the
    figures are the median round's and ``ratio_*_range`` the lowest and highest ratio of all rounds."""
    n = count
    if tracing:
        configure_tracing(TelemetryConfig(), "bench-bus")

    doc = json.loads(
        (Path(export.__file__).parent / "golden" / f"{CodeGenerated.ce_type()}.json").read_text()
    )
    event = CodeGenerated.model_validate(doc["body"])
    record = encode(event, Envelope.for_event(event, source="bench", run_id="bench"))
    size = len(record.value) + sum(len(k) + len(v) for k, v in record.headers)

    with broker(bootstrap, jar_dir) as server:
        raw = Producer({"bootstrap.servers": server, **PRODUCER_SETTINGS})
        headers: list[tuple[str, str | bytes | None]] = list(record.headers)
        warm = f"bench.warm.{uuid.uuid4().hex[:8]}"
        make_topic(server, warm)
        # a fresh broker needs a moment for producer ids and leaders: keep that out of both timings
        with EventProducer(server, source="bench") as producer:
            for _ in range(200):
                raw.produce(warm, value=record.value, key=record.key, headers=headers)
                producer.publish(event, topic=warm)
        raw.flush(60)
        rounds = [
            _one_round(server, event, record, n, ours_first=bool(i % 2)) for i in range(max(1, repeats))
        ]

    def ratios(key: str) -> list[float]:
        return [r[f"raw_{key}"] / r[f"ours_{key}"] for r in rounds]

    out: dict[str, Any] = {"events": n, "event_bytes": size, "repeats": len(rounds)}
    for way in ("produce", "consume"):
        by_ratio = sorted(zip(ratios(way), rounds, strict=True), key=lambda x: x[0])
        ratio, median = by_ratio[len(by_ratio) // 2]
        out[f"raw_{way}_per_s"] = n / median[f"raw_{way}"]
        out[f"ours_{way}_per_s"] = n / median[f"ours_{way}"]
        out[f"ratio_{way}"] = ratio
        out[f"ratio_{way}_range"] = (by_ratio[0][0], by_ratio[-1][0])
        # the same from the CPU this thread spent per event (steadier where other processes compete)
        by_cpu = sorted(zip(ratios(f"{way}_cpu"), rounds, strict=True), key=lambda x: x[0])
        cpu_ratio, cpu_median = by_cpu[len(by_cpu) // 2]
        out[f"raw_{way}_cpu_us"] = cpu_median[f"raw_{way}_cpu"] / n * 1e6
        out[f"ours_{way}_cpu_us"] = cpu_median[f"ours_{way}_cpu"] / n * 1e6
        out[f"cpu_ratio_{way}"] = cpu_ratio
        out[f"cpu_ratio_{way}_range"] = (by_cpu[0][0], by_cpu[-1][0])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=20000, help="events per side (default 20000)")
    parser.add_argument("--bootstrap", help="an existing cluster (default: a throwaway local broker)")
    parser.add_argument("--jar-dir", type=Path, default=Path.home() / ".rlstream" / "kafka")
    parser.add_argument("--tracing", action="store_true", help="install the tracing SDK (spans, no export)")
    parser.add_argument(
        "--repeats", type=int, default=1, help="rounds of raw and rlstream, interleaved (median, range)"
    )
    args = parser.parse_args()
    r = measure(args.count, args.bootstrap, args.jar_dir, args.tracing, args.repeats)
    n = args.count
    size = r["event_bytes"]
    print(f"{n} CodeGenerated events of {size} bytes (body + headers), tracing SDK: {args.tracing}")
    if r["repeats"] > 1:
        print(f"median of {r['repeats']} interleaved rounds; range: lowest-highest ratio of all rounds")
    print(f"{'':26}{'raw bytes':>14}{'rlstream':>14}{'ratio':>9}{'range':>13}")
    for name, way in (("produce (events/s)", "produce"), ("consume (events/s)", "consume")):
        lo, hi = r[f"ratio_{way}_range"]
        print(
            f"{name:26}{r[f'raw_{way}_per_s']:14,.0f}{r[f'ours_{way}_per_s']:14,.0f}{r[f'ratio_{way}']:9.2f}"
            f"{lo:8.2f}-{hi:.2f}"
        )
    for name, way in (("produce (CPU us/event)", "produce"), ("consume (CPU us/event)", "consume")):
        lo, hi = r[f"cpu_ratio_{way}_range"]
        print(
            f"{name:26}{r[f'raw_{way}_cpu_us']:14.1f}{r[f'ours_{way}_cpu_us']:14.1f}"
            f"{r[f'cpu_ratio_{way}']:9.2f}{lo:8.2f}-{hi:.2f}"
        )


if __name__ == "__main__":
    main()
