"""The whole pipeline on the real broker and the real sandbox, every processor its own process:
exact counts per topic, kill -9 of each processor mid-run, poison records, backpressure, and each
worker's /metrics agreeing with what the run wrote."""

from __future__ import annotations

import base64
import json
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition

from infra.kafka.producer import EventProducer
from schemas.base import Event
from schemas.dlq import DeadLettered
from schemas.rollout import NoiseVerdict, RewardScored
from schemas.task import TaskPublished, TestCase
from tests.cli_support import run_cli
from tests.e2e.conftest import Samples, Workers, read_topic, scrape

#: the monitor's rule in this run: the poison burst (one record on each of 6 topics) fires it
DEAD_LETTER_RULE = """
version: 7
rules:
  - name: poison_burst
    signal: dead_letters
    window_s: 45
    op: ">"
    threshold: 3
    for_s: 5
"""
#: the learner away for more than 10 s while experiences wait for it (the shipped rule waits 15 minutes)
LEARNER_STALL_RULE = """
version: 8
rules:
  - name: learner_away
    signal: learner_stall_s
    window_s: 60
    op: ">"
    threshold: 10
    for_s: 5
"""
PROCESSORS = ("scheduler", "generator", "sandbox", "reward", "filter", "experience")
INPUTS = ("rl.tasks", "rl.rollouts.requested", "rl.generations", "rl.executions", "rl.rewards", "rl.verdicts")


def _tasks(n: int) -> list[TaskPublished]:
    return [
        TaskPublished(
            task_id=f"e2e/add{i}",
            prompt=f'def add{i}(x: int) -> int:\n    """Return x + {i}."""\n',
            entry_point=f"add{i}",
            tests=(TestCase(input="(1,)", output=str(1 + i)),),
            hidden_tests=(
                TestCase(input="(10,)", output=str(10 + i)),
                TestCase(input="(-3,)", output=str(-3 + i)),
            ),
            reference=f"def add{i}(x):\n    return x + {i}\n",
        )
        for i in range(n)
    ]


def _of_run(bootstrap: str, topic: str, run_id: str) -> list[str]:
    return [
        eid
        for eid, e in read_topic(bootstrap, topic)
        if str(getattr(e, "group_id", "")).startswith(run_id + "/")
    ]


def _experiences(bootstrap: str, run_id: str) -> int:
    return len(set(_of_run(bootstrap, "rl.experiences", run_id)))


def _wait(cond: Callable[[], bool], timeout_s: float, what: str, w: Workers) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(2)
    tails = "\n".join(f"--- {n}\n{w.log_tail(n)}" for n in w.procs)
    raise AssertionError(f"timed out waiting for {what}\n{tails}")


def _each_sample_once(bootstrap: str, run_id: str, n: int, g: int) -> None:
    """Every topic of the run holds exactly what ``n`` groups of ``g`` samples make, no event twice."""
    for topic, expected in (
        ("rl.rollouts.requested", n),
        ("rl.generations", n * g),
        ("rl.executions", n * g),
        ("rl.rewards", n * g),
        ("rl.verdicts", n * g),
        ("rl.experiences", n),
    ):
        ids = _of_run(bootstrap, topic, run_id)
        dupes = [i for i, c in Counter(ids).items() if c > 1]
        assert not dupes, f"{topic}: duplicate event ids {dupes[:3]}"
        assert len(ids) == expected, f"{topic}: {len(ids)} events, expected {expected}"


def test_every_sample_exactly_once_through_kill_9_of_each_processor_and_poison_records(
    kafka_catalog: str, workers: Callable[..., Workers], tmp_path: Path
):
    run_id = f"e2e-{uuid.uuid4().hex[:8]}"
    n, g = 6, 2
    rules = tmp_path / "rules.yaml"
    rules.write_text(DEAD_LETTER_RULE)
    w = workers(
        run_id,
        RLSTREAM_PIPELINE__SCHEDULER__GROUP_SIZE=str(g),
        RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__MAX_TOKENS="24",
        RLSTREAM_PIPELINE__SCHEDULER__MAX_GROUPS_IN_FLIGHT="2",
        RLSTREAM_PIPELINE__BATCH_SIZE="2",
        RLSTREAM_MONITOR__RULES=str(rules),
    )
    for name in (*PROCESSORS, "monitor"):
        w.start(name)
    with EventProducer(kafka_catalog, source="e2e", run_id=run_id) as producer:
        for task in _tasks(n):
            producer.publish(task)
        for topic in INPUTS:  # a poison record on every input topic
            producer.produce_raw(
                topic, b"\x00 not an event", key=f"{run_id}/poison".encode(), headers=[("ce_type", b"x")]
            )

    # kill -9 each processor in turn once the run is under way, then restart it
    _wait(lambda: len(_of_run(kafka_catalog, "rl.generations", run_id)) >= 2, 300, "first generations", w)
    for name in PROCESSORS:
        w.kill9(name)
        w.start(name)
        time.sleep(4)

    _wait(lambda: _experiences(kafka_catalog, run_id) >= n, 600, f"{n} experiences", w)
    time.sleep(3)  # anything a restarted processor might still write twice would land now

    _each_sample_once(kafka_catalog, run_id, n, g)

    letters = [e for _, e in read_topic(kafka_catalog, "rl.dlq") if isinstance(e, DeadLettered)]
    poisoned = {
        letter.original_topic
        for letter in letters
        if letter.original_key_b64
        and base64.b64decode(letter.original_key_b64) == f"{run_id}/poison".encode()
    }
    assert poisoned == set(INPUTS), f"dead-lettered from {sorted(poisoned)}"

    # every sample's lineage is complete on the log, from its task to the experience it joined
    sample = next(
        e
        for _, e in read_topic(kafka_catalog, "rl.generations")
        if getattr(e, "group_id", "").startswith(run_id)
    )
    done = run_cli("lineage", sample.sample_id, "--json", env=w.env)  # type: ignore[attr-defined]
    assert done.returncode == 0, done.stderr
    lineage = json.loads(done.stdout)
    assert lineage["missing"] == []
    assert lineage["task"]["task_id"].startswith("e2e/add")
    assert lineage["generation"]["code"] == sample.code  # type: ignore[attr-defined]
    assert lineage["verdict"]["verdict"] in ("accept", "mask", "reject")

    # the burst of poison records raised the dead-letter alert on rl.alerts; it resolved once the burst
    # left the rule's window, and `rlstream alerts` shows its life
    _wait(
        lambda: (_alert(w, run_id, "poison_burst") or {}).get("state") == "resolved",
        120,
        "the dead-letter alert to resolve",
        w,
    )
    life = _alert(w, run_id, "poison_burst")
    assert life is not None and life["run_id"] is None and life["threshold"] == 3 and life["value"] > 3
    assert life["fired_s"] > 0 and life["rules_version"] == 7


def test_processors_sharing_one_process_keep_exactly_once_through_its_kill_9(
    kafka_catalog: str, workers: Callable[..., Workers], tmp_path: Path
) -> None:
    """The shared layout (``rlstream worker sandbox,reward,filter,experience``): the same outcome as each
    processor in a process of its own, every sample once on every topic, through a kill -9 of the
    shared process mid-run; its /metrics reports each processor under its own name."""
    run_id = f"shared-{uuid.uuid4().hex[:8]}"
    # one group at a time, eight in turn: the kill lands while groups are still to come, so the restarted
    # process runs every one of its processors (with two in flight, four groups had all gone through
    # before the test read its first verdict, and the restarted process consumed nothing)
    n, g = 8, 2
    shared = "sandbox,reward,filter,experience"
    w = workers(
        run_id,
        RLSTREAM_PIPELINE__SCHEDULER__GROUP_SIZE=str(g),
        RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__MAX_TOKENS="24",
        RLSTREAM_PIPELINE__SCHEDULER__MAX_GROUPS_IN_FLIGHT="1",
        RLSTREAM_PIPELINE__BATCH_SIZE="2",
    )
    # the tasks first: a producer of the test starting beside the workers' transactional ones waited out
    # its flush on a busy machine while the fresh broker's coordinators loaded
    with EventProducer(kafka_catalog, source="e2e", run_id=run_id) as producer:
        for task in _tasks(n):
            producer.publish(task)
    for name in ("scheduler", "generator", shared):
        w.start(name)

    # every processor of the shared process at work, then all of them killed at once and restarted
    _wait(lambda: len(_of_run(kafka_catalog, "rl.verdicts", run_id)) >= 1, 300, "a first verdict", w)
    w.kill9(shared)
    w.start(shared)

    _wait(lambda: _experiences(kafka_catalog, run_id) >= n, 600, f"{n} experiences", w)
    time.sleep(3)  # anything a restarted processor might still write twice would land now
    _each_sample_once(kafka_catalog, run_id, n, g)

    got = scrape(w.metrics_url(shared))
    consumed = {
        dict(labels)["processor"]
        for (name, labels), value in got.items()
        if name == "rlstream_events_consumed_total" and value > 0
    }
    assert consumed == {"sandbox", "reward", "filter", "experience"}, consumed
    assert w.alive(shared)


def test_backpressure_holds_while_the_learner_is_away_and_resumes_when_it_returns(
    kafka_catalog: str, workers: Callable[..., Workers], tmp_path: Path
):
    run_id = f"bp-{uuid.uuid4().hex[:8]}"
    n = 8
    rules = tmp_path / "rules.yaml"
    rules.write_text(LEARNER_STALL_RULE)
    w = workers(
        run_id,
        RLSTREAM_PIPELINE__SCHEDULER__GROUP_SIZE="2",
        RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__MAX_TOKENS="16",
        RLSTREAM_PIPELINE__SCHEDULER__MAX_LEARNER_LAG="2",
        RLSTREAM_PIPELINE__SCHEDULER__MAX_GROUPS_IN_FLIGHT="1",
        RLSTREAM_MONITOR__RULES=str(rules),
    )
    # the learner's group exists and has consumed everything so far: only this run's lag counts
    learner = Consumer(
        {
            "bootstrap.servers": kafka_catalog,
            "group.id": "rlstream.learner",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )

    def learner_catches_up() -> None:
        parts = learner.list_topics("rl.experiences", 30).topics["rl.experiences"].partitions
        ends = [
            TopicPartition(
                "rl.experiences", p, learner.get_watermark_offsets(TopicPartition("rl.experiences", p), 30)[1]
            )
            for p in parts
        ]
        learner.commit(offsets=ends, asynchronous=False)

    deadline = time.monotonic() + 60
    while True:  # a catalog created a moment ago may not have its partition leaders yet
        try:
            learner_catches_up()
            break
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)
    for name in (*PROCESSORS, "monitor"):
        w.start(name)
    with EventProducer(kafka_catalog, source="e2e", run_id=run_id) as producer:
        for task in _tasks(n):
            producer.publish(task)

    _wait(lambda: _experiences(kafka_catalog, run_id) >= 2, 300, "the lag bound", w)
    time.sleep(20)  # with the learner away, the scheduler must hold at the bound
    held = _experiences(kafka_catalog, run_id)
    assert held <= 2 + 1, f"{held} experiences while the learner was away (bound 2, 1 in flight)"
    requested = len(_of_run(kafka_catalog, "rl.rollouts.requested", run_id))
    assert requested < n

    # the learner returns: it consumes as experiences arrive, and the run completes
    deadline = time.monotonic() + 600
    while _experiences(kafka_catalog, run_id) < n and time.monotonic() < deadline:
        learner_catches_up()
        time.sleep(2)
    assert _experiences(kafka_catalog, run_id) == n
    learner_catches_up()
    learner.close()
    # the stopped learner raised its alert while experiences waited; it resolved once the learner caught up
    _wait(
        lambda: (_alert(w, run_id, "learner_away") or {}).get("state") == "resolved", 120, "learner_away", w
    )
    life = _alert(w, run_id, "learner_away")
    assert life is not None and life["run_id"] == run_id and life["value"] > 10 and life["rules_version"] == 8
    _metrics_agree_with_the_log(kafka_catalog, run_id, w, n)


def _alert(w: Workers, run_id: str, rule: str) -> dict[str, Any] | None:
    """The newest life of ``rule``'s alert in ``run_id`` as ``rlstream alerts`` lists it."""
    done = run_cli("alerts", "--run", run_id, "--json", env=w.env, timeout=120)
    assert done.returncode == 0, done.stderr
    ours = [a for a in json.loads(done.stdout)["alerts"] if a["rule"] == rule]
    return ours[-1] if ours else None


def _metrics_agree_with_the_log(bootstrap: str, run_id: str, w: Workers, n: int) -> None:
    """Each worker's /metrics, read with Prometheus' own parser, counts what the run wrote on the log."""

    def of_run(topic: str) -> list[Event]:
        return [
            e for _, e in read_topic(bootstrap, topic) if str(getattr(e, "group_id", "")).startswith(run_id)
        ]

    def total(samples: Samples, name: str, **labels: str) -> float:
        return sum(v for (n_, ls), v in samples.items() if n_ == name and set(labels.items()) <= set(ls))

    got = {name: scrape(w.metrics_url(name)) for name in PROCESSORS}
    produced = "rlstream_events_produced_total"
    # the scheduler and the generator serve this run only
    assert total(got["scheduler"], produced, topic="rl.rollouts.requested") == n
    assert total(got["generator"], produced, topic="rl.generations") == len(of_run("rl.generations"))
    executions = of_run("rl.executions")
    assert total(got["sandbox"], "rlstream_sandbox_executions_total", run=run_id) == len(executions) > 0
    rewards = [e for e in of_run("rl.rewards") if isinstance(e, RewardScored)]
    assert total(got["reward"], "rlstream_reward_count", run=run_id) == len(rewards)
    assert total(got["reward"], "rlstream_reward_sum", run=run_id) == pytest.approx(
        sum(r.total for r in rewards)
    )
    verdicts = Counter(e.verdict for e in of_run("rl.verdicts") if isinstance(e, NoiseVerdict))
    for verdict, count in verdicts.items():
        assert total(got["filter"], "rlstream_verdicts_total", run=run_id, verdict=verdict) == count
    for name, inputs in (("generator", "rl.rollouts.requested"), ("experience", "rl.verdicts")):
        assert any(n_ == "rlstream_consumer_lag" and ("topic", inputs) in ls for (n_, ls) in got[name]), (
            f"{name} reports no lag on {inputs}"
        )
    assert all(total(g, "process_resident_memory_bytes") > 0 for g in got.values())
