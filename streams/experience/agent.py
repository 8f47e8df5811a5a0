"""The experience processor: generations + verdicts -> one ExperienceReady per GRPO group, when the
group is complete or its deadline passes (then flagged partial).

Inputs are co-partitioned by ``group_id``: the request (group size, deadline), each generation (tokens
and behaviour log-probs) and each verdict of a group arrive on the same partition number, so one
instance owns a group's whole state.

Human reviews in force when a group is assembled replace the automated verdicts of its judged samples
(``overrides.py``); the reviews are read from ``rl.reviews`` just before, so a review recorded before
the group is assembled always counts, and one recorded later is left to the learner (which can still
keep a sample out) and to the audit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

from infra.runtime.port import Emit, Incoming
from infra.runtime.state import Kind, Marker, State
from schemas.rollout import CodeGenerated, NoiseVerdict, RolloutRequested
from schemas.topics import EXPERIENCES, GENERATIONS, ROLLOUTS_REQUESTED, VERDICTS
from streams.experience.core import GroupState
from streams.experience.overrides import apply_overrides

INPUT_TOPICS = (ROLLOUTS_REQUESTED.name, GENERATIONS.name, VERDICTS.name)
#: where it writes (the access plan grants exactly these; the host refuses any other)
OUTPUT_TOPICS = (EXPERIENCES.name,)


class GroupClock(NamedTuple):
    group_size: int
    deadline: float


def _read_only(value: Any) -> Any:
    raise TypeError("a read-only view of the group records")


#: a group being assembled (key: its group id)
GROUP = Kind("group", encode=GroupState.to_json, decode=GroupState.from_json)
#: the same records, read for their size and deadline only: the tick looks at every group, and decoding
#: each one's generations to find the few that are due would cost more than the rest of the tick
GROUP_CLOCK = Kind(
    "group", encode=_read_only, decode=lambda raw: GroupClock(raw["group_size"], raw["deadline"])
)
#: a group already emitted: its late or re-delivered records are ignored
DONE = Marker("done")
KINDS = (GROUP, DONE)


class Reviews(Protocol):
    def refresh(self) -> None: ...

    def verdict(self, sample_id: str) -> str | None: ...


class ExperienceAgent:
    def __init__(
        self, *, deadline_s: float, normalise_std: bool = True, reviews: Reviews | None = None
    ) -> None:
        self.deadline_s = deadline_s
        self.normalise_std = normalise_std
        self.reviews = reviews
        self._reviews_fresh = False

    def _group(self, state: State, p: int, group_id: str, task_id: str) -> GroupState:
        group = state.get(p, GROUP, group_id)
        if group is not None:
            return group
        # group size unknown until the request is seen: 0 keeps it from completing early
        return GroupState(group_id, task_id, group_size=0, deadline=float("inf"))

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        out: list[Emit] = []
        self._reviews_fresh = False  # read rl.reviews at most once per batch, and only to assemble
        for msg in batch:
            event = msg.event
            p = msg.partition
            if state.marked(p, DONE, getattr(event, "group_id", "")):
                continue  # a late or re-delivered record of a group already emitted
            if isinstance(event, RolloutRequested):
                group = self._group(state, p, event.group_id, event.task_id)
                if group.group_size:
                    continue
                group.group_size = event.group_size
                group.trace = msg.trace
                group.deadline = msg.timestamp_ms / 1000.0 + self.deadline_s
            elif isinstance(event, CodeGenerated):
                if event.split == "eval":
                    # an evaluation sample is judged like any other, but never assembled nor trained on:
                    # its group is done here (a verdict read before it is dropped with the group)
                    state.delete(p, GROUP, event.group_id)
                    state.mark(p, DONE, event.group_id)
                    continue
                group = self._group(state, p, event.group_id, event.task_id)
                if not group.add_generation(event):
                    continue
            elif isinstance(event, NoiseVerdict):
                group = self._group(state, p, event.group_id, event.task_id)
                if not group.add_verdict(event, msg.envelope.id, msg.trace):
                    continue
            else:
                continue
            out.extend(self._save_or_emit(state, p, group, now=msg.timestamp_ms / 1000.0))
        return out

    def _save_or_emit(self, state: State, p: int, group: GroupState, *, now: float) -> list[Emit]:
        if group.group_size and group.complete:
            return self._emit(state, p, group, now)
        state.put(p, GROUP, group.group_id, group)
        return []

    def _emit(self, state: State, p: int, group: GroupState, now: float) -> list[Emit]:
        if self.reviews is not None:
            if not self._reviews_fresh:
                self.reviews.refresh()
                self._reviews_fresh = True
            apply_overrides(group, self.reviews.verdict)
        experience = group.assemble(now=now, normalise_std=self.normalise_std)
        state.delete(p, GROUP, group.group_id)
        state.mark(p, DONE, group.group_id)
        # the experience continues its group's trace and links to the trace of each of its samples
        return [Emit(experience, new_trace=True, parent_trace=group.trace, links=group.sample_traces())]

    def tick(self, state: State, now: float) -> list[Emit]:
        out: list[Emit] = []
        self._reviews_fresh = False
        for p in state.owned_partitions():
            for group_id, clock in list(state.items(p, GROUP_CLOCK)):
                if clock.group_size and now >= clock.deadline:
                    group = state.get(p, GROUP, group_id)
                    assert group is not None
                    out.extend(self._emit(state, p, group, now))
        return out
