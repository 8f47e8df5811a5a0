"""The reference run of a task: what the sandbox observed running the task's reference solution in one
backend, as the reward processor used it.

The efficiency part of a reward compares a program's runtime with its task's reference run. Timings
differ from run to run, so the run a reward was scored against is published once (the first time a
reward partition needs it) and each ``RewardScored`` names it by event id: re-scoring from the log
alone then reproduces the recorded reward exactly.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from schemas.base import Event, content_hash, make_event_id
from schemas.rollout import SandboxExecuted, SandboxExecutedV1


class ReferenceExecutedV1(Event):
    """One run of a task's reference solution (``execution.sample_id`` is ``<task_id>#reference``).

    Its id is a hash of the whole body: two runs with different timings are different facts, the same
    run published twice is one.
    """

    event_type: ClassVar[str] = "rlstream.reference.executed"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "task_id"

    schema_version: Literal[1] = 1
    task_id: str = Field(min_length=1)
    task_event_id: str = Field(min_length=1, description="event id of the TaskPublished version it ran")
    backend: Literal["wasm", "container", "subprocess"]
    execution: SandboxExecutedV1


class ReferenceExecuted(ReferenceExecutedV1):
    """One run of a task's reference solution, holding a v2 execution (see :class:`ReferenceExecutedV1`).

    A body that says nothing v1 could not say (a v1 body read back, upcast) keeps the id of its v1
    form, so the rewards that name it still find it.
    """

    version: ClassVar[int] = 2

    schema_version: Literal[2] = 2  # type: ignore[assignment]
    execution: SandboxExecuted

    def _says_only_v1(self) -> bool:
        x = self.execution
        return x.load_s is None and x.active_s is None and len(x.violations) <= 1

    def identity(self) -> tuple[str, ...]:
        if not self._says_only_v1():
            return super().identity()
        body = self.model_dump(mode="json")
        body["schema_version"] = body["execution"]["schema_version"] = 1
        for name in ("violations", "load_s", "active_s"):
            del body["execution"][name]
        return (content_hash(body),)

    def event_id(self, attempt: int = 0) -> str:
        if not self._says_only_v1():
            return super().event_id(attempt)
        return make_event_id(f"{self.event_type}.v1", *self.identity(), attempt=attempt)
