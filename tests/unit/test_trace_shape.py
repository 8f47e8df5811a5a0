"""The shape of the traces, without a broker: a group's experience keeps each sample's trace through
its changelog state, hands it to the learner on the event, and links resolve to real span contexts."""

from __future__ import annotations

from infra.telemetry.messaging import links_to, span_context
from schemas.rollout import CodeGenerated, NoiseVerdict
from streams.experience.core import GroupState

TP = "00-{:032x}-{:016x}-01"


def _gen(i: int) -> CodeGenerated:
    return CodeGenerated(
        sample_id=f"g/{i}",
        group_id="g",
        task_id="t",
        sample_index=i,
        policy_version=0,
        model="m",
        prompt_text="p",
        completion_text="c",
        code="x = 1",
        prompt_token_ids=(1,),
        completion_token_ids=(2,),
        behaviour_logprobs=(-0.1,),
    )


def _verdict(i: int, verdict: str) -> NoiseVerdict:
    return NoiseVerdict(
        sample_id=f"g/{i}",
        group_id="g",
        task_id="t",
        reward_event_id=f"r{i}",
        verdict=verdict,  # type: ignore[arg-type]
        reward=float(i),
        failure_reward=min(float(i), 0.0),
    )


def test_each_sample_keeps_its_own_trace_through_the_changelog_into_the_experience():
    g = GroupState("g", "t", group_size=3, deadline=100.0)
    g.trace = TP.format(0xAA, 1)
    for i in range(3):
        g.add_generation(_gen(i))
    g.add_verdict(_verdict(0, "accept"), "v0", TP.format(0xA0, 2))
    g.add_verdict(_verdict(1, "accept"), "v1", TP.format(0xA1, 3))
    # a restart restores the group from its changelog state: the traces come back with it
    g = GroupState.from_json(g.to_json())
    g.add_verdict(_verdict(2, "mask"), "v2", TP.format(0xA2, 4))
    assert g.trace == TP.format(0xAA, 1)
    # the experience links to every judged sample, masked ones too
    assert g.sample_traces() == (TP.format(0xA0, 2), TP.format(0xA1, 3), TP.format(0xA2, 4))
    exp = g.assemble(now=0.0)
    # only what is trained reaches the learner, each sample with its own trace
    assert [(s.sample_id, s.traceparent) for s in exp.samples] == [
        ("g/0", TP.format(0xA0, 2)),
        ("g/1", TP.format(0xA1, 3)),
    ]


def test_state_written_before_traces_were_kept_still_loads():
    g = GroupState("g", "t", group_size=1, deadline=1.0)
    g.add_generation(_gen(0))
    g.add_verdict(_verdict(0, "accept"), "v0")
    old = g.to_json()
    del old["trace"]
    for slot in old["samples"].values():
        del slot["trace"]
    restored = GroupState.from_json(old)
    assert restored.trace is None
    assert restored.assemble(now=0.0).samples[0].traceparent is None


def test_links_name_each_span_once_and_ignore_blanks():
    a, b = TP.format(1, 2), TP.format(3, 4)
    links = links_to([a, None, "", b, a, "garbage"])
    assert [(link.context.trace_id, link.context.span_id) for link in links] == [(1, 2), (3, 4)]
    ctx = span_context(a)
    assert ctx is not None and ctx.is_remote
    assert span_context(None) is None
