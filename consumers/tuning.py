"""Reward weights chosen on validation data: every candidate setting of a grid re-scores the logged
executions of the held-out (``eval``) split - and every human-reviewed sample - with the audit's
counterfactual machinery (``consumers/audit.py``), and is judged by two numbers:

* ``correlation``: Pearson's r, over (task, policy version) cells of the eval split, between the mean
  re-scored reward and pass@1 (the share of samples passing every case). A reward that ranks cells as
  held-out correctness does is a reward that teaches what evaluation measures. None with fewer than two
  cells or no spread.
* ``agreement``: the share of human-reviewed samples whose verdict under the setting (the noise
  filter's, judged again with the re-scored reward where the audit covers the verdict, else the one
  recorded) equals the reviewer's. None without reviews.

The best setting has the highest correlation, then the highest agreement, then the fewest changes
from the configured one. Each setting's version label (``v3+<hash>``) is what a run scored under it
records, so a run names exactly the weights it trained with.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from consumers.audit import Audit, Counterfactual
from schemas.rollout import RewardScored, SandboxExecuted


@dataclass(frozen=True)
class SettingResult:
    overrides: dict[str, Any]
    version: str
    eval_samples: int
    cells: int
    correlation: float | None
    reward_mean: float | None
    reviewed: int
    agreement: float | None
    #: settings that differ from the configured ones
    changes: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "overrides": self.overrides,
            "version": self.version,
            "eval_samples": self.eval_samples,
            "cells": self.cells,
            "correlation": self.correlation,
            "reward_mean": self.reward_mean,
            "reviewed": self.reviewed,
            "agreement": self.agreement,
            "changes": self.changes,
        }


def grid(axes: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the axes' values, in the order given."""
    keys = list(axes)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(axes[k] for k in keys))]


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    n = len(xs)
    if n < 2:
        return None
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 0 or syy <= 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / math.sqrt(sxx * syy)


def _passed(reward: RewardScored) -> bool:
    return reward.total_cases > 0 and reward.passed == reward.total_cases


def evaluate_setting(
    audit: Audit,
    overrides: dict[str, Any],
    *,
    spec: str | None,
    reviews: Mapping[str, str],
    version_of: Mapping[str, int],
    selected: Any,
    changes: int = 0,
) -> SettingResult:
    """Re-score the selected executions of the eval split and of the reviewed samples under one setting."""

    def wanted(x: SandboxExecuted) -> bool:
        return bool(selected(x)) and (audit.sample_split(x.sample_id) == "eval" or x.sample_id in reviews)

    rescored = audit.rescored(Counterfactual(spec=spec, overrides=overrides), wanted)
    cells: dict[tuple[str, int], list[tuple[float, bool]]] = {}
    agreed = reviewed = 0
    version = ""
    eval_samples = 0
    for recorded, other, verdict in rescored:
        version = f"{other.reward_fn}-{other.reward_version}"
        if audit.sample_split(recorded.sample_id) == "eval":
            eval_samples += 1
            key = (recorded.task_id, version_of.get(recorded.sample_id, -1))
            cells.setdefault(key, []).append((other.total, _passed(other)))
        human = reviews.get(recorded.sample_id)
        if human is not None:
            reviewed += 1
            judged = verdict.verdict if verdict is not None else audit.recorded_verdict(recorded)
            agreed += judged == human
    rewards = [sum(r for r, _ in v) / len(v) for v in cells.values()]
    pass1 = [sum(p for _, p in v) / len(v) for v in cells.values()]
    totals = [r for v in cells.values() for r, _ in v]
    return SettingResult(
        overrides=overrides,
        version=version,
        eval_samples=eval_samples,
        cells=len(cells),
        correlation=pearson(rewards, pass1),
        reward_mean=sum(totals) / len(totals) if totals else None,
        reviewed=reviewed,
        agreement=agreed / reviewed if reviewed else None,
        changes=changes,
    )


def best(results: Sequence[SettingResult]) -> SettingResult | None:
    """Highest correlation, then agreement, then the fewest overrides (the first such in grid order)."""
    if not results:
        return None

    def key(r: SettingResult) -> tuple[float, float, int]:
        # rounded: settings that rank the same up to float noise tie, and the smaller change wins
        return (
            round(r.correlation, 6) if r.correlation is not None else -2.0,
            round(r.agreement, 6) if r.agreement is not None else -1.0,
            -r.changes,
        )

    top = max(key(r) for r in results)
    return next(r for r in results if key(r) == top)
