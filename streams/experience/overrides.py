"""Human overrides at group assembly (pure): the verdict of a review in force replaces the automated
one of a judged sample, in both directions - a rejected or masked sample a reviewer accepts joins the
gradient with its reward, a sample a reviewer masks or rejects leaves it. A reviewer's reject keeps a
sample out (where the filter's reject trains it as a failure): a human's judgement is no evidence the
program controls, and the learner keeps out a sample a later review masks or rejects the same way, when
its group's advantages are computed already. A sample with no verdict yet is left alone: its reward
arrives with its verdict."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from streams.experience.core import GroupState, Verdict

VERDICTS = ("accept", "mask", "reject")


def apply_overrides(group: GroupState, verdict_in_force: Callable[[str], str | None]) -> list[str]:
    """Apply the reviews in force to ``group`` before it is assembled; returns the sample ids whose
    verdict changed."""
    changed: list[str] = []
    for sample_id, slot in sorted(group.samples.items()):
        if slot.verdict is None:
            continue
        human = verdict_in_force(sample_id)
        if human not in VERDICTS:
            continue
        if human != "accept":
            slot.failure_reward = None  # out of the gradient, not trained as a failure
        if human != slot.verdict:
            slot.verdict = cast(Verdict, human)
            changed.append(sample_id)
    return changed
