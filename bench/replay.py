"""Audit throughput: executions per second through ``replay --verify`` (read the audit's topics, decode,
re-score with the real reward function, re-judge the verdict, compare) next to a raw consume of the
same ``rl.executions`` records as plain confluent-kafka bytes, measured in the same run. Every side is
timed end to end, from creating its consumers to the end of the topic(s).

A synthetic log is published first (not timed): tasks with references, one distinct program per sample
(passing or failing), its execution, the reference runs, the rewards scored by ``code-v1`` with the
real linter, and the verdicts, exactly as the processors write them.

    .venv/bin/python -m bench.replay [--samples N] [--bootstrap HOST:PORT]

Without --bootstrap a throwaway single-node broker is started from the cached jars and stopped at the
end; with one, the log goes there under a fresh run id (the raw side then reads the whole topic).
"""

from __future__ import annotations

import argparse
import random
import time
import uuid
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from bench.bus import broker
from consumers.audit import Audit, Resolver
from consumers.verify import verify_log
from infra.kafka.admin import ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.producer import EventProducer
from infra.kafka.replay import replay
from schemas.base import Event
from schemas.reference import ReferenceExecuted
from schemas.rollout import CaseResult, CodeGenerated, SandboxExecuted
from schemas.task import TaskPublished, TestCase
from schemas.topics import CATALOG, EXECUTIONS
from streams.noise.config import NoiseConfig
from streams.noise.filter import filter_sample
from streams.noise.rules import assess_task
from streams.reward.config import RewardConfig
from streams.reward.function import get_reward_function
from streams.reward.lint import RuffLinter

JAR_DIR = Path.home() / ".rlstream" / "kafka"


def _task(i: int) -> TaskPublished:
    return TaskPublished(
        task_id=f"bench/add{i}",
        prompt=f'def add{i}(x: int) -> int:\n    """Return x + {i}."""\n',
        entry_point=f"add{i}",
        tests=(TestCase(input="(1,)", output=str(1 + i)),),
        hidden_tests=(
            TestCase(input="(10,)", output=str(10 + i)),
            TestCase(input="(-3,)", output=str(i - 3)),
        ),
        reference=f"def add{i}(x):\n    return x + {i}\n",
    )


def _run(
    task: TaskPublished, sample_id: str, group_id: str, outputs: list[str], rng: random.Random
) -> SandboxExecuted:
    return SandboxExecuted(
        sample_id=sample_id,
        group_id=group_id,
        task_id=task.task_id,
        backend="wasm",
        cases=tuple(
            CaseResult(
                index=k, hidden=k > 0, status="ok", result_repr=out, duration_s=rng.uniform(1e-5, 3e-3)
            )
            for k, out in enumerate(outputs)
        ),
        exit_code=0,
        duration_s=rng.uniform(0.02, 0.05),
    )


def synthetic_log(run_id: str, samples: int, tasks: int = 16, seed: int = 7) -> list[Event]:
    """A run's log as the processors write it, with one distinct program per sample."""
    rng = random.Random(seed)
    config = RewardConfig()
    linter = RuffLinter(config.lint_select, config.ruff_path)
    fn = get_reward_function("code-v1", config, linter=linter)
    noise = NoiseConfig()
    options = fn.compare_options()
    all_tasks = [_task(i + 1) for i in range(tasks)]
    refs = {}
    for t in all_tasks:
        expected = [c.output for c in (*t.tests, *t.hidden_tests)]
        run = _run(t, f"{t.task_id}#reference", f"{t.task_id}#reference", expected, rng)
        refs[t.task_id] = ReferenceExecuted(
            task_id=t.task_id, task_event_id=t.event_id(), backend="wasm", execution=run
        )
    log: list[Event] = [*all_tasks, *refs.values()]
    pending: list[tuple[TaskPublished, CodeGenerated, SandboxExecuted]] = []
    for n in range(samples):
        t = all_tasks[n % tasks]
        i = int(t.task_id.removeprefix("bench/add"))
        group = f"{run_id}/{t.task_id}/{n // tasks}"
        ok = rng.random() < 0.6
        code = (
            f"def {t.entry_point}(x):\n    v{n} = x + {i}\n    return v{n}\n"
            if ok
            else f"def {t.entry_point}(x):\n    return x - {n}\n"
        )
        gen = CodeGenerated(
            sample_id=f"{group}/0",
            group_id=group,
            task_id=t.task_id,
            sample_index=0,
            policy_version=0,
            model="bench",
            prompt_text=t.prompt,
            completion_text=code,
            code=code,
        )
        args = [int(c.input.strip("(),")) for c in (*t.tests, *t.hidden_tests)]
        outputs = [str(a + i) if ok else str(a - n) for a in args]
        pending.append((t, gen, _run(t, gen.sample_id, group, outputs, rng)))
    linter.warm([g.code for _, g, _ in pending] + [t.reference or "" for t in all_tasks])
    for t, gen, x in pending:
        ref = refs[t.task_id]
        reward = fn.scored_event(t, gen.code, x, ref.execution, reference_event_id=ref.event_id())
        quality = assess_task(t, options, min_cases=noise.min_cases, reference_execution=ref.execution)
        verdict = filter_sample(
            task=t,
            code=gen.code,
            executions=[x],
            reward=reward,
            config=noise,
            options=options,
            task_quality=quality,
        )
        log += [gen, x, reward, verdict]
    return log


def _raw_consume(bootstrap: str, topic: str) -> tuple[int, float]:
    """(records, seconds) to read every record of ``topic`` as bytes, timed like the replay: from
    creating the consumer to the end of the topic."""
    t0 = time.perf_counter()
    c = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": uuid.uuid4().hex,
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    parts = sorted(c.list_topics(topic, 30).topics[topic].partitions)
    ends = {p: c.get_watermark_offsets(TopicPartition(topic, p), 30)[1] for p in parts}
    c.assign([TopicPartition(topic, p, 0) for p in parts])
    got = 0
    last_progress = time.perf_counter()
    while True:
        # a short wait: consume() blocks until it has the whole batch or the timeout passes, so a long
        # one charged the raw side seconds of idle waiting after the topic's last record
        batch = c.consume(1000, 0.05)
        got += sum(1 for m in batch if m.error() is None and m.value() is not None)
        positions = c.position([TopicPartition(topic, p) for p in parts])
        if all(tp.offset >= ends[tp.partition] for tp in positions if ends[tp.partition] > 0):
            break
        if batch:
            last_progress = time.perf_counter()
        elif time.perf_counter() - last_progress > 30:
            raise SystemExit(f"raw consumer stalled at {got} records")
    c.close()
    return got, time.perf_counter() - t0


def measure(samples: int = 2000, bootstrap: str | None = None, jar_dir: Path = JAR_DIR) -> dict[str, Any]:
    """Executions/s of replay+verify and of a raw consume of the same topic, and their ratio."""
    run_id = f"bench-replay-{uuid.uuid4().hex[:8]}"
    log = synthetic_log(run_id, samples)
    with broker(bootstrap, jar_dir) as server:
        ensure_topics(server, KafkaConfig(), CATALOG)
        with EventProducer(server, source="bench/replay", run_id=run_id) as producer:
            for event in log:
                producer.publish(event)

        # one untimed pass first: the broker's page cache then serves every side alike
        _raw_consume(server, EXECUTIONS.name)
        raw_n, raw_s = _raw_consume(server, EXECUTIONS.name)

        t0 = time.perf_counter()
        decoded = sum(1 for _ in replay(server, EXECUTIONS.name))
        replay_s = time.perf_counter() - t0

        audit = Audit(Resolver(RewardConfig()), noise=NoiseConfig())
        t0 = time.perf_counter()
        result = verify_log(server, audit, run_id=run_id)
        verify_s = time.perf_counter() - t0
    report = result.report
    if not report.ok or report.executions != samples:
        raise SystemExit(f"the audit of the synthetic log failed: {report.summary()}")
    raw_rate = raw_n / raw_s
    verify_rate = report.executions / verify_s
    return {
        "samples": samples,
        "records_read_by_verify": result.records,
        "raw_consume_per_s": raw_rate,
        "replay_per_s": decoded / replay_s,
        "verify_per_s": verify_rate,
        "verify_s": verify_s,
        "ratio_replay": (decoded / replay_s) / raw_rate,
        "ratio_verify": verify_rate / raw_rate,
        "differences": len(report.differences),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000, help="executions to audit (default 2000)")
    parser.add_argument("--bootstrap", help="an existing cluster (default: a throwaway local broker)")
    parser.add_argument("--jar-dir", type=Path, default=JAR_DIR)
    args = parser.parse_args()
    r = measure(args.samples, args.bootstrap, args.jar_dir)
    print(
        f"{r['samples']} executions (verify read {r['records_read_by_verify']} records over the audit's "
        f"topics, re-scored with code-v1 and re-judged, {r['differences']} differences)"
    )
    print(f"{'':34}{'events/s':>12}{'ratio':>9}")
    print(f"{'raw consume of rl.executions':34}{r['raw_consume_per_s']:12,.0f}{1.0:9.2f}")
    print(f"{'replay (decode) of rl.executions':34}{r['replay_per_s']:12,.0f}{r['ratio_replay']:9.3f}")
    print(f"{'replay + verify':34}{r['verify_per_s']:12,.0f}{r['ratio_verify']:9.4f}")


if __name__ == "__main__":
    main()
