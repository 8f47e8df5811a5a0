"""Read what an audit needs from the log and run it: the window selects executions on
``rl.executions``; everything they depend on (tasks, generations, reference runs, rewards, verdicts)
is read whole, since it may sit anywhere on the log."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from confluent_kafka import Message

from consumers.audit import Audit, Report
from infra.kafka.consumer import ConsumedEvent
from infra.kafka.replay import replay, replay_windows
from schemas.errors import EventDecodeError
from schemas.rollout import CodeGenerated, ReviewRecorded
from schemas.topics import EXECUTIONS, GENERATIONS, REFERENCES, REVIEWS, REWARDS, TASKS, TURNS, VERDICTS

#: the topics an audit folds, in the order it reads them
AUDIT_TOPICS = (TASKS, GENERATIONS, EXECUTIONS, TURNS, REFERENCES, REWARDS, VERDICTS)


@dataclass(frozen=True)
class VerifyResult:
    report: Report
    #: records read, all topics together
    records: int
    undecodable: int


def verify_log(
    bootstrap: str,
    audit: Audit,
    *,
    from_offset: int | None = None,
    from_time: datetime | None = None,
    to_time: datetime | None = None,
    run_id: str | None = None,
) -> VerifyResult:
    """Fold the audit's topics into ``audit`` and re-score the run-0 executions in the window (of
    ``run_id`` only, when given)."""
    windows = {
        w.partition: w
        for w in replay_windows(
            bootstrap, EXECUTIONS.name, from_offset=from_offset, from_time=from_time, to_time=to_time
        )
    }

    def in_window(item: ConsumedEvent) -> bool:
        w = windows.get(item.partition)
        if w is None or not w.start <= item.offset < w.end:
            return False
        ts = item.timestamp
        if ts is not None and (
            (from_time is not None and ts < from_time) or (to_time is not None and ts >= to_time)
        ):
            return False
        return run_id is None or item.envelope.run_id == run_id

    undecodable = records = 0

    def skip(msg: Message, exc: EventDecodeError) -> None:
        nonlocal undecodable
        undecodable += 1

    selected: set[str] = set()
    for topic in AUDIT_TOPICS:
        for item in replay(bootstrap, topic.name, on_undecodable=skip):
            records += 1
            audit.fold(item.event)
            if topic is EXECUTIONS and in_window(item):
                # the id a reward names (the envelope's may count a retry attempt)
                selected.add(item.event.event_id())
    report = audit.report(lambda x: x.event_id() in selected)
    return VerifyResult(report, records + undecodable, undecodable)


@dataclass(frozen=True)
class RunLog:
    """What tuning reads of one run besides the audit's fold."""

    #: event ids of the run's executions
    executions: frozenset[str]
    #: sample id -> the verdict of the review in force (the newest in log order)
    reviews: dict[str, str]
    #: sample id -> the policy version that generated it
    versions: dict[str, int]


def fold_run(bootstrap: str, audit: Audit, run_id: str) -> RunLog:
    """Fold the audit's topics (and the reviews) into ``audit``, noting the run's executions, the
    versions of its samples and the reviews in force."""
    executions: set[str] = set()
    versions: dict[str, int] = {}
    reviews: dict[str, str] = {}
    for topic in (*AUDIT_TOPICS, REVIEWS):
        for item in replay(bootstrap, topic.name, on_undecodable=lambda _msg, _exc: None):
            event = item.event
            audit.fold(event)
            if item.envelope.run_id != run_id:
                continue
            if topic is EXECUTIONS:
                executions.add(event.event_id())
            elif isinstance(event, CodeGenerated) and event.turn == 0:
                versions[event.sample_id] = event.policy_version
            elif isinstance(event, ReviewRecorded):
                reviews[event.sample_id] = event.verdict
    return RunLog(frozenset(executions), reviews, versions)
