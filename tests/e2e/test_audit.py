"""Audit replay on the real broker: the sandbox, reward and filter processors score hand-written
programs (passing fast and slow, failing, a forced exit, answers served in call order), then ``rlstream
replay --verify`` re-scores and re-judges them from the log alone (probe runs and the reference's runs of
the probe plan included): zero differences, byte for byte; a counterfactual weight reports exactly the
samples it moves; a tampered reward is reported; a time window selects exactly the events in it."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from consumers.audit import Audit, Counterfactual, Report, Resolver
from consumers.verify import verify_log
from infra.kafka.consumer import decode_message
from infra.kafka.producer import EventProducer
from rlstream.settings import get_settings
from schemas.errors import EventDecodeError
from schemas.reference import ReferenceExecuted
from schemas.rollout import NoiseVerdict, RewardScored, SandboxExecuted
from tests.cli_support import run_cli
from tests.e2e.conftest import Workers, add_task, hand_written, read_topic

PROGRAMS = {
    "fast": "def {f}(x):\n    return x + {i}\n",
    "slow": "def {f}(x):\n    t = 0\n    for k in range(60000):\n        t += k % 2\n"
    "    return x + {i} + t * 0\n",
    "wrong": "def {f}(x):\n    return x\n",
    "exit": "import sys\n\ndef {f}(x):\n    sys.exit(0)\n",
    # answers served in the order the cases are asked: passes its run, not the probe's other order
    "memo": "_N = [0]\n\ndef {f}(x):\n    _N[0] += 1\n"
    "    return [1 + {i}, 10 + {i}, {i} - 3][(_N[0] - 1) % 3]\n",
}


def _of_run(bootstrap: str, topic: str, run_id: str) -> list[Any]:
    return [e for _, e in read_topic(bootstrap, topic) if str(getattr(e, "group_id", "")).startswith(run_id)]


def _wait_scored(bootstrap: str, run_id: str, n: int, w: Workers) -> None:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if len(_of_run(bootstrap, "rl.verdicts", run_id)) >= n:
            return
        time.sleep(2)
    tails = "\n".join(f"--- {name}\n{w.log_tail(name)}" for name in w.procs)
    raise AssertionError(f"timed out waiting for {n} verdicts\n{tails}")


def _cli(w: Workers, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("replay", *args, env=w.env, timeout=600)


def _verify(w: Workers, *args: str) -> tuple[int, dict[str, Any]]:
    done = _cli(w, "--verify", "--json", *args)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def _in_process(
    bootstrap: str,
    run_id: str,
    cf: Counterfactual | None = None,
    from_time: datetime | None = None,
    to_time: datetime | None = None,
) -> Report:
    settings = get_settings()
    audit = Audit(Resolver(settings.reward), counterfactual=cf, noise=settings.noise)
    return verify_log(bootstrap, audit, run_id=run_id, from_time=from_time, to_time=to_time).report


def _raw_bodies(bootstrap: str, topic: str, run_id: str) -> list[tuple[bytes, RewardScored]]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check.{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    parts = sorted(consumer.list_topics(topic, 30).topics[topic].partitions)
    ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), 30)[1] for p in parts}
    consumer.assign([TopicPartition(topic, p, 0) for p in parts])
    out: list[tuple[bytes, RewardScored]] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for msg in consumer.consume(1000, 0.5):
            if msg.error() is not None:
                continue
            try:
                event = decode_message(msg).event
            except EventDecodeError:
                continue  # another test's poison record on the shared broker: not this run's
            if isinstance(event, RewardScored) and event.group_id.startswith(run_id):
                out.append((msg.value() or b"", event))
        positions = consumer.position([TopicPartition(topic, p) for p in parts])
        if all(tp.offset >= ends[tp.partition] or ends[tp.partition] == 0 for tp in positions):
            break
    consumer.close()
    return out


def test_verify_re_scores_a_real_run_exactly_and_reports_counterfactuals_and_tampering(
    kafka_catalog: str, workers: Callable[..., Workers]
) -> None:
    run_id = f"audit-{uuid.uuid4().hex[:8]}"
    w = workers(run_id)
    for name in ("sandbox", "reward", "filter"):
        w.start(name)
    tasks = [add_task("audit", i) for i in range(1, 4)]  # with x + 0 the "wrong" program would be right
    first = [g for t in tasks[:2] for g in hand_written(run_id, t, PROGRAMS.values())]
    second = hand_written(run_id, tasks[2], PROGRAMS.values())
    with EventProducer(kafka_catalog, source="test/audit", run_id=run_id) as producer:
        for t in tasks:
            producer.publish(t)
        for g in first:
            producer.publish(g)
    _wait_scored(kafka_catalog, run_id, len(first), w)
    time.sleep(0.2)
    t1 = datetime.now(UTC)
    time.sleep(0.2)
    with EventProducer(kafka_catalog, source="test/audit", run_id=run_id) as producer:
        for g in second:
            producer.publish(g)
    _wait_scored(kafka_catalog, run_id, len(first) + len(second), w)

    rewards = [r for r in _of_run(kafka_catalog, "rl.rewards", run_id) if isinstance(r, RewardScored)]
    assert len(rewards) == len(first) + len(second)
    by_sample = {r.sample_id: r for r in rewards}
    # the run is what it should be: fast, slow and the memoriser pass their cases, the others fail
    for r in rewards:
        kind = list(PROGRAMS)[int(r.sample_id.rsplit("/", 1)[1])]
        assert (r.components["correctness"] == 1.0) == (kind in ("fast", "slow", "memo")), (kind, r)
        assert r.reference_event_id is not None
    verdicts = {v.sample_id: v.verdict for v in _of_run(kafka_catalog, "rl.verdicts", run_id)}
    # the forced exit fails every case and is trained as the failure it is (never masked); the memoriser
    # passes its cases and is rejected by its probe run
    assert {v for s, v in verdicts.items() if s.endswith("/3")} <= {"accept", "reject"}
    assert {s: v for s, v in verdicts.items() if s.endswith("/4")} == {
        f"{run_id}/{t.task_id}/0/4": "reject" for t in tasks
    }
    # each program whose run answered every case ran once more on its task's probe plan (the probe
    # judges the passing ones); the memoriser's answers moved with the order of the calls
    probes = [x for x in _of_run(kafka_catalog, "rl.executions", run_id) if x.probe is not None]
    assert sorted(x.sample_id.rsplit("/", 1)[1] for x in probes) == sorted(["0", "1", "2", "4"] * len(tasks))
    judged = [v for v in _of_run(kafka_catalog, "rl.verdicts", run_id) if v.probe_reference_event_id]
    assert {v.sample_id.rsplit("/", 1)[1] for v in judged} == {"0", "1", "4"}
    memo = [v for v in judged if v.sample_id.endswith("/4")]
    assert all("runtime.inconsistent" in {r.code for r in v.reasons} for v in memo)
    assert all(v.failure_reward is not None and v.failure_reward <= 0 < v.reward for v in memo)
    references = {e.event_id() for _, e in read_topic(kafka_catalog, "rl.references")}
    assert {r.reference_event_id for r in rewards} <= references
    assert {v.probe_reference_event_id for v in judged} <= references
    ref_events = [
        e for _, e in read_topic(kafka_catalog, "rl.references") if isinstance(e, ReferenceExecuted)
    ]
    assert all(e.execution.sample_id == f"{e.task_id}#reference" for e in ref_events)

    # what the audit compares is the record's own bytes: re-encoding a decoded reward in the version it
    # is written in (a one-turn reward keeps its older version) gives them back
    raw = _raw_bodies(kafka_catalog, "rl.rewards", run_id)
    assert len(raw) == len(rewards)
    assert all(value == event.as_written().model_dump_json().encode() for value, event in raw)

    # 1. re-scoring with the recorded version: zero differences, every verdict re-judged the same
    code, report = _verify(w, "--run-id", run_id)
    assert code == 0, report
    assert report["ok"] and report["differences"] == [] and report["unverifiable"] == []
    assert report["executions"] == report["rewards"] == report["verdicts"] == len(rewards)

    # 2. a counterfactual efficiency weight moves exactly the samples whose recorded efficiency counts
    expected = {
        r.sample_id for r in rewards if r.components["correctness"] == 1.0 and r.components["efficiency"] != 0
    }
    assert expected and expected != set(by_sample)
    code, report = _verify(w, "--run-id", run_id, "--set", "weights.efficiency=0.5")
    assert code == 1
    assert report["differences"] == []
    moved = {d["sample_id"]: d for d in report["counterfactual_differences"]}
    assert set(moved) == expected
    for sid, d in moved.items():
        r = by_sample[sid]
        assert d["rescored"]["total"] == pytest.approx(r.total + 0.4 * r.components["efficiency"], abs=1e-9)
        assert d["recorded"]["verdict"] == d["rescored"]["verdict"]
    # the same function and configuration named as a counterfactual changes nothing
    # (in process from here where the command line adds nothing: each CLI start costs its imports)
    recorded = {f"{r.reward_fn}-{r.reward_version}" for r in rewards}
    assert len(recorded) == 1, recorded
    same = _in_process(kafka_catalog, run_id, Counterfactual(spec=recorded.pop()))
    assert same.ok and same.counterfactual_differences == []

    # 3. a window selects exactly the executions in it, in the plain replay and in the audit
    replayed = _cli(w, "--topic", "rl.executions", "--from-time", t1.isoformat(), "--run-id", run_id)
    assert replayed.returncode == 0, replayed.stderr
    lines = [json.loads(line) for line in replayed.stdout.splitlines()]
    second_ids = {g.sample_id for g in second}
    executed = [x for x in _of_run(kafka_catalog, "rl.executions", run_id) if isinstance(x, SandboxExecuted)]
    assert sorted(item["id"] for item in lines) == sorted(
        x.event_id() for x in executed if x.sample_id in second_ids
    )
    later = _in_process(kafka_catalog, run_id, from_time=t1)
    assert later.ok and later.executions == len(second)
    earlier = _in_process(kafka_catalog, run_id, to_time=t1)
    assert earlier.ok and earlier.executions == len(first)

    # 4. a tampered reward (a known event id with a wrong total) is reported, and only it
    victim = by_sample[second[0].sample_id]
    with EventProducer(kafka_catalog, source="test/tamper", run_id=run_id) as producer:
        producer.publish(victim.model_copy(update={"total": victim.total + 1.0}))
    tampered = _in_process(kafka_catalog, run_id)
    assert [(d.sample_id, d.fields) for d in tampered.differences] == [(victim.sample_id, ("total",))]
    d = tampered.differences[0]
    assert d.recorded_total == victim.total + 1.0 and d.rescored_total == victim.total
    text = _cli(w, "--verify", "--run-id", run_id)
    assert text.returncode == 1 and victim.sample_id in text.stdout and "1 differ" in text.stdout
    assert isinstance(_of_run(kafka_catalog, "rl.verdicts", run_id)[0], NoiseVerdict)
