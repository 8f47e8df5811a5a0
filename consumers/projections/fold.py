"""The pure core of the projector: events -> row upserts.

No database and no Kafka here: :func:`fold` turns one decoded event (with its envelope and log
position) into rows of the tables in :mod:`consumers.projections.models`, collected in a :class:`Batch`
keyed by each table's primary key. Folding the same event twice yields the same rows (idempotent by
event id), and the last write of a key within a batch wins, as it would across batches.

pass@k is the one derived table: the fold only records which (run, task, policy version) keys, and
which samples whose key is not known yet, need it recomputed; the store does that from the tables
inside the same transaction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from consumers.lineage import group_of
from consumers.projections.models import (
    Base,
    CurriculumMove,
    Execution,
    Experience,
    ExperienceSample,
    Group,
    PolicyTrainedSample,
    PolicyVersion,
    Review,
    Reward,
    RewardComponent,
    Sample,
    SampleTurn,
    SkippedRecord,
    Task,
    TurnEnd,
    Verdict,
    VerdictReason,
    table_of,
)
from schemas.base import Event
from schemas.curriculum import CurriculumLevelChanged
from schemas.envelope import Envelope
from schemas.episode import TurnEnded
from schemas.policy import PolicyPublished
from schemas.rollout import (
    CodeGenerated,
    ExperienceReady,
    NoiseVerdict,
    ReviewRecorded,
    RewardScored,
    RolloutRequested,
    SandboxExecuted,
)
from schemas.task import TaskPublished

#: (run id, task id, policy version)
PassKey = tuple[str, str, int]


@dataclass(frozen=True)
class Position:
    topic: str
    partition: int
    offset: int


def _pk(model: type[Base]) -> tuple[str, ...]:
    return tuple(c.name for c in table_of(model).primary_key.columns)


_PKS: dict[type[Base], tuple[str, ...]] = {}


def primary_key(model: type[Base]) -> tuple[str, ...]:
    if model not in _PKS:
        _PKS[model] = _pk(model)
    return _PKS[model]


@dataclass
class Batch:
    """Rows to upsert and offsets to store, all in one transaction."""

    rows: dict[type[Base], dict[tuple[Any, ...], dict[str, Any]]] = field(default_factory=dict)
    #: (topic, partition) -> next offset to read
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    #: (topic, partition) -> offset of the batch's first record there (the database must not be past it)
    first: dict[tuple[str, int], int] = field(default_factory=dict)
    passk_keys: set[PassKey] = field(default_factory=set)
    #: samples scored in this batch: their pass@k key is looked up in the samples table
    passk_samples: set[str] = field(default_factory=set)
    events: int = 0
    skipped: int = 0

    def put(self, model: type[Base], row: Mapping[str, Any]) -> None:
        key = tuple(row[c] for c in primary_key(model))
        self.rows.setdefault(model, {})[key] = dict(row)

    def advance(self, position: Position) -> None:
        tp = (position.topic, position.partition)
        self.offsets[tp] = max(self.offsets.get(tp, 0), position.offset + 1)
        self.first[tp] = min(self.first.get(tp, position.offset), position.offset)

    def row_count(self) -> int:
        return sum(len(v) for v in self.rows.values())

    def __bool__(self) -> bool:
        return bool(self.offsets)


def utc(t: datetime) -> datetime:
    return t.astimezone(UTC) if t.tzinfo is not None else t.replace(tzinfo=UTC)


def _trace_id(envelope: Envelope) -> str | None:
    return envelope.traceparent.split("-")[1] if envelope.traceparent else None


def fold(batch: Batch, envelope: Envelope, event: Event, position: Position) -> None:
    """Add the rows ``event`` projects to (an event type the projection does not cover adds none),
    and advance the offset past it."""
    batch.advance(position)
    batch.events += 1
    run_id = envelope.run_id
    at = utc(envelope.time)
    eid = envelope.id
    if isinstance(event, TaskPublished):
        batch.put(
            Task,
            {
                "task_id": event.task_id,
                "event_id": eid,
                "run_id": run_id,
                # the version written on the log (bodies of older versions are upcast when read)
                "schema_version": _written_version(envelope),
                "prompt": event.prompt,
                "entry_point": event.entry_point,
                "visible_cases": len(event.tests),
                "hidden_cases": len(event.hidden_tests),
                "has_check": event.check is not None,
                "reference": event.reference,
                "tenant": event.tenant,
                "priority": event.priority,
                "timeout_s": event.limits.timeout_s,
                "memory_mb": event.limits.memory_mb,
                "source": event.source,
                "published_at": at,
                "split": event.split,
                "difficulty": event.difficulty,
                "tags": list(event.tags),
            },
        )
    elif isinstance(event, RolloutRequested):
        batch.put(
            Group,
            {
                "group_id": event.group_id,
                "event_id": eid,
                "run_id": run_id,
                "task_id": event.task_id,
                "group_size": event.group_size,
                "tenant": event.tenant,
                "priority": event.priority,
                "policy_version": event.policy_version,
                "temperature": event.sampling.temperature,
                "top_p": event.sampling.top_p,
                "max_tokens": event.sampling.max_tokens,
                "requested_at": at,
                "split": event.split,
            },
        )
    elif isinstance(event, CodeGenerated):
        if event.max_turns > 1:
            batch.put(
                SampleTurn,
                {
                    "sample_id": event.sample_id,
                    "turn": event.turn,
                    "event_id": eid,
                    "run_id": run_id,
                    "group_id": event.group_id,
                    "task_id": event.task_id,
                    "policy_version": event.policy_version,
                    "completion_text": event.completion_text,
                    "code": event.code,
                    "prompt_tokens": len(event.prompt_token_ids),
                    "completion_tokens": len(event.completion_token_ids),
                    "feedback_event_id": event.feedback_event_id,
                    "generated_at": at,
                },
            )
        if event.turn > 0:
            return  # the sample's row is its first turn: the episode as its request started it
        batch.put(
            Sample,
            {
                "sample_id": event.sample_id,
                "event_id": eid,
                "run_id": run_id,
                "group_id": event.group_id,
                "task_id": event.task_id,
                "sample_index": event.sample_index,
                "policy_version": event.policy_version,
                "model": event.model,
                "prompt_text": event.prompt_text,
                "completion_text": event.completion_text,
                "code": event.code,
                "extraction": event.extraction,
                "finish_reason": event.finish_reason,
                "prompt_tokens": len(event.prompt_token_ids),
                "completion_tokens": len(event.completion_token_ids),
                "temperature": event.sampling.temperature,
                "duration_s": event.duration_s,
                "trace_id": _trace_id(envelope),
                "generated_at": at,
                "split": event.split,
                "max_turns": event.max_turns,
            },
        )
        if run_id is not None:
            batch.passk_keys.add((run_id, event.task_id, event.policy_version))
    elif isinstance(event, SandboxExecuted):
        batch.put(
            Execution,
            {
                "event_id": eid,
                "run_id": run_id,
                "sample_id": event.sample_id,
                "group_id": event.group_id,
                "task_id": event.task_id,
                "run_index": event.run_index,
                "backend": event.backend,
                "backend_reason": event.backend_reason,
                "mode": event.mode,
                "cases": [c.model_dump(mode="json") for c in event.cases],
                "cases_total": len(event.cases),
                "cases_ok": sum(c.status == "ok" for c in event.cases),
                "exit_code": event.exit_code,
                "timed_out": event.timed_out,
                "memory_exceeded": event.memory_exceeded,
                "violation": event.violation,
                "infra_error": event.infra_error,
                "duration_s": event.duration_s,
                "cache_hit": event.cache_hit,
                "runtime_hash": event.runtime_hash,
                "executed_at": at,
                "turn": event.turn,
            },
        )
    elif isinstance(event, TurnEnded):
        batch.put(
            TurnEnd,
            {
                "sample_id": event.sample_id,
                "turn": event.turn,
                "event_id": eid,
                "run_id": run_id,
                "group_id": event.group_id,
                "task_id": event.task_id,
                "max_turns": event.max_turns,
                "outcome": event.outcome,
                "reason": event.reason,
                "visible_passed": event.visible_passed,
                "visible_total": event.visible_total,
                "policy_version": event.policy_version,
                "generation_event_id": event.generation_event_id,
                "execution_event_id": event.execution_event_id,
                "feedback_version": event.feedback.version if event.feedback else None,
                "feedback": event.feedback.text if event.feedback else None,
                "ended_at": at,
            },
        )
    elif isinstance(event, RewardScored):
        batch.put(
            Reward,
            {
                "event_id": eid,
                "run_id": run_id,
                "sample_id": event.sample_id,
                "group_id": event.group_id,
                "task_id": event.task_id,
                "execution_event_id": event.execution_event_id,
                "reference_event_id": event.reference_event_id,
                "reward_fn": event.reward_fn,
                "reward_version": event.reward_version,
                "total": event.total,
                "passed": event.passed,
                "total_cases": event.total_cases,
                "correct": event.total_cases > 0 and event.passed == event.total_cases,
                "details": dict(event.details),
                "scored_at": at,
                "turn": event.turn,
            },
        )
        for name, value in event.components.items():
            batch.put(
                RewardComponent,
                {
                    "reward_event_id": eid,
                    "name": name,
                    "sample_id": event.sample_id,
                    "value": value,
                    "weight": event.weights.get(name),
                },
            )
        batch.passk_samples.add(event.sample_id)
    elif isinstance(event, NoiseVerdict):
        batch.put(
            Verdict,
            {
                "event_id": eid,
                "run_id": run_id,
                "sample_id": event.sample_id,
                "group_id": event.group_id,
                "task_id": event.task_id,
                "reward_event_id": event.reward_event_id,
                "verdict": event.verdict,
                "reward": event.reward,
                "filter_version": event.filter_version,
                "decided_at": at,
                "turn": event.turn,
            },
        )
        for i, reason in enumerate(event.reasons):
            batch.put(
                VerdictReason,
                {
                    "verdict_event_id": eid,
                    "position": i,
                    "sample_id": event.sample_id,
                    "code": reason.code,
                    "detail": reason.detail,
                },
            )
    elif isinstance(event, ExperienceReady):
        batch.put(
            Experience,
            {
                "group_id": event.group_id,
                "event_id": eid,
                "run_id": run_id,
                "task_id": event.task_id,
                "group_size": event.group_size,
                "samples": len(event.samples),
                "partial": event.partial,
                "masked": event.masked,
                "rejected": event.rejected,
                "std_normalised": event.std_normalised,
                "assembled_at": at,
            },
        )
        for s in event.samples:
            batch.put(
                ExperienceSample,
                {
                    "group_id": event.group_id,
                    "sample_id": s.sample_id,
                    "run_id": run_id,
                    "policy_version": s.policy_version,
                    "reward": s.reward,
                    "advantage": s.advantage,
                    # generated tokens: an episode's every turn
                    "completion_tokens": len(s.completion_token_ids)
                    + sum(len(t.completion_token_ids) for t in s.turns),
                },
            )
    elif isinstance(event, PolicyPublished):
        batch.put(
            PolicyVersion,
            {
                "run_id": event.run_id,
                "policy_version": event.policy_version,
                "event_id": eid,
                "step": event.step,
                "checkpoint_uri": event.checkpoint_uri,
                "sha256": event.sha256,
                "model": event.model,
                "consumed": [c.model_dump(mode="json") for c in event.consumed],
                "metrics": dict(event.metrics),
                "trained_samples": len(set(event.trained_sample_ids)),
                "published_at": at,
                "stage": event.stage,
                "base": event.base,
                "algorithm": event.algorithm,
            },
        )
        for sample_id in event.trained_sample_ids:
            batch.put(
                PolicyTrainedSample,
                {
                    "run_id": event.run_id,
                    "policy_version": event.policy_version,
                    "sample_id": sample_id,
                    "group_id": _group_or_self(sample_id),
                },
            )
    elif isinstance(event, CurriculumLevelChanged):
        batch.put(
            CurriculumMove,
            {
                "event_id": eid,
                "run_id": event.run_id,
                "from_level": event.from_level,
                "to_level": event.to_level,
                "reason": event.reason,
                "policy_version": event.policy_version,
                "pass_at_1": event.pass_at_1,
                "threshold": event.threshold,
                "tasks": event.tasks,
                "samples": event.samples,
                "moved_at": at,
                "log_offset": position.offset,
            },
        )
    elif isinstance(event, ReviewRecorded):
        batch.put(
            Review,
            {
                "event_id": eid,
                "run_id": run_id,
                "sample_id": event.sample_id,
                "group_id": event.group_id,
                "task_id": event.task_id,
                "verdict": event.verdict,
                "note": event.note,
                "reviewer": event.reviewer,
                "automated_verdict": event.automated_verdict,
                "automated_reasons": list(event.automated_reasons),
                "verdict_event_id": event.verdict_event_id,
                "supersedes": event.supersedes,
                "reviewed_at": utc(event.reviewed_at),
                "log_partition": position.partition,
                "log_offset": position.offset,
            },
        )


def skip(batch: Batch, projector: str, position: Position, error: str) -> None:
    """A record that could not be decoded: counted, recorded, and its offset moves on."""
    batch.advance(position)
    batch.skipped += 1
    batch.put(
        SkippedRecord,
        {
            "projector": projector,
            "topic": position.topic,
            "partition": position.partition,
            "offset": position.offset,
            "error": error[:2000],
        },
    )


def _written_version(envelope: Envelope) -> int:
    tail = envelope.type.rpartition(".v")[2]
    return int(tail) if tail.isdigit() else 0


def _group_or_self(sample_id: str) -> str:
    try:
        return group_of(sample_id)
    except ValueError:
        return sample_id
