"""The read API over the projected tables: what lineage, reports and reviews ask of a run.

Every function takes an open :class:`~sqlalchemy.orm.Session` (see :func:`consumers.projections.store.
open_session`) and returns plain frozen dataclasses or dicts, so callers never hold ORM objects. The
same queries run on SQLite and PostgreSQL; percentiles and distributions are computed here rather than
in dialect-specific SQL.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from consumers.episodes import TurnSuccess
from consumers.episodes import turn_success as success_by_turn
from consumers.evaluation import LevelMove, TaskResult, VersionResult
from consumers.projections.models import (
    Base,
    CurriculumMove,
    Execution,
    Experience,
    ExperienceSample,
    Group,
    PassAtK,
    PolicyTrainedSample,
    PolicyVersion,
    Review,
    Reward,
    RewardComponent,
    Sample,
    SplitPassAtK,
    SplitSummary,
    Task,
    Verdict,
    VerdictReason,
)


def row_dict(obj: Base) -> dict[str, Any]:
    """The columns of an ORM row as a plain dict (column name -> value)."""
    return {c.key: getattr(obj, c.key) for c in obj.__table__.columns}


# ---- runs ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunRow:
    run_id: str
    groups: int
    samples: int
    first_at: datetime | None
    last_at: datetime | None


def runs(session: Session) -> list[RunRow]:
    """Every run that has samples or groups, oldest first."""
    groups = dict(session.execute(select(Group.run_id, func.count()).group_by(Group.run_id)).all())
    stats = session.execute(
        select(
            Sample.run_id, func.count(), func.min(Sample.generated_at), func.max(Sample.generated_at)
        ).group_by(Sample.run_id)
    )
    by_run: dict[str, RunRow] = {}
    for run_id, n, first, last in stats:
        if run_id is not None:
            by_run[run_id] = RunRow(run_id, groups.get(run_id, 0), n, first, last)
    for run_id, n in groups.items():
        if run_id is not None and run_id not in by_run:
            by_run[run_id] = RunRow(run_id, n, 0, None, None)
    return sorted(by_run.values(), key=lambda r: (r.first_at is None, r.first_at or datetime.min, r.run_id))


@dataclass(frozen=True)
class RunSummary:
    run_id: str
    tasks: int
    groups: int
    samples: int
    executions: int
    rewards: int
    reward_mean: float | None
    #: verdict -> samples (each sample's latest verdict)
    verdicts: dict[str, int]
    experiences: int
    partial_experiences: int
    policy_versions: int
    latest_policy_version: int | None
    latest_step: int | None
    trained_samples: int
    reviews: int
    first_at: datetime | None
    last_at: datetime | None


def run_summary(session: Session, run_id: str) -> RunSummary:
    def count(model: type[Base], *where: Any) -> int:
        return int(session.scalar(select(func.count()).select_from(model).where(*where)) or 0)

    tasks = int(
        session.scalar(select(func.count(func.distinct(Group.task_id))).where(Group.run_id == run_id)) or 0
    )
    reward_mean = session.scalar(select(func.avg(Reward.total)).where(Reward.run_id == run_id))
    latest = session.execute(
        select(PolicyVersion.policy_version, PolicyVersion.step)
        .where(PolicyVersion.run_id == run_id)
        .order_by(PolicyVersion.policy_version.desc())
        .limit(1)
    ).first()
    span = session.execute(
        select(func.min(Sample.generated_at), func.max(Sample.generated_at)).where(Sample.run_id == run_id)
    ).one()
    trained = int(
        session.scalar(
            select(func.count(func.distinct(PolicyTrainedSample.sample_id))).where(
                PolicyTrainedSample.run_id == run_id
            )
        )
        or 0
    )
    return RunSummary(
        run_id=run_id,
        tasks=tasks,
        groups=count(Group, Group.run_id == run_id),
        samples=count(Sample, Sample.run_id == run_id),
        executions=count(Execution, Execution.run_id == run_id),
        rewards=count(Reward, Reward.run_id == run_id),
        reward_mean=float(reward_mean) if reward_mean is not None else None,
        verdicts=verdict_mix(session, run_id),
        experiences=count(Experience, Experience.run_id == run_id),
        partial_experiences=count(Experience, Experience.run_id == run_id, Experience.partial.is_(True)),
        policy_versions=count(PolicyVersion, PolicyVersion.run_id == run_id),
        latest_policy_version=latest[0] if latest else None,
        latest_step=latest[1] if latest else None,
        trained_samples=trained,
        reviews=int(
            session.scalar(
                select(func.count())
                .select_from(Review)
                .join(Sample, Sample.sample_id == Review.sample_id)
                .where(Sample.run_id == run_id)
            )
            or 0
        ),
        first_at=span[0],
        last_at=span[1],
    )


# ---- one sample ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SampleLineage:
    """Every projected row about one sample, in pipeline order."""

    sample_id: str
    sample: dict[str, Any]
    task: dict[str, Any] | None
    group: dict[str, Any] | None
    #: by run_index; each with its per-case results under "cases"
    executions: list[dict[str, Any]]
    #: each with "components": {name: {"value", "weight"}}
    rewards: list[dict[str, Any]]
    #: each with "reasons": [{"code", "detail"}]
    verdicts: list[dict[str, Any]]
    #: the group's experience with this sample's "advantage" (None: not in the gradient)
    experience: dict[str, Any] | None
    #: the policy versions (checkpoints) this sample was trained into, oldest first
    trained_into: list[dict[str, Any]]
    #: oldest first; the last is the review in force
    reviews: list[dict[str, Any]]

    @property
    def trace_id(self) -> str | None:
        value = self.sample.get("trace_id")
        return str(value) if value else None


def sample_lineage(session: Session, sample_id: str) -> SampleLineage | None:
    """The sample's whole story from the projection, or None when no generation of it is projected."""
    sample = session.get(Sample, sample_id)
    if sample is None:
        return None
    task = session.get(Task, sample.task_id)
    group = session.get(Group, sample.group_id)
    executions = [
        row_dict(e)
        for e in session.scalars(
            select(Execution)
            .where(Execution.sample_id == sample_id)
            .order_by(Execution.run_index, Execution.event_id)
        )
    ]
    rewards = []
    for r in session.scalars(
        select(Reward).where(Reward.sample_id == sample_id).order_by(Reward.scored_at, Reward.event_id)
    ):
        d = row_dict(r)
        d["components"] = {
            c.name: {"value": c.value, "weight": c.weight}
            for c in session.scalars(
                select(RewardComponent)
                .where(RewardComponent.reward_event_id == r.event_id)
                .order_by(RewardComponent.name)
            )
        }
        rewards.append(d)
    verdicts = []
    for v in session.scalars(
        select(Verdict).where(Verdict.sample_id == sample_id).order_by(Verdict.decided_at, Verdict.event_id)
    ):
        d = row_dict(v)
        d["reasons"] = [
            {"code": r.code, "detail": r.detail}
            for r in session.scalars(
                select(VerdictReason)
                .where(VerdictReason.verdict_event_id == v.event_id)
                .order_by(VerdictReason.position)
            )
        ]
        verdicts.append(d)
    experience = None
    exp = session.get(Experience, sample.group_id)
    if exp is not None:
        experience = row_dict(exp)
        mine = session.get(ExperienceSample, (sample.group_id, sample_id))
        experience["advantage"] = mine.advantage if mine is not None else None
        experience["in_gradient"] = mine is not None
    trained_into = [
        row_dict(p)
        for p in session.scalars(
            select(PolicyVersion)
            .join(
                PolicyTrainedSample,
                (PolicyTrainedSample.run_id == PolicyVersion.run_id)
                & (PolicyTrainedSample.policy_version == PolicyVersion.policy_version),
            )
            .where(PolicyTrainedSample.sample_id == sample_id)
            .order_by(PolicyVersion.policy_version)
        )
    ]
    reviews = [
        row_dict(r)
        for r in session.scalars(
            select(Review)
            .where(Review.sample_id == sample_id)
            .order_by(Review.log_partition, Review.log_offset)
        )
    ]
    return SampleLineage(
        sample_id=sample_id,
        sample=row_dict(sample),
        task=row_dict(task) if task is not None else None,
        group=row_dict(group) if group is not None else None,
        executions=executions,
        rewards=rewards,
        verdicts=verdicts,
        experience=experience,
        trained_into=trained_into,
        reviews=reviews,
    )


def checkpoints_of(session: Session, sample_id: str) -> list[tuple[str, int, str]]:
    """(run id, policy version, checkpoint uri) of every checkpoint ``sample_id`` was trained into."""
    rows = session.execute(
        select(PolicyVersion.run_id, PolicyVersion.policy_version, PolicyVersion.checkpoint_uri)
        .join(
            PolicyTrainedSample,
            (PolicyTrainedSample.run_id == PolicyVersion.run_id)
            & (PolicyTrainedSample.policy_version == PolicyVersion.policy_version),
        )
        .where(PolicyTrainedSample.sample_id == sample_id)
        .order_by(PolicyVersion.policy_version)
    )
    return [(r, v, u) for r, v, u in rows]


# ---- rewards -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RewardDistribution:
    """Rewards of one policy version (of the samples it generated) or one learner step (of the
    samples it trained on)."""

    policy_version: int
    #: the learner step of that version (None for generation-side rows of a version not yet published)
    step: int | None
    n: int
    mean: float
    std: float
    values: tuple[float, ...]


def _distribution(version: int, step: int | None, values: Sequence[float]) -> RewardDistribution:
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / n)
    return RewardDistribution(version, step, n, mean, std, tuple(sorted(values)))


def reward_by_policy_version(
    session: Session, run_id: str, *, reward_version: str | None = None, split: str | None = "train"
) -> list[RewardDistribution]:
    """Reward totals grouped by the policy version that generated the sample (optionally only those
    of one reward function version, e.g. ``v1``); training samples only unless ``split`` says
    otherwise (None: every sample)."""
    q = (
        select(Sample.policy_version, Reward.total)
        .join(Sample, Sample.sample_id == Reward.sample_id)
        .where(Reward.run_id == run_id)
    )
    if split is not None:
        q = q.where(Sample.split == split)
    if reward_version is not None:
        q = q.where(Reward.reward_version == reward_version)
    by_version: dict[int, list[float]] = defaultdict(list)
    for version, total in session.execute(q):
        by_version[version].append(total)
    steps = _steps(session, run_id)
    return [_distribution(v, steps.get(v), vals) for v, vals in sorted(by_version.items())]


def reward_by_step(session: Session, run_id: str) -> list[RewardDistribution]:
    """Per published policy version (learner step): the rewards of the samples it was trained on, as
    the learner saw them in their experience."""
    q = (
        select(PolicyTrainedSample.policy_version, ExperienceSample.reward)
        .join(
            ExperienceSample,
            (ExperienceSample.sample_id == PolicyTrainedSample.sample_id)
            & (ExperienceSample.group_id == PolicyTrainedSample.group_id),
        )
        .where(PolicyTrainedSample.run_id == run_id)
    )
    by_version: dict[int, list[float]] = defaultdict(list)
    for version, reward in session.execute(q):
        by_version[version].append(reward)
    steps = _steps(session, run_id)
    return [_distribution(v, steps.get(v), vals) for v, vals in sorted(by_version.items())]


def _steps(session: Session, run_id: str) -> dict[int, int]:
    rows = session.execute(
        select(PolicyVersion.policy_version, PolicyVersion.step).where(PolicyVersion.run_id == run_id)
    )
    return dict(rows.all())


def reward_components(session: Session, run_id: str) -> dict[str, float]:
    """Mean of each reward component over the run's rewards."""
    rows = session.execute(
        select(RewardComponent.name, func.avg(RewardComponent.value))
        .join(Reward, Reward.event_id == RewardComponent.reward_event_id)
        .where(Reward.run_id == run_id)
        .group_by(RewardComponent.name)
        .order_by(RewardComponent.name)
    )
    return {name: float(mean) for name, mean in rows}


# ---- pass@k --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PassAtKRow:
    task_id: str
    policy_version: int
    k: int
    n: int
    c: int
    value: float


@dataclass(frozen=True)
class PassAtKMean:
    policy_version: int
    k: int
    #: mean pass@k over the tasks with at least k samples at that version
    value: float
    tasks: int


def pass_at_k_by_task(session: Session, run_id: str) -> list[PassAtKRow]:
    rows = session.scalars(
        select(PassAtK)
        .where(PassAtK.run_id == run_id)
        .order_by(PassAtK.policy_version, PassAtK.task_id, PassAtK.k)
    )
    return [PassAtKRow(r.task_id, r.policy_version, r.k, r.n, r.c, r.value) for r in rows]


def pass_at_k(session: Session, run_id: str, *, split: str = "train") -> list[PassAtKMean]:
    """Mean pass@k per policy version and k (pass@1 included), over the run's tasks of one split
    (training by default; held-out tasks have their own figures: :func:`split_summary`)."""
    rows = session.execute(
        select(SplitPassAtK.policy_version, SplitPassAtK.k, func.avg(SplitPassAtK.value), func.count())
        .where(SplitPassAtK.run_id == run_id, SplitPassAtK.split == split)
        .group_by(SplitPassAtK.policy_version, SplitPassAtK.k)
        .order_by(SplitPassAtK.policy_version, SplitPassAtK.k)
    )
    return [PassAtKMean(v, k, float(mean), int(n)) for v, k, mean, n in rows]


# ---- verdicts ------------------------------------------------------------------------------------


def _latest_verdicts(session: Session, run_id: str) -> dict[str, Verdict]:
    """Each sample's latest verdict (a re-filter with another version supersedes the first)."""
    latest: dict[str, Verdict] = {}
    for v in session.scalars(
        select(Verdict).where(Verdict.run_id == run_id).order_by(Verdict.decided_at, Verdict.event_id)
    ):
        latest[v.sample_id] = v
    return latest


def verdict_mix(session: Session, run_id: str) -> dict[str, int]:
    """verdict (accept / mask / reject) -> samples, by each sample's latest verdict."""
    counts = Counter(v.verdict for v in _latest_verdicts(session, run_id).values())
    return {name: counts.get(name, 0) for name in ("accept", "mask", "reject")}


@dataclass(frozen=True)
class ReasonCount:
    verdict: str
    code: str
    samples: int


def verdict_reasons(session: Session, run_id: str) -> list[ReasonCount]:
    """How often each reason code backs each verdict (samples counted once per code), most first."""
    latest = {v.event_id: v for v in _latest_verdicts(session, run_id).values()}
    counts: Counter[tuple[str, str]] = Counter()
    seen: set[tuple[str, str]] = set()
    for verdict_event_id, code in session.execute(
        select(VerdictReason.verdict_event_id, VerdictReason.code)
        .join(Verdict, Verdict.event_id == VerdictReason.verdict_event_id)
        .where(Verdict.run_id == run_id)
    ):
        v = latest.get(verdict_event_id)
        if v is None or (v.sample_id, code) in seen:
            continue
        seen.add((v.sample_id, code))
        counts[(v.verdict, code)] += 1
    return [
        ReasonCount(verdict, code, n)
        for (verdict, code), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def verdict_mix_by_policy_version(session: Session, run_id: str) -> dict[int, dict[str, int]]:
    """policy version (that generated the sample) -> verdict -> samples."""
    versions = dict(
        session.execute(select(Sample.sample_id, Sample.policy_version).where(Sample.run_id == run_id)).all()
    )
    out: dict[int, dict[str, int]] = defaultdict(lambda: {"accept": 0, "mask": 0, "reject": 0})
    for sample_id, v in _latest_verdicts(session, run_id).items():
        version = versions.get(sample_id)
        if version is not None:
            out[version][v.verdict] += 1
    return dict(sorted(out.items()))


# ---- staleness -----------------------------------------------------------------------------------


def policy_training(session: Session, run_id: str) -> list[PolicyVersion]:
    """The run's published versions in order (stage, base and the learner's figures of each)."""
    return list(
        session.scalars(
            select(PolicyVersion).where(PolicyVersion.run_id == run_id).order_by(PolicyVersion.policy_version)
        )
    )


@dataclass(frozen=True)
class StalenessRow:
    """At training into ``policy_version`` (by the learner at ``policy_version - 1``), how many of
    its samples were generated ``lag`` versions behind the learner."""

    policy_version: int
    lag: int
    samples: int


def staleness(session: Session, run_id: str) -> list[StalenessRow]:
    q = (
        select(PolicyTrainedSample.policy_version, Sample.policy_version)
        .join(Sample, Sample.sample_id == PolicyTrainedSample.sample_id)
        .where(PolicyTrainedSample.run_id == run_id)
    )
    counts: Counter[tuple[int, int]] = Counter()
    for trained, generated in session.execute(q):
        counts[(trained, trained - 1 - generated)] += 1
    return [StalenessRow(v, lag, n) for (v, lag), n in sorted(counts.items())]


def staleness_histogram(rows: Iterable[StalenessRow]) -> dict[int, int]:
    """lag -> samples over all versions."""
    hist: Counter[int] = Counter()
    for r in rows:
        hist[r.lag] += r.samples
    return dict(sorted(hist.items()))


# ---- sandbox -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BackendStat:
    backend: str
    executions: int
    share: float
    mean_s: float
    p50_s: float
    p95_s: float
    max_s: float
    timeouts: int
    infra_errors: int
    cache_hits: int
    durations: tuple[float, ...]


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    if not sorted_values:
        return 0.0
    idx = min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))
    return sorted_values[idx]


def backend_mix(session: Session, run_id: str) -> list[BackendStat]:
    """Per sandbox backend: how many executions (re-runs included), share, latency, failures."""
    by_backend: dict[str, list[tuple[float, bool, bool, bool]]] = defaultdict(list)
    for backend, duration, timed_out, infra, hit in session.execute(
        select(
            Execution.backend,
            Execution.duration_s,
            Execution.timed_out,
            Execution.infra_error,
            Execution.cache_hit,
        ).where(Execution.run_id == run_id)
    ):
        by_backend[backend].append((duration, timed_out, infra is not None, hit))
    total = sum(len(v) for v in by_backend.values())
    out = []
    for backend, rows in sorted(by_backend.items()):
        durations = sorted(r[0] for r in rows)
        out.append(
            BackendStat(
                backend=backend,
                executions=len(rows),
                share=len(rows) / total,
                mean_s=sum(durations) / len(durations),
                p50_s=_quantile(durations, 0.5),
                p95_s=_quantile(durations, 0.95),
                max_s=durations[-1],
                timeouts=sum(r[1] for r in rows),
                infra_errors=sum(r[2] for r in rows),
                cache_hits=sum(r[3] for r in rows),
                durations=tuple(durations),
            )
        )
    return out


# ---- reviews -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReviewPair:
    """The review in force for a sample next to the automated verdict it reviewed."""

    sample_id: str
    #: the automated verdict as the reviewer saw it (else the sample's latest verdict; None: none)
    automated: str | None
    automated_reasons: tuple[str, ...]
    reviewed: str
    reviewer: str
    note: str
    reviewed_at: datetime
    #: reviews recorded for the sample (the one in force included)
    reviews: int

    @property
    def agrees(self) -> bool:
        return self.automated == self.reviewed


def review_agreement(session: Session, run_id: str) -> list[ReviewPair]:
    """Every reviewed sample of the run, its review in force (newest in log order) and the automated
    verdict it reviewed. A review belongs to the run of its sample (the reviewer's own envelope may
    carry another run id)."""
    in_force: dict[str, Review] = {}
    count: Counter[str] = Counter()
    for r in session.scalars(
        select(Review)
        .join(Sample, Sample.sample_id == Review.sample_id)
        .where(Sample.run_id == run_id)
        .order_by(Review.log_partition, Review.log_offset)
    ):
        in_force[r.sample_id] = r
        count[r.sample_id] += 1
    verdicts = _latest_verdicts(session, run_id)
    pairs = []
    for sid, r in sorted(in_force.items()):
        automated = r.automated_verdict
        reasons = tuple(str(x) for x in r.automated_reasons)
        if automated is None and sid in verdicts:
            automated = verdicts[sid].verdict
        pairs.append(
            ReviewPair(
                sample_id=sid,
                automated=automated,
                automated_reasons=reasons,
                reviewed=r.verdict,
                reviewer=r.reviewer,
                note=r.note,
                reviewed_at=r.reviewed_at,
                reviews=count[sid],
            )
        )
    return pairs


def agreement_rate(pairs: Sequence[ReviewPair]) -> float | None:
    """Share of reviewed samples whose review matches the automated verdict (None: no reviews)."""
    judged = [p for p in pairs if p.automated is not None]
    return sum(p.agrees for p in judged) / len(judged) if judged else None


# ---- evaluation -----------------------------------------------------------------------------------


def split_summary(session: Session, run_id: str) -> list[VersionResult]:
    """Per split x policy version: mean pass@k over tasks with its bootstrap interval, mean reward and
    mean code similarity (``split_summary``), train and eval alike, by split then version."""
    rows: dict[tuple[str, int], list[SplitSummary]] = defaultdict(list)
    for row in session.scalars(select(SplitSummary).where(SplitSummary.run_id == run_id)):
        rows[(row.split, row.policy_version)].append(row)
    out = []
    for (split, version), by_k in sorted(rows.items()):
        by_k.sort(key=lambda r: r.k)
        out.append(
            VersionResult(
                split=split,
                policy_version=version,
                tasks=max(r.tasks for r in by_k),
                samples=by_k[0].samples,
                pass_at={r.k: r.value for r in by_k},
                ci={r.k: (r.ci_low, r.ci_high) for r in by_k},
                tasks_at={r.k: r.tasks for r in by_k},
                reward_mean=by_k[0].reward_mean,
                similarity_mean=by_k[0].similarity_mean,
            )
        )
    return out


def turn_success(session: Session, run_id: str) -> tuple[TurnSuccess, ...]:
    """Training episodes of several turns, per policy version they started under: the share that had
    passed every case by each turn and the mean turns taken (the reward its latest verdict judged)."""
    verdicts = _latest_verdicts(session, run_id)
    q = (
        select(
            Sample.sample_id,
            Sample.policy_version,
            Sample.max_turns,
            Reward.event_id,
            Reward.correct,
            Reward.turn,
        )
        .join(Reward, Reward.sample_id == Sample.sample_id)
        .where(Sample.run_id == run_id, Sample.split == "train", Sample.max_turns > 1)
        .order_by(Reward.scored_at, Reward.event_id)
    )
    scored: dict[str, tuple[int, int, int, bool]] = {}
    for sample_id, version, max_turns, reward_id, correct, turn in session.execute(q):
        verdict = verdicts.get(sample_id)
        judged = verdict is not None and verdict.reward_event_id == reward_id
        if sample_id not in scored or judged:
            scored[sample_id] = (version, max_turns, turn + 1, bool(correct))
    return success_by_turn(list(scored.values()))


def curriculum_moves(session: Session, run_id: str) -> list[LevelMove]:
    """The run's curriculum level changes in log order (``curriculum_moves``)."""
    rows = session.scalars(
        select(CurriculumMove).where(CurriculumMove.run_id == run_id).order_by(CurriculumMove.log_offset)
    )
    return [
        LevelMove(
            from_level=r.from_level,
            to_level=r.to_level,
            reason=r.reason,
            policy_version=r.policy_version,
            pass_at_1=r.pass_at_1,
            threshold=r.threshold,
            tasks=r.tasks,
            samples=r.samples,
        )
        for r in rows
    ]


def split_task_results(session: Session, run_id: str) -> list[TaskResult]:
    """Per split x policy version x task: n, c and pass@k (``split_pass_at_k``), by split, version, task."""
    rows: dict[tuple[str, int, str], list[SplitPassAtK]] = defaultdict(list)
    for row in session.scalars(select(SplitPassAtK).where(SplitPassAtK.run_id == run_id)):
        rows[(row.split, row.policy_version, row.task_id)].append(row)
    return [
        TaskResult(
            split=split,
            policy_version=version,
            task_id=task_id,
            n=by_k[0].n,
            c=by_k[0].c,
            pass_at={r.k: r.value for r in by_k},
            reward_mean=by_k[0].reward_mean,
            similarity_mean=by_k[0].similarity_mean,
        )
        for (split, version, task_id), by_k in sorted(rows.items())
    ]


def task_levels(session: Session) -> dict[str, int]:
    """Task id -> difficulty level of every graded task projected."""
    query = select(Task.task_id, Task.difficulty).where(Task.difficulty.is_not(None))
    return {task_id: level for task_id, level in session.execute(query) if level is not None}
