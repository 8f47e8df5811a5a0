"""Versioned reward functions, registered by name and version (``code-v1``).

A reward function is a pure function of (task, program source, stored execution, stored reference
execution) plus its configuration: re-scoring a stored execution always gives the same event, with
the same id and the same bytes. A new scoring rule is a new version; old versions stay registered so
an audit can re-score history with any of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from schemas.errors import UsageError
from schemas.rollout import RewardScored, SandboxExecuted, SandboxExecutedV2
from schemas.task import TaskPublished
from streams.reward import static
from streams.reward.config import V1_COMPARE, CompareConfig, RewardConfig, legacy_fingerprint
from streams.reward.correctness import Correctness, grade
from streams.reward.lint import Linter, RuffLinter
from streams.reward.literals import CompareOptions

#: static findings that count as security findings (dangerous calls), unless the reference has them too
SECURITY_CODES = frozenset(
    {
        static.DYNAMIC_CODE,
        static.PROCESS,
        static.NETWORK,
        static.FILE_ACCESS,
        static.TAMPERING,
        static.FRAME_INSPECTION,
        static.EXIT_HOOK,
        static.FORCED_EXIT,
    }
)


@dataclass(frozen=True)
class Score:
    total: float
    components: dict[str, float]
    weights: dict[str, float]
    correctness: Correctness
    details: dict[str, str]

    @property
    def passed(self) -> bool:
        return self.correctness.all_passed


class RewardFunction(ABC):
    name: ClassVar[str]
    version: ClassVar[str]

    @property
    def version_label(self) -> str:
        """The version as recorded on each reward event: the registered version, plus a fingerprint of
        the configuration when it is not the default one."""
        return self.version

    @property
    def spec(self) -> str:
        return f"{self.name}-{self.version}"

    @abstractmethod
    def score(
        self,
        task: TaskPublished,
        code: str,
        execution: SandboxExecuted,
        reference_execution: SandboxExecutedV2 | None = None,
    ) -> Score: ...

    @abstractmethod
    def compare_options(self) -> CompareOptions:
        """How this function compares returned values (the noise filter grades re-runs the same way)."""

    def scored_event(
        self,
        task: TaskPublished,
        code: str,
        execution: SandboxExecuted,
        reference_execution: SandboxExecutedV2 | None = None,
        *,
        reference_event_id: str | None = None,
    ) -> RewardScored:
        """The reward event; ``reference_event_id`` names the published reference run it compared with."""
        score = self.score(task, code, execution, reference_execution)
        return self.to_event(score, execution, reference_event_id=reference_event_id)

    def to_event(
        self, s: Score, execution: SandboxExecuted, *, reference_event_id: str | None = None
    ) -> RewardScored:
        return RewardScored(
            sample_id=execution.sample_id,
            group_id=execution.group_id,
            task_id=execution.task_id,
            execution_event_id=execution.event_id(),
            reward_fn=self.name,
            reward_version=self.version_label,
            components=s.components,
            weights=s.weights,
            total=s.total,
            passed=s.correctness.passed,
            total_cases=s.correctness.total,
            details=s.details,
            reference_event_id=reference_event_id,
            turn=execution.turn,
        )


_REGISTRY: dict[str, Callable[..., RewardFunction]] = {}


def register(spec: str) -> Callable[[type[RewardFunction]], type[RewardFunction]]:
    def deco(cls: type[RewardFunction]) -> type[RewardFunction]:
        if f"{cls.name}-{cls.version}" != spec:
            raise ValueError(f"{cls.__name__} registers as {spec} but is {cls.name}-{cls.version}")
        _REGISTRY[spec] = cls
        return cls

    return deco


def _load_versions() -> None:
    """Import the later versions, which register themselves (they build on the classes here). Done
    on first use rather than at the end of this module, so importing any of them first is no cycle."""
    from streams.reward import code_v2, code_v3, code_v4, code_v5, code_v6, code_v7, code_v8  # noqa: F401


def available() -> list[str]:
    _load_versions()
    return sorted(_REGISTRY)


def get_reward_function(
    spec: str, config: RewardConfig | None = None, *, linter: Linter | None = None
) -> RewardFunction:
    """The registered reward function ``spec`` (``name-version``, e.g. ``code-v1``)."""
    _load_versions()
    try:
        factory = _REGISTRY[spec]
    except KeyError:
        raise UsageError(
            f"unknown reward function {spec!r}", hint=f"choose one of: {', '.join(available())}"
        ) from None
    return factory(config or RewardConfig(), linter=linter)


def failure_total(reward: RewardScored) -> float:
    """What the sample of ``reward`` scores when it is trained as a failure: no credit for any case and
    no bonus, its penalties kept (``-w_s * security`` for the ``code`` functions), and never more than
    it scored. A sample with hack evidence is trained with this, so the evidence can never earn it more
    than failing honestly would."""
    penalty = reward.weights.get("security", 0.0) * reward.components.get("security", 0.0)
    return round(min(reward.total, -penalty), 12)


def _fmt(x: float) -> str:
    return format(x, ".6g")


def _runtime(x: SandboxExecutedV2, *, host_clock: bool, own_time: bool = False) -> float:
    """Host-measured time from the guest's start to its last result: module load and whatever ran
    between cases (a finaliser, a gc callback) included, nothing the program can move out of it.
    With ``own_time`` that span on the guest's own time (``active_cpu_s``: its thread's CPU plus the
    sleeps it asked for), which the machine's load does not stretch. Executions written before the
    host timed them (v1) fall back to their per-case durations."""
    if own_time and x.active_cpu_s is not None:
        return x.active_cpu_s
    if host_clock and x.active_s is not None:
        return x.active_s
    per_case = sum(c.duration_s for c in x.cases)
    return per_case if per_case > 0 else x.duration_s


@register("code-v1")
class CodeRewardV1(RewardFunction):
    """Correctness first; quality and efficiency as a bonus for passing programs only; a penalty for
    dangerous calls. See :class:`RewardConfig` for the formula."""

    name = "code"
    version = "v1"
    #: the comparison rule when the configuration names none
    default_compare: ClassVar[CompareConfig] = V1_COMPARE
    #: efficiency read on the guest's own time where both runs carry it (code-v7 and code-v8); the wall
    #: clock otherwise, and always for the versions before them
    own_time_efficiency: ClassVar[bool] = False

    def __init__(self, config: RewardConfig, *, linter: Linter | None = None) -> None:
        self.config = config
        self._linter = linter

    def compare_options(self) -> CompareOptions:
        return (self.config.compare or self.default_compare).options()

    def security_findings(self, analysis: static.Analysis, allowed: frozenset[str]) -> list[str]:
        """The dangerous calls the reward penalises (``code:detail``), those of codes the task's
        reference shows too left out. code-v1: every finding of a dangerous family, once per line."""
        return sorted(
            f"{f.code}:{f.detail}"
            for f in analysis.findings
            if f.code in SECURITY_CODES and f.code not in allowed
        )

    @property
    def version_label(self) -> str:
        # the similarity weight came with code-v2 and the turn cost with code-v4: they mean nothing here
        return self.version + legacy_fingerprint(self.config, exclude={"weights": {"similarity", "turns"}})

    @property
    def linter(self) -> Linter:
        if self._linter is None:
            self._linter = RuffLinter(self.config.lint_select, self.config.ruff_path)
        return self._linter

    def score(
        self,
        task: TaskPublished,
        code: str,
        execution: SandboxExecuted,
        reference_execution: SandboxExecutedV2 | None = None,
    ) -> Score:
        cfg = self.config
        w = cfg.weights
        weights = {
            "correctness": w.correctness,
            "quality": w.quality,
            "efficiency": w.efficiency,
            "security": w.security,
        }
        corr = grade(task, execution, self.compare_options(), reference=reference_execution)
        details: dict[str, str] = {"backend": execution.backend, "mode": execution.mode}
        if corr.run_failure:
            details["run_failure"] = corr.run_failure
        if execution.infra_error:
            # the sandbox failed, not the program: no score either way (the noise filter masks it)
            zero = {k: 0.0 for k in ("correctness", "pass_fraction", "quality", "efficiency", "security")}
            return Score(0.0, zero, weights, corr, details)

        analysis = static.analyse(code, task.entry_point)
        ref_analysis = static.analyse(task.reference, task.entry_point) if task.reference else None
        allowed = ref_analysis.codes if ref_analysis else frozenset()
        sec = self.security_findings(analysis, allowed)
        security = min(1.0, len(sec) / cfg.security_findings_cap)
        if sec:
            details["security_findings"] = ";".join(sec)

        correctness = 1.0 if corr.all_passed else cfg.partial_credit * corr.fraction
        quality = efficiency = 0.0
        if corr.all_passed and analysis.tree is not None:
            quality = self._quality(analysis.tree, code, ref_analysis, task.reference, details)
            efficiency = self._efficiency(execution, reference_execution, details)
        elif not corr.all_passed:
            details["bonus"] = "quality and efficiency count for passing programs only"

        total = (
            w.correctness * correctness
            + (w.quality * quality + w.efficiency * efficiency if corr.all_passed else 0.0)
            - w.security * security
        )
        components = {
            "correctness": correctness,
            "pass_fraction": corr.fraction,
            "quality": quality,
            "efficiency": efficiency,
            "security": security,
        }
        return Score(
            round(total, 12), {k: round(v, 12) for k, v in components.items()}, weights, corr, details
        )

    def _quality(
        self,
        tree: object,
        code: str,
        ref: static.Analysis | None,
        ref_code: str | None,
        details: dict[str, str],
    ) -> float:
        import ast

        assert isinstance(tree, ast.Module)
        cfg = self.config
        report = self.linter(code)
        # findings the reference shares (an unused import in the prompt both complete) are the
        # task's, not the program's
        own = Counter(report.findings)
        if ref_code:
            own -= Counter(self.linter(ref_code).findings)
        lint = max(0.0, 1.0 - sum(own.values()) / cfg.lint_findings_cap)
        cc = static.cyclomatic_complexity(tree)
        budget = cfg.complexity_budget
        ref_tree = ref.tree if ref is not None else None
        if ref_tree is not None:
            budget = max(budget, static.cyclomatic_complexity(ref_tree))
        complexity = min(1.0, budget / cc)
        size = static.size(tree)
        if ref_tree is not None:
            ratio = size / static.size(ref_tree)
            length = min(1.0, cfg.length_ratio_budget / ratio)
            details["size_ratio"] = _fmt(ratio)
        else:
            length = 1.0
        details["lint_tool"] = report.tool
        if own:
            details["lint_findings"] = ",".join(sorted(own.elements()))
        details["complexity"] = str(cc)
        return (lint + complexity + length) / 3.0

    def _efficiency(
        self, x: SandboxExecuted, ref: SandboxExecutedV2 | None, details: dict[str, str]
    ) -> float:
        if ref is None:
            details["efficiency"] = "no reference run"
            return 0.0
        if ref.backend != x.backend:
            details["efficiency"] = f"reference ran in {ref.backend}, the program in {x.backend}"
            return 0.0
        if ref.infra_error or not ref.cases:
            details["efficiency"] = "the reference run failed"
            return 0.0
        floor = self.config.efficiency_floor_s
        # both sides on one clock: the guest's own time when both runs carry it and this version reads
        # it, else the host's wall clock when both runs have it
        own = self.own_time_efficiency and x.active_cpu_s is not None and ref.active_cpu_s is not None
        host_clock = x.active_s is not None and ref.active_s is not None
        mine = _runtime(x, host_clock=host_clock, own_time=own)
        theirs = _runtime(ref, host_clock=host_clock, own_time=own)
        details["runtime_ratio"] = _fmt((mine + floor) / (theirs + floor))
        if self.own_time_efficiency:
            details["runtime_clock"] = "cpu" if own else "wall"
        return min(1.0, (theirs + floor) / (mine + floor))
