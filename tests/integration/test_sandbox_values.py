"""What a returned value becomes on its way out of the sandbox, on both backends: trusted types are
normalised to the plain literals they equal, anything with equality of its own is refused, numpy's
integers are 64-bit wherever the result is judged, and a large correct result passes end to end."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from decimal import Decimal

import pytest

from schemas.literals import LargeInt
from schemas.rollout import MAX_RESULT_CHARS
from schemas.task import TaskPublished, TestCase
from streams.noise.config import NoiseConfig
from streams.reward.evaluate import Evaluator
from streams.reward.function import get_reward_function
from streams.reward.literals import CompareOptions, parse_literal, values_match
from streams.sandbox import Limits, Sandbox, SandboxConfig

BACKENDS = ["wasm", "container"]
LIMITS = Limits(timeout_s=30.0, memory_mb=512)

NORMALISED = {
    "numpy-int64": ("np.int64(7)", "7"),
    "numpy-float32": ("np.float32(0.5)", "0.5"),
    "numpy-bool": ("np.bool_(True)", "True"),
    "numpy-2d-array": ("np.array([[1, 2], [3, 4]])", "[[1, 2], [3, 4]]"),
    "numpy-float-array": ("np.arange(3) / 2", "[0.0, 0.5, 1.0]"),
    "namedtuple": ("collections.namedtuple('P', 'x y')(1, 2)", "(1, 2)"),
    "bytearray": ("bytearray(b'ab')", "b'ab'"),
    # trusted standard-library values keep their type: a deque is no list under ==
    "counter": ("collections.Counter('abca')", "Counter({'a': 2, 'b': 1, 'c': 1})"),
    "defaultdict": ("collections.defaultdict(list, {'x': [1]})", "defaultdict({'x': [1]})"),
    "ordered-dict": ("collections.OrderedDict([('b', 1), ('a', 2)])", "OrderedDict([('b', 1), ('a', 2)])"),
    "deque": ("collections.deque([1, (2, 3)])", "deque([1, (2, 3)])"),
    "fraction": ("fractions.Fraction(-15, 2)", "Fraction(-15, 2)"),
    "array": ("array.array('q', [1, -2])", "array('q', [1, -2])"),
    "float-array": ("array.array('d', [0.5])", "array('d', [0.5])"),
    "datetime": (
        "datetime.datetime(2020, 1, 2, 3, 4, 5, 6, datetime.timezone(datetime.timedelta(hours=-1)))",
        "datetime(2020, 1, 2, 3, 4, 5, 6, timezone(timedelta(-1, 82800, 0)))",
    ),
    "date-in-a-set": ("{datetime.date(2020, 1, 2)}", "{date(2020, 1, 2)}"),
    "one-tuple-of-timedelta": ("(datetime.timedelta(seconds=5),)", "(timedelta(0, 5, 0),)"),
    # pure-Python wrappers compare as what they hold (UserDict, ChainMap: as the dict of their items)
    "userlist": ("collections.UserList([1, (2,)])", "[1, (2,)]"),
    "userstring": ("collections.UserString('ab')", "'ab'"),
    "userdict": ("collections.UserDict(collections.Counter('aa'))", "{'a': 2}"),
    "chainmap": ("collections.ChainMap({'a': 1}, {'a': 2, 'b': [3]})", "{'a': 1, 'b': [3]}"),
    "userlist-of-a-patched-class": (
        "(setattr(collections.UserList, '__eq__', lambda s, o: True), collections.UserList([5]))[1]",
        "[5]",
    ),
    # a dict's keys and items views are sets under ==
    "dict-keys": ("{'a': 1}.keys()", "{'a'}"),
    "dict-items": ("{'a': 1}.items()", "{('a', 1)}"),
    "nested": (
        "{'a': [np.int32(1), collections.deque([np.float64(2.5), fractions.Fraction(1, 3)])]}",
        "{'a': [1, deque([2.5, Fraction(1, 3)])]}",
    ),
}
#: written differently by a C decimal and a pure-Python one (WASM's): the same value either way
DECIMALS = {
    "decimal": ("decimal.Decimal('7.50')", Decimal("7.50")),
    "decimal-nan": ("decimal.Decimal('-sNaN3')", None),
}
REFUSED = {
    "counter-with-equality": "type('C', (collections.Counter,), {'__eq__': lambda s, o: True})('ab')",
    "namedtuple-with-equality": (
        "type('R', (collections.namedtuple('P', 'x'),), {'__eq__': lambda s, o: True})(1)"
    ),
    "list-subclass": "type('L', (list,), {})([1])",
    "userlist-subclass": "type('U', (collections.UserList,), {'__eq__': lambda s, o: True})([1])",
    "userlist-holding-an-object": (
        "(lambda u: (setattr(u, 'data', type('E', (), {})()), u)[1])(collections.UserList())"
    ),
    "chainmap-over-a-counter": "collections.ChainMap(collections.Counter(), {'a': 1})",
    "dict-values": "{'a': 1}.values()",
    "array-of-characters": "array.array('u', 'ab')",
    "array-subclass": "type('A', (array.array,), {'__eq__': lambda s, o: True})('q', [1])",
    "object-array": "np.array([object()], dtype=object)",
    "fraction-subclass": "type('F', (fractions.Fraction,), {'__eq__': lambda s, o: True})(1, 2)",
    "class-posing-as-fraction": (
        "type('Fraction', (), {'__module__': 'fractions', '__eq__': lambda s, o: True})()"
    ),
    "decimal-subclass": "type('D', (decimal.Decimal,), {})('1')",
    "time-zone-of-its-own": (
        "datetime.datetime(2020, 1, 1, "
        "tzinfo=type('Z', (datetime.tzinfo,), {'utcoffset': lambda s, d: None})())"
    ),
    "heap-type-posing-as-numpy": (
        "type('int64', (int,), {'__module__': 'numpy', '__eq__': lambda s, o: True})(1)"
    ),
}


@pytest.fixture(scope="module")
def sandbox(ready_sandbox: Callable[[SandboxConfig], Sandbox]) -> Sandbox:
    return ready_sandbox(SandboxConfig())


@pytest.mark.parametrize("backend", BACKENDS)
def test_trusted_types_are_normalised_and_objects_with_their_own_equality_refused(
    sandbox: Sandbox, backend: str
) -> None:
    kinds = {**{k: v for k, (v, _) in (NORMALISED | DECIMALS).items()}, **REFUSED}
    code = "import array\nimport collections\nimport datetime\nimport decimal\nimport fractions\n"
    code += "import numpy as np\n"
    code += "VALUES = {\n"
    code += "".join(f"    {k!r}: lambda: {v},\n" for k, v in kinds.items()) + "}\n"
    code += "def f(kind):\n    return VALUES[kind]()\n"
    r = sandbox.run_cases(code, "f", [repr((k,)) for k in kinds], limits=LIMITS, backend=backend)
    assert r.backend == backend
    got = {k: (c.status, c.result_repr, c.error) for k, c in zip(kinds, r.cases, strict=True)}
    for name, (_, expected) in NORMALISED.items():
        assert got[name] == ("ok", expected, None), (name, got[name])
    for name, (_, value) in DECIMALS.items():
        status, text, _ = got[name]
        rebuilt = parse_literal(text or "")
        assert status == "ok" and type(rebuilt) is Decimal, (name, got[name])
        assert str(rebuilt) == "-sNaN3" if value is None else rebuilt == value, (name, got[name])
    for name in REFUSED:
        status, _, error = got[name]
        assert status == "error" and "not a plain literal" in (error or ""), (name, got[name])


#: classes of the program's own that take the names (and slots) of the pure-Python standard-library
#: types, with no arithmetic or equality of their own: a caller sees ``object``'s identity equality,
#: never the number their slots hold. One program names fractions (the jail then imports it before
#: the program loads), the other builds the module's name (the jail then has no real class at all).
POSING = """
import fractions


class Fraction:
    __module__ = "fractions"
    __slots__ = ("_numerator", "_denominator")


class Decimal:
    __module__ = "decimal"
    __slots__ = ("_sign", "_int", "_exp", "_is_special")


def f(kind):
    if kind == "real":
        return fractions.Fraction(1, 2)
    if kind == "fraction":
        out = Fraction()
        out._numerator, out._denominator = 1, 2
        return out
    out = Decimal()
    out._sign, out._int, out._exp, out._is_special = 0, "5", -1, False
    return out
"""
#: the same look-alikes from a program whose text never names fractions (the jail imports no fractions)
POSING_UNNAMED = """
def f(kind):
    if kind == "f":
        name, module, values = "Frac" + "tion", "frac" + "tions", (1, 2)
        slots = ("_numerator", "_denominator")
    else:
        name, module, values = "Decimal", "decimal", (0, "5", -1, False)
        slots = ("_sign", "_int", "_exp", "_is_special")
    out = type(name, (), {"__module__": module, "__slots__": slots})()
    for slot, value in zip(slots, values):
        setattr(out, slot, value)
    return out
"""


@pytest.mark.parametrize(
    ("backend", "fork_server"), [("wasm", True), ("container", True), ("container", False)]
)
def test_a_class_posing_as_fraction_or_decimal_is_refused_the_real_one_read(
    ready_sandbox: Callable[[SandboxConfig], Sandbox], backend: str, fork_server: bool
) -> None:
    """A Fraction or a Decimal is read from its slots only where its class is the standard library's
    own (the very class, not one named like it): a bare slotted look-alike is refused as any unknown
    object, whether or not the program names the module, while a real Fraction still passes (the
    jail's fork server imported fractions for every execution; a jail of its own imports it for a
    program that names it)."""
    sandbox = ready_sandbox(SandboxConfig(container_fork_server=fork_server))
    named = sandbox.run_cases(
        POSING, "f", ["('real',)", "('fraction',)", "('decimal',)"], limits=LIMITS, backend=backend
    )
    unnamed = sandbox.run_cases(POSING_UNNAMED, "f", ["('f',)", "('d',)"], limits=LIMITS, backend=backend)
    assert named.backend == unnamed.backend == backend
    real, *posing = named.cases
    assert (real.status, real.result_repr) == ("ok", "Fraction(1, 2)"), real
    for case in (*posing, *unnamed.cases):
        assert case.status == "error" and "not a plain literal" in (case.error or ""), case


INT32_OVERFLOW = "import numpy as np\ndef f(n):\n    return int(np.array([2**30] * n).sum())\n"


def test_numpy_programs_get_64_bit_integers_wherever_they_are_judged(sandbox: Sandbox) -> None:
    """numpy's default integer is 32-bit on wasm32: `auto` runs numpy programs in the container, whose
    numpy is 64-bit, so the answer does not depend on where the program ran (the jail must have numpy:
    the set-up installs it)."""
    assert sandbox.container().has_site, "run `bash scripts/setup.d/20-sandbox.sh` (the jail's numpy)"
    auto = sandbox.run_cases(INT32_OVERFLOW, "f", ["(4,)"], limits=LIMITS, backend="auto")
    container = sandbox.run_cases(INT32_OVERFLOW, "f", ["(4,)"], limits=LIMITS, backend="container")
    assert auto.backend == "container" and "64-bit" in auto.backend_reason
    assert [c.result_repr for c in auto.cases] == [c.result_repr for c in container.cases] == [str(2**32)]
    # hidden from the static scan, the import is still reported by the WASM guest and routed
    hidden = INT32_OVERFLOW.replace("import numpy as np", "np = __import__('nu' + 'mpy')")
    routed = sandbox.run_cases(hidden, "f", ["(4,)"], limits=LIMITS, backend="auto")
    assert routed.backend == "container" and "numpy" in routed.backend_reason
    assert [c.result_repr for c in routed.cases] == [str(2**32)]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_large_correct_result_passes_and_so_does_its_reference(sandbox: Sandbox, backend: str) -> None:
    n = 30_000
    expected = repr(list(range(n)))
    assert 100 * 1024 < len(expected) < MAX_RESULT_CHARS
    task = TaskPublished(
        task_id="t/big",
        prompt="def big(n):\n    '''0..n-1 as a list'''\n",
        entry_point="big",
        tests=(TestCase(input=f"({n},)", output=expected), TestCase(input="(3,)", output="[0, 1, 2]")),
        reference="def big(n):\n    return list(range(n))\n",
    )
    evaluator = Evaluator(sandbox, get_reward_function("code-v1"), NoiseConfig(), reruns=0)
    result = evaluator.evaluate(task, "def big(n):\n    return [i for i in range(n)]\n", backend=backend)  # type: ignore[arg-type]
    assert result.execution.backend == backend
    assert result.reward.passed == 2 and result.reward.total_cases == 2, result.execution.cases[0].error
    assert result.reference_execution is not None
    assert all(c.status == "ok" for c in result.reference_execution.cases)
    assert "task.reference_fails" not in {r.code for r in result.verdict.reasons}
    too_big = sandbox.run_cases(
        "def big(n):\n    return 'x' * n\n", "big", [f"({MAX_RESULT_CHARS},)"], limits=LIMITS, backend=backend
    )
    assert too_big.cases[0].status == "error" and "too large" in (too_big.cases[0].error or "")


@pytest.mark.parametrize("backend", BACKENDS)
def test_integers_past_the_int_str_conversion_limit_are_results_and_inputs(
    sandbox: Sandbox, backend: str
) -> None:
    # 2000! has 5,736 digits: more than Python's default 4,300 for an int/str conversion
    code = "import math\n\ndef fact(n):\n    return math.factorial(n)\n\ndef inc(x):\n    return [x + 1]\n"
    huge = 10**5000
    with_limit_lifted = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        fact, bigger = str(math.factorial(2000)), repr([huge + 1])
        literal = str(huge)
    finally:
        sys.set_int_max_str_digits(with_limit_lifted)
    r = sandbox.run_cases(code, "fact", ["(2000,)", "(5,)"], limits=LIMITS, backend=backend)
    assert [c.result_repr for c in r.cases] == [fact, "120"], r.cases[0].error
    # and the reward reads it back without converting it, and compares it exactly
    got = parse_literal(r.cases[0].result_repr or "")
    assert isinstance(got, LargeInt) and values_match(parse_literal(fact), got, CompareOptions())
    r = sandbox.run_cases(code, "inc", [f"({literal},)"], limits=LIMITS, backend=backend)
    assert r.cases[0].result_repr == bigger, r.cases[0].error
    check = f"def check(candidate):\n    assert candidate({literal}) == [{literal} + 1]\n    import math\n"
    check += "    assert candidate(1) == [2]\n"
    assert sandbox.run_check(code, check, "inc", limits=LIMITS, backend=backend).check_passed
    # one whose digits cannot fit a result is refused before it is converted
    r = sandbox.run_cases(
        "def f():\n    return 10 ** 1_000_001\n", "f", ["()"], limits=LIMITS, backend=backend
    )
    assert r.cases[0].status == "error" and "result too large" in (r.cases[0].error or "")


MODULE_IDENTITY = """
import pickle
import sys
from dataclasses import dataclass


@dataclass
class Acc:
    total: int = 0


def f(kind):
    me = sys.modules[__name__]
    if kind == "self":
        return [__name__, me.f is f, me.Acc is Acc]
    if kind == "pickle":
        return pickle.loads(pickle.dumps(Acc(3))).total
    return pickle.loads(pickle.dumps(f)) is f
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_program_is_a_module_registered_under_its_name(sandbox: Sandbox, backend: str) -> None:
    """As an import would have it: ``sys.modules[__name__]`` is the program, and its classes and
    functions pickle by reference; a script runs as ``__main__``, as ``python FILE`` runs it."""
    r = sandbox.run_cases(
        MODULE_IDENTITY, "f", ["('self',)", "('pickle',)", "('function',)"], limits=LIMITS, backend=backend
    )
    assert [(c.status, c.result_repr) for c in r.cases] == [
        ("ok", "['solution', True, True]"),
        ("ok", "3"),
        ("ok", "True"),
    ], r.cases
    script = "import sys\nimport pickle\ndef g():\n    pass\n"
    script += "assert sys.modules['__main__'].g is g and pickle.loads(pickle.dumps(g)) is g\n"
    script += "print(__name__)\n"
    s = sandbox.run_script(script, limits=LIMITS, backend=backend)
    assert (s.exit_code, s.stdout.strip()) == (0, "__main__"), (s.exit_code, s.stderr)


TRUSTED_IN_CHECK = """
import collections
import fractions


def f(kind):
    if kind == "deque":
        return collections.deque([1, 2])
    if kind == "counter":
        return collections.Counter("aab")
    return fractions.Fraction(1, 2)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_check_compares_trusted_values_as_python_does(sandbox: Sandbox, backend: str) -> None:
    """The check guest rebuilds a tagged result with its own classes: a Fraction equal to the float
    the check expects passes, a Counter equals its dict, and a deque is not the list a check expects."""
    passes = "def check(candidate):\n    assert candidate('fraction') == 0.5\n"
    passes += "    assert candidate('counter') == {'a': 2, 'b': 1}\n"
    passes += "    assert type(candidate('deque')).__name__ == 'deque'\n"
    r = sandbox.run_check(TRUSTED_IN_CHECK, passes, "f", limits=LIMITS, backend=backend)
    assert r.check_passed, r.cases
    fails = "def check(candidate):\n    assert candidate('deque') == [1, 2]\n"
    assert not sandbox.run_check(TRUSTED_IN_CHECK, fails, "f", limits=LIMITS, backend=backend).check_passed


ARRAY_IN_CHECK = """
import array


def sort_third(l):
    out = array.array("q", l)
    out[::3] = array.array("q", sorted(l[::3]))
    return out
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_check_reads_an_array_as_python_does(sandbox: Sandbox, backend: str) -> None:
    """An ``array.array`` reaches the check as an array of the check guest's own: ``tuple()`` of it is
    the tuple of its elements (HumanEval/33's check), and it is no list under ``==``."""
    passes = "def check(candidate):\n"
    passes += "    assert tuple(candidate([5, 6, 3, 4, 8, 9, 2])) == (2, 6, 3, 4, 8, 9, 5)\n"
    r = sandbox.run_check(ARRAY_IN_CHECK, passes, "sort_third", limits=LIMITS, backend=backend)
    assert r.check_passed, r.cases
    fails = "def check(candidate):\n    assert candidate([1, 2]) == [1, 2]\n"
    r = sandbox.run_check(ARRAY_IN_CHECK, fails, "sort_third", limits=LIMITS, backend=backend)
    assert not r.check_passed
