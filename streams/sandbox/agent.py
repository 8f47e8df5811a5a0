"""The sandbox processor: generations -> executions, through the worker pool.

Each sample runs ``1 + reruns`` times (the noise filter compares the runs for flakiness); with ``probe``,
a first run that answered every case runs once more on the task's probe plan (``streams/probe``), as
run ``1 + reruns``, for the filter to tell computed answers from recalled ones. The plan is drawn with a
secret probe seed this processor draws when a group's first sample earns a probe run, and shares with
the group's other samples (:class:`GroupSeeds`); the run's event records it (``probe_seed``). A run the
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
from dataclasses import dataclass, replace

from infra.runtime.port import Emit, Incoming, PoisonRecord, dead_letter
from infra.runtime.sides import TaskTable
from infra.runtime.state import State
from schemas.codec import decode_body
from schemas.dlq import DeadLettered
from schemas.rollout import CodeGenerated, SandboxExecuted
from schemas.topics import DLQ, EXECUTIONS, GENERATIONS, retry_topic
from streams.probe.plan import ProbePlan, new_probe_seed, probe_due, probe_run_index
from streams.recent import Recent
from streams.sandbox.config import BackendName
from streams.sandbox.jobs import job_for, probe_job_for
from streams.sandbox.pool import SandboxPool
from streams.sandbox.result import ExecutionResult, Job, to_event
from streams.sandbox.resume import resumed
from streams.sandbox.service import Sandbox

RETRY = retry_topic("sandbox")
INPUT_TOPICS = (GENERATIONS.name, RETRY.name)
#: where it writes: executions, and its retries (the access plan grants exactly these)
OUTPUT_TOPICS = (EXECUTIONS.name, RETRY.name)
MAX_BACKOFF_S = 30.0


class GroupSeeds:
    """The probe seed of each group: drawn afresh (:func:`new_probe_seed`) when the group's first sample
    earns a probe run, then shared by its other samples, so the reference's runs of the plan (two fresh
    sandboxes) serve the whole group instead of every sample. Sharing is safe: every program of a group
    was written before the seed was drawn (a later turn's prompt holds the feedback of its own first
    run, never of a probe run), and each runs in a sandbox of its own, so no sample can pass another the
    inputs it was probed on. Only the ``kept`` newest groups are remembered: a group forgotten (or a
    restart) draws a new seed, which costs one more reference run and changes no verdict's meaning,
    since every probe run's event records the seed it was drawn with."""

    def __init__(self, kept: int = 4096) -> None:
        self.kept = kept
        self._seeds: Recent[str, str] = Recent(kept)

    def __call__(self, group_id: str) -> str:
        found, seed = self._seeds.get(group_id)
        if not found or seed is None:
            seed = new_probe_seed()
            self._seeds.put(group_id, seed)
        return seed


class SandboxAgent:
    def __init__(
        self,
        pool: SandboxPool,
        tasks: TaskTable,
        *,
        backend: BackendName | None = None,
        reruns: int = 0,
        probe: bool = False,
        max_retries: int = 3,
        backoff_s: float = 1.0,
        resume: bool = False,
        retry_cut: bool = False,
    ) -> None:
        self.pool = pool
        #: (filter v25) a probe run that hung on a generated input near the cases is resumed past it
        #: (``streams/sandbox/resume.py``), as the filter judging it expects; (v32) one whose deadline cut
        #: a call near the cases resumes at that call
        self.resume = resume
        self.retry_cut = retry_cut
        self.tasks = tasks
        self.backend = backend
        self.runs = 1 + reruns
        self.probe = probe
        self.probe_index = probe_run_index(reruns)
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self._limits = Sandbox(pool.config).limits
        self._seeds = GroupSeeds()

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
        pending: list[_Run] = []
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
                if run_index == self.probe_index and self.probe:  # a retried probe run
                    seed = self._seeds(gen.group_id)
                    probe = probe_job_for(task, gen.code, limits, seed=seed)
                    if probe is not None:
                        pending.append(self._submit_probe(msg, gen, attempt, run_index, *probe))
                    continue
                # re-runs skip the cache: they exist to observe the program again, with clocks of their own
                run_job = replace(job, clock_draw=run_index) if run_index else job
                future = self.pool.submit(run_job, self.backend, use_cache=run_index == 0)
                pending.append(_Run(msg, gen, attempt, run_index, hidden, future))
        out: list[Emit] = []
        probes: list[_Run] = []
        for run in pending:
            execution = self._emit(run, out)
            if execution is None or not self.probe or run.run_index != 0:
                continue
            task = self.tasks.get(run.gen.task_id)
            if task is not None and probe_due(task, execution):
                # a first run that answered every case is run again on the task's probe plan, in a fresh
                # sandbox, for the noise filter to see whether it computes its answers or recalls them
                limits = self._limits(timeout_s=task.limits.timeout_s, memory_mb=task.limits.memory_mb)
                seed = self._seeds(run.gen.group_id)
                probe = probe_job_for(task, run.gen.code, limits, seed=seed, first_run_s=execution.duration_s)
                if probe is not None:
                    probes.append(self._submit_probe(run.msg, run.gen, 0, self.probe_index, *probe))
        for run in probes:
            self._emit(run, out)
        return out

    def _submit_probe(
        self, msg: Incoming, gen: CodeGenerated, attempt: int, run_index: int, job: Job, plan: ProbePlan
    ) -> _Run:
        # every position of a probe run is kept away from feedback like a hidden case: marked so as its
        # result is read
        hidden = frozenset(range(len(plan.inputs)))
        job = replace(job, clock_draw=run_index, hidden=hidden)
        future = self.pool.submit(job, self.backend, use_cache=False)
        return _Run(msg, gen, attempt, run_index, hidden, future, plan.digest, plan.seed, job, plan)

    def _emit(self, run: _Run, out: list[Emit]) -> SandboxExecuted | None:
        """Emit the execution of one finished run (or its retry letter); returns it when it completed."""
        msg, gen, attempt, run_index = run.msg, run.gen, run.attempt, run.run_index
        result = run.future.result()
        if self.resume and run.job is not None and run.plan is not None:
            # (v25) past a hang on a near input: the inputs after it, in a fresh sandbox
            result = resumed(
                result,
                run.job,
                run.plan,
                lambda j: self.pool.submit(j, self.backend, use_cache=False).result(),
                retry_cut=self.retry_cut,
            )
        execution = to_event(
            result,
            sample_id=gen.sample_id,
            group_id=gen.group_id,
            task_id=gen.task_id,
            run_index=run_index,
            hidden=run.hidden,
        ).model_copy(update={"turn": gen.turn, "max_turns": gen.max_turns})
        if run.probe is not None:
            execution = execution.model_copy(update={"probe": run.probe, "probe_seed": run.probe_seed})
        if result.infra_error is None:
            out.append(Emit(execution, causation_id=msg.envelope.id))
            return execution
        execution = execution.model_copy(update={"infra_error": result.infra_error})
        final = attempt >= self.max_retries
        written = gen.as_written()
        letter = dead_letter(
            "sandbox",
            result.infra_error,
            error_type="SandboxError",
            attempt=attempt + 1,
            topic=GENERATIONS.name,
            partition=msg.partition,
            offset=msg.offset,
            key=None,
            value=written.model_dump_json().encode(),
            headers={"ce_type": written.ce_type(), "ce_id": written.event_id(), "run_index": str(run_index)},
            event_id=written.event_id(),
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
        return None


@dataclass(frozen=True)
class _Run:
    """One submitted run of a generation."""

    msg: Incoming
    gen: CodeGenerated
    attempt: int
    run_index: int
    hidden: frozenset[int]
    future: Future[ExecutionResult]
    #: the probe plan's digest and the seed it was drawn with, for a probe run
    probe: str | None = None
    probe_seed: str | None = None
    #: a probe run's job and plan (to resume it past a hang: ``streams/sandbox/resume.py``)
    job: Job | None = None
    plan: ProbePlan | None = None
