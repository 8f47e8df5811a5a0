"""The reward and filter processors' handlers, driven directly (the runtime is the pipeline's)."""

from __future__ import annotations

from datetime import UTC, datetime

from infra.kafka.transactional import Incoming, State
from schemas.base import Event
from schemas.envelope import Envelope
from schemas.rollout import CodeGenerated, NoiseVerdict, RewardScored, SandboxExecuted
from schemas.task import TaskPublished
from streams.noise.agent import FilterAgent
from streams.noise.config import NoiseConfig
from streams.reward.agent import RewardAgent
from streams.reward.function import get_reward_function
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import FakeLinter, execution, make_task, passing

_offset = iter(range(1_000_000))
GOOD = "def add(a, b):\n    return a + b\n"


def incoming(event: Event, partition: int = 0) -> Incoming:
    env = Envelope.for_event(event, source="test", time=datetime.now(UTC))
    return Incoming(env, event, "t", partition, next(_offset), 1_000_000)


def generated(code: str, sample_id: str = "s-1") -> CodeGenerated:
    return CodeGenerated(
        sample_id=sample_id,
        group_id="g-1",
        task_id="t/add",
        sample_index=0,
        policy_version=0,
        model="tiny",
        prompt_text="p",
        completion_text=code,
        code=code,
    )


class Tasks:
    def __init__(self, *tasks: TaskPublished) -> None:
        self.rows = {t.task_id: t for t in tasks}

    def get(self, key: str) -> TaskPublished | None:
        return self.rows.get(key)


def owned() -> State:
    s = State()
    s.partition(0)
    return s


def reward_agent(task: TaskPublished) -> RewardAgent:
    fn = get_reward_function("code-v1", linter=FakeLinter())
    return RewardAgent(fn, Tasks(task), lambda t, backend: passing(t, sample_id="ref"))


def test_reward_needs_code_and_run_0_in_either_order_and_scores_once() -> None:
    task = make_task()
    agent, state = reward_agent(task), owned()
    x = passing(task)
    assert agent.handle([incoming(x)], state) == []
    out = agent.handle([incoming(generated(GOOD))], state)
    assert len(out) == 1
    reward = out[0].event
    assert isinstance(reward, RewardScored)
    assert reward.passed == reward.total_cases == 4
    assert reward.components["efficiency"] > 0  # the reference's run was used
    # re-delivery and re-runs are not scored again
    assert agent.handle([incoming(x), incoming(generated(GOOD))], state) == []
    assert agent.handle([incoming(passing(task, run_index=1, sample_id="s-2"))], state) == []
    assert state.get(0, "code:s-1") is None and state.get(0, "exec:s-1") is None


def test_reward_of_a_batch_matches_scoring_one_by_one() -> None:
    task = make_task()
    agent, state = reward_agent(task), owned()
    batch = [incoming(generated(GOOD, "a")), incoming(generated("def add(a, b):\n    return 0\n", "b"))]
    batch += [incoming(passing(task, sample_id="a")), incoming(execution(["0"] * 4, sample_id="b"))]
    out = agent.handle(batch, state)
    assert [e.event.sample_id for e in out] == ["a", "b"]  # type: ignore[attr-defined]
    fn = get_reward_function("code-v1", linter=FakeLinter())
    alone = fn.scored_event(task, GOOD, passing(task, sample_id="a"), passing(task, sample_id="ref"))
    assert out[0].event.model_dump_json() == alone.model_dump_json()


def filter_agent(task: TaskPublished, reruns: int = 0) -> FilterAgent:
    return FilterAgent(
        NoiseConfig(reruns=reruns),
        CompareOptions(),
        Tasks(task),
        lambda t, backend: passing(t, sample_id="ref"),
    )


def _reward(task: TaskPublished, code: str, x: SandboxExecuted) -> RewardScored:
    return get_reward_function("code-v1", linter=FakeLinter()).scored_event(task, code, x)


def test_filter_waits_for_code_every_run_and_the_reward() -> None:
    task = make_task()
    agent, state = filter_agent(task, reruns=1), owned()
    x0 = passing(task)
    x1 = execution(["3", "4", "15", "1"], run_index=1)
    assert agent.handle([incoming(_reward(task, GOOD, x0)), incoming(x0)], state) == []
    assert agent.handle([incoming(generated(GOOD))], state) == []  # run 1 still missing
    out = agent.handle([incoming(x1)], state)
    assert len(out) == 1
    verdict = out[0].event
    assert isinstance(verdict, NoiseVerdict)
    assert verdict.verdict == "mask"
    assert "noise.flaky" in {r.code for r in verdict.reasons}
    assert agent.handle([incoming(x1)], state) == []  # judged once
    assert state.get(0, "sample:s-1") is None


def test_filter_rejects_a_hack_and_masks_an_infra_failure() -> None:
    task = make_task()
    agent, state = filter_agent(task), owned()
    hack = "import os\ndef add(a, b):\n    os._exit(0)\n"
    x = execution(["3"] + [None] * 3, statuses=["ok", "missing", "missing", "missing"])
    out = agent.handle([incoming(generated(hack)), incoming(x), incoming(_reward(task, hack, x))], state)
    assert [e.event.verdict for e in out] == ["reject"]  # type: ignore[attr-defined]
    broken = passing(task, sample_id="s-2", infra_error="engine crashed")
    out = agent.handle(
        [incoming(generated(GOOD, "s-2")), incoming(broken), incoming(_reward(task, GOOD, broken))], state
    )
    assert [e.event.verdict for e in out] == ["mask"]  # type: ignore[attr-defined]
