"""The side inputs of a worker read from the broker (:class:`~infra.runtime.sides.SideInputs`): tasks held
whole, policy versions and reviews followed, the learner's lag probed. Each is opened on first use and
closed with the worker."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from infra.kafka.global_table import GlobalTable, TopicFollower
from infra.kafka.lag import LagProbe
from infra.kafka.reviews import ReviewFollower
from infra.runtime.sides import PolicySource, ReviewTable, TaskTable
from schemas.errors import BrokerError
from schemas.policy import PolicyPublished
from schemas.task import TaskPublished
from schemas.topics import EXPERIENCES, POLICY, TASKS

log = logging.getLogger(__name__)


class CachedLag:
    """The learner's lag, read from the broker at most once a second (or now, when asked ``fresh``)."""

    def __init__(self, probe: LagProbe, every_s: float = 1.0) -> None:
        self.probe, self.every_s = probe, every_s
        self._at, self._value = 0.0, 0

    def __call__(self, fresh: bool = False) -> int:
        now = time.monotonic()
        if fresh or now - self._at >= self.every_s:
            try:
                self._value = self.probe.lag()
            except BrokerError as exc:  # e.g. the group coordinator is still loading: keep the last value
                log.warning("learner lag unavailable: %s", exc)
            self._at = now
        return self._value


class KafkaSideInputs:
    def __init__(self, bootstrap: str, *, learner_group: str) -> None:
        self.bootstrap = bootstrap
        self.learner_group = learner_group
        self._closers: list[Callable[[], None]] = []

    def tasks(self) -> TaskTable:
        table: GlobalTable[TaskPublished] = GlobalTable(
            self.bootstrap, TASKS.name, TaskPublished, key=lambda t: t.task_id
        )
        self._closers.append(table.close)
        table.start()
        return table

    def policy(self) -> PolicySource | None:
        follower = TopicFollower(self.bootstrap, POLICY.name, PolicyPublished)
        self._closers.append(follower.close)
        return follower

    def reviews(self, run_id: str | None = None) -> ReviewTable:
        reviews = ReviewFollower(self.bootstrap, run_id)
        self._closers.append(reviews.close)
        return reviews

    def learner_lag(self) -> Callable[[bool], int]:
        probe = LagProbe(self.bootstrap, self.learner_group, EXPERIENCES.name)
        self._closers.append(probe.close)
        return CachedLag(probe)

    def close(self) -> None:
        closers, self._closers = self._closers, []
        for close in closers:
            try:
                close()
            except Exception:  # a failing close must not hide the others
                log.exception("closing a side input failed")
