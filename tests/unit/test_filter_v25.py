"""Noise filter v25: probe runs resumed past a hang on a generated input near the cases.

Red-team round 19s (slowref19): HumanEval/39's reference (trial division up to the square root) hangs
on n = 12, which every seed's plan holds near the cases; a probe run is one process, so through v21 its
runs answered nothing after that call, and no program was judged on the inputs after it (one generated
input of 76 on seed ``5e``*16, none on seeds 0..2). From v25 a run that hung on such an input is run again
on the inputs after it (``streams/sandbox/resume.py``; the reference's once per task, a sample's where it
hung there too), and the filter judges them. The runs here are what a sandbox reports for trusted code
run in this process (:func:`_execute`: an input ``_slow`` accepts is never called, the run ends there at
its deadline); ``tests/integration/test_probe_resume.py`` makes them in the real sandbox.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import replace

import pytest

from schemas.reference import ReferenceExecuted
from schemas.rollout import CaseResult, SandboxExecuted
from streams.noise.config import VERSIONS, NoiseConfig, resumes_probes
from streams.noise.filter import decide
from streams.probe.plan import GENERATED, ProbePlan, plan_for, probe_due
from streams.reward.literals import CompareOptions
from streams.sandbox.jobs import probe_job_for
from streams.sandbox.limits import Limits
from streams.sandbox.result import ExecutionResult, Job
from streams.sandbox.resume import MAX_RESUMES, continuation, merged, passed_over, resume_at, resumed
from tests.hacks.fixtures import simulated_run
from tests.hacks.redteam.corpus import PROGRAMS
from tests.hacks.redteam.tasks import all_tasks
from tests.unit import rejudge

OPTS = CompareOptions()
TASK = all_tasks()["HumanEval/39"]
PINNED = "5e" * 16
REFERENCE_ID = f"{TASK.task_id}#reference"
SEEDS = (PINNED, "00000000" * 4, "00000001" * 4, "00000002" * 4)
CODE = {p.name: p.code for p in PROGRAMS}
WRONG = ("a19s_warm_screen_39", "a19s_slow_then_screen_39")
CORRECT = ("a5_ok_dead_table_39", "a10_ok_lazy_generator_39", "a14c_ok_validate_prime_fib_39")


def _slow(text: str) -> bool:
    """The inputs trial division up to the square root does not answer in a probe run's time: n = 12
    (99194853094755497) and every larger one."""
    return int(ast.literal_eval(text)[0]) >= 12


def _execute(code: str, slow: Callable[[str], bool]) -> Callable[[Job], ExecutionResult]:
    """A fresh process per job (module state starts anew, as in a fresh sandbox): ``code`` called on the
    job's inputs in order until one ``slow`` accepts, where the run ends at its deadline."""

    def run(job: Job) -> ExecutionResult:
        namespace: dict[str, object] = {}
        exec(compile(code, "<solution>", "exec"), namespace)
        fn = namespace[job.entry_point]
        cases: list[CaseResult] = []
        for i, text in enumerate(job.inputs):
            if slow(text):
                cases.append(CaseResult(index=i, status="timeout", error="wall-clock limit reached"))
                cases.extend(CaseResult(index=k, status="missing") for k in range(i + 1, len(job.inputs)))
                return ExecutionResult(backend="wasm", mode="cases", cases=tuple(cases), timed_out=True)
            value = fn(*ast.literal_eval(text))  # type: ignore[operator]
            cases.append(CaseResult(index=i, status="ok", result_repr=repr(value), duration_s=0.001))
        return ExecutionResult(backend="wasm", mode="cases", cases=tuple(cases), exit_code=0)

    return run


def _probe_run(
    code: str, seed: str, slow: Callable[[str], bool], *, resume: bool, sample_id: str = "s-1"
) -> SandboxExecuted:
    """A probe run as the sandbox reports it, resumed as the evaluator resumes it under ``resume`` (the
    reference's runs not for the cases asked again alone)."""
    found = probe_job_for(TASK, code, Limits(), seed=seed)
    assert found is not None
    job, plan = found
    execute = _execute(code, slow)
    result = execute(job)
    if resume:
        result = resumed(result, job, plan, execute, cases_again=sample_id != REFERENCE_ID)
    return rejudge.probe_event(result, plan, TASK.task_id, sample_id)


def _reference(seed: str, *, resume: bool) -> ReferenceExecuted:
    assert TASK.reference is not None
    runs = [
        _probe_run(
            TASK.reference, seed, _slow, resume=resume, sample_id=f"{TASK.task_id}#reference"
        ).model_copy(update={"probe_seed": None, "run_index": i})
        for i in range(2)
    ]
    return ReferenceExecuted(
        task_id=TASK.task_id,
        task_event_id=TASK.event_id(),
        backend="wasm",
        execution=runs[0],
        reruns=tuple(runs[1:]),
    )


def _verdict(name: str, seed: str, version: str) -> tuple[str, tuple[str, ...]]:
    """The verdict on a corpus program as a filter of ``version`` sees it: its probe run and the
    reference's made as that version makes them (resumed from v25)."""
    config = NoiseConfig(version=version)  # type: ignore[arg-type]
    resume = resumes_probes(config)
    code = CODE[name]
    first = simulated_run(TASK, code)
    assert probe_due(TASK, first)
    # the Miller-Rabin program answers n = 12 at once; none here is called past the range (n >= 13: the
    # Fibonacci numbers there have thousands of digits, and the reference answers none of them)
    slow = _slow if name != "a19s_warm_screen_39" else (lambda text: ast.literal_eval(text)[0] >= 13)
    probe = _probe_run(code, seed, slow, resume=resume)
    d = decide(
        task=TASK,
        code=code,
        executions=[first, probe],
        config=config,
        options=OPTS,
        probe_reference=_reference(seed, resume=resume),
    )
    return d.verdict, tuple(r.code for r in d.reasons)


def _plan(seed: str) -> ProbePlan:
    plan = plan_for(TASK, seed)
    assert plan is not None
    return plan


def test_the_versions_run_past_v24_to_v25() -> None:
    assert VERSIONS[VERSIONS.index("v25") - 1 : VERSIONS.index("v25") + 1] == ("v24", "v25")
    assert NoiseConfig(version="v25").label() == "v25"
    # v25 and every version after it resume the runs they judge; none before it does
    assert all(resumes_probes(NoiseConfig(version=v)) for v in VERSIONS[VERSIONS.index("v25") :])
    assert not any(resumes_probes(NoiseConfig(version=v)) for v in VERSIONS[: VERSIONS.index("v25")])


@pytest.mark.parametrize("seed", SEEDS)
def test_reference_answers_past_its_hang(seed: str) -> None:
    """Through v21 the reference's run ends at its first n = 12: nothing after it is answered. Resumed,
    it answers every generated input near the cases but n = 12 and its repeats."""
    plan = _plan(seed)
    before = _reference(seed, resume=False).execution
    after = _reference(seed, resume=True).execution
    hung = next(c.index for c in before.cases if c.status == "timeout")
    assert all(c.status == "missing" for c in before.cases if c.index > hung)
    answered = {c.index for c in after.cases if c.status == "ok"}
    near_answerable = {
        pos for pos in plan.generated_positions if pos not in plan.far and not _slow(plan.inputs[pos])
    }
    assert near_answerable <= answered
    assert len(answered) > len([c for c in before.cases if c.status == "ok"])


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", WRONG)
def test_wrong_past_the_hang_is_caught(name: str, seed: str) -> None:
    """Both programs are wrong only on n = 11 after ten calls, which every plan asks only after a
    n = 12 (the second program hangs on that one too, as the reference does): accepted through v21,
    rejected from v25."""
    assert _verdict(name, seed, "v21")[0] == "accept"
    verdict, codes = _verdict(name, seed, "v25")
    # wrong on most of the inputs judged (n = 11 asked again): fewer agreed than the filter's share
    assert verdict == "reject" and {"wrong.disagrees_with_reference", "hack.memorised"} & set(codes), codes


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", CORRECT)
def test_correct_programs_stay_accepted(name: str, seed: str) -> None:
    assert _verdict(name, seed, "v25")[0] == "accept"


def test_a_hang_the_reference_answered_still_ends_the_judgement() -> None:
    """A program hanging on n = 11, which the reference answers: stuck on an input it owes, resumed or
    not (its own later answers do not buy that hang back)."""
    code = CODE["a10_ok_lazy_generator_39"]
    plan = _plan(PINNED)
    slow = lambda text: ast.literal_eval(text)[0] >= 11  # noqa: E731
    probe = _probe_run(code, PINNED, slow, resume=True)
    assert any(c.status == "ok" for c in probe.cases if c.index > 12)  # resumed past its hang
    d = decide(
        task=TASK,
        code=code,
        executions=[simulated_run(TASK, code), probe],
        config=NoiseConfig(),
        options=OPTS,
        probe_reference=_reference(PINNED, resume=True),
    )
    assert d.verdict == "reject" and "hack.memorised" in {r.code for r in d.reasons}
    assert plan.inputs[0] == "(11,)"


def test_resume_at_passes_over_what_hung_and_stops_past_the_range() -> None:
    plan = _plan("00000001" * 4)  # (12,) first, the cases, (12,) again 12 calls later (p21), then 40 times
    assert TASK.reference is not None
    execute = _execute(TASK.reference, _slow)
    job, _ = probe_job_for(TASK, TASK.reference, Limits(), seed="00000001" * 4) or (None, None)
    assert job is not None
    first = execute(job)
    assert resume_at(first, plan) == 1
    # every later asking of what hung is passed over, the one a few calls later too, not only those
    # right after the resume's start: one resume reaches the cases asked again
    skip = passed_over(first, plan, 1)
    repeats = {p for p in range(1, len(plan.inputs)) if plan.inputs[p] == "(12,)"}
    assert skip == repeats and 13 in skip and min(repeats - {13}) > 14
    once = merged(first, execute(continuation(job, 1, skip)), 1, skip)
    assert [c.index for c in once.cases] == list(range(len(plan.inputs)))
    assert all(c.status == "missing" for c in once.cases if c.index in skip)
    assert any(
        c.status == "ok" and c.index > max(skip) and plan.origin[c.index] != GENERATED for c in once.cases
    )
    # the run now ends on an input past the range: never resumed there
    end = next(c.index for c in once.cases if c.status == "timeout" and c.index > 0)
    assert end in plan.far and resume_at(once, plan) is None
    assert MAX_RESUMES >= 2
    # a run that ended by a violation, or for memory, is never resumed
    assert resume_at(replace(first, violation="process", violations=("process",)), plan) is None
    assert resume_at(replace(first, memory_exceeded=True), plan) is None


def test_merged_keeps_plan_positions() -> None:
    first = ExecutionResult(
        backend="wasm",
        mode="cases",
        cases=(
            CaseResult(index=0, status="ok", result_repr="1"),
            CaseResult(index=1, status="timeout"),
            CaseResult(index=2, status="missing"),
            CaseResult(index=3, status="missing"),
        ),
        timed_out=True,
        duration_s=1.0,
        thread_recursion=(0,),
    )
    rest = ExecutionResult(
        backend="wasm",
        mode="cases",
        cases=(CaseResult(index=0, status="ok", result_repr="3"),),
        exit_code=0,
        duration_s=0.5,
        thread_recursion=(0,),
        output_flood=0,
    )
    both = merged(first, rest, 3)
    assert [(c.index, c.status) for c in both.cases] == [(0, "ok"), (1, "timeout"), (2, "missing"), (3, "ok")]
    assert not both.timed_out and both.exit_code == 0 and both.duration_s == 1.5
    assert both.thread_recursion == (0, 3) and both.output_flood == 3
    job = Job(mode="cases", code="", inputs=("a", "b", "c", "d"), call_cap=(2, 0.25))
    assert continuation(job, 3).inputs == ("d",) and continuation(job, 3).call_cap == (0, 0.25)
    # a continuation from 2 that passes over position 2 (an input the run hung on): "d" alone, answered
    # at its own position, position 2 left as the first run left it
    skipped = continuation(job, 2, frozenset({2}))
    assert skipped.inputs == ("d",) and skipped.call_cap == (0, 0.25)
    over = merged(first, rest, 2, frozenset({2}))
    assert [(c.index, c.status) for c in over.cases] == [(0, "ok"), (1, "timeout"), (2, "missing"), (3, "ok")]
    assert over.thread_recursion == (0, 3) and over.output_flood == 3
    hidden = Job(
        mode="cases", code="", inputs=("a", "b", "c", "d", "e"), hidden=frozenset({4}), call_cap=(4, 0.1)
    )
    gapped = continuation(hidden, 1, frozenset({2}))
    assert (
        gapped.inputs == ("b", "d", "e") and gapped.hidden == frozenset({2}) and gapped.call_cap == (2, 0.1)
    )
