"""Human validation, the pure part: which samples go into a review queue, which review is in force,
what a new review command publishes, whether a review came in time, and how far reviewers agree with
the automated verdicts.

No Kafka here: the CLI (``rlstream review``) reads the log and feeds these functions; the run report
calls :func:`agreement`.

Definitions (the README repeats them):

* **flagged**: an automated verdict of ``mask`` or ``reject``, or an ``accept`` that carries a reason
  other than ``allowed.*`` (``allowed.*`` means the task itself permits the pattern, e.g. its reference
  uses it, so it asks nothing of a reviewer). Every flagged, unreviewed sample enters the queue.
* **accepted sample**: a random draw (seeded, so a queue can be reproduced) of the unreviewed accepted
  samples that are not flagged: the check on what the filter let through silently.
* **in force**: the newest review of a sample in log order (a group's reviews share a partition, so
  log order is total per sample); duplicates of one event id count once.
* **too late**: a review whose sample was already trained into a policy version published before the
  review; it is kept on the log for the audit but changes nothing.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from schemas.rollout import NoiseVerdict, ReviewRecorded

Verdict = Literal["accept", "mask", "reject"]
VERDICTS: tuple[Verdict, ...] = ("accept", "mask", "reject")

#: reason codes that never flag an accepted sample: the task allows the pattern
ALLOWED_PREFIX = "allowed."
#: nor the probe's account of a pass it found nothing against (what it finds is a hack.* or runtime.*)
PROBE_PREFIX = "probe."


def is_flagged(verdict: NoiseVerdict) -> bool:
    """True when a human should see the sample whatever the random draw (see the module docstring)."""
    if verdict.verdict != "accept":
        return True
    return any(not r.code.startswith((ALLOWED_PREFIX, PROBE_PREFIX)) for r in verdict.reasons)


@dataclass(frozen=True)
class Recorded:
    """An event as read from the log: its id, its envelope time and the event."""

    event_id: str
    time: datetime
    event: Any


def reviews_in_force(reviews: Iterable[Recorded]) -> dict[str, Recorded]:
    """sample id -> the review in force, from reviews given in log order (duplicates ignored)."""
    seen: set[str] = set()
    latest: dict[str, Recorded] = {}
    for item in reviews:
        if item.event_id in seen:
            continue
        seen.add(item.event_id)
        latest[item.event.sample_id] = item
    return latest


@dataclass(frozen=True)
class QueueItem:
    sample_id: str
    group_id: str
    task_id: str
    verdict: Verdict
    reasons: tuple[str, ...]
    #: why the sample is in the queue: "flagged" or "accepted sample"
    why: Literal["flagged", "accepted sample"]


def select_queue(
    verdicts: Iterable[NoiseVerdict],
    reviewed: Iterable[str],
    *,
    accepted_sample: int,
    seed: int,
    run_id: str | None = None,
) -> list[QueueItem]:
    """Every flagged unreviewed verdict plus ``accepted_sample`` random unreviewed unflagged accepted
    ones (fewer if there are fewer), of one run if ``run_id`` is given. Flagged first, each part in
    sample-id order; the same log and seed always give the same queue."""
    if accepted_sample < 0:
        raise ValueError("accepted_sample must be >= 0")
    done = set(reviewed)
    by_sample: dict[str, NoiseVerdict] = {}
    for v in verdicts:
        if run_id is not None and not v.group_id.startswith(f"{run_id}/"):
            continue
        if v.sample_id not in done:
            # a re-scored sample has several verdicts: the newest one is what the filter says now
            by_sample[v.sample_id] = v
    flagged = sorted(s for s, v in by_sample.items() if is_flagged(v))
    plain = sorted(s for s, v in by_sample.items() if not is_flagged(v))
    drawn = sorted(random.Random(seed).sample(plain, min(accepted_sample, len(plain))))

    def item(sid: str, why: Literal["flagged", "accepted sample"]) -> QueueItem:
        v = by_sample[sid]
        reasons = tuple(r.code for r in v.reasons)
        return QueueItem(sid, v.group_id, v.task_id, v.verdict, reasons, why)

    return [item(s, "flagged") for s in flagged] + [item(s, "accepted sample") for s in drawn]


class AlreadyRecorded(Exception):
    """The review asked for is the one in force already (the same command run again)."""

    def __init__(self, existing: Recorded) -> None:
        super().__init__(existing.event_id)
        self.existing = existing


def new_review(
    *,
    sample_id: str,
    group_id: str,
    task_id: str,
    verdict: Verdict,
    note: str,
    reviewer: str,
    automated: Recorded | None,
    in_force: Recorded | None,
    now: datetime,
) -> ReviewRecorded:
    """The event a ``review record`` command publishes. Raises :class:`AlreadyRecorded` when the
    review in force has the same reviewer, verdict and note: a retry publishes nothing new."""
    if in_force is not None:
        prev: ReviewRecorded = in_force.event
        if (prev.reviewer, prev.verdict, prev.note) == (reviewer, verdict, note):
            raise AlreadyRecorded(in_force)
    auto: NoiseVerdict | None = automated.event if automated is not None else None
    return ReviewRecorded(
        sample_id=sample_id,
        group_id=group_id,
        task_id=task_id,
        verdict=verdict,
        note=note,
        reviewer=reviewer,
        automated_verdict=auto.verdict if auto is not None else None,
        automated_reasons=tuple(r.code for r in auto.reasons) if auto is not None else (),
        verdict_event_id=automated.event_id if automated is not None else None,
        supersedes=in_force.event_id if in_force is not None else None,
        reviewed_at=now,
    )


@dataclass(frozen=True)
class Trained:
    """A policy version a sample was trained into, with the time it was published."""

    policy_version: int
    time: datetime


def review_outcome(
    review: Recorded,
    *,
    in_force: bool,
    trained: Sequence[Trained],
    assembled_at: datetime | None = None,
    in_gradient: bool | None = None,
) -> str:
    """What a review did, in words an auditor reads in lineage output.

    ``assembled_at``/``in_gradient``: when the sample's group was assembled and whether the sample was
    in it (None: not assembled yet)."""
    event: ReviewRecorded = review.event
    if not in_force:
        return "superseded by a later review"
    before = sorted((t for t in trained if t.time <= review.time), key=lambda t: t.policy_version)
    if before:
        return f"too late: trained into v{before[0].policy_version} before review"
    if event.verdict == "accept":
        if trained:
            return f"in force: trained into v{min(t.policy_version for t in trained)}"
        if assembled_at is not None and not in_gradient and assembled_at <= review.time:
            return "too late: the group was assembled without it before review"
        return "in force: may be trained on"
    if trained:
        # published after the review, but the step had run before the learner saw it
        return f"too late: trained into v{min(t.policy_version for t in trained)} before the learner saw it"
    return "in force: not trained on"


@dataclass
class Agreement:
    """Automated verdicts against the reviews in force, over the reviewed samples."""

    reviewed: int = 0
    agreed: int = 0
    #: automated verdict -> human verdict -> count
    confusion: dict[str, dict[str, int]] = field(
        default_factory=lambda: {a: dict.fromkeys(VERDICTS, 0) for a in VERDICTS}
    )
    #: reviewed samples that had no automated verdict on the log
    without_verdict: int = 0

    @property
    def rate(self) -> float | None:
        """Share of reviewed samples where the reviewer kept the automated verdict (None: no review)."""
        return self.agreed / self.reviewed if self.reviewed else None

    @property
    def kappa(self) -> float | None:
        """Cohen's kappa (agreement beyond chance); None without reviews or when chance agreement
        is total (every verdict the same on both sides)."""
        n = self.reviewed
        if not n:
            return None
        expected = sum(
            sum(self.confusion[v].values()) * sum(self.confusion[a][v] for a in VERDICTS) for v in VERDICTS
        ) / (n * n)
        if expected >= 1.0:
            return None
        return (self.agreed / n - expected) / (1.0 - expected)

    def as_dict(self) -> dict[str, Any]:
        return {
            "reviewed": self.reviewed,
            "agreed": self.agreed,
            "rate": self.rate,
            "kappa": self.kappa,
            "confusion": self.confusion,
            "without_verdict": self.without_verdict,
        }


def agreement(automated: Mapping[str, str], reviews: Mapping[str, str]) -> Agreement:
    """Agreement between automated verdicts (sample id -> accept|mask|reject, the newest verdict of
    each sample) and human reviews (sample id -> the verdict of the review in force). Samples without
    a review do not count; a review without an automated verdict is counted in ``without_verdict``."""
    out = Agreement()
    for sample_id, human in sorted(reviews.items()):
        auto = automated.get(sample_id)
        if auto is None:
            out.without_verdict += 1
            continue
        if auto not in VERDICTS or human not in VERDICTS:
            raise ValueError(f"{sample_id}: verdicts are accept|mask|reject, got {auto!r}/{human!r}")
        out.reviewed += 1
        out.agreed += auto == human
        out.confusion[auto][human] += 1
    return out


class ReviewConfig(BaseModel):
    """Settings of ``rlstream review`` (``RLSTREAM_REVIEW__...``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: who records reviews from this machine; unset: the login name of the user running the command
    reviewer: str | None = Field(default=None, min_length=1, max_length=200)
    #: how many unflagged accepted samples ``review next`` draws by default
    accepted_sample: int = Field(default=5, ge=0)
