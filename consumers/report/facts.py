"""One run's facts as plain rows (one per sample, execution, published version and review) and the
pure aggregation of them into :class:`RunReportData`: what ``rlstream report --from-log`` draws after
folding the log (:mod:`.fold`). The projection loader (:mod:`.load`) gets the same series from SQL.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from consumers.episodes import turn_success
from consumers.evaluation import SampleOutcome, by_level, task_results, version_results
from consumers.report.data import TRAINING_METRICS, VERDICTS, RunReportData, Summary, VersionTraining
from consumers.review import Agreement, agreement
from streams.reward.passk import mean_pass_at_k, pass_at_k_table

#: the k of pass@k (as the projections' default); a k larger than a task's samples is left out
DEFAULT_KS: tuple[int, ...] = (1, 2, 4, 8, 16)


@dataclass(frozen=True)
class SampleFacts:
    sample_id: str
    task_id: str
    #: the behaviour policy version that generated the sample
    policy_version: int
    #: total reward (None until scored)
    reward: float | None = None
    #: every case passed (None until scored)
    passed: bool | None = None
    #: the noise filter's latest verdict (None until filtered)
    verdict: str | None = None
    reasons: tuple[str, ...] = ()
    split: str = "train"
    #: code similarity to the reference (None: not measured, e.g. no reference)
    similarity: float | None = None
    #: turns the episode may take, and the turns it took (its scored turn + 1)
    max_turns: int = 1
    turns_used: int = 1


@dataclass(frozen=True)
class ExecutionFacts:
    sample_id: str
    backend: str
    duration_s: float
    run_index: int = 0


@dataclass(frozen=True)
class PolicyFacts:
    policy_version: int
    step: int
    trained_sample_ids: tuple[str, ...] = ()
    metrics: dict[str, float] = field(default_factory=dict)
    stage: str = "rl"
    base: str | None = None
    algorithm: str | None = "grpo"


@dataclass(frozen=True)
class ReviewFacts:
    """A review in force (the newest of its sample)."""

    sample_id: str
    verdict: str
    reviewer: str = ""
    #: the automated verdict the reviewer overrode, as recorded (None: the sample's latest verdict)
    automated: str | None = None


@dataclass(frozen=True)
class RunFacts:
    run_id: str
    samples: tuple[SampleFacts, ...] = ()
    executions: tuple[ExecutionFacts, ...] = ()
    policies: tuple[PolicyFacts, ...] = ()
    reviews: tuple[ReviewFacts, ...] = ()
    #: task id -> difficulty level, for the graded tasks
    task_levels: Mapping[str, int] = field(default_factory=dict)


def _agreement(facts: RunFacts) -> Agreement:
    """The reviews in force (the last of each sample) against the automated verdict each reviewed."""
    in_force = {r.sample_id: r for r in facts.reviews}
    latest = {s.sample_id: s.verdict for s in facts.samples if s.verdict is not None}
    automated = {}
    for sid, r in in_force.items():
        auto = r.automated or latest.get(sid)
        if auto is not None:
            automated[sid] = auto
    return agreement(automated, {sid: r.verdict for sid, r in in_force.items()})


def _sorted_lists(d: dict[int, list[float]]) -> dict[int, tuple[float, ...]]:
    return {k: tuple(v) for k, v in sorted(d.items())}


def aggregate(
    facts: RunFacts, *, ks: Sequence[int] = DEFAULT_KS, source: str = "", generated_at: datetime | None = None
) -> RunReportData:
    per_task = task_results(
        (
            SampleOutcome(s.split, s.policy_version, s.task_id, s.passed, s.reward, s.similarity)
            for s in facts.samples
            if s.passed is not None
        ),
        ks,
    )
    evaluation = version_results(per_task)
    samples = facts.samples
    # reward and pass@k by version are of training samples; held-out ones have their own rows
    train = [s for s in samples if s.split == "train"]
    reward_of = {s.sample_id: s.reward for s in samples if s.reward is not None}
    version_of = {s.sample_id: s.policy_version for s in samples}

    by_version: dict[int, list[float]] = defaultdict(list)
    for s in train:
        if s.reward is not None:
            by_version[s.policy_version].append(s.reward)

    by_step: dict[int, list[float]] = defaultdict(list)
    lag: Counter[int] = Counter()
    trained: set[str] = set()
    for p in facts.policies:
        for sid in p.trained_sample_ids:
            trained.add(sid)
            if sid in reward_of:
                by_step[p.step].append(reward_of[sid])
            if sid in version_of:
                # the learner trained it at version (published - 1)
                lag[max(p.policy_version - 1 - version_of[sid], 0)] += 1

    outcomes = [(s.task_id, s.policy_version, s.passed) for s in train if s.passed is not None]
    table = pass_at_k_table(outcomes, ks=tuple(ks)) if outcomes else []
    pass_tasks: dict[int, Counter[int]] = defaultdict(Counter)
    for row in table:
        pass_tasks[row.policy_version].update(row.values.keys())

    verdicts: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(VERDICTS, 0))
    reasons: dict[str, Counter[str]] = defaultdict(Counter)
    for s in samples:
        if s.verdict is None:
            continue
        verdicts[s.policy_version][s.verdict] += 1
        for code in set(s.reasons):
            reasons[code][s.verdict] += 1

    executions = Counter(e.backend for e in facts.executions)
    latency: dict[str, list[float]] = defaultdict(list)
    for e in facts.executions:
        latency[e.backend].append(e.duration_s)

    rewards = list(reward_of.values())
    return RunReportData(
        run_id=facts.run_id,
        source=source,
        generated_at=generated_at,
        summary=Summary(
            samples=len(samples),
            tasks=len({s.task_id for s in samples}),
            rewards=len(rewards),
            reward_mean=sum(rewards) / len(rewards) if rewards else None,
            policy_versions=len({p.policy_version for p in facts.policies}),
            latest_step=max((p.step for p in facts.policies), default=None),
            trained_samples=len(trained),
            executions=len(facts.executions),
            reviews=len({r.sample_id for r in facts.reviews}),
        ),
        reward_by_version=_sorted_lists(by_version),
        reward_by_step=_sorted_lists(by_step),
        pass_at_k=mean_pass_at_k(table),
        pass_at_k_tasks={v: dict(sorted(c.items())) for v, c in sorted(pass_tasks.items())},
        verdicts_by_version=dict(sorted(verdicts.items())),
        verdict_reasons={
            code: dict(c) for code, c in sorted(reasons.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
        },
        staleness=dict(sorted(lag.items())),
        backend_executions=dict(sorted(executions.items())),
        backend_latency_s={b: tuple(xs) for b, xs in sorted(latency.items())},
        agreement=_agreement(facts),
        evaluation=tuple(evaluation),
        turns=turn_success(
            [
                (s.policy_version, s.max_turns, s.turns_used, s.passed)
                for s in train
                if s.max_turns > 1 and s.passed is not None
            ]
        ),
        evaluation_by_level=tuple(by_level(per_task, facts.task_levels)),
        training=training_by_version(facts.policies),
    )


def training_by_version(policies: Iterable[PolicyFacts]) -> tuple[VersionTraining, ...]:
    """Each published version's stage, base and training figures (:data:`TRAINING_METRICS`), in order."""
    return tuple(
        VersionTraining(
            p.policy_version,
            p.step,
            p.stage,
            p.base,
            {k: p.metrics[k] for k in TRAINING_METRICS if k in p.metrics},
            p.algorithm,
        )
        for p in sorted(policies, key=lambda p: p.policy_version)
    )
