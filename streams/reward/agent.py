"""The reward processor: executions -> rewards, a thin shell over the registered reward function.

Inputs are co-partitioned by ``group_id``: a sample's generation (for its source: quality and
security read the code) and its executions arrive on the same partition number. Only run 0 is
scored; re-runs exist for the noise filter's flakiness check. Whichever of generation and execution
arrives second completes the pair; the pair is dropped from the state once scored, and a marker
keeps a re-delivered record from scoring twice (the event id would be the same anyway).

The task's reference run (the efficiency baseline) is kept in the state of each partition that needs
it and published once per partition as ``ReferenceExecuted`` in the same transaction as the first
reward scored against it; every reward names it by id. A restart reuses the stored run instead of
timing a new one, so every reward on the log can be re-scored exactly from the log alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from infra.kafka.transactional import Emit, Incoming, PoisonRecord, State
from schemas.reference import ReferenceExecuted
from schemas.rollout import CodeGenerated, SandboxExecuted
from schemas.task import TaskPublished
from schemas.topics import EXECUTIONS, GENERATIONS
from streams.reward.function import RewardFunction

INPUT_TOPICS = (GENERATIONS.name, EXECUTIONS.name)

#: (task, backend) -> the reference solution's execution in that backend (None: no reference)
ReferenceRunner = Callable[[TaskPublished, str], SandboxExecuted | None]


class TaskLookup(Protocol):
    def get(self, key: str) -> TaskPublished | None: ...


class RewardAgent:
    def __init__(self, reward_fn: RewardFunction, tasks: TaskLookup, reference: ReferenceRunner) -> None:
        self.reward_fn = reward_fn
        self.tasks = tasks
        self.reference = reference

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        ready: list[tuple[Incoming, str, SandboxExecuted]] = []
        for msg in batch:
            event, p = msg.event, msg.partition
            if isinstance(event, CodeGenerated):
                sid = event.sample_id
                if state.get(p, f"scored:{sid}"):
                    continue
                pending = state.get(p, f"exec:{sid}")
                if pending is not None:
                    ready.append((msg, event.code, SandboxExecuted.model_validate(pending)))
                else:
                    state.put(p, f"code:{sid}", event.code)
            elif isinstance(event, SandboxExecuted) and event.run_index == 0:
                sid = event.sample_id
                if state.get(p, f"scored:{sid}"):
                    continue
                code = state.get(p, f"code:{sid}")
                if code is not None:
                    ready.append((msg, code, event))
                else:
                    state.put(p, f"exec:{sid}", event.model_dump(mode="json"))
        # one lint process for the whole batch instead of one per sample
        warm = getattr(getattr(self.reward_fn, "linter", None), "warm", None)
        if callable(warm) and len(ready) > 1:
            warm([code for _, code, _ in ready])
        out: list[Emit] = []
        for msg, code, execution in ready:
            task = self.tasks.get(execution.task_id)
            if task is None:
                raise PoisonRecord(f"unknown task {execution.task_id!r}: no TaskPublished on rl.tasks")
            p, sid = msg.partition, execution.sample_id
            reference = None
            if not execution.infra_error:
                reference, first_use = self._reference(task, execution.backend, p, state)
                if reference is not None and first_use:
                    out.append(Emit(reference, causation_id=msg.envelope.id))
            reward = self.reward_fn.scored_event(
                task,
                code,
                execution,
                reference.execution if reference else None,
                reference_event_id=reference.event_id() if reference else None,
            )
            state.delete(p, f"code:{sid}")
            state.delete(p, f"exec:{sid}")
            state.put(p, f"scored:{sid}", True)
            out.append(Emit(reward, causation_id=msg.envelope.id))
        return out

    def _reference(
        self, task: TaskPublished, backend: str, p: int, state: State
    ) -> tuple[ReferenceExecuted | None, bool]:
        """The reference run this partition scores ``task`` against in ``backend``, and whether this is
        its first use here (then it must be published)."""
        key = f"ref:{task.event_id()}:{backend}"
        stored = state.get(p, key)
        if stored is not None:
            return ReferenceExecuted.model_validate(stored), False
        run = self.reference(task, backend)
        if run is None:
            return None, False
        ref = ReferenceExecuted(
            task_id=task.task_id,
            task_event_id=task.event_id(),
            backend=run.backend,
            execution=run,
        )
        state.put(p, key, ref.model_dump(mode="json"))
        return ref, True
