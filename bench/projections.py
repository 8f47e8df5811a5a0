"""Events per second the projector applies (decode, fold, upsert, pass@k, offsets: one SQL transaction
per batch) into SQLite and PostgreSQL, next to a raw read_committed consume + decode of the same topics.

A whole synthetic run (tasks, groups, samples, executions with re-runs, rewards, verdicts, experiences,
policy versions, reviews) is published to fresh topics, then each side reads all of it from offset 0;
the ratio is what projecting costs over just reading the log.

    .venv/bin/python -m bench.projections [--tasks N] [--epochs E] [--bootstrap HOST:PORT] [--pg-url URL]

Without --bootstrap a throwaway broker is started from the cached jars; without --pg-url a throwaway
PostgreSQL cluster (fsync off) is started with the test set-up's launcher.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from confluent_kafka.cimpl import NewTopic

from bench.bus import broker
from consumers.projections.config import ProjectionConfig
from consumers.projections.projector import Projector
from consumers.projections.store import make_engine, migrate
from harness.projections import run_stream
from infra.kafka.admin import admin_client
from infra.kafka.consumer import decode_message
from infra.kafka.producer import EventProducer
from schemas.errors import EventDecodeError
from schemas.topics import EVENT_TOPICS, topic_for


def make_topics(bootstrap: str) -> dict[str, str]:
    names = {t.name: f"bench.{t.name}.{uuid.uuid4().hex[:8]}" for t in EVENT_TOPICS}
    admin = admin_client(bootstrap)
    new = [
        NewTopic(names[t.name], num_partitions=t.partitions or 3, replication_factor=-1) for t in EVENT_TOPICS
    ]
    for f in admin.create_topics(new).values():
        f.result(30)
    return names


def raw_read(bootstrap: str, topics: list[str], total: int) -> float:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"bench.{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    parts = [
        TopicPartition(t, p, 0)
        for t in topics
        for p in sorted(consumer.list_topics(t, 30).topics[t].partitions)
    ]
    consumer.assign(parts)
    n = 0
    t0 = time.monotonic()
    while n < total:
        for msg in consumer.consume(2000, 0.5):
            if msg.error() is not None:
                continue
            with contextlib.suppress(EventDecodeError):
                decode_message(msg)
            n += 1
    took = time.monotonic() - t0
    consumer.close()
    return took


def project(bootstrap: str, url: str, topics: list[str]) -> tuple[int, float]:
    engine = make_engine(url)
    try:
        migrate(engine)  # outside the timing
        t0 = time.monotonic()
        stats = Projector(bootstrap, engine, ProjectionConfig(topics=tuple(topics))).catch_up()
        return stats.consumed, time.monotonic() - t0
    finally:
        engine.dispose()


def measure(bootstrap: str, *, tasks: int = 40, epochs: int = 8, pg_url: str | None = None) -> dict[str, Any]:
    """Publish one synthetic run to fresh topics and time a raw read and both projections of it."""
    events, _ = run_stream(f"bench-{uuid.uuid4().hex[:6]}", tasks=tasks, epochs=epochs)
    names = make_topics(bootstrap)
    with EventProducer(bootstrap, source="bench", run_id="bench") as producer:
        for p in events:
            producer.publish(
                p.event, topic=names[topic_for(type(p.event).__name__).name], causation_id=p.causation_id
            )
        producer.flush()
    topics = list(names.values())
    total = len(events)
    raw_s = raw_read(bootstrap, topics, total)
    tmp = Path(tempfile.mkdtemp(prefix="rlstream-bench-proj-"))
    cluster = None
    try:
        n_sqlite, sqlite_s = project(bootstrap, f"sqlite:///{tmp / 'bench.sqlite'}", topics)
        if pg_url is None:
            from harness.postgres import start_cluster

            cluster = start_cluster()
            pg_url = cluster.new_database("bench")
        n_pg, pg_s = project(bootstrap, pg_url, topics)
    finally:
        if cluster is not None:
            cluster.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return {
        "events": total,
        "topics": len(topics),
        "raw_per_s": total / raw_s,
        "sqlite_per_s": n_sqlite / sqlite_s,
        "postgresql_per_s": n_pg / pg_s,
        "ratio_sqlite": raw_s / sqlite_s,
        "ratio_postgresql": raw_s / pg_s,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=40)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--bootstrap")
    ap.add_argument("--jar-dir", type=Path, default=Path.home() / ".rlstream" / "kafka")
    ap.add_argument("--pg-url", help="an empty PostgreSQL database (default: a throwaway cluster)")
    args = ap.parse_args()
    with broker(args.bootstrap, args.jar_dir) as bootstrap:
        r = measure(bootstrap, tasks=args.tasks, epochs=args.epochs, pg_url=args.pg_url)
    print(f"{r['events']} events of one run on {r['topics']} topics")
    print(f"raw consume + decode : {r['raw_per_s']:8.0f} events/s")
    print(f"projector, SQLite    : {r['sqlite_per_s']:8.0f} events/s  ({r['ratio_sqlite']:.2f}x raw)")
    print(f"projector, PostgreSQL: {r['postgresql_per_s']:8.0f} events/s  ({r['ratio_postgresql']:.2f}x raw)")


if __name__ == "__main__":
    main()
