"""The noise-filter processor: rewards -> NoiseVerdict (accept / mask / reject + reasons).

A sample is judged once its reward and all its runs (1 + re-runs, for flakiness) are in; its code
(for the static hack signatures) comes from ``rl.generations``. All three inputs are co-partitioned by
group, so one instance holds a sample's whole evidence. Task quality (too few cases, constant or
identity answers pass, reference fails) is assessed once per task in this process.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from infra.kafka.global_table import GlobalTable
from infra.kafka.transactional import Emit, Incoming, PoisonRecord, State
from schemas.rollout import CodeGenerated, RewardScored, SandboxExecuted
from schemas.task import TaskPublished
from schemas.topics import EXECUTIONS, GENERATIONS, REWARDS
from streams.noise.config import NoiseConfig
from streams.noise.filter import filter_sample
from streams.noise.rules import TaskQuality, assess_task
from streams.reward.literals import CompareOptions

INPUT_TOPICS = (GENERATIONS.name, EXECUTIONS.name, REWARDS.name)

ReferenceRun = Callable[[TaskPublished, str], SandboxExecuted | None]


class FilterAgent:
    def __init__(
        self,
        config: NoiseConfig,
        options: CompareOptions,
        tasks: GlobalTable[TaskPublished],
        reference: ReferenceRun,
    ) -> None:
        self.config = config
        self.options = options
        self.tasks = tasks
        self.reference = reference
        self.runs = 1 + config.reruns
        self._quality: dict[tuple[str, str], TaskQuality] = {}

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        out: list[Emit] = []
        for msg in batch:
            p, event = msg.partition, msg.event
            if not isinstance(event, CodeGenerated | SandboxExecuted | RewardScored):
                continue
            sid = event.sample_id
            if state.get(p, f"done:{sid}"):
                continue
            sample = state.get(p, f"sample:{sid}") or {
                "code": None,
                "runs": {},
                "reward": None,
                "cause": None,
            }
            if isinstance(event, CodeGenerated):
                sample["code"] = event.code
            elif isinstance(event, SandboxExecuted):
                sample["runs"][str(event.run_index)] = event.model_dump(mode="json")
            else:
                sample["reward"] = event.model_dump(mode="json")
                sample["cause"] = msg.envelope.id
            if sample["code"] is None or sample["reward"] is None or len(sample["runs"]) < self.runs:
                state.put(p, f"sample:{sid}", sample)
                continue
            state.delete(p, f"sample:{sid}")
            state.put(p, f"done:{sid}", True)
            out.append(self._judge(sample))
        return out

    def _judge(self, sample: dict[str, object]) -> Emit:
        reward = RewardScored.model_validate(sample["reward"])
        runs = sample["runs"]
        assert isinstance(runs, dict)
        executions = [SandboxExecuted.model_validate(runs[k]) for k in sorted(runs, key=int)]
        task = self.tasks.get(reward.task_id)
        if task is None:
            raise PoisonRecord(f"unknown task {reward.task_id!r}: no TaskPublished on rl.tasks")
        code = sample["code"]
        assert isinstance(code, str)
        verdict = filter_sample(
            task=task,
            code=code,
            executions=executions,
            reward=reward,
            config=self.config,
            options=self.options,
            task_quality=self._task_quality(task, executions[0].backend),
        )
        cause = sample["cause"]
        return Emit(verdict, causation_id=cause if isinstance(cause, str) else None)

    def _task_quality(self, task: TaskPublished, backend: str) -> TaskQuality:
        key = (task.event_id(), backend)
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
