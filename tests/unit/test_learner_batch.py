"""Batch assembly from ExperienceReady events: layout, token budget, counted drops."""

from __future__ import annotations

import pytest
import torch

from learner.batch import build_batches, collate, pack, samples_of, select_samples
from schemas.rollout import ExperienceReady, ExperienceSample

torch.set_num_threads(1)


def sample(
    sid: str, version: int, prompt: int = 2, completion: int = 2, adv: float = 1.0
) -> ExperienceSample:
    return ExperienceSample(
        sample_id=sid,
        policy_version=version,
        reward=1.0,
        advantage=adv,
        prompt_token_ids=tuple(range(10, 10 + prompt)),
        completion_token_ids=tuple(range(20, 20 + completion)),
        behaviour_logprobs=tuple(-0.5 - i for i in range(completion)),
    )


def event(gid: str, *samples: ExperienceSample) -> ExperienceReady:
    return ExperienceReady(group_id=gid, task_id="t", group_size=len(samples), samples=samples)


def test_collate_layout_by_hand() -> None:
    # row 0: prompt [10, 11], completion [20, 21] -> input [10, 11, 20, 21]
    #   column t scores token t+1: columns 1 and 2 score the completion -> mask [F, T, T]
    # row 1: prompt [10], completion [20, 21, 22] -> [10, 20, 21, 22], mask [T, T, T]
    s0 = samples_of(event("g", sample("a", 0, prompt=2, completion=2, adv=0.5)))
    s1 = samples_of(event("h", sample("b", 0, prompt=1, completion=3, adv=-0.5)))
    b = collate(s0 + s1, pad_token_id=0)
    assert b.input_ids.tolist() == [[10, 11, 20, 21], [10, 20, 21, 22]]
    assert b.targets.tolist() == [[11, 20, 21], [20, 21, 22]]
    assert b.loss_mask.tolist() == [[False, True, True], [True, True, True]]
    assert b.behaviour_logprobs.tolist() == [[0.0, -0.5, -1.5], [-0.5, -1.5, -2.5]]
    assert b.advantages.tolist() == [0.5, -0.5]
    assert b.attention_mask.tolist() == [[1, 1, 1, 1], [1, 1, 1, 1]]
    assert (b.num_tokens, b.num_loss_tokens, b.sample_ids) == (8, 5, ("a", "b"))


def test_collate_pads_right() -> None:
    s = samples_of(event("g", sample("a", 0, 1, 1), sample("b", 0, 2, 3)))
    b = collate(s, pad_token_id=7)
    assert b.input_ids.tolist()[0] == [10, 20, 7, 7, 7]
    assert b.attention_mask.tolist()[0] == [1, 1, 0, 0, 0]
    assert b.loss_mask.tolist()[0] == [True, False, False, False]


def test_stale_samples_are_dropped_and_counted() -> None:
    # learner at version 5, bound 2: versions 5, 4, 3 are used (lag 0, 1, 2); 2 and 0 are dropped
    ev = event("g", *(sample(f"s{v}", v) for v in (5, 4, 3, 2, 0)))
    batches, stats = build_batches([ev], current_version=5, staleness_bound=2, token_budget=100)
    used = [sid for b in batches for sid in b.sample_ids]
    assert used == ["s5", "s4", "s3"]
    assert (stats.seen, stats.used, stats.dropped_stale) == (5, 3, 2)
    assert stats.dropped_sample_ids == ["s2", "s0"]
    assert dict(stats.staleness_hist) == {0: 1, 1: 1, 2: 1}


def test_invalid_and_oversized_samples_are_counted() -> None:
    no_logprobs = ExperienceSample(
        sample_id="nolp",
        policy_version=0,
        reward=0.0,
        advantage=0.0,
        prompt_token_ids=(1,),
        completion_token_ids=(2, 3),
        behaviour_logprobs=(),
    )
    samples = samples_of(event("g", sample("ok", 0), no_logprobs, sample("big", 0, prompt=30, completion=30)))
    kept, stats = select_samples(samples, current_version=0, staleness_bound=0, token_budget=16)
    assert [s.sample_id for s in kept] == ["ok"]
    assert (stats.dropped_invalid, stats.dropped_too_long, stats.dropped) == (1, 1, 2)
    assert stats.seen == stats.used + stats.dropped


def test_pack_respects_the_padded_token_budget() -> None:
    # lengths 4, 4, 6, 2 with budget 12: [4, 4] = 2x4 = 8; adding 6 -> 3x6 = 18 > 12, close;
    # [6] then adding 2 -> 2x6 = 12 <= 12 -> [6, 2]
    samples = samples_of(
        event(
            "g",
            sample("a", 0, 2, 2),
            sample("b", 0, 2, 2),
            sample("c", 0, 3, 3),
            sample("d", 0, 1, 1),
        )
    )
    groups = pack(samples, token_budget=12)
    assert [[s.sample_id for s in g] for g in groups] == [["a", "b"], ["c", "d"]]
    for g in groups:
        b = collate(g)
        assert b.input_ids.numel() <= 12


def test_newer_sample_than_learner_counts_as_fresh() -> None:
    _, stats = select_samples(
        samples_of(event("g", sample("x", 7))), current_version=5, staleness_bound=0, token_budget=100
    )
    assert stats.used == 1
    assert dict(stats.staleness_hist) == {0: 1}


def test_collate_needs_a_sample() -> None:
    with pytest.raises(ValueError, match="at least one"):
        collate([])
