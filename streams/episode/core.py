"""The episode step's domain core: one turn's generation and execution in, how the turn ended out.

Pure: no Kafka. :func:`end_turn` decides whether the episode goes on (``continue``, with the feedback
the next turn sees and the conversation's tokens so far) or this turn's code is final, and why:

* ``infra_error``: the sandbox could not run the code; nothing can be told (the filter masks it);
* ``no_visible_cases``: nothing may be told (a task judged by hidden cases or ``check`` alone);
* ``passed``: every visible case passed; the episode is scored now, hidden cases included;
* ``max_turns``: no turn is left;
* ``failed`` (``continue``): a visible case failed and a turn is left.

:class:`PendingTurn` is what the episode step keeps of a turn while it waits for the other half
(generation or execution, in either order); it lives from the first half's arrival to the decision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from infra.runtime.state import event_from_state
from schemas.episode import TurnEnded, TurnReason
from schemas.rollout import CodeGenerated, SandboxExecuted
from schemas.task import TaskPublished
from streams.episode.config import FeedbackConfig
from streams.episode.feedback import derive_feedback, visible_results
from streams.reward.literals import CompareOptions

#: how feedback v1 compares a returned value with the expected one (pinned: the feedback of a turn
#: must re-derive identically whatever the reward functions' comparison settings become)
FEEDBACK_COMPARE = CompareOptions(
    int_float="numeric", float_rel_tol=1e-9, float_abs_tol=1e-6, nan_equal=True, max_repr_chars=1_000_000
)


def turn_key(sample_id: str, turn: int) -> str:
    return f"{sample_id}#{turn}"


def is_episode(event: CodeGenerated | SandboxExecuted) -> bool:
    """Whether the event belongs to an episode that may take more than one turn."""
    return event.max_turns > 1


@dataclass
class PendingTurn:
    """One turn waiting for its generation or its execution (run 0)."""

    generation: CodeGenerated | None = None
    generation_event_id: str | None = None
    execution: SandboxExecuted | None = None
    execution_event_id: str | None = None

    @property
    def complete(self) -> bool:
        return self.generation is not None and self.execution is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "generation": self.generation.model_dump(mode="json") if self.generation else None,
            "generation_event_id": self.generation_event_id,
            "execution": self.execution.model_dump(mode="json") if self.execution else None,
            "execution_event_id": self.execution_event_id,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> PendingTurn:
        gen, run = raw.get("generation"), raw.get("execution")
        return cls(
            # a turn that waited across an upgrade holds events of an older version: lifted when read
            generation=event_from_state(CodeGenerated, gen) if gen else None,
            generation_event_id=raw.get("generation_event_id"),
            execution=event_from_state(SandboxExecuted, run) if run else None,
            execution_event_id=raw.get("execution_event_id"),
        )


def end_turn(
    task: TaskPublished,
    generation: CodeGenerated,
    execution: SandboxExecuted,
    *,
    generation_event_id: str,
    execution_event_id: str,
    feedback: FeedbackConfig,
) -> TurnEnded:
    """How the turn of ``generation`` ended, judged from its execution and the task's visible cases."""
    results = visible_results(task, execution, FEEDBACK_COMPARE) if task.tests else []
    passed = sum(1 for _, _, failure in results if failure is None)
    told = None
    reason: TurnReason
    if execution.infra_error:
        reason = "infra_error"
    elif not task.tests:
        reason = "no_visible_cases"
    else:
        told = derive_feedback(task, execution, FEEDBACK_COMPARE, feedback)
        if told is None:
            reason = "passed"
        elif generation.turn + 1 >= generation.max_turns:
            reason, told = "max_turns", None
        else:
            reason = "failed"
    going_on = told is not None
    return TurnEnded(
        sample_id=generation.sample_id,
        group_id=generation.group_id,
        task_id=generation.task_id,
        split=generation.split,
        turn=generation.turn,
        max_turns=generation.max_turns,
        outcome="continue" if going_on else "final",
        reason=reason,
        visible_passed=passed,
        visible_total=len(results),
        generation_event_id=generation_event_id,
        execution_event_id=execution_event_id,
        policy_version=generation.policy_version,
        feedback=told,
        sample_index=generation.sample_index,
        prompt=task.prompt if going_on else "",
        entry_point=task.entry_point if going_on else "",
        sampling=generation.sampling,
        context_token_ids=(generation.prompt_token_ids + generation.completion_token_ids) if going_on else (),
    )
