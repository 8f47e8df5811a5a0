"""Short answers that read back as immutable values are parsed once and handed out again; every other
value is parsed anew for each caller, so no caller can change what another reads, and no comparison
can tell a shared value from a fresh one."""

from __future__ import annotations

import math

import pytest

from streams.reward import literals
from streams.reward.literals import CompareOptions, NotALiteral, parse_literal, values_match

TEXTS = [
    "1",
    "-7",
    "'a'",
    "b'x'",
    "True",
    "None",
    "2.5",
    "inf",
    "(1, 'a', (2.0, None))",
    "frozenset({1, 2})",
    "[2, 3]",
    "{'k': [1]}",
    "{1, 2}",
    "nan",
    "(nan,)",
    "(1, [2])",
    "1j",
    "1" * 5000,
    "'" + "x" * 500 + "'",
]


def _fresh(text: str) -> object:
    saved = literals.SHARED_CHARS
    literals.SHARED_CHARS = -1
    try:
        return parse_literal(text)
    finally:
        literals.SHARED_CHARS = saved


@pytest.mark.parametrize("text", TEXTS)
def test_a_kept_answer_equals_one_parsed_anew(text: str) -> None:
    literals._SHARED.clear()
    for _ in range(3):
        got, fresh = parse_literal(text), _fresh(text)
        assert type(got) is type(fresh) and repr(got) == repr(fresh)
        assert values_match(got, fresh, CompareOptions()) == values_match(
            fresh, _fresh(text), CompareOptions()
        )


def test_only_immutable_values_without_nan_are_shared() -> None:
    literals._SHARED.clear()
    for text in ("[2, 3]", "{'k': [1]}", "{1, 2}", "(1, [2])", "(nan,)", "1j"):
        assert parse_literal(text) is not parse_literal(text), text
    a, b = parse_literal("[2, 3]"), parse_literal("[2, 3]")
    a.append(4)  # type: ignore[attr-defined]
    assert b == [2, 3] and parse_literal("[2, 3]") == [2, 3]
    # a NaN inside a container equals itself only where it is one object: a container holding one is
    # never shared, so two answers of "(nan,)" compare as two fresh parses do
    for text in ("(nan,)", "(float('nan'),)", "(1e999 - 1e999,)"):
        try:
            fresh = _fresh(text) == _fresh(text)
        except NotALiteral:
            continue
        assert (parse_literal(text) == parse_literal(text)) is fresh
    assert math.isnan(parse_literal("nan"))  # type: ignore[arg-type]
    for text in ("1", "'a'", "(1, 'a', (2.0, None))", "frozenset({1, 2})", "inf"):
        assert parse_literal(text) is parse_literal(text), text
    # long texts are not kept (the store stays small)
    assert parse_literal("'" + "x" * 500 + "'") is not parse_literal("'" + "x" * 500 + "'")


def test_the_store_is_bounded_and_failures_still_raise() -> None:
    literals._SHARED.clear()
    for i in range(literals.SHARED_KEPT + 10):
        parse_literal(str(i))
    assert len(literals._SHARED) <= literals.SHARED_KEPT
    for _ in range(2):
        with pytest.raises(NotALiteral):
            parse_literal("os.system('x')")
    # the bounds are part of what was read: a text too long for a smaller limit is refused
    parse_literal("'abc'")
    with pytest.raises(NotALiteral):
        parse_literal("'abc'", max_chars=3)
