"""Configuration of the stream processors (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from schemas.rollout import SamplingParams


class EvaluationConfig(BaseModel):
    """Evaluation rounds on the held-out (``eval``) tasks: see ``streams/scheduler/evaluation.py``."""

    model_config = {"frozen": True}

    #: a round every this many policy versions (0: version 0 and the final one only)
    every: int = Field(default=5, ge=0)
    #: samples per task and version (the n of pass@k; pass@k is reported for k up to it)
    samples: int = Field(default=8, ge=1, le=1024)
    #: the seed every (task, version) sampling seed derives from: runs with the same seed are comparable
    seed: int = 0
    #: the run's last learner step (``rlstream run --steps N`` sets it): the version published there is
    #: evaluated too, and no training group is issued after it
    final_step: int | None = Field(default=None, ge=1)


class LevelConfig(BaseModel):
    """The level-aware curriculum over graded tasks: see ``streams/scheduler/levels.py``."""

    model_config = {"frozen": True}

    #: hold graded tasks above the current level back (``rlstream run`` turns it on for library runs
    #: with held-out tasks, which are what measures a level)
    enabled: bool = False
    #: held-out pass@1 of the current level at which training moves to the next level
    advance_at: float = Field(default=0.5, gt=0.0, le=1.0)


class SchedulerConfig(BaseModel):
    model_config = {"frozen": True}

    group_size: int = Field(default=4, ge=1, le=1024)
    #: groups issued per task over a run (1 = every task once)
    epochs: int = Field(default=1, ge=1)
    #: tenant -> weight for weighted-fair scheduling (unlisted tenants weigh 1)
    tenant_weights: dict[str, float] = Field(default_factory=dict)
    #: backpressure bounds: hold back instead of producing samples the learner would discard
    max_learner_lag: int = Field(default=64, ge=1, description="unconsumed experiences")
    max_groups_in_flight: int = Field(default=16, ge=1)
    max_staleness: int = Field(default=2, ge=0, description="policy versions")
    #: skip tasks whose last `curriculum_window` groups were all-pass or all-fail (0 disables)
    curriculum_window: int = Field(default=0, ge=0)
    curriculum_cooldown: int = Field(default=50, ge=0)
    sampling: SamplingParams = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=128)
    evaluation: EvaluationConfig = EvaluationConfig()
    levels: LevelConfig = LevelConfig()
    #: schedule only tasks published under this run's id (a focused `rlstream run`); otherwise every
    #: task on rl.tasks is scheduled, each within the run that published it
    only_own_run: bool = False


class PipelineConfig(BaseModel):
    model_config = {"frozen": True}

    scheduler: SchedulerConfig = SchedulerConfig()
    #: records handed to a processor's handler at once (one Kafka transaction per batch)
    batch_size: int = Field(default=32, ge=1, le=10_000)
    #: seconds after its request a group is emitted even if incomplete (flagged partial)
    group_deadline_s: float = Field(default=600.0, gt=0)
    #: GRPO advantages divided by the group's reward std
    normalise_std: bool = True
    #: sandbox infra failures are retried this many times (with backoff) before rl.dlq
    max_retries: int = Field(default=3, ge=0)
    retry_backoff_s: float = Field(default=1.0, ge=0)
    #: how long a processor remembers that a sample or group is done (scored, judged, emitted), in
    #: seconds of stream time after it was: long enough to recognise any re-delivered record, short
    #: enough that state and restore time stay bounded by the work in flight
    state_grace_s: float = Field(default=3600.0, gt=0)
    #: reference runs a reward or filter worker keeps in memory (per task and backend, and per probe
    #: seed: one per group), and in the state of each partition it owns (per kind): the least recently
    #: used go first, so memory, state and restore time stay flat on a long backlog; one evicted and
    #: needed again is run again (and published again)
    reference_cache_entries: int = Field(default=256, ge=1)
    #: the filter starts the reference's runs of a group's probe plan when the group's first probe run
    #: arrives (the plan is known then), on a pool of two sandbox workers of its own, both runs at once,
    #: rather than one after the other in its own process when the first verdict needs them: the same
    #: runs, off the first sample's path (``streams/noise/agent.py``); off: as before, no pool
    warm_probe_references: bool = True
