"""A processor run as its own process by test_transactional.py (so it can be killed with SIGKILL)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence

from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.port import Emit, Hosted, Incoming
from infra.runtime.state import Kind, State
from schemas.rollout import RolloutRequested
from schemas.task import TaskPublished

COUNT = Kind("count", int)


def main(bootstrap: str, topic_in: str, topic_out: str, name: str, delay_s: float) -> None:
    def handler(batch: Sequence[Incoming], state: State) -> list[Emit]:
        out = []
        for msg in batch:
            task = msg.event
            assert isinstance(task, TaskPublished)
            if task.task_id == "poison":
                raise ValueError("this task is poison")
            state.put(msg.partition, COUNT, "", (state.get(msg.partition, COUNT) or 0) + 1)
            time.sleep(delay_s)
            request = RolloutRequested(
                group_id=f"{task.task_id}/0",
                task_id=task.task_id,
                group_size=2,
                prompt=task.prompt,
                entry_point=task.entry_point,
            )
            out.append(Emit(request, topic=topic_out))
        return out

    proc = TransactionalProcessor(
        Hosted(name, [topic_in], handler, kinds=(COUNT,), batch_size=10), bootstrap=bootstrap
    )
    stop = threading.Event()
    proc.start()
    idle_since = time.monotonic()
    try:
        while time.monotonic() - idle_since < 4.0:
            if proc.step() or not proc.assigned:
                idle_since = time.monotonic()
        total = sum(proc.state.get(p, COUNT) or 0 for p in proc.state.owned_partitions())
        print(f"COUNTS {total}", flush=True)
    finally:
        stop.set()
        proc.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
