"""Elastic scaling of a local run (``rlstream run --autoscale``): how many processes of a worker kind to
run, from its consumer group's lag.

The rule is the one KEDA applies to the StatefulSets in a cluster (``infra/deploy/keda/``), so a run
scales the same way on a laptop and in Kubernetes:

* **Desired count.** ``ceil(lag / lag_per_instance)``, clamped to ``[1, maximum]``. The maximum is the
  smaller of the input topic's partitions (an instance more would be assigned nothing) and the machine's
  cores (an instance more would only take time from the others); a setting may lower it further.
* **One step at a time, after a stable window.** The count moves one instance towards the desired count
  only when the desired count has stayed on that side of the current one for ``up_after_s`` (up) or
  ``down_after_s`` (down). A new instance costs a process start, a rebalance of the whole group and a
  state restore, so a short spike must not buy one; and leaving costs another rebalance, so an instance
  stays until the backlog has been gone for a while (KEDA's ``cooldownPeriod``).
* **A pause after each change** (``settle_s``): the lag right after a rebalance says nothing yet about the
  new count, whose consumers are still joining.

Every change is a :class:`Change` naming the lag that caused it, which the runner logs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import BaseModel, Field, field_validator

#: the worker kinds a local run can scale: stateless per record, partitioned by group, and each a
#: consumer group of its own (the scheduler, the monitor and the projector are singletons; the learner
#: is one trainer)
SCALABLE = ("sandbox", "generator", "evaluator")


class ScalingConfig(BaseModel):
    """``RLSTREAM_SCALING__*``: what ``rlstream run --autoscale`` scales, and how eagerly."""

    model_config = {"frozen": True}

    #: the worker kinds scaled (a JSON list in the environment: ``'["sandbox"]'``)
    kinds: tuple[str, ...] = ("sandbox", "generator")
    #: records waiting per instance: the lag at which one more instance is wanted (as KEDA's lagThreshold)
    lag_per_instance: dict[str, int] = Field(
        default_factory=lambda: {"sandbox": 16, "generator": 4, "evaluator": 4}
    )
    #: the most instances of one kind (0: the input topic's partitions or the cores, whichever is fewer)
    max_instances: int = Field(default=0, ge=0)
    #: how often the lag is read
    interval_s: float = Field(default=5.0, gt=0)
    #: how long more instances must be wanted before one is added
    up_after_s: float = Field(default=10.0, ge=0)
    #: how long fewer instances must be wanted before one is retired
    down_after_s: float = Field(default=60.0, ge=0)
    #: no further change this long after one (its consumers are still joining)
    settle_s: float = Field(default=20.0, ge=0)

    @field_validator("kinds")
    @classmethod
    def _scalable(cls, kinds: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [k for k in kinds if k not in SCALABLE]
        if unknown:
            raise ValueError(f"cannot scale {', '.join(unknown)}: only {', '.join(SCALABLE)} scale")
        return kinds


@dataclass(frozen=True)
class Change:
    """One instance added or retired, and why."""

    kind: str
    before: int
    after: int
    lag: int
    desired: int
    #: how long the desired count had been on this side of the current one
    held_s: float

    def describe(self) -> str:
        verb = "adding" if self.after > self.before else "retiring"
        return (
            f"autoscale {self.kind}: {verb} an instance ({self.before} -> {self.after}): lag {self.lag}, "
            f"{self.desired} wanted for {self.held_s:.0f}s"
        )


class Scaler:
    """The count of one worker kind, moved by the lag it is shown (pure: time is passed in)."""

    def __init__(self, kind: str, config: ScalingConfig, maximum: int, *, now: float) -> None:
        if kind not in SCALABLE:
            raise ValueError(f"{kind!r} is not scalable (one of: {', '.join(SCALABLE)})")
        self.kind = kind
        self.lag_per_instance = max(config.lag_per_instance.get(kind, 16), 1)
        self.maximum = max(min(maximum, config.max_instances or maximum), 1)
        self.up_after_s = config.up_after_s
        self.down_after_s = config.down_after_s
        self.settle_s = config.settle_s
        self.count = 1
        self._last_change = now - config.settle_s  # the first reading may act
        #: since when the desired count has been above (+1) or below (-1) the current one
        self._side: tuple[int, float] | None = None

    def desired(self, lag: int) -> int:
        return min(max(math.ceil(max(lag, 0) / self.lag_per_instance), 1), self.maximum)

    def observe(self, lag: int, now: float) -> Change | None:
        """The change to make after reading ``lag`` at ``now``, if any (applied to ``count`` already)."""
        desired = self.desired(lag)
        side = (desired > self.count) - (desired < self.count)
        if side == 0:
            self._side = None
            return None
        if self._side is None or self._side[0] != side:
            self._side = (side, now)
        held = now - self._side[1]
        if now - self._last_change < self.settle_s:
            return None
        if held < (self.up_after_s if side > 0 else self.down_after_s):
            return None
        change = Change(self.kind, self.count, self.count + side, lag, desired, held)
        self.count += side
        self._last_change = now
        self._side = None
        return change
