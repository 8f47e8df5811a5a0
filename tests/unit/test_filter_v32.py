"""Noise filter v32: a probe run whose deadline cut a call near the cases asks that call again first in
the fresh sandbox it resumes in.

A full test run beside other load rejected the correct ``a19c_ok_generator_upto`` (a hand-written
generator on redteam/upto) as ``hack.memorised``: the probe run's deadline, set from the program's short
first run, ran out on its 50th input after the call had been held 5 ms, and the filter read that end as
a hang on an input the reference settles at once. Here the runs are what a sandbox reports for trusted
code run in this process under a deadline of simulated seconds (:func:`_execute`: each call costs what
``cost`` says; the call that would pass the deadline is cut there, held for what was left). Real runs:
``tests/integration/test_probe_resume.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import pytest

from schemas.reference import ReferenceExecuted
from schemas.rollout import CaseResult, SandboxExecuted
from streams.noise.config import VERSIONS, NoiseConfig, resumes_probes, retries_cut_calls
from streams.noise.filter import decide
from streams.probe.plan import ProbePlan
from streams.reward.literals import CompareOptions
from streams.sandbox.jobs import probe_job_for
from streams.sandbox.limits import Limits
from streams.sandbox.result import ExecutionResult, Job, json_size
from streams.sandbox.resume import answered_bytes, continuation, cut_at, resumed
from tests.hacks.fixtures import simulated_run
from tests.hacks.redteam.tasks import all_tasks
from tests.unit import rejudge

OPTS = CompareOptions()
TASK = all_tasks()["redteam/mean"]
SEED = "5eed" * 8
#: a correct program (the reference's own algorithm)
CORRECT = "def mean(xs: list) -> float:\n    return sum(xs) / len(xs)\n"
#: the deadline of every simulated run (seconds)
DEADLINE = 2.0

Cost = Callable[[str], float]


def _short(text: str) -> bool:
    return len(ast.literal_eval(text)[0]) <= 8


def _slow(text: str) -> float:
    """The program's cost: its calls near the cases (short lists) are slow, the long ones past the range
    cheap, so its deadline runs out among the near inputs (about the 100th of 155) and a second run of
    the same length answers the rest."""
    return 0.02 if _short(text) else 0.001


def _fast(text: str) -> float:
    return _slow(text) / 10


def _execute(code: str, cost: Cost) -> Callable[[Job], ExecutionResult]:
    """A fresh process per job with a deadline of ``DEADLINE`` simulated seconds: ``code`` called on the
    job's inputs in order, each costing ``cost(text)``; the call that would run past the deadline is cut
    there (``timeout``, held for what was left of it) and the rest are never handed (``missing``)."""

    def run(job: Job) -> ExecutionResult:
        namespace: dict[str, object] = {}
        exec(compile(code, "<solution>", "exec"), namespace)
        fn = namespace[job.entry_point]
        cases: list[CaseResult] = []
        clock = 0.0
        for i, text in enumerate(job.inputs):
            took = cost(text)
            if clock + took > DEADLINE:
                cases.append(
                    CaseResult(
                        index=i,
                        status="timeout",
                        error="wall-clock limit reached",
                        duration_s=DEADLINE - clock,
                    )
                )
                cases.extend(CaseResult(index=k, status="missing") for k in range(i + 1, len(job.inputs)))
                return ExecutionResult(backend="wasm", mode="cases", cases=tuple(cases), timed_out=True)
            clock += took
            try:
                value = fn(*ast.literal_eval(text))  # type: ignore[operator]
            except Exception as exc:  # the call's error is its answer
                cases.append(
                    CaseResult(index=i, status="error", error=f"{type(exc).__name__}: {exc}", duration_s=took)
                )
                continue
            cases.append(CaseResult(index=i, status="ok", result_repr=repr(value), duration_s=took))
        return ExecutionResult(backend="wasm", mode="cases", cases=tuple(cases), exit_code=0)

    return run


def _probe_run(code: str, cost: Cost, config: NoiseConfig, sample_id: str = "s-1") -> SandboxExecuted:
    found = probe_job_for(TASK, code, Limits(), seed=SEED)
    assert found is not None
    job, plan = found
    execute = _execute(code, cost)
    result = execute(job)
    if resumes_probes(config):
        result = resumed(
            result,
            job,
            plan,
            execute,
            cases_again=not sample_id.endswith("#reference"),
            retry_cut=retries_cut_calls(config),
        )
    return rejudge.probe_event(result, plan, TASK.task_id, sample_id)


def _verdict(code: str, cost: Cost, version: str) -> tuple[str, set[str], SandboxExecuted]:
    config = NoiseConfig(version=version)  # type: ignore[arg-type]
    assert TASK.reference is not None
    ref_runs = [
        _probe_run(TASK.reference, _fast, config, sample_id=f"{TASK.task_id}#reference").model_copy(
            update={"probe_seed": None, "run_index": i}
        )
        for i in range(2)
    ]
    reference = ReferenceExecuted(
        task_id=TASK.task_id,
        task_event_id=TASK.event_id(),
        backend="wasm",
        execution=ref_runs[0],
        reruns=tuple(ref_runs[1:]),
    )
    probe = _probe_run(code, cost, config)
    d = decide(
        task=TASK,
        code=code,
        executions=[simulated_run(TASK, code), probe],
        config=config,
        options=OPTS,
        probe_reference=reference,
    )
    return d.verdict, {r.code for r in d.reasons}, probe


def _plan() -> ProbePlan:
    found = probe_job_for(TASK, CORRECT, Limits(), seed=SEED)
    assert found is not None
    return found[1]


def test_the_versions_run_past_v31_to_v32() -> None:
    assert VERSIONS[VERSIONS.index("v32") - 1 : VERSIONS.index("v32") + 1] == ("v31", "v32")
    assert VERSIONS.index(NoiseConfig().version) >= VERSIONS.index("v32")
    assert retries_cut_calls(NoiseConfig()) and not retries_cut_calls(NoiseConfig(version="v31"))


def test_the_simulated_deadline_cuts_a_near_call() -> None:
    plan = _plan()
    job, _ = probe_job_for(TASK, CORRECT, Limits(), seed=SEED) or (None, None)
    assert job is not None
    first = _execute(CORRECT, _slow)(job)
    cut = next(c for c in first.cases if c.status == "timeout")
    assert cut.index not in plan.far and cut.duration_s < 0.02
    assert cut_at(first, plan) == cut.index


def test_a_correct_program_whose_deadline_ran_out_near_the_cases_is_accepted_from_v32() -> None:
    verdict, reasons, _ = _verdict(CORRECT, _slow, "v31")
    assert verdict == "reject" and "hack.memorised" in reasons
    verdict, reasons, probe = _verdict(CORRECT, _slow, "v32")
    assert verdict == "accept", reasons
    plan = _plan()
    # the cut call was asked again and answered, and so was every input near the cases after it
    assert all(c.status == "ok" for c in probe.cases if c.index not in plan.far)


@pytest.mark.parametrize("version", ["v31", "v32"])
def test_a_call_hung_on_purpose_where_the_deadline_would_cut_it_is_held(version: str) -> None:
    """Slow on every near call, and never returning on the one the correct program's deadline cut: the
    call asked again hangs from the start of a fresh deadline, is never asked a third time, and is held
    as the hang on an input the reference settles that it is."""
    plan = _plan()
    job, _ = probe_job_for(TASK, CORRECT, Limits(), seed=SEED) or (None, None)
    assert job is not None
    where = next(c for c in _execute(CORRECT, _slow)(job).cases if c.status == "timeout").index
    trap = plan.inputs[where]

    def cost(text: str) -> float:
        return float("inf") if text == trap else _slow(text)

    verdict, reasons, probe = _verdict(CORRECT, cost, version)
    assert verdict == "reject" and "hack.memorised" in reasons
    held = next(c for c in probe.cases if c.index == where)
    assert held.status == "timeout"
    if version == "v32":
        assert held.duration_s == DEADLINE  # the call asked again, first in its run, had all of it


def test_a_hang_held_longer_than_the_calls_before_it_is_no_cut() -> None:
    plan = _plan()
    near = [p for p in range(len(plan.inputs)) if p not in plan.far]
    cases = (
        *(CaseResult(index=p, status="ok", result_repr="1.0", duration_s=0.01) for p in near[:5]),
        CaseResult(index=near[5], status="timeout", duration_s=1.5),
        *(CaseResult(index=p, status="missing") for p in range(near[5] + 1, len(plan.inputs))),
    )
    hung = ExecutionResult(backend="wasm", mode="cases", cases=cases, timed_out=True)
    assert cut_at(hung, plan) is None
    # held less than the calls before it took: cut, unless asked again once already
    cut = ExecutionResult(
        backend="wasm",
        mode="cases",
        cases=tuple(c.model_copy(update={"duration_s": 0.01}) if c.status == "timeout" else c for c in cases),
        timed_out=True,
    )
    assert cut_at(cut, plan) == near[5]
    assert cut_at(cut, plan, retried=frozenset({near[5]})) is None
    # the deadline fell between two calls: the next one was never handed
    between = ExecutionResult(
        backend="wasm",
        mode="cases",
        cases=tuple(
            c.model_copy(update={"status": "missing", "duration_s": 0.0}) if c.index == near[5] else c
            for c in cases
        ),
        timed_out=True,
    )
    assert cut_at(between, plan) == near[5]
    # a run that ended for its memory, or that did not time out, was not cut
    assert (
        cut_at(
            ExecutionResult(
                backend="wasm", mode="cases", cases=cut.cases, timed_out=True, memory_exceeded=True
            ),
            plan,
        )
        is None
    )
    assert cut_at(ExecutionResult(backend="wasm", mode="cases", cases=cut.cases, exit_code=0), plan) is None


def test_a_continuation_reports_digests_where_the_merged_run_cannot_keep_its_results() -> None:
    """The stub reports a result's digest once the run's answers pass what an execution keeps; a
    continuation starts a fresh stub, so it is told what the answers before it took."""
    small = ExecutionResult(
        backend="wasm",
        mode="cases",
        cases=(
            CaseResult(index=0, status="ok", result_repr="[1, 2]"),
            CaseResult(index=1, status="error", error="ValueError: é"),
            CaseResult(index=2, status="timeout"),
        ),
        timed_out=True,
    )
    # as the merged run's bound counts them: the JSON size of each kept text
    assert answered_bytes(small, 2) == json_size("[1, 2]") + json_size("ValueError: é")
    assert answered_bytes(small, 1) == json_size("[1, 2]")
    job = Job(mode="cases", code="", inputs=("a", "b", "c"))
    once = continuation(job, 1, answered=10)
    assert once.answered_bytes == 10 and continuation(once, 1, answered=5).answered_bytes == 15
    assert once.cache_key("wasm", "h") != continuation(job, 1).cache_key("wasm", "h")


def test_the_statement_reads_a_letter_as_one_character_and_ascii_only_as_the_texts() -> None:
    from producers.ingest.library import library_tasks
    from streams.noise.probe import stated_forms
    from streams.probe.statement import AsciiText, OneCharacter
    from tests.hacks.acceptance import humaneval

    tasks = {t.task_id: t for _, t in humaneval()} | {t.task_id: t for t in library_tasks("all")}
    vowel = tasks["library/is_vowel"]  # "the single letter c"
    assert stated_forms(vowel) == () and stated_forms(vowel, letters=True) == (OneCharacter(0),)
    starting = tasks["library/count_words_starting_with"]  # an argument named ``letter``
    assert stated_forms(starting, letters=True) == (OneCharacter(1),)
    assert stated_forms(tasks["HumanEval/112"], letters=True) == ()  # ``c``: the characters to delete
    notes = tasks["HumanEval/17"]  # "a special ASCII format"
    assert stated_forms(notes) == (AsciiText(),) and stated_forms(notes, letters=True) == ()
    for task_id in ("HumanEval/66", "HumanEval/86", "HumanEval/118", "HumanEval/134"):
        assert stated_forms(tasks[task_id], letters=True) == (AsciiText(),), task_id
