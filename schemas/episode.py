"""The episode aggregate: how each turn of a multi-turn episode ended, and the feedback it produced.

An episode (one sample of a group whose request allows ``max_turns > 1``) is a conversation: the model
writes code, the sandbox runs it, and the episode processor decides from the execution and the task's
*visible* cases whether the episode goes on. ``TurnEnded`` is that decision, one per turn: ``continue``
carries the feedback the next turn sees (the failing visible cases, capped and neutralised, derived by
a versioned pure function so an audit re-derives it byte for byte) and the tokens the conversation has
so far; ``final`` says the turn's code is what the episode is scored on. Keyed by ``group_id`` like
every event of a group, so a group's turns stay on one partition.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from schemas.base import Event, FrozenModel
from schemas.rollout import SamplingParams
from schemas.task import MAX_TURNS_LIMIT, Split

#: why a failing visible case failed, as the feedback tells it
CaseFailure = Literal["wrong", "not_literal", "error", "timeout", "missing"]

#: why a turn ended the episode (``failed`` on a ``continue``: some visible case did not pass)
TurnReason = Literal["failed", "passed", "max_turns", "no_visible_cases", "infra_error"]


class FailedCase(FrozenModel):
    """One visible case the turn's code did not pass. Every text field is capped and neutralised (see
    ``streams/episode/feedback.py``): no control character, escape sequence or chat-template token."""

    index: int = Field(ge=0, description="index of the case among the task's visible cases")
    call: str = Field(description="the call, e.g. add(1, 2)")
    expected: str = Field(description="the expected value's literal")
    failure: CaseFailure
    returned: str | None = Field(default=None, description="repr of what the code returned")
    error: str | None = Field(default=None, description="the exception (type: message) or limit hit")


class Feedback(FrozenModel):
    """What the next turn is told about one execution, derived from its visible cases only."""

    version: str = Field(description="the feedback function's version, e.g. v1 (v1+<hash>: non-default caps)")
    passed: int = Field(ge=0, description="visible cases passed")
    total: int = Field(ge=0, description="visible cases")
    cases: tuple[FailedCase, ...] = ()
    #: failing visible cases beyond the cap, counted but not shown
    omitted: int = Field(default=0, ge=0)
    #: a run-level failure that bears on the visible cases (load error, timeout, memory), or None
    run: str | None = None
    #: captured output, capped and neutralised; None when withheld (hidden cases ran in the same process)
    stdout: str | None = None
    stderr: str | None = None
    #: the whole feedback as the model reads it (what the generator renders into the next prompt)
    text: str


class TurnEnded(Event):
    """How one turn of an episode ended: the episode goes on (with feedback) or this turn is final."""

    event_type: ClassVar[str] = "rlstream.episode.turn_ended"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[1] = 1
    sample_id: str = Field(min_length=1, description="the episode")
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    split: Split = "train"
    turn: int = Field(ge=0, lt=MAX_TURNS_LIMIT)
    max_turns: int = Field(ge=2, le=MAX_TURNS_LIMIT)
    outcome: Literal["continue", "final"]
    reason: TurnReason
    #: visible cases the turn's code passed, of how many
    visible_passed: int = Field(ge=0)
    visible_total: int = Field(ge=0)
    generation_event_id: str
    execution_event_id: str
    #: the policy version the turn was sampled with
    policy_version: int = Field(ge=0)
    feedback: Feedback | None = Field(default=None, description="what the next turn is told (continue only)")
    # -- what the next turn continues from (continue only) ----------------------------------------
    sample_index: int = Field(default=0, ge=0)
    #: the task's prompt (visible content only) and entry point, as the first turn's request had them
    prompt: str = ""
    entry_point: str = ""
    sampling: SamplingParams = SamplingParams()
    #: the conversation so far: the turn's prompt tokens and the tokens it generated
    context_token_ids: tuple[int, ...] = ()

    @model_validator(mode="after")
    def _feedback_iff_continue(self) -> TurnEnded:
        if (self.outcome == "continue") != (self.feedback is not None):
            raise ValueError("a turn that continues carries feedback, a final one none")
        if self.outcome == "continue" and self.turn + 1 >= self.max_turns:
            raise ValueError(f"turn {self.turn} is the last of {self.max_turns}: it cannot continue")
        return self

    def identity(self) -> tuple[str, ...]:
        return (self.sample_id, str(self.turn))
