"""On a long backlog the reward processor's state stays flat: the reference runs it keeps per partition are
a cache with a lifetime (the least recently used beyond ``references_kept`` go first, the unused go after
the grace), and a restarted processor scores a task whose run went by timing it again, never without it."""

from __future__ import annotations

from infra.runtime.memory import MemoryLog, MemoryRuntime
from infra.runtime.port import Hosted
from schemas.base import Event
from schemas.codec import encode
from schemas.envelope import Envelope
from schemas.reference import ReferenceExecuted
from schemas.rollout import RewardScored, SandboxExecuted
from schemas.task import TaskPublished
from streams.reward.agent import INPUT_TOPICS, KINDS, REF, RewardAgent
from streams.reward.function import get_reward_function
from tests.hacks.fixtures import FakeLinter, make_task, passing
from tests.unit.test_reward_agent import GOOD, Tasks, generated

KEPT = 8


def _publish(log: MemoryLog, topic: str, event: Event, at_s: float) -> None:
    log.publish(topic, encode(event, Envelope.for_event(event, source="test")), timestamp_ms=int(at_s * 1000))


def _sample(log: MemoryLog, task: TaskPublished, n: int, at_s: float) -> str:
    gid = f"run/{task.task_id}/{n}"
    sid = f"{gid}/0"
    gen = generated(GOOD, sid).model_copy(update={"group_id": gid, "task_id": task.task_id})
    _publish(log, "rl.generations", gen, at_s)
    _publish(log, "rl.executions", passing(task, sample_id=sid, group_id=gid, task_id=task.task_id), at_s)
    return sid


def _processor(tasks: list[TaskPublished], timed: list[str]) -> Hosted:
    def reference(task: TaskPublished, backend: str) -> SandboxExecuted:
        timed.append(task.task_id)
        return passing(task, sample_id="ref", group_id="ref", task_id=task.task_id)

    agent = RewardAgent(
        get_reward_function("code-v1", linter=FakeLinter()), Tasks(*tasks), reference, references_kept=KEPT
    )
    return Hosted("reward", INPUT_TOPICS, agent.handle, kinds=KINDS, batch_size=16)


def test_reward_state_stays_flat_on_a_long_backlog_and_an_expired_reference_is_timed_again() -> None:
    tasks = [make_task(task_id=f"t/{i}") for i in range(600)]
    timed: list[str] = []
    log = MemoryLog()
    rt = MemoryRuntime(log, [_processor(tasks, timed)], grace_s=60.0)
    sizes = []
    for i, task in enumerate(tasks):  # a new task every 2 s of stream time, each scored once
        _sample(log, task, 0, at_s=1000.0 + 2 * i)
        rt.run()
        if i % 100 == 99:
            sizes.append(rt.changelog_size("reward"))
    assert len(log.events("rl.rewards")) == len(tasks)
    # flat: what a restart restores does not grow with the tasks seen (without a lifetime: one per task)
    assert max(sizes) - min(sizes) <= 2 * KEPT, sizes
    state = rt.state("reward")
    assert all(state.count(p, REF) <= KEPT for p in state.owned_partitions())

    # a restarted processor, and the first task again: its run expired long ago, so it is timed again
    # and published again before the reward that names it
    timed.clear()
    rt.restart("reward", _processor(tasks, timed))
    sid = _sample(log, tasks[0], 1, at_s=1000.0 + 2 * len(tasks))
    rt.run()
    assert timed == [tasks[0].task_id]
    (reward,) = [e for _, e in log.events("rl.rewards") if isinstance(e, RewardScored) and e.sample_id == sid]
    refs = [
        e for _, e in log.events("rl.references") if isinstance(e, ReferenceExecuted) and e.task_id == "t/0"
    ]
    assert len(refs) == 2
    assert reward.reference_event_id == refs[1].event_id()
    assert reward.passed == reward.total_cases == 4
    assert reward.components["efficiency"] > 0  # scored against the run timed again
