"""Lineage of one sample, folded from the log: task -> request -> generation (raw completion and the
code executed) -> executions (per-case results) -> reward (components) -> verdict (reasons) -> the
experience it joined -> the policy versions it was trained into, and the human reviews of it (who
changed what, when, and whether the review came before the sample was trained on).

A sample that is an episode of several turns lists every turn too (``turns``): its code and policy
version, its executions, and how it ended (the feedback the next turn saw, or why it was final);
``generation`` and ``executions`` are then its latest turn's, the one the reward scored.

Pure: the caller feeds every event it reads (any order, any topic); :class:`Lineage` keeps the ones
that concern its sample.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from consumers.review import Recorded, Trained, review_outcome, reviews_in_force
from schemas.base import Event
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
from schemas.sft import SftExample
from schemas.task import TaskPublished

STAGES = ("task", "request", "generation", "executions", "reward", "verdict", "experience")


def group_of(sample_id: str) -> str:
    """Sample ids are ``<group_id>/<index>``."""
    group, sep, index = sample_id.rpartition("/")
    if not sep or not index.isdigit():
        raise ValueError(f"{sample_id!r} is not a sample id (<group_id>/<index>)")
    return group


def trace_id(envelope: Envelope) -> str | None:
    return envelope.traceparent.split("-")[1] if envelope.traceparent else None


def _brief(envelope: Envelope, event: Event, **fields: Any) -> dict[str, Any]:
    return {"event_id": envelope.id, "type": envelope.type, "time": envelope.time.isoformat(), **fields}


@dataclass
class Lineage:
    sample_id: str
    group_id: str = ""
    task_id: str | None = None
    trace_id: str | None = None
    stages: dict[str, Any] = field(default_factory=dict)
    executions: list[dict[str, Any]] = field(default_factory=list)
    trained_into: list[dict[str, Any]] = field(default_factory=list)
    _tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: an episode's turns: turn -> {"generation", "executions", "ended"}
    _turns: dict[int, dict[str, Any]] = field(default_factory=dict)
    _trained: list[Trained] = field(default_factory=list)
    _reviews: list[Recorded] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.group_id = group_of(self.sample_id)

    def fold(self, envelope: Envelope, event: Event) -> None:
        if isinstance(event, TaskPublished):
            # the task id is known only once the generation is seen: keep every version, pick at the end
            self._tasks[event.task_id] = _brief(
                envelope,
                event,
                task_id=event.task_id,
                prompt=event.prompt,
                entry_point=event.entry_point,
                visible_cases=len(event.tests),
                hidden_cases=len(event.hidden_tests),
                check=event.check is not None,
            )
            return
        if isinstance(event, PolicyPublished):
            if self.sample_id in event.trained_sample_ids:
                self._trained.append(Trained(event.policy_version, envelope.time))
                self.trained_into.append(
                    _brief(
                        envelope,
                        event,
                        policy_version=event.policy_version,
                        step=event.step,
                        checkpoint_uri=event.checkpoint_uri,
                        sha256=event.sha256,
                    )
                )
            return
        if getattr(event, "group_id", None) != self.group_id:
            return
        if isinstance(event, RolloutRequested):
            self.stages["request"] = _brief(
                envelope, event, group_size=event.group_size, sampling=event.sampling.model_dump(mode="json")
            )
        elif isinstance(event, ExperienceReady):
            mine = [s for s in event.samples if s.sample_id == self.sample_id]
            self.stages["experience"] = _brief(
                envelope,
                event,
                partial=event.partial,
                advantage=mine[0].advantage if mine else None,
                in_gradient=bool(mine),
            )
        elif getattr(event, "sample_id", None) != self.sample_id:
            return
        elif isinstance(event, ReviewRecorded):
            # in log order (one partition per group), so the last one kept is the one in force
            self._reviews.append(Recorded(envelope.id, envelope.time, event))
        elif isinstance(event, CodeGenerated):
            self.task_id = event.task_id
            self.trace_id = trace_id(envelope) or self.trace_id
            generation = _brief(
                envelope,
                event,
                turn=event.turn,
                policy_version=event.policy_version,
                model=event.model,
                prompt_text=event.prompt_text,
                completion_text=event.completion_text,
                code=event.code,
                extraction=event.extraction,
                finish_reason=event.finish_reason,
            )
            if event.max_turns > 1:
                self._turn(event.turn)["generation"] = generation
            if event.turn >= self.stages.get("generation", {}).get("turn", 0):
                self.stages["generation"] = generation
        elif isinstance(event, SandboxExecuted):
            execution = _brief(
                envelope,
                event,
                turn=event.turn,
                run_index=event.run_index,
                probe=event.probe,
                backend=event.backend,
                backend_reason=event.backend_reason,
                cases=[c.model_dump(mode="json") for c in event.cases],
                timed_out=event.timed_out,
                memory_exceeded=event.memory_exceeded,
                violation=event.violation,
                infra_error=event.infra_error,
            )
            if event.max_turns > 1:
                self._turn(event.turn)["executions"].append(execution)
            self.executions.append(execution)
        elif isinstance(event, TurnEnded):
            self._turn(event.turn)["ended"] = _brief(
                envelope,
                event,
                outcome=event.outcome,
                reason=event.reason,
                visible_passed=event.visible_passed,
                visible_total=event.visible_total,
                feedback=event.feedback.text if event.feedback else None,
                feedback_version=event.feedback.version if event.feedback else None,
            )
        elif isinstance(event, RewardScored):
            self.stages["reward"] = _brief(
                envelope,
                event,
                reward_fn=f"{event.reward_fn}-{event.reward_version}",
                total=event.total,
                components=event.components,
                weights=event.weights,
                passed=event.passed,
                total_cases=event.total_cases,
            )
        elif isinstance(event, NoiseVerdict):
            self.stages["verdict"] = _brief(
                envelope,
                event,
                verdict=event.verdict,
                reasons=[r.model_dump() for r in event.reasons],
                reward=event.reward,
                filter_version=event.filter_version,
            )

    def _turn(self, turn: int) -> dict[str, Any]:
        return self._turns.setdefault(
            turn, {"turn": turn, "generation": None, "executions": [], "ended": None}
        )

    def result(self) -> dict[str, Any]:
        stages = dict(self.stages)
        if self.task_id is not None and self.task_id in self._tasks:
            stages["task"] = self._tasks[self.task_id]
        latest = stages["generation"]["turn"] if stages.get("generation") else 0
        executions = [x for x in self.executions if x["turn"] == latest]
        if executions:
            stages["executions"] = sorted(executions, key=lambda x: x["run_index"])
        turns = [
            {**t, "executions": sorted(t["executions"], key=lambda x: x["run_index"])}
            for _, t in sorted(self._turns.items())
        ]
        return {
            "sample_id": self.sample_id,
            "group_id": self.group_id,
            "task_id": self.task_id,
            "trace_id": self.trace_id,
            **{name: stages.get(name) for name in STAGES},
            "trained_into": sorted(self.trained_into, key=lambda x: x["policy_version"]),
            "missing": [name for name in STAGES if stages.get(name) is None],
            "reviews": self._review_rows(stages.get("experience")),
            "turns": turns,
        }

    def _review_rows(self, experience: dict[str, Any] | None) -> list[dict[str, Any]]:
        latest = reviews_in_force(self._reviews)
        in_force = latest[self.sample_id].event_id if self.sample_id in latest else None
        assembled = None
        if experience is not None:
            assembled = datetime.fromisoformat(experience["time"])
        rows: list[dict[str, Any]] = []
        seen: set[str] = set()
        for item in self._reviews:
            if item.event_id in seen:
                continue
            seen.add(item.event_id)
            review: ReviewRecorded = item.event
            rows.append(
                {
                    "event_id": item.event_id,
                    "time": item.time.isoformat(),
                    "reviewer": review.reviewer,
                    "verdict": review.verdict,
                    "automated_verdict": review.automated_verdict,
                    "automated_reasons": list(review.automated_reasons),
                    "note": review.note,
                    "supersedes": review.supersedes,
                    "outcome": review_outcome(
                        item,
                        in_force=item.event_id == in_force,
                        trained=self._trained,
                        assembled_at=assembled,
                        in_gradient=experience["in_gradient"] if experience is not None else None,
                    ),
                }
            )
        return rows


def policy_lineage(
    published: PolicyPublished,
    examples: Iterable[SftExample] = (),
    versions: Mapping[tuple[str, int], PolicyPublished] | None = None,
) -> dict[str, Any]:
    """What one policy version came from: its stage, the model it was trained from, the offsets of the
    input it consumed and what it trained on (an SFT stage's examples, by source; an RL version's
    samples by count), and, where its run started from a published version (``base``), that version's
    lineage in turn (from ``versions``: every version on the log by run and number), back to a version
    trained from a model's own weights."""
    seen = {(published.run_id, published.policy_version)}
    return _version_lineage(published, list(examples), versions or {}, seen)


def _version_lineage(
    published: PolicyPublished,
    examples: list[SftExample],
    versions: Mapping[tuple[str, int], PolicyPublished],
    seen: set[tuple[str, int]],
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "run_id": published.run_id,
        "policy_version": published.policy_version,
        "stage": published.stage,
        "algorithm": published.algorithm,
        "model": published.model,
        "step": published.step,
        "checkpoint_uri": published.checkpoint_uri,
        "sha256": published.sha256,
        "consumed": [c.model_dump() for c in published.consumed],
        "trained": len(published.trained_sample_ids),
        "metrics": dict(published.metrics),
    }
    if published.stage == "sft":
        wanted = set(published.trained_sample_ids)
        out["examples"] = [
            {
                "example_id": e.example_id,
                "task_id": e.task_id,
                "source": e.source,
                "review": e.review_event_id,
            }
            for e in examples
            if e.run_id == published.run_id and e.example_id in wanted
        ]
    else:
        out["trained_sample_ids"] = list(published.trained_sample_ids)
    if published.base is not None:
        out["base"] = _base_lineage(published.base, examples, versions, seen)
    return out


def _base_lineage(
    ref: str,
    examples: list[SftExample],
    versions: Mapping[tuple[str, int], PolicyPublished],
    seen: set[tuple[str, int]],
) -> dict[str, Any]:
    run_id, _, number = ref.rpartition(":v")
    key = (run_id, int(number))
    base = versions.get(key)
    if base is None:
        return {"ref": ref, "missing": True}
    if key in seen:  # a log that names a cycle of bases (never written by rlstream) ends here
        return {"ref": ref, "cycle": True}
    seen.add(key)
    return {"ref": ref, **_version_lineage(base, examples, versions, seen)}
