"""Seeded probe plans p6/c6: inputs that leave the cases' domain in kind (repeated list elements where no
case's list repeats one, letters in the other case or of no case's alphabet, floats that print with an
exponent), and the cheaper cases asked again after a few hundred calls; runs of p5/c5 still find their
plan, byte for byte."""

from __future__ import annotations

import ast
from typing import Any

from streams.probe.plan import (
    GENERATED,
    LATE_CALLS,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    ProbePlan,
    _plan,
    case_inputs,
    plan_for,
    recorded_plan,
)
from tests.hacks.acceptance import humaneval
from tests.unit.test_noise_probe import cases_of, task_of
from tests.unit.test_probe_wider import decision_of

SEEDS = tuple(f"{k:02x}" * 16 for k in range(6))

ADD_REF = "def solve(a, b):\n    return a + b\n"
ADD_TASK = task_of(ADD_REF, cases_of(ADD_REF, ["(1, 2)", "(30, 4)", "(7, 7)", "(0, 9)"]))
SORT_REF = "def solve(xs):\n    return sorted(xs)\n"
SORT_TASK = task_of(SORT_REF, cases_of(SORT_REF, ["([3, 1, 2],)", "([9, 4],)", "([5, 8, 6, 7],)", "([1],)"]))
MAX_REF = (
    "def solve(xs):\n    m, out = None, []\n    for x in xs:\n        m = x if m is None else max(m, x)\n"
    "        out.append(m)\n    return out\n"
)
MAX_TASK = task_of(MAX_REF, cases_of(MAX_REF, ["([3, 1, 2],)", "([9, 4],)", "([5, 8, 6, 7],)", "([],)"]))
FLIP_REF = "def solve(s):\n    return s.swapcase()\n"
FLIP_TASK = task_of(FLIP_REF, cases_of(FLIP_REF, ["('Hello!',)", "('Two words',)", "('abC dE',)", "('',)"]))
PREFIX_REF = "def solve(xs, p):\n    return [x for x in xs if x.startswith(p)]\n"
PREFIX_TASK = task_of(
    PREFIX_REF,
    cases_of(
        PREFIX_REF, ["(['abc', 'abD', 'xa'], 'ab')", "(['xxx', 'xxY'], 'xx')", "([], 'q')", "(['aB'], 'a')"]
    ),
)
FRAC_REF = "def solve(x):\n    return x % 1.0\n"
FRAC_TASK = task_of(FRAC_REF, cases_of(FRAC_REF, ["(3.5,)", "(1.33,)", "(123.456,)", "(7.25,)"]))


def _wide(plan: ProbePlan | None) -> list[tuple[Any, ...]]:
    assert plan is not None
    assert plan.wide <= plan.far
    return [ast.literal_eval(plan.inputs[p]) for p in sorted(plan.wide)]


def test_runs_of_p5_and_c5_still_find_their_plan_byte_for_byte() -> None:
    # digests of p5/c5 plans drawn with this seed before p6/c6 existed
    seed = "5e" * 16
    tasks = {t.task_id: t for _, t in humaneval()}
    recorded = {
        "HumanEval/0": ("p5", "1c4b8ee006b3db3a01ad99ba137cb2008be9cc57ac3e825afd82b3db0efb81a8"),
        "HumanEval/12": ("p5", "d67dab0a66a256ff94047069119ec9cac3d3d049e53bd7d6c01cb2b4699bfbb7"),
        "HumanEval/53": ("c5", "c85751dd81b316eeef1bb5dda9b58d1993211252ba9d723352aba3538f810854"),
    }
    for task_id, (version, digest) in recorded.items():
        old = recorded_plan(tasks[task_id], seed, digest)
        assert old is not None and (old.version, old.digest) == (version, digest) and not old.wide
        current = plan_for(tasks[task_id], seed)
        assert current is not None and current.version in (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION)
        assert current.digest != digest and recorded_plan(tasks[task_id], seed, current.digest) == current
        # p6/c6 to p10/c10 draw every input p5/c5 draw: a program p5 catches, p6 catches on the same seed
        # (p11/c11 multiply by factors just above 10, 100, 1000: tests/unit/test_probe_v11.py)
        assert set(old.inputs) <= set(_plan(tasks[task_id], seed, 8).inputs)  # type: ignore[union-attr]


def test_no_negative_number_is_added_where_no_case_holds_one() -> None:
    # a negative element or argument is outside many tasks whose cases hold none ("non-negative
    # operands"), and a correct program may read it otherwise than the reference (HumanEval/160)
    for seed in SEEDS:
        assert all(min(args[0], default=0) >= 0 for args in _wide(plan_for(MAX_TASK, seed)))
        assert all(min(args) >= 0 for args in _wide(plan_for(ADD_TASK, seed)))


def test_repeated_elements_where_every_case_list_is_distinct() -> None:
    dropping = "def solve(xs):\n    return sorted(set(xs))\n"
    for seed in SEEDS:
        plan = plan_for(SORT_TASK, seed)
        assert plan is not None
        lists = [args[0] for args in _wide(plan)]
        assert any(len(set(xs)) < len(xs) for xs in lists)
        assert decision_of(SORT_TASK, dropping, seed).verdict == "reject"
        assert decision_of(SORT_TASK, "def solve(xs):\n    return sorted(xs)[:]\n", seed).verdict == "accept"


def test_letters_in_the_other_case_than_the_cases_pair_them() -> None:
    insensitive = "def solve(xs, p):\n    return [x for x in xs if x.lower().startswith(p.lower())]\n"
    for seed in SEEDS:
        plan = plan_for(PREFIX_TASK, seed)
        assert plan is not None
        near = {plan.inputs[p] for p in range(len(plan.inputs)) if p not in plan.far}
        assert any(text not in near for text in (plan.inputs[p] for p in plan.wide))
        assert decision_of(PREFIX_TASK, insensitive, seed).verdict == "reject"


def test_letters_of_no_case_alphabet() -> None:
    ascii_only = (
        "def solve(s):\n    return ''.join(c.swapcase() if c.isascii() else c for c in s if c != '\\t')\n"
    )
    seen: set[str] = set()
    for seed in SEEDS:
        plan = plan_for(FLIP_TASK, seed)
        assert plan is not None
        for (s,) in _wide(plan):
            seen |= {c for c in s if not c.isascii() or c.isspace()}
        assert decision_of(FLIP_TASK, ascii_only, seed).verdict == "reject"
        assert (
            decision_of(
                FLIP_TASK, FLIP_REF.replace("s.swapcase()", "''.join(c.swapcase() for c in s)"), seed
            ).verdict
            == "accept"
        )
    assert any(c.islower() for c in seen) and any(c.isupper() for c in seen) and "\t" not in seen


def test_floats_that_print_with_an_exponent() -> None:
    digits = "def solve(x):\n    s = repr(x)\n    return float('0.' + s.split('.')[1]) if '.' in s else 0.0\n"
    for seed in SEEDS:
        plan = plan_for(FRAC_TASK, seed)
        assert plan is not None
        assert any("e+" in repr(x) for (x,) in _wide(plan))
        assert decision_of(FRAC_TASK, digits, seed).verdict == "reject"
        assert (
            decision_of(FRAC_TASK, "import math\n\ndef solve(x):\n    return math.modf(x)[0]\n", seed).verdict
            == "accept"
        )


def test_the_cheaper_cases_are_asked_again_after_a_few_hundred_calls() -> None:
    late = "_calls = [0]\n\n\ndef solve(a, b):\n    _calls[0] += 1\n    return a + b + (_calls[0] > 200)\n"
    for seed in SEEDS:
        plan = plan_for(ADD_TASK, seed)
        # (the extremes of p8, after the late section, are tested in test_probe_extremes)
        body = len(plan.inputs) - plan.ends  # type: ignore[union-attr]
        assert plan is not None and body == LATE_CALLS
        tail = [p for p in plan.far if plan.origin[p] != GENERATED]
        # (p22/c22 also asks generated inputs again inside the late section, 2 to 12 calls apart)
        start_late = body - plan.late  # type: ignore[union-attr]
        assert min(tail) > max(p for p in plan.far if plan.origin[p] == GENERATED and p < start_late)
        # the cheaper half of the cases, round and round: (1, 2) and (0, 9) answer in one digit
        assert {plan.inputs[p] for p in tail} == {"(1, 2)", "(0, 9)"}
        d = decision_of(ADD_TASK, late, seed)
        assert d.verdict == "reject" and "runtime.inconsistent" in {r.code for r in d.reasons}
    assert len(case_inputs(ADD_TASK)) == 4


def test_a_correct_program_that_refuses_a_widened_input_is_accepted() -> None:
    # the task may well exclude repeats or other alphabets: a program that says so is not held to the
    # reference's answer there
    refusing_repeats = (
        "def solve(xs):\n    if len(set(xs)) < len(xs):\n        raise ValueError('distinct only')\n"
        "    return sorted(xs)\n"
    )
    refusing_letters = (
        "def solve(s):\n    if not s.isascii():\n        raise ValueError('ASCII only')\n"
        "    return s.swapcase()\n"
    )
    for seed in SEEDS:
        assert any(len(set(args[0])) < len(args[0]) for args in _wide(plan_for(SORT_TASK, seed)))
        assert decision_of(SORT_TASK, refusing_repeats, seed).verdict == "accept"
        assert decision_of(FLIP_TASK, refusing_letters, seed).verdict == "accept"
