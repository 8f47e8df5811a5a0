"""The reviews in force, followed on ``rl.reviews``: how the experience processor and the learner see
human overrides.

Before it assembles a group or takes a step, a reader catches up with the whole topic (every partition
to its end at that moment, ``read_committed``), so a review acknowledged before then is honoured; one
recorded after it comes too late for the samples already assembled or trained, and stays on the log
for the audit. Reviews of a sample share one partition (keyed by group), so the newest one read is the
one in force.
"""

from __future__ import annotations

from infra.kafka.global_table import TopicFollower
from schemas.rollout import ReviewRecorded
from schemas.topics import REVIEWS


class ReviewFollower:
    """Verdicts of the reviews in force, of one run (``run_id``) or of every run (None)."""

    def __init__(self, bootstrap: str, run_id: str | None = None, *, timeout_s: float = 30.0) -> None:
        self._prefix = f"{run_id}/" if run_id is not None else ""
        self._timeout_s = timeout_s
        self._follower = TopicFollower(bootstrap, REVIEWS.name, ReviewRecorded)
        self._in_force: dict[str, str] = {}

    def refresh(self) -> None:
        """Take in every review committed up to now."""
        for review in self._follower.catch_up(self._timeout_s):
            if review.group_id.startswith(self._prefix):
                self._in_force[review.sample_id] = review.verdict

    def verdict(self, sample_id: str) -> str | None:
        return self._in_force.get(sample_id)

    def close(self) -> None:
        self._follower.close()
