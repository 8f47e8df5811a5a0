"""Reward ``code-v4``: ``code-v3`` for an episode of several turns, scored on its final turn's code (against
every case, visible and hidden), less a cost for each turn it took beyond the first:

    total(v4) = total(v3) - passing * min(w_turns * extra_turns, cap),   cap = w_c * (1 - partial_credit) / 2

The cost counts for a passing episode only, and never exceeds half the margin by which a pass beats a
failure: solving in fewer turns is worth more, and a pass after many turns still outranks any failure.
The ``turns`` component records the extra turns (the final turn's index). A one-turn sample scores
exactly as under ``code-v3`` (no extra turn), but the pipeline scores one-turn samples with the
configured ``reward_function`` and episodes with this one (``RLSTREAM_EPISODES__REWARD_FUNCTION``).
"""

from __future__ import annotations

from schemas.rollout import SandboxExecuted, SandboxExecutedV2
from schemas.task import TaskPublished
from streams.reward.code_v3 import CodeRewardV3
from streams.reward.config import RewardConfig, config_fingerprint
from streams.reward.function import Score, register


@register("code-v4")
class CodeRewardV4(CodeRewardV3):
    version = "v4"

    @property
    def version_label(self) -> str:
        return self.version + config_fingerprint(
            self.config.model_copy(update={"ruff_path": None}), RewardConfig()
        )

    def score(
        self,
        task: TaskPublished,
        code: str,
        execution: SandboxExecuted,
        reference_execution: SandboxExecutedV2 | None = None,
    ) -> Score:
        base = super().score(task, code, execution, reference_execution)
        cfg = self.config
        extra = execution.turn
        weights = {**base.weights, "turns": cfg.weights.turns}
        components = {**base.components, "turns": float(extra)}
        if execution.infra_error:
            return Score(base.total, components, weights, base.correctness, base.details)
        cap = cfg.weights.correctness * (1.0 - cfg.partial_credit) / 2.0
        cost = min(cfg.weights.turns * extra, cap) if base.passed else 0.0
        details = dict(base.details)
        if extra:
            details["turns"] = f"{extra + 1} turns" + (
                "" if base.passed else "; the cost counts for a pass only"
            )
        return Score(round(base.total - cost, 12), components, weights, base.correctness, details)
