"""What ``ExperienceSample.advantage`` means: group-relative advantages (GRPO), in plain Python.

Part of the contract, so the experience processor that computes them and the learner that trains on
them (and anyone auditing a run) share one definition without importing each other."""

from __future__ import annotations

import math
from collections.abc import Sequence

from schemas.errors import InputError


def group_advantages(
    rewards: Sequence[float], *, normalise_std: bool = True, eps: float = 1e-6
) -> list[float]:
    """Advantage of each sample in one group: its reward minus the group mean, divided by the group's
    (population) standard deviation when ``normalise_std``.

    A group whose rewards are all equal (std below ``eps``) carries no preference: every advantage is
    0 rather than a division blown up by rounding noise.
    """
    if not rewards:
        raise InputError("a group needs at least one reward", location="rewards")
    for i, r in enumerate(rewards):
        if not math.isfinite(r):
            raise InputError(f"reward {r!r} is not finite", location=f"rewards[{i}]")
    mean = sum(rewards) / len(rewards)
    centred = [r - mean for r in rewards]
    if not normalise_std:
        return centred
    std = math.sqrt(sum(c * c for c in centred) / len(centred))
    if std < eps:
        return [0.0 for _ in centred]
    return [c / std for c in centred]
