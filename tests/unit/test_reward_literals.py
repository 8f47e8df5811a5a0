"""Plain-literal parsing and type-strict comparison of returned values: Python's own ``==`` where it is
safe, stricter where it would let a wrong type through, exact for expected ints, and never a crash on
whatever text a program makes the channel carry."""

from __future__ import annotations

import datetime
import math
import sys
from array import array
from collections import Counter, OrderedDict, defaultdict, deque
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from schemas.literals import MAX_INT_DIGITS, LargeInt
from streams.reward.config import V1_COMPARE, CompareConfig
from streams.reward.literals import (
    CompareOptions,
    NotALiteral,
    parse_expected,
    parse_literal,
    values_match,
)

STRICT = CompareOptions(int_float="strict")
NUMERIC = CompareConfig().options()  # code-v2's rule
EXACT = CompareOptions(float_rel_tol=0.0)  # Python's == with the type strictness only
V1 = V1_COMPARE.options()


def match(expected: str, got: str, options: CompareOptions = NUMERIC) -> bool:
    return values_match(parse_expected(expected), parse_literal(got), options)


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
        "(1+2)",
        "set([1])",
        "-True",
        "0x10",
        "1_000",
        "'a' 'b'",
        "'\\q'",
        "[1,",
        "",
    ],
)
def test_non_literals_are_refused(text: str) -> None:
    with pytest.raises(NotALiteral):
        parse_literal(text)


def test_reprs_of_plain_values_that_literal_eval_refuses_still_parse() -> None:
    assert parse_literal("set()") == set()
    assert parse_literal("frozenset({1, 2})") == frozenset({1, 2})
    assert parse_literal("frozenset()") == frozenset()
    assert parse_literal("inf") == math.inf
    assert parse_literal("-inf") == -math.inf
    assert math.isnan(parse_literal("nan"))  # type: ignore[arg-type]
    assert parse_literal("(1+2j)") == 1 + 2j
    assert parse_literal("(-1-2j)") == -1 - 2j
    assert parse_literal("-1j") == -1j
    assert repr(parse_literal("(nan+infj)")) == "(nan+infj)"


def test_oversized_repr_is_refused() -> None:
    with pytest.raises(NotALiteral):
        parse_literal("[" + "1, " * 100 + "1]", max_chars=50)


def test_deep_nesting_is_refused_not_crashing() -> None:
    for text in ("[" * 5000 + "]" * 5000, "(" * 300 + "1," + ")" * 300, "-" * 100_000 + "1", "{1: " * 500):
        with pytest.raises(NotALiteral):
            parse_literal(text)


def test_values_no_real_program_returns_are_refused() -> None:
    # a set or dict never prints a repeated element or key (1 and True are the same key to Python)
    for text in ("{1, 1}", "{1: 'a', True: 'b'}", "{1, 1.0}", "{[1]}", "{(1, [2]): 3}"):
        with pytest.raises(NotALiteral):
            parse_literal(text)
    # past Python's own int/str limit an integer is kept as its digits, never converted; leading
    # zeros are no literal at any length
    assert parse_literal("9" * (MAX_INT_DIGITS + 1)) == LargeInt("9" * (MAX_INT_DIGITS + 1))
    assert parse_literal("-" + "9" * (MAX_INT_DIGITS + 1)) == LargeInt("9" * (MAX_INT_DIGITS + 1), True)
    assert parse_literal("9" * MAX_INT_DIGITS) == int("9" * MAX_INT_DIGITS)
    for text in ("0" + "9" * (MAX_INT_DIGITS + 1), "012", "[1, 007]"):
        with pytest.raises(NotALiteral):
            parse_literal(text)
    assert parse_literal("00") == 0


def test_a_flood_of_a_million_characters_parses_in_bounded_time() -> None:
    # CPython's own parser took ~4 s and 300 MB for this; one pass over the tokens is a fraction of it
    text = "[" + ", ".join(["12345"] * 140_000) + "]"
    assert len(parse_literal(text)) == 140_000  # type: ignore[arg-type]


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
    assert match("2", "2.0")
    assert match("2.0", "2")


def test_an_expected_int_is_exact() -> None:
    # a float passes only when it is exactly that integer
    assert match("1000000000000", "1000000000000.0")
    assert not match("1000000000000", "1000000000001.0")  # within rel 1e-9: passed under code-v1
    assert not match("3", "3.0000000001")
    # inexact true division of a large value: 10**17 // 3 is not 10**17 / 3
    assert not match(repr(10**17 // 3), repr(10**17 / 3))
    assert not match(repr(2**53 + 1), repr(float(2**53 + 1)))
    # an int too large for a float meets a float: a mismatch, never an OverflowError
    assert not match(repr(10**400), "1e+300")
    assert not match(repr(10**400), "inf")
    assert not match("1e+300", repr(10**400))
    assert match(repr(10**400), repr(10**400))
    assert not match(repr(10**400), repr(10**400 + 1))


def test_code_v1_keeps_its_int_tolerance_but_never_crashes() -> None:
    assert match("1000000000000", "1000000000001.0", V1)
    assert not match(repr(10**400), "1e+300", V1)
    assert not match(repr(10**400), "inf", V1)
    assert not match("1000000000000", "1000000000001", V1)  # two ints were always exact


def test_expected_floats_tolerate_rounding_only() -> None:
    assert match("0.3", repr(0.1 + 0.2))
    assert match("0.33", repr(1.33 % 1.0))
    assert not match("0.1", "0.1001")
    assert not match("0.1", "0.10000001")
    assert not match("1e-09", "0.0")  # no absolute tolerance by default: a tiny expected value is a value
    assert match("1e+20", repr(10**20 + 1))  # an int meeting an expected float: by its exact value
    assert not match("1e+20", repr(10**20 + 10**12))
    loose = CompareOptions(float_abs_tol=0.01)
    assert match("0.1", "0.105", loose)
    assert not match("0", "0.005", loose)  # not even a configured tolerance applies to an expected int


def test_nan_and_infinity() -> None:
    assert match("nan", "nan")
    assert not match("nan", "nan", CompareOptions(nan_equal=False))
    assert not match("1.0", "nan")
    assert not match("nan", "1.0")
    assert match("inf", "inf")
    assert not match("inf", "-inf")
    assert not match("inf", "1e308")
    assert not match("1e308", "inf")
    assert not match(repr(10**400), "nan")
    assert match("[nan, 1.5]", "[nan, 1.5]")
    assert match("{nan, 1.5}", "{nan, 1.5}")


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
    assert not match("1", "(1+0j)")  # a complex never equals a real number here


def test_sets_and_dict_keys_do_not_merge_bool_and_int() -> None:
    assert match("{1, 2}", "{2, 1}")
    assert not match("{1}", "{True}")
    assert not match("{1}", "{1.0}")
    assert match("{1}", "frozenset({1})")  # as under ==
    assert match("frozenset({1})", "{1}")
    assert match("{'a': 1, 'b': [2]}", "{'b': [2], 'a': 1}")
    assert not match("{1: 'a'}", "{True: 'a'}")
    assert not match("{'a': 1}", "{'a': True}")
    assert not match("{'a': 1}", "{'a': 1, 'b': 2}")
    assert match("{'a': 0.3}", repr({"a": 0.1 + 0.2}))


# -------------------------------------------------------------------------------------------- properties

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**60), max_value=10**60)
    | st.floats()
    | st.complex_numbers()
    | st.text(max_size=8)
    | st.binary(max_size=6)
)
hashables = st.recursive(
    scalars.filter(lambda v: v == v), lambda inner: st.tuples(inner, inner), max_leaves=4
)
plain = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(hashables, inner, max_size=3)
        | st.sets(hashables, max_size=3)
        | st.frozensets(hashables, max_size=3)
    ),
    max_leaves=10,
)


def _has_nan(value: object) -> bool:
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, complex):
        return math.isnan(value.real) or math.isnan(value.imag)
    if isinstance(value, dict):
        return any(_has_nan(k) or _has_nan(v) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return any(_has_nan(v) for v in value)
    return False


@settings(max_examples=300, deadline=None)
@given(plain)
def test_every_plain_value_round_trips_and_matches_itself(value: object) -> None:
    text = repr(value)
    assume(len(text) < 100_000)
    parsed = parse_literal(text)
    if "{" not in text:  # (a rebuilt set may list its elements in another order)
        assert repr(parsed) == text
    assert values_match(value, parsed, STRICT)
    assert values_match(parsed, value, STRICT)
    assert values_match(parse_expected(text), parsed, STRICT)


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=200) | st.text(alphabet="[](){},:-+'\"\\ 0123456789.ejnaifNoTrueFalsbx", max_size=80))
def test_any_text_is_a_value_or_refused_never_an_exception(text: str) -> None:
    try:
        value = parse_literal(text)
    except NotALiteral:
        return
    # whatever parsed compares with anything without raising
    for other in (value, 0, 1.5, [value], math.nan, 10**400, {"k": value}):
        values_match(value, other, NUMERIC)
        values_match(other, value, NUMERIC)


# Python's == and this comparison agree wherever no documented strictness applies: no bools, no
# complex numbers, no NaN, set elements and dict keys of one type. ``twin`` makes pairs that are equal
# under == in interesting ways (an int as an equal float, a set as a frozenset) or differ by a little.
comparable_scalars = (
    st.none()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False)
    | st.text(max_size=4)
)
comparable = st.recursive(
    comparable_scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        | st.sets(st.text(max_size=3), max_size=3)
    ),
    max_leaves=10,
)


@st.composite
def twin(draw: st.DrawFn, value: object) -> object:
    if isinstance(value, int) and not isinstance(value, bool):
        choice = draw(st.sampled_from(["same", "float", "plus", "float_plus"]))
        if choice == "float" and abs(value) < 2**53:
            return float(value)
        if choice == "plus":
            return value + 1
        if choice == "float_plus":
            return float(value) + 0.5
        return value
    if isinstance(value, float):
        return draw(st.sampled_from([value, value * (1 + 1e-12), value + 1.0, -value]))
    if isinstance(value, list):
        return [draw(twin(v)) for v in value]
    if isinstance(value, tuple):
        return tuple(draw(twin(v)) for v in value)
    if isinstance(value, dict):
        return {k: draw(twin(v)) for k, v in value.items()}
    if isinstance(value, set):
        return draw(st.sampled_from([value, frozenset(value), value | {"zz"}]))
    return value


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_the_comparison_is_pythons_equality_where_no_strictness_applies(data: st.DataObject) -> None:
    a = data.draw(comparable)
    b = data.draw(twin(a))
    assert values_match(a, b, EXACT) == (a == b)
    assert values_match(a, parse_literal(repr(b)), EXACT) == (a == b)


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(10**40), max_value=10**40), st.floats(allow_nan=True, allow_infinity=True))
def test_an_expected_int_matches_a_float_only_when_exactly_equal(e: int, g: float) -> None:
    assert values_match(e, g, NUMERIC) == (math.isfinite(g) and Fraction(g) == e)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False), st.floats(allow_nan=False))
def test_expected_floats_match_within_the_relative_tolerance_only(e: float, g: float) -> None:
    assume(e != g)
    close = math.isfinite(e) and math.isfinite(g) and math.isclose(e, g, rel_tol=1e-9, abs_tol=0.0)
    assert values_match(e, g, NUMERIC) == close


def test_the_int_limit_is_pythons_own() -> None:
    assert sys.get_int_max_str_digits() in (0, MAX_INT_DIGITS)


# ------------------------------------------------------------- trusted standard-library values (tagged)
def test_tagged_values_are_rebuilt_with_the_hosts_own_classes() -> None:
    assert parse_literal("Fraction(-15, 2)") == Fraction(-15, 2)
    assert type(parse_literal("Decimal('750E-2')")) is Decimal
    assert parse_literal("[deque([1, (2, 3)]), Counter({'a': 2})]") == [deque([1, (2, 3)]), Counter(a=2)]
    assert parse_literal("OrderedDict([('b', 1), ('a', 2)])") == OrderedDict(b=1, a=2)
    assert type(parse_literal("defaultdict({'x': [1]})")) is defaultdict
    zone = datetime.timezone(datetime.timedelta(hours=-1))
    assert parse_literal("datetime(2020, 1, 2, 3, 4, 5, 6, timezone(timedelta(-1, 82800, 0)))") == (
        datetime.datetime(2020, 1, 2, 3, 4, 5, 6, zone)
    )
    assert parse_literal("{date(2020, 1, 2)}") == {datetime.date(2020, 1, 2)}
    assert parse_literal("time(1, 2, 3, 4)") == datetime.time(1, 2, 3, 4)
    got = parse_literal("array('q', [1, -2])")
    assert type(got) is array and got.typecode == "q" and got == array("q", [1, -2])
    assert parse_literal("array('d', [0.5, 1e+300])") == array("d", [0.5, 1e300])
    assert parse_literal("array('b')") == array("b")  # Python's repr of an empty array


@pytest.mark.parametrize(
    "text",
    [
        "Fraction(1, 0)",
        "Fraction(1, -2)",
        "Fraction(1.0, 2)",
        "Fraction(True, 2)",
        "Fraction(1)",
        "Decimal('1_000')",
        "Decimal(' 1')",
        "Decimal(1)",
        "deque((1,))",
        "Counter([1])",
        "OrderedDict([(1, 2), (1, 3)])",
        "OrderedDict({1: 2})",
        "date(2020, 13, 1)",
        "timedelta(0, 90000, 0)",
        "datetime(2020, 1, 1, 0, 0, 0, 0, 5)",
        "{deque([])}",
        "{Counter({}): 1}",
        "Fraction",
        "Fraction(1, 2",
        "Enum(1)",
        "array('u', ['a'])",
        "array('q', [1.5])",
        "array('d', [1])",
        "array('b', [300])",
        "array('qq', [1])",
        "{array('q', [])}",
    ],
)
def test_tagged_values_the_sandbox_never_writes_are_refused(text: str) -> None:
    with pytest.raises(NotALiteral):
        parse_literal(text)


def test_trusted_values_compare_as_python_compares_them() -> None:
    assert match("7.5", "Fraction(15, 2)") and match("7.5", "Decimal('75E-1')")
    assert match("4", "Fraction(4, 1)") and not match("4", "Fraction(9, 2)")
    assert match("[1, 2]", "[1, Decimal('2.0')]")
    assert not match("[1, 2]", "deque([1, 2])")  # a deque is not == a list: never normalised into one
    assert not match("[1, 2]", "array('q', [1, 2])")  # nor an array
    # arrays compare their elements, as == does (a probe compares two programs' answers so)
    assert values_match(parse_literal("array('q', [1, 2])"), parse_literal("array('b', [1, 2])"), NUMERIC)
    assert not match("(1, 2)", "[1, 2]")
    assert match("{'a': 2}", "Counter({'a': 2})") and match("{'a': 2}", "defaultdict({'a': 2})")
    assert match("{'a': 1, 'b': 2}", "OrderedDict([('b', 2), ('a', 1)])")
    assert not match("{'a': 2}", "Counter({'a': 2, 'b': 0})")  # dict == Counter is dict's ==
    assert not match("True", "Fraction(1, 1)") and not match("1", "Decimal('1')", STRICT)
    assert not match("0.1", "Decimal('0.1')", EXACT)  # Decimal('0.1') != 0.1: exact values differ
    assert match("nan", "Decimal('NaN')") and not match("1.0", "Decimal('sNaN')")
    assert not match("1.0", "Decimal('Infinity')") and not match("inf", "Decimal('-Infinity')")
    only_float_loose = CompareOptions(int_float="float_accepts_int", float_rel_tol=0)
    assert match("[2.5]", "[Fraction(5, 2)]", only_float_loose)
    assert not match("[2]", "[Fraction(2, 1)]", only_float_loose)
    assert not match("{0.5}", "{Fraction(1, 2)}")  # set elements are type-tagged, as 1 and 1.0 are
    # between two results (a program and its task's reference, as the probe compares them)
    both = [
        ("Counter({'a': 1, 'b': 0})", "Counter({'a': 1})", True),
        ("OrderedDict([('a', 1), ('b', 2)])", "OrderedDict([('b', 2), ('a', 1)])", False),
        ("deque([1, 2])", "deque([1, 2])", True),
        (
            "datetime(2020, 1, 1, 1, 0, 0, 0, timezone(timedelta(0, 3600, 0)))",
            "datetime(2020, 1, 1, 0, 0, 0, 0, timezone(timedelta(0, 0, 0)))",
            True,
        ),
        (
            "datetime(2020, 1, 1, 0, 0, 0, 0)",
            "datetime(2020, 1, 1, 0, 0, 0, 0, timezone(timedelta(0, 0, 0)))",
            False,
        ),
        ("date(2020, 1, 1)", "datetime(2020, 1, 1, 0, 0, 0, 0)", False),
        ("Decimal('1E+5000')", repr(LargeInt("1" + "0" * 5000)), True),
    ]
    for a, b, equal in both:
        assert values_match(parse_literal(a), parse_literal(b), EXACT) == equal, (a, b)
        assert (parse_literal(a) == parse_literal(b)) == equal or "E+5000" in a


def _tagged_text(v: object) -> str:
    """What the sandbox writes for a value (its stub's writer, for the types drawn here)."""
    if type(v) is Fraction:
        return f"Fraction({v.numerator}, {v.denominator})"
    if type(v) is Decimal:
        return f"Decimal({str(v)!r})"
    if type(v) is deque:
        return f"deque({_tagged_text(list(v))})"
    if isinstance(v, Counter | defaultdict) and type(v) is not dict:
        return f"{type(v).__name__}({_tagged_text(dict(v))})"
    if isinstance(v, OrderedDict):
        return f"OrderedDict({_tagged_text(list(v.items()))})"
    if type(v) is list:
        return "[" + ", ".join(map(_tagged_text, v)) + "]"
    if type(v) is tuple:
        return "(" + "".join(_tagged_text(x) + ", " for x in v) + ")"
    if type(v) is dict:
        return "{" + ", ".join(f"{_tagged_text(k)}: {_tagged_text(x)}" for k, x in v.items()) + "}"
    return repr(v)


@st.composite
def trusted_twin(draw: st.DrawFn, value: object) -> object:
    """A value equal to ``value`` under == (or not) by way of a trusted standard-library type."""
    if type(value) is int:
        return draw(st.sampled_from([Fraction(value), Decimal(value), Fraction(2 * value + 1, 2), value]))
    if type(value) is float and math.isfinite(value):
        return draw(st.sampled_from([Fraction(value), Decimal(value), Decimal(repr(value)), value]))
    if isinstance(value, list):
        elements = [draw(trusted_twin(v)) for v in value]
        return draw(st.sampled_from([elements, deque(elements)]))
    if isinstance(value, tuple):
        return tuple(draw(trusted_twin(v)) for v in value)
    if isinstance(value, dict):
        items: dict[object, object] = {k: draw(trusted_twin(v)) for k, v in value.items()}
        return draw(st.sampled_from([items, Counter(items), OrderedDict(items), defaultdict(None, items)]))
    return value


@settings(max_examples=500, deadline=None)
@given(st.data())
def test_trusted_values_compare_as_pythons_equality(data: st.DataObject) -> None:
    a = data.draw(comparable.filter(lambda v: not isinstance(v, set)))
    b = data.draw(trusted_twin(a))
    assert values_match(a, b, EXACT) == (a == b)
    assert values_match(a, parse_literal(_tagged_text(b)), EXACT) == (a == b)


#: integers a multiple of 2**61 - 1 apart share one hash on a 64-bit host (and not in the 32-bit WASM
#: guest, which builds a set of them at once)
_ONE_HASH = [k * (2**61 - 1) for k in range(1, 2001)]


@pytest.mark.parametrize(
    "text",
    [
        "{" + ", ".join(map(str, _ONE_HASH)) + "}",
        "frozenset({" + ", ".join(map(str, _ONE_HASH)) + "})",
        "{" + ", ".join(f"{v}: 0" for v in _ONE_HASH) + "}",
        "Counter({" + ", ".join(f"{v}: 1" for v in _ONE_HASH) + "})",
        "OrderedDict([" + ", ".join(f"({v}, 0)" for v in _ONE_HASH) + "])",
        "{" + ", ".join(f"({v},)" for v in _ONE_HASH) + "}",
        "[{" + ", ".join(map(str, _ONE_HASH)) + "}]",
    ],
    ids=["set", "frozenset", "dict", "Counter", "OrderedDict", "tuples", "nested"],
)
def test_a_set_or_dict_whose_elements_share_one_hash_is_refused(text: str) -> None:
    # building it costs time quadratic in those elements: 38,000 of them fit in a result and cost the
    # host about a minute each; refused in one pass before any set is built
    assert sys.hash_info.modulus == 2**61 - 1 and len({hash(v) for v in _ONE_HASH}) == 1
    with pytest.raises(NotALiteral, match="share one hash"):
        parse_literal(text)


def test_elements_that_share_a_hash_by_chance_still_parse() -> None:
    # -1 and -2 share a hash in CPython, and a few colliding integers (up to the bound) are still a value
    assert parse_literal("{-1, -2, 3}") == {-1, -2, 3}
    assert parse_literal("{-1: 'a', -2: 'b'}") == {-1: "a", -2: "b"}
    few = _ONE_HASH[:16]
    assert parse_literal("{" + ", ".join(map(str, few)) + "}") == set(few)
    many = list(range(-50_000, 50_000, 7))
    assert parse_literal(repr(set(many))) == set(many)
