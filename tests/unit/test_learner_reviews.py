"""Human overrides in the learner: a sample masked or rejected by the review in force before its step
is never trained on, its group's advantages are recomputed without it, and it is counted as dropped;
a review recorded after the step changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from learner.batch import apply_reviews
from learner.loop import LearnerLoop, StepRecord
from schemas.advantages import group_advantages
from schemas.rollout import ExperienceReady, ExperienceSample
from tests.unit.test_learner_loop import make_loop, record

torch.set_num_threads(1)


class Reviews:
    """The lookup the learner reads just before a step (in production: rl.reviews)."""

    def __init__(self) -> None:
        self.recorded: dict[str, str] = {}
        self.in_force: dict[str, str] = {}
        self.refreshes = 0

    def refresh(self) -> None:
        self.refreshes += 1
        self.in_force = dict(self.recorded)

    def verdict(self, sample_id: str) -> str | None:
        return self.in_force.get(sample_id)


def group(rewards: list[float]) -> ExperienceReady:
    adv = group_advantages(rewards)
    samples = tuple(
        ExperienceSample(
            sample_id=f"g/{i}",
            policy_version=0,
            reward=r,
            advantage=a,
            prompt_token_ids=(1, 2),
            completion_token_ids=(3,),
            behaviour_logprobs=(-1.0,),
        )
        for i, (r, a) in enumerate(zip(rewards, adv, strict=True))
    )
    return ExperienceReady(group_id="g", task_id="t", group_size=len(rewards), samples=samples)


def test_a_rejected_sample_leaves_and_the_rest_get_advantages_over_the_samples_that_stay():
    event = group([1.0, 0.0, 0.5, 0.0])
    untouched, none = apply_reviews(event, {"g/1": "accept"}.get)
    assert none == [] and [s.advantage for s in untouched] == [s.advantage for s in event.samples]
    kept, removed = apply_reviews(event, {"g/0": "reject", "g/3": "mask"}.get)
    assert removed == ["g/0", "g/3"]
    assert [s.sample_id for s in kept] == ["g/1", "g/2"]
    assert [s.advantage for s in kept] == pytest.approx(group_advantages([0.0, 0.5]))
    alone, _ = apply_reviews(event, {"g/0": "reject", "g/1": "mask", "g/3": "mask"}.get)
    assert [s.advantage for s in alone] == [0.0]


def _loop(tmp_path: Path, steps: list[StepRecord], reviews: Reviews) -> LearnerLoop:
    loop = make_loop(tmp_path, steps)
    loop.reviews = reviews
    return loop


def test_a_review_before_the_step_keeps_the_sample_out_and_one_after_it_is_too_late(tmp_path: Path):
    steps: list[StepRecord] = []
    reviews = Reviews()
    loop = _loop(tmp_path, steps, reviews)
    reviews.recorded["p0o0s1"] = "reject"  # reviewed while its record waits for the step
    published = []
    for offset in range(3):
        published += loop.offer(record(0, offset))
    reviews.recorded["p0o0s0"] = "mask"  # too late: p0o0 was trained in the first step
    reviews.recorded["p0o2s0"] = "mask"  # in time: p0o2 still waits
    published += loop.flush()
    trained = [sid for s in steps for sid in s.sample_ids]
    assert "p0o0s1" not in trained and "p0o2s0" not in trained
    assert "p0o0s0" in trained and len(trained) == len(set(trained)) == 4
    assert reviews.refreshes >= len(steps)
    assert loop.stats.dropped_review == 2 and loop.stats.dropped_sample_ids == ["p0o0s1", "p0o2s0"]
    assert published[-1].metrics["samples_dropped_review"] == 2.0
    assert loop.stats.seen == loop.stats.used + loop.stats.dropped
    # every record is consumed, the emptied one too: nothing is read again after a restart
    assert published[-1].consumed[0].offset == 3
