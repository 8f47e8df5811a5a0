"""Programs run in this process as a sandbox would report them: a stand-in for the sandbox in pure unit
tests of what judges runs (``tests``) and in CPU benches of the judging alone (``bench.judging_ab``).
Trusted code only: nothing here isolates the program."""

from __future__ import annotations

from collections.abc import Callable

from schemas.reference import ReferenceExecuted
from schemas.rollout import CaseResult, SandboxExecuted
from schemas.task import TaskPublished
from streams.reward.literals import CompareOptions


def simulated_run(
    task: TaskPublished,
    code: str,
    *,
    sample_id: str = "s-1",
    run_index: int = 0,
    probe: bool = False,
    backend: str = "wasm",
    seed: str | None = None,
    hangs: Callable[[str], bool] | None = None,
) -> SandboxExecuted:
    """What a sandbox would report for ``code`` (trusted test code, executed here) on the task's cases,
    or on its probe plan with ``probe``: a stand-in for pure unit tests of what judges runs. An input
    ``hangs`` accepts is one the code would not answer in the run's time (never called here): the run
    ends there at its deadline, as a sandbox reports it."""
    import ast
    import decimal

    from streams.probe.plan import case_inputs, plan_for

    plan = plan_for(task, seed) if probe else None
    inputs = plan.inputs if plan is not None else case_inputs(task)
    namespace: dict[str, object] = {}
    cases = []
    # the code runs in this process: what it sets in the decimal module's context (a program at six
    # significant digits sets getcontext().prec) must end with it, as its sandbox would, not reach the
    # next test's programs
    with decimal.localcontext():
        exec(compile(code, "<solution>", "exec"), namespace)
        fn = namespace[task.entry_point]
        for i, text in enumerate(inputs):
            if hangs is not None and hangs(text):
                cases.append(CaseResult(index=i, status="timeout"))
                cases.extend(CaseResult(index=k, status="missing") for k in range(i + 1, len(inputs)))
                break
            try:
                value = fn(*ast.literal_eval(text))  # type: ignore[operator]
                cases.append(CaseResult(index=i, status="ok", result_repr=repr(value), duration_s=0.001))
            except Exception as exc:
                cases.append(CaseResult(index=i, status="error", error=f"{type(exc).__name__}: {exc}"))
    return SandboxExecuted(
        sample_id=sample_id,
        group_id="g-1",
        task_id=task.task_id,
        run_index=run_index,
        backend=backend,  # type: ignore[arg-type]
        cases=tuple(cases),
        exit_code=None if any(c.status == "timeout" for c in cases) else 0,
        timed_out=any(c.status == "timeout" for c in cases),
        duration_s=0.05,
        probe=plan.digest if plan is not None else None,
        probe_seed=plan.seed if plan is not None else None,
    )


def simulated_reference_probe(
    task: TaskPublished,
    code: str | None = None,
    *,
    seed: str | None = None,
    hangs: Callable[[str], bool] | None = None,
) -> ReferenceExecuted | None:
    """The reference's two runs of the task's probe plan (drawn with ``seed``), as the filter's runner
    would publish them (a reference run carries no seed: the plan's digest names it); ``hangs`` as for
    :func:`simulated_run`."""
    source = code or task.reference
    if source is None:
        return None
    runs = [
        simulated_run(
            task,
            source,
            sample_id=f"{task.task_id}#reference",
            run_index=i,
            probe=True,
            seed=seed,
            hangs=hangs,
        ).model_copy(update={"probe_seed": None})
        for i in range(2)
    ]
    return ReferenceExecuted(
        task_id=task.task_id,
        task_event_id=task.event_id(),
        backend=runs[0].backend,
        execution=runs[0],
        reruns=(runs[1],),
    )


def simulated_verdict(
    task: TaskPublished,
    code: str,
    *,
    seed: str,
    version: str,
    options: CompareOptions,
    probe: SandboxExecuted | None = None,
    reference_hangs: Callable[[str], bool] | None = None,
) -> tuple[str, tuple[str, ...]]:
    """The noise filter's verdict (and its reasons' codes) under filter ``version`` for ``code`` judged on
    the task's cases and, with the probe seed ``seed``, on its probe plan, against the reference's own
    probe runs: every run simulated here (:func:`simulated_run`), but ``probe`` where given (a probe
    run a test has shaped: stopped, flooded, noted); ``reference_hangs`` as :func:`simulated_run`'s
    ``hangs`` for the reference's runs (an input its call cap would end it on in a sandbox)."""
    from streams.noise.config import NoiseConfig
    from streams.noise.filter import decide
    from streams.probe.plan import probe_due, probe_run_index

    first = simulated_run(task, code)
    assert probe_due(task, first)
    if probe is None:
        probe = simulated_run(task, code, run_index=probe_run_index(0), probe=True, seed=seed)
    d = decide(
        task=task,
        code=code,
        executions=[first, probe],
        config=NoiseConfig(version=version),  # type: ignore[arg-type]
        options=options,
        probe_reference=simulated_reference_probe(task, seed=seed, hangs=reference_hangs),
    )
    return d.verdict, tuple(r.code for r in d.reasons)
