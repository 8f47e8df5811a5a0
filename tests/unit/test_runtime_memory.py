"""The in-memory runtime: deterministic, atomic steps, restart from the changelog alone; and, on a long
run, markers that expire keep a processor's state (what a restart restores) bounded by the recent past."""

from __future__ import annotations

import re

from infra.runtime.memory import MemoryLog, MemoryRuntime
from infra.runtime.port import Hosted
from schemas.base import Event
from schemas.codec import encode
from schemas.envelope import Envelope
from schemas.rollout import CodeGenerated, ExperienceReady, NoiseVerdict, RolloutRequested
from streams.experience.agent import DONE, KINDS, ExperienceAgent
from streams.experience.agent import INPUT_TOPICS as EXPERIENCE_INPUTS


def _publish(log: MemoryLog, topic: str, event: Event, at_s: float) -> None:
    log.publish(topic, encode(event, Envelope.for_event(event, source="test")), timestamp_ms=int(at_s * 1000))


def _group(log: MemoryLog, i: int, at_s: float, g: int = 2) -> None:
    gid = f"run/t{i}/0"
    _publish(
        log,
        "rl.rollouts.requested",
        RolloutRequested(group_id=gid, task_id=f"t{i}", group_size=g, prompt="p", entry_point="f"),
        at_s,
    )
    for k in range(g):
        gen = CodeGenerated(
            sample_id=f"{gid}/{k}",
            group_id=gid,
            task_id=f"t{i}",
            sample_index=k,
            policy_version=0,
            model="tiny",
            prompt_text="p",
            completion_text="c",
            code="c",
            completion_token_ids=(1,),
            behaviour_logprobs=(-1.0,),
        )
        _publish(log, "rl.generations", gen, at_s)
        verdict = NoiseVerdict(
            sample_id=gen.sample_id,
            group_id=gid,
            task_id=f"t{i}",
            reward_event_id=f"r{i}{k}",
            verdict="accept",
            reward=float(k),
            failure_reward=0.0,
        )
        _publish(log, "rl.verdicts", verdict, at_s)


def _experience(grace_s: float) -> tuple[MemoryLog, MemoryRuntime]:
    log = MemoryLog()
    agent = ExperienceAgent(deadline_s=600)
    processor = Hosted("experience", EXPERIENCE_INPUTS, agent.handle, agent.tick, kinds=KINDS, batch_size=16)
    return log, MemoryRuntime(log, [processor], grace_s=grace_s)


def test_on_a_long_run_the_state_holds_only_the_recent_past_and_a_restart_restores_just_that() -> None:
    log, rt = _experience(grace_s=60.0)
    for i in range(300):  # a group completes every 2 s of stream time
        _group(log, i, at_s=1000.0 + 2 * i)
        rt.run()
    assert len(log.events("rl.experiences")) == 300
    # only the groups of about the last 60 s are still remembered as done (without a lifetime: all 300);
    # stream time is per partition, so a partition keeps its last ones until its own time moves on
    assert 25 <= rt.changelog_size("experience") <= 40
    rt.restart(
        "experience",
        Hosted("experience", EXPERIENCE_INPUTS, ExperienceAgent(deadline_s=600).handle, kinds=KINDS),
    )
    state = rt.state("experience")
    done = sum(state.count(p, DONE) for p in state.owned_partitions())
    assert done == rt.changelog_size("experience")
    # a recent group's record arriving again is still recognised: no second experience
    _group(log, 299, at_s=1000.0 + 2 * 299)
    rt.run()
    assert len(log.events("rl.experiences")) == 300


def test_the_same_inputs_give_the_same_outputs_and_a_lost_step_is_redone_once() -> None:
    bodies = []
    for crash in (False, True):
        log, rt = _experience(grace_s=3600.0)
        for i in range(5):
            _group(log, i, at_s=10.0 + i)
        if crash:
            rt.step("experience", crash=True)  # handled, then lost: nothing of it is kept
            assert log.events("rl.experiences") == []
        rt.run()
        # a sample's traceparent names the span it was read in: new ids whenever tracing is on (as it is
        # once any earlier test in the process configured it); everything else must be identical
        records = [r for part in log.topic("rl.experiences") for r in part]
        untraced = (re.sub(rb'"traceparent":"[^"]*"', b'"traceparent":""', r.value or b"") for r in records)
        bodies.append(sorted(untraced))
        assert all(isinstance(e, ExperienceReady) for _, e in log.events("rl.experiences"))
    assert bodies[0] == bodies[1] and len(bodies[0]) == 5
