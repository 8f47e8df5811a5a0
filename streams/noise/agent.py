"""The filter processor: rewards -> verdicts, a thin shell over the noise filter.

A sample's verdict needs its source (generation), every run the sandbox made of it (run 0 and the
configured re-runs, for the flakiness check) and its reward. All arrive co-partitioned by
``group_id``, in any order; the sample waits in the state until it is complete, is judged once, and
its entries are dropped. A task's quality (with its reference's run) is assessed once per task and
backend and kept in memory: it is derived, so a restart simply computes it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field, field_validator

from infra.runtime.port import Emit, Incoming, PoisonRecord
from infra.runtime.state import Kind, Marker, State, event_from_state
from schemas.rollout import CodeGenerated, NoiseVerdict, RewardScored, SandboxExecuted
from schemas.topics import EXECUTIONS, GENERATIONS, REWARDS
from streams.noise.config import NoiseConfig
from streams.noise.filter import filter_sample
from streams.noise.rules import TaskQuality, assess_task
from streams.reward.agent import ReferenceRunner, TaskLookup
from streams.reward.literals import CompareOptions

INPUT_TOPICS = (GENERATIONS.name, EXECUTIONS.name, REWARDS.name)


class Waiting(BaseModel):
    """What has arrived of a sample not judged yet (key: its sample id)."""

    code: str | None = None
    #: run index (as text) -> the sandbox's execution
    runs: dict[str, SandboxExecuted] = Field(default_factory=dict)
    reward: RewardScored | None = None

    # a sample that waited across an upgrade holds events of an older version: lifted when read
    @field_validator("runs", mode="before")
    @classmethod
    def _lift_runs(cls, runs: Any) -> Any:
        if not isinstance(runs, dict):
            return runs
        return {
            k: event_from_state(SandboxExecuted, v) if isinstance(v, dict) else v for k, v in runs.items()
        }

    @field_validator("reward", mode="before")
    @classmethod
    def _lift_reward(cls, reward: Any) -> Any:
        return event_from_state(RewardScored, reward) if isinstance(reward, dict) else reward


SAMPLE = Kind("sample", Waiting)
#: a sample already judged: its re-delivered records are ignored
JUDGED = Marker("judged")
KINDS = (SAMPLE, JUDGED)


class FilterAgent:
    def __init__(
        self, config: NoiseConfig, options: CompareOptions, tasks: TaskLookup, reference: ReferenceRunner
    ) -> None:
        self.config = config
        self.options = options
        self.tasks = tasks
        self.reference = reference
        self._quality: dict[tuple[str, str, str], TaskQuality] = {}

    def _task_quality(self, task_id: str, backend: str) -> TaskQuality:
        task = self.tasks.get(task_id)
        if task is None:
            raise PoisonRecord(f"unknown task {task_id!r}: no TaskPublished on rl.tasks")
        key = (task_id, task.event_id(), backend)
        if key not in self._quality:
            self._quality[key] = assess_task(
                task,
                self.options,
                min_cases=self.config.min_cases,
                reference_execution=self.reference(task, backend),
                flag_constant=self.config.flag_constant_answer,
                flag_identity=self.config.flag_identity_answer,
            )
        return self._quality[key]

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        out: list[Emit] = []
        for msg in batch:
            event, p = msg.event, msg.partition
            sid = getattr(event, "sample_id", None)
            if sid is None or state.marked(p, JUDGED, sid):
                continue
            entry = state.get(p, SAMPLE, sid) or Waiting()
            if isinstance(event, CodeGenerated):
                entry.code = event.code
            elif isinstance(event, SandboxExecuted):
                entry.runs[str(event.run_index)] = event
            elif isinstance(event, RewardScored):
                entry.reward = event
            else:
                continue
            verdict = self._judge(entry)
            if verdict is None:
                state.put(p, SAMPLE, sid, entry)
                continue
            state.delete(p, SAMPLE, sid)
            state.mark(p, JUDGED, sid)
            out.append(Emit(verdict, causation_id=msg.envelope.id))
        return out

    def _judge(self, entry: Waiting) -> NoiseVerdict | None:
        if entry.code is None or entry.reward is None or "0" not in entry.runs:
            return None
        runs = [entry.runs[k] for k in sorted(entry.runs, key=int)]
        # every run the sandbox was asked for must be on the log (a run it finally failed is published
        # with infra_error set, so none is waited for in vain)
        if len(runs) < 1 + self.config.reruns and not runs[0].infra_error:
            return None
        reward = entry.reward
        first = runs[0]
        task = self.tasks.get(first.task_id)
        if task is None:
            raise PoisonRecord(f"unknown task {first.task_id!r}: no TaskPublished on rl.tasks")
        quality = None if first.infra_error else self._task_quality(first.task_id, first.backend)
        return filter_sample(
            task=task,
            code=entry.code,
            executions=runs,
            reward=reward,
            config=self.config,
            options=self.options,
            task_quality=quality,
        )
