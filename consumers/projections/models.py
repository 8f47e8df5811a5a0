"""The projected tables (SQLAlchemy 2.x typed models).

Every table is written by exactly one event type (pass@k excepted, which is recomputed from samples
and rewards), and every row is keyed by the event id or by the aggregate id the event carries. So a
re-delivered event rewrites the same row with the same values (idempotent by event id), and the final
tables do not depend on how records of different partitions interleave: a rebuild from offset 0 equals
the live projection row for row. There are no foreign keys on purpose: the topics are read in no
particular order relative to each other, so a reward may arrive before its sample.

Times are UTC. ``run_id`` is the envelope's run id (the run that caused the event).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, cast

from sqlalchemy import JSON, BigInteger, Boolean, DateTime, Float, Index, Integer, String, Table, Text
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: DateTime(timezone=True),
        dict[str, Any]: JSON,
        list[Any]: JSON,
    }


class Task(Base):
    """The latest publication of each task (rl.tasks is keyed by task id: one partition, in order)."""

    __tablename__ = "tasks"

    task_id: Mapped[str] = mapped_column(String, primary_key=True)
    event_id: Mapped[str] = mapped_column(String)
    run_id: Mapped[str | None] = mapped_column(String)
    schema_version: Mapped[int]
    prompt: Mapped[str] = mapped_column(Text)
    entry_point: Mapped[str] = mapped_column(String)
    visible_cases: Mapped[int]
    hidden_cases: Mapped[int]
    has_check: Mapped[bool] = mapped_column(Boolean)
    reference: Mapped[str | None] = mapped_column(Text)
    tenant: Mapped[str] = mapped_column(String)
    priority: Mapped[int]
    timeout_s: Mapped[float] = mapped_column(Float)
    memory_mb: Mapped[int]
    source: Mapped[str | None] = mapped_column(String)
    published_at: Mapped[datetime]
    #: train, or eval (held out: only evaluated)
    split: Mapped[str] = mapped_column(String, server_default="train")
    #: difficulty level (1 the easiest; None: not graded) and what the task exercises
    difficulty: Mapped[int | None] = mapped_column(Integer, nullable=True)
    tags: Mapped[list[Any] | None] = mapped_column(JSON, nullable=True)


class Group(Base):
    """A generation request: one GRPO group of ``group_size`` samples of one task."""

    __tablename__ = "groups"

    group_id: Mapped[str] = mapped_column(String, primary_key=True)
    event_id: Mapped[str] = mapped_column(String)
    run_id: Mapped[str | None] = mapped_column(String, index=True)
    task_id: Mapped[str] = mapped_column(String, index=True)
    group_size: Mapped[int]
    tenant: Mapped[str] = mapped_column(String)
    priority: Mapped[int]
    #: the newest policy version the scheduler knew of when it asked
    policy_version: Mapped[int]
    temperature: Mapped[float] = mapped_column(Float)
    top_p: Mapped[float] = mapped_column(Float)
    max_tokens: Mapped[int]
    requested_at: Mapped[datetime]
    #: train (a GRPO group) or eval (an evaluation round's group: ``policy_version`` is exact)
    split: Mapped[str] = mapped_column(String, server_default="train")


class Sample(Base):
    """One generation (CodeGenerated): the raw completion, the code executed, the behaviour policy."""

    __tablename__ = "samples"

    sample_id: Mapped[str] = mapped_column(String, primary_key=True)
    event_id: Mapped[str] = mapped_column(String)
    run_id: Mapped[str | None] = mapped_column(String, index=True)
    group_id: Mapped[str] = mapped_column(String, index=True)
    task_id: Mapped[str] = mapped_column(String, index=True)
    sample_index: Mapped[int]
    policy_version: Mapped[int]
    model: Mapped[str] = mapped_column(String)
    prompt_text: Mapped[str] = mapped_column(Text)
    completion_text: Mapped[str] = mapped_column(Text)
    code: Mapped[str] = mapped_column(Text)
    extraction: Mapped[str] = mapped_column(String)
    finish_reason: Mapped[str] = mapped_column(String)
    prompt_tokens: Mapped[int]
    completion_tokens: Mapped[int]
    temperature: Mapped[float] = mapped_column(Float)
    duration_s: Mapped[float] = mapped_column(Float)
    trace_id: Mapped[str | None] = mapped_column(String)
    generated_at: Mapped[datetime]
    split: Mapped[str] = mapped_column(String, server_default="train", index=True)
    #: turns the episode may take (its first turn is this row; every turn is in :class:`SampleTurn`)
    max_turns: Mapped[int] = mapped_column(Integer, server_default="1")


class SampleTurn(Base):
    """One turn of an episode of several turns (CodeGenerated with ``max_turns > 1``), the first included:
    the code it wrote and the policy version that wrote it. How it ended is in :class:`TurnEnd`."""

    __tablename__ = "sample_turns"

    sample_id: Mapped[str] = mapped_column(String, primary_key=True)
    turn: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[str] = mapped_column(String)
    run_id: Mapped[str | None] = mapped_column(String, index=True)
    group_id: Mapped[str] = mapped_column(String, index=True)
    task_id: Mapped[str] = mapped_column(String)
    policy_version: Mapped[int]
    completion_text: Mapped[str] = mapped_column(Text)
    code: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int]
    completion_tokens: Mapped[int]
    #: the TurnEnded whose feedback this turn answers (None: the first turn)
    feedback_event_id: Mapped[str | None] = mapped_column(String)
    generated_at: Mapped[datetime]


class TurnEnd(Base):
    """How one turn of an episode ended (TurnEnded on rl.turns): the feedback the next turn saw, or why
    the turn was final."""

    __tablename__ = "turn_ends"

    sample_id: Mapped[str] = mapped_column(String, primary_key=True)
    turn: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[str] = mapped_column(String)
    run_id: Mapped[str | None] = mapped_column(String, index=True)
    group_id: Mapped[str] = mapped_column(String, index=True)
    task_id: Mapped[str] = mapped_column(String)
    max_turns: Mapped[int]
    outcome: Mapped[str] = mapped_column(String)
    reason: Mapped[str] = mapped_column(String)
    visible_passed: Mapped[int]
    visible_total: Mapped[int]
    policy_version: Mapped[int]
    generation_event_id: Mapped[str] = mapped_column(String)
    execution_event_id: Mapped[str] = mapped_column(String)
    feedback_version: Mapped[str | None] = mapped_column(String)
    feedback: Mapped[str | None] = mapped_column(Text)
    ended_at: Mapped[datetime]


class Execution(Base):
    """One sandbox run of a sample's code (run_index 0, then the noise filter's re-runs)."""

    __tablename__ = "executions"

    event_id: Mapped[str] = mapped_column(String, primary_key=True)
    run_id: Mapped[str | None] = mapped_column(String, index=True)
    sample_id: Mapped[str] = mapped_column(String, index=True)
    group_id: Mapped[str] = mapped_column(String)
    task_id: Mapped[str] = mapped_column(String)
    run_index: Mapped[int]
    backend: Mapped[str] = mapped_column(String)
    backend_reason: Mapped[str] = mapped_column(Text)
    mode: Mapped[str] = mapped_column(String)
    #: per-case results as reported by the sandbox (index, hidden, status, result_repr, error, duration_s)
    cases: Mapped[list[Any]]
    cases_total: Mapped[int]
    cases_ok: Mapped[int]
    exit_code: Mapped[int | None]
    timed_out: Mapped[bool] = mapped_column(Boolean)
    memory_exceeded: Mapped[bool] = mapped_column(Boolean)
    violation: Mapped[str | None] = mapped_column(Text)
    infra_error: Mapped[str | None] = mapped_column(Text)
    duration_s: Mapped[float] = mapped_column(Float)
    cache_hit: Mapped[bool] = mapped_column(Boolean)
    runtime_hash: Mapped[str] = mapped_column(String)
    executed_at: Mapped[datetime]
    #: the episode's turn whose code ran (0: the first, a one-turn sample's only one)
    turn: Mapped[int] = mapped_column(Integer, server_default="0")


class Reward(Base):
    """A versioned reward of one execution; components in :class:`RewardComponent`."""

    __tablename__ = "rewards"

    event_id: Mapped[str] = mapped_column(String, primary_key=True)
    run_id: Mapped[str | None] = mapped_column(String, index=True)
    sample_id: Mapped[str] = mapped_column(String, index=True)
    group_id: Mapped[str] = mapped_column(String)
    task_id: Mapped[str] = mapped_column(String)
    execution_event_id: Mapped[str] = mapped_column(String)
    #: the ReferenceExecuted (rl.references) the efficiency part compared with; None: none used
    reference_event_id: Mapped[str | None] = mapped_column(String)
    reward_fn: Mapped[str] = mapped_column(String)
    reward_version: Mapped[str] = mapped_column(String)
    total: Mapped[float] = mapped_column(Float)
    passed: Mapped[int]
    total_cases: Mapped[int]
    #: every case passed (and there was at least one): what pass@k counts as correct
    correct: Mapped[bool] = mapped_column(Boolean)
    details: Mapped[dict[str, Any]]
    scored_at: Mapped[datetime]
    #: the final turn scored (an episode is scored once, on its final turn's code)
    turn: Mapped[int] = mapped_column(Integer, server_default="0")


class RewardComponent(Base):
    __tablename__ = "reward_components"

    reward_event_id: Mapped[str] = mapped_column(String, primary_key=True)
    name: Mapped[str] = mapped_column(String, primary_key=True)
    sample_id: Mapped[str] = mapped_column(String, index=True)
    value: Mapped[float] = mapped_column(Float)
    #: None when the reward function gave the component no weight entry
    weight: Mapped[float | None] = mapped_column(Float)


class Verdict(Base):
    """The noise filter's decision about one reward; reasons in :class:`VerdictReason`."""

    __tablename__ = "verdicts"

    event_id: Mapped[str] = mapped_column(String, primary_key=True)
    run_id: Mapped[str | None] = mapped_column(String, index=True)
    sample_id: Mapped[str] = mapped_column(String, index=True)
    group_id: Mapped[str] = mapped_column(String)
    task_id: Mapped[str] = mapped_column(String)
    reward_event_id: Mapped[str] = mapped_column(String)
    verdict: Mapped[str] = mapped_column(String)
    reward: Mapped[float] = mapped_column(Float)
    filter_version: Mapped[str] = mapped_column(String)
    decided_at: Mapped[datetime]
    #: the episode's final turn judged
    turn: Mapped[int] = mapped_column(Integer, server_default="0")


class VerdictReason(Base):
    __tablename__ = "verdict_reasons"

    verdict_event_id: Mapped[str] = mapped_column(String, primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    sample_id: Mapped[str] = mapped_column(String, index=True)
    code: Mapped[str] = mapped_column(String)
    detail: Mapped[str] = mapped_column(Text)


class Experience(Base):
    """An assembled GRPO group (ExperienceReady); its gradient samples in :class:`ExperienceSample`."""

    __tablename__ = "experiences"

    group_id: Mapped[str] = mapped_column(String, primary_key=True)
    event_id: Mapped[str] = mapped_column(String)
    run_id: Mapped[str | None] = mapped_column(String, index=True)
    task_id: Mapped[str] = mapped_column(String)
    group_size: Mapped[int]
    samples: Mapped[int]
    partial: Mapped[bool] = mapped_column(Boolean)
    masked: Mapped[int]
    rejected: Mapped[int]
    std_normalised: Mapped[bool] = mapped_column(Boolean)
    assembled_at: Mapped[datetime]


class ExperienceSample(Base):
    __tablename__ = "experience_samples"

    group_id: Mapped[str] = mapped_column(String, primary_key=True)
    sample_id: Mapped[str] = mapped_column(String, primary_key=True)
    run_id: Mapped[str | None] = mapped_column(String, index=True)
    policy_version: Mapped[int]
    reward: Mapped[float] = mapped_column(Float)
    advantage: Mapped[float] = mapped_column(Float)
    completion_tokens: Mapped[int]

    __table_args__ = (Index("ix_experience_samples_sample_id", "sample_id"),)


class PolicyVersion(Base):
    """A policy version the learner published (rl.policy: one partition, totally ordered)."""

    __tablename__ = "policy_versions"

    run_id: Mapped[str] = mapped_column(String, primary_key=True)
    policy_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    event_id: Mapped[str] = mapped_column(String)
    step: Mapped[int]
    checkpoint_uri: Mapped[str] = mapped_column(Text)
    sha256: Mapped[str] = mapped_column(String)
    model: Mapped[str] = mapped_column(String)
    #: the Kafka offsets the checkpoint consumed up to: [{topic, partition, offset}]
    consumed: Mapped[list[Any]]
    metrics: Mapped[dict[str, Any]]
    trained_samples: Mapped[int]
    published_at: Mapped[datetime]
    #: the stage that made it (rl | sft); versions projected before stages were recorded were RL's
    stage: Mapped[str] = mapped_column(String, default="rl", server_default="rl")
    #: the published version its run started from (RUN_ID:vN), if any
    base: Mapped[str | None] = mapped_column(String, nullable=True)
    #: an RL version's objective (grpo | dpo); None for an SFT version
    algorithm: Mapped[str | None] = mapped_column(String, nullable=True)


class PolicyTrainedSample(Base):
    """Which samples (and so which experiences) a policy version was trained on: the checkpoints a
    sample was trained into are ``WHERE sample_id = ?``."""

    __tablename__ = "policy_trained_samples"

    run_id: Mapped[str] = mapped_column(String, primary_key=True)
    policy_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    sample_id: Mapped[str] = mapped_column(String, primary_key=True)
    group_id: Mapped[str] = mapped_column(String, index=True)

    __table_args__ = (Index("ix_policy_trained_samples_sample_id", "sample_id"),)


class Review(Base):
    """A human reviewer's verdict on a sample (ReviewRecorded on rl.reviews). The review in force for
    a sample is its newest in log order (a group's reviews share one partition): highest ``log_offset``."""

    __tablename__ = "reviews"

    event_id: Mapped[str] = mapped_column(String, primary_key=True)
    run_id: Mapped[str | None] = mapped_column(String, index=True)
    sample_id: Mapped[str] = mapped_column(String, index=True)
    group_id: Mapped[str] = mapped_column(String)
    task_id: Mapped[str] = mapped_column(String)
    verdict: Mapped[str] = mapped_column(String)
    note: Mapped[str] = mapped_column(Text)
    reviewer: Mapped[str] = mapped_column(String)
    #: the automated verdict the reviewer saw, as recorded on rl.verdicts (None: none yet)
    automated_verdict: Mapped[str | None] = mapped_column(String)
    automated_reasons: Mapped[list[Any]]
    verdict_event_id: Mapped[str | None] = mapped_column(String)
    #: event id of the review in force before this one
    supersedes: Mapped[str | None] = mapped_column(String)
    reviewed_at: Mapped[datetime]
    log_partition: Mapped[int]
    log_offset: Mapped[int] = mapped_column(BigInteger)


class CurriculumMove(Base):
    """A change of a run's curriculum level (CurriculumLevelChanged on rl.curriculum)."""

    __tablename__ = "curriculum_moves"

    event_id: Mapped[str] = mapped_column(String, primary_key=True)
    run_id: Mapped[str] = mapped_column(String, index=True)
    from_level: Mapped[int | None] = mapped_column(Integer, nullable=True)
    to_level: Mapped[int]
    #: start | passed | exhausted | unmeasured
    reason: Mapped[str] = mapped_column(String)
    policy_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    pass_at_1: Mapped[float | None] = mapped_column(Float, nullable=True)
    threshold: Mapped[float | None] = mapped_column(Float, nullable=True)
    tasks: Mapped[int]
    samples: Mapped[int]
    moved_at: Mapped[datetime]
    #: where it is on rl.curriculum (one partition: the order of a run's moves)
    log_offset: Mapped[int] = mapped_column(BigInteger)


class PassAtK(Base):
    """pass@k per run x task x policy version (the policy version that generated the samples), from
    the correctness of every scored sample (run 0 reward); recomputed whenever one of them changes."""

    __tablename__ = "pass_at_k"

    run_id: Mapped[str] = mapped_column(String, primary_key=True)
    task_id: Mapped[str] = mapped_column(String, primary_key=True)
    policy_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    k: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: samples scored, samples correct
    n: Mapped[int]
    c: Mapped[int]
    value: Mapped[float] = mapped_column(Float)


class SplitPassAtK(Base):
    """pass@k per run x split x policy version x task (train: the versions that generated training
    samples; eval: the versions evaluation rounds sampled under), with the task's mean reward and mean
    code similarity (None: no sample has one); recomputed with :class:`PassAtK`."""

    __tablename__ = "split_pass_at_k"

    run_id: Mapped[str] = mapped_column(String, primary_key=True)
    split: Mapped[str] = mapped_column(String, primary_key=True)
    policy_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    task_id: Mapped[str] = mapped_column(String, primary_key=True)
    k: Mapped[int] = mapped_column(Integer, primary_key=True)
    n: Mapped[int]
    c: Mapped[int]
    value: Mapped[float] = mapped_column(Float)
    reward_mean: Mapped[float | None] = mapped_column(Float)
    similarity_mean: Mapped[float | None] = mapped_column(Float)


class SplitSummary(Base):
    """Per run x split x policy version x k: the mean pass@k over tasks and its bootstrap interval over
    tasks (``consumers/evaluation.py``), with the mean reward and code similarity of the tasks."""

    __tablename__ = "split_summary"

    run_id: Mapped[str] = mapped_column(String, primary_key=True)
    split: Mapped[str] = mapped_column(String, primary_key=True)
    policy_version: Mapped[int] = mapped_column(Integer, primary_key=True)
    k: Mapped[int] = mapped_column(Integer, primary_key=True)
    tasks: Mapped[int]
    samples: Mapped[int]
    value: Mapped[float] = mapped_column(Float)
    ci_low: Mapped[float] = mapped_column(Float)
    ci_high: Mapped[float] = mapped_column(Float)
    reward_mean: Mapped[float | None] = mapped_column(Float)
    similarity_mean: Mapped[float | None] = mapped_column(Float)


class SkippedRecord(Base):
    """A record the projector could not decode (the processors dead-letter such records; the
    projector skips it, counts it here and moves its offset on)."""

    __tablename__ = "skipped_records"

    projector: Mapped[str] = mapped_column(String, primary_key=True)
    topic: Mapped[str] = mapped_column(String, primary_key=True)
    partition: Mapped[int] = mapped_column(Integer, primary_key=True)
    offset: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    error: Mapped[str] = mapped_column(Text)


class AppliedOffset(Base):
    """The next offset to read per projector x topic x partition, written in the same SQL transaction
    as the rows of the records before it: exactly-once by construction."""

    __tablename__ = "applied_offsets"

    projector: Mapped[str] = mapped_column(String, primary_key=True)
    topic: Mapped[str] = mapped_column(String, primary_key=True)
    partition: Mapped[int] = mapped_column(Integer, primary_key=True)
    next_offset: Mapped[int] = mapped_column(BigInteger)


def table_of(model: type[Base]) -> Table:
    return cast(Table, model.__table__)


#: the projected tables (what a rebuild reproduces and ``diff`` compares), in a stable order
PROJECTED: tuple[type[Base], ...] = (
    Task,
    Group,
    Sample,
    SampleTurn,
    TurnEnd,
    Execution,
    Reward,
    RewardComponent,
    Verdict,
    VerdictReason,
    Experience,
    ExperienceSample,
    PolicyVersion,
    PolicyTrainedSample,
    Review,
    CurriculumMove,
    PassAtK,
    SplitPassAtK,
    SplitSummary,
    SkippedRecord,
)
