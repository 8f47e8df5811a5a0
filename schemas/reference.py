"""The reference run of a task: what the sandbox observed running the task's reference solution in one
backend, as the reward processor used it.

The efficiency part of a reward compares a program's runtime with its task's reference run. Timings
differ from run to run, so the run a reward was scored against is published once (the first time a
reward partition needs it) and each ``RewardScored`` names it by event id: re-scoring from the log
alone then reproduces the recorded reward exactly. The noise filter does the same with the reference's
runs of a probe plan (its answers on inputs the task never showed), named on each ``NoiseVerdict``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, field_validator

from schemas.base import Event, content_hash, derived_once, make_event_id, remembered
from schemas.rollout import SandboxExecuted, SandboxExecutedV1, SandboxExecutedV2, SandboxExecutedV3


def _written(value: Any) -> Any:
    """A run as a reference's run is kept: in the version it is written in, without what the host
    notes of single calls for a sample's judgement (``SandboxExecuted`` v6's ``output_flood`` and
    ``thread_recursion``, v7's ``deep_recursion``: a reference's runs are written as v3, which has none
    of them, and the filter reads only the answers and times of a reference's calls)."""
    if isinstance(value, SandboxExecuted):
        value = value.model_copy(
            update={"output_flood": None, "thread_recursion": (), "deep_recursion": None}
        )
    return value.as_written() if isinstance(value, SandboxExecutedV1) else value


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


class ReferenceExecutedV2(ReferenceExecutedV1):
    """One run of a task's reference solution, holding a v2 execution (see :class:`ReferenceExecutedV1`).

    A body that says nothing v1 could not say (a v1 body read back, upcast) keeps the id of its v1
    form, so the rewards that name it still find it.
    """

    version: ClassVar[int] = 2

    schema_version: Literal[2] = 2  # type: ignore[assignment]
    execution: SandboxExecutedV2  # type: ignore[assignment]

    def _says_only_v1(self) -> bool:
        x = self.execution
        return (
            x.load_s is None
            and x.active_s is None
            and x.load_cpu_s is None
            and x.active_cpu_s is None
            and len(x.violations) <= 1
        )

    def identity(self) -> tuple[str, ...]:
        if not self._says_only_v1():
            return super().identity()
        body = self.model_dump(mode="json")
        body["schema_version"] = body["execution"]["schema_version"] = 1
        for name in ("violations", "load_s", "active_s"):
            del body["execution"][name]
        return (content_hash(body),)

    @remembered
    def event_id(self, attempt: int = 0) -> str:
        if not self._says_only_v1():
            return super().event_id(attempt)
        return make_event_id(f"{self.event_type}.v1", *self.identity(), attempt=attempt)


class ReferenceExecutedV3(ReferenceExecutedV2):
    """One run of a task's reference solution (``execution.sample_id`` is ``<task_id>#reference``), on the
    task's own cases or, when ``execution.probe`` names a probe plan, on that plan's inputs; ``reruns``
    are further runs of the same job in fresh sandboxes (an input on which they disagree says nothing).

    A body that says nothing v2 could not say (no probe plan, no re-runs: a v2 body read back, upcast)
    keeps the id of its v2 form, so the rewards that name it still find it.
    """

    version: ClassVar[int] = 3

    schema_version: Literal[3] = 3  # type: ignore[assignment]
    #: a reference runs as a one-turn program: its runs are written as v3 (no turn)
    execution: SandboxExecutedV3  # type: ignore[assignment]
    reruns: tuple[SandboxExecutedV3, ...] = Field(
        default=(), description="further runs of the same job, each in a fresh sandbox"
    )

    @field_validator("execution", mode="before")
    @classmethod
    def _as_written(cls, value: Any) -> Any:
        # a run read as the newest version is kept in the version it is written in
        return _written(value)

    @field_validator("reruns", mode="before")
    @classmethod
    def _each_as_written(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return tuple(_written(v) for v in value)
        return value

    def _as_v2(self) -> ReferenceExecutedV2 | None:
        if self.reruns or self.execution.probe is not None:
            return None
        body = self.model_dump(mode="json")
        del body["reruns"], body["execution"]["probe"]
        body["schema_version"] = body["execution"]["schema_version"] = 2
        return ReferenceExecutedV2.model_validate(body)

    def identity(self) -> tuple[str, ...]:
        v2 = self._as_v2()
        return v2.identity() if v2 is not None else Event.identity(self)

    @remembered
    def event_id(self, attempt: int = 0) -> str:
        v2 = self._as_v2()
        if v2 is not None:
            return v2.event_id(attempt)
        return make_event_id(self.ce_type(), *self.identity(), attempt=attempt)


class ReferenceExecuted(ReferenceExecutedV3):
    """The reference's runs of a job (see :class:`ReferenceExecutedV3`) and, for a probe plan whose inputs
    a plain run left unanswered (too slow for it), ``memoised``: runs of the same plan by the reference
    with its recursive functions memoised (``streams/probe/memo.py``). Those answer only where no plain
    run did, and count only where they answered every input a plain run settled as it did; an input
    only they answer is never one a program must settle (a program as slow as the reference may hang
    there).

    A body without memoised runs (a v3 body read back, upcast) keeps the id of its v3 form, so the
    verdicts that name it still find it.
    """

    version: ClassVar[int] = 4

    schema_version: Literal[4] = 4  # type: ignore[assignment]
    memoised: tuple[SandboxExecutedV3, ...] = Field(
        default=(),
        description="runs of the same plan by the reference with its recursive functions memoised, each "
        "in a fresh sandbox (empty: none were needed or possible)",
    )

    @field_validator("memoised", mode="before")
    @classmethod
    def _memoised_as_written(cls, value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return tuple(_written(v) for v in value)
        return value

    @derived_once
    def _as_v3(self) -> ReferenceExecutedV3 | None:
        # once per object: its id and its written form (each a dump and a validation of every run's
        # cases) were derived from it separately, and the filter asks for both
        if self.memoised:
            return None
        body = self.model_dump(mode="json")
        del body["memoised"]
        body["schema_version"] = 3
        return ReferenceExecutedV3.model_validate(body)

    def previous_version(self) -> Event | None:
        # without memoised runs it is written as v3: the same bytes and id as before v4
        return self._as_v3()

    def identity(self) -> tuple[str, ...]:
        v3 = self._as_v3()
        return v3.identity() if v3 is not None else Event.identity(self)

    @remembered
    def event_id(self, attempt: int = 0) -> str:
        v3 = self._as_v3()
        if v3 is not None:
            return v3.event_id(attempt)
        return make_event_id(self.ce_type(), *self.identity(), attempt=attempt)
