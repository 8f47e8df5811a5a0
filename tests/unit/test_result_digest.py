"""Digests of results whose text cannot travel (``schemas.digest``): the stub's digest of a value equals
the host's digest of the same value on both backends, kind by kind; what a digest can and cannot say
(a float inside an expected value: not judged; a float that is an integer inside a program's answer:
equal to that int); and a digest the program writes itself is never believed."""

from __future__ import annotations

from collections import Counter, OrderedDict, defaultdict, deque
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction

import pytest

from schemas.digest import OVER_CAP, canonical_text, decimal_int, digests_equal, value_digest
from schemas.literals import LargeInt
from schemas.rollout import CaseResult
from streams.reward.literals import CompareOptions, parse_literal, values_match
from streams.sandbox import Sandbox, SandboxConfig
from streams.sandbox.result import bound_cases
from tests.conftest import SANDBOX_BACKENDS

#: padding that takes any value past a result's size (1 M characters)
PAD = 200_000

#: (name, expression of the value the program returns after its padding, its digest's kind)
KINDS = [
    ("ints", "list(range(-5, n))", "E"),
    ("strs", "[str(i) + '\\u00e9\\U0001f600' for i in range(n)]", "E"),
    ("surrogate", "['\\ud800' + str(i) for i in range(n)]", "E"),
    ("bytes", "[bytes([i % 256, 0]) for i in range(n)]", "E"),
    ("tuples", "[(i, None, True, False) for i in range(n)]", "E"),
    ("dict", "{str(i): [i] for i in range(n)}", "E"),
    ("set", "set(range(n)) | {(1, 'a'), 'z', b'q'}", "E"),
    ("frozenset", "[frozenset({i, -i}) for i in range(n)]", "E"),
    ("nested", "[[i, [i, (i,)], {i: {i}}] for i in range(n // 4)]", "E"),
    ("bigint", "list(range(n)) + [7 ** 10000, -(3 ** 20000)]", "E"),
    ("hugeint", "list(range(n)) + [10 ** 30000]", "N"),
    ("floats", "[float(i) for i in range(n)]", "N"),
    ("halves", "[i + 0.5 for i in range(n)]", "N"),
    ("float_keys", "{float(i): i for i in range(n)}", "N"),
    ("float_set", "{float(i) for i in range(n)}", "N"),
    (
        "numbers",
        "[Fraction(i, 1) for i in range(n)] + [Fraction(1, 3), Decimal('12.000'), Decimal('1E+3'),"
        " Decimal('7.5'), Decimal('-0'), Decimal('NaN'), float('inf'), 1 + 2j]",
        "N",
    ),
    (
        "mappings",
        "[Counter({i: 2}) for i in range(n // 2)] + [OrderedDict([(2, 3), (1, 4)]),"
        " defaultdict(int, {1: 1})]",
        "N",
    ),
    ("others", "[deque([i]) for i in range(n // 2)] + [datetime.date(2020, 1, 2)]", "N"),
    ("numpy", "numpy.arange(n).reshape(-1, 2)", "E"),
]

CODE = (
    "import datetime\n"
    "from collections import Counter, OrderedDict, defaultdict, deque\n"
    "from decimal import Decimal\n"
    "from fractions import Fraction\n"
    "def f(kind, n):\n"
    "    if kind == 'numpy':\n"
    "        import numpy\n"
    + "".join(f"    if kind == {name!r}:\n        return {expr}\n" for name, expr, _ in KINDS)
)

#: the same values built on the host
HOST_NAMES = {
    "Counter": Counter,
    "OrderedDict": OrderedDict,
    "defaultdict": defaultdict,
    "deque": deque,
    "Decimal": Decimal,
    "Fraction": Fraction,
    "datetime": __import__("datetime"),
}


def _host_value(name: str, expr: str, n: int) -> object:
    if name == "numpy":
        return [[i, i + 1] for i in range(0, n, 2)]
    return eval(expr, dict(HOST_NAMES), {"n": n})


@pytest.fixture(scope="module")
def sandbox(ready_sandbox: Callable[[SandboxConfig], Sandbox]) -> Sandbox:
    return ready_sandbox(SandboxConfig())


@pytest.mark.parametrize("backend", SANDBOX_BACKENDS)
def test_the_stub_digest_is_the_host_digest_for_each_kind(sandbox: Sandbox, backend: str) -> None:
    inputs = [f"({name!r}, {PAD})" for name, _, _ in KINDS]
    run = sandbox.run_cases(
        CODE, "f", inputs, limits=sandbox.limits(timeout_s=120, memory_mb=1024), backend=backend
    )
    assert run.deviation is None and len(run.cases) == len(KINDS)
    for case, (name, expr, kind) in zip(run.cases, KINDS, strict=True):
        assert case.status == "error" and case.digest is not None, (name, case.error)
        assert case.error is not None and case.error.startswith("ValueError: result too large"), name
        assert case.digest[0] == kind, name
        assert case.digest == value_digest(_host_value(name, expr, PAD)), name


@pytest.mark.parametrize("backend", SANDBOX_BACKENDS)
def test_results_past_the_execution_budget_keep_their_digest(sandbox: Sandbox, backend: str) -> None:
    """Eight answers of ~890,000 characters: the first four fit what an execution keeps, the rest are
    not kept and come back with their digests; kept ones carry none."""
    code = "def f(k):\n    return [k] * 90_000 + list(range(10**6, 10**6 + 80_000))\n"
    run = sandbox.run_cases(code, "f", [str(k) for k in range(8)], backend=backend)
    kept = [c for c in run.cases if c.status == "ok"]
    dropped = [c for c in run.cases if c.status == "error"]
    assert 3 <= len(kept) < 8 and all(c.digest is None for c in kept)
    assert dropped and all(c.digest is not None for c in dropped)
    for c in dropped:
        assert c.digest == value_digest([c.index] * 90_000 + list(range(10**6, 10**6 + 80_000)))
    # the host's digest of a kept answer, read back from its text, is the stub's of that value
    for c in kept:
        assert c.result_repr is not None
        assert value_digest(parse_literal(c.result_repr)) == value_digest(
            [c.index] * 90_000 + list(range(10**6, 10**6 + 80_000))
        )


@pytest.mark.parametrize("backend", SANDBOX_BACKENDS)
def test_a_digest_text_the_program_writes_is_not_believed(sandbox: Sandbox, backend: str) -> None:
    """A program raising an error whose text holds a digest, or returning one as a string, gets no
    digest: only the stub's own message sets one."""
    forged = value_digest(list(range(PAD)))
    assert forged is not None
    code = (
        "def f(k):\n"
        f"    if k == 0:\n        raise ValueError('result too large: 2000000 characters {forged}')\n"
        f"    if k == 1:\n        return {forged!r}\n"
        f"    return type('result too large', (Exception,), {{}})({forged!r} + '\\n')\n"
    )
    run = sandbox.run_cases(code, "f", ["0", "1", "2"], backend=backend)
    assert [c.digest for c in run.cases] == [None, None, None]
    assert run.cases[1].status == "ok"


def test_a_float_inside_the_expected_value_is_not_judged() -> None:
    ints, floats = value_digest([1, 2, 3]), value_digest([1.0, 2.0, 3.0])
    assert ints is not None and floats is not None and ints[0] == "E" and floats[0] == "N"
    # a program's integral floats equal the expected ints (the comparer accepts them)
    assert digests_equal(ints, floats) is True
    assert values_match([1, 2, 3], [1.0, 2.0, 3.0], CompareOptions())
    # an expected value holding a float says nothing, whatever the program's digest
    assert digests_equal(floats, ints) is None
    assert digests_equal(floats, floats) is None
    # a non-integral float can equal no expected int
    assert digests_equal(ints, value_digest([1, 2, 3.5]) or "") is False


@pytest.mark.parametrize(
    ("expected", "got"),
    [
        ([1, 2], (1, 2)),  # a tuple is no list
        ([True], [1]),  # a bool is no int
        ({1: "a"}, {1.0: "a"}),  # the comparer tells a float key from an int key
        ({(1, 2)}, {(1.0, 2)}),  # and a float inside a set
        ([1, 2], [Fraction(1), Decimal("2.0")]),  # exact numbers equal to the ints
        ({"a": 1}, Counter({"a": 1})),
        ({"a": 1}, OrderedDict([("a", 1)])),
        ([1], [deque([1])]),
        ([0], [Decimal("-0")]),
        ([LargeInt("1" + "0" * 5000)], [LargeInt("1" + "0" * 5000)]),
        ([LargeInt("1" + "0" * 5000)], [LargeInt("1" + "0" * 4999 + "1")]),
        ([10**5000], [1e300]),
        ([10**300], [1e300]),
        ({1, 2}, frozenset({2, 1})),
        ("ab", b"ab"),
    ],
)
def test_digests_agree_with_the_comparer_where_the_expected_value_is_exact(
    expected: object, got: object
) -> None:
    e, g = value_digest(expected), value_digest(got)
    assert e is not None and g is not None and e[0] == "E"
    assert digests_equal(e, g) is values_match(expected, got, CompareOptions())


def test_a_large_int_read_back_has_the_digest_of_the_int() -> None:
    assert value_digest([10**5000]) == value_digest([LargeInt("1" + "0" * 5000)])
    assert value_digest([-(10**5000)]) == value_digest([LargeInt("1" + "0" * 5000, negative=True)])


def test_decimal_integers() -> None:
    assert decimal_int("12.000") == "12"
    assert decimal_int("-1.2E+5") == "-120000"
    assert decimal_int("100E-2") == "1"
    assert decimal_int("750E-2") is None
    assert decimal_int("0E-7") == "0"
    assert decimal_int("NaN") is None
    assert decimal_int("1E+999999") is None


def test_a_canonical_text_past_its_cap_is_over_cap() -> None:
    assert canonical_text(list(range(1000)), cap=100) is None
    assert value_digest(["x" * 9_000_000]) == OVER_CAP
    assert digests_equal(value_digest([1]) or "", OVER_CAP) is False


def test_bound_cases_keeps_the_digest_of_a_result_it_leaves_out() -> None:
    d = value_digest(list(range(10)))
    big = CaseResult(index=0, status="ok", result_repr="[" + "1, " * 400_000 + "1]", digest=d)
    cases = bound_cases((big, big.model_copy(update={"index": 1})), budget=1_500_000)
    assert cases[0].status == "ok" and cases[0].digest is None
    assert cases[1].status == "error" and cases[1].digest == d
    # and a case without a digest is written as it always was
    assert "digest" not in CaseResult(index=0, status="ok", result_repr="1").model_dump_json()
