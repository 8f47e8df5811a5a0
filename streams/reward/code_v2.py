"""Reward ``code-v2``: ``code-v1`` plus code similarity to the task's reference (``similarity.py``).

    total(v2) = total(v1) + passing * w_sim * similarity

The similarity component is measured for every program whose task has a reference and recorded on
its reward; with the default weight 0 it is reported, not rewarded. Like quality and efficiency it can
only add to a passing program, so every passing program still outranks every failing one. A task
without a reference has no similarity component at all (``details["similarity"]`` says why): a
read model shows "n/a", never 0. ``code-v1`` stays registered and scores exactly as before.
"""

from __future__ import annotations

from schemas.rollout import SandboxExecuted, SandboxExecutedV2
from schemas.task import TaskPublished
from streams.reward.config import legacy_fingerprint
from streams.reward.function import CodeRewardV1, Score, register
from streams.reward.similarity import code_similarity

NO_REFERENCE = "n/a: the task has no reference solution"


@register("code-v2")
class CodeRewardV2(CodeRewardV1):
    name = "code"
    version = "v2"

    @property
    def version_label(self) -> str:
        # the turn cost came with code-v4 and means nothing here
        return self.version + legacy_fingerprint(self.config, exclude={"weights": {"turns"}})

    def score(
        self,
        task: TaskPublished,
        code: str,
        execution: SandboxExecuted,
        reference_execution: SandboxExecutedV2 | None = None,
    ) -> Score:
        base = super().score(task, code, execution, reference_execution)
        weight = self.config.weights.similarity
        weights = {**base.weights, "similarity": weight}
        details = dict(base.details)
        if not task.reference or execution.infra_error:
            # no reference: nothing to compare with; an infra failure: no score either way
            if not task.reference:
                details["similarity"] = NO_REFERENCE
            return Score(base.total, base.components, weights, base.correctness, details)
        similarity = round(code_similarity(task.reference, code).score, 12)
        bonus = weight * similarity if base.passed else 0.0
        components = {**base.components, "similarity": similarity}
        return Score(round(base.total + bonus, 12), components, weights, base.correctness, details)
