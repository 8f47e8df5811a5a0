"""The topic catalog: every topic of the event log, its key and its retention.

Event topics keep forever (``retention.ms=-1``): the log is the source of truth, so replay and audit
work from offset 0 for the whole life of a run. Keys keep one aggregate on one partition, which is what
gives per-group ordering.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KEEP_FOREVER = "-1"


@dataclass(frozen=True)
class Topic:
    name: str
    key: str
    event: str
    produced_by: str
    #: topic-level configs applied at creation
    configs: dict[str, str] = field(default_factory=lambda: {"retention.ms": KEEP_FOREVER})
    #: None = the cluster-wide default partition count from settings
    partitions: int | None = None


TASKS = Topic("rl.tasks", "task_id", "TaskPublished", "upstream systems, rlstream tasks publish")
ROLLOUTS_REQUESTED = Topic("rl.rollouts.requested", "group_id", "RolloutRequested", "scheduler")
# evaluation rounds' requests: a lane of their own, so training never starves them nor they training
EVALUATIONS_REQUESTED = Topic("rl.evaluations.requested", "group_id", "RolloutRequested", "scheduler")
GENERATIONS = Topic("rl.generations", "group_id", "CodeGenerated", "generator")
EXECUTIONS = Topic("rl.executions", "group_id", "SandboxExecuted", "sandbox")
REWARDS = Topic("rl.rewards", "group_id", "RewardScored", "reward")
# the reference runs rewards were compared with (named by id on each RewardScored): audits re-score exactly
REFERENCES = Topic("rl.references", "task_id", "ReferenceExecuted", "reward")
VERDICTS = Topic("rl.verdicts", "group_id", "NoiseVerdict", "noise filter")
EXPERIENCES = Topic("rl.experiences", "group_id", "ExperienceReady", "experience")
# one partition: policy versions are a single totally ordered sequence per run
POLICY = Topic("rl.policy", "run_id", "PolicyPublished", "learner", partitions=1)
REVIEWS = Topic("rl.reviews", "group_id", "ReviewRecorded", "rlstream review record")
DLQ = Topic("rl.dlq", "original key", "DeadLettered", "any processor")

#: stages that have a retry topic (rl.retry.<stage>)
RETRY_STAGES: tuple[str, ...] = ("scheduler", "generator", "sandbox", "reward", "filter", "experience")


def retry_topic(stage: str) -> Topic:
    if stage not in RETRY_STAGES:
        raise ValueError(f"no retry topic for stage {stage!r}; known: {', '.join(RETRY_STAGES)}")
    return Topic(f"rl.retry.{stage}", "original key", "DeadLettered", stage)


EVENT_TOPICS: tuple[Topic, ...] = (
    TASKS,
    ROLLOUTS_REQUESTED,
    EVALUATIONS_REQUESTED,
    GENERATIONS,
    EXECUTIONS,
    REWARDS,
    REFERENCES,
    VERDICTS,
    EXPERIENCES,
    POLICY,
    REVIEWS,
)

CATALOG: tuple[Topic, ...] = (*EVENT_TOPICS, DLQ, *(retry_topic(s) for s in RETRY_STAGES))


def by_name(name: str) -> Topic:
    for topic in CATALOG:
        if topic.name == name:
            return topic
    raise KeyError(name)


def topic_for(event_class_name: str) -> Topic:
    """The event topic that carries events of the given class name (e.g. ``CodeGenerated``)."""
    for topic in EVENT_TOPICS:
        if topic.event == event_class_name:
            return topic
    if event_class_name == DLQ.event:
        return DLQ
    raise KeyError(f"no topic carries {event_class_name}")
