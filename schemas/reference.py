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

from schemas.base import Event
from schemas.rollout import SandboxExecuted


class ReferenceExecuted(Event):
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
    execution: SandboxExecuted
