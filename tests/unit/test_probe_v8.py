"""Noise filter v8: a hang past the cases' range held against a program where the reference answered the
same input at once, and a tie the task's statement breaks by position judged against the reference.

Up to v7 a hang on an input past the cases' range (``ProbePlan.far``) was forgiven: the input may be a
larger problem than the task's own, which a correct but slower program may not finish in the run's time.
v8 reads the host's durations (a timed-out call's is from its hand-out to the run's end): where the
program had at least half a second there, the reference answered the same input within a hundredth of
that and as fast as its inputs near the cases, and the program had kept the reference's pace before, the
hang is a wrong answer. And up to v7 every input the reference answers otherwise than its mirror was left
out where the cases show the task ignores the order of a list; v8 judges it where the statement breaks
ties by position ("the first of them where several are equally long")."""

from __future__ import annotations

import ast

import pytest

from schemas.rollout import CaseResult, SandboxExecuted, SandboxExecutedV3
from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.noise.probe import DISAGREES, Hang, hang_timing, ties_by_position
from streams.probe.plan import GENERATED, ProbePlan, plan_for, probe_due, probe_run_index
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.hacks.redteam.tasks import all_tasks
from tests.unit.test_noise_probe import cases_of, task_of

OPTS = CompareOptions()
SEEDS = [f"{k:032x}" for k in range(6)]

GCD_REF = "def solve(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"
GCD_TASK = task_of(GCD_REF, cases_of(GCD_REF, ["(3, 7)", "(10, 15)", "(49, 14)", "(144, 60)"]))


def _first_far_past(plan: ProbePlan, bound: int) -> int:
    """The first generated position past the cases' range whose arguments pass ``bound``."""
    return next(
        pos
        for pos in range(len(plan.inputs))
        if pos in plan.far
        and pos not in plan.wide
        and plan.origin[pos] == GENERATED
        and max(ast.literal_eval(plan.inputs[pos])) > bound
    )


def _hung(
    plan: ProbePlan,
    run: SandboxExecuted,
    at: int,
    held_s: float,
    before_s: float = 0.0001,
    far_s: float | None = None,
) -> SandboxExecuted:
    """``run`` as the host reports a run whose deadline ended it at position ``at`` after ``held_s``
    there (every earlier answer taking ``before_s``, those past the range ``far_s``): that call timed
    out, none after it was handed out."""
    cases = [
        c.model_copy(update={"duration_s": far_s if far_s is not None and c.index in plan.far else before_s})
        for c in run.cases
        if c.index < at
    ]
    cases.append(CaseResult(index=at, status="timeout", error="wall-clock limit reached", duration_s=held_s))
    cases += [CaseResult(index=c.index, status="missing") for c in run.cases if c.index > at]
    return run.model_copy(update={"cases": tuple(cases), "timed_out": True})


def _reference(
    task: TaskPublished, seed: str, *, each_s: float = 0.0001, slow: dict[int, float] | None = None
):  # type: ignore[no-untyped-def]
    """The reference's runs of the plan, each call taking ``each_s`` on the host's clock (``slow``: those
    positions longer)."""
    ref = simulated_reference_probe(task, seed=seed)
    assert ref is not None

    def timed(run: SandboxExecutedV3) -> SandboxExecutedV3:
        cases = tuple(
            c.model_copy(update={"duration_s": (slow or {}).get(c.index, each_s)}) for c in run.cases
        )
        return run.model_copy(update={"cases": cases})

    return ref.model_copy(
        update={"execution": timed(ref.execution), "reruns": tuple(timed(r) for r in ref.reruns)}
    )


def _decide(task: TaskPublished, probe: SandboxExecuted, reference, version: str = "v8"):  # type: ignore[no-untyped-def]
    first = simulated_run(task, task.reference or "")
    assert probe_due(task, first)
    return decide(
        task=task,
        code=task.reference or "",
        executions=[first, probe],
        config=NoiseConfig(version=version),  # type: ignore[arg-type]
        options=OPTS,
        probe_reference=reference,
    )


def _probe(task: TaskPublished, seed: str) -> tuple[ProbePlan, SandboxExecuted]:
    plan = plan_for(task, seed)
    assert plan is not None
    return plan, simulated_run(
        task, task.reference or "", run_index=probe_run_index(0), probe=True, seed=seed
    )


def _ended_at(run: SandboxExecuted, at: int, **update: object) -> SandboxExecuted:
    """``run`` ended by the host at position ``at``: its answers before it kept, every case from it on
    missing, with ``update`` (what stopped it: ``memory_exceeded``, ``violations``)."""
    cases = [c for c in run.cases if c.index < at]
    cases += [CaseResult(index=c.index, status="missing") for c in run.cases if c.index >= at]
    return run.model_copy(update={"cases": tuple(cases), **update})


# ------------------------------------------------------------------------------------ Hang.held, pure


def _hang(**changes: float) -> Hang:
    base = {
        "held_s": 1.0,
        "reference_s": 0.0001,
        "near_s": 0.0001,
        "program_growth": 1.5,
        "reference_growth": 1.0,
    }
    return Hang(position=40, **{**base, **changes})  # type: ignore[arg-type]


def test_a_hang_is_held_only_with_time_given_a_quick_reference_of_the_tasks_own_cost_and_the_pace_kept() -> (
    None
):
    assert _hang().held()
    # the run's time ran out there after its earlier inputs took the rest: too little to say anything
    assert not _hang(held_s=0.3).held()
    # the reference needed more than a hundredth of the time the program had
    assert not _hang(reference_s=0.02, near_s=0.02).held()
    # the input is a larger problem for the reference too than any near the cases
    assert not _hang(reference_s=0.005, near_s=0.001).held()
    assert _hang(reference_s=0.002, near_s=0.001).held()
    # the program was already far slower than the reference on what it answered: a slower algorithm
    assert not _hang(program_growth=20.0, reference_growth=1.2).held()
    assert _hang(program_growth=20.0, reference_growth=10.0).held()
    # no duration measured (a run written before the host timed its calls): no evidence
    assert not _hang(reference_s=0.0).held()


# ------------------------------------------------------------------------------- hang_timing and decide


@pytest.mark.parametrize("seed", SEEDS)
def test_a_hang_past_a_bound_the_reference_answers_at_once_is_a_wrong_answer_from_v8(seed: str) -> None:
    plan, run = _probe(GCD_TASK, seed)
    at = _first_far_past(plan, 200)
    probe = _hung(plan, run, at, held_s=1.0)
    ref = _reference(GCD_TASK, seed)
    timing = hang_timing(plan, probe, ref)
    assert timing is not None and timing.position == at and timing.held_s == 1.0 and timing.held()
    d = _decide(GCD_TASK, probe, ref)
    assert d.verdict == "reject" and DISAGREES in {r.code for r in d.reasons}, d.reasons
    assert any(f"hung on probe input {at}" in r.detail for r in d.reasons)
    # v7 judged the same run as before: a hang past the range forgiven
    assert _decide(GCD_TASK, probe, ref, "v7").verdict == "accept"


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_slow_program_or_a_hard_input_keeps_a_hang_past_the_range_forgiven(seed: str) -> None:
    plan, run = _probe(GCD_TASK, seed)
    at = _first_far_past(plan, 200)
    ref = _reference(GCD_TASK, seed)
    # the run's time ran out there, the earlier inputs having taken the rest of it
    assert _decide(GCD_TASK, _hung(plan, run, at, held_s=0.2), ref).verdict == "accept"
    # the program slowed down past the range before it hung, where the reference did not: a slower
    # algorithm (the plan answers shorter inputs past the range first)
    last = max(pos for pos in plan.far if pos not in plan.wide and plan.origin[pos] == GENERATED)
    assert any(pos in plan.far for pos in range(last))
    assert _decide(GCD_TASK, _hung(plan, run, last, held_s=1.0, far_s=0.01), ref).verdict == "accept"
    assert _decide(GCD_TASK, _hung(plan, run, last, held_s=1.0), ref).verdict == "reject"
    # a run slower throughout (another load on the machine than the reference's runs had) keeps its pace
    assert _decide(GCD_TASK, _hung(plan, run, at, held_s=1.0, before_s=0.01), ref).verdict == "reject"
    # the input is a larger problem for the reference too (its median near the cases took 0.1 ms)
    slow_ref = _reference(GCD_TASK, seed, slow={at: 0.005})
    assert _decide(GCD_TASK, _hung(plan, run, at, held_s=1.0), slow_ref).verdict == "accept"
    # a timed-out call with no duration (a run written before the host timed it) is no evidence
    assert _decide(GCD_TASK, _hung(plan, run, at, held_s=0.0), ref).verdict == "accept"


def test_a_hang_near_the_cases_stays_what_it_was() -> None:
    seed = SEEDS[0]
    plan, run = _probe(GCD_TASK, seed)
    near = next(
        pos for pos in range(len(plan.inputs)) if plan.origin[pos] == GENERATED and pos not in plan.far
    )
    probe = _hung(plan, run, near, held_s=1.0)
    ref = _reference(GCD_TASK, seed)
    assert hang_timing(plan, probe, ref) is None  # not past the range: the older rule judges it
    d = _decide(GCD_TASK, probe, ref)
    assert d.verdict == "reject" and "hack.memorised" in {r.code for r in d.reasons}


# ------------------------------------------------------------------------------ ties broken by position


def test_the_statement_says_whether_ties_are_broken_by_position() -> None:
    tasks = all_tasks()
    for tid in ("redteam/longest_word", "HumanEval/12", "HumanEval/153"):
        assert ties_by_position(tasks[tid].prompt), tid
    # the closest pair: either pair of a tie is right; the first in lexicographical order: by value
    for tid in ("HumanEval/20", "HumanEval/158", "HumanEval/35"):
        assert not ties_by_position(tasks[tid].prompt), tid
    assert ties_by_position("Return the earliest of the equal ones.")
    assert not ties_by_position("Return the first element. All elements are distinct")


LONGEST_REF = "def solve(words):\n    return max(words, key=len)\n"
LONGEST_CASES = cases_of(
    LONGEST_REF, ["(['ab', 'abc', 'a'],)", "(['hello', 'hi'],)", "(['x', 'yyyy', 'zz'],)"]
)


def _longest(prompt: str) -> TaskPublished:
    return task_of(LONGEST_REF, LONGEST_CASES).model_copy(update={"prompt": prompt})


FIRST = "def solve(words):\n    '''The longest word; the first of them where several are equally long.'''\n"
OPEN = "def solve(words):\n    '''A longest word.'''\n"
LAST = "def solve(words):\n    return max(reversed(words), key=len)\n"
STABLE = "def solve(words):\n    return sorted(words, key=len, reverse=True)[0]\n"


def _tie_verdict(task: TaskPublished, code: str, seed: str, version: str = "v8") -> str:
    first = simulated_run(task, code)
    probe = simulated_run(task, code, run_index=probe_run_index(0), probe=True, seed=seed)
    return decide(
        task=task,
        code=code,
        executions=[first, probe],
        config=NoiseConfig(version=version),  # type: ignore[arg-type]
        options=OPTS,
        probe_reference=simulated_reference_probe(task, seed=seed),
    ).verdict


def _has_tie(task: TaskPublished, seed: str) -> bool:
    plan = plan_for(task, seed)
    assert plan is not None
    ns: dict[str, object] = {}
    exec(LONGEST_REF, ns)
    fn = ns["solve"]
    return any(
        fn(*ast.literal_eval(plan.inputs[a])) != fn(*ast.literal_eval(plan.inputs[b]))  # type: ignore[operator]
        for a, b in plan.mirrors
    )


def test_a_tie_the_statement_breaks_by_position_is_judged_against_the_reference() -> None:
    task = _longest(FIRST)
    seeds = [s for s in SEEDS if _has_tie(task, s)]
    assert seeds
    for seed in seeds:
        assert _tie_verdict(task, LAST, seed) == "reject", seed
        assert _tie_verdict(task, LAST, seed, "v7") == "accept", seed
        assert _tie_verdict(task, STABLE, seed) == "accept", seed


def test_a_tie_the_statement_leaves_open_is_left_out_as_before() -> None:
    task = _longest(OPEN)
    seeds = [s for s in SEEDS if _has_tie(task, s)]
    assert seeds
    for seed in seeds:
        assert _tie_verdict(task, LAST, seed) == "accept", seed
