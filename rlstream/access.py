"""Least-privilege access to the log: one principal per processor kind, allowed exactly what it reads
and writes.

Derived, never listed twice: each processor's input topics and output topics are the ones its agent
module declares (``INPUT_TOPICS``/``OUTPUT_TOPICS``; the runtime refuses an emit to any other), its side
inputs the ones :mod:`rlstream.workers` wires for it (:data:`SIDE_READS`), and the names of its consumer
group, transactional ids and state changelog follow the runtimes' naming (``rlstream.<processor>...``,
``rlstream.state.<processor>...``, Faust's ``rlstream.faust.<processor>...``). A new processor or topic
gets its grants from its own declarations.

What a compromised worker can then do is bounded by its kind: a sandbox worker can read generations and
write executions, but cannot write a reward, a verdict or a policy version, nor read human reviews.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from schemas.topics import (
    CATALOG,
    DLQ,
    EXPERIENCES,
    POLICY,
    REVIEWS,
    SFT_EXAMPLES,
    TASKS,
)

Resource = Literal["topic", "group", "transactional_id", "cluster"]
Pattern = Literal["literal", "prefixed"]
Operation = Literal[
    "READ", "WRITE", "DESCRIBE", "CREATE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE"
]

#: the principal of each processor kind (``RLSTREAM_KAFKA__SECURITY__USERNAME=rlstream-{processor}``)
PRINCIPAL_PREFIX = "rlstream-"
#: the consumer group the learner commits under (its lag is read by the scheduler)
LEARNER_GROUP = "rlstream.learner"

#: topics each processor reads beside its inputs, as rlstream.workers wires its side inputs
SIDE_READS: dict[str, tuple[str, ...]] = {
    "scheduler": (EXPERIENCES.name,),  # the learner's lag: records behind its committed offsets
    "generator": (POLICY.name,),
    "evaluator": (POLICY.name,),
    "sandbox": (TASKS.name,),
    "episode": (TASKS.name,),
    "reward": (TASKS.name,),
    "filter": (TASKS.name,),
    "experience": (REVIEWS.name,),
    "monitor": (EXPERIENCES.name,),  # the learner's lag, as the scheduler reads it
}


@dataclass(frozen=True, order=True)
class Grant:
    """One allow rule: ``principal`` may ``operation`` on the ``resource`` named ``name``."""

    principal: str
    resource: Resource
    pattern: Pattern
    name: str
    operation: Operation

    def line(self) -> str:
        star = "*" if self.pattern == "prefixed" else ""
        return f"User:{self.principal:<22} {self.operation:<16} {self.resource:<16} {self.name}{star}"


def _topics(principal: str, names: Iterable[str], operations: tuple[Operation, ...]) -> list[Grant]:
    return [Grant(principal, "topic", "literal", n, op) for n in names for op in operations]


def _prefixed(principal: str, resource: Resource, prefix: str, ops: tuple[Operation, ...]) -> list[Grant]:
    return [Grant(principal, resource, "prefixed", prefix, op) for op in ops]


def declared_topics(processor: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The (input, output) topics a stream processor's agent module declares."""
    from producers.generator import agent as generator
    from streams.episode import agent as episode
    from streams.experience import agent as experience
    from streams.monitor import agent as monitor
    from streams.noise import agent as noise
    from streams.reward import agent as reward
    from streams.sandbox import agent as sandbox
    from streams.scheduler import agent as scheduler

    modules = {
        "scheduler": (scheduler.INPUT_TOPICS, scheduler.OUTPUT_TOPICS),
        "generator": (generator.INPUT_TOPICS, generator.OUTPUT_TOPICS),
        "evaluator": (generator.EVAL_INPUT_TOPICS, generator.EVAL_OUTPUT_TOPICS),
        "sandbox": (sandbox.INPUT_TOPICS, sandbox.OUTPUT_TOPICS),
        "episode": (episode.INPUT_TOPICS, episode.OUTPUT_TOPICS),
        "reward": (reward.INPUT_TOPICS, reward.OUTPUT_TOPICS),
        "filter": (noise.INPUT_TOPICS, noise.OUTPUT_TOPICS),
        "experience": (experience.INPUT_TOPICS, experience.OUTPUT_TOPICS),
        "monitor": (monitor.INPUT_TOPICS, monitor.OUTPUT_TOPICS),
    }
    return modules[processor]


def stream_processor_grants(processor: str, principal: str | None = None) -> list[Grant]:
    who = principal or PRINCIPAL_PREFIX + processor
    inputs, outputs = declared_topics(processor)
    reads = tuple(dict.fromkeys((*inputs, *SIDE_READS.get(processor, ()))))
    grants = _topics(who, reads, ("READ", "DESCRIBE"))
    grants += _topics(who, (*outputs, DLQ.name), ("WRITE", "DESCRIBE"))
    # the transactional runtime: consumer and restore groups, transactional ids, the state changelog
    grants += _prefixed(who, "group", f"rlstream.{processor}", ("READ", "DESCRIBE"))
    grants += _prefixed(who, "transactional_id", f"rlstream.{processor}", ("WRITE", "DESCRIBE"))
    state_ops: tuple[Operation, ...] = (
        "READ", "WRITE", "DESCRIBE", "CREATE", "DESCRIBE_CONFIGS", "ALTER_CONFIGS"
    )  # fmt: skip
    grants += _prefixed(who, "topic", f"rlstream.state.{processor}", state_ops)
    # the Faust runtime: the app's group and its own changelog topics
    grants += _prefixed(who, "group", f"rlstream.faust.{processor}", ("READ", "DESCRIBE"))
    grants += _prefixed(who, "topic", f"rlstream.faust.{processor}", state_ops)
    # side inputs read from the start without committing (their groups only name the reader)
    if processor in SIDE_READS:
        grants += _prefixed(who, "group", "rlstream.follow.", ("READ", "DESCRIBE"))
    if processor in (
        "scheduler",
        "monitor",
    ):  # the learner's committed offsets, read without joining its group
        grants += [Grant(who, "group", "literal", LEARNER_GROUP, "DESCRIBE")]
        grants += _prefixed(who, "group", "rlstream.lag.", ("READ", "DESCRIBE"))
    return grants


def plan() -> list[Grant]:
    """Every grant of every principal, sorted."""
    from rlstream.workers import STREAM_PROCESSORS

    grants: list[Grant] = []
    for name in STREAM_PROCESSORS:
        grants += stream_processor_grants(name)
    # one Faust app hosting every stream processor (rlstream.faust_app) holds all their grants
    for name in STREAM_PROCESSORS:
        grants += stream_processor_grants(name, PRINCIPAL_PREFIX + "faust")
    learner = PRINCIPAL_PREFIX + "learner"
    grants += _topics(learner, (EXPERIENCES.name, REVIEWS.name), ("READ", "DESCRIBE"))
    grants += _topics(learner, (POLICY.name,), ("WRITE", "DESCRIBE"))
    # the supervised stage (`rlstream sft`) runs as the learner: it writes its examples, trains on what
    # it reads back, and publishes the version
    grants += _topics(learner, (SFT_EXAMPLES.name,), ("READ", "WRITE", "DESCRIBE"))
    grants += [Grant(learner, "group", "literal", LEARNER_GROUP, op) for op in ("READ", "DESCRIBE")]
    grants += _prefixed(learner, "group", "rlstream.follow.", ("READ", "DESCRIBE"))
    projector = PRINCIPAL_PREFIX + "projector"
    grants += _topics(projector, (t.name for t in CATALOG), ("READ", "DESCRIBE"))
    grants += _prefixed(projector, "group", "rlstream.projector", ("READ", "DESCRIBE"))
    # the operator's commands: publish tasks and reviews, create the catalog, read everything
    cli = PRINCIPAL_PREFIX + "cli"
    grants += _topics(cli, (t.name for t in CATALOG), ("READ", "DESCRIBE", "DESCRIBE_CONFIGS"))
    grants += _topics(cli, (TASKS.name, REVIEWS.name), ("WRITE",))
    grants += _topics(cli, (t.name for t in CATALOG), ("CREATE", "ALTER_CONFIGS"))
    grants += _prefixed(cli, "group", "rlstream", ("READ", "DESCRIBE"))
    return sorted(set(grants))


def principals() -> list[str]:
    return sorted({g.principal for g in plan()})
