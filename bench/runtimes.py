"""The processor runtimes side by side: Kafka transactions, Faust at-least-once, Faust exactly_once.

For each runtime, in one run on one broker:

* **pass-through records/s**: a processor that turns each record into one output (batches of up to
  500), hosted by the runtime in a worker process of its own; timed from its first output to its last
  (broker timestamps), so start-up and rebalancing are left out;
* **after SIGKILL**: the same processor killed with SIGKILL twice while it works through the records
  (at a third and at two thirds of them) and restarted each time; then a ``read_committed`` reader counts
  the outputs: ``duplicates`` (records beyond one per input) and ``lost`` (inputs without an output);
* **pipeline samples/s**: generated programs through the sandbox, reward and filter processors, each a
  worker process on the runtime (``bench.pipeline``), with generation -> verdict latency.

    .venv/bin/python -m bench.runtimes [--records N] [--samples N] [--only transactional,faust,...]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition

from bench.bus import broker, make_topic
from infra.kafka.admin import ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.consumer import decode_message
from infra.kafka.producer import EventProducer
from infra.runtime.port import Emit, Hosted, Incoming
from infra.runtime.state import State
from schemas.errors import EventDecodeError
from schemas.rollout import RolloutRequested
from schemas.task import TaskPublished, TestCase
from schemas.topics import CATALOG

CACHE = Path.home() / ".rlstream"
#: runtime label -> (RLSTREAM_RUNTIME, Faust processing guarantee)
RUNTIMES: dict[str, tuple[str, str]] = {
    "transactional": ("transactional", "at_least_once"),
    "faust at_least_once": ("faust", "at_least_once"),
    "faust exactly_once": ("faust", "exactly_once"),
}
BATCH = 500


def passthrough(name: str, topic_in: str, topic_out: str) -> Hosted:
    """One output per input, its id derived from the input's (so a duplicate is recognisable)."""

    def handle(batch: Sequence[Incoming], state: State) -> list[Emit]:
        return [
            Emit(
                RolloutRequested(
                    group_id=f"{m.event.task_id}/0",
                    task_id=m.event.task_id,
                    group_size=1,
                    prompt="p",
                    entry_point="f",
                ),
                topic=topic_out,
            )
            for m in batch
            if isinstance(m.event, TaskPublished)
        ]

    return Hosted(name, (topic_in,), handle, batch_size=BATCH)


def worker(runtime: str, guarantee: str, bootstrap: str, topic_in: str, topic_out: str, name: str) -> None:
    """The pass-through processor hosted by ``runtime`` until its input is idle for 10 s."""
    from rlstream.settings import Settings

    processor = passthrough(name, topic_in, topic_out)
    stop = threading.Event()
    if runtime == "faust":
        from rlstream.workers import Built, faust_runner

        settings = Settings(kafka={"bootstrap_servers": bootstrap}, faust={"processing_guarantee": guarantee})
        faust_runner(settings, bootstrap, [Built(processor)]).run(stop, idle_exit_s=10.0)
    else:
        from infra.kafka.transactional import TransactionalProcessor

        TransactionalProcessor(processor, bootstrap=bootstrap).run(stop, idle_exit_s=10.0)


def _spawn(
    label: str, bootstrap: str, topic_in: str, topic_out: str, name: str, log: Path
) -> subprocess.Popen[bytes]:
    runtime, guarantee = RUNTIMES[label]
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bench.runtimes",
            "--worker",
            runtime,
            guarantee,
            bootstrap,
            topic_in,
            topic_out,
            name,
        ],
        stdout=subprocess.DEVNULL,
        stderr=log.open("ab"),
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        start_new_session=True,
    )


def _publish(bootstrap: str, topic: str, n: int) -> None:
    with EventProducer(bootstrap, source="bench") as producer:
        for i in range(n):
            producer.publish(
                TaskPublished(
                    task_id=f"r{i:06d}",
                    prompt="p",
                    entry_point="f",
                    tests=(TestCase(input="(1,)", output="1"),),
                ),
                topic=topic,
            )


def _written(bootstrap: str, topic: str) -> int:
    """Records on ``topic`` (high watermarks: what a worker wrote, committed or not)."""
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": uuid.uuid4().hex})
    try:
        parts = c.list_topics(topic, 30).topics[topic].partitions
        return sum(c.get_watermark_offsets(TopicPartition(topic, p), 30)[1] for p in parts)
    finally:
        c.close()


def _outputs(bootstrap: str, topic: str) -> list[tuple[str, float]]:
    """(task id, broker timestamp) of every committed output (``read_committed``)."""
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": uuid.uuid4().hex,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        parts = sorted(c.list_topics(topic, 30).topics[topic].partitions)
        c.assign([TopicPartition(topic, p, 0) for p in parts])
        open_parts, out = set(parts), []
        deadline = time.monotonic() + 300
        while open_parts and time.monotonic() < deadline:
            for msg in c.consume(1000, 1.0):
                if msg.error() is not None:
                    if msg.error().code() == KafkaError._PARTITION_EOF:  # type: ignore[union-attr]
                        open_parts.discard(msg.partition() or 0)
                    continue
                try:
                    event = decode_message(msg).event
                except EventDecodeError:
                    continue
                out.append((str(getattr(event, "task_id", "")), msg.timestamp()[1] / 1000.0))
        return out
    finally:
        c.close()


def _wait(proc: subprocess.Popen[bytes], timeout_s: float) -> None:
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        raise SystemExit(f"a worker did not finish within {timeout_s:.0f}s") from None


def throughput(label: str, bootstrap: str, n: int, logs: Path) -> dict[str, Any]:
    """Pass-through records/s on ``label``, from the first output to the last."""
    tin, tout = f"bench.rt.in.{uuid.uuid4().hex[:8]}", f"bench.rt.out.{uuid.uuid4().hex[:8]}"
    make_topic(bootstrap, tin)
    make_topic(bootstrap, tout)
    _publish(bootstrap, tin, n)
    _wait(_spawn(label, bootstrap, tin, tout, f"bench-{uuid.uuid4().hex[:8]}", logs / "throughput.log"), 1200)
    outs = _outputs(bootstrap, tout)
    covered = {task for task, _ in outs}
    times = sorted(ts for _, ts in outs)
    span = times[-1] - times[0] if len(times) > 1 else float("nan")
    return {"records": n, "records_per_s": round(n / span, 1) if span > 0 else None, "lost": n - len(covered)}


def after_kills(label: str, bootstrap: str, n: int, logs: Path, kills: int = 2) -> dict[str, Any]:
    """Duplicates and losses a read_committed reader sees after ``kills`` SIGKILLs mid-run."""
    tin, tout = f"bench.rt.in.{uuid.uuid4().hex[:8]}", f"bench.rt.out.{uuid.uuid4().hex[:8]}"
    make_topic(bootstrap, tin)
    make_topic(bootstrap, tout)
    _publish(bootstrap, tin, n)
    name = f"bench-{uuid.uuid4().hex[:8]}"
    log = logs / "kills.log"
    proc = _spawn(label, bootstrap, tin, tout, name, log)
    done_kills = 0
    deadline = time.monotonic() + 1200
    while done_kills < kills and time.monotonic() < deadline:
        if _written(bootstrap, tout) >= n * (done_kills + 1) / (kills + 1):
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            done_kills += 1
            proc = _spawn(label, bootstrap, tin, tout, name, log)
        elif proc.poll() is not None:
            break  # it finished before the kill could land
        time.sleep(0.05)
    _wait(proc, 1200)
    outs = _outputs(bootstrap, tout)
    per_task = Counter(task for task, _ in outs)
    return {
        "records": n,
        "kills": done_kills,
        "outputs": len(outs),
        "duplicates": sum(c - 1 for c in per_task.values()),
        "lost": n - len(per_task),
    }


def pipeline(label: str, bootstrap: str, samples: int) -> dict[str, Any]:
    from bench import pipeline as pipe

    runtime, guarantee = RUNTIMES[label]
    env = {"RLSTREAM_RUNTIME": runtime, "RLSTREAM_FAUST__PROCESSING_GUARANTEE": guarantee}
    # a runtime that stalls is reported as such after a few minutes rather than waited on for half an hour
    result = pipe.pipeline(bootstrap, samples, workers=2, env_extra=env, timeout_s=240)
    return {
        "samples": samples,
        "samples_per_s": round(result["samples_per_s"], 2),
        "latency_p50_s": round(result["latency_p50_s"], 3),
        "latency_p99_s": round(result["latency_p99_s"], 3),
    }


def measure(
    records: int = 20000,
    samples: int = 200,
    bootstrap: str | None = None,
    only: Sequence[str] = tuple(RUNTIMES),
    jar_dir: Path = CACHE / "kafka",
) -> dict[str, Any]:
    """Every figure for every runtime in ``only``; a figure that could not be measured says why."""
    out: dict[str, Any] = {"records": records, "samples": samples, "runtimes": {}}
    logs = Path(tempfile.mkdtemp(prefix="rlstream-bench-runtimes-"))
    out["logs"] = str(logs)
    with broker(bootstrap, jar_dir) as server:
        ensure_topics(server, KafkaConfig(), CATALOG)
        for label in only:
            figures: dict[str, Any] = {}
            for what, fn, args in (
                ("passthrough", throughput, (label, server, records, logs)),
                ("after_sigkill", after_kills, (label, server, records, logs)),
                ("pipeline", pipeline, (label, server, samples)),
            ):
                print(f"== {label}: {what}", flush=True)
                try:
                    figures[what] = fn(*args)  # type: ignore[operator]
                except (Exception, SystemExit) as exc:  # one failing figure must not cost the others
                    figures[what] = {"error": str(exc).strip().splitlines()[-1][:300] or type(exc).__name__}
                print(f"   {json.dumps(figures[what])}", flush=True)
            out["runtimes"][label] = figures
    base = out["runtimes"].get("transactional", {}).get("passthrough", {}).get("records_per_s")
    for figures in out["runtimes"].values():
        rate = figures.get("passthrough", {}).get("records_per_s")
        figures["ratio_to_transactional"] = round(rate / base, 3) if rate and base else None
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:8])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20000, help="pass-through records per figure")
    parser.add_argument("--samples", type=int, default=200, help="pipeline samples per runtime")
    parser.add_argument("--only", default=",".join(RUNTIMES), help="subset of: " + ", ".join(RUNTIMES))
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--jar-dir", type=Path, default=CACHE / "kafka")
    args = parser.parse_args()
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = [x for x in only if x not in RUNTIMES]
    if unknown:
        parser.error(f"unknown runtime(s) {unknown}; known: {', '.join(RUNTIMES)}")
    result = measure(args.records, args.samples, args.bootstrap, only, args.jar_dir)
    print("| runtime | pass-through records/s | after 2x SIGKILL: duplicates / lost | pipeline samples/s |")
    print("|---|---|---|---|")
    for label, f in result["runtimes"].items():
        kills = f.get("after_sigkill", {})
        print(
            f"| {label} | {f.get('passthrough', {}).get('records_per_s', f.get('passthrough'))} | "
            f"{kills.get('duplicates', kills)} / {kills.get('lost', '')} | "
            f"{f.get('pipeline', {}).get('samples_per_s', f.get('pipeline'))} |"
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
