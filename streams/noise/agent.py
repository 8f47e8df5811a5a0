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

from infra.kafka.transactional import Emit, Incoming, PoisonRecord, State
from schemas.rollout import CodeGenerated, NoiseVerdict, RewardScored, SandboxExecuted
from schemas.topics import EXECUTIONS, GENERATIONS, REWARDS
from streams.noise.config import NoiseConfig
from streams.noise.filter import filter_sample
from streams.noise.rules import TaskQuality, assess_task
from streams.reward.agent import ReferenceRunner, TaskLookup
from streams.reward.literals import CompareOptions

INPUT_TOPICS = (GENERATIONS.name, EXECUTIONS.name, REWARDS.name)


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
            if sid is None or state.get(p, f"judged:{sid}"):
                continue
            key = f"sample:{sid}"
            entry: dict[str, Any] = state.get(p, key) or {"code": None, "runs": {}, "reward": None}
            if isinstance(event, CodeGenerated):
                entry["code"] = event.code
            elif isinstance(event, SandboxExecuted):
                entry["runs"][str(event.run_index)] = event.model_dump(mode="json")
            elif isinstance(event, RewardScored):
                entry["reward"] = event.model_dump(mode="json")
            else:
                continue
            verdict = self._judge(entry)
            if verdict is None:
                state.put(p, key, entry)
                continue
            state.delete(p, key)
            state.put(p, f"judged:{sid}", True)
            out.append(Emit(verdict, causation_id=msg.envelope.id))
        return out

    def _judge(self, entry: dict[str, Any]) -> NoiseVerdict | None:
        if entry["code"] is None or entry["reward"] is None or "0" not in entry["runs"]:
            return None
        runs = [SandboxExecuted.model_validate(entry["runs"][k]) for k in sorted(entry["runs"], key=int)]
        # every run the sandbox was asked for must be on the log (a run it finally failed is published
        # with infra_error set, so none is waited for in vain)
        if len(runs) < 1 + self.config.reruns and not runs[0].infra_error:
            return None
        reward = RewardScored.model_validate(entry["reward"])
        first = runs[0]
        task = self.tasks.get(first.task_id)
        if task is None:
            raise PoisonRecord(f"unknown task {first.task_id!r}: no TaskPublished on rl.tasks")
        quality = None if first.infra_error else self._task_quality(first.task_id, first.backend)
        return filter_sample(
            task=task,
            code=entry["code"],
            executions=runs,
            reward=reward,
            config=self.config,
            options=self.options,
            task_quality=quality,
        )
