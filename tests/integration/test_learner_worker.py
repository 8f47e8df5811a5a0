"""``rlstream worker learner`` against a real broker: kill -9 mid-run and a warm standby's takeover (or
a restart) loses nothing and trains nothing twice, under GRPO and under DPO.

Experiences of one run are published up front (plus another run's, which must be skipped); the learner
worker trains on them with DeepSpeed on CPU, publishing every 5 steps so a kill leaves trained but
unpublished steps behind, while a second learner worker of the run stands by on the run's lease. The
first is killed with SIGKILL after a few publications and the standby takes over. The
account is taken from the learner's own training log against the experience topic: every sample of
the run is trained in exactly one published policy version (or dropped and counted), the steps the
kill lost were trained again, and rl.policy holds each version once per event id.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from infra.kafka.producer import EventProducer
from learner.lease import lease_holder, lease_path
from learner.service import read_training_log, training_account
from rlstream.workers import LEARNER_GROUP
from schemas.rollout import ExperienceReady, ExperienceSample
from schemas.topics import EXPERIENCES

HOME = Path.home() / ".rlstream"
GROUPS, GROUP_SIZE = 120, 4
PUBLISH_EVERY = 5


def _experiences(run_id: str, groups: int, first: int = 0) -> list[ExperienceReady]:
    events = []
    for g in range(first, first + groups):
        samples = []
        for i in range(GROUP_SIZE):
            completion = tuple(10 + (g * 7 + i * 3 + k) % 400 for k in range(1 + (g + i) % 3))
            samples.append(
                ExperienceSample(
                    sample_id=f"{run_id}/t{g % 5}/{g}/{i}",
                    policy_version=0,
                    reward=float(i % 2),
                    advantage=1.0 if i % 2 else -1.0,
                    prompt_token_ids=tuple(20 + (g + k) % 300 for k in range(12)),
                    completion_token_ids=completion,
                    behaviour_logprobs=tuple(-6.0 for _ in completion),
                )
            )
        events.append(
            ExperienceReady(
                group_id=f"{run_id}/t{g % 5}/{g}",
                task_id=f"t{g % 5}",
                group_size=GROUP_SIZE,
                samples=tuple(samples),
            )
        )
    return events


def _worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "rlstream.cli", "worker", "learner", "--progress-every", "2"],
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )


def _wait_for(
    predicate: Callable[[], bool], timeout_s: float, proc: subprocess.Popen[bytes], log: Path, what: str
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc.poll() is not None:
            pytest.fail(f"the learner exited ({proc.returncode}) before {what}:\n{log.read_text()[-3000:]}")
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}:\n{log.read_text()[-3000:]}")


def learner_env(run_id: str, home: Path, bootstrap: str, **settings: str) -> dict[str, str]:
    """The environment of a learner worker of ``run_id`` (the tiny model on CPU), then ``settings``."""
    return {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "RLSTREAM_RUN_ID": run_id,
        "RLSTREAM_HOME": str(home),
        "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "RLSTREAM_GENERATOR__MODEL": "tiny",
        "RLSTREAM_GENERATOR__MODELS_DIR": str(HOME / "models"),
        "RLSTREAM_LEARNER__ACCELERATOR": "cpu",
        **settings,
    }


@pytest.mark.parametrize("algorithm", ["grpo", "dpo"])
def test_kill_9_and_the_standby_taking_over_trains_every_sample_exactly_once(
    kafka_catalog: str, tmp_path: Path, algorithm: str
) -> None:
    # under DPO each group's samples (rewards 0, 1, 0, 1) are all in preference pairs: none is dropped
    run_id = f"lw-{uuid.uuid4().hex[:8]}"
    mine = _experiences(run_id, GROUPS)
    other = _experiences(f"other-{uuid.uuid4().hex[:8]}", 10)
    # half up front; the rest once the standby stands by, so the kill still finds work to do
    early, late = mine[: GROUPS // 2], mine[GROUPS // 2 :]
    with EventProducer(kafka_catalog, source="test", run_id=run_id) as producer:
        for a, b in zip(early[:10], other, strict=True):
            producer.publish(a)
            producer.publish(b)
        for event in early[10:]:
            producer.publish(event)
    produced = {s.sample_id for e in mine for s in e.samples}

    home = tmp_path / "home"
    env = learner_env(
        run_id,
        home,
        kafka_catalog,
        RLSTREAM_LEARNER__LR="0.001",
        # ~10 rows a step, a publication every 5 steps: a kill always has unpublished steps to lose
        RLSTREAM_LEARNER__TOKEN_BUDGET="160",
        RLSTREAM_LEARNER__PUBLISH_EVERY=str(PUBLISH_EVERY),
        RLSTREAM_LEARNER__STALENESS_BOUND="1000",
        RLSTREAM_LEARNER__ALGORITHM=algorithm,
    )
    train_log = home / "runs" / run_id / "learner" / "training.jsonl"
    worker_log = tmp_path / "learner.log"

    def publications() -> int:
        if not train_log.exists():
            return 0
        return sum(1 for e in read_training_log(train_log) if e["kind"] == "publish")

    standby_log = tmp_path / "learner-standby.log"
    lease = lease_path(train_log.parent)
    first = _worker(env, worker_log)
    second: subprocess.Popen[bytes] | None = None
    try:
        _wait_for(
            lambda: lease_holder(lease) == first.pid, 300, first, worker_log, "the first learner's lease"
        )
        # a second learner of the run, as `rlstream run` starts it: built, it stands by
        second = _worker(env, standby_log)
        _wait_for(lambda: publications() >= 3, 300, first, worker_log, "three publications")
        _wait_for(
            lambda: "standing by for the run's lease" in standby_log.read_text(),
            300,
            second,
            standby_log,
            "the standby built and waiting",
        )
        with EventProducer(kafka_catalog, source="test", run_id=run_id) as producer:
            for event in late:
                producer.publish(event)
        # kill between publications: on any step that a publication has not yet covered. Steps take
        # tens of milliseconds, so waiting for one particular step (the first after a publication)
        # could miss every such window and find the run trained to its end.

        def unpublished_step() -> bool:
            last = read_training_log(train_log)[-1]
            return bool(last["kind"] == "step" and last["step"] % PUBLISH_EVERY != 0)

        _wait_for(unpublished_step, 60, first, worker_log, "an unpublished step")
        killed_time = time.time()
        first.send_signal(signal.SIGKILL)
        first.wait(30)
    except BaseException:
        if second is not None:
            second.kill()
        raise
    finally:
        if first.poll() is None:
            first.kill()
    killed_at = publications()
    try:

        def all_accounted() -> bool:
            versions, dropped = training_account(read_training_log(train_log))
            return {s for ids in versions.values() for s in ids} | set(dropped) == produced

        _wait_for(all_accounted, 300, second, standby_log, "every sample trained")
        second.send_signal(signal.SIGTERM)
        assert second.wait(60) == 0, standby_log.read_text()[-3000:]
    finally:
        if second.poll() is None:
            second.kill()

    entries = read_training_log(train_log)
    versions, dropped = training_account(entries)
    trained = [s for ids in versions.values() for s in ids]
    assert len(trained) == len(set(trained)), "a sample was trained in two published versions"
    assert set(trained) | set(dropped) == produced
    assert not set(trained) & set(dropped)
    assert not dropped  # the staleness bound is wide here: nothing may be dropped
    assert not any(s.startswith("other-") for s in trained)
    assert sorted(versions) == list(range(1, len(versions) + 1)), "versions are consecutive"

    incarnations = list(dict.fromkeys(e["incarnation"] for e in entries))
    assert len(incarnations) == 2
    first_steps = [e for e in entries if e["kind"] == "step" and e["incarnation"] == incarnations[0]]
    last_published_step = max(
        e["step"] for e in entries if e["kind"] == "publish" and e["incarnation"] == incarnations[0]
    )
    lost = [e for e in first_steps if e["step"] > last_published_step]
    assert lost, "the kill came after a publication with no step behind it"
    retrained = {
        s
        for e in entries
        if e["kind"] == "step" and e["incarnation"] == incarnations[1]
        for s in e["sample_ids"]
    }
    # what the kill lost was trained again (batches may differ: partitions interleave differently)
    assert {s for e in lost for s in e["sample_ids"]} <= retrained
    assert killed_at < len(versions), "the second learner published nothing"
    print(
        f"\nkill -9 after {killed_at} publication(s) (step {last_published_step}); {len(lost)} step(s) lost"
        f" and retrained; {len(trained)} samples in {len(versions)} versions, each once"
    )
    start = next(e for e in entries if e["kind"] == "start" and e["incarnation"] == incarnations[1])
    assert start["step"] == last_published_step
    # the standby read nothing while the first learner lived, and took over without a restart
    assert start["pid"] == second.pid and start["time"] > killed_time


def _committed(bootstrap: str) -> dict[int, int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": LEARNER_GROUP})
    try:
        parts = sorted(consumer.list_topics(EXPERIENCES.name, 30).topics[EXPERIENCES.name].partitions)
        return {
            tp.partition: tp.offset
            for tp in consumer.committed([TopicPartition(EXPERIENCES.name, p) for p in parts], 30)
            if tp.offset >= 0
        }
    finally:
        consumer.close()


def test_the_last_groups_dropped_as_stale_are_committed_and_not_read_again(
    kafka_catalog: str, tmp_path: Path
) -> None:
    """A run's last experiences come from a policy older than the staleness bound allows: the learner
    drops them with no version to publish, commits their offsets all the same, and a learner killed
    after that reads on past them instead of deciding them again."""
    run_id = f"lw-{uuid.uuid4().hex[:8]}"
    fresh = _experiences(run_id, 3)
    with EventProducer(kafka_catalog, source="test", run_id=run_id) as producer:
        for event in fresh:
            producer.publish(event)
    home = tmp_path / "home"
    env = learner_env(
        run_id,
        home,
        kafka_catalog,
        RLSTREAM_LEARNER__STALENESS_BOUND="0",
    )
    train_log = home / "runs" / run_id / "learner" / "training.jsonl"
    worker_log = tmp_path / "learner.log"

    def entries(kind: str) -> list[dict[str, Any]]:
        return [e for e in read_training_log(train_log) if e["kind"] == kind] if train_log.exists() else []

    first = _worker(env, worker_log)
    try:
        _wait_for(lambda: bool(entries("publish")), 300, first, worker_log, "a first version")
        # written by policy version 0, read by a learner at version 1 with a staleness bound of 0
        stale = _experiences(run_id, 2, first=len(fresh))
        with EventProducer(kafka_catalog, source="test", run_id=run_id) as producer:
            for event in stale:
                producer.publish(event)
        stale_ids = {s.sample_id for e in stale for s in e.samples}

        def stale_committed() -> bool:
            # the decision is logged before its offsets are committed (a restart reads on from the log):
            # the kill waits for the commit too, which the assertions below read from the broker
            logged = entries("decided")
            if not logged or not stale_ids <= set(training_account(read_training_log(train_log))[1]):
                return False
            committed = _committed(kafka_catalog)
            return all(committed.get(c["partition"]) == c["offset"] for c in logged[-1]["consumed"])

        _wait_for(stale_committed, 120, first, worker_log, "the stale groups decided and committed")
        first.send_signal(signal.SIGKILL)
        first.wait(30)
    finally:
        if first.poll() is None:
            first.kill()
    decided = entries("decided")[-1]
    versions, dropped = training_account(read_training_log(train_log))
    assert set(dropped) == stale_ids, "the drops count without a publication"
    assert {s for ids in versions.values() for s in ids} == {s.sample_id for e in fresh for s in e.samples}
    committed = _committed(kafka_catalog)
    assert all(committed.get(c["partition"]) == c["offset"] for c in decided["consumed"]), committed

    second = _worker(env, worker_log)
    try:
        _wait_for(lambda: len(entries("start")) == 2, 300, second, worker_log, "the restarted learner")
        second.send_signal(signal.SIGTERM)
        assert second.wait(60) == 0, worker_log.read_text()[-3000:]
    finally:
        if second.poll() is None:
            second.kill()
    restart = entries("start")[-1]
    assert restart["consumed"] == decided["consumed"], "the restart reads on after what was decided"
    assert not [e for e in entries("drop") if e["incarnation"] == restart["incarnation"]], "decided twice"


def test_a_dpo_learner_publishes_a_version_with_its_margin(kafka_catalog: str, tmp_path: Path) -> None:
    """With learner.algorithm = dpo the learner worker trains preference pairs of the run's groups and
    publishes a version like GRPO's, each step's margin and accuracy in its training log."""
    run_id = f"lw-{uuid.uuid4().hex[:8]}"
    mine = _experiences(run_id, 6)
    with EventProducer(kafka_catalog, source="test", run_id=run_id) as producer:
        for event in mine:
            producer.publish(event)
    home = tmp_path / "home"
    env = learner_env(
        run_id,
        home,
        kafka_catalog,
        RLSTREAM_LEARNER__ALGORITHM="dpo",
        RLSTREAM_LEARNER__DPO__BETA="0.2",
        RLSTREAM_LEARNER__STALENESS_BOUND="1000",
    )
    train_log = home / "runs" / run_id / "learner" / "training.jsonl"
    worker_log = tmp_path / "learner.log"

    def entries(kind: str) -> list[dict[str, Any]]:
        return [e for e in read_training_log(train_log) if e["kind"] == kind] if train_log.exists() else []

    worker = _worker(env, worker_log)
    try:
        _wait_for(lambda: bool(entries("publish")), 120, worker, worker_log, "a first version")
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(60) == 0, worker_log.read_text()[-3000:]
    finally:
        if worker.poll() is None:
            worker.kill()
    versions, dropped = training_account(read_training_log(train_log))
    # rewards 0, 1, 0, 1 in every group: each sample is in a pair (each 1 over each 0), none dropped
    assert {s for ids in versions.values() for s in ids} == {s.sample_id for e in mine for s in e.samples}
    assert dropped == []
    steps = entries("step")
    assert steps and all({"loss", "dpo_margin", "dpo_accuracy"} <= set(s["metrics"]) for s in steps)
    assert sum(s["metrics"]["dpo_pairs"] for s in steps) == 4 * len(mine)
