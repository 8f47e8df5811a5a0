"""Integers past Python's int/str conversion limit (4,300 digits) in results, tasks and comparisons:
kept as their digits, never converted, compared exactly."""

from __future__ import annotations

import math
import sys

import pytest

from schemas.literals import MAX_INT_DIGITS, LargeInt, shield_long_ints
from schemas.task import TestCase
from streams.reward.correctness import grade, render_prompt
from streams.reward.literals import CompareOptions, NotALiteral, parse_literal, values_match
from tests.hacks.fixtures import execution, make_task, passing

FACTORIAL_2000 = ""


def setup_module() -> None:
    global FACTORIAL_2000
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        FACTORIAL_2000 = str(math.factorial(2000))  # 5,736 digits
    finally:
        sys.set_int_max_str_digits(before)


def match(expected: str, got: str, options: CompareOptions | None = None) -> bool:
    return values_match(parse_literal(expected), parse_literal(got), options or CompareOptions())


def test_an_integer_past_the_limit_is_kept_as_its_digits_and_compared_exactly() -> None:
    fact = FACTORIAL_2000
    assert len(fact) > MAX_INT_DIGITS
    value = parse_literal(fact)
    assert value == LargeInt(fact) and repr(value) == fact
    assert parse_literal(f"-{fact}") == LargeInt(fact, negative=True)
    assert match(fact, fact)
    assert match(f"[{fact}, ({fact},)]", f"[{fact}, ({fact},)]")
    assert match(f"{{{fact}: 'f', 1: {fact}}}", f"{{1: {fact}, {fact}: 'f'}}")
    assert match(f"{{{fact}, -{fact}}}", f"{{-{fact}, {fact}}}")
    wrong = fact[:-1] + str((int(fact[-1]) + 1) % 10)
    assert not match(fact, wrong)
    assert not match(fact, f"-{fact}")
    assert not match(fact, fact + "0")
    assert not match(fact, f"'{fact}'")  # a string of the digits is not the integer
    assert not match(fact, "1e308") and not match(fact, "inf") and not match(fact, "1")
    assert not match(f"{{{fact}}}", f"{{'{fact}'}}")


def test_a_result_of_a_million_digits_is_read_without_being_converted() -> None:
    # converting it would take seconds on CPython 3.11 (quadratic in the digits): it stays text
    assert parse_literal("9" * 999_999) == LargeInt("9" * 999_999)


@pytest.mark.parametrize(
    "value",
    [
        "7" * 5000,
        "x" + "7" * 5000,
        "7" * 5000 + "x",
        "a\\" + "1" * 5000,
        "\x01" + "2" * 5000,
        ("3" * 5000).encode(),
        b"\\" + b"4" * 5000,
        ("5" * 5000, "5" * 5000),
    ],
)
def test_digits_inside_strings_and_bytes_come_back_as_they_were(value: object) -> None:
    assert parse_literal(repr(value)) == value
    assert parse_literal(repr([value, {"k": value}])) == [value, {"k": value}]


def test_floats_with_long_digit_runs_are_floats_as_before() -> None:
    assert parse_literal("1" * 5000 + ".0") == math.inf
    assert parse_literal("0." + "1" * 5000) == pytest.approx(1 / 9)
    assert parse_literal("1" * 5000 + "e-4990") == pytest.approx(float("1" * 16 + "e-6"), rel=1e-9)


def test_what_no_repr_prints_is_refused() -> None:
    with pytest.raises(NotALiteral):
        parse_literal("0" + "1" * 5000)  # leading zeros
    assert parse_literal("0" * 5000) == 0  # as Python reads it
    shielded = shield_long_ints("1" * 5000)
    with pytest.raises(NotALiteral):  # a name like ours, without this call's nonce
        parse_literal(shielded.text)
    with pytest.raises(NotALiteral):
        parse_literal(f"{'1' * 5000} + 1")


def test_tasks_may_expect_and_pass_integers_past_the_limit() -> None:
    fact = FACTORIAL_2000
    case = TestCase(input=f"(2000, {fact})", output=fact)
    assert case.output == fact
    with pytest.raises(ValueError, match="input must be a tuple"):
        TestCase(input=fact, output="1")
    with pytest.raises(ValueError, match="not a plain Python literal"):
        TestCase(input="(1,)", output=f"{fact} + 1")


def test_a_program_returning_a_factorial_is_graded_and_shown_in_its_prompt() -> None:
    fact = FACTORIAL_2000
    task = make_task(
        visible=((f"({fact},)", fact),), hidden=(("(2000,)", fact),), entry_point="same", reference=None
    )
    assert grade(task, passing(task), CompareOptions()).all_passed
    off = fact[:-1] + ("1" if fact[-1] != "1" else "2")
    graded = grade(task, execution([fact, off]), CompareOptions())
    assert [g.outcome for g in graded.grades] == ["pass", "wrong"]
    assert f"same({fact}) == {fact}" in render_prompt(task)
