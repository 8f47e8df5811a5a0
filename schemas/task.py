"""The task aggregate: what upstream systems publish on ``rl.tasks``."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import ConfigDict, Field, StringConstraints, field_validator, model_validator

from schemas import pyast
from schemas.base import Event, FrozenModel
from schemas.literals import without_long_ints

TASK_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$"


def _check_literal(text: str, what: str) -> str:
    try:
        # an integer past Python's int/str conversion limit is a literal too (kept as its digits)
        pyast.literal_eval(without_long_ints(text))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as exc:
        raise ValueError(f"{what} is not a plain Python literal: {exc.__class__.__name__}") from None
    return text


class TestCase(FrozenModel):
    """One call of the entry point: the argument tuple and the expected value, both as Python literals."""

    __test__ = False  # not a pytest class

    input: str = Field(description="Python literal of the argument tuple, e.g. '(1, [2, 3])'")
    output: str = Field(description="Python literal of the expected return value")

    @field_validator("input")
    @classmethod
    def _input_is_tuple(cls, v: str) -> str:
        _check_literal(v, "input")
        if not isinstance(pyast.literal_eval(without_long_ints(v)), tuple):
            raise ValueError("input must be a tuple literal of the arguments, e.g. '(3,)' for one argument")
        return v

    @field_validator("output")
    @classmethod
    def _output_is_literal(cls, v: str) -> str:
        return _check_literal(v, "output")


class Limits(FrozenModel):
    timeout_s: float = Field(default=10.0, gt=0, le=600)
    memory_mb: int = Field(default=256, ge=16, le=16384)


class TaskPublishedV1(Event):
    """The minimum task format of the first contract: cases, or a HumanEval-style check."""

    event_type: ClassVar[str] = "rlstream.task.published"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "task_id"

    schema_version: Literal[1] = 1
    task_id: str = Field(pattern=TASK_ID_PATTERN)
    prompt: str = Field(min_length=1)
    entry_point: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    tests: tuple[TestCase, ...] = ()
    check: str | None = None
    reference: str | None = None


Split = Literal["train", "eval"]


class TaskPublishedV2(Event):
    """A coding task: the prompt the model completes and the cases that judge it.

    Version 2 adds hidden cases (never shown in prompts), tenant, priority and limits.
    """

    event_type: ClassVar[str] = "rlstream.task.published"
    version: ClassVar[int] = 2
    key_field: ClassVar[str] = "task_id"

    schema_version: Literal[2] = 2
    task_id: str = Field(pattern=TASK_ID_PATTERN, description="stable id of the task, the Kafka key")
    prompt: str = Field(min_length=1, description="function signature and docstring the model completes")
    entry_point: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", description="name of the function")
    tests: tuple[TestCase, ...] = Field(default=(), description="visible cases (may appear in prompts)")
    hidden_tests: tuple[TestCase, ...] = Field(default=(), description="held-out cases, never in prompts")
    check: str | None = Field(default=None, description="HumanEval-style check(candidate) source")
    reference: str | None = Field(default=None, description="a reference solution")
    tenant: str = Field(default="default", min_length=1, max_length=100)
    priority: int = Field(default=0, ge=-100, le=100)
    limits: Limits = Limits()
    source: str | None = Field(default=None, description="where the task came from, e.g. humaneval")

    @model_validator(mode="after")
    def _has_a_judge(self) -> TaskPublishedV2:
        if not self.tests and not self.hidden_tests and not self.check:
            raise ValueError("a task needs 'tests', 'hidden_tests' or 'check': nothing could judge it")
        return self

    def identity(self) -> tuple[str, ...]:
        # a re-publication of the same content is the same fact; changed content is a new one
        return (self.task_id, *super().identity())


class TaskPublishedV3(TaskPublishedV2):
    """A coding task: the prompt the model completes, the cases that judge it, and its split.

    Version 3 adds ``split`` (v2 tasks are upcast as ``train``): a ``train`` task is scheduled for
    training; an ``eval`` task is held out - never trained on, never steering the curriculum, never
    shown with feedback from its hidden cases - and only sampled in evaluation rounds under an exact
    policy version.
    """

    version: ClassVar[int] = 3

    # the exported v3 schema keeps the name it was published under
    model_config = ConfigDict(title="TaskPublished")

    schema_version: Literal[3] = 3  # type: ignore[assignment]
    split: Split = Field(default="train", description="train: trained on; eval: held out, only evaluated")


#: the most turns an episode may take (each turn is a generation, an execution and its feedback)
MAX_TURNS_LIMIT = 16


class TaskPublishedV4(TaskPublishedV3):
    """A coding task: the prompt the model completes, the cases that judge it, its split, and how many
    turns an episode of it may take.

    Version 4 adds ``max_turns``: the model may revise its program from the feedback of its visible
    cases up to that many times in all (1: one shot). ``None`` (every v1-v3 task) leaves it to the
    run's setting. A task that does not set it is written as v3.
    """

    version: ClassVar[int] = 4

    # the exported v4 schema keeps the name it was published under
    model_config = ConfigDict(title="TaskPublished")

    schema_version: Literal[4] = 4  # type: ignore[assignment]
    max_turns: int | None = Field(
        default=None,
        ge=1,
        le=MAX_TURNS_LIMIT,
        description="turns an episode may take (1: one shot); null: the run's setting",
    )

    def previous_version(self) -> TaskPublishedV3 | None:
        return self._as_version(TaskPublishedV3, {"max_turns": None})


#: the highest difficulty level a task may carry (1 is the easiest)
MAX_DIFFICULTY = 100
TAG_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,39}$"


class TaskPublishedV5(TaskPublishedV4):
    """A coding task: the prompt the model completes, the cases that judge it, its split, how many
    turns an episode of it may take, and where it sits on a difficulty gradient.

    Version 5 adds ``difficulty`` (a level, 1 the easiest: the level-aware curriculum trains a level
    before the next) and ``tags`` (what a task exercises, e.g. ``slicing``, ``loop``). v1-v4 tasks are
    upcast with no level and no tags; a task without a level is scheduled as it always was. A task
    that sets neither is written as v4 (or v3, see :class:`TaskPublishedV4`).
    """

    version: ClassVar[int] = 5

    schema_version: Literal[5] = 5  # type: ignore[assignment]
    difficulty: int | None = Field(
        default=None,
        ge=1,
        le=MAX_DIFFICULTY,
        description="difficulty level, 1 the easiest (null: not graded)",
    )
    tags: tuple[Annotated[str, StringConstraints(pattern=TAG_PATTERN)], ...] = Field(
        default=(), max_length=16, description="what the task exercises, lowercase words, e.g. slicing"
    )

    def previous_version(self) -> TaskPublishedV4 | None:
        return self._as_version(TaskPublishedV4, {"difficulty": None, "tags": ()})


class FloatTolerance(FrozenModel):
    """How far a float answer may lie from the expected one, as the task's own check states it:
    ``abs(candidate(x) - y) < 1e-6`` is ``abs_tol=1e-6``; ``math.isclose(candidate(x), y, rel_tol=r,
    abs_tol=a)`` is ``rel_tol=r`` (``isclose``'s own 1e-9 where it names none) and ``abs_tol=a``. A
    number that matches by the reward function's own rules must also lie within it: ``|got - want| <=
    max(rel_tol * max(|got|, |want|), abs_tol)``."""

    rel_tol: float = Field(default=0.0, ge=0.0, le=1.0)
    abs_tol: float = Field(default=0.0, ge=0.0)


class TaskPublished(TaskPublishedV5):
    """A coding task: the prompt the model completes, the cases that judge it, its split, how many
    turns an episode of it may take, where it sits on a difficulty gradient, and the float tolerance
    its check states.

    Version 6 adds ``tolerance``: the tolerance the task's check states for its answers (read from the
    check at ingest: ``producers/ingest/tolerance.py``), which bounds how its answers are compared, in
    its cases and in its probe alike: a number must lie within it as well as match by the reward
    function's own rules. ``None`` (every v1-v5 task) leaves the comparison to the reward function. A
    task that states none is written as v5 (or older, see :class:`TaskPublishedV5`).
    """

    version: ClassVar[int] = 6

    schema_version: Literal[6] = 6  # type: ignore[assignment]
    tolerance: FloatTolerance | None = Field(
        default=None,
        description="the tolerance the task's check states, bounding its answers' comparison (null: none)",
    )

    def previous_version(self) -> TaskPublishedV5 | None:
        return self._as_version(TaskPublishedV5, {"tolerance": None})
