"""End-to-end samples/s and generation->verdict latency of the stream pipeline, next to the sandbox
alone on the same programs in the same run, so the bus's cost shows as a ratio.

A trivial program (distinct per sample, so no result is served from a cache) is published as
CodeGenerated events; the sandbox, reward and filter processors turn each into an execution, a reward
and a verdict, exactly once: as three processes (``split`` layout) or as one process hosting all three
(``shared``, ``rlstream worker sandbox,reward,filter``). The baseline runs the same jobs through the
sandbox worker pool directly. Each repetition measures the baseline and then every layout, so a change
of the machine's load falls on all of them alike; the ratios are the medians over repetitions.

    .venv/bin/python -m bench.pipeline [--samples N] [--repeats R] [--layouts split,shared]
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
from statistics import median
from typing import Any, Literal

from confluent_kafka import Consumer, KafkaException, TopicPartition

from bench.bus import broker
from infra.kafka.admin import ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.consumer import decode_message
from infra.kafka.producer import EventProducer
from rlstream.layout import RunConfig, resolve
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
    bootstrap: str,
    n: int,
    workers: int,
    env_extra: dict[str, str] | None = None,
    timeout_s: float = 1200,
    layout: Literal["split", "shared"] = "split",
) -> dict[str, float]:
    """``env_extra``: settings for the processors (e.g. ``RLSTREAM_RUNTIME=faust``); ``timeout_s``: how
    long the timed samples may take (the warm-up group half that); ``layout``: the three processors as
    processes of their own or sharing one."""
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
    names = ("sandbox", "reward", "filter")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "rlstream.cli", "worker", name],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(home / f"{name.replace(',', '+')}.log").open("wb"),
        )
        for name in (names if layout == "split" else (",".join(names),))
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
    samples: int = 200,
    workers: int = 2,
    bootstrap: str | None = None,
    jar_dir: Path = CACHE / "kafka",
    *,
    layouts: tuple[Literal["split", "shared"], ...] = ("split", "shared"),
    repeats: int = 1,
) -> dict[str, Any]:
    """Samples/s through sandbox -> reward -> filter on the bus in each of ``layouts``, next to the
    sandbox pool alone, ``repeats`` times interleaved. The ``pipeline_*`` figures are those of the
    layout ``rlstream run`` picks on this machine (when measured)."""
    bases: list[float] = []
    runs: dict[str, list[dict[str, float]]] = {layout: [] for layout in layouts}
    with broker(bootstrap, jar_dir) as server:
        for _ in range(repeats):
            bases.append(sandbox_only(samples, workers))
            for layout in layouts:
                runs[layout].append(pipeline(server, samples, workers, layout=layout))
    out: dict[str, Any] = {"samples": samples, "repeats": repeats}
    out["sandbox_only_per_s"] = round(median(bases), 1)
    for name, got in runs.items():
        ratios = [r["samples_per_s"] / b for r, b in zip(got, bases, strict=True)]
        out[name] = {
            "samples_per_s": round(median([r["samples_per_s"] for r in got]), 1),
            "ratio_to_sandbox": round(median(ratios), 3),
            "ratios": [round(r, 3) for r in ratios],
            "latency_p50_s": round(median([r["latency_p50_s"] for r in got]), 3),
            "latency_p99_s": round(median([r["latency_p99_s"] for r in got]), 3),
        }
    picked = resolve(RunConfig(), os.cpu_count(), "transactional")
    chosen = out.get(picked) or out[layouts[0]]
    out.update(
        {
            "layout": picked if picked in out else layouts[0],
            "pipeline_samples_per_s": chosen["samples_per_s"],
            "ratio_pipeline_to_sandbox": chosen["ratio_to_sandbox"],
            "bus_share_of_time": round(1 - chosen["ratio_to_sandbox"], 3),
            "latency_p50_s": chosen["latency_p50_s"],
            "latency_p99_s": chosen["latency_p99_s"],
        }
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2, help="sandbox pool workers (both sides)")
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--jar-dir", type=Path, default=CACHE / "kafka")
    parser.add_argument("--repeats", type=int, default=1, help="repetitions, interleaved (medians reported)")
    parser.add_argument("--layouts", default="split,shared", help="process layouts measured, comma-separated")
    args = parser.parse_args()
    layouts = tuple(x for x in args.layouts.split(",") if x in ("split", "shared"))
    result = measure(
        args.samples, args.workers, args.bootstrap, args.jar_dir, layouts=layouts, repeats=args.repeats
    )
    print("| measure | value |\n|---|---|")
    for key, value in result.items():
        print(f"| {key} | {value} |")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
