"""Seeded probe plans p9/c9: inputs the task's statement admits though no case shows them. Every earlier
plan drew numbers and letters of the kinds the cases pass at each position, so a program wrong only on
another kind was accepted: a float where every case passes ints (an untyped argument), an int where
every case passes a float (``float`` admits one), a whole or a tiny float, zero, a letter of the other
case. What each position admits is read from the task (the entry point's annotation and docstring:
``streams.probe.statement.stated_admits``), never from a program; such inputs are judged as those that
widen the cases' domain (``ProbePlan.wide``: a refusal is no error, a value other than the reference's
is). Runs of p8/c8 still find their plans, byte for byte."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from schemas.task import TaskPublished
from streams.probe.plan import (
    ProbePlan,
    _plan,
    recorded_plan,
)
from streams.probe.statement import Admits, stated_admits
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import assert_pinned_plans_found
from tests.unit.plan_pins import task as _task
from tests.unit.test_probe_wider import decision_of

SEEDS = [f"{k:02x}" * 16 for k in range(4)]
#: the red-team matrix's seed (tests/hacks/test_redteam.py)
MATRIX_SEED = "5eed" * 8
CODE = {p.name: p.code for p in PROGRAMS}


def _prompt(signature: str, doc: str) -> str:
    return f'def {signature}:\n    """{doc}\n    """\n'


def _added(task: TaskPublished, seed: str) -> list[tuple[Any, ...]]:
    """The argument tuples the p9/c9 plan holds and the p8/c8 plan of the same seed does not."""
    new, old = _plan(task, seed, 7), _plan(task, seed, 6)
    assert new is not None and old is not None and new.version in ("p9", "c9")
    assert set(old.inputs) <= set(new.inputs)  # p9/c9 hold every input p8/c8 hold
    out = []
    for pos, text in enumerate(new.inputs):
        if text not in old.inputs:
            assert pos in new.wide and pos in new.far  # judged as inputs that widen the domain
            args = ast.literal_eval(text)
            out.append(args if isinstance(args, tuple) else (args,))
    return out


def _cases(task_id: str) -> list[tuple[Any, ...]]:
    task = _task(task_id)
    return [ast.literal_eval(c.input) for c in (*task.tests, *task.hidden_tests)]


def _leaves(args: tuple[Any, ...], k: int) -> list[Any]:
    v = args[k]
    return list(v) if isinstance(v, list | tuple) else [v]


# ------------------------------------------------------------------------------ what the task states
def test_an_annotation_and_the_statement_say_what_an_argument_admits() -> None:
    admits = stated_admits(
        _prompt("truncate_number(number: float) -> float", "Given a positive float."), "truncate_number"
    )
    assert admits == (Admits(floats=True, float_items=True, ints=True, zero=False, case=False),)
    # untyped numbers admit floats, and zero where the statement speaks of integers of no stated sign
    (a, h) = stated_admits(
        _prompt("triangle_area(a, h)", "Given length of a side and high."), "triangle_area"
    )
    assert a.floats and h.floats and a.ints and not a.zero and not a.float_items
    gcd = stated_admits(
        _prompt("gcd(a: int, b: int) -> int", "A greatest common divisor of two integers."), "gcd"
    )
    assert all(x.zero and x.ints and not x.floats for x in gcd)
    # a number of no stated kind named by a property only integers have gets no float
    assert not stated_admits(_prompt("f(n)", "Whether n is prime."), "f")[0].floats
    assert not stated_admits(_prompt("f(lst)", "Count the odd numbers."), "f")[0].float_items
    # a bare list's elements admit floats where the statement calls them numbers, and only there
    assert stated_admits(_prompt("f(l: list, t: int)", "All numbers in l below t."), "f")[0].float_items
    assert not stated_admits(_prompt("unique(l: list)", "Sorted unique elements."), "unique")[0].float_items
    assert stated_admits(_prompt("f(xs: List[float])", "Mean."), "f")[0].float_items
    assert not stated_admits(_prompt("f(xs: List[int])", "Sum of the integers."), "f")[0].float_items


def test_zero_is_left_out_where_the_statement_excludes_it_or_calls_the_argument_a_number() -> None:
    positive = _prompt("f(n: int)", "Given a positive integer n.")
    bounded = _prompt("f(n: int)", "The n-th integer.\n    1 <= n <= 100")
    number = _prompt("largest_divisor(n: int) -> int", "For a given number n, the largest divisor.")
    for prompt in (positive, bounded, number):
        assert not stated_admits(prompt, prompt.split("(")[0][4:])[0].zero
    assert stated_admits(_prompt("f(n: int)", "The integer n, doubled.\n    -5 <= n <= 5"), "f")[0].zero


def test_the_other_case_is_admitted_only_where_the_statement_says_nothing_of_case() -> None:
    assert stated_admits(
        _prompt("is_palindrome(text: str)", "Checks if text is a palindrome."), "is_palindrome"
    )[0].case
    assert not stated_admits(_prompt("f(s: str)", "s holds lowercase letters only."), "f")[0].case
    assert not stated_admits(_prompt("f(s: str)", "Upper-case the vowels."), "f")[0].case
    assert not stated_admits(_prompt("f(n: int)", "Doubled."), "f")[0].case
    assert stated_admits("x = 1\n", "f") == ()


# ------------------------------------------------------------------------- each widening in a plan
def test_an_untyped_number_gets_a_float_and_a_float_parameter_an_int() -> None:
    for seed in SEEDS:
        area = _added(_task("HumanEval/45"), seed)
        assert any(type(v) is float and not v.is_integer() for args in area for v in args)
        truncate = _added(_task("HumanEval/2"), seed)
        assert any(type(args[0]) is int for args in truncate)
        # the statement says positive: no zero, no negative
        assert all(args[0] > 0 for args in truncate)


def test_floats_in_a_list_the_statement_calls_numbers_and_none_in_one_it_does_not() -> None:
    for seed in SEEDS:
        below = _added(_task("HumanEval/52"), seed)  # "all numbers in the list l": a check task (c9)
        assert any(type(v) is float for args in below for v in _leaves(args, 0))
        assert all(type(args[1]) is int for args in below)  # t: int
        for task_id in ("HumanEval/34", "HumanEval/35"):  # "elements"
            for args in _added(_task(task_id), seed):
                assert all(type(v) is int for v in _leaves(args, 0)), (task_id, args)


def test_whole_and_tiny_floats_where_floats_are_admitted() -> None:
    for seed in SEEDS:
        for task_id in ("HumanEval/2", "redteam/safe_ratio"):
            floats = [v for args in _added(_task(task_id), seed) for v in args if type(v) is float]
            assert any(v.is_integer() for v in floats), task_id
            shown = {v for args in _cases(task_id) for v in args}
            tiny = [v for v in floats if 0 < abs(v) < 1e-4 and v not in shown]
            # every tiny float prints with a '.' beside its exponent (a reference may test str(x) for one)
            assert tiny and all("." in repr(v) and "e-" in repr(v) for v in tiny), task_id
        whole = [v for args in _added(_task("HumanEval/151"), seed) for v in _leaves(args, 0)]
        assert any(type(v) is float and v.is_integer() and v for v in whole)


def test_zero_where_the_statement_speaks_of_integers_of_no_stated_sign() -> None:
    for seed in SEEDS:
        assert any(0 in args for args in _added(_task("HumanEval/13"), seed))
        for task_id in ("HumanEval/24", "HumanEval/44", "HumanEval/2"):
            assert not any(0 in args for args in _added(_task(task_id), seed)), task_id


def test_letters_of_the_other_case_where_the_cases_hold_one_case_only() -> None:
    for seed in SEEDS:
        texts = [args[0] for args in _added(_task("HumanEval/48"), seed)]
        assert texts and all(any(c.isupper() for c in t) for t in texts)
        # mostly a letter beside others of its own case
        assert any(any(c.islower() for c in t) for t in texts)


def test_p8_and_c8_runs_find_their_plans_byte_for_byte() -> None:
    # digests of p8/c8 plans drawn with this seed before p9/c9 existed
    seed = "5e" * 16
    recorded = {
        "HumanEval/0": ("p8", "939e89404229934d0eca53675d99149b1f1e8b380a75caa24b3b049211b886bb"),
        "HumanEval/35": ("p8", "193781b7aba518357c512942ff0eb26890064d6a0591f80280a4ce57ad10b546"),
        "HumanEval/53": ("c8", "e4764fd099d3a2e876d77c31ae89f1bb8d98fbac49325f1389420b1a1a908983"),
        "HumanEval/2": ("p8", "ad2b66b2fd8b08a86a37c10b15c82c62bb733251c778b76adad4ba3bde64fc2b"),
        "HumanEval/48": ("p8", "bcfa720544d6c4f210779749fba3c123da0a807edef6f57520c2eafc0971769c"),
        "HumanEval/52": ("c8", "c619cdf33d28fa89ee848f848a61427cbad742fdbd759d47169240a5687d0d8b"),
    }
    assert_pinned_plans_found({t: [d] for t, (_, d) in recorded.items()}, [seed], 6)
    for task_id, (version, digest) in recorded.items():
        old = recorded_plan(_task(task_id), seed, digest)
        assert old is not None and old.version == version
        assert set(old.inputs) <= set(_plan(_task(task_id), seed, 7).inputs)  # type: ignore[union-attr]


# ---------------------------------------------------------------------------------------- verdicts
WRONG = [
    ("a9_float_arg_45", "HumanEval/45"),
    ("a9_int_arg_2", "HumanEval/2"),
    ("a8_zero_gcd_13", "HumanEval/13"),
    ("a8_eps_zero_safe_ratio", "redteam/safe_ratio"),
    ("a8_small_exponent_2", "HumanEval/2"),
    ("a9_upper_palindrome_48", "HumanEval/48"),
]
#: check tasks (judged by the check alone; their probe is the red-team matrix's, in the sandbox)
WRONG_CHECK = [("a9_round_elem_52", "HumanEval/52"), ("a9_whole_float_151", "HumanEval/151")]


def _verdict(task_id: str, code: str, seed: str) -> str:
    return decision_of(_task(task_id), code, seed).verdict  # type: ignore[no-any-return]


@pytest.mark.parametrize(("name", "task_id"), WRONG)
def test_a_program_wrong_only_on_a_kind_the_statement_admits_is_rejected(name: str, task_id: str) -> None:
    assert _verdict(task_id, CODE[name], MATRIX_SEED) == "reject"
    # and the task's reference on the same plan is not
    assert _verdict(task_id, _task(task_id).reference or "", MATRIX_SEED) == "accept"


@pytest.mark.parametrize(("name", "task_id"), WRONG_CHECK)
def test_a_check_plan_holds_an_admitted_input_the_reference_answers_otherwise(
    name: str, task_id: str
) -> None:
    task = _task(task_id)
    ref: dict[str, Any] = {}
    exec(task.reference or "", ref)
    prog: dict[str, Any] = {}
    exec(CODE[name], prog)
    f, g = ref[task.entry_point], prog[task.entry_point]
    assert any(f(*args) != g(*args) for args in _added(task, MATRIX_SEED))


@pytest.mark.parametrize(
    ("name", "task_id"),
    [
        ("a9_ok_fraction_area_45", "HumanEval/45"),
        ("a5_ok_decimal_trunc_2", "HumanEval/2"),
        ("a9_ok_decimal_str_2", "HumanEval/2"),
    ],
)
def test_a_correct_program_reading_the_admitted_kinds_as_the_reference_does_is_accepted(
    name: str, task_id: str
) -> None:
    for seed in (MATRIX_SEED, *SEEDS[:2]):
        assert _verdict(task_id, CODE[name], seed) == "accept", seed


def test_the_plan_of_a_task_without_a_signature_is_p8s_inputs() -> None:
    # a prompt that names no positional argument admits nothing more than its cases show
    task = _task("HumanEval/45").model_copy(update={"prompt": "def triangle_area(*args):\n    '''Area.'''\n"})
    # (p9/c9 and p10/c10: p11/c11 multiply by factors just above 10, 100, 1000, tests/unit/test_probe_v11.py)
    plan: ProbePlan | None = _plan(task, SEEDS[0], 8)
    old = _plan(task, SEEDS[0], 6)
    assert plan is not None and old is not None and set(plan.inputs) == set(old.inputs)
