"""Plain-literal parsing and type-strict comparison of returned values."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from streams.reward.literals import CompareOptions, NotALiteral, parse_literal, values_match

STRICT = CompareOptions(int_float="strict")
NUMERIC = CompareOptions(int_float="numeric")


def match(expected: str, got: str, options: CompareOptions = NUMERIC) -> bool:
    return values_match(parse_literal(expected), parse_literal(got), options)


@pytest.mark.parametrize(
    "text",
    [
        "<__main__.Always object at 0x7f>",
        "Always()",
        "__import__('os')",
        "[1, 2] + [3]",
        "x",
        "lambda: 1",
        "{**a}",
        "...",
        "1 if True else 2",
    ],
)
def test_non_literals_are_refused(text: str) -> None:
    with pytest.raises(NotALiteral):
        parse_literal(text)


def test_reprs_of_plain_values_that_literal_eval_refuses_still_parse() -> None:
    assert parse_literal("set()") == set()
    assert parse_literal("frozenset({1, 2})") == frozenset({1, 2})
    assert parse_literal("inf") == math.inf
    assert parse_literal("-inf") == -math.inf
    assert math.isnan(parse_literal("nan"))  # type: ignore[arg-type]
    assert parse_literal("(1+2j)") == 1 + 2j


def test_oversized_repr_is_refused() -> None:
    with pytest.raises(NotALiteral):
        parse_literal("[" + "1, " * 100 + "1]", max_chars=50)


def test_deep_nesting_is_refused_not_crashing() -> None:
    with pytest.raises(NotALiteral):
        parse_literal("[" * 5000 + "]" * 5000)


def test_bool_never_equals_int_under_any_policy() -> None:
    for policy in ("strict", "float_accepts_int", "numeric"):
        o = CompareOptions(int_float=policy)  # type: ignore[arg-type]
        assert not match("1", "True", o)
        assert not match("True", "1", o)
        assert not match("0", "False", o)
        assert not match("[1, 0]", "[True, False]", o)
        assert not match("1.0", "True", o)


def test_int_float_policies() -> None:
    assert not match("2", "2.0", STRICT)
    assert not match("2.0", "2", STRICT)
    floaty = CompareOptions(int_float="float_accepts_int")
    assert match("2.0", "2", floaty)
    assert not match("2", "2.0", floaty)
    assert match("2", "2.0", NUMERIC)
    assert match("2.0", "2", NUMERIC)


def test_float_tolerance_is_configurable() -> None:
    assert match("0.1", "0.10000000001")
    assert not match("0.1", "0.1001")
    tight = CompareOptions(float_abs_tol=0.0, float_rel_tol=1e-15)
    assert not match("0.1", "0.10000000001", tight)
    loose = CompareOptions(float_abs_tol=0.01)
    assert match("0.1", "0.105", loose)


def test_nan_and_infinity() -> None:
    assert match("nan", "nan")
    assert not match("nan", "nan", CompareOptions(nan_equal=False))
    assert not match("1.0", "nan")
    assert match("inf", "inf")
    assert not match("inf", "-inf")
    assert not match("inf", "1e308")


def test_containers_compare_by_type_and_order() -> None:
    assert match("[1, 2]", "[1, 2]")
    assert not match("[1, 2]", "[2, 1]")
    assert not match("[1, 2]", "(1, 2)")
    assert not match("(1,)", "[1]")
    assert not match("[1, 2]", "[1, 2, 3]")
    assert match("[[1.0, 'a'], (None,)]", "[[1.0, 'a'], (None,)]")
    assert not match("'a'", "b'a'")
    assert not match("None", "0")
    assert not match("''", "None")


def test_sets_and_dict_keys_do_not_merge_bool_and_int() -> None:
    assert match("{1, 2}", "{2, 1}")
    assert not match("{1}", "{True}")
    assert not match("{1}", "frozenset({1})")
    assert match("{'a': 1, 'b': [2]}", "{'b': [2], 'a': 1}")
    assert not match("{1: 'a'}", "{True: 'a'}")
    assert not match("{'a': 1}", "{'a': True}")
    assert not match("{'a': 1}", "{'a': 1, 'b': 2}")


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5) | st.floats(allow_nan=False),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(plain)
def test_every_plain_value_round_trips_and_matches_itself(value: object) -> None:
    assert values_match(value, parse_literal(repr(value)), STRICT)
