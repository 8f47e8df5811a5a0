"""Held-out evaluation as numbers a user can trust: pass@k per task and, per (split, policy version),
the mean over tasks with a bootstrap confidence interval.

Pure. Per task: n samples, c correct (every case passed), the unbiased pass@k of Chen et al. (2021),
the mean reward and the mean code similarity (None when no sample has one: a task without a reference
shows "n/a", never 0). Per (split, version): the mean of the tasks' pass@k over the tasks that have at
least k samples, and a percentile bootstrap interval over tasks (tasks resampled with replacement,
``RESAMPLES`` times, from a fixed seed, so the same outcomes always give the same interval - a
projection rebuilt from offset 0 equals the live one). The interval says how much the mean would move
with another draw of tasks of the same kind; it is as wide as a handful of tasks makes it.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from streams.reward.passk import pass_at_k

RESAMPLES = 1000
LEVEL = 0.95
SEED = 0


@dataclass(frozen=True)
class SampleOutcome:
    """One scored sample as evaluation sees it."""

    split: str
    policy_version: int
    task_id: str
    passed: bool
    reward: float | None = None
    similarity: float | None = None


@dataclass(frozen=True)
class LevelMove:
    """One change of a run's curriculum level (a CurriculumLevelChanged): held-out pass@1 of the level
    under ``policy_version`` reached ``threshold`` (``passed``), or ``start``, ``exhausted``,
    ``unmeasured``."""

    from_level: int | None
    to_level: int
    reason: str
    policy_version: int | None = None
    pass_at_1: float | None = None
    threshold: float | None = None
    tasks: int = 0
    samples: int = 0


@dataclass(frozen=True)
class TaskResult:
    split: str
    policy_version: int
    task_id: str
    n: int
    c: int
    pass_at: dict[int, float]
    reward_mean: float | None
    similarity_mean: float | None


@dataclass(frozen=True)
class VersionResult:
    split: str
    policy_version: int
    tasks: int
    samples: int
    #: k -> mean pass@k over the tasks with at least k samples
    pass_at: dict[int, float]
    #: k -> (low, high) of the bootstrap interval of that mean
    ci: dict[int, tuple[float, float]]
    #: k -> tasks the mean is over
    tasks_at: dict[int, int] = field(default_factory=dict)
    reward_mean: float | None = None
    similarity_mean: float | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "split": self.split,
            "policy_version": self.policy_version,
            "tasks": self.tasks,
            "samples": self.samples,
            "pass_at_k": {str(k): v for k, v in sorted(self.pass_at.items())},
            "ci": {str(k): list(v) for k, v in sorted(self.ci.items())},
            "tasks_at_k": {str(k): v for k, v in sorted(self.tasks_at.items())},
            "reward_mean": self.reward_mean,
            "similarity_mean": self.similarity_mean,
        }


def _mean(xs: Sequence[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def task_result(
    split: str, version: int, task_id: str, outcomes: Sequence[SampleOutcome], ks: Iterable[int]
) -> TaskResult:
    n = len(outcomes)
    c = sum(o.passed for o in outcomes)
    return TaskResult(
        split=split,
        policy_version=version,
        task_id=task_id,
        n=n,
        c=c,
        pass_at={k: pass_at_k(n, c, k) for k in sorted(set(ks)) if 1 <= k <= n},
        reward_mean=_mean([o.reward for o in outcomes if o.reward is not None]),
        similarity_mean=_mean([o.similarity for o in outcomes if o.similarity is not None]),
    )


def task_results(outcomes: Iterable[SampleOutcome], ks: Iterable[int]) -> list[TaskResult]:
    groups: dict[tuple[str, int, str], list[SampleOutcome]] = {}
    for o in outcomes:
        groups.setdefault((o.split, o.policy_version, o.task_id), []).append(o)
    ks = tuple(ks)
    return [task_result(s, v, t, groups[(s, v, t)], ks) for s, v, t in sorted(groups)]


def bootstrap_ci(
    values: Sequence[float], *, resamples: int = RESAMPLES, level: float = LEVEL, seed: int = SEED
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (resampled with replacement)."""
    if not values:
        raise ValueError("a confidence interval needs at least one value")
    if len(set(values)) == 1:
        return values[0], values[0]
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(resamples))
    tail = (1.0 - level) / 2.0
    lo = means[int(tail * (resamples - 1))]
    hi = means[round((1.0 - tail) * (resamples - 1))]
    return lo, hi


def version_result(tasks: Sequence[TaskResult]) -> VersionResult:
    """The summary of one (split, version) from its tasks' results."""
    first = tasks[0]
    ks = sorted({k for t in tasks for k in t.pass_at})
    pass_at: dict[int, float] = {}
    ci: dict[int, tuple[float, float]] = {}
    tasks_at: dict[int, int] = {}
    for k in ks:
        values = [t.pass_at[k] for t in sorted(tasks, key=lambda t: t.task_id) if k in t.pass_at]
        pass_at[k] = sum(values) / len(values)
        ci[k] = bootstrap_ci(values)
        tasks_at[k] = len(values)
    rewards = [t.reward_mean for t in tasks if t.reward_mean is not None]
    sims = [t.similarity_mean for t in tasks if t.similarity_mean is not None]
    return VersionResult(
        split=first.split,
        policy_version=first.policy_version,
        tasks=len(tasks),
        samples=sum(t.n for t in tasks),
        pass_at=pass_at,
        ci=ci,
        tasks_at=tasks_at,
        reward_mean=_mean(rewards),
        similarity_mean=_mean(sims),
    )


def version_results(tasks: Iterable[TaskResult]) -> list[VersionResult]:
    groups: dict[tuple[str, int], list[TaskResult]] = {}
    for t in tasks:
        groups.setdefault((t.split, t.policy_version), []).append(t)
    return [version_result(groups[key]) for key in sorted(groups)]


def evaluate(outcomes: Iterable[SampleOutcome], ks: Iterable[int]) -> list[VersionResult]:
    """From scored samples to the per (split, version) table."""
    return version_results(task_results(outcomes, ks))


def by_level(
    tasks: Iterable[TaskResult], levels: Mapping[str, int | None]
) -> list[tuple[int, VersionResult]]:
    """The per (split, version) table of each difficulty level, over its graded tasks (``levels``: task
    id -> level; ungraded tasks are left out), by level, split, then version."""
    groups: dict[tuple[int, str, int], list[TaskResult]] = {}
    for t in tasks:
        level = levels.get(t.task_id)
        if level is not None:
            groups.setdefault((level, t.split, t.policy_version), []).append(t)
    return [(key[0], version_result(groups[key])) for key in sorted(groups)]
