"""DPO in the learner: which samples of a group the step trains (human reviews in force included), the
engine's step on the tiny model raising the implicit-reward margin of fixed pairs, and the loop
recording the margin and accuracy where GRPO's metrics go (the step log and the published version)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from learner.batch import AssemblyStats, TrainSample, collate, select_pairs
from learner.dpo import Pair
from learner.loop import Record, StepRecord
from schemas.errors import UsageError
from schemas.rollout import ExperienceReady, ExperienceSample
from tests.unit.test_learner_engine import VOCAB, make_engine
from tests.unit.test_learner_loop import TOPIC, make_loop

torch.set_num_threads(1)


def group(name: str, rewards: list[float], version: int = 0) -> ExperienceReady:
    samples = tuple(
        ExperienceSample(
            sample_id=f"{name}/{i}",
            policy_version=version,
            reward=r,
            advantage=0.0,
            prompt_token_ids=(5, 6, 7),
            completion_token_ids=(8 + i, 9 + i),
            behaviour_logprobs=(-4.0, -4.0),
        )
        for i, r in enumerate(rewards)
    )
    return ExperienceReady(group_id=name, task_id="t", group_size=len(rewards), samples=samples)


def select(
    event: ExperienceReady,
    reviews: dict[str, str] | None = None,
    *,
    current_version: int = 0,
    staleness_bound: int = 4,
) -> tuple[list[TrainSample], list[Pair], AssemblyStats]:
    return select_pairs(
        event,
        (reviews or {}).get,
        current_version=current_version,
        staleness_bound=staleness_bound,
        token_budget=64,
        min_margin=0.1,
        max_pairs=16,
    )


def test_a_group_trains_its_paired_samples_and_counts_the_rest() -> None:
    kept, pairs, stats = select(group("g", [1.0, 0.0, 1.0, 1.0]))
    assert [(p.chosen, p.rejected) for p in pairs] == [("g/0", "g/1"), ("g/2", "g/1"), ("g/3", "g/1")]
    assert [s.sample_id for s in kept] == ["g/0", "g/1", "g/2", "g/3"]
    # a group whose rewards all tie teaches no preference: nothing trained, everything counted
    kept, pairs, stats = select(group("h", [1.0, 1.0, 1.0]))
    assert (kept, pairs) == ([], [])
    assert (stats.seen, stats.used, stats.dropped_unpaired, stats.dropped) == (3, 0, 3, 3)
    assert stats.dropped_sample_ids == ["h/0", "h/1", "h/2"] and not stats.staleness_hist


def test_a_review_in_force_overrides_the_filter_verdict() -> None:
    event = group("g", [1.0, 0.0, 0.5])
    # rejected by a reviewer, the top-reward sample becomes the losing side of every pair it is in;
    # masked, a sample leaves the group altogether
    kept, pairs, stats = select(event, {"g/0": "reject", "g/1": "mask"})
    assert pairs == [Pair("g/2", "g/0", -0.5)]
    assert [s.sample_id for s in kept] == ["g/0", "g/2"]
    assert (stats.seen, stats.used, stats.dropped_review, stats.dropped_sample_ids) == (3, 2, 1, ["g/1"])
    assert stats.staleness_hist == {0: 2}


def test_stale_samples_are_dropped_before_pairing() -> None:
    event = group("g", [1.0, 0.0])
    kept, pairs, stats = select(event, current_version=9, staleness_bound=2)
    assert (kept, pairs, stats.dropped_stale, stats.dropped_unpaired) == ([], [], 2, 0)


def fixed_pairs() -> tuple[list[TrainSample], list[tuple[int, int]]]:
    g = torch.Generator().manual_seed(3)
    samples = [
        TrainSample(
            sample_id=f"s{i}",
            group_id=f"g{i // 2}",
            policy_version=0,
            reward=float(i % 2 == 0),
            advantage=0.0,
            prompt_token_ids=tuple(torch.randint(3, VOCAB, (3,), generator=g).tolist()),
            completion_token_ids=tuple(torch.randint(3, VOCAB, (5,), generator=g).tolist()),
            behaviour_logprobs=(0.0,) * 5,
        )
        for i in range(8)
    ]
    return samples, [(i, i + 1) for i in range(0, 8, 2)]


def test_dpo_step_raises_the_margin_of_fixed_pairs(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, zero=2, algorithm="dpo", dpo={"beta": 0.5})
    samples, pairs = fixed_pairs()
    batch = collate(samples)
    first = engine.dpo_step(batch, pairs, staleness_hist={0: batch.rows})
    # the policy starts as its reference: every implicit reward is 0, the loss ln 2
    assert first["dpo_margin"] == pytest.approx(0.0, abs=1e-6)
    assert first["loss"] == pytest.approx(0.6931, abs=1e-3)
    assert (first["dpo_pairs"], first["staleness_hist.0"]) == (4.0, 8.0)
    margins = [first["dpo_margin"]]
    for _ in range(4):
        margins.append(engine.dpo_step(batch, pairs)["dpo_margin"])
    assert engine.step == 5
    assert margins == sorted(margins) and margins[-1] > 0.5, margins
    last = engine.dpo_step(batch, pairs)
    assert last["dpo_accuracy"] == 1.0
    assert last["loss"] < first["loss"]


def test_dpo_step_needs_the_reference(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, backend="torch", zero=0)
    samples, pairs = fixed_pairs()
    with pytest.raises(UsageError, match="reference"):
        engine.dpo_step(collate(samples), pairs)


def test_the_loop_trains_pairs_and_publishes_their_margin(tmp_path: Path) -> None:
    steps: list[StepRecord] = []
    loop = make_loop(tmp_path, steps, algorithm="dpo", token_budget=48, publish_every=1)
    events = [group("a", [1.0, 0.0, 1.0]), group("b", [0.5, 0.5]), group("c", [0.0, 1.0])]
    published = []
    for offset, event in enumerate(events):
        published += loop.offer(Record(event, TOPIC, 0, offset))
    published += loop.flush()
    trained = [sid for e in published for sid in e.trained_sample_ids]
    assert sorted(trained) == ["a/0", "a/1", "a/2", "c/0", "c/1"]
    assert loop.stats.dropped_sample_ids == ["b/0", "b/1"]
    last = published[-1]
    assert last.stage == "rl" and last.consumed[0].offset == 3
    assert last.metrics["samples_dropped_unpaired"] == 2.0
    for name in ("loss", "dpo_margin", "dpo_accuracy", "dpo_pairs", "grad_norm"):
        assert name in last.metrics and all(name in s.metrics for s in steps)
    assert sum(s.metrics["dpo_pairs"] for s in steps) == 3.0
