"""Reward ``code-v8``: ``code-v6`` (an episode scored on its final turn, less a cost per extra turn, with
code-v5's comparison) with ``code-v7``'s efficiency: read on the guest's own time (its thread's CPU plus
the sleeps it asked for) where the program's run and the reference's both carry it, on wall time otherwise.

Episodes are scored by ``RLSTREAM_EPISODES__REWARD_FUNCTION`` and one-turn samples by ``reward_function``;
both defaults move together (code-v7 and code-v8), so a final turn's efficiency is read on the clock a
first turn's is, and neither moves with the machine's load. ``code-v6`` stays registered and scores
exactly as before.
"""

from __future__ import annotations

from typing import ClassVar

from streams.reward.code_v6 import CodeRewardV6
from streams.reward.function import register


@register("code-v8")
class CodeRewardV8(CodeRewardV6):
    version = "v8"
    own_time_efficiency: ClassVar[bool] = True
