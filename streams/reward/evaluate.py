"""Evaluate one program against one task end to end: execute it in the sandbox (and the task's
reference in the same backend), score it with a registered reward function, judge it with the noise
filter. The stream agents do the same in three hops over the log; the CLI and the acceptance tests use
this in one process."""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Literal

from schemas.reference import ReferenceExecuted
from schemas.rollout import NoiseVerdict, RewardScored, SandboxExecuted, SandboxExecutedV3
from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig, resumes_probes, retries_cut_calls
from streams.noise.filter import Decision, decide, verdict_event
from streams.noise.rules import TaskQuality, assess_task
from streams.probe.memo import memoised_reference
from streams.probe.plan import new_probe_seed, probe_due, probe_run_index
from streams.recent import Recent
from streams.reward.correctness import expected_cases
from streams.reward.function import RewardFunction, Score
from streams.sandbox.jobs import probe_job_for
from streams.sandbox.pool import SandboxPool
from streams.sandbox.result import ExecutionResult, Job, to_event
from streams.sandbox.resume import resumed
from streams.sandbox.service import Sandbox

Backend = Literal["wasm", "container", "auto"]


@dataclass(frozen=True)
class Evaluation:
    execution: SandboxExecuted
    reruns: tuple[SandboxExecuted, ...]
    reference_execution: SandboxExecutedV3 | None
    #: the probe run (None: not due, or disabled) and the reference's runs of the same plan
    probe: SandboxExecuted | None
    probe_reference: ReferenceExecuted | None
    score: Score
    reward: RewardScored
    task_quality: TaskQuality
    decision: Decision
    verdict: NoiseVerdict

    def cli_json(self) -> dict[str, object]:
        """The fields of the ``rlstream score --json`` contract."""
        return {
            "reward": self.reward.total,
            "components": dict(self.reward.components),
            "verdict": self.verdict.verdict,
            "reasons": [r.model_dump() for r in self.verdict.reasons],
            "passed": self.reward.passed,
            "total": self.reward.total_cases,
            "backend": self.execution.backend,
        }


def run_program(
    sandbox: Sandbox,
    task: TaskPublished,
    code: str,
    *,
    sample_id: str,
    group_id: str,
    backend: Backend | None = None,
    run_index: int = 0,
) -> SandboxExecuted:
    """Run ``code`` on the task's case inputs (visible, then hidden; expected outputs stay here), or
    under its ``check`` when the task has no cases."""
    limits = sandbox.limits(timeout_s=task.limits.timeout_s, memory_mb=task.limits.memory_mb)
    cases = expected_cases(task)
    if cases:
        result = sandbox.run_cases(
            code,
            task.entry_point,
            [c.case.input for c in cases],
            limits=limits,
            backend=backend,
            clock_draw=run_index,
        )
    elif task.check:
        result = sandbox.run_check(
            code,
            task.check,
            task.entry_point,
            prelude=task.prompt,
            limits=limits,
            backend=backend,
            clock_draw=run_index,
        )
    else:  # the task model refuses this, but a stored v1 body upcast may still arrive here
        result = sandbox.run_cases(
            code, task.entry_point, [], limits=limits, backend=backend, clock_draw=run_index
        )
    n_visible = len(task.tests)
    hidden = frozenset(range(n_visible, len(cases)))
    return to_event(
        result,
        sample_id=sample_id,
        group_id=group_id,
        task_id=task.task_id,
        run_index=run_index,
        hidden=hidden,
    )


def run_probe(
    sandbox: Sandbox,
    task: TaskPublished,
    code: str,
    *,
    sample_id: str,
    group_id: str,
    backend: Backend | None = None,
    run_index: int = 1,
    first_run_s: float | None = None,
    seed: str | None = None,
    resume: bool = False,
    retry_cut: bool = False,
) -> SandboxExecuted | None:
    """Run ``code`` on the task's probe plan drawn with ``seed`` (None for a task without one);
    ``first_run_s`` is how long its run of the task's cases took (it bounds the probe's deadline);
    ``resume`` (filter v25): resumed past a hang on a near input (``streams/sandbox/resume.py``), and under
    ``retry_cut`` (v32) at a call near the cases the deadline cut."""
    return run_probes(
        sandbox,
        task,
        code,
        sample_id=sample_id,
        group_id=group_id,
        backend=backend,
        run_indices=(run_index,),
        first_run_s=first_run_s,
        seed=seed,
        resume=resume,
        retry_cut=retry_cut,
    )[0]


def run_probes(
    sandbox: Sandbox,
    task: TaskPublished,
    code: str,
    *,
    sample_id: str,
    group_id: str,
    backend: Backend | None = None,
    run_indices: tuple[int, ...],
    first_run_s: float | None = None,
    seed: str | None = None,
    pool: SandboxPool | None = None,
    resume: bool = False,
    cases_again: bool = True,
    retry_cut: bool = False,
) -> list[SandboxExecuted | None]:
    """:func:`run_probe` once per index of ``run_indices`` (each run in a fresh sandbox, with clocks of
    its own): one after the other in ``sandbox``, or, given a ``pool``, all at once on its workers.
    Under ``resume`` (filter v25) each run that hung on a generated input near the cases is run again
    on the inputs after it, in a fresh sandbox, and merged with them (:func:`resumed`); without
    ``cases_again`` (the reference's runs) not where only the cases asked again and inputs past the range
    are left; under ``retry_cut`` (filter v32) a call near the cases the deadline cut is asked again
    first (``streams.sandbox.resume.cut_at``)."""
    limits = sandbox.limits(timeout_s=task.limits.timeout_s, memory_mb=task.limits.memory_mb)
    found = probe_job_for(task, code, limits, seed=seed, first_run_s=first_run_s)
    if found is None:
        return [None for _ in run_indices]
    job, plan = found
    # each run its own clocks (a reference's two runs of one plan too); every position is hidden, marked
    # so as the result is read (not copied case by case into the event)
    hidden = frozenset(range(len(plan.inputs)))
    jobs = [replace(job, clock_draw=i, hidden=hidden) for i in run_indices]
    results: list[ExecutionResult]
    if pool is None:
        results = [sandbox.execute(j, backend) for j in jobs]
    else:
        futures: list[Future[ExecutionResult]] = [pool.submit(j, backend, use_cache=False) for j in jobs]
        results = [f.result() for f in futures]
    if resume:

        def execute(j: Job) -> ExecutionResult:
            if pool is None:
                return sandbox.execute(j, backend)
            return pool.submit(j, backend, use_cache=False).result()

        results = [
            resumed(r, j, plan, execute, cases_again=cases_again, retry_cut=retry_cut)
            for r, j in zip(results, jobs, strict=True)
        ]
    return [
        to_event(
            result,
            sample_id=sample_id,
            group_id=group_id,
            task_id=task.task_id,
            run_index=i,
            hidden=hidden,
        ).model_copy(update={"probe": plan.digest, "probe_seed": plan.seed})
        for i, result in zip(run_indices, results, strict=True)
    ]


def _unanswered(run: SandboxExecuted) -> bool:
    """A run of a probe plan's inputs that ended before answering them all (a hang, most often)."""
    return run.mode == "cases" and (
        run.timed_out or any(c.status in ("timeout", "missing") for c in run.cases)
    )


class Evaluator:
    """Sandbox + reward function + noise filter, with the reference run cached per task and backend.

    Probe plans are drawn with one secret seed per evaluator (``probe_seed``, drawn afresh when not
    given), as the pipeline draws one per group: every program it judges was written before the seed
    existed, and the reference's runs of a plan then serve every program of the task.

    Given a ``pool``, the reference's runs of a probe plan go on its workers, all at once (the filter's:
    two runs of ~30 ms each at once rather than one after the other in this process, where a run holds
    the interpreter lock); :meth:`warm_probe` starts them on a thread of their own, so that they are
    under way, or done, when :meth:`reference_probe` asks for them. Either way the same runs of the
    same plan are made: warming changes when, never what."""

    def __init__(
        self,
        sandbox: Sandbox,
        reward_fn: RewardFunction,
        noise: NoiseConfig,
        *,
        reruns: int | None = None,
        probe_seed: str | None = None,
        cache_entries: int = 256,
        pool: SandboxPool | None = None,
    ) -> None:
        self.sandbox = sandbox
        self.pool = pool
        self.reward_fn = reward_fn
        self.noise = noise
        self.reruns = noise.reruns if reruns is None else reruns
        self._references: Recent[tuple[str, str, str], SandboxExecuted | None] = Recent(cache_entries)
        self._probe_references: Recent[tuple[str, str, str, str | None], ReferenceExecuted | None] = Recent(
            cache_entries
        )
        self.probe_seed = probe_seed or new_probe_seed()
        # sandbox runs go on in parallel; judging on the host is serialised (CPython 3.11's AST
        # constructor, which static analysis and literal parsing use, is not thread-safe: gh-106905)
        self._judging = threading.Lock()
        #: runs of the reference on a probe plan: inputs on which they disagree are left out
        self.probe_reference_runs = 2
        #: (filter v25) probe runs, the reference's and the samples', resumed past a hang on a near input
        self.resume_probes = resumes_probes(noise)
        #: (filter v32) and asked again at a call near the cases their deadline cut
        self.retry_cut = retries_cut_calls(noise)
        #: the reference's runs of probe plans under way on the warming thread (key as the cache's): an
        #: entry goes when its runs are done (they are in the cache then)
        self._warming: dict[tuple[str, str, str, str | None], Future[ReferenceExecuted | None]] = {}
        self._warm_lock = threading.Lock()
        self._warmer: ThreadPoolExecutor | None = None
        # a task's reference run, wanted by the warming thread and by the caller's at once, is made once
        self._reference_lock = threading.Lock()

    def reference(self, task: TaskPublished, backend: str) -> SandboxExecuted | None:
        if not task.reference:
            return None
        key = (task.task_id, task.event_id(), backend)
        found, run = self._references.get(key)
        if found:
            return run
        with self._reference_lock:
            found, run = self._references.get(key)
            if found:
                return run
            run = run_program(
                self.sandbox,
                task,
                task.reference,
                sample_id=f"{task.task_id}#reference",
                group_id=f"{task.task_id}#reference",
                backend=backend,  # type: ignore[arg-type]
            )
            self._references.put(key, run)
        return run

    def reference_probe(
        self, task: TaskPublished, backend: str, seed: str | None
    ) -> ReferenceExecuted | None:
        """The reference's runs of the task's probe plan drawn with ``seed`` in ``backend``, each in a
        fresh sandbox (None without a reference or a plan). Cached per task, backend and seed; runs
        :meth:`warm_probe` started are waited for, not made again. The runs name the plan by its
        digest; the seed stays on the probe runs of the samples judged with them (a reference run is
        no sample's: it carries none)."""
        if not task.reference:
            return None
        key = (task.task_id, task.event_id(), backend, seed)
        with self._warm_lock:
            pending = self._warming.get(key)
        if pending is not None:
            return pending.result()
        found, cached = self._probe_references.get(key)
        if found:
            return cached
        return self._run_reference_probe(task, backend, seed)

    def warm_probe(self, task: TaskPublished, backend: str, seed: str | None) -> None:
        """Start the reference's runs of the task's probe plan drawn with ``seed`` now, on the warming
        thread, unless they are kept or under way: :meth:`reference_probe` takes them when the verdict
        needs them. Nothing else is kept: done, they are in the same bounded cache as runs made on
        demand, and the thread's entry goes."""
        if not task.reference:
            return
        key = (task.task_id, task.event_id(), backend, seed)
        with self._warm_lock:
            if key in self._warming or self._probe_references.get(key)[0]:
                return
            if self._warmer is None:
                self._warmer = ThreadPoolExecutor(1, thread_name_prefix="reference-warm")
            future = self._warmer.submit(self._run_reference_probe, task, backend, seed)
            self._warming[key] = future

        def done(f: Future[ReferenceExecuted | None]) -> None:
            with self._warm_lock:
                if self._warming.get(key) is f:
                    del self._warming[key]

        future.add_done_callback(done)

    def warming(self) -> int:
        """How many plans' reference runs are under way on the warming thread."""
        with self._warm_lock:
            return len(self._warming)

    def close(self) -> None:
        """Stop the warming thread (runs under way are finished first)."""
        if self._warmer is not None:
            self._warmer.shutdown(wait=True)

    def _run_reference_probe(
        self, task: TaskPublished, backend: str, seed: str | None
    ) -> ReferenceExecuted | None:
        assert task.reference is not None
        key = (task.task_id, task.event_id(), backend, seed)
        cases_run = self.reference(task, backend)
        usable = cases_run is not None and not cases_run.infra_error
        first_run_s = cases_run.duration_s if cases_run is not None and usable else None
        indices = tuple(range(self.probe_reference_runs))
        runs = run_probes(
            self.sandbox,
            task,
            task.reference,
            sample_id=f"{task.task_id}#reference",
            group_id=f"{task.task_id}#reference",
            backend=backend,  # type: ignore[arg-type]
            run_indices=indices,
            first_run_s=first_run_s,
            seed=seed,
            pool=self.pool,
            resume=self.resume_probes,
            retry_cut=self.retry_cut,
            cases_again=False,
        )
        runs = [r.model_copy(update={"probe_seed": None}) if r is not None else None for r in runs]
        first = runs[0]
        memoised: list[SandboxExecuted] = []
        # inputs a plain run left unanswered (too slow for it) are run again by the reference with its
        # recursive functions memoised, where that is sound; the filter decides whether they count
        code = memoised_reference(task.reference, task.entry_point)
        if code is not None and first is not None and any(_unanswered(r) for r in runs if r is not None):
            again = run_probes(
                self.sandbox,
                task,
                code,
                sample_id=f"{task.task_id}#reference",
                group_id=f"{task.task_id}#reference",
                backend=first.backend,  # type: ignore[arg-type]
                run_indices=indices,
                first_run_s=first_run_s,
                seed=seed,
                pool=self.pool,
                resume=self.resume_probes,
                retry_cut=self.retry_cut,
                cases_again=False,
            )
            memoised = [r.model_copy(update={"probe_seed": None}) for r in again if r is not None]
        ref = (
            None
            if first is None
            else ReferenceExecuted(
                task_id=task.task_id,
                task_event_id=task.event_id(),
                backend=first.backend,
                execution=first,
                reruns=tuple(r for r in runs[1:] if r is not None),
                memoised=tuple(memoised),
            )
        )
        self._probe_references.put(key, ref)
        return ref

    def evaluate(
        self,
        task: TaskPublished,
        code: str,
        *,
        sample_id: str = "sample",
        group_id: str = "group",
        backend: Backend | None = None,
    ) -> Evaluation:
        first = run_program(self.sandbox, task, code, sample_id=sample_id, group_id=group_id, backend=backend)
        # re-runs stay on the backend the first run used, so they can only disagree by flakiness
        reruns = tuple(
            run_program(
                self.sandbox,
                task,
                code,
                sample_id=sample_id,
                group_id=group_id,
                backend=first.backend if first.backend != "subprocess" else backend,  # type: ignore[arg-type]
                run_index=i,
            )
            for i in range(1, self.reruns + 1)
        )
        probe = probe_ref = None
        if self.noise.probe and probe_due(task, first):
            probe = run_probe(
                self.sandbox,
                task,
                code,
                sample_id=sample_id,
                group_id=group_id,
                backend=first.backend if first.backend != "subprocess" else backend,  # type: ignore[arg-type]
                run_index=probe_run_index(self.reruns),
                first_run_s=first.duration_s,
                seed=self.probe_seed,
                resume=self.resume_probes,
                retry_cut=self.retry_cut,
            )
            if probe is not None and not probe.infra_error:
                probe_ref = self.reference_probe(task, first.backend, probe.probe_seed)
        ref = self.reference(task, first.backend) if not first.infra_error else None
        with self._judging:
            score = self.reward_fn.score(task, code, first, ref)
            reward = self.reward_fn.to_event(score, first)
            options = self.reward_fn.compare_options()
            quality = assess_task(
                task,
                options,
                min_cases=self.noise.min_cases,
                reference_execution=ref,
                flag_constant=self.noise.flag_constant_answer,
                flag_identity=self.noise.flag_identity_answer,
            )
            decision = decide(
                task=task,
                code=code,
                executions=(first, *reruns, *((probe,) if probe is not None else ())),
                config=self.noise,
                options=options,
                task_quality=quality,
                probe_reference=probe_ref,
            )
            verdict = verdict_event(reward=reward, decision=decision, config=self.noise)
        return Evaluation(first, reruns, ref, probe, probe_ref, score, reward, quality, decision, verdict)
