"""The curriculum aggregate: where on the difficulty gradient a run trains, and when that changed."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from schemas.base import Event

LevelReason = Literal["start", "passed", "exhausted", "unmeasured"]


class CurriculumLevelChanged(Event):
    """The scheduler's level-aware curriculum moved a run's training to ``to_level``.

    Training draws from graded tasks of levels up to the current one. ``reason``: ``start`` (the
    run's easiest level), ``passed`` (held-out pass@1 of ``from_level`` under ``policy_version``
    reached ``threshold``), ``exhausted`` (every task of the levels reached had all its groups) or
    ``unmeasured`` (``from_level`` has no held-out task, so nothing could say it was learned).
    """

    event_type: ClassVar[str] = "rlstream.curriculum.level_changed"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "run_id"

    schema_version: Literal[1] = 1
    run_id: str = Field(min_length=1)
    from_level: int | None = Field(default=None, ge=1, description="null: the run's first level")
    to_level: int = Field(ge=1)
    reason: LevelReason
    #: the evaluated version whose held-out results decided it (reason ``passed``)
    policy_version: int | None = Field(default=None, ge=0)
    pass_at_1: float | None = Field(default=None, ge=0.0, le=1.0)
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    #: held-out tasks and samples of ``from_level`` the pass@1 is over
    tasks: int = Field(default=0, ge=0)
    samples: int = Field(default=0, ge=0)

    def identity(self) -> tuple[str, ...]:
        # a move is its run, where it came from and went, and why (a run may restart at an easier level
        # it read late, then later enter the level it first started at, as a different fact)
        return (self.run_id, str(self.from_level), str(self.to_level), self.reason)
