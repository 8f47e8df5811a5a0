"""Probe plans of tasks judged by a ``check`` alone: made from the check's own literal calls of the
candidate, judged against the reference; case plans are untouched (runs simulated in-process; the
sandbox's runs of the red-team corpus's check-mode programs are in tests/hacks/test_redteam.py)."""

from __future__ import annotations

import ast

import pytest

from producers.ingest.humaneval import humaneval_tasks
from schemas.rollout import SandboxExecuted
from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.noise.filter import Decision, decide
from streams.probe.plan import (
    CHECK_PLAN_VERSION,
    GENERATED,
    PLAN_VERSION,
    SEEDED_CHECK_PLAN_VERSION,
    _plan,
    check_calls,
    plan_for,
    probe_due,
    probe_run_index,
    recorded_plan,
)
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import execution, simulated_reference_probe, simulated_run

OPTS = CompareOptions()
CFG = NoiseConfig()

BELOW_REF = "def below(l, t):\n    return all(x < t for x in l)\n"
BELOW_CHECK = """
def check(candidate):
    assert candidate([1, 2, 4, 10], 100)
    assert not candidate([1, 20, 4, 10], 5)
    assert candidate([1, 20, 4, 10], 21)
    assert candidate([1, 20, 4, 10], 22)
    assert candidate([1, 8, 4, 10], 11)
    assert not candidate([1, 8, 4, 10], 10)
"""
EVENS_REF = "def evens(l):\n    out = list(l)\n    out[::2] = sorted(l[::2])\n    return out\n"
EVENS_CHECK = """
def check(candidate):
    assert tuple(candidate([1, 2, 3])) == tuple([1, 2, 3])
    assert candidate([5, 3, -5, 2, -3, 3, 9, 0, 123, 1, -10]) == [-10, 3, -5, 2, -3, 3, 5, 0, 9, 1, 123]
    assert evens([5, 8, -12, 4, 23, 2, 3, 11, 12, -10]) == [-12, 8, 3, 4, 5, 2, 12, 11, 23, -10]
    assert candidate([4, 1, 3, 2]) == evens([4, 1, 3, 2])
    for x in range(3):
        assert candidate([x, 1]) == [x, 1]
"""


def check_task(entry_point: str, reference: str | None, check: str) -> TaskPublished:
    return TaskPublished(
        task_id=f"t/{entry_point}",
        prompt=f"def {entry_point}(*args):\n    '''A task.'''\n",
        entry_point=entry_point,
        check=check,
        reference=reference,
    )


BELOW = check_task("below", BELOW_REF, BELOW_CHECK)
EVENS = check_task("evens", EVENS_REF, EVENS_CHECK)


def passed_check(task: TaskPublished) -> SandboxExecuted:
    """A first run whose check passed (one record, ``True``)."""
    return execution(["True"], mode="check", task_id=task.task_id)


def verdict_of(task: TaskPublished, code: str) -> Decision:
    first = passed_check(task)
    runs = [first]
    if probe_due(task, first):
        runs.append(simulated_run(task, code, run_index=probe_run_index(0), probe=True))
    ref = simulated_reference_probe(task)
    return decide(task=task, code=code, executions=runs, config=CFG, options=OPTS, probe_reference=ref)


def codes(decision: Decision) -> set[str]:
    return {r.code for r in decision.reasons}


def test_the_seeds_are_the_checks_literal_calls_whose_answer_it_pins() -> None:
    assert check_calls(BELOW_CHECK, "below") == (
        "([1, 2, 4, 10], 100)",
        "([1, 20, 4, 10], 5)",
        "([1, 20, 4, 10], 21)",
        "([1, 20, 4, 10], 22)",
        "([1, 8, 4, 10], 11)",
        "([1, 8, 4, 10], 10)",
    )
    # calls by the entry point's name are the candidate's too (the check's namespace binds it), each
    # input once; a call with a computed argument is not a seed
    assert check_calls(EVENS_CHECK, "evens") == (
        "([1, 2, 3],)",
        "([5, 3, -5, 2, -3, 3, 9, 0, 123, 1, -10],)",
        "([5, 8, -12, 4, 23, 2, 3, 11, 12, -10],)",
        "([4, 1, 3, 2],)",
    )
    # an answer the check only measures, or compares with a tolerance, may be met by another answer
    loose = """
def check(candidate):
    assert sorted(candidate([3, 1, 2])) == [1, 2, 3]
    assert len(candidate([1, 2])) == 2
    assert abs(candidate([0.5]) - 0.25) < 1e-6
    assert candidate([7]) in ([7], (7,))
    assert set(candidate([9, 9])) == {9}
    assert candidate([8], key=len) == [8]
    assert candidate(*[[1]]) == [1]
    assert candidate([2, 0**0]) is None
"""
    assert check_calls(loose, "f") == ()
    assert check_calls("def check(c):\n    assert c([1]) is not None and True\n", "f") == ()
    assert check_calls("def check(c):\n    assert c([1]) != [2]\n", "f") == ()
    assert check_calls("def check(c):\n    assert c([1]) is None\n", "f") == ("([1],)",)
    assert check_calls("not python (", "f") == () and check_calls("x = 1\n", "f") == ()


def test_a_check_plan_starts_from_the_calls_in_another_order_and_is_judged_by_the_reference() -> None:
    plan = plan_for(BELOW)
    assert plan is not None and plan == plan_for(BELOW) and plan.version == CHECK_PLAN_VERSION
    assert plan.source == "check" and plan.seeds == 6
    seeds = check_calls(BELOW_CHECK, "below")
    assert sorted(plan.inputs[:6]) == sorted(seeds) and plan.inputs[:6] != seeds
    # every position is compared with the reference; generated inputs name the seed positions they
    # were made from, and are new
    assert all(o == GENERATED for o in plan.origin) and plan.generated_positions == tuple(
        range(len(plan.inputs))
    )
    assert len(plan.inputs) >= 6 + 16 and not set(plan.inputs[6:]) & set(seeds)
    assert all(p == () for p in plan.parents[:6])
    assert all(p and all(q < 6 for q in p) for p in plan.parents[6:])
    # whole-number arguments stay within the range the calls use (the threshold: 5..100)
    for text in plan.inputs[6:]:
        values, t = ast.literal_eval(text)
        assert isinstance(values, list) and 5 <= t <= 100


def test_no_check_plan_without_a_reference_or_a_literal_call() -> None:
    assert plan_for(BELOW.model_copy(update={"reference": None})) is None
    assert (
        plan_for(
            check_task("f", "def f(x):\n    return x\n", "def check(c):\n    assert c(len('ab')) == 2\n")
        )
        is None
    )


def test_a_check_plan_keeps_the_relations_the_calls_it_comes_from_show() -> None:
    grids = """
def check(candidate):
    assert candidate([[1, 2, 3], [4, 5, 6], [7, 8, 9]], 3) == [1, 2, 1]
    assert candidate([[5, 9, 3], [4, 1, 6], [7, 8, 2]], 1) == [1]
    assert candidate([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]], 4) == [1, 2, 1, 2]
    assert candidate([[1, 3], [3, 2]], 10) == [1, 3, 1, 3, 1, 3, 1, 3, 1, 3]
"""
    task = check_task("path", "def path(grid, k):\n    return [1] * k\n", grids)
    plan = plan_for(task)
    assert plan is not None
    permutation_seeds = {k for k, text in enumerate(plan.inputs[: plan.seeds]) if "[3, 2]]" not in text}
    for pos in range(plan.seeds, len(plan.inputs)):
        if not set(plan.parents[pos]) <= permutation_seeds:
            continue
        grid, _ = ast.literal_eval(plan.inputs[pos])
        flat = sorted(x for row in grid for x in row)
        assert flat == list(range(1, len(flat) + 1)) and all(len(row) == len(grid) for row in grid)


def test_a_seeded_check_plan_keeps_1_to_n_where_most_calls_show_it_even_from_the_call_that_does_not() -> None:
    grids = """
def check(candidate):
    assert candidate([[1, 2, 3], [4, 5, 6], [7, 8, 9]], 3) == [1, 2, 1]
    assert candidate([[5, 9, 3], [4, 1, 6], [7, 8, 2]], 1) == [1]
    assert candidate([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]], 4) == [1, 2, 1, 2]
    assert candidate([[2, 7, 4], [3, 1, 5], [6, 8, 9]], 8) == [1, 3, 1, 3, 1, 3, 1, 3]
    assert candidate([[1, 3], [3, 2]], 10) == [1, 3, 1, 3, 1, 3, 1, 3, 1, 3]
"""
    task = check_task("path", "def path(grid, k):\n    return [1] * k\n", grids)
    seed = "5e" * 16
    plan = plan_for(task, seed)
    assert plan is not None and plan.version == SEEDED_CHECK_PLAN_VERSION == "c24"
    edge = "([[1, 3], [3, 2]], 10)"
    outside = [text for text in plan.inputs if _flat(text) != list(range(1, len(_flat(text)) + 1))]
    # the edge call stays (judged as it is, and asked again after many calls), and so does its mirror;
    # nothing is made from it that has ties
    assert edge in outside and len(set(outside)) == 2
    # the c3 plan, still derived for the runs that record it, made grids with ties from the edge call
    older = recorded_plan(task, seed, _plan(task, seed, 1).digest)  # type: ignore[union-attr]
    assert older is not None and older.version == "c3" and older.digest != plan.digest
    assert any(_flat(t) != sorted(set(_flat(t))) and t != edge for t in older.inputs[plan.seeds :])


def _flat(text: str) -> list[int]:
    grid, _ = ast.literal_eval(text)
    return sorted(x for row in grid for x in row)


def test_case_plans_are_untouched() -> None:
    # the digest a one-turn run records for HumanEval/0's plan (version p2)
    task = next(t for t in humaneval_tasks() if t.task_id == "HumanEval/0")
    plan = plan_for(task)
    assert plan is not None and plan.version == PLAN_VERSION == "p2" and plan.source == "cases"
    assert plan.digest == "f2bebdf883e548249fe1dd7333d8c5b1e2a1abd8ba75d62b7502542e117bac9d"


def test_a_passing_check_run_earns_a_probe_run() -> None:
    first = passed_check(BELOW)
    assert probe_due(BELOW, first)
    failed = execution(["False"], mode="check", task_id=BELOW.task_id)
    raised = execution([None], mode="check", task_id=BELOW.task_id)
    assert not probe_due(BELOW, failed) and not probe_due(BELOW, raised)
    assert not probe_due(BELOW, first.model_copy(update={"run_index": 1}))
    assert not probe_due(BELOW.model_copy(update={"reference": None}), first)


CORRECT_BELOW = [
    BELOW_REF,
    "def below(l, t):\n    return max(l, default=t - 1) < t\n",
    "def below(l, t):\n    for x in sorted(l, reverse=True):\n        return x < t\n    return True\n",
]


@pytest.mark.parametrize("code", CORRECT_BELOW)
def test_programs_that_compute_their_answers_pass_the_check_probe(code: str) -> None:
    d = verdict_of(BELOW, code)
    assert d.verdict == "accept", d
    assert "probe.agreed" in codes(d)


def _table(task: TaskPublished, fallback: str) -> str:
    namespace: dict[str, object] = {}
    exec(task.reference or "", namespace)
    fn = namespace[task.entry_point]
    table = {text: fn(*ast.literal_eval(text)) for text in check_calls(task.check or "", task.entry_point)}  # type: ignore[operator]
    return f"_T = {table!r}\ndef {task.entry_point}(*args):\n    return _T.get(repr(args), {fallback})\n"


def _served(task: TaskPublished, fallback: str) -> str:
    namespace: dict[str, object] = {}
    exec(task.reference or "", namespace)
    fn = namespace[task.entry_point]
    answers = [fn(*ast.literal_eval(text)) for text in check_calls(task.check or "", task.entry_point)]  # type: ignore[operator]
    return f"_A = iter({answers!r})\ndef {task.entry_point}(*args):\n    return next(_A, {fallback})\n"


@pytest.mark.parametrize(
    ("task", "code"),
    [
        (BELOW, _table(BELOW, "False")),
        (BELOW, _table(BELOW, "True")),
        (BELOW, _served(BELOW, "True")),
        (EVENS, _table(EVENS, "args[0]")),
        (EVENS, _served(EVENS, "args[0]")),
        # a truthy/falsy stand-in for a bool meets `assert candidate(...)`, never the reference's answer
        (BELOW, "def below(l, t):\n    return 1 if all(x < t for x in l) else 0\n"),
        (BELOW, "def below(l, t):\n    return [x for x in l if x >= t] or None\n"),
        # a tuple where the reference answers a list: the check's tuple() hides it, the probe does not
        (EVENS, "def evens(l):\n    out = list(l)\n    out[::2] = sorted(l[::2])\n    return tuple(out)\n"),
    ],
)
def test_programs_that_recall_or_stand_in_for_the_checks_answers_are_rejected(
    task: TaskPublished, code: str
) -> None:
    d = verdict_of(task, code)
    assert d.verdict == "reject", d
    assert codes(d) & {"hack.memorised", "wrong.disagrees_with_reference"}
