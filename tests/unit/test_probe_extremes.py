"""Seeded probe plans p8/c8: the run's first call is a generated input (not one of the task's cases or
the check's calls), and the run ends with inputs at extremes no case approaches (integers around the
machine widths, sized arguments thousands of elements long); runs of p6/c6 and p7/c7 still find their plan,
byte for byte. And the filter reads a case asked again whose result the execution's budget left out as no
evidence, whichever of the two notes the sandbox wrote for it."""

from __future__ import annotations

import ast
import random
from typing import Any

from schemas.rollout import MAX_EXECUTION_RESULT_BYTES, RESULT_NOT_KEPT, CaseResult
from streams.noise.config import NoiseConfig
from streams.noise.probe import _not_kept
from streams.probe.plan import (
    GENERATED,
    LONG_LENGTHS,
    MACHINE_BOUNDS,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    ProbePlan,
    _generate_spread,
    _plan,
    plan_for,
    recorded_plan,
)
from streams.sandbox.jobs import PROBE_END_CALL_S, probe_job_for
from streams.sandbox.limits import Limits
from streams.sandbox.result import ERROR_NOT_KEPT
from tests.hacks.acceptance import humaneval
from tests.unit.test_noise_probe import cases_of, task_of
from tests.unit.test_probe_check_plan import check_task
from tests.unit.test_probe_wider import decision_of

SEEDS = tuple(f"{k:02x}" * 16 for k in range(8))

ADD_REF = "def solve(a, b):\n    return a + b\n"
ADD_TASK = task_of(ADD_REF, cases_of(ADD_REF, ["(1, 2)", "(30, 4)", "(7, 7)", "(0, 9)"]))
MAX_REF = "def solve(xs):\n    return max(xs)\n"
MAX_TASK = task_of(MAX_REF, cases_of(MAX_REF, ["([3, 1, 2],)", "([9, 4],)", "([5, 8, -6, 7],)", "([1],)"]))
ADD_CHECK = """
def check(candidate):
    assert candidate(0, 1) == 1
    assert candidate(1, 0) == 1
    assert candidate(2, 3) == 5
    assert candidate(5, 7) == 12
"""


def _ends(plan: ProbePlan | None) -> list[tuple[Any, ...]]:
    """The inputs at the end of the run (the extremes), as argument tuples."""
    assert plan is not None
    return [ast.literal_eval(text) for text in plan.inputs[len(plan.inputs) - plan.ends :]]


def test_runs_of_p6_c6_p7_and_c7_still_find_their_plan_byte_for_byte() -> None:
    # digests of p6/c6 plans drawn with this seed before p7/c7 existed, and of p7/c7 before p8/c8
    seed = "5e" * 16
    tasks = {t.task_id: t for _, t in humaneval()}
    recorded = {
        "HumanEval/0": [("p6", "e4fa0dff298970b6f8f6b0e0465fe114bfceb31d351f853f7248b7bcbe798023")],
        "HumanEval/35": [("p6", "fbd4fa098a1a3193595ae2f151d4b08f3d127c2d5bbf42443b7d38eb7d36ebf1")],
        "HumanEval/53": [("c6", "8bf79e647e0f8803c834c8b3b4dab20a8ec82a60b0ce32adba7037256a8082d4")],
    }
    p7 = {
        "HumanEval/0": ("p7", "56e15d737c37019eb9b3851dc3f320ad107dc633e5af86556f8f6bb275763d6c"),
        "HumanEval/35": ("p7", "49d3a5b24d1ec3f26d7b294c96d8dc00fcfd6d707761a241ed84401528d70abf"),
        "HumanEval/53": ("c7", "1988f6b69baafd32cff089ee6ff691dcbb90c9215a2883ceeecc4f3acf49e1a3"),
    }
    for task_id, run in p7.items():
        recorded[task_id].append(run)
    for task_id, runs in recorded.items():
        current = plan_for(tasks[task_id], seed)
        assert current is not None and current.version in (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION)
        assert recorded_plan(tasks[task_id], seed, current.digest) == current
        for version, digest in runs:
            old = recorded_plan(tasks[task_id], seed, digest)
            assert old is not None and (old.version, old.digest) == (version, digest) and old.lead == 0
            assert current.digest != digest
            # p8/c8 to p10/c10 hold every input the older plans hold: a program they catch, p8 catches on
            # that seed (p11/c11 multiply by factors just above 10, 100, 1000: tests/unit/test_probe_v11.py)
            assert set(old.inputs) <= set(_plan(tasks[task_id], seed, 8).inputs)  # type: ignore[union-attr]


def test_the_run_starts_with_a_generated_input_that_only_the_seed_draws() -> None:
    public = set(plan_for(ADD_TASK).inputs)  # type: ignore[union-attr]
    cases = {c.input for c in (*ADD_TASK.tests, *ADD_TASK.hidden_tests)}
    firsts = set()
    for seed in SEEDS:
        plan = plan_for(ADD_TASK, seed)
        assert plan is not None and plan.lead == 1 and plan.origin[0] == GENERATED
        assert plan.inputs[0] not in cases and plan.inputs[0] not in public
        # nor a degenerate one (a zero, a one), on which many functions agree: x - y is x + y at y = 0
        assert not {0, 1, -1} & set(ast.literal_eval(plan.inputs[0]))
        # the cases follow it, each once, and the filter finds them there
        assert sorted(plan.origin[p] for p in plan.head_positions) == list(range(len(cases)))
        firsts.add(plan.inputs[0])
    assert len(firsts) > len(SEEDS) // 2


def test_a_check_plan_starts_with_a_generated_input_and_names_the_calls_by_their_positions() -> None:
    task = check_task("add", ADD_REF.replace("solve", "add"), ADD_CHECK)
    plan = plan_for(task, SEEDS[0])
    assert plan is not None and plan.lead == 1
    calls = {"(0, 1)", "(1, 0)", "(2, 3)", "(5, 7)"}
    assert plan.inputs[0] not in calls
    assert {plan.inputs[p] for p in plan.head_positions} == calls
    # every generated input's parents are positions of the calls
    for pos in range(len(plan.inputs)):
        assert set(plan.parents[pos]) <= set(plan.head_positions) | {pos} or plan.inputs[pos] in calls


def test_a_program_wrong_only_on_its_first_call_is_caught_by_the_probe() -> None:
    wrong = (
        "_fresh = [True]\n"
        "def solve(a, b):\n"
        "    first, _fresh[0] = _fresh[0], False\n"
        "    if first and (a, b) not in ((1, 2), (30, 4), (7, 7), (0, 9)):\n"
        "        return a - b - 1\n"
        "    return a + b\n"
    )
    for seed in SEEDS[:3]:
        assert decision_of(ADD_TASK, wrong, seed).verdict == "reject"
        assert decision_of(ADD_TASK, ADD_REF, seed).verdict == "accept"


def test_integers_are_drawn_around_the_machine_widths_with_the_signs_the_cases_show() -> None:
    for seed in SEEDS:
        ends = _ends(plan_for(ADD_TASK, seed))
        ints = [x for args in ends for x in args if isinstance(x, int)]
        for bound in MACHINE_BOUNDS:
            assert any(bound - 1 <= x <= bound + 999 for x in ints), (bound, ends)
        assert min(ints) >= 0  # no case of ADD_TASK holds a negative
        plan = plan_for(MAX_TASK, seed)
        assert plan is not None
        elements = [x for args in _ends(plan) for x in args[0]]
        assert any(abs(x) >= MACHINE_BOUNDS[0] - 1 for x in elements)
        # judged past the range: only a value counts, and they come after every other input
        assert set(range(len(plan.inputs) - len(_ends(plan)), len(plan.inputs))) <= plan.far


def test_a_program_right_only_below_32_bits_is_caught() -> None:
    wrap = (
        "def solve(a, b):\n    s = (a + b) & 0xFFFFFFFF\n    return s - (1 << 32) if s & 0x80000000 else s\n"
    )
    assert all(decision_of(ADD_TASK, wrap, seed).verdict == "reject" for seed in SEEDS[:3])


def test_a_correct_program_on_machine_integers_is_accepted() -> None:
    # a correct program on int32 arrays refuses 2**32 (the task may well exclude such magnitudes); one
    # on the platform's 64-bit integers (numpy) turns 2**63 + 5 into a float: the plan stops at 32 bits
    int32 = (
        "def solve(a, b):\n    if max(abs(a), abs(b)) >= 2**32:\n"
        "        raise OverflowError('Python int too large to convert to C long')\n    return a + b\n"
    )
    int64 = "def solve(a, b):\n    s = a + b\n    return int(float(s)) if s >= 2**63 else s\n"
    for seed in SEEDS[:3]:
        plan = plan_for(ADD_TASK, seed)
        assert plan is not None and any(max(map(abs, args)) >= 2**32 for args in _ends(plan))
        assert decision_of(ADD_TASK, int32, seed).verdict == "accept"
        assert decision_of(ADD_TASK, int64, seed).verdict == "accept"


def test_lists_thousands_of_elements_long_come_last_and_catch_a_bounded_prefix() -> None:
    prefix = "def solve(xs):\n    return max(xs[:50])\n"
    for seed in SEEDS[:4]:
        plan = plan_for(MAX_TASK, seed)
        longest = max(len(args[0]) for args in _ends(plan))
        assert LONG_LENGTHS[0] * 0.9 <= longest <= LONG_LENGTHS[1]
        assert decision_of(MAX_TASK, prefix, seed).verdict == "reject"
        assert decision_of(MAX_TASK, MAX_REF, seed).verdict == "accept"


def test_a_case_whose_result_the_budget_left_out_is_no_evidence_under_either_note() -> None:
    big = "[" + "1, " * (MAX_EXECUTION_RESULT_BYTES // 3) + "1]"
    earlier = CaseResult(index=0, status="ok", result_repr="[0, 1, 2]")
    filled = [earlier, CaseResult(index=1, status="ok", result_repr=big)]
    for note in (RESULT_NOT_KEPT, ERROR_NOT_KEPT):
        records = [*filled, CaseResult(index=2, status="error", error=note)]
        assert _not_kept(records, 2, earlier)
        # the same text where the budget still had room is the program's own error: not excused
        roomy = [earlier, CaseResult(index=1, status="ok", result_repr="[1]"), records[2]]
        assert not _not_kept(roomy, 2, earlier)
    other = [*filled, CaseResult(index=2, status="error", error="ValueError: " + ERROR_NOT_KEPT)]
    assert not _not_kept(other, 2, earlier)


def test_the_probe_job_caps_each_extreme_call_well_under_its_deadline() -> None:
    for seed in SEEDS[:3]:
        found = probe_job_for(ADD_TASK, ADD_REF, Limits(timeout_s=10.0), seed=seed, first_run_s=0.01)
        assert found is not None
        job, plan = found
        assert plan.ends > 0 and job.call_cap is not None
        first, seconds = job.call_cap
        # from the first extreme on, each call has a cap of its own, a fraction of the run's deadline
        assert first == len(plan.inputs) - plan.ends and job.inputs[first:] == plan.inputs[first:]
        assert seconds == PROBE_END_CALL_S and seconds <= job.limits.timeout_s / 4
        # a program whose first run took longer (a slow program, or a loaded host) gets as long
        slower = probe_job_for(ADD_TASK, ADD_REF, Limits(timeout_s=10.0), seed=seed, first_run_s=0.5)
        assert slower is not None and slower[0].call_cap == (first, 0.5)
    # a check plan's job caps its extremes alike
    check = check_task("add", ADD_REF.replace("solve", "add"), ADD_CHECK)
    found = probe_job_for(check, ADD_REF.replace("solve", "add"), Limits(), seed=SEEDS[0])
    assert found is not None and (found[0].call_cap is None) == (found[1].ends == 0)


# --------------------------------------------------------------------- lengths the cases leave out

#: cases of 3 and 11 elements, as HumanEval/35's: lengths 0..2 lie below them, 4..10 between them
SPREAD_REF = "def solve(xs):\n    return max(xs, default=0)\n"
SPREAD_TASK = task_of(
    SPREAD_REF, cases_of(SPREAD_REF, ["([1, 2, 3],)", "([5, 3, -5, 2, -3, 4, 9, 0, 123, 1, -10],)"])
)


def _lengths(plan: ProbePlan | None, positions: Any) -> set[int]:
    assert plan is not None
    return {len(ast.literal_eval(plan.inputs[p])[0]) for p in positions}


def test_lengths_below_and_between_the_cases_are_drawn_and_judged_by_where_they_lie() -> None:
    for seed in SEEDS:
        plan = plan_for(SPREAD_TASK, seed)
        assert plan is not None
        near = [p for p in range(len(plan.inputs)) if p not in plan.far]
        # one element and the empty list (the reference says whether the task has it), past the range
        assert {0, 1} <= _lengths(plan, plan.wide)
        # between 3 and 11: among the inputs near the cases (the task's own domain), several of them
        assert len(_lengths(plan, near) & set(range(5, 10))) >= 2


def test_spread_keeps_what_the_cases_keep() -> None:
    cases = [([1, 2, 3], 2), ([1, 4, 6, 7, 9, 12, 15], 5), ([2, 3, 5, 8, 13, 21, 34, 55, 89], 8)]
    near, far = _generate_spread(cases, random.Random(7), set())
    made = [ast.literal_eval(text) for text, _ in (*near, *far)]
    assert made and all(xs == sorted(xs) and len(set(xs)) == len(xs) for xs, _ in made)
    # an index below the list's length in every case stays so (no list shorter than 3 holds index 2)
    assert all(k < len(xs) for xs, k in made)
    assert {len(xs) for xs, _ in made} - {3, 7, 9}
    # without such an index: shorter lists too, and those (only) judged past the range
    near, far = _generate_spread([(c[0],) for c in cases], random.Random(7), set())
    assert far and all(len(ast.literal_eval(t)[0]) < 3 for t, _ in far)
    assert near and all(3 < len(ast.literal_eval(t)[0]) < 9 for t, _ in near)


def test_a_program_wrong_only_on_lengths_the_cases_leave_out_is_caught() -> None:
    short = "def solve(xs):\n    return xs[0] if 0 < len(xs) < 3 else max(xs, default=0)\n"
    gap = "def solve(xs):\n    return max(xs[::2]) if 4 < len(xs) < 10 else max(xs)\n"
    for seed in SEEDS[:4]:
        assert decision_of(SPREAD_TASK, short, seed).verdict == "reject"
        assert decision_of(SPREAD_TASK, gap, seed).verdict == "reject"
        assert decision_of(SPREAD_TASK, SPREAD_REF, seed).verdict == "accept"
        # a program that refuses the empty list (the reference answers 0) was not held to that answer
        # through filter v17; from v18 it is, since nothing in the task excludes an empty list
        own = "def solve(xs):\n    if not xs:\n        raise ValueError('empty')\n    return max(xs)\n"
        assert decision_of(SPREAD_TASK, own, seed, NoiseConfig(version="v17")).verdict == "accept"
        assert decision_of(SPREAD_TASK, own, seed).verdict == "reject"
