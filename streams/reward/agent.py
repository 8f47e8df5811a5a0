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

from infra.runtime.port import Emit, Incoming, PoisonRecord
from infra.runtime.state import Kind, Marker, State
from schemas.reference import ReferenceExecuted
from schemas.rollout import CodeGenerated, SandboxExecuted
from schemas.task import TaskPublished
from schemas.topics import EXECUTIONS, GENERATIONS
from streams.reward.function import RewardFunction

INPUT_TOPICS = (GENERATIONS.name, EXECUTIONS.name)

#: a sample's code waiting for its run-0 execution, and the execution waiting for its code (key: sample id)
CODE = Kind("code", str)
EXEC = Kind("exec", SandboxExecuted)
#: a sample already scored: its re-delivered records are ignored
SCORED = Marker("scored")
#: the reference run this partition scores a task against (key: ``<task event id>:<backend>``)
REF = Kind("ref", ReferenceExecuted)
KINDS = (CODE, EXEC, SCORED, REF)

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
                if state.marked(p, SCORED, sid):
                    continue
                pending = state.get(p, EXEC, sid)
                if pending is not None:
                    ready.append((msg, event.code, pending))
                else:
                    state.put(p, CODE, sid, event.code)
            elif isinstance(event, SandboxExecuted) and event.run_index == 0:
                sid = event.sample_id
                if state.marked(p, SCORED, sid):
                    continue
                code = state.get(p, CODE, sid)
                if code is not None:
                    ready.append((msg, code, event))
                else:
                    state.put(p, EXEC, sid, event)
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
            state.delete(p, CODE, sid)
            state.delete(p, EXEC, sid)
            state.mark(p, SCORED, sid)
            out.append(Emit(reward, causation_id=msg.envelope.id))
        return out

    def _reference(
        self, task: TaskPublished, backend: str, p: int, state: State
    ) -> tuple[ReferenceExecuted | None, bool]:
        """The reference run this partition scores ``task`` against in ``backend``, and whether this is
        its first use here (then it must be published)."""
        key = f"{task.event_id()}:{backend}"
        stored = state.get(p, REF, key)
        if stored is not None:
            return stored, False
        run = self.reference(task, backend)
        if run is None:
            return None, False
        ref = ReferenceExecuted(
            task_id=task.task_id,
            task_event_id=task.event_id(),
            backend=run.backend,
            execution=run,
        )
        state.put(p, REF, key, ref)
        return ref, True
