"""Noise filter v13: past the cases' range, a reference that reads a number through ``float()`` is not
held against a program that keeps every digit.

HumanEval/99's published reference answers ``closest_integer('5033351515040505000')`` with
5033351515040504832: it reads the string through ``float()``, which holds every integer only up to 2**53
(the ingest corrects it, producers/ingest/errata.py; the tests below judge against the published one, as
a task from elsewhere may still carry such a reference). A correct program working in exact decimals
answers the number itself, and v12 rejected it as disagreeing with the reference on such an input past
the range (red-team ``a7_ok_decimal_99``). From v13 an integer answer that differs from the reference's
only where the reference's is a double's exact value past 2**53 and the program's rounds to that double
is not judged there. Below 2**53 every integer is a double's, so no wrong answer there passes; a program
computing integers through floats where the reference is exact answers a double the reference's exact
value is not, and is judged as before.

And the int/str conversion limit's ValueError, which v5 to v12 forgave past the range by its text (a
correct program reading digits off ``str(n)`` may trip it on a larger input than its reference's), is
forgiven from v13 only where the reference found that input costly too (``probe.cheap_far``, as v12
does for a MemoryError) or the input holds a run of more digits than the limit: a program raising it,
or converting a 5000-digit number of its own, on inputs whose answers are small (red-team
``a13_str_limit_far_13``, ``a13_str_limit_message_60``) is judged there.
"""

from __future__ import annotations

from decimal import Decimal

import pytest

from producers.ingest.humaneval import load_rows
from schemas.task import TaskPublished
from streams.noise.config import VERSIONS
from streams.noise.probe import (
    EXACT_FLOAT_INTS,
    INT_MAX_STR_DIGITS,
    _long_digits,
    conversion_limit,
    read_through_float,
)
from tests.hacks.fixtures import simulated_verdict
from tests.hacks.redteam.tasks import all_tasks
from tests.unit.test_probe_wider import OPTS, SEEDS

BIG = 5033351515040505000
AS_FLOAT = int(float(BIG))  # 5033351515040504832, what the reference answers


def test_the_versions_run_past_v12_to_v13() -> None:
    assert VERSIONS[VERSIONS.index("v13") - 1 : VERSIONS.index("v13") + 1] == ("v12", "v13")


# ------------------------------------------------------------------------------------ the value rule


def test_an_exact_integer_whose_double_is_the_references_answer_is_forgiven() -> None:
    assert AS_FLOAT != BIG and float(BIG) == AS_FLOAT
    assert read_through_float(AS_FLOAT, BIG, OPTS)
    assert read_through_float(-AS_FLOAT, -BIG, OPTS)
    # inside containers too, the other leaves equal
    assert read_through_float([1, AS_FLOAT, "x"], [1, BIG, "x"], OPTS)
    assert read_through_float({"a": (AS_FLOAT, 2.5)}, {"a": (BIG, 2.5)}, OPTS)


def test_every_other_difference_is_still_judged() -> None:
    # equal values are no difference to forgive (the comparer already accepts them)
    assert not read_through_float(AS_FLOAT, AS_FLOAT, OPTS)
    # below 2**53 a double holds every integer: an answer off by one is wrong
    assert not read_through_float(EXACT_FLOAT_INTS - 5, EXACT_FLOAT_INTS - 4, OPTS)
    # the reference is exact (not a double's value): a program answering through floats is judged
    exact = 2**60 + 3
    assert int(float(exact)) != exact
    assert not read_through_float(exact, int(float(exact)), OPTS)
    # the program's value does not round to the reference's double
    assert not read_through_float(AS_FLOAT, AS_FLOAT + 10_000, OPTS)
    # another leaf differs as well
    assert not read_through_float([AS_FLOAT, 1], [BIG, 2], OPTS)
    # types: a bool, a float or a string answer is no integer read through a float
    assert not read_through_float(AS_FLOAT, float(BIG), OPTS)
    assert not read_through_float(AS_FLOAT, str(BIG), OPTS)
    assert not read_through_float(1, True, OPTS)
    # shapes
    assert not read_through_float([AS_FLOAT], [BIG, 1], OPTS)
    assert not read_through_float({"a": AS_FLOAT}, {"b": BIG}, OPTS)


def test_integers_past_the_double_range_and_deep_values_do_not_crash_it() -> None:
    huge = 10**400
    assert not read_through_float(huge, huge + 1, OPTS)
    deep: object = AS_FLOAT
    other: object = BIG
    for _ in range(500):
        deep, other = [deep], [other]
    assert not read_through_float(deep, other, OPTS)


# --------------------------------------------------------------------------------- through the filter


def _published(task_id: str) -> TaskPublished:
    """The task with its data set's published reference, which reads the string through ``float()``
    (the ingest corrects it: producers/ingest/errata.py; the rule is for any reference that does so)."""
    row = next(r for r in load_rows() if r.task_id == task_id)
    return all_tasks()[task_id].model_copy(update={"reference": row.prompt + row.canonical_solution})


TASK = _published("HumanEval/99")
EXACT = """
from decimal import ROUND_HALF_UP, Decimal


def closest_integer(value):
    return int(Decimal(value).to_integral_value(rounding=ROUND_HALF_UP))
"""
OFF_BY_ONE_PAST_RANGE = """
def closest_integer(value):
    from math import ceil, floor
    num = float(value)
    res = int(round(num)) if abs(num - int(num)) != 0.5 else (ceil(num) if num > 0 else floor(num))
    return res + 1 if abs(res) > 10**6 else res
"""


def _verdict(code: str, seed: str, version: str) -> tuple[str, tuple[str, ...]]:
    return simulated_verdict(TASK, code, seed=seed, version=version, options=OPTS)


def _reads_past_2_53(seed: str) -> bool:
    """Whether the plan drawn with ``seed`` holds an input the reference reads through a float lossily."""
    from streams.probe.plan import plan_for

    plan = plan_for(TASK, seed)
    assert plan is not None
    for text in plan.inputs:
        value = text.strip("(),' \"")
        try:
            exact = Decimal(value)
        except ArithmeticError:
            continue
        if abs(exact) > EXACT_FLOAT_INTS and Decimal(float(value)) != exact.to_integral_value():
            return True
    return False


LOSSY_SEEDS = tuple(s for s in SEEDS if _reads_past_2_53(s))


def test_some_seeds_draw_a_number_the_reference_reads_lossily() -> None:
    assert LOSSY_SEEDS, "no seed of SEEDS draws a HumanEval/99 input past 2**53: the tests below test nothing"


@pytest.mark.parametrize("seed", LOSSY_SEEDS[:2])
def test_an_exact_program_is_accepted_where_v12_rejected_it(seed: str) -> None:
    assert _verdict(EXACT, seed, "v12")[0] == "reject"
    assert _verdict(EXACT, seed, "v13")[0] == "accept"


@pytest.mark.parametrize("seed", LOSSY_SEEDS[:2])
def test_a_program_wrong_past_the_range_is_still_rejected(seed: str) -> None:
    assert _verdict(OFF_BY_ONE_PAST_RANGE, seed, "v13")[0] == "reject"


# ------------------------------------------------------------------- the int/str conversion limit (v13)

GCD = all_tasks()["HumanEval/13"]
GCD_RAISING = """
def greatest_common_divisor(a: int, b: int) -> int:
    if max(abs(a), abs(b)) > 1000:
        return int("7" * 5000)  # the interpreter's own conversion limit, on a small answer's input
    while b:
        a, b = b, a % b
    return a
"""
GCD_MESSAGE = """
def greatest_common_divisor(a: int, b: int) -> int:
    if max(abs(a), abs(b)) > 1000:
        raise ValueError("Exceeds the limit (4300 digits) for integer string conversion")
    while b:
        a, b = b, a % b
    return a
"""


def _gcd_verdict(code: str, seed: str, version: str) -> str:
    return simulated_verdict(GCD, code, seed=seed, version=version, options=OPTS)[0]


def test_the_conversion_limit_is_told_by_its_class_and_text_and_long_digits_by_the_input() -> None:
    assert conversion_limit("ValueError: Exceeds the limit (4300 digits) for integer string conversion")
    assert not conversion_limit("ValueError: invalid literal for int()")
    assert not conversion_limit("TypeError: Exceeds the limit")
    assert INT_MAX_STR_DIGITS == 4300
    assert _long_digits("('" + "7" * 4301 + "',)") and not _long_digits("('" + "7" * 4300 + "',)")


@pytest.mark.parametrize("code", [GCD_RAISING, GCD_MESSAGE], ids=["genuine", "message"])
@pytest.mark.parametrize("seed", SEEDS[:2])
def test_the_conversion_limit_past_the_range_is_judged_where_the_reference_is_cheap(
    code: str, seed: str
) -> None:
    # through v12 it was forgiven by its text on every input past the range: the program was judged on none
    assert _gcd_verdict(code, seed, "v12") == "accept"
    assert _gcd_verdict(code, seed, "v13") == "reject"
