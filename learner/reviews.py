"""The reviews in force for one run, followed on ``rl.reviews``: the learner's side of human overrides.

Before each step the learner catches up with the whole topic (every partition to its end at that
moment, ``read_committed``), so a review acknowledged before the step is honoured; one recorded after
it comes too late for the samples that step trained, and stays on the log for the audit. Reviews of a
sample share one partition (keyed by group), so the newest one read is the one in force.
"""

from __future__ import annotations

from infra.kafka.global_table import TopicFollower
from schemas.rollout import ReviewRecorded
from schemas.topics import REVIEWS


class ReviewFollower:
    def __init__(self, bootstrap: str, run_id: str, *, timeout_s: float = 30.0) -> None:
        self._prefix = f"{run_id}/"
        self._timeout_s = timeout_s
        self._follower = TopicFollower(bootstrap, REVIEWS.name, ReviewRecorded)
        self._in_force: dict[str, str] = {}

    def refresh(self) -> None:
        for review in self._follower.catch_up(self._timeout_s):
            if review.group_id.startswith(self._prefix):
                self._in_force[review.sample_id] = review.verdict

    def verdict(self, sample_id: str) -> str | None:
        return self._in_force.get(sample_id)

    def close(self) -> None:
        self._follower.close()
