"""End-to-end samples/s and generation->verdict latency of the stream pipeline, next to the sandbox
alone on the same programs in the same run, so the bus's cost shows as a ratio.

A trivial program (distinct per sample, so no result is served from a cache) is published as
CodeGenerated events; the sandbox, reward and filter processors turn each into an execution, a reward
and a verdict, exactly once: as three processes (``split`` layout) or as one process hosting all three
(``shared``, ``rlstream worker sandbox,reward,filter``). The baseline runs the same jobs through the
sandbox worker pool directly: each sample's run on the cases (``sandbox_only_per_s``, the historical
baseline), and the whole sandbox work the pipeline does (``sandbox_same_work_per_s``: that run, the
sample's probe run on its group's probe plan, and per group the reference's two runs of the plan, which
the filter makes), so ``ratio_to_same_work`` is what the bus and the processors cost beyond the
sandbox. Each repetition measures the baseline and then every layout, so a change
of the machine's load falls on all of them alike; the ratios are the medians over repetitions.

``--trickle N`` measures generation -> verdict at low load as well: N samples published one at a time,
each once the previous one's verdict was read, beside the sandbox pool's own time for the same work
(the program's run on the cases, then its probe run), with the time each stage's record was written and
read back, and the goal: p99 within the sandbox's own p99 + 100 ms. The filter warms the reference's
runs of a group's probe plan when the group's first probe run arrives (``warm_probe_references``): that
is on the sample's own path here as in a real run (the plan's seed is drawn by the sandbox after the
programs were written, so nothing can be warmed while a generator writes them), so the trickle needs no
gap between a group's request and its generations to be fair. ``--cold`` measures each layout with
warming off as well, in the same repetition (reported as ``<layout> cold``).

    .venv/bin/python -m bench.pipeline [--samples N] [--repeats R] [--layouts split,shared] [--trickle N]
        [--cold]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from statistics import median
from typing import Any, Literal

from confluent_kafka import Consumer, KafkaException, TopicPartition

from bench.bus import broker
from harness.trivial import TASK, program
from infra.kafka.admin import ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.consumer import decode_message
from infra.kafka.producer import EventProducer
from rlstream.layout import RunConfig, resolve
from schemas.rollout import CodeGenerated, NoiseVerdict
from schemas.topics import CATALOG, EXECUTIONS, REWARDS, VERDICTS
from streams.probe.plan import new_probe_seed
from streams.sandbox.config import SandboxConfig
from streams.sandbox.jobs import job_for, probe_job_for
from streams.sandbox.limits import Limits
from streams.sandbox.pool import SandboxPool
from streams.sandbox.service import Sandbox

CACHE = Path.home() / ".rlstream"


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


def sandbox_same_work(n: int, workers: int) -> float:
    """Samples/s of the sandbox pool alone doing the sandbox work the pipeline does for ``n`` samples:
    each sample's run on the cases, then its probe run on its group's probe plan (a fresh seed per group
    of 4, as the sandbox processor draws one), and per group the reference's two runs of that plan (the
    filter's). :func:`sandbox_only` runs the first of these alone."""
    config = SandboxConfig(cache_dir=CACHE / "cache" / "sandbox", workers=workers, result_cache_entries=0)
    limits = Sandbox(config).limits(timeout_s=TASK.limits.timeout_s, memory_mb=TASK.limits.memory_mb)
    assert TASK.reference is not None
    with SandboxPool(config) as pool:
        pool.warm_up("wasm")
        seeds = [new_probe_seed() for _ in range(0, n, 4)]
        t0 = time.perf_counter()
        results = pool.run_many(
            [job_for(TASK, program(-1 - i), limits)[0] for i in range(n)], "wasm", use_cache=False
        )
        later = []
        for i in range(n):
            probe = probe_job_for(TASK, program(-1 - i), limits, seed=seeds[i // 4])
            assert probe is not None
            later.append(replace(probe[0], clock_draw=1))
        for seed in seeds:
            for k in range(2):
                ref = probe_job_for(TASK, TASK.reference, limits, seed=seed)
                assert ref is not None
                later.append(replace(ref[0], clock_draw=k))
        results += pool.run_many(later, "wasm", use_cache=False)
        elapsed = time.perf_counter() - t0
    assert all(not r.infra_error for r in results)
    return n / elapsed


@contextlib.contextmanager
def _processors(
    bootstrap: str,
    workers: int,
    env_extra: dict[str, str] | None = None,
    layout: Literal["split", "shared"] = "split",
) -> Iterator[str]:
    """The sandbox, reward and filter processors of a fresh run (its id yielded), stopped on exit."""
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
        yield run_id
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(10)


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
    with _processors(bootstrap, workers, env_extra, layout) as run_id:
        # warm-up group: the processors join their groups and load the runtime before timing starts
        _publish_and_wait(bootstrap, run_id, "warm", 8, timeout_s=timeout_s / 2)
        latencies, elapsed = _publish_and_wait(bootstrap, run_id, "timed", n, timeout_s=timeout_s)
    latencies.sort()
    return {
        "samples_per_s": n / elapsed,
        "latency_p50_s": statistics.median(latencies),
        "latency_p99_s": _p99(latencies),
    }


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]


def _sample(run_id: str, tag: str, i: int) -> CodeGenerated:
    group = f"{run_id}/{tag}/{i // 4}"
    return CodeGenerated(
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


#: the goal's slack at low load: p99 generation -> verdict at most the sandbox's own p99 plus this
LOW_LOAD_SLACK_S = 0.1

#: the stages a trickled sample's records are timed at: each record's producer timestamp (when its
#: processor wrote it) and when this reader saw it committed
STAGES = (("execution", EXECUTIONS.name), ("reward", REWARDS.name), ("verdict", VERDICTS.name))


def sandbox_alone_times(n: int, workers: int) -> list[float]:
    """Seconds the sandbox pool takes for each of ``n`` samples of the trickle, one at a time, doing
    what the sandbox processor does for one: the program's run on the cases, then (it answered them
    all) its probe run on the task's probe plan under a fresh seed. What the sandbox itself takes for
    one sample at low load."""
    config = SandboxConfig(cache_dir=CACHE / "cache" / "sandbox", workers=workers, result_cache_entries=0)
    limits = Sandbox(config).limits(timeout_s=TASK.limits.timeout_s, memory_mb=TASK.limits.memory_mb)
    times: list[float] = []
    with SandboxPool(config) as pool:
        pool.warm_up("wasm")
        for i in range(n + 2):
            code = program(-10_000 - i)
            t0 = time.perf_counter()
            (first,) = pool.run_many([job_for(TASK, code, limits)[0]], "wasm", use_cache=False)
            probe = probe_job_for(TASK, code, limits, seed=new_probe_seed())
            assert probe is not None and not first.infra_error
            (second,) = pool.run_many([replace(probe[0], clock_draw=1)], "wasm", use_cache=False)
            if i >= 2:  # the first ones warm the guests up, as the pipeline's warm-up group does
                times.append(time.perf_counter() - t0)
            assert not second.infra_error
    return times


def trickle(
    bootstrap: str,
    n: int,
    workers: int,
    *,
    gap_s: float = 0.0,
    env_extra: dict[str, str] | None = None,
    layout: Literal["split", "shared"] = "split",
    timeout_s: float = 120,
) -> dict[str, Any]:
    """Generation -> verdict at low load: ``n`` samples published one at a time, each only after the
    previous one's verdict was seen (and ``gap_s`` more), so no sample waits behind another. Per sample:
    its publication (the producer's acknowledgement awaited), and for each stage of :data:`STAGES` the
    record's producer timestamp and when a ``read_committed`` reader here got it."""
    with _processors(bootstrap, workers, env_extra, layout) as run_id:
        _publish_and_wait(bootstrap, run_id, "warm", 8, timeout_s=timeout_s * 4)
        consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": uuid.uuid4().hex,
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        assignment = []
        for _, topic in STAGES:
            parts = consumer.list_topics(topic, 30).topics[topic].partitions
            assignment += [TopicPartition(topic, p, _end_offset(consumer, topic, p)) for p in parts]
        consumer.assign(assignment)
        samples: list[dict[str, float]] = []
        with EventProducer(bootstrap, source="bench", run_id=run_id) as producer:
            # sample 0 is not timed: a producer's first publication waits for its producer id
            for i in range(n + 1):
                sample = _sample(run_id, "trickle", i)
                t: dict[str, float] = {"index": i, "published": time.time()}
                producer.publish(sample)
                producer.flush()
                t["acked"] = time.time()
                deadline = time.time() + timeout_s
                while "verdict_seen" not in t:
                    if time.time() > deadline:
                        raise SystemExit(f"no verdict for trickled sample {i} within {timeout_s:.0f}s")
                    msg = consumer.poll(0.5)
                    if msg is None or msg.error() is not None:
                        continue
                    seen = time.time()
                    event = decode_message(msg).event
                    if getattr(event, "sample_id", None) != sample.sample_id:
                        continue
                    # a sample's executions are its run and then its probe run: the marks are the last's
                    stage = next(s for s, topic in STAGES if topic == msg.topic())
                    t[f"{stage}_written"] = msg.timestamp()[1] / 1000.0
                    t[f"{stage}_seen"] = seen
                if i:
                    samples.append(t)
                time.sleep(gap_s)
        consumer.close()
    return _trickle_figures(samples)


def _trickle_figures(samples: list[dict[str, float]]) -> dict[str, Any]:
    """Latency percentiles, and the median of each step between two consecutive marks of a sample."""
    latency = [s["verdict_seen"] - s["published"] for s in samples]
    # a group's first probe run draws the group's probe plan: the filter runs the reference on it
    firsts = [s["verdict_seen"] - s["published"] for s in samples if s["index"] % 4 == 0]
    others = [s["verdict_seen"] - s["published"] for s in samples if s["index"] % 4]
    marks = ["published", "acked"] + [
        f"{stage}_{what}" for stage, _ in STAGES for what in ("written", "seen")
    ]
    steps: dict[str, float] = {}
    for a, b in itertools.pairwise(marks):
        got = [s[b] - s[a] for s in samples if a in s and b in s]
        if got:
            steps[f"{a} -> {b}"] = round(statistics.median(got), 4)
    return {
        "latency_p50_s": statistics.median(latency),
        "latency_p99_s": _p99(latency),
        "latency_written_p50_s": statistics.median(s["verdict_written"] - s["published"] for s in samples),
        "group_first_p50_s": statistics.median(firsts) if firsts else float("nan"),
        "others_p50_s": statistics.median(others) if others else float("nan"),
        "others_p99_s": _p99(others) if others else float("nan"),
        "steps_median_s": steps,
        "samples": samples,
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
            sample = _sample(run_id, tag, i)
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
    trickle_samples: int = 0,
    cold: bool = False,
) -> dict[str, Any]:
    """Samples/s through sandbox -> reward -> filter on the bus in each of ``layouts``, next to the
    sandbox pool alone, ``repeats`` times interleaved (``samples`` 0: not measured). With
    ``trickle_samples``, generation -> verdict at low load too (:func:`trickle`), next to the sandbox
    pool's own time for the same samples, each repetition measuring the sandbox alone first; with
    ``cold``, each layout's trickle also with the filter's warming off (``<layout> cold``), beside
    it (first in every other repetition). The ``pipeline_*`` figures are those of the layout
    ``rlstream run`` picks on this machine (when measured)."""
    bases: list[float] = []
    same_work: list[float] = []
    runs: dict[str, list[dict[str, float]]] = {layout: [] for layout in layouts}
    alone: list[list[float]] = []
    variants: list[tuple[str, Literal["split", "shared"], dict[str, str]]]
    variants = [(layout, layout, {}) for layout in layouts]
    if cold:
        # the same layout with the filter running the reference's plan runs when the verdict needs them
        off = {"RLSTREAM_PIPELINE__WARM_PROBE_REFERENCES": "false"}
        variants = [v for layout in layouts for v in ((layout, layout, {}), (f"{layout} cold", layout, off))]
    trickles: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in variants}
    with broker(bootstrap, jar_dir) as server:
        for r in range(repeats):
            if samples:
                bases.append(sandbox_only(samples, workers))
                same_work.append(sandbox_same_work(samples, workers))
                for layout in layouts:
                    runs[layout].append(pipeline(server, samples, workers, layout=layout))
            if trickle_samples:
                alone.append(sandbox_alone_times(trickle_samples, workers))
                # with --cold, warm first in even repetitions and cold first in odd ones: an order
                # effect (the broker, the machine's load) falls on both alike
                order = (
                    variants
                    if r % 2 == 0
                    else [v for i in range(0, len(variants), 2) for v in variants[i : i + 2][::-1]]
                )
                for name, layout, env in order:
                    trickles[name].append(
                        trickle(server, trickle_samples, workers, env_extra=env, layout=layout)
                    )
    out: dict[str, Any] = {
        "samples": samples,
        "repeats": repeats,
        "load_average": round(os.getloadavg()[0], 1),
    }
    picked = resolve(RunConfig(), os.cpu_count(), "transactional")
    chosen_layout = picked if picked in layouts else layouts[0]
    if samples:
        out["sandbox_only_per_s"] = round(median(bases), 1)
        out["sandbox_same_work_per_s"] = round(median(same_work), 1)
        for name, got in runs.items():
            ratios = [r["samples_per_s"] / b for r, b in zip(got, bases, strict=True)]
            fair = [r["samples_per_s"] / b for r, b in zip(got, same_work, strict=True)]
            out[name] = {
                "samples_per_s": round(median([r["samples_per_s"] for r in got]), 1),
                "ratio_to_sandbox": round(median(ratios), 3),
                "ratios": [round(r, 3) for r in ratios],
                # against the sandbox doing the pipeline's whole sandbox work (probe runs included)
                "ratio_to_same_work": round(median(fair), 3),
                "ratios_to_same_work": [round(r, 3) for r in fair],
                "latency_p50_s": round(median([r["latency_p50_s"] for r in got]), 3),
                "latency_p99_s": round(median([r["latency_p99_s"] for r in got]), 3),
            }
        chosen = out[chosen_layout]
        out.update(
            {
                "layout": chosen_layout,
                "pipeline_samples_per_s": chosen["samples_per_s"],
                "ratio_pipeline_to_sandbox": chosen["ratio_to_sandbox"],
                "ratio_pipeline_to_same_work": chosen["ratio_to_same_work"],
                "bus_share_of_time": round(1 - chosen["ratio_to_sandbox"], 3),
                "latency_p50_s": chosen["latency_p50_s"],
                "latency_p99_s": chosen["latency_p99_s"],
            }
        )
    if trickle_samples:
        out["low_load"] = _low_load(trickle_samples, alone, trickles, chosen_layout)
    return out


def _low_load(
    n: int, alone: list[list[float]], trickles: dict[str, list[dict[str, Any]]], chosen: str
) -> dict[str, Any]:
    """The trickle's figures: per repetition the sandbox's own p50/p99 and each layout's, their
    medians over repetitions, and the goal (p99 generation -> verdict within the sandbox's own p99 +
    :data:`LOW_LOAD_SLACK_S`) judged on the medians."""
    sandbox_p50 = [statistics.median(a) for a in alone]
    sandbox_p99 = [_p99(a) for a in alone]
    low: dict[str, Any] = {
        "samples": n,
        "sandbox_p50_s": round(median(sandbox_p50), 4),
        "sandbox_p99_s": round(median(sandbox_p99), 4),
        "sandbox_p99_per_repeat_s": [round(x, 4) for x in sandbox_p99],
    }
    for layout, got in trickles.items():
        steps = {k: round(median([g["steps_median_s"][k] for g in got]), 4) for k in got[0]["steps_median_s"]}
        low[layout] = {
            "latency_p50_s": round(median([g["latency_p50_s"] for g in got]), 4),
            "latency_p99_s": round(median([g["latency_p99_s"] for g in got]), 4),
            "p50_per_repeat_s": [round(g["latency_p50_s"], 4) for g in got],
            "p99_per_repeat_s": [round(g["latency_p99_s"], 4) for g in got],
            # a group's first sample waits for the reference's runs of the group's fresh probe plan
            "group_first_p50_s": round(median([g["group_first_p50_s"] for g in got]), 4),
            "group_first_p50_per_repeat_s": [round(g["group_first_p50_s"], 4) for g in got],
            "others_p50_s": round(median([g["others_p50_s"] for g in got]), 4),
            "others_p99_s": round(median([g["others_p99_s"] for g in got]), 4),
            "steps_median_s": steps,
        }
    p99, limit = low[chosen]["latency_p99_s"], low["sandbox_p99_s"] + LOW_LOAD_SLACK_S
    low["layout"] = chosen
    low["goal"] = {
        "what": f"p99 generation -> verdict <= sandbox p99 + {LOW_LOAD_SLACK_S * 1000:.0f} ms ({chosen})",
        "got_s": p99,
        "limit_s": round(limit, 4),
        "met": p99 <= limit,
    }
    return low


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200, help="flooded samples (0: no flood)")
    parser.add_argument("--workers", type=int, default=2, help="sandbox pool workers (both sides)")
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--jar-dir", type=Path, default=CACHE / "kafka")
    parser.add_argument("--repeats", type=int, default=1, help="repetitions, interleaved (medians reported)")
    parser.add_argument("--layouts", default="split,shared", help="process layouts measured, comma-separated")
    parser.add_argument(
        "--trickle",
        type=int,
        default=0,
        metavar="N",
        help="also N samples at low load, one at a time (generation -> verdict, the sandbox's own time)",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="the trickle also with the filter's warming of the reference's plan runs off, interleaved",
    )
    args = parser.parse_args()
    layouts = tuple(x for x in args.layouts.split(",") if x in ("split", "shared"))
    result = measure(
        args.samples,
        args.workers,
        args.bootstrap,
        args.jar_dir,
        layouts=layouts,
        repeats=args.repeats,
        trickle_samples=args.trickle,
        cold=args.cold,
    )
    print("| measure | value |\n|---|---|")
    for key, value in result.items():
        print(f"| {key} | {value} |")
    low = result.get("low_load")
    if low:
        for layout in [k for k in low if isinstance(low[k], dict) and "latency_p50_s" in low[k]]:
            got = {k: v * 1000 for k, v in low[layout].items() if isinstance(v, float)}
            print(
                f"low load, {layout}: generation -> verdict p50 {got['latency_p50_s']:.0f} ms, "
                f"p99 {got['latency_p99_s']:.0f} ms (a group's first sample p50 "
                f"{got['group_first_p50_s']:.0f} ms, the others p99 {got['others_p99_s']:.0f} ms); "
                f"sandbox alone p50 {low['sandbox_p50_s'] * 1000:.0f} ms, "
                f"p99 {low['sandbox_p99_s'] * 1000:.0f} ms"
            )
        goal = low["goal"]
        print(
            f"goal: {goal['what']}: {goal['got_s'] * 1000:.0f} ms vs {goal['limit_s'] * 1000:.0f} ms: "
            f"{'met' if goal['met'] else 'not met'}"
        )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
