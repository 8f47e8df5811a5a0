"""A run's report data folded straight from the log (``rlstream report --from-log``): the same facts
the projection loader reads from SQL, for a machine where no projector has run.

Pure: the caller feeds every event it reads (any topic, any order); events of other runs are ignored.
An event belongs to the run named in its envelope (for events written without one, the run its group
id starts with), as in the projections.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import UTC, datetime

from consumers.evaluation import LevelMove
from consumers.report.data import RunReportData
from consumers.report.facts import (
    DEFAULT_KS,
    ExecutionFacts,
    PolicyFacts,
    ReviewFacts,
    RunFacts,
    SampleFacts,
    aggregate,
)
from schemas.base import Event
from schemas.curriculum import CurriculumLevelChanged
from schemas.envelope import Envelope
from schemas.policy import PolicyPublished
from schemas.rollout import CodeGenerated, NoiseVerdict, ReviewRecorded, RewardScored, SandboxExecuted
from schemas.task import TaskPublished


def run_of(envelope: Envelope, event: Event) -> str | None:
    if envelope.run_id:
        return envelope.run_id
    if isinstance(event, PolicyPublished):
        return event.run_id
    group = getattr(event, "group_id", None)
    return group.split("/", 1)[0] if isinstance(group, str) and "/" in group else None


@dataclass
class ReportFold:
    run_id: str
    #: every run id seen, for the "unknown run" message
    runs_seen: set[str] = field(default_factory=set)
    _generated: dict[str, CodeGenerated] = field(default_factory=dict)
    _executions: dict[str, SandboxExecuted] = field(default_factory=dict)
    _rewards: dict[str, tuple[str, RewardScored]] = field(default_factory=dict)
    _verdicts: dict[str, tuple[datetime, NoiseVerdict]] = field(default_factory=dict)
    _policies: dict[int, PolicyPublished] = field(default_factory=dict)
    #: sample id -> the review in force (the newest in log order; a group's reviews share a partition)
    _reviews: dict[str, ReviewRecorded] = field(default_factory=dict)
    #: the run's curriculum level changes, in log order (rl.curriculum has one partition)
    _moves: dict[str, CurriculumLevelChanged] = field(default_factory=dict)
    #: task id -> difficulty level of every graded task read (task ids are global, like the projection's)
    _levels: dict[str, int] = field(default_factory=dict)

    def fold(self, envelope: Envelope, event: Event) -> None:
        if isinstance(event, TaskPublished):
            if event.difficulty is not None:
                self._levels[event.task_id] = event.difficulty
            return
        run = run_of(envelope, event)
        if run is None:
            return
        if isinstance(event, CodeGenerated | PolicyPublished):
            self.runs_seen.add(run)
        if run != self.run_id:
            return
        if isinstance(event, CodeGenerated):
            if event.turn == 0:  # a sample is its episode's first turn (the version that started it)
                self._generated[event.sample_id] = event
        elif isinstance(event, SandboxExecuted):
            self._executions[envelope.id] = event
        elif isinstance(event, RewardScored):
            self._rewards[envelope.id] = (event.sample_id, event)
        elif isinstance(event, NoiseVerdict):
            # a sample judged twice (a newer filter version) shows its newest verdict
            old = self._verdicts.get(event.sample_id)
            if old is None or old[0] <= envelope.time:
                self._verdicts[event.sample_id] = (envelope.time, event)
        elif isinstance(event, PolicyPublished):
            self._policies[event.policy_version] = event
        elif isinstance(event, ReviewRecorded):
            self._reviews[event.sample_id] = event
        elif isinstance(event, CurriculumLevelChanged):
            self._moves[envelope.id] = event

    @property
    def known(self) -> bool:
        return bool(self._generated or self._policies)

    def _reward_of(self, sample_id: str) -> RewardScored | None:
        """The reward its verdict judged, else the reward of its first execution, else any."""
        verdict = self._verdicts.get(sample_id)
        if verdict is not None:
            pair = self._rewards.get(verdict[1].reward_event_id)
            if pair is not None:
                return pair[1]
        mine = [r for sid, r in self._rewards.values() if sid == sample_id]
        if not mine:
            return None

        def run_index(r: RewardScored) -> int:
            ex = self._executions.get(r.execution_event_id)
            return ex.run_index if ex is not None else 1 << 30

        return min(mine, key=run_index)

    def facts(self) -> RunFacts:
        samples = []
        for sid, gen in sorted(self._generated.items()):
            reward = self._reward_of(sid)
            verdict = self._verdicts.get(sid)
            samples.append(
                SampleFacts(
                    sample_id=sid,
                    task_id=gen.task_id,
                    policy_version=gen.policy_version,
                    reward=reward.total if reward is not None else None,
                    passed=(reward.total_cases > 0 and reward.passed == reward.total_cases)
                    if reward is not None
                    else None,
                    verdict=verdict[1].verdict if verdict is not None else None,
                    reasons=tuple(r.code for r in verdict[1].reasons) if verdict is not None else (),
                    split=gen.split,
                    similarity=reward.components.get("similarity") if reward is not None else None,
                    max_turns=gen.max_turns,
                    turns_used=(reward.turn if reward is not None else 0) + 1,
                )
            )
        executions = [
            ExecutionFacts(e.sample_id, e.backend, e.duration_s, e.run_index)
            for _, e in sorted(self._executions.items())
        ]
        policies = [
            PolicyFacts(
                p.policy_version, p.step, p.trained_sample_ids, dict(p.metrics), p.stage, p.base, p.algorithm
            )
            for _, p in sorted(self._policies.items())
        ]
        reviews = [
            ReviewFacts(r.sample_id, r.verdict, r.reviewer, r.automated_verdict)
            for _, r in sorted(self._reviews.items())
        ]
        return RunFacts(
            run_id=self.run_id,
            samples=tuple(samples),
            executions=tuple(executions),
            policies=tuple(policies),
            reviews=tuple(reviews),
            task_levels=dict(self._levels),
        )

    def result(self, *, ks: tuple[int, ...] = DEFAULT_KS, source: str = "the log") -> RunReportData:
        data = aggregate(self.facts(), ks=ks, source=source, generated_at=datetime.now(UTC))
        moves = tuple(
            LevelMove(
                m.from_level,
                m.to_level,
                m.reason,
                m.policy_version,
                m.pass_at_1,
                m.threshold,
                m.tasks,
                m.samples,
            )
            for m in self._moves.values()
        )
        return dataclasses.replace(data, curriculum=moves)
