"""The learner's bookkeeping: whole records per step, offsets that cover only processed records, and a
crash after the last checkpoint that neither loses nor double-counts a sample."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from learner.config import LearnerConfig
from learner.engine import LearnerEngine
from learner.loop import LearnerLoop, Record, StepRecord
from learner.models import random_llama
from schemas.policy import ConsumedOffset, PolicyPublished
from schemas.rollout import ExperienceReady, ExperienceSample

torch.set_num_threads(1)

TOPIC = "rl.experiences"


def record(partition: int, offset: int, version: int = 0, size: int = 2) -> Record:
    samples = tuple(
        ExperienceSample(
            sample_id=f"p{partition}o{offset}s{i}",
            policy_version=version,
            reward=float(i % 2),
            advantage=1.0 if i % 2 else -1.0,
            prompt_token_ids=(5, 6, 7),
            completion_token_ids=(8 + i, 9, 10),
            behaviour_logprobs=(-5.0, -5.0, -5.0),
        )
        for i in range(size)
    )
    event = ExperienceReady(group_id=f"g{partition}-{offset}", task_id="t", group_size=size, samples=samples)
    return Record(event=event, topic=TOPIC, partition=partition, offset=offset)


def make_loop(tmp_path: Path, steps: list[StepRecord] | None = None, **kw: object) -> LearnerLoop:
    config = LearnerConfig.model_validate(
        {
            "backend": "torch",
            "accelerator": "cpu",
            "lr": 1e-3,
            "token_budget": 24,  # 4 rows of 6 tokens = two records of two samples
            "publish_every": 2,
            "checkpoint_dir": tmp_path / "ckpt",
            **kw,
        }
    )
    engine = LearnerEngine(random_llama(vocab_size=64, seed=0), config)
    return LearnerLoop(engine, run_id="run", on_step=None if steps is None else steps.append)


def log_order() -> list[Record]:
    # two partitions interleaved, each in offset order
    return [record(p, o) for o in range(6) for p in (0, 1)]


def test_steps_take_whole_records_and_offsets_cover_only_trained(tmp_path: Path) -> None:
    steps: list[StepRecord] = []
    loop = make_loop(tmp_path, steps)
    published: list[PolicyPublished] = []
    for r in log_order()[:5]:
        published += loop.offer(r)
    # 5 records offered, budget = 2 records: steps on [p0o0, p1o0] and [p0o1, p1o1]; p0o2 waits
    assert [s.sample_ids for s in steps] == [
        ("p0o0s0", "p0o0s1", "p1o0s0", "p1o0s1"),
        ("p0o1s0", "p0o1s1", "p1o1s0", "p1o1s1"),
    ]
    assert len(published) == 1  # publish_every=2
    event = published[0]
    assert (event.policy_version, event.step) == (1, 2)
    assert event.consumed == (
        ConsumedOffset(topic=TOPIC, partition=0, offset=2),
        ConsumedOffset(topic=TOPIC, partition=1, offset=2),
    )
    assert len(event.trained_sample_ids) == 8
    assert event.metrics["samples_used"] == 8.0
    # the waiting record is trained and published by flush
    rest = loop.flush()
    assert [e.trained_sample_ids for e in rest] == [("p0o2s0", "p0o2s1")]
    assert rest[0].consumed[0].offset == 3


def test_redelivered_records_are_not_trained_twice(tmp_path: Path) -> None:
    steps: list[StepRecord] = []
    loop = make_loop(tmp_path, steps)
    for r in log_order()[:4] + log_order()[:4]:
        loop.offer(r)
    loop.flush()
    trained = [sid for s in steps for sid in s.sample_ids]
    assert len(trained) == len(set(trained)) == 8


def test_stale_records_are_dropped_counted_and_consumed(tmp_path: Path) -> None:
    loop = make_loop(tmp_path, staleness_bound=0)
    loop.engine.policy_version = 3
    out = loop.offer(record(0, 0, version=1)) + loop.offer(record(0, 1, version=3)) + loop.flush()
    assert out[-1].trained_sample_ids == ("p0o1s0", "p0o1s1")
    assert out[-1].metrics["samples_dropped_stale"] == 2.0
    assert out[-1].consumed == (ConsumedOffset(topic=TOPIC, partition=0, offset=2),)


@pytest.mark.parametrize("algorithm", ["grpo", "dpo"])
def test_crash_after_checkpoint_loses_and_duplicates_nothing(tmp_path: Path, algorithm: str) -> None:
    # each record's two samples earn rewards 0 and 1: under DPO they are one preference pair
    log = log_order()
    produced = {s.sample_id for r in log for s in r.event.samples}

    # first life: publishes v1 after 2 steps, takes a 3rd step, then dies (kill -9: nothing flushed)
    first = make_loop(tmp_path, algorithm=algorithm)
    events: list[PolicyPublished] = []
    for r in log[:7]:
        events += first.offer(r)
    assert [e.policy_version for e in events] == [1]
    assert first.engine.step == 3
    del first

    # second life: resume from the newest checkpoint, re-emit its event, re-read from its offsets
    second = make_loop(tmp_path, algorithm=algorithm)
    seek, again = second.resume()
    assert again is not None and again.event_id() == events[0].event_id()
    assert second.engine.step == 2 and second.engine.policy_version == 1
    positions = {(c.topic, c.partition): c.offset for c in seek}
    for r in log:
        if r.offset >= positions.get((r.topic, r.partition), 0):
            events += second.offer(r)
    events += second.flush()

    by_version = {e.policy_version: e for e in events}  # the log keeps one event per version id
    trained = [sid for e in by_version.values() for sid in e.trained_sample_ids]
    assert len(trained) == len(set(trained))
    assert set(trained) == produced
    assert all(("dpo_margin" in e.metrics) == (algorithm == "dpo") for e in by_version.values())


def resent(original: Record, offset: int) -> Record:
    """The same experience written again further on in its partition (at-least-once delivery)."""
    return Record(event=original.event, topic=TOPIC, partition=original.partition, offset=offset)


def test_a_group_written_twice_is_trained_once_even_across_a_restart(tmp_path: Path) -> None:
    log = log_order()  # offsets 0..5 on partitions 0 and 1
    # p0o0 written again at offset 6 (right after), p1o1 at offset 9 (after a checkpoint)
    log += [resent(log[0], 6), record(1, 6), record(1, 7), record(1, 8), resent(log[3], 9)]
    produced = {s.sample_id for r in log for s in r.event.samples}

    first = make_loop(tmp_path)
    events: list[PolicyPublished] = []
    for r in log[:13]:  # up to p0o6, the first copy of a group already trained
        events += first.offer(r)
    assert first.resent_groups == 1
    assert events, "a version was published (and checkpointed) before the kill"
    del first  # killed

    second = make_loop(tmp_path)
    seek, again = second.resume()
    events += [again] if again is not None else []
    positions = {(c.topic, c.partition): c.offset for c in seek}
    for r in log:
        if r.offset >= positions.get((r.topic, r.partition), 0):
            events += second.offer(r)
    events += second.flush()
    # the copy of p1o1 comes after the checkpoint: recognised from the group ids it kept
    assert second.resent_groups >= 1

    by_version = {e.policy_version: e for e in events}
    trained = [sid for e in by_version.values() for sid in e.trained_sample_ids]
    assert len(trained) == len(set(trained)), "a sample trained twice"
    assert set(trained) == produced
    assert by_version[max(by_version)].metrics["groups_resent_skipped"] >= 1.0


def test_records_decided_without_a_step_are_committed_and_not_decided_again(tmp_path: Path) -> None:
    first = make_loop(tmp_path, staleness_bound=0, publish_every=1)
    (v1,) = first.offer(record(0, 0)) + first.offer(record(0, 1)) + first.flush()
    assert first.decided() is None  # the publication committed everything read so far
    # the run's last groups come from a policy two versions back: dropped, and nothing to publish
    assert first.offer(record(0, 2, version=0)) + first.offer(record(1, 0, version=0)) + first.flush() == []
    decided = first.decided()
    assert decided is not None
    assert (decided.step, decided.policy_version, decided.base) == (v1.step, 1, v1.consumed)
    assert decided.consumed == (
        ConsumedOffset(topic=TOPIC, partition=0, offset=3),
        ConsumedOffset(topic=TOPIC, partition=1, offset=1),
    )
    assert decided.groups == ("g0-2", "g1-0")
    assert first.decided() is None  # nothing moved since
    del first  # killed

    second = make_loop(tmp_path, staleness_bound=0, publish_every=1)
    seek, _ = second.resume()
    assert seek == v1.consumed
    assert second.adopt(decided)
    assert second.consumed == decided.consumed
    assert second.decided() is None  # what it took back needs no second commit
    # re-delivered from before the adopted offsets: not decided again
    assert second.offer(record(0, 2, version=0)) + second.flush() == []
    assert second.stats.dropped_stale == 0
    # the next publication covers the adopted offsets
    (v2,) = second.offer(record(1, 1, version=1)) + second.flush()
    assert v2.consumed == (
        ConsumedOffset(topic=TOPIC, partition=0, offset=3),
        ConsumedOffset(topic=TOPIC, partition=1, offset=2),
    )


def test_a_decision_is_taken_back_only_onto_the_checkpoint_it_extends(tmp_path: Path) -> None:
    first = make_loop(tmp_path, staleness_bound=0, publish_every=1)
    first.offer(record(0, 0))
    first.flush()
    first.offer(record(0, 1, version=0))
    first.flush()
    old = first.decided()
    assert old is not None
    first.offer(record(0, 2, version=1))
    first.flush()  # v2: a newer checkpoint
    del first

    second = make_loop(tmp_path, staleness_bound=0, publish_every=1)
    seek, _ = second.resume()
    assert not second.adopt(old)  # it extends v1's checkpoint, not v2's
    assert second.consumed == seek


def test_nothing_is_committed_apart_while_a_trained_step_waits_for_its_publication(tmp_path: Path) -> None:
    loop = make_loop(tmp_path, staleness_bound=0)  # publish_every=2
    loop.engine.policy_version = 3
    assert loop.offer(record(0, 0, version=3)) + loop.offer(record(0, 1, version=3)) == []
    loop.offer(record(0, 2, version=3))  # the budget is full: one step, not yet published
    assert loop.engine.step == 1
    loop.offer(record(0, 3, version=0))
    loop.offer(record(0, 4, version=0))
    loop.offer(record(0, 5, version=0))  # the stale ones are dropped behind the trained step
    assert loop.stats.dropped_stale > 0
    assert loop.decided() is None
