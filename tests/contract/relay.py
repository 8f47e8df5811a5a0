"""The processor the runtime contract is checked with: small, pure, and shaped like the real ones.

It turns each task into a request on its output topic and remembers, per partition, which tasks it
handled (idempotent by event id, as every rlstream processor is). A task whose id starts with
``poison`` fails its handler (the runtime must dead-letter it and go on); one starting with ``defer``
makes the first ``defers`` batches that hold it defer (the runtime must hand the batch over again
later, never dead-letter it).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from infra.runtime.port import Defer, Emit, Hosted, Incoming
from infra.runtime.state import Kind, State
from schemas.rollout import RolloutRequested
from schemas.task import TaskPublished

#: task id -> the event id of the TaskPublished handled
HANDLED = Kind("handled", str)


class Relay:
    def __init__(self, out_topic: str, *, defers: int = 1, delay_s: float = 0.0) -> None:
        self.out_topic = out_topic
        self.defers_left = defers
        self.delay_s = delay_s
        self.batches = 0

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        self.batches += 1
        out: list[Emit] = []
        for msg in batch:
            task = msg.event
            if not isinstance(task, TaskPublished):
                continue
            if task.task_id.startswith("defer") and self.defers_left > 0:
                self.defers_left -= 1
                raise Defer(f"{task.task_id} asks to wait", delay_s=0.2)
            if task.task_id.startswith("poison"):
                raise ValueError(f"task {task.task_id} is poison")
            if state.get(msg.partition, HANDLED, task.task_id) == msg.envelope.id:
                continue  # a re-delivered record
            time.sleep(self.delay_s)
            state.put(msg.partition, HANDLED, task.task_id, msg.envelope.id)
            request = RolloutRequested(
                group_id=f"{task.task_id}/0",
                task_id=task.task_id,
                group_size=1,
                prompt=task.prompt,
                entry_point=task.entry_point,
            )
            out.append(Emit(request, topic=self.out_topic))
        return out


def relay(name: str, topic_in: str, topic_out: str, **options: float) -> tuple[Hosted, Relay]:
    core = Relay(topic_out, defers=int(options.get("defers", 1)), delay_s=float(options.get("delay_s", 0.0)))
    return Hosted(name, (topic_in,), core.handle, kinds=(HANDLED,), batch_size=10), core


def handled(state: State) -> list[str]:
    """Every task id the state says was handled, over the partitions it owns."""
    return sorted(key for p in state.owned_partitions() for key in state.keys(p, HANDLED))
