"""ReviewRecorded: the id scheme that keeps retries single and distinct reviews distinct."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from schemas.rollout import ReviewRecorded

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def review(**over: object) -> ReviewRecorded:
    fields: dict[str, object] = {
        "sample_id": "run/t/0/1",
        "group_id": "run/t/0",
        "task_id": "t",
        "verdict": "reject",
        "note": "hard-codes the visible cases",
        "reviewer": "alice",
        "automated_verdict": "accept",
        "reviewed_at": T0,
    }
    fields.update(over)
    return ReviewRecorded.model_validate(fields)


def test_the_same_command_retried_later_is_the_same_event():
    assert review().event_id() == review(reviewed_at=T0 + timedelta(minutes=5)).event_id()


def test_different_reviews_of_one_sample_are_distinct_events():
    first = review()
    ids = {
        first.event_id(),
        review(verdict="mask").event_id(),
        review(note="another note").event_id(),
        review(reviewer="bob").event_id(),
        # the same words again after someone else's review: a new fact, not a retry
        review(supersedes=review(verdict="accept").event_id()).event_id(),
    }
    assert len(ids) == 5


def test_a_review_is_keyed_by_its_group_and_needs_a_time_zone():
    assert review().key == "run/t/0"
    with pytest.raises(ValidationError):
        review(reviewed_at=datetime(2026, 11, 30, 12, 0))
    with pytest.raises(ValidationError):
        review(verdict="maybe")
