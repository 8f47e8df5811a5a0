"""Reward ``code-v3``: ``code-v2`` with the rules of issue 13.

- An expected ``int`` is compared exactly: it matches an ``int`` of the same value or a float exactly
  equal to it, never a float within a tolerance (code-v1 and code-v2 let ``1000000000001.0`` pass for
  ``1000000000000``). Expected floats keep a rounding-level relative tolerance (1e-9) and lose the
  absolute one (1e-6), under which a tiny expected value matched 0 (``CompareConfig()``).
- The security part counts only calls that are dangerous or attack the judge (``static.tier``: smell or
  attack), each once, never benign standard-library use (``os.path.splitext``, ``traceback.print_exc()``,
  ``sys.exc_info()``, ``sys.exit`` under ``__main__``); code-v1 and code-v2 counted every finding of a
  dangerous family once per line.

Everything else (the formula, similarity as in code-v2) is unchanged; ``code-v1`` and ``code-v2`` stay
registered and score exactly as before.
"""

from __future__ import annotations

from typing import ClassVar

from streams.reward import static
from streams.reward.code_v2 import CodeRewardV2
from streams.reward.config import CompareConfig, RewardConfig, config_fingerprint
from streams.reward.function import register


@register("code-v3")
class CodeRewardV3(CodeRewardV2):
    version = "v3"
    default_compare: ClassVar[CompareConfig] = CompareConfig()

    @property
    def version_label(self) -> str:
        # the turn cost came with code-v4 and means nothing here
        return self.version + config_fingerprint(
            self.config.model_copy(update={"ruff_path": None}), RewardConfig(), exclude={"weights": {"turns"}}
        )

    def security_findings(self, analysis: static.Analysis, allowed: frozenset[str]) -> list[str]:
        found = (*static.evidence(analysis, "attack"), *static.evidence(analysis, "smell"))
        return sorted({f"{f.code}:{f.detail}" for f in found if f.code not in allowed})
