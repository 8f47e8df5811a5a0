"""Every event class by CloudEvents type, and the upcasters that lift old versions to the newest.

Old versions are never edited: a body written as ``rlstream.task.published.v1`` stays v1 on the log
forever. Reading it runs the chain of upcasters v1 -> v2 -> ... and validates the result against the
newest class, so consumers only ever see the current shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from schemas.alert import AlertRaised, AlertResolved
from schemas.base import Event
from schemas.curriculum import CurriculumLevelChanged
from schemas.dlq import DeadLettered
from schemas.episode import TurnEnded
from schemas.policy import (
    PolicyLoaded,
    PolicyPublished,
    PolicyPublishedV1,
    PolicyPublishedV2,
    implied_algorithm,
)
from schemas.reference import (
    ReferenceExecuted,
    ReferenceExecutedV1,
    ReferenceExecutedV2,
    ReferenceExecutedV3,
)
from schemas.rollout import (
    CodeGenerated,
    CodeGeneratedV1,
    CodeGeneratedV2,
    ExperienceReady,
    ExperienceReadyV1,
    ExperienceReadyV2,
    NoiseVerdict,
    NoiseVerdictV1,
    NoiseVerdictV2,
    ReviewRecorded,
    RewardScored,
    RewardScoredV1,
    RewardScoredV2,
    RolloutRequested,
    RolloutRequestedV1,
    RolloutRequestedV2,
    SandboxExecuted,
    SandboxExecutedV1,
    SandboxExecutedV2,
    SandboxExecutedV3,
    SandboxExecutedV4,
    SandboxExecutedV5,
    SandboxExecutedV6,
)
from schemas.sft import SftExample
from schemas.task import (
    TaskPublished,
    TaskPublishedV1,
    TaskPublishedV2,
    TaskPublishedV3,
    TaskPublishedV4,
    TaskPublishedV5,
)

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]

#: all event versions, old ones included (they stay decodable for golden samples and the schema export)
EVENT_CLASSES: tuple[type[Event], ...] = (
    TaskPublishedV1,
    TaskPublishedV2,
    TaskPublishedV3,
    TaskPublishedV4,
    TaskPublishedV5,
    TaskPublished,
    RolloutRequestedV1,
    RolloutRequestedV2,
    RolloutRequested,
    CodeGeneratedV1,
    CodeGeneratedV2,
    CodeGenerated,
    SandboxExecutedV1,
    SandboxExecutedV2,
    SandboxExecutedV3,
    SandboxExecutedV4,
    SandboxExecutedV5,
    SandboxExecutedV6,
    SandboxExecuted,
    TurnEnded,
    ReferenceExecutedV1,
    ReferenceExecutedV2,
    ReferenceExecutedV3,
    ReferenceExecuted,
    RewardScoredV1,
    RewardScoredV2,
    RewardScored,
    NoiseVerdictV1,
    NoiseVerdictV2,
    NoiseVerdict,
    ExperienceReadyV1,
    ExperienceReadyV2,
    ExperienceReady,
    PolicyPublishedV1,
    PolicyPublishedV2,
    PolicyPublished,
    PolicyLoaded,
    SftExample,
    ReviewRecorded,
    CurriculumLevelChanged,
    AlertRaised,
    AlertResolved,
    DeadLettered,
)

BY_CE_TYPE: dict[str, type[Event]] = {cls.ce_type(): cls for cls in EVENT_CLASSES}

LATEST: dict[str, type[Event]] = {}
for _cls in EVENT_CLASSES:
    if _cls.event_type not in LATEST or LATEST[_cls.event_type].version < _cls.version:
        LATEST[_cls.event_type] = _cls


def _task_v1_to_v2(body: dict[str, Any]) -> dict[str, Any]:
    # v1 tasks had no hidden cases, tenant, priority or limits: the v2 defaults are what v1 meant
    return {**body, "schema_version": 2}


def _train_split(to_version: int) -> Upcaster:
    def up(body: dict[str, Any]) -> dict[str, Any]:
        # written before splits existed: everything was a training task, request or sample
        return {**body, "schema_version": to_version, "split": "train"}

    return up


def _reward_v1_to_v2(body: dict[str, Any]) -> dict[str, Any]:
    # a v1 reward named no reference run: None says so (its efficiency part cannot be re-scored exactly)
    return {**body, "schema_version": 2, "reference_event_id": None}


def _experience_v1_to_v2(body: dict[str, Any]) -> dict[str, Any]:
    # v1 samples named no trace: None says so (a learner step cannot link to them)
    samples = [{**sample, "traceparent": None} for sample in body.get("samples", [])]
    return {**body, "schema_version": 2, "samples": samples}


def _split_labels(violation: Any) -> list[str]:
    # v1 carried the first label only (older writers joined several with commas or semicolons)
    if not isinstance(violation, str):
        return []
    return [v.strip() for v in violation.replace(";", ",").split(",") if v.strip()]


def _execution_v1_to_v2(body: dict[str, Any]) -> dict[str, Any]:
    # v1 named one label and timed nothing on the host: the labels it named, and None for the timings
    labels = _split_labels(body.get("violation"))
    return {
        **body,
        "schema_version": 2,
        "violation": labels[0] if labels else None,
        "violations": labels,
        "load_s": None,
        "active_s": None,
    }


def _reference_v1_to_v2(body: dict[str, Any]) -> dict[str, Any]:
    execution = body.get("execution")
    lifted = _execution_v1_to_v2(execution) if isinstance(execution, dict) else execution
    return {**body, "schema_version": 2, "execution": lifted}


def _execution_v2_to_v3(body: dict[str, Any]) -> dict[str, Any]:
    # a v2 execution ran the task's own cases: no probe plan
    return {**body, "schema_version": 3, "probe": None}


def _reference_v2_to_v3(body: dict[str, Any]) -> dict[str, Any]:
    # a v2 reference run was one run, holding a v2 execution
    execution = body.get("execution")
    lifted = _execution_v2_to_v3(execution) if isinstance(execution, dict) else execution
    return {**body, "schema_version": 3, "execution": lifted, "reruns": []}


def _verdict_v1_to_v2(body: dict[str, Any]) -> dict[str, Any]:
    # a v1 reject kept the sample out of the gradient: no failure reward says so (it stays out)
    return {**body, "schema_version": 2, "failure_reward": None, "probe_reference_event_id": None}


def _adding(to_version: int, **implied: Any) -> Upcaster:
    """A version that only adds fields: the older body meant ``implied`` (e.g. a one-turn episode)."""

    def up(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, **implied, "schema_version": to_version}

    return up


def _experience_v2_to_v3(body: dict[str, Any]) -> dict[str, Any]:
    # v2 samples were one-turn samples: no turns of their own
    samples = [{**sample, "turns": []} for sample in body.get("samples", [])]
    return {**body, "schema_version": 3, "samples": samples}


def _policy_v2_to_v3(body: dict[str, Any]) -> dict[str, Any]:
    return {
        **body,
        "schema_version": 3,
        "base": None,
        "algorithm": implied_algorithm(body.get("stage", "rl")),
    }


#: (event_type, from_version) -> function producing the body of from_version + 1
UPCASTERS: dict[tuple[str, int], Upcaster] = {
    (TaskPublished.event_type, 1): _task_v1_to_v2,
    (TaskPublished.event_type, 2): _train_split(3),
    (TaskPublished.event_type, 3): _adding(4, max_turns=None),
    (TaskPublished.event_type, 4): _adding(5, difficulty=None, tags=[]),
    (TaskPublished.event_type, 5): _adding(6, tolerance=None),
    (RolloutRequested.event_type, 1): _train_split(2),
    (RolloutRequested.event_type, 2): _adding(3, max_turns=1),
    (CodeGenerated.event_type, 1): _train_split(2),
    (CodeGenerated.event_type, 2): _adding(3, turn=0, max_turns=1, feedback_event_id=None),
    (RewardScored.event_type, 1): _reward_v1_to_v2,
    (RewardScored.event_type, 2): _adding(3, turn=0),
    (ExperienceReady.event_type, 1): _experience_v1_to_v2,
    (SandboxExecuted.event_type, 1): _execution_v1_to_v2,
    (ReferenceExecuted.event_type, 1): _reference_v1_to_v2,
    (SandboxExecuted.event_type, 2): _execution_v2_to_v3,
    (ReferenceExecuted.event_type, 2): _reference_v2_to_v3,
    (ReferenceExecuted.event_type, 3): _adding(4, memoised=[]),
    # every version written before stages existed came from the learner's RL steps
    (PolicyPublished.event_type, 1): _adding(2, stage="rl"),
    # every version written before bases and algorithms were recorded names no base, and an RL
    # version's objective was GRPO's
    (PolicyPublished.event_type, 2): _policy_v2_to_v3,
    (NoiseVerdict.event_type, 1): _verdict_v1_to_v2,
    (NoiseVerdict.event_type, 2): _adding(3, turn=0),
    (SandboxExecuted.event_type, 3): _adding(4, turn=0, max_turns=1),
    (SandboxExecuted.event_type, 4): _adding(5, probe_seed=None),
    # a v5 run said nothing of single calls: no call flooded, no thread recursed
    (SandboxExecuted.event_type, 5): _adding(6, output_flood=None, thread_recursion=[]),
    # a v6 run did not tell a deep RecursionError from one a program raised itself: not recorded
    (SandboxExecuted.event_type, 6): _adding(7, deep_recursion=None),
    (ExperienceReady.event_type, 2): _experience_v2_to_v3,
}


def split_ce_type(ce_type: str) -> tuple[str, int]:
    """``rlstream.task.published.v1`` -> (``rlstream.task.published``, 1)."""
    base, _, tail = ce_type.rpartition(".v")
    if not base or not tail.isdigit():
        raise ValueError(f"ce_type {ce_type!r} does not end in .v<N>")
    return base, int(tail)


def upcast(ce_type: str, body: dict[str, Any]) -> tuple[type[Event], dict[str, Any]]:
    """Lift ``body`` (written as ``ce_type``) to the newest version of its event."""
    event_type, version = split_ce_type(ce_type)
    latest = LATEST.get(event_type)
    if latest is None:
        raise KeyError(f"unknown event type {event_type!r}")
    if version > latest.version:
        raise KeyError(
            f"{ce_type} is newer than this build knows (newest: v{latest.version}); upgrade rlstream"
        )
    while version < latest.version:
        step = UPCASTERS.get((event_type, version))
        if step is None:
            raise KeyError(f"no upcaster from {event_type}.v{version}")
        body = step(body)
        version += 1
    return latest, body
