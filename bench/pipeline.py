"""End-to-end samples/s and generation->verdict latency of the stream pipeline, next to the sandbox
alone on the same programs in the same run, so the bus's cost shows as a ratio.

A trivial program (distinct per sample, so no result is served from a cache) is published as
CodeGenerated events; the sandbox, reward and filter processors run as their own processes and turn
each into an execution, a reward and a verdict, exactly once. The baseline runs the same jobs through
the sandbox worker pool directly.

    .venv/bin/python -m bench.pipeline [--samples N] [--bootstrap HOST:PORT]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from confluent_kafka import Consumer, KafkaException, TopicPartition

from bench.bus import broker
from infra.kafka.admin import ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.consumer import decode_message
from infra.kafka.producer import EventProducer
from schemas.rollout import CodeGenerated, NoiseVerdict
from schemas.task import TaskPublished, TestCase
from schemas.topics import CATALOG, VERDICTS
from streams.sandbox.config import SandboxConfig
from streams.sandbox.jobs import job_for
from streams.sandbox.limits import Limits
from streams.sandbox.pool import SandboxPool

CACHE = Path.home() / ".rlstream"
TASK = TaskPublished(
    task_id="bench/identity",
    prompt='def ident(x):\n    """Return x."""\n',
    entry_point="ident",
    tests=(TestCase(input="(1,)", output="1"),),
    hidden_tests=(TestCase(input="('a',)", output="'a'"), TestCase(input="([2, 3],)", output="[2, 3]")),
    reference="def ident(x):\n    return x\n",
)


def program(i: int) -> str:
    return f"def ident(x):\n    # sample {i}\n    return x\n"


def sandbox_only(n: int, workers: int) -> float:
    config = SandboxConfig(cache_dir=CACHE / "cache" / "sandbox", workers=workers, result_cache_entries=0)
    with SandboxPool(config) as pool:
        pool.warm_up("wasm")
        jobs = [job_for(TASK, program(-1 - i), Limits())[0] for i in range(n)]
        t0 = time.perf_counter()
        results = pool.run_many(jobs, "wasm", use_cache=False)
        elapsed = time.perf_counter() - t0
    assert all(not r.infra_error for r in results)
    return n / elapsed


def pipeline(
    bootstrap: str, n: int, workers: int, env_extra: dict[str, str] | None = None, timeout_s: float = 1200
) -> dict[str, float]:
    """``env_extra``: settings for the processors (e.g. ``RLSTREAM_RUNTIME=faust``); ``timeout_s``: how
    long the timed samples may take (the warm-up group half that)."""
    ensure_topics(bootstrap, KafkaConfig(), CATALOG)
    run_id = f"bench-{uuid.uuid4().hex[:8]}"
    home = Path(tempfile.mkdtemp(prefix="rlstream-bench-"))
    env = {
        **os.environ,
        "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "RLSTREAM_HOME": str(home),
        "RLSTREAM_RUN_ID": run_id,
        "RLSTREAM_SANDBOX__CACHE_DIR": str(CACHE / "cache" / "sandbox"),
        "RLSTREAM_SANDBOX__WORKERS": str(workers),
        "RLSTREAM_SANDBOX__BACKEND": "wasm",
        "RLSTREAM_PIPELINE__BATCH_SIZE": "16",
        **(env_extra or {}),
    }
    with EventProducer(bootstrap, source="bench", run_id=run_id) as producer:
        producer.publish(TASK)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "rlstream.cli", "worker", name],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(home / f"{name}.log").open("wb"),
        )
        for name in ("sandbox", "reward", "filter")
    ]
    try:
        # warm-up group: the processors join their groups and load the runtime before timing starts
        _publish_and_wait(bootstrap, run_id, "warm", 8, timeout_s=timeout_s / 2)
        latencies, elapsed = _publish_and_wait(bootstrap, run_id, "timed", n, timeout_s=timeout_s)
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)
    latencies.sort()
    return {
        "samples_per_s": n / elapsed,
        "latency_p50_s": statistics.median(latencies),
        "latency_p99_s": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
    }


def _end_offset(consumer: Consumer, topic: str, partition: int) -> int:
    """The partition's end offset; on fresh topics of a loaded broker a leader may still be elected."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return int(consumer.get_watermark_offsets(TopicPartition(topic, partition), 30)[1])
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def _publish_and_wait(
    bootstrap: str, run_id: str, tag: str, n: int, timeout_s: float
) -> tuple[list[float], float]:
    """Latency of each sample (its publication to its verdict's broker timestamp), and the time from
    the first publication to the last verdict."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": uuid.uuid4().hex,
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    parts = consumer.list_topics(VERDICTS.name, 30).topics[VERDICTS.name].partitions
    ends = {p: _end_offset(consumer, VERDICTS.name, p) for p in parts}
    consumer.assign([TopicPartition(VERDICTS.name, p, end) for p, end in ends.items()])
    sent: dict[str, float] = {}
    with EventProducer(bootstrap, source="bench", run_id=run_id) as producer:
        for i in range(n):
            group = f"{run_id}/{tag}/{i // 4}"
            sample = CodeGenerated(
                sample_id=f"{group}/{i % 4}",
                group_id=group,
                task_id=TASK.task_id,
                sample_index=i % 4,
                policy_version=0,
                model="none",
                prompt_text=TASK.prompt,
                completion_text="",
                code=program(i),
            )
            sent[sample.sample_id] = time.time()
            producer.publish(sample)
    first_sent = min(sent.values())
    latencies: list[float] = []
    last = first_sent
    deadline = time.time() + timeout_s
    while len(latencies) < n and time.time() < deadline:
        msg = consumer.poll(1.0)
        if msg is None or msg.error() is not None:
            continue
        event = decode_message(msg).event
        if isinstance(event, NoiseVerdict) and event.sample_id in sent:
            at = msg.timestamp()[1] / 1000.0
            latencies.append(at - sent.pop(event.sample_id))
            last = max(last, at)
    consumer.close()
    if len(latencies) < n:
        raise SystemExit(f"only {len(latencies)}/{n} verdicts within {timeout_s:.0f}s")
    return latencies, last - first_sent


def measure(
    samples: int = 200, workers: int = 2, bootstrap: str | None = None, jar_dir: Path = CACHE / "kafka"
) -> dict[str, float]:
    """Samples/s through sandbox -> reward -> filter on the bus, next to the sandbox pool alone."""
    base = sandbox_only(samples, workers)
    with broker(bootstrap, jar_dir) as server:
        pipe = pipeline(server, samples, workers)
    return {
        "samples": samples,
        "sandbox_only_per_s": round(base, 1),
        "pipeline_samples_per_s": round(pipe["samples_per_s"], 1),
        "ratio_pipeline_to_sandbox": round(pipe["samples_per_s"] / base, 3),
        "bus_share_of_time": round(1 - pipe["samples_per_s"] / base, 3),
        "latency_p50_s": round(pipe["latency_p50_s"], 3),
        "latency_p99_s": round(pipe["latency_p99_s"], 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2, help="sandbox pool workers (both sides)")
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--jar-dir", type=Path, default=CACHE / "kafka")
    args = parser.parse_args()
    result = measure(args.samples, args.workers, args.bootstrap, args.jar_dir)
    print("| measure | value |\n|---|---|")
    for key, value in result.items():
        print(f"| {key} | {value} |")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
