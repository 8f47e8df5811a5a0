"""Reward ``code-v6``: ``code-v4`` (an episode scored on its final turn, less a cost per extra turn) with
``code-v5``'s comparison (an expected float within a few units in its last place; the task's reference's
answer in the program's own backend accepted where it differs from the expected value in floats alone;
trusted standard-library results compared as ``==`` compares them).

Episodes are scored by ``RLSTREAM_EPISODES__REWARD_FUNCTION``, one-turn samples by the configured
``reward_function``: with ``code-v5`` for the one and ``code-v4`` for the other, a final turn would be held to
a looser float rule than a first one. This version gives episodes the one rule; ``code-v4`` stays registered
and scores exactly as before, so old runs re-score unchanged.
"""

from __future__ import annotations

from typing import ClassVar

from streams.reward.code_v4 import CodeRewardV4
from streams.reward.code_v5 import V5_COMPARE
from streams.reward.config import CompareConfig
from streams.reward.function import register


@register("code-v6")
class CodeRewardV6(CodeRewardV4):
    version = "v6"
    default_compare: ClassVar[CompareConfig] = V5_COMPARE
