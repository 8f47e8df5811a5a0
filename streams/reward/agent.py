"""The reward processor: executions -> rewards, a thin shell over the registered reward function.

Inputs are co-partitioned by ``group_id``: a sample's generation (for its source: quality and
security read the code) and its executions arrive on the same partition number. Only run 0 is
scored; re-runs exist for the noise filter's flakiness check. Whichever of generation and execution
arrives second completes the pair; the pair is dropped from the state once scored, and a marker
keeps a re-delivered record from scoring twice (the event id would be the same anyway).

An episode of several turns is scored once, on its final turn: each turn's code and execution wait
in the state until the episode step's TurnEnded (``rl.turns``, co-partitioned too) names the final
turn, which is then scored with the episode reward function (a cost per turn beyond the first); the
earlier turns are dropped with it.

The task's reference run (the efficiency baseline) is kept in the state of each partition that needs
it and published as ``ReferenceExecuted`` in the same transaction as the first reward scored against
it there; every reward names it by id. A restart reuses the stored run instead of timing a new one, so
every reward on the log can be re-scored exactly from the log alone. The stored runs are a cache with a
lifetime (:class:`~infra.runtime.state.Cached`): at most ``references_kept`` per partition (the least
recently used go first), and none kept ``grace_s`` of stream time after its last use, so state and
restore time stay flat however many tasks a run streams through. A task whose run was dropped and that
comes back is timed again and its new run published before the rewards that name it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from infra.runtime.port import Emit, Incoming, PoisonRecord
from infra.runtime.state import Cached, Kind, Marker, State
from schemas.episode import TurnEnded
from schemas.reference import ReferenceExecuted
from schemas.rollout import CodeGenerated, SandboxExecuted
from schemas.task import TaskPublished
from schemas.topics import EXECUTIONS, GENERATIONS, REFERENCES, REWARDS, TURNS
from streams.reward.function import RewardFunction

INPUT_TOPICS = (GENERATIONS.name, EXECUTIONS.name, TURNS.name)
#: where it writes: rewards, and the reference runs they were compared with
OUTPUT_TOPICS = (REWARDS.name, REFERENCES.name)

#: a sample's code waiting for its run-0 execution, and the execution waiting for its code (key: sample
#: id; ``<sample id>#<turn>`` for a turn of an episode, kept until the episode's final turn is known)
CODE = Kind("code", str)
EXEC = Kind("exec", SandboxExecuted)
#: an episode's final turn, once its TurnEnded said so (key: sample id)
FINAL = Kind("final", int)
#: a sample already scored: its re-delivered records are ignored
SCORED = Marker("scored")
#: the reference run this partition scores a task against (key: ``<task event id>:<backend>``)
REF = Cached("ref", ReferenceExecuted)
#: reference runs a partition keeps by default (``RLSTREAM_PIPELINE__REFERENCE_CACHE_ENTRIES``)
REFERENCES_KEPT = 256
KINDS = (CODE, EXEC, FINAL, SCORED, REF)

#: (task, backend) -> the reference solution's execution in that backend (None: no reference)
ReferenceRunner = Callable[[TaskPublished, str], SandboxExecuted | None]


class TaskLookup(Protocol):
    def get(self, key: str) -> TaskPublished | None: ...


class RewardAgent:
    def __init__(
        self,
        reward_fn: RewardFunction,
        tasks: TaskLookup,
        reference: ReferenceRunner,
        *,
        episode_fn: RewardFunction | None = None,
        references_kept: int = REFERENCES_KEPT,
    ) -> None:
        self.reward_fn = reward_fn
        #: reference runs kept in the state of each partition (the least recently used go first)
        self.references_kept = references_kept
        #: what episodes of several turns are scored with (their final turn, a cost per extra turn)
        self.episode_fn = episode_fn or reward_fn
        self.tasks = tasks
        self.reference = reference

    def _episode(self, msg: Incoming, state: State) -> tuple[Incoming, str, SandboxExecuted] | None:
        """Keep a turn of an episode; the final turn's pair once all of it is here."""
        event, p = msg.event, msg.partition
        sid = getattr(event, "sample_id", "")
        if state.marked(p, SCORED, sid):
            return None
        if isinstance(event, CodeGenerated):
            state.put(p, CODE, f"{sid}#{event.turn}", event.code)
        elif isinstance(event, SandboxExecuted):
            state.put(p, EXEC, f"{sid}#{event.turn}", event)
        elif isinstance(event, TurnEnded) and event.outcome == "final":
            state.put(p, FINAL, sid, event.turn)
        final = state.get(p, FINAL, sid)
        if final is None:
            return None
        code, execution = state.get(p, CODE, f"{sid}#{final}"), state.get(p, EXEC, f"{sid}#{final}")
        if code is None or execution is None:
            return None
        for turn in range(final + 1):
            state.delete(p, CODE, f"{sid}#{turn}")
            state.delete(p, EXEC, f"{sid}#{turn}")
        state.delete(p, FINAL, sid)
        return msg, code, execution

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        ready: list[tuple[Incoming, str, SandboxExecuted]] = []
        #: single-turn programs stored to wait for their run
        waiting: list[str] = []
        for msg in batch:
            event, p = msg.event, msg.partition
            if isinstance(event, TurnEnded) or (
                isinstance(event, CodeGenerated | SandboxExecuted) and event.max_turns > 1
            ):
                if isinstance(event, SandboxExecuted) and event.run_index != 0:
                    continue
                found = self._episode(msg, state)
                if found is not None:
                    ready.append(found)
                continue
            if isinstance(event, CodeGenerated):
                sid = event.sample_id
                if state.marked(p, SCORED, sid):
                    continue
                pending = state.get(p, EXEC, sid)
                if pending is not None:
                    ready.append((msg, event.code, pending))
                else:
                    state.put(p, CODE, sid, event.code)
                    waiting.append(event.code)
            elif isinstance(event, SandboxExecuted) and event.run_index == 0:
                sid = event.sample_id
                if state.marked(p, SCORED, sid):
                    continue
                code = state.get(p, CODE, sid)
                if code is not None:
                    ready.append((msg, code, event))
                else:
                    state.put(p, EXEC, sid, event)
        # one lint process for the whole batch instead of one per sample; a program that waits for its
        # run is linted now, while the sandbox runs it, so that its lint is no part of the time from
        # its run to its reward (the findings are the same: the linter's cache answers later)
        for fn, episodes in ((self.reward_fn, False), (self.episode_fn, True)):
            codes = [code for _, code, x in ready if (x.max_turns > 1) == episodes]
            early = [] if episodes else waiting
            warm = getattr(getattr(fn, "linter", None), "warm", None)
            if callable(warm) and (len(codes) > 1 or early):
                warm(codes + early)
        out: list[Emit] = []
        for msg, code, execution in ready:
            task = self.tasks.get(execution.task_id)
            if task is None:
                raise PoisonRecord(f"unknown task {execution.task_id!r}: no TaskPublished on rl.tasks")
            p, sid = msg.partition, execution.sample_id
            reference = None
            if not execution.infra_error:
                reference, first_use = self._reference(task, execution.backend, p, state)
                if reference is not None and first_use:
                    out.append(Emit(reference, causation_id=msg.envelope.id))
            scorer = self.episode_fn if execution.max_turns > 1 else self.reward_fn
            reward = scorer.scored_event(
                task,
                code,
                execution,
                reference.execution if reference else None,
                reference_event_id=reference.event_id() if reference else None,
            )
            state.delete(p, CODE, sid)
            state.delete(p, EXEC, sid)
            state.mark(p, SCORED, sid)
            out.append(Emit(reward, causation_id=msg.envelope.id))
        return out

    def _reference(
        self, task: TaskPublished, backend: str, p: int, state: State
    ) -> tuple[ReferenceExecuted | None, bool]:
        """The reference run this partition scores ``task`` against in ``backend``, and whether this is
        its first use here (then it must be published)."""
        key = f"{task.event_id()}:{backend}"
        stored = state.use(p, REF, key)
        if stored is not None:
            return stored, False
        run = self.reference(task, backend)
        if run is None:
            return None, False
        ref = ReferenceExecuted(
            task_id=task.task_id,
            task_event_id=task.event_id(),
            backend=run.backend,
            execution=run,
        )
        state.keep(p, REF, key, ref, limit=self.references_kept)
        return ref, True
