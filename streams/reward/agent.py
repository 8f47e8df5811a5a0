"""The reward processor: executions -> versioned RewardScored events.

The program's code comes from ``rl.generations`` (co-partitioned by group) and is held in state until
its first execution arrives, in whichever order the two topics deliver. Only run 0 is scored; re-runs
are the noise filter's evidence. The task's reference runs once per task and backend in this process
(the efficiency component compares against it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from infra.kafka.global_table import GlobalTable
from infra.kafka.transactional import Emit, Incoming, PoisonRecord, State
from schemas.rollout import CodeGenerated, SandboxExecuted
from schemas.task import TaskPublished
from schemas.topics import EXECUTIONS, GENERATIONS
from streams.reward.function import RewardFunction

INPUT_TOPICS = (GENERATIONS.name, EXECUTIONS.name)

ReferenceRun = Callable[[TaskPublished, str], SandboxExecuted | None]


class RewardAgent:
    def __init__(
        self, reward_fn: RewardFunction, tasks: GlobalTable[TaskPublished], reference: ReferenceRun
    ) -> None:
        self.reward_fn = reward_fn
        self.tasks = tasks
        self.reference = reference

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        out: list[Emit] = []
        for msg in batch:
            p, event = msg.partition, msg.event
            if isinstance(event, CodeGenerated):
                sid = event.sample_id
                if state.get(p, f"done:{sid}") or state.get(p, f"code:{sid}") is not None:
                    continue
                waiting = state.get(p, f"exec:{sid}")
                if waiting is None:
                    state.put(p, f"code:{sid}", event.code)
                    continue
                state.delete(p, f"exec:{sid}")
                out.append(
                    self._score(
                        state,
                        p,
                        event.code,
                        SandboxExecuted.model_validate(waiting["event"]),
                        waiting["cause"],
                    )
                )
            elif isinstance(event, SandboxExecuted) and event.run_index == 0:
                sid = event.sample_id
                if state.get(p, f"done:{sid}"):
                    continue
                code = state.get(p, f"code:{sid}")
                if code is None:
                    state.put(
                        p, f"exec:{sid}", {"event": event.model_dump(mode="json"), "cause": msg.envelope.id}
                    )
                    continue
                state.delete(p, f"code:{sid}")
                out.append(self._score(state, p, code, event, msg.envelope.id))
        return out

    def _score(self, state: State, p: int, code: str, execution: SandboxExecuted, cause: str) -> Emit:
        task = self.tasks.get(execution.task_id)
        if task is None:
            raise PoisonRecord(f"unknown task {execution.task_id!r}: no TaskPublished on rl.tasks")
        reference = None if execution.infra_error else self.reference(task, execution.backend)
        reward = self.reward_fn.scored_event(task, code, execution, reference)
        state.put(p, f"done:{execution.sample_id}", True)
        return Emit(reward, causation_id=cause)
