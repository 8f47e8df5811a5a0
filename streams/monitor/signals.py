"""The monitor's windowed signals: what the run's events say over the last seconds of stream time.

One fold per event type (:func:`observe`) records each fact with its record's timestamp; a signal is then
read over any window ending at ``now`` (:meth:`Signals.value`). Pure and clock-free. What a worker keeps
here lives in memory: after a restart the windows fill again from the events that follow (monitoring is
approximate and at-least-once; the projections are the system of record).
"""

from __future__ import annotations

import math
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import singledispatch
from typing import Any

from schemas.dlq import DeadLettered
from schemas.policy import PolicyLoaded, PolicyPublished
from schemas.rollout import NoiseVerdict, RewardScored, SandboxExecuted

#: reason codes that say a task's results disagree between runs
FLAKY_REASONS = frozenset({"noise.flaky", "runtime.nondeterministic"})
#: the key of facts that belong to no one run (dead letters)
EVERY_RUN = None


@dataclass
class Points:
    """Timestamped values, oldest first, dropped once older than every window needs."""

    items: deque[tuple[float, Any]] = field(default_factory=deque)

    def add(self, at: float, value: Any) -> None:
        self.items.append((at, value))

    def between(self, start: float, end: float) -> list[Any]:
        return [v for t, v in self.items if start < t <= end]

    def prune(self, before: float) -> None:
        while self.items and self.items[0][0] <= before:
            self.items.popleft()


@dataclass
class Signals:
    #: per run: rewards, verdicts (verdict, task, flaky), executions (infra error or not, run time)
    rewards: defaultdict[str | None, Points] = field(default_factory=lambda: defaultdict(Points))
    verdicts: defaultdict[str | None, Points] = field(default_factory=lambda: defaultdict(Points))
    executions: defaultdict[str | None, Points] = field(default_factory=lambda: defaultdict(Points))
    letters: Points = field(default_factory=Points)
    #: per run: newest version published and when, newest version the generators loaded, first fact seen
    published: dict[str, tuple[int, float]] = field(default_factory=dict)
    loaded: dict[str, int] = field(default_factory=dict)
    first_seen: dict[str, float] = field(default_factory=dict)

    def observe(self, event: Any, run: str | None, at: float) -> None:
        if run is not None:
            self.first_seen.setdefault(run, at)
        _observe(event, self, run, at)

    def runs(self) -> list[str | None]:
        seen: set[str | None] = {*self.rewards, *self.verdicts, *self.executions}
        return sorted((seen | {*self.published, *self.loaded}) - {None}, key=str)

    def newest_version(self, run: str | None) -> int | None:
        return self.published[run][0] if run in self.published else None

    def value(
        self, signal: str, run: str | None, now: float, window_s: float, *, learner_lag: int = 0
    ) -> float | None:
        """The signal over (now - window_s, now], or None where its window holds no data."""
        start = now - window_s
        if signal == "reward_mean":
            rewards = self.rewards[run].between(start, now)
            return sum(rewards) / len(rewards) if rewards else None
        if signal == "mask_rate":
            return _share(self.verdicts[run].between(start, now), lambda v: v[0] == "mask")
        if signal == "flaky_tasks":
            verdicts = self.verdicts[run].between(start, now)
            return float(len({task for _, task, flaky in verdicts if flaky})) if verdicts else None
        if signal == "sandbox_infra_error_rate":
            return _share(self.executions[run].between(start, now), lambda e: e[0])
        if signal == "sandbox_p95_s":
            # the programs' own run times: an infrastructure failure's says nothing about them
            times = sorted(t for infra, t in self.executions[run].between(start, now) if not infra)
            return times[math.ceil(0.95 * len(times)) - 1] if times else None  # nearest rank
        if signal == "dead_letters":
            return float(len(self.letters.between(start, now))) if run is EVERY_RUN else None
        if signal == "learner_stall_s":
            if run is None or run not in self.first_seen:
                return None
            last = self.published[run][1] if run in self.published else self.first_seen[run]
            return max(now - last, 0.0) if learner_lag > 0 else 0.0
        if signal == "generator_lag":
            if run is None or run not in self.published:
                return None
            return float(max(self.published[run][0] - self.loaded.get(run, 0), 0))
        raise ValueError(f"unknown signal {signal!r}")

    def prune(self, before: float) -> None:
        for points in (*self.rewards.values(), *self.verdicts.values(), *self.executions.values()):
            points.prune(before)
        self.letters.prune(before)


def _share(items: Iterable[Any], hit: Callable[[Any], bool]) -> float | None:
    items = list(items)
    return sum(1 for i in items if hit(i)) / len(items) if items else None


@singledispatch
def _observe(event: Any, signals: Signals, run: str | None, at: float) -> None:
    """Events no signal reads."""


@_observe.register
def _(event: RewardScored, signals: Signals, run: str | None, at: float) -> None:
    signals.rewards[run].add(at, event.total)


@_observe.register
def _(event: NoiseVerdict, signals: Signals, run: str | None, at: float) -> None:
    flaky = any(r.code in FLAKY_REASONS for r in event.reasons)
    signals.verdicts[run].add(at, (event.verdict, event.task_id, flaky))


@_observe.register
def _(event: SandboxExecuted, signals: Signals, run: str | None, at: float) -> None:
    signals.executions[run].add(at, (event.infra_error is not None, event.duration_s))


@_observe.register
def _(event: DeadLettered, signals: Signals, run: str | None, at: float) -> None:
    signals.letters.add(at, event.stage)


@_observe.register
def _(event: PolicyPublished, signals: Signals, run: str | None, at: float) -> None:
    newest = signals.published.get(event.run_id)
    if newest is None or event.policy_version > newest[0]:
        signals.published[event.run_id] = (event.policy_version, at)


@_observe.register
def _(event: PolicyLoaded, signals: Signals, run: str | None, at: float) -> None:
    signals.loaded[event.run_id] = max(signals.loaded.get(event.run_id, 0), event.policy_version)
