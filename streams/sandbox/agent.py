"""The sandbox processor: generations -> executions, through the worker pool.

Each sample runs ``1 + reruns`` times (the noise filter compares the runs for flakiness). A run the
sandbox itself could not complete (an infra failure, not the program's) goes to ``rl.retry.sandbox``
and is tried again with exponential backoff; after ``max_retries`` it is dead-lettered, and its
execution is published with ``infra_error`` set, which the filter masks: never scored as the model's
failure.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Sequence
from concurrent.futures import Future

from infra.runtime.port import Emit, Incoming, PoisonRecord, dead_letter
from infra.runtime.sides import TaskTable
from infra.runtime.state import State
from schemas.codec import decode_body
from schemas.dlq import DeadLettered
from schemas.rollout import CodeGenerated
from schemas.topics import DLQ, GENERATIONS, retry_topic
from streams.sandbox.config import BackendName
from streams.sandbox.jobs import job_for
from streams.sandbox.pool import SandboxPool
from streams.sandbox.result import ExecutionResult, to_event
from streams.sandbox.service import Sandbox

RETRY = retry_topic("sandbox")
INPUT_TOPICS = (GENERATIONS.name, RETRY.name)
MAX_BACKOFF_S = 30.0


class SandboxAgent:
    def __init__(
        self,
        pool: SandboxPool,
        tasks: TaskTable,
        *,
        backend: BackendName | None = None,
        reruns: int = 0,
        max_retries: int = 3,
        backoff_s: float = 1.0,
    ) -> None:
        self.pool = pool
        self.tasks = tasks
        self.backend = backend
        self.runs = 1 + reruns
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._limits = Sandbox(pool.config).limits

    def _generation(self, msg: Incoming) -> tuple[CodeGenerated, int, range] | None:
        """The generation to run, its attempt number and which runs of it (a retry repeats only the
        run that failed: the others are on the log already)."""
        event = msg.event
        if isinstance(event, CodeGenerated):
            return event, 0, range(self.runs)
        if isinstance(event, DeadLettered) and event.disposition == "retry" and event.stage == "sandbox":
            # back off: the retry record was written when the attempt failed
            # the exponent is capped: a hostile attempt number (2**62) would otherwise never finish
            exponent = min(event.attempt - 1, 32)
            due = msg.timestamp_ms / 1000.0 + min(self.backoff_s * 2**exponent, MAX_BACKOFF_S)
            time.sleep(max(0.0, min(due - time.time(), MAX_BACKOFF_S)))
            original = decode_body(
                event.original_headers["ce_type"], base64.b64decode(event.original_value_b64)
            )
            if not isinstance(original, CodeGenerated):
                raise PoisonRecord(f"retry record holds {type(original).__name__}, not a generation")
            run_index = int(event.original_headers.get("run_index", "0"))
            return original, event.attempt, range(run_index, run_index + 1)
        return None

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        pending: list[tuple[Incoming, CodeGenerated, int, int, frozenset[int], Future[ExecutionResult]]] = []
        for msg in batch:
            found = self._generation(msg)
            if found is None:
                continue
            gen, attempt, runs = found
            task = self.tasks.get(gen.task_id)
            if task is None:
                raise PoisonRecord(f"unknown task {gen.task_id!r}: no TaskPublished on rl.tasks")
            limits = self._limits(timeout_s=task.limits.timeout_s, memory_mb=task.limits.memory_mb)
            job, hidden = job_for(task, gen.code, limits)
            for run_index in runs:
                # re-runs skip the cache: they exist to observe the program again
                future = self.pool.submit(job, self.backend, use_cache=run_index == 0)
                pending.append((msg, gen, attempt, run_index, hidden, future))
        out: list[Emit] = []
        for msg, gen, attempt, run_index, hidden, future in pending:
            result = future.result()
            execution = to_event(
                result,
                sample_id=gen.sample_id,
                group_id=gen.group_id,
                task_id=gen.task_id,
                run_index=run_index,
                hidden=hidden,
            )
            if result.infra_error is None:
                out.append(Emit(execution, causation_id=msg.envelope.id))
                continue
            execution = execution.model_copy(update={"infra_error": result.infra_error})
            final = attempt >= self.max_retries
            letter = dead_letter(
                "sandbox",
                result.infra_error,
                error_type="SandboxError",
                attempt=attempt + 1,
                topic=GENERATIONS.name,
                partition=msg.partition,
                offset=msg.offset,
                key=None,
                value=gen.model_dump_json().encode(),
                headers={"ce_type": gen.ce_type(), "ce_id": gen.event_id(), "run_index": str(run_index)},
                event_id=gen.event_id(),
                disposition="dead" if final else "retry",
            )
            out.append(
                Emit(
                    letter,
                    topic=DLQ.name if final else RETRY.name,
                    causation_id=msg.envelope.id,
                    attempt=attempt + 1,
                )
            )
            if final:
                out.append(Emit(execution, causation_id=msg.envelope.id))
        return out
