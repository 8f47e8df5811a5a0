"""What a run report shows, as plain data: :class:`RunReportData` holds every series the charts and
tables are drawn from, already aggregated. Loaders fill it (:mod:`.load` from the projection database,
:mod:`.facts` from rows folded off the log); the renderer never touches a database or a broker, so it is
tested with hand-built data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from consumers.episodes import TurnSuccess
from consumers.evaluation import LevelMove, VersionResult
from consumers.review import Agreement

VERDICTS = ("accept", "mask", "reject")


@dataclass(frozen=True)
class Summary:
    samples: int = 0
    tasks: int = 0
    rewards: int = 0
    reward_mean: float | None = None
    policy_versions: int = 0
    latest_step: int | None = None
    trained_samples: int = 0
    executions: int = 0
    reviews: int = 0


#: the learner's figures a version's training is read by, in the order shown: GRPO's loss and KL, DPO's
#: implicit-reward margin and preference accuracy, an SFT stage's answer NLL before and after
TRAINING_METRICS = (
    "loss",
    "approx_kl",
    "dpo_margin",
    "dpo_accuracy",
    "sft_nll_before",
    "sft_nll_after",
)


@dataclass(frozen=True)
class VersionTraining:
    """One published version: the stage that made it (``rl`` or ``sft``), the version its run started
    from (``base``, ``RUN_ID:vN``), and the learner's figures it was published with."""

    policy_version: int
    step: int
    stage: str = "rl"
    base: str | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)
    #: an RL version's objective (grpo or dpo); None for an SFT version
    algorithm: str | None = "grpo"


@dataclass(frozen=True)
class RunReportData:
    run_id: str
    #: where the data came from, shown on the page (a database URL without its password, or "the log")
    source: str = ""
    generated_at: datetime | None = None
    summary: Summary = Summary()
    #: behaviour policy version -> reward totals of the samples it generated
    reward_by_version: dict[int, tuple[float, ...]] = field(default_factory=dict)
    #: learner step -> rewards of the samples trained into the version published at that step
    reward_by_step: dict[int, tuple[float, ...]] = field(default_factory=dict)
    #: policy version -> k -> mean unbiased pass@k over the tasks with at least k samples
    pass_at_k: dict[int, dict[int, float]] = field(default_factory=dict)
    #: policy version -> k -> tasks that pass@k mean is over
    pass_at_k_tasks: dict[int, dict[int, int]] = field(default_factory=dict)
    #: policy version -> verdict -> samples (each sample's latest verdict)
    verdicts_by_version: dict[int, dict[str, int]] = field(default_factory=dict)
    #: reason code -> verdict -> samples
    verdict_reasons: dict[str, dict[str, int]] = field(default_factory=dict)
    #: policy lag of trained samples (learner version at training - behaviour version) -> samples
    staleness: dict[int, int] = field(default_factory=dict)
    #: sandbox backend -> executions (re-runs included)
    backend_executions: dict[str, int] = field(default_factory=dict)
    #: sandbox backend -> durations in seconds of its executions
    backend_latency_s: dict[str, tuple[float, ...]] = field(default_factory=dict)
    #: automated verdicts against the reviews in force
    agreement: Agreement = field(default_factory=Agreement)
    #: per split and policy version: pass@k over tasks with its bootstrap interval, mean reward and
    #: mean code similarity (held-out rows come from evaluation rounds under exact versions)
    evaluation: tuple[VersionResult, ...] = ()
    #: training episodes of several turns: success by turn per policy version they started under
    turns: tuple[TurnSuccess, ...] = ()
    #: the same per difficulty level, over the graded tasks of each: (level, row), by level
    evaluation_by_level: tuple[tuple[int, VersionResult], ...] = ()
    #: the level curriculum's moves, in log order (empty without graded tasks)
    curriculum: tuple[LevelMove, ...] = ()
    #: every published version in order: stage, base and the learner's figures
    training: tuple[VersionTraining, ...] = ()

    def split_rows(self, split: str) -> list[VersionResult]:
        return [r for r in self.evaluation if r.split == split]

    @property
    def verdict_totals(self) -> dict[str, int]:
        return {v: sum(by.get(v, 0) for by in self.verdicts_by_version.values()) for v in VERDICTS}

    @property
    def ks(self) -> tuple[int, ...]:
        return tuple(sorted({k for by_k in self.pass_at_k.values() for k in by_k}))

    @property
    def charted_k(self) -> int | None:
        """The k > 1 drawn next to pass@1: the largest k estimated for the largest share of the tasks
        (means over different sets of tasks are not comparable, so the best-covered k wins)."""

        def coverage(k: int) -> float:
            covered = sum(by_k.get(k, 0) for by_k in self.pass_at_k_tasks.values())
            return covered / max(sum(by_k.get(1, 0) for by_k in self.pass_at_k_tasks.values()), 1)

        candidates = [k for k in self.ks if k > 1]
        if not candidates:
            return None
        best = max(coverage(k) for k in candidates)
        return max(k for k in candidates if coverage(k) == best)


def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def quantile(xs: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of a non-empty sequence."""
    s = sorted(xs)
    pos = (len(s) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)
