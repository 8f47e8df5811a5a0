"""Scheduling policy and group assembly: fairness, curriculum, backpressure, GRPO advantages."""

from __future__ import annotations

from collections import Counter

import pytest

from schemas.advantages import group_advantages
from schemas.rollout import CodeGenerated, NoiseVerdict
from streams.experience.core import GroupState
from streams.scheduler.policy import (
    BackpressureBounds,
    Curriculum,
    Pressure,
    TaskRef,
    WeightedFairQueue,
    backpressure,
)


def test_tenant_shares_follow_weights_and_nobody_starves():
    q = WeightedFairQueue({"big": 3.0, "small": 1.0})
    for i in range(300):
        q.push(TaskRef(f"b{i}", "big"))
    for i in range(100):
        q.push(TaskRef(f"s{i}", "small"))
    first = [q.pop() for _ in range(40)]
    counts = Counter(t.tenant for t in first if t)
    assert counts == {"big": 30, "small": 10}


def test_priority_orders_tasks_within_a_tenant():
    q = WeightedFairQueue()
    q.push(TaskRef("low", priority=0))
    q.push(TaskRef("high", priority=9))
    q.push(TaskRef("low2", priority=0))
    assert [q.pop().task_id for _ in range(3)] == ["high", "low", "low2"]  # type: ignore[union-attr]
    assert q.pop() is None


def test_an_idle_tenant_does_not_bank_credit():
    q = WeightedFairQueue()
    for i in range(10):
        q.push(TaskRef(f"a{i}", "a"))
    for _ in range(8):
        q.pop()
    for i in range(10):
        q.push(TaskRef(f"b{i}", "b"))
    order = [q.pop().tenant for _ in range(4)]  # type: ignore[union-attr]
    assert order.count("a") >= 1  # b re-joined at the current clock, it cannot monopolise


def test_invalid_weights_are_refused():
    with pytest.raises(ValueError, match="positive"):
        WeightedFairQueue({"x": 0.0})


def test_curriculum_skips_zero_advantage_tasks_then_retries_after_cooldown():
    c = Curriculum(window=2, cooldown=3)
    c.record("t", [1.0, 1.0])
    assert c.should_skip("t") is None  # one group is not enough evidence
    c.record("t", [1.0, 1.0])
    assert c.should_skip("t") == "curriculum.all_pass"
    for _ in range(3):
        c.issued()
    assert c.should_skip("t") is None
    c.record("u", [0.0, 0.0])
    c.record("u", [0.0, 1.0])
    assert c.should_skip("u") is None


def test_backpressure_holds_on_each_bound_and_resumes():
    b = BackpressureBounds(max_learner_lag=10, max_groups_in_flight=5, max_staleness=1)
    assert backpressure(Pressure(learner_lag=3, groups_in_flight=2), b).issue
    assert "learner lag" in backpressure(Pressure(learner_lag=10, groups_in_flight=0), b).reason
    assert not backpressure(Pressure(learner_lag=0, groups_in_flight=5), b).issue
    stale = Pressure(0, 0, newest_policy_version=5, generator_policy_version=3)
    assert "staleness" in backpressure(stale, b).reason


def test_group_advantages_hand_computed():
    assert group_advantages([1.0, 0.0, 0.0, 1.0], normalise_std=False) == [0.5, -0.5, -0.5, 0.5]
    adv = group_advantages([1.0, 0.0, 0.0, 1.0])
    assert adv == pytest.approx([1.0, -1.0, -1.0, 1.0], abs=1e-5)
    assert group_advantages([0.3, 0.3]) == [0.0, 0.0]


def _gen(i: int) -> CodeGenerated:
    return CodeGenerated(
        sample_id=f"g/{i}",
        group_id="g",
        task_id="t",
        sample_index=i,
        policy_version=1,
        model="tiny",
        prompt_text="p",
        completion_text="c",
        code="c",
        prompt_token_ids=(1,),
        completion_token_ids=(2, 3),
        behaviour_logprobs=(-0.1, -0.2),
    )


def _verdict(i: int, verdict: str, reward: float) -> NoiseVerdict:
    return NoiseVerdict(
        sample_id=f"g/{i}",
        group_id="g",
        task_id="t",
        reward_event_id=f"r{i}",
        verdict=verdict,  # type: ignore[arg-type]
        reward=reward,
        failure_reward=min(reward, 0.0),
    )


def test_group_completes_once_with_advantages_from_accepted_and_rejected_samples():
    g = GroupState("g", "t", group_size=3, deadline=100.0)
    for i in range(3):
        assert g.add_generation(_gen(i))
    assert not g.add_generation(_gen(0))
    assert g.add_verdict(_verdict(0, "accept", 1.0), "v0")
    assert g.add_verdict(_verdict(1, "accept", 0.0), "v1")
    assert not g.add_verdict(_verdict(1, "accept", 0.0), "v1")  # re-delivery
    assert not g.due(now=0.0)
    assert g.add_verdict(_verdict(2, "reject", 1.0), "v2")
    assert g.due(now=0.0)
    exp = g.assemble(now=0.0, normalise_std=False)
    # the rejected sample scored 1.0 but is trained as the failure it is (its failure reward, 0.0)
    assert [s.sample_id for s in exp.samples] == ["g/0", "g/1", "g/2"]
    assert [s.reward for s in exp.samples] == [1.0, 0.0, 0.0]
    assert [s.advantage for s in exp.samples] == pytest.approx([2 / 3, -1 / 3, -1 / 3])
    assert (exp.partial, exp.rejected, exp.masked) == (False, 1, 0)
    assert not g.due(now=1000.0)  # emitted once


def test_a_group_past_its_deadline_is_emitted_as_partial():
    g = GroupState("g", "t", group_size=4, deadline=10.0)
    g.add_generation(_gen(0))
    g.add_verdict(_verdict(0, "accept", 1.0), "v0")
    assert not g.due(now=5.0)
    assert g.due(now=10.0)
    exp = g.assemble(now=10.0)
    assert exp.partial
    assert [s.advantage for s in exp.samples] == [0.0]
