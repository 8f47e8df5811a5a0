"""Human overrides at group assembly: a review in force when a group is assembled replaces the
automated verdict, in both directions, and a sample without a verdict yet is left alone."""

from __future__ import annotations

import pytest

from infra.runtime.state import State
from schemas.advantages import group_advantages
from schemas.rollout import ExperienceReady, NoiseVerdict, RolloutRequested
from streams.experience.agent import ExperienceAgent
from streams.experience.core import GroupState
from streams.experience.overrides import apply_overrides
from tests.unit.test_agents import _gen, incoming, owned


class Reviews:
    def __init__(self, in_force: dict[str, str]) -> None:
        self.recorded = in_force
        self.seen: dict[str, str] = {}
        self.refreshes = 0

    def refresh(self) -> None:
        self.refreshes += 1
        self.seen = dict(self.recorded)

    def verdict(self, sample_id: str) -> str | None:
        return self.seen.get(sample_id)


def verdict(i: int, v: str, reward: float) -> NoiseVerdict:
    return NoiseVerdict.model_validate(
        {
            "sample_id": f"g/{i}",
            "group_id": "g",
            "task_id": "t",
            "reward_event_id": f"r{i}",
            "verdict": v,
            "reward": reward,
            "failure_reward": min(reward, 0.0),
        }
    )


def test_a_reviewed_masked_sample_joins_the_group_and_a_reviewed_accepted_one_leaves():
    reviews = Reviews({"g/1": "accept", "g/2": "reject", "g/9": "accept"})
    agent = ExperienceAgent(deadline_s=60, reviews=reviews)
    state = owned(State())
    req = RolloutRequested(group_id="g", task_id="t", group_size=3, prompt="p", entry_point="f")
    batch = [incoming(req), *(incoming(_gen(i)) for i in range(3))]
    batch += [incoming(verdict(0, "accept", 1.0)), incoming(verdict(1, "mask", 0.0))]
    assert agent.handle(batch, state) == []
    assert reviews.refreshes == 0  # read only to assemble a group
    out = agent.handle([incoming(verdict(2, "accept", 0.5))], state)
    exp = out[0].event
    assert isinstance(exp, ExperienceReady)
    # a reviewer's reject keeps the sample out, as the learner does with a later one
    assert [s.sample_id for s in exp.samples] == ["g/0", "g/1"]
    assert [s.advantage for s in exp.samples] == pytest.approx(group_advantages([1.0, 0.0]))
    assert (exp.masked, exp.rejected) == (0, 1)
    assert reviews.refreshes == 1


def test_a_sample_the_filter_rejected_is_trained_as_a_failure_unless_a_reviewer_rejects_it_too():
    for reviewed, expected in (({}, ["g/0", "g/1"]), ({"g/1": "reject"}, ["g/0"])):
        agent = ExperienceAgent(deadline_s=60, reviews=Reviews(reviewed))
        state = owned(State())
        req = RolloutRequested(group_id="g", task_id="t", group_size=2, prompt="p", entry_point="f")
        batch = [incoming(req), *(incoming(_gen(i)) for i in range(2))]
        batch += [incoming(verdict(0, "accept", 1.0)), incoming(verdict(1, "reject", 1.2))]
        exp = agent.handle(batch, state)[0].event
        assert isinstance(exp, ExperienceReady)
        assert [s.sample_id for s in exp.samples] == expected
        if len(expected) == 2:
            assert [s.reward for s in exp.samples] == [1.0, 0.0]  # the hack as the failure it is


def test_a_sample_a_reviewer_masks_leaves_the_group():
    reviews = Reviews({"g/1": "mask"})
    agent = ExperienceAgent(deadline_s=60, reviews=reviews)
    state = owned(State())
    req = RolloutRequested(group_id="g", task_id="t", group_size=2, prompt="p", entry_point="f")
    batch = [incoming(req), *(incoming(_gen(i)) for i in range(2))]
    out = agent.handle(
        [*batch, incoming(verdict(0, "accept", 1.0)), incoming(verdict(1, "accept", 0.5))], state
    )
    exp = out[0].event
    assert isinstance(exp, ExperienceReady)
    assert [s.sample_id for s in exp.samples] == ["g/0"]
    assert (exp.masked, exp.rejected) == (1, 0)


def test_a_sample_without_a_verdict_is_not_made_ready_by_a_review():
    group = GroupState("g", "t", group_size=2, deadline=0.0)
    group.add_generation(_gen(0))
    group.add_generation(_gen(1))
    group.add_verdict(verdict(0, "mask", 0.0), "e0")
    assert apply_overrides(group, {"g/0": "accept", "g/1": "accept"}.get) == ["g/0"]
    assert group.samples["g/1"].verdict is None
    assert [s.sample_id for s in group.assemble(now=1.0).samples] == ["g/0"]
