"""Reward ``code-v5``: ``code-v3`` with float tolerance as a property of the task rather than one
global constant.

- An expected ``float`` matches a float within ``float_ulps`` (4) units in *its* last place, not within
  a relative 1e-9 (about two million units): another order of a handful of operations passes, an answer
  off by 5e-10 relative fails. Expected ints, strings and every other value are exact, as in code-v3.
- A case also accepts the answer the task's own reference gave in the same backend, where that answer
  differs from the task's expected value in float values alone (``reference_band``): the expected value
  as the interpreter that runs the program computes it. The task's values were computed by one Python;
  the WASM guest is another (3.15, whose ``sum()`` of floats is compensated), so a correct program there
  must not fail, nor the task's reference be masked, for the interpreter's float arithmetic.

Everything else is code-v3's; ``code-v3`` stays registered and scores exactly as before.
"""

from __future__ import annotations

from typing import ClassVar

from streams.reward.code_v3 import CodeRewardV3
from streams.reward.config import CompareConfig
from streams.reward.function import register

#: code-v5's own rule
V5_COMPARE = CompareConfig(float_rel_tol=0.0, float_ulps=4, reference_band=True)


@register("code-v5")
class CodeRewardV5(CodeRewardV3):
    version = "v5"
    default_compare: ClassVar[CompareConfig] = V5_COMPARE
