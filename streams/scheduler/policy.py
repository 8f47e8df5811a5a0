"""Scheduling policy: which task gets the next rollout group, and whether to issue one at all.

Pure and clock-free (callers pass ``now``): the Faust agent around it only feeds it events and
publishes what it decides, so fairness, curriculum and backpressure are tested as plain functions.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from dataclasses import dataclass, field


@dataclass(frozen=True)
class TaskRef:
    task_id: str
    tenant: str = "default"
    priority: int = 0


class WeightedFairQueue:
    """Weighted-fair choice across tenants (stride scheduling), task priority within a tenant.

    Each tenant advances a virtual clock by ``1 / weight`` per group it gets; the tenant with the
    smallest clock goes next, so over any window tenant shares converge to their weights and a tenant
    with a long backlog cannot starve one with a short one. A tenant that was idle re-joins at the
    current clock instead of cashing in the time it was away.
    """

    def __init__(self, weights: dict[str, float] | None = None, default_weight: float = 1.0) -> None:
        if default_weight <= 0 or any(w <= 0 for w in (weights or {}).values()):
            raise ValueError("tenant weights must be positive")
        self._weights = dict(weights or {})
        self._default = default_weight
        self._clock: dict[str, float] = {}
        self._queues: dict[str, list[tuple[int, int, TaskRef]]] = {}
        self._seq = itertools.count()
        self._now = 0.0

    def __len__(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def weight(self, tenant: str) -> float:
        return self._weights.get(tenant, self._default)

    def push(self, task: TaskRef) -> None:
        queue = self._queues.setdefault(task.tenant, [])
        if not queue:
            self._clock[task.tenant] = max(self._clock.get(task.tenant, 0.0), self._now)
        # higher priority first, then first come first served
        heapq.heappush(queue, (-task.priority, next(self._seq), task))

    def pop(self) -> TaskRef | None:
        ready = [t for t, q in self._queues.items() if q]
        if not ready:
            return None
        tenant = min(ready, key=lambda t: (self._clock[t], t))
        _, _, task = heapq.heappop(self._queues[tenant])
        self._now = self._clock[tenant]
        self._clock[tenant] += 1.0 / self.weight(tenant)
        return task


@dataclass
class Curriculum:
    """Skip tasks whose recent groups all passed or all failed: their GRPO advantages are zero, so a
    group spent on them teaches nothing. A skipped task is retried after ``cooldown`` other groups,
    since the policy may have moved."""

    window: int = 2
    cooldown: int = 50
    _history: dict[str, deque[str]] = field(default_factory=dict)
    _skipped_at: dict[str, int] = field(default_factory=dict)
    _issued: int = 0

    def record(self, task_id: str, rewards: list[float]) -> None:
        """Record a finished group's rewards (accepted samples only)."""
        if not rewards:
            return
        outcome = "mixed" if len(set(rewards)) > 1 else "all_pass" if rewards[0] > 0 else "all_fail"
        self._history.setdefault(task_id, deque(maxlen=self.window)).append(outcome)

    def should_skip(self, task_id: str) -> str | None:
        """The reason to skip the task now, or None to schedule it."""
        history = self._history.get(task_id)
        if not history or len(history) < self.window or len(set(history)) != 1 or history[0] == "mixed":
            return None
        since = self._issued - self._skipped_at.setdefault(task_id, self._issued)
        if since >= self.cooldown:
            self._skipped_at.pop(task_id)
            history.clear()
            return None
        return f"curriculum.{history[0]}"

    def issued(self) -> None:
        self._issued += 1


@dataclass(frozen=True)
class Pressure:
    """What the scheduler can see of the system's load."""

    #: experiences produced but not yet consumed by the learner (its consumer-group lag)
    learner_lag: int
    #: groups requested whose experience has not been produced yet
    groups_in_flight: int
    #: a run's newest published policy version, and the newest version its generators said they loaded
    #: (the samples they make now are this many versions behind the learner)
    newest_policy_version: int = 0
    generator_policy_version: int = 0


@dataclass(frozen=True)
class BackpressureBounds:
    max_learner_lag: int = 64
    max_groups_in_flight: int = 32
    max_staleness: int = 2


@dataclass(frozen=True)
class Decision:
    issue: bool
    reason: str = "ok"


def backpressure(p: Pressure, bounds: BackpressureBounds) -> Decision:
    """Hold back (instead of generating samples the learner would discard) when any bound is reached;
    the scheduler re-evaluates on every tick, so it resumes by itself once the pressure drops."""
    if p.learner_lag >= bounds.max_learner_lag:
        return Decision(False, f"learner lag {p.learner_lag} >= {bounds.max_learner_lag}")
    if p.groups_in_flight >= bounds.max_groups_in_flight:
        return Decision(False, f"{p.groups_in_flight} groups in flight >= {bounds.max_groups_in_flight}")
    staleness = p.newest_policy_version - p.generator_policy_version
    if staleness > bounds.max_staleness:
        return Decision(False, f"policy staleness {staleness} > {bounds.max_staleness}")
    return Decision(True)
