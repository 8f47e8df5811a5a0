"""The episode step: generations + executions -> ``rl.turns``, one TurnEnded per turn of every episode
that may take more than one turn (one-turn samples pass by untouched: their log is a one-shot run's).

Inputs are co-partitioned by ``group_id``: a turn's generation and its execution (run 0; re-runs are the
filter's) arrive on the same partition, in either order. Whichever arrives second completes the turn;
the decision (:func:`streams.episode.core.end_turn`) is emitted with the state change that drops the
pending turn and marks it ended, so a re-delivered record never ends it twice. Killed at any point, the
step either has not ended the turn (the records are read again and end it once) or has: on the
transactional runtime the TurnEnded, the state and the offsets commit together; on Faust (at least
once) a restart may write the same TurnEnded again, under the same id (``(sample_id, turn)``), which
every reader ignores. A turn is neither lost nor repeated.

This is also where an episode's state lives between turns: nowhere else. The next turn's generator
reads everything it needs from the TurnEnded (the conversation's tokens so far, the feedback, the
task's prompt and sampling), so the generator stays stateless and a crash between turns loses nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from infra.runtime.port import Emit, Incoming, PoisonRecord
from infra.runtime.state import Kind, Marker, State
from schemas.rollout import CodeGenerated, SandboxExecuted
from schemas.task import TaskPublished
from schemas.topics import EXECUTIONS, GENERATIONS, TURNS
from streams.episode.config import FeedbackConfig
from streams.episode.core import PendingTurn, end_turn, is_episode, turn_key

INPUT_TOPICS = (GENERATIONS.name, EXECUTIONS.name)
#: where it writes (the access plan grants exactly these; the host refuses any other)
OUTPUT_TOPICS = (TURNS.name,)

#: a turn waiting for its other half (key: ``<sample id>#<turn>``), from the first half's arrival to the
#: turn's end
TURN = Kind("turn", encode=PendingTurn.to_json, decode=PendingTurn.from_json)
#: a turn already ended: its re-delivered records are ignored
ENDED = Marker("ended")
KINDS = (TURN, ENDED)


class TaskLookup(Protocol):
    def get(self, key: str) -> TaskPublished | None: ...


class EpisodeAgent:
    def __init__(self, tasks: TaskLookup, feedback: FeedbackConfig) -> None:
        self.tasks = tasks
        self.feedback = feedback

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        out: list[Emit] = []
        for msg in batch:
            event, p = msg.event, msg.partition
            if isinstance(event, SandboxExecuted) and event.run_index != 0:
                continue
            if not isinstance(event, CodeGenerated | SandboxExecuted) or not is_episode(event):
                continue
            key = turn_key(event.sample_id, event.turn)
            if state.marked(p, ENDED, key):
                continue  # a re-delivered record of a turn already ended
            pending = state.get(p, TURN, key) or PendingTurn()
            if isinstance(event, CodeGenerated):
                pending.generation, pending.generation_event_id = event, msg.envelope.id
            else:
                pending.execution, pending.execution_event_id = event, msg.envelope.id
            if not pending.complete:
                state.put(p, TURN, key, pending)
                continue
            assert pending.generation is not None and pending.execution is not None
            task = self.tasks.get(event.task_id)
            if task is None:
                raise PoisonRecord(f"unknown task {event.task_id!r}: no TaskPublished on rl.tasks")
            ended = end_turn(
                task,
                pending.generation,
                pending.execution,
                generation_event_id=pending.generation_event_id or "",
                execution_event_id=pending.execution_event_id or "",
                feedback=self.feedback,
            )
            state.delete(p, TURN, key)
            state.mark(p, ENDED, key)
            out.append(Emit(ended, causation_id=msg.envelope.id))
        return out
