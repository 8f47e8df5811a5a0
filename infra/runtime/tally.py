"""What the events a worker wrote say, counted for its metrics: one fold per event type.

A worker's :class:`~infra.runtime.port.ProcessorStats` counts records in and out; this tally reads the
events it wrote (once they are committed) for what an operator watches: sandbox outcomes and run times,
rewards, the noise filter's verdicts and reasons, dead letters, the learner's step and policy version, and
the version the generators loaded. Pure: no client library; ``infra/telemetry/metrics.py`` turns it into
Prometheus metrics at scrape time.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import singledispatch
from typing import Any

from schemas.dlq import DeadLettered
from schemas.policy import PolicyLoaded, PolicyPublished
from schemas.rollout import NoiseVerdict, RewardScored, SandboxExecuted

#: a run's label when the envelope names none
NO_RUN = ""


def sandbox_outcome(event: SandboxExecuted) -> str:
    """One word for how a sandbox run ended: ``infra_error`` (not the program's fault), ``timeout``,
    ``memory``, ``violation``, ``error`` (a case raised, or a case or result is missing), else ``ok``
    (every case returned a value; whether it was right is the reward's to say)."""
    if event.infra_error:
        return "infra_error"
    if event.timed_out:
        return "timeout"
    if event.memory_exceeded:
        return "memory"
    if event.violation or event.violations:
        return "violation"
    if event.mode == "check":
        return "ok" if event.exit_code == 0 else "error"
    if not event.cases or any(c.status != "ok" for c in event.cases):
        return "error"
    return "ok"


@dataclass
class Summary:
    """A count and a sum (Prometheus' summary without quantiles): the mean is ``sum / count``."""

    count: int = 0
    sum: float = 0.0

    def add(self, value: float) -> None:
        self.count += 1
        self.sum += value

    @property
    def mean(self) -> float | None:
        return self.sum / self.count if self.count else None


#: upper bounds (seconds) of the run-time histogram's buckets: from a cached result (~ms) past the default
#: 10 s limit; percentiles are read from these (Prometheus' histogram_quantile)
RUN_SECONDS_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@dataclass
class Histogram:
    """Counts of values at or below each bound (cumulative, as Prometheus exposes them), and their sum."""

    bounds: tuple[float, ...] = RUN_SECONDS_BUCKETS
    counts: list[int] = field(default_factory=lambda: [0] * (len(RUN_SECONDS_BUCKETS) + 1))
    sum: float = 0.0

    def add(self, value: float) -> None:
        self.sum += value
        for i, bound in enumerate(self.bounds):
            if value <= bound:
                self.counts[i] += 1
        self.counts[-1] += 1  # +Inf

    @property
    def count(self) -> int:
        return self.counts[-1]

    def buckets(self) -> list[tuple[float, int]]:
        """(upper bound, cumulative count) pairs, infinity last."""
        return [*zip(self.bounds, self.counts, strict=False), (math.inf, self.count)]


@dataclass
class EventTally:
    #: (run, backend, outcome) -> sandbox runs
    sandbox: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    #: (run, backend) -> run time of the programs (seconds)
    sandbox_seconds: dict[tuple[str, str], Histogram] = field(default_factory=dict)
    #: (run, reward function) -> rewards
    rewards: dict[tuple[str, str], Summary] = field(default_factory=dict)
    #: (run, verdict) -> verdicts; (run, reason code) -> reasons named by a mask or reject
    verdicts: Counter[tuple[str, str]] = field(default_factory=Counter)
    reasons: Counter[tuple[str, str]] = field(default_factory=Counter)
    #: (stage, original topic, disposition) -> dead letters written
    dead_letters: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    #: per run: the learner's newest step and policy version, the generators' loaded version
    learner_step: dict[str, int] = field(default_factory=dict)
    policy_version: dict[str, int] = field(default_factory=dict)
    loaded_version: dict[str, int] = field(default_factory=dict)
    #: per run: when (epoch seconds, wall clock) the learner last published a version
    published_at: dict[str, float] = field(default_factory=dict)

    def observe(self, event: Any, run: str | None) -> None:
        _observe(event, self, run or NO_RUN)


@singledispatch
def _observe(event: Any, tally: EventTally, run: str) -> None:
    """Events without a metric of their own are counted by topic only (``ProcessorStats``)."""


@_observe.register
def _(event: SandboxExecuted, tally: EventTally, run: str) -> None:
    tally.sandbox[(run, event.backend, sandbox_outcome(event))] += 1
    tally.sandbox_seconds.setdefault((run, event.backend), Histogram()).add(event.duration_s)


@_observe.register
def _(event: RewardScored, tally: EventTally, run: str) -> None:
    tally.rewards.setdefault((run, f"{event.reward_fn}-{event.reward_version}"), Summary()).add(event.total)


@_observe.register
def _(event: NoiseVerdict, tally: EventTally, run: str) -> None:
    tally.verdicts[(run, event.verdict)] += 1
    if event.verdict != "accept":
        for reason in event.reasons:
            tally.reasons[(run, reason.code)] += 1


@_observe.register
def _(event: DeadLettered, tally: EventTally, run: str) -> None:
    tally.dead_letters[(event.stage, event.original_topic, event.disposition)] += 1


@_observe.register
def _(event: PolicyPublished, tally: EventTally, run: str) -> None:
    tally.learner_step[event.run_id] = max(tally.learner_step.get(event.run_id, 0), event.step)
    tally.policy_version[event.run_id] = max(tally.policy_version.get(event.run_id, 0), event.policy_version)
    tally.published_at[event.run_id] = time.time()


@_observe.register
def _(event: PolicyLoaded, tally: EventTally, run: str) -> None:
    tally.loaded_version[event.run_id] = max(tally.loaded_version.get(event.run_id, 0), event.policy_version)
