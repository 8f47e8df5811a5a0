"""Processor handlers driven directly (their runtime is covered by the real-broker tests)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from infra.runtime.port import Incoming
from infra.runtime.state import State
from schemas.base import Event
from schemas.envelope import Envelope
from schemas.rollout import CodeGenerated, ExperienceReady, NoiseVerdict, RolloutRequested
from schemas.task import TaskPublished, TestCase
from streams.config import SchedulerConfig
from streams.experience.agent import ExperienceAgent
from streams.scheduler.agent import SchedulerAgent

_offset = iter(range(1_000_000))


def incoming(event: Event, partition: int = 0, ts_ms: int = 1_000_000) -> Incoming:
    env = Envelope.for_event(event, source="test", time=datetime.now(UTC))
    return Incoming(env, event, "t", partition, next(_offset), ts_ms)


def task(i: int, tenant: str = "default") -> TaskPublished:
    return TaskPublished(
        task_id=f"t{i}",
        prompt="def f(x):\n",
        entry_point="f",
        tests=(TestCase(input="(1,)", output="1"),),
        tenant=tenant,
    )


def owned(state: State) -> State:
    state.own(0)
    return state


def test_scheduler_issues_each_task_once_and_holds_at_the_in_flight_bound():
    lag = {"value": 0}
    agent = SchedulerAgent(
        SchedulerConfig(group_size=3, max_groups_in_flight=2), "run", lambda fresh: lag["value"]
    )
    state = owned(State())
    agent.handle([incoming(task(i)) for i in range(5)], state)
    agent.handle([incoming(task(0))], state)  # re-delivery: no second group
    first = agent.tick(state, now=0.0)
    assert [e.event.group_id for e in first] == ["run/t0/0", "run/t1/0"]  # type: ignore[attr-defined]
    assert agent.tick(state, now=1.0) == []
    assert "in flight" in agent.last_decision.reason
    done = ExperienceReady(group_id="run/t0/0", task_id="t0", group_size=3, samples=())
    agent.handle([incoming(done)], state)
    assert [e.event.group_id for e in agent.tick(state, now=2.0)] == ["run/t2/0"]  # type: ignore[attr-defined]
    lag["value"] = 10_000
    agent.handle(
        [incoming(ExperienceReady(group_id="run/t1/0", task_id="t1", group_size=3, samples=()))], state
    )
    assert agent.tick(state, now=3.0) == []
    assert "learner lag" in agent.last_decision.reason
    lag["value"] = 0
    issued = [e.event.group_id for e in agent.tick(state, now=4.0)]  # type: ignore[attr-defined]
    assert issued == ["run/t3/0"]


def test_scheduler_state_survives_a_restart():
    agent = SchedulerAgent(SchedulerConfig(max_groups_in_flight=100), "run", lambda fresh: 0)
    state = owned(State())
    agent.handle([incoming(task(i)) for i in range(3)], state)
    assert len(agent.tick(state, now=0.0)) == 3
    restarted = SchedulerAgent(SchedulerConfig(max_groups_in_flight=100), "run", lambda fresh: 0)
    state.generation += 1
    assert restarted.tick(state, now=1.0) == []  # nothing issued twice


def test_scheduler_issues_a_task_once_when_a_failed_handler_call_is_rolled_back():
    """A batch whose handler call fails is handled again one record at a time, its writes rolled
    back: the task queued by the failed call must not be queued a second time (it was issued as
    group 0 and group 1 with one epoch)."""
    agent = SchedulerAgent(SchedulerConfig(max_groups_in_flight=100), "run", lambda fresh: 0)
    state = owned(State())
    agent.handle([incoming(task(0))], state)
    state.rollback()  # what the host does when the call raised on a later record of the batch
    agent.handle([incoming(task(0))], state)
    state.savepoint()
    issued = [e.event.group_id for e in agent.tick(state, now=0.0)]  # type: ignore[attr-defined]
    assert issued == ["run/t0/0"]
    assert agent.tick(state, now=1.0) == []


def _gen(i: int) -> CodeGenerated:
    return CodeGenerated(
        sample_id=f"g/{i}",
        group_id="g",
        task_id="t",
        sample_index=i,
        policy_version=0,
        model="tiny",
        prompt_text="p",
        completion_text="c",
        code="c",
        completion_token_ids=(1,),
        behaviour_logprobs=(-1.0,),
    )


def _verdict(i: int, reward: float) -> NoiseVerdict:
    return NoiseVerdict(
        sample_id=f"g/{i}",
        group_id="g",
        task_id="t",
        reward_event_id=f"r{i}",
        verdict="accept",
        reward=reward,
        failure_reward=min(reward, 0.0),
    )


def test_experience_emits_one_group_when_complete_and_ignores_late_duplicates():
    agent = ExperienceAgent(deadline_s=60)
    state = owned(State())
    req = RolloutRequested(group_id="g", task_id="t", group_size=2, prompt="p", entry_point="f")
    out = agent.handle(
        [incoming(req), incoming(_gen(0)), incoming(_gen(1)), incoming(_verdict(0, 1.0))], state
    )
    assert out == []
    out = agent.handle([incoming(_verdict(1, 0.0))], state)
    assert len(out) == 1
    exp = out[0].event
    assert isinstance(exp, ExperienceReady)
    assert [s.advantage for s in exp.samples] == pytest.approx([1.0, -1.0], abs=1e-5)
    assert agent.handle([incoming(_verdict(1, 0.0))], state) == []
    assert agent.tick(state, now=1e12) == []


def test_experience_emits_a_partial_group_at_its_deadline():
    agent = ExperienceAgent(deadline_s=10)
    state = owned(State())
    req = RolloutRequested(group_id="g", task_id="t", group_size=4, prompt="p", entry_point="f")
    agent.handle([incoming(req, ts_ms=0), incoming(_gen(0)), incoming(_verdict(0, 1.0))], state)
    assert agent.tick(state, now=5.0) == []
    out = agent.tick(state, now=10.0)
    assert len(out) == 1
    assert out[0].event.partial  # type: ignore[attr-defined]
    assert agent.tick(state, now=20.0) == []


def test_a_focused_run_schedules_only_its_own_tasks():
    agent = SchedulerAgent(SchedulerConfig(only_own_run=True), "mine", lambda fresh: 0)
    state = owned(State())
    plain = incoming(task(1))
    theirs = Incoming(plain.envelope.model_copy(update={"run_id": "other"}), task(1), "t", 0, 0, 0)
    mine = Incoming(plain.envelope.model_copy(update={"run_id": "mine"}), task(2), "t", 0, 1, 0)
    agent.handle([theirs, mine], state)
    assert [e.event.group_id for e in agent.tick(state, now=0.0)] == ["mine/t2/0"]  # type: ignore[attr-defined]


def test_a_stale_lag_reading_never_lets_a_group_through():
    readings: list[bool] = []

    def lag(fresh: bool) -> int:
        readings.append(fresh)
        return 5 if fresh else 0  # the cache says 0, the broker says 5

    agent = SchedulerAgent(SchedulerConfig(max_learner_lag=2), "run", lag)
    state = owned(State())
    agent.handle([incoming(task(0))], state)
    assert agent.tick(state, now=0.0) == []
    assert "learner lag 5" in agent.last_decision.reason
    assert readings == [False, True]
