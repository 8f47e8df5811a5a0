"""The topic catalog: every topic of the event log, its key and its retention.

Event topics keep forever (``retention.ms=-1``): the log is the source of truth, so replay and audit
work from offset 0 for the whole life of a run. Keys keep one aggregate on one partition, which is what
gives per-group ordering.
"""

from __future__ import annotations

from dataclasses import dataclass, field

KEEP_FOREVER = "-1"
#: ``max.message.bytes`` of the topics that carry executions (``rl.executions``, ``rl.references``)
#: or dead letters of any record (``rl.dlq``, ``rl.retry.*``). An execution event keeps its results
#: within ``schemas.rollout.MAX_EXECUTION_RESULT_BYTES`` and its output within 2 x
#: ``MAX_EVENT_OUTPUT_BYTES`` (~5 MiB with the cases of any task that fits its own topic); a dead letter
#: holds a record in base64 (4/3 of it). The bound is the body a consumer decodes
#: (``schemas.codec.MAX_BODY_BYTES``, 8 MiB) plus room for the headers.
EXECUTION_MESSAGE_BYTES = 8 * 1024 * 1024 + 64 * 1024
#: ``max.message.bytes`` of a processor's state changelog: one value may hold several executions (the
#: noise filter keeps a sample's runs, up to 11, until it judges it)
STATE_MESSAGE_BYTES = 64 * 1024 * 1024
#: the largest record our producers send (librdkafka's ``message.max.bytes``)
MAX_RECORD_BYTES = STATE_MESSAGE_BYTES + 64 * 1024
_LARGE = {"retention.ms": KEEP_FOREVER, "max.message.bytes": str(EXECUTION_MESSAGE_BYTES)}


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
    #: further event classes the topic carries (the two sides of one fact: an alert raised, resolved)
    also: tuple[str, ...] = ()

    @property
    def events(self) -> tuple[str, ...]:
        return (self.event, *self.also)


TASKS = Topic("rl.tasks", "task_id", "TaskPublished", "upstream systems, rlstream tasks publish")
ROLLOUTS_REQUESTED = Topic("rl.rollouts.requested", "group_id", "RolloutRequested", "scheduler")
# evaluation rounds' requests: a lane of their own, so training never starves them nor they training
EVALUATIONS_REQUESTED = Topic("rl.evaluations.requested", "group_id", "RolloutRequested", "scheduler")
GENERATIONS = Topic("rl.generations", "group_id", "CodeGenerated", "generator")
EXECUTIONS = Topic("rl.executions", "group_id", "SandboxExecuted", "sandbox", configs=dict(_LARGE))
# how each turn of a multi-turn episode ended: the feedback the next turn sees, or the final turn
TURNS = Topic("rl.turns", "group_id", "TurnEnded", "episode")
REWARDS = Topic("rl.rewards", "group_id", "RewardScored", "reward")
# the reference runs rewards were compared with (named by id on each RewardScored): audits re-score exactly
REFERENCES = Topic("rl.references", "task_id", "ReferenceExecuted", "reward", configs=dict(_LARGE))
VERDICTS = Topic("rl.verdicts", "group_id", "NoiseVerdict", "noise filter")
EXPERIENCES = Topic("rl.experiences", "group_id", "ExperienceReady", "experience")
# one partition: policy versions are a single totally ordered sequence per run
POLICY = Topic("rl.policy", "run_id", "PolicyPublished", "learner", partitions=1)
# one partition: what the run's generators loaded, in the order they loaded it (the staleness bound's input)
POLICY_LOADED = Topic("rl.policy.loaded", "run_id", "PolicyLoaded", "generator", partitions=1)
REVIEWS = Topic("rl.reviews", "group_id", "ReviewRecorded", "rlstream review record")
# one partition: a stage's examples in the order it wrote them, which is the order it trains them in
SFT_EXAMPLES = Topic("rl.sft.examples", "run_id", "SftExample", "rlstream sft", partitions=1)
# one partition: a run's curriculum moves are one ordered sequence
CURRICULUM = Topic("rl.curriculum", "run_id", "CurriculumLevelChanged", "scheduler", partitions=1)
# one partition: a monitor's alerts, firing and resolved, in the order it saw them
ALERTS = Topic("rl.alerts", "rule", "AlertRaised", "monitor", partitions=1, also=("AlertResolved",))
DLQ = Topic("rl.dlq", "original key", "DeadLettered", "any processor", configs=dict(_LARGE))

#: stages that have a retry topic (rl.retry.<stage>)
RETRY_STAGES: tuple[str, ...] = ("scheduler", "generator", "sandbox", "reward", "filter", "experience")


def retry_topic(stage: str) -> Topic:
    if stage not in RETRY_STAGES:
        raise ValueError(f"no retry topic for stage {stage!r}; known: {', '.join(RETRY_STAGES)}")
    return Topic(f"rl.retry.{stage}", "original key", "DeadLettered", stage, configs=dict(_LARGE))


EVENT_TOPICS: tuple[Topic, ...] = (
    TASKS,
    ROLLOUTS_REQUESTED,
    EVALUATIONS_REQUESTED,
    GENERATIONS,
    EXECUTIONS,
    TURNS,
    REWARDS,
    REFERENCES,
    VERDICTS,
    EXPERIENCES,
    POLICY,
    POLICY_LOADED,
    REVIEWS,
    SFT_EXAMPLES,
    CURRICULUM,
    ALERTS,
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
        if event_class_name in topic.events:
            return topic
    if event_class_name == DLQ.event:
        return DLQ
    raise KeyError(f"no topic carries {event_class_name}")
