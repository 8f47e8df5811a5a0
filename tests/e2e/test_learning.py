"""Acceptance of the learner, end to end on CPU: ``rlstream run --tasks synthetic --model tiny --steps N
--eval-fraction 0.2`` raises the mean reward from near 0 to at least 0.5 and held-out pass@1 from
version 0 to the final version (tasks it never trained on), and a learner killed with SIGKILL in the
middle (restarted by the runner) still trains every sample of the run exactly once. Over the whole log,
no held-out task is in any experience or trained sample, and evaluating a version again draws the same
samples.

Everything is real: the broker, every worker as its own process, the tiny model generating, the
sandbox executing, the reward and noise filter judging, the learner training with DeepSpeed and the
generator loading each published version. The rise is measured on the samples themselves (reward by
the policy version that generated them); the exactly-once account comes from the learner's training
log against rl.experiences.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from consumers.evaluation import SampleOutcome, evaluate
from infra.kafka.consumer import decode_message
from learner.service import read_training_log, training_account
from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.rollout import RolloutGenerator
from producers.generator.weights import verified_checkpoint
from schemas.errors import EventDecodeError
from schemas.policy import PolicyPublished
from schemas.rollout import CodeGenerated, ExperienceReady, NoiseVerdict, RewardScored, RolloutRequested
from schemas.topics import (
    EVALUATIONS_REQUESTED,
    EXPERIENCES,
    GENERATIONS,
    POLICY,
    REWARDS,
    ROLLOUTS_REQUESTED,
    VERDICTS,
)
from tests.cli_support import run_cli
from tests.e2e.conftest import run_env

HOME = Path.home() / ".rlstream"
STEPS = 15
RUN_TIMEOUT_S = 540


def read_topic(bootstrap: str, topic: str) -> list[tuple[int, int, Any]]:
    """(partition, offset, event) of every committed record of ``topic``, up to its end now."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"test-read-{uuid.uuid4().hex}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    try:
        partitions = sorted(consumer.list_topics(topic, 30).topics[topic].partitions)
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), 30)[1] for p in partitions}
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        out: list[tuple[int, int, Any]] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for msg in consumer.consume(500, 0.5):
                if msg.error() is not None:
                    continue
                try:
                    out.append((msg.partition() or 0, msg.offset() or 0, decode_message(msg).event))
                except EventDecodeError:
                    continue
            positions = consumer.position([TopicPartition(topic, p) for p in partitions])
            # transaction markers occupy offsets too: done once every position reached the end
            if all(tp.offset >= ends[tp.partition] for tp in positions):
                break
        return out
    finally:
        consumer.close()


def learner_pids(run_id: str) -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"worker" in cmdline and b"learner" in cmdline and f"RLSTREAM_RUN_ID={run_id}".encode() in environ:
            pids.append(int(proc.name))
    return pids


def test_synthetic_run_learns_and_survives_a_killed_learner(own_broker: str, tmp_path: Path) -> None:
    kafka_catalog = own_broker  # the runner creates the topics
    run_id = f"learn-{uuid.uuid4().hex[:8]}"
    home = tmp_path / "home"
    env = run_env(kafka_catalog, home)
    out_log = tmp_path / "run.out"
    started = time.monotonic()
    runner = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rlstream.cli",
            "run",
            "--tasks",
            "synthetic",
            "--model",
            "tiny",
            "--group-size",
            "8",
            "--steps",
            str(STEPS),
            "--eval-fraction",
            "0.2",
            "--run-id",
            run_id,
            "--timeout",
            str(RUN_TIMEOUT_S),
            "--json",
            "--no-report",  # the report is test_report's
        ],
        env=env,
        stdout=out_log.open("wb"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    train_log = home / "runs" / run_id / "learner" / "training.jsonl"
    killed = False
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S + 60
        while runner.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
            if killed or not train_log.exists():
                continue
            published = [e for e in read_training_log(train_log) if e["kind"] == "publish"]
            if len(published) >= 3:
                pids = learner_pids(run_id)
                assert len(pids) == 1, pids
                os.kill(pids[0], signal.SIGKILL)
                killed = True
        assert runner.wait(60) == 0, out_log.read_text()[-4000:]
    finally:
        if runner.poll() is None:
            runner.send_signal(signal.SIGINT)
            runner.wait(120)
    seconds = time.monotonic() - started
    output = out_log.read_text()
    assert killed and "worker learner exited; restarting" in output, output[-4000:]

    generations = [
        e
        for _, _, e in read_topic(kafka_catalog, GENERATIONS.name)
        if isinstance(e, CodeGenerated) and e.group_id.startswith(f"{run_id}/")
    ]
    # -- the rise: reward by the policy version that generated the (training) sample
    version_of = {e.sample_id: e.policy_version for e in generations if e.split == "train"}
    by_version: dict[int, list[float]] = defaultdict(list)
    for _, _, e in read_topic(kafka_catalog, VERDICTS.name):
        if isinstance(e, NoiseVerdict) and e.sample_id in version_of:
            by_version[version_of[e.sample_id]].append(e.reward)
    versions = sorted(by_version)
    start = by_version[0]
    late: list[float] = []
    for v in reversed(versions):  # the newest versions, at least 64 samples
        late += by_version[v]
        if len(late) >= 64:
            break
    start_mean, late_mean = sum(start) / len(start), sum(late) / len(late)
    print(
        f"\nreward: v0 {start_mean:.3f} ({len(start)} samples) -> newest {late_mean:.3f} "
        f"({len(late)} samples, versions >= {v}); {STEPS} steps in {seconds:.0f} s (with start-up)"
    )
    assert start_mean < 0.2, dict(by_version)
    assert late_mean >= 0.5, {k: sum(r) / len(r) for k, r in by_version.items()}

    # -- exactly once across the kill: every experience of the run up to the last publication's
    # offsets was trained in exactly one published version, or dropped (stale) and counted
    entries = read_training_log(train_log)
    trained_by_version, dropped = training_account(entries)
    last = max(trained_by_version)
    final = next(e for e in reversed(entries) if e["kind"] == "publish" and e["policy_version"] == last)
    upto = {c["partition"]: c["offset"] for c in final["consumed"] if c["topic"] == EXPERIENCES.name}
    produced = [
        s.sample_id
        for p, offset, e in read_topic(kafka_catalog, EXPERIENCES.name)
        if isinstance(e, ExperienceReady) and e.group_id.startswith(f"{run_id}/") and offset < upto.get(p, 0)
        for s in e.samples
    ]
    trained = [s for ids in trained_by_version.values() for s in ids]
    print(f"exactly once: {len(trained)} trained, {len(dropped)} dropped as stale, {len(produced)} produced")
    assert len(produced) == len(set(produced))
    assert len(trained) == len(set(trained)), "a sample was trained in two published versions"
    assert not set(trained) & set(dropped)
    assert set(trained) | set(dropped) == set(produced)
    assert len(dropped) < len(produced) / 2, "most samples were dropped as stale"
    assert len({e["incarnation"] for e in entries}) == 2

    table = _held_out_checks(kafka_catalog, run_id, generations, home, seconds)
    _cli_checks(env, run_id, table, generations)

    # -- the run ended without leaving a request behind (a later run's generator would wait on it)
    requested = {
        e.group_id
        for _, _, e in read_topic(kafka_catalog, ROLLOUTS_REQUESTED.name)
        if isinstance(e, RolloutRequested) and e.group_id.startswith(f"{run_id}/")
    }
    assembled = {
        e.group_id
        for _, _, e in read_topic(kafka_catalog, EXPERIENCES.name)
        if isinstance(e, ExperienceReady) and e.group_id.startswith(f"{run_id}/")
    }
    assert requested and requested <= assembled, sorted(requested - assembled)


def _held_out_checks(
    bootstrap: str, run_id: str, generations: list[CodeGenerated], home: Path, seconds: float
) -> dict[int, Any]:
    held = {e.task_id for e in generations if e.split == "eval"}
    assert len(held) == 2, held  # round(0.2 * 8) of the synthetic family
    # -- never trained: no held-out task nor evaluation sample in any experience of the whole log, nor
    # in any version's trained samples; no training sample of a held-out task
    eval_samples = {e.sample_id for e in generations if e.split == "eval"}
    for _, _, e in read_topic(bootstrap, EXPERIENCES.name):
        if isinstance(e, ExperienceReady):
            assert e.task_id not in held and not {s.sample_id for s in e.samples} & eval_samples, e.group_id
    policies = [e for _, _, e in read_topic(bootstrap, POLICY.name) if isinstance(e, PolicyPublished)]
    mine = [p for p in policies if p.run_id == run_id]
    assert not {s for p in mine for s in p.trained_sample_ids} & eval_samples
    assert not [e for e in generations if e.split == "train" and e.task_id in held]
    # -- rounds under exact versions: 0, every 5th and the final step's, each on every held-out task
    requests = [
        e
        for _, _, e in read_topic(bootstrap, EVALUATIONS_REQUESTED.name)
        if isinstance(e, RolloutRequested) and e.group_id.startswith(f"{run_id}/")
    ]
    final = min(p.policy_version for p in mine if p.step >= STEPS)
    versions = sorted({r.policy_version for r in requests})
    assert versions[0] == 0 and versions[-1] == final and {5, 10} <= set(versions), versions
    by_group = {r.group_id: r for r in requests}
    assert all(
        e.policy_version == by_group[e.group_id].policy_version for e in generations if e.split == "eval"
    )
    # -- the held-out rise, from the log: pass@1 of version 0 vs the final version
    passed = {
        e.sample_id: e.total_cases > 0 and e.passed == e.total_cases
        for _, _, e in read_topic(bootstrap, REWARDS.name)
        if isinstance(e, RewardScored) and e.sample_id in eval_samples
    }
    rows = evaluate(
        (
            SampleOutcome("eval", e.policy_version, e.task_id, passed[e.sample_id])
            for e in generations
            if e.sample_id in passed
        ),
        ks=(1, 8),
    )
    table = {r.policy_version: r for r in rows}
    print("held-out pass@1 by version (95% bootstrap CI over tasks):")
    for r in rows:
        lo, hi = r.ci[1]
        print(f"  v{r.policy_version}: {r.pass_at[1]:.3f} [{lo:.3f}, {hi:.3f}] ({r.samples} samples)")
    assert table[0].pass_at[1] < 0.3, table[0]
    assert table[final].pass_at[1] >= 0.5 and table[final].pass_at[1] > table[0].pass_at[1] + 0.3, rows
    # -- evaluating the final version again, outside the run, draws the same samples
    policy = load_model("tiny", HOME / "models")
    backend = HFBackend(policy)
    event = next(p for p in mine if p.policy_version == final)
    backend.load_weights_file(verified_checkpoint(event.checkpoint_uri, event.sha256), final)
    request = next(r for r in requests if r.policy_version == final)
    again = RolloutGenerator(backend).generate(request)
    logged = sorted((e for e in generations if e.group_id == request.group_id), key=lambda e: e.sample_index)
    assert [g.completion_token_ids for g in again] == [g.completion_token_ids for g in logged]
    assert [g.code for g in again] == [g.code for g in logged]
    return table


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env)


def _cli_checks(
    env: dict[str, str], run_id: str, table: dict[int, Any], generations: list[CodeGenerated]
) -> None:
    """What a user types after the run: ``rlstream eval`` agrees with the log, ``rlstream reward tune``
    re-scores every held-out sample under each setting, ``rlstream replay --verify`` covers them."""
    import json

    judged_eval = sum(1 for e in generations if e.split == "eval")
    done = _cli(env, "eval", run_id, "--from-log", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {r["policy_version"]: r for r in json.loads(done.stdout)["versions"]}
    assert set(rows) == set(table), (sorted(rows), sorted(table))
    for version, row in table.items():
        assert rows[version]["tasks"] == 2 and rows[version]["samples"] == row.samples
        assert abs(rows[version]["pass_at_k"]["1"] - row.pass_at[1]) < 1e-9, (version, rows[version])
        lo, hi = rows[version]["ci"]["1"]
        assert lo <= rows[version]["pass_at_k"]["1"] <= hi
    text = _cli(env, "eval", run_id, "--from-log")
    assert text.returncode == 0 and "95% bootstrap CI" in text.stdout, text.stdout + text.stderr[-2000:]
    unknown = _cli(env, "eval", "no-such-run", "--from-log")
    assert unknown.returncode == 2, unknown.stdout + unknown.stderr[-2000:]

    tuned = _cli(env, "reward", "tune", run_id, "--grid", "weights.quality=0,0.1", "--json")
    assert tuned.returncode == 0, tuned.stderr[-2000:]
    result = json.loads(tuned.stdout)
    assert [s["overrides"] for s in result["settings"]] == [{"weights.quality": 0}, {"weights.quality": 0.1}]
    assert all(s["eval_samples"] == judged_eval for s in result["settings"]), result
    assert result["chosen"] is not None and result["chosen"]["version"].startswith("code-")

    verified = _cli(env, "replay", "--verify", "--run-id", run_id, "--json")
    assert verified.returncode == 0, verified.stdout[-2000:] + verified.stderr[-2000:]
    report = json.loads(verified.stdout)
    assert report["evaluation_rewards"] == judged_eval, report
