"""Evaluation rounds: which held-out tasks are sampled under which policy versions, and how.

Pure and clock-free. A round evaluates one policy version on every ``eval`` task: ``samples`` (k) per
task, under exactly that version, with a sampling seed fixed per (task, version) - independent of the
run - so evaluating the same version again, in this run or another, draws the same samples. Versions
evaluated: 0 (the weights a run starts from), every ``every``-th version, and the first version
published at or after the run's final learner step.

A round's requests travel on their own topic (``rl.evaluations.requested``) and are never subject to
training's backpressure or curriculum: training cannot starve them, and they never count against the
bounds that pace training, so they cannot stall it either. A task that arrives late joins every round
already due, so each round covers every held-out task.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from schemas.rollout import RolloutRequested, SamplingParams
from streams.config import EvaluationConfig


def eval_seed(base: int, task_id: str, version: int) -> int:
    """The sampling seed of ``task_id`` under ``version`` (stable across processes and runs)."""
    digest = hashlib.sha256(f"eval|{base}|{task_id}|{version}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & ((1 << 63) - 1)


def eval_group_id(run: str, task_id: str, version: int) -> str:
    return f"{run}/{task_id}/eval-v{version}"


@dataclass
class EvalTask:
    """A held-out task as the scheduler keeps it (its state record) and the versions already issued."""

    run: str
    task_id: str
    event_id: str
    prompt: str
    entry_point: str
    tenant: str = "default"
    priority: int = 0
    trace: str | None = None
    evaluated: list[int] = field(default_factory=list)
    #: turns each evaluation episode may take (feedback from visible cases only, as in training)
    max_turns: int = 1
    #: the task's difficulty level (None: not graded)
    difficulty: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "task_id": self.task_id,
            "event_id": self.event_id,
            "prompt": self.prompt,
            "entry_point": self.entry_point,
            "tenant": self.tenant,
            "priority": self.priority,
            "trace": self.trace,
            "evaluated": sorted(self.evaluated),
            "max_turns": self.max_turns,
            "difficulty": self.difficulty,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvalTask:
        return cls(**data)


@dataclass(frozen=True)
class EvalPlan:
    """When to evaluate, and the request of one (task, version)."""

    config: EvaluationConfig
    sampling: SamplingParams

    def due(self, version: int, step: int, *, closed: bool = False) -> bool:
        """Whether the version published at learner step ``step`` gets a round; ``closed``: the run's
        final version has been published already (later ones are not the final one)."""
        if closed:
            return False
        every = self.config.every
        return version == 0 or (every > 0 and version % every == 0) or self.closes_training(step)

    def closes_training(self, step: int) -> bool:
        """The run's final step is reached: no more training groups (its last round still runs)."""
        return self.config.final_step is not None and step >= self.config.final_step

    def missing(self, task: EvalTask, versions: list[int]) -> list[int]:
        """The due versions ``task`` has no round of yet, oldest first."""
        done = set(task.evaluated)
        return [v for v in sorted(versions) if v not in done]

    def request(self, task: EvalTask, version: int) -> RolloutRequested:
        return RolloutRequested(
            group_id=eval_group_id(task.run, task.task_id, version),
            task_id=task.task_id,
            group_size=self.config.samples,
            prompt=task.prompt,
            entry_point=task.entry_point,
            tenant=task.tenant,
            priority=task.priority,
            policy_version=version,
            sampling=self.sampling.model_copy(
                update={"seed": eval_seed(self.config.seed, task.task_id, version)}
            ),
            split="eval",
            max_turns=task.max_turns,
        )
