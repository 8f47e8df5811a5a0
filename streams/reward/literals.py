"""Parsing of plain Python literals reported over the trusted channel, and type-strict comparison.

The sandbox returns ``repr()`` text of each value the program returned. Only plain literals are ever
turned back into values here: anything else (the repr of a custom object, a call, a name) is a
failure and is never compared with the program's own ``==``. Expected values never enter the sandbox,
so a program cannot learn them and cannot override how they are compared.

Every byte of a result comes from a program and is hostile until proven otherwise: the parser of
results (:func:`parse_literal`) reads only the grammar ``repr()`` of plain values produces, in one
pass, with bounds on size, nesting and digits, and raises nothing but :class:`NotALiteral`; the
comparison (:func:`values_match`) never raises at all. A value no real program could return (a set
that repeats an element) is refused like any other non-literal. An integer past Python's int/str
conversion limit (4,300 digits: a factorial, a Fibonacci number) is kept as its digits
(:class:`schemas.literals.LargeInt`) and compared by them, never converted (quadratic on 3.11).
"""

from __future__ import annotations

import ast
import datetime
import math
import re
from array import array
from collections import Counter, OrderedDict, defaultdict, deque
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Literal

from schemas import pyast
from schemas.literals import MAX_INT_DIGITS, LargeInt, Shielded, large_int, shield_long_ints
from schemas.rollout import MAX_RESULT_CHARS

#: how an expected ``int`` and a returned ``float`` (or the other way round) compare
IntFloatPolicy = Literal["strict", "float_accepts_int", "numeric"]

_SCALARS = (int, float, complex, str, bytes, bool, type(None))

#: reprs longer than this are not parsed: a flood is a failed case, not a memory problem for the host.
#: The sandbox reports nothing longer either: one limit for both, defined with the event it bounds
MAX_REPR_CHARS = MAX_RESULT_CHARS
#: containers nested deeper than this are refused (CPython's own parser stops at 200 brackets)
MAX_DEPTH = 100


class NotALiteral(ValueError):
    """The text is not a plain literal (or is too large to be trusted)."""


# ------------------------------------------------------------------------ trusted standard-library values
#: Values of these standard-library types are reported as ``Name(args)`` with plain arguments (the
#: sandbox's stub reads them with C-level accessors and never calls a method of theirs) and rebuilt here
#: with the host's own classes, so they compare as Python compares them: ``Fraction(15, 2) == 7.5``,
#: ``Counter(...) == {...}``, but ``deque([1]) != [1]``. A subclass, or any other class, is refused in
#: the sandbox as before (``not_literal``).
TAGGED_TYPES: frozenset[str] = frozenset(
    (
        "Fraction", "Decimal", "deque", "Counter", "defaultdict", "OrderedDict", "date", "datetime", "time",
        "timedelta", "timezone", "array",
    )
)  # fmt: skip
#: ``array(typecode, [...])``: the typecodes of numbers, integers then floats
_ARRAY_INT_CODES, _ARRAY_FLOAT_CODES = "bBhHiIlLqQ", "fd"
#: the text of ``str(Decimal)``: a finite number, an infinity or a (signalling) NaN with its payload
_DECIMAL = re.compile(r"-?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:E[+-]?[0-9]+)?|Infinity|s?NaN[0-9]*)")
_DATETIME_TYPES = (datetime.date, datetime.datetime, datetime.time, datetime.timedelta, datetime.timezone)
#: an exact number of a type beside int and float: compared with them by value, as ``==`` does
_EXACT = (Fraction, Decimal)


def _ints(name: str, args: list[object], counts: tuple[int, ...]) -> list[int]:
    if len(args) not in counts or any(type(a) is not int for a in args):
        raise NotALiteral(f"{name}(...) takes {' or '.join(map(str, counts))} plain integers")
    return args  # type: ignore[return-value]


def _zone(name: str, args: list[object], fields: int) -> tuple[list[int], datetime.tzinfo | None]:
    if len(args) == fields + 1:
        zone = args[-1]
        if type(zone) is not datetime.timezone:
            raise NotALiteral(f"{name}(...) with a time zone other than a fixed offset")
        return _ints(name, args[:-1], (fields,)), zone
    return _ints(name, args, (fields,)), None


def rebuild_tagged(name: str, args: list[object]) -> object:
    """The value ``Name(*args)`` stands for, made by the host's own class from plain arguments; raises
    :class:`NotALiteral` for anything the sandbox never writes (wrong arity, types, ranges)."""
    try:
        if name == "Fraction":
            num, den = _ints(name, args, (2,))
            if den <= 0:
                raise NotALiteral("Fraction(...) with a denominator that is not positive")
            return Fraction(num, den)
        if name == "Decimal":
            if len(args) != 1 or type(args[0]) is not str or not _DECIMAL.fullmatch(args[0]):
                raise NotALiteral("Decimal(...) takes the text str() writes of one")
            return Decimal(args[0])
        if name == "array":
            # the sandbox writes array(code, [...]); Python's repr of an empty one is array(code)
            code = args[0] if len(args) in (1, 2) else None
            items = args[1] if len(args) == 2 else []
            if type(code) is not str or len(code) != 1 or code not in _ARRAY_INT_CODES + _ARRAY_FLOAT_CODES:
                raise NotALiteral("array(...) takes a typecode of numbers")
            number = int if code in _ARRAY_INT_CODES else float
            if type(items) is not list or any(type(x) is not number for x in items):
                raise NotALiteral(f"array({code!r}, ...) takes one list of {number.__name__}s")
            return array(code, items)
        if name in ("deque", "Counter", "defaultdict"):
            want = list if name == "deque" else dict
            if len(args) != 1 or type(args[0]) is not want:
                raise NotALiteral(f"{name}(...) takes one {want.__name__}")
            if name == "deque":
                return deque(args[0])  # type: ignore[call-overload]
            return Counter(args[0]) if name == "Counter" else defaultdict(None, args[0])  # type: ignore[call-overload]
        if name == "OrderedDict":
            pairs = args[0] if len(args) == 1 else None
            if type(pairs) is not list or any(type(p) is not tuple or len(p) != 2 for p in pairs):
                raise NotALiteral("OrderedDict(...) takes one list of (key, value) pairs")
            _spread([k for k, _ in pairs])
            out = OrderedDict((_hashable(k), v) for k, v in pairs)
            if len(out) != len(pairs):
                raise NotALiteral("an OrderedDict repeats a key: no dict prints that way")
            return out
        if name == "timedelta":
            days, seconds, micro = _ints(name, args, (3,))
            if not (0 <= seconds < 86400 and 0 <= micro < 1_000_000):
                raise NotALiteral("timedelta(...) with fields out of their normal range")
            return datetime.timedelta(days, seconds, micro)
        if name == "timezone":
            if len(args) != 1 or type(args[0]) is not datetime.timedelta:
                raise NotALiteral("timezone(...) takes one timedelta")
            return datetime.timezone(args[0])
        if name == "date":
            return datetime.date(*_ints(name, args, (3,)))
        if name == "time":
            fields, zone = _zone(name, args, 4)
            hour, minute, second, micro = fields
            return datetime.time(hour, minute, second, micro, zone)
        if name == "datetime":
            fields, zone = _zone(name, args, 7)
            year, month, day, hour, minute, second, micro = fields
            return datetime.datetime(year, month, day, hour, minute, second, micro, zone)
    except (ValueError, TypeError, OverflowError, ArithmeticError) as exc:
        if isinstance(exc, NotALiteral):
            raise
        raise NotALiteral(f"{name}(...) out of range: {exc.__class__.__name__}") from None
    raise NotALiteral(f"the name {name[:40]!r} is not a plain literal")


@dataclass(frozen=True)
class CompareOptions:
    """How values are compared; part of a reward function's configuration (and so of its version).

    The comparison is Python's own ``==`` on plain values, made stricter where ``==`` would let a wrong
    type through (``True == 1``, ``{1} == {1.0}``), plus one documented looseness: ``float_rel_tol``
    (and ``float_abs_tol``) where the expected value is a ``float``, so a correct program is not failed
    for last-digit rounding (another summation order, another maths library). An expected ``int`` is
    exact: it matches an ``int`` of the same value or a ``float`` that is exactly that integer.
    """

    #: ``strict``: int and float never match; ``float_accepts_int``: an expected float accepts an int;
    #: ``numeric``: ints and floats compare by value both ways (bools never match numbers)
    int_float: IntFloatPolicy = "numeric"
    #: relative tolerance where the expected value is a float (0: exact)
    float_rel_tol: float = 1e-9
    #: absolute tolerance where the expected value is a float (0: none)
    float_abs_tol: float = 0.0
    #: the tolerances above also apply where the expected value is an ``int`` (code-v1's rule: it let
    #: a float within 1e-9 of a large integer pass; never set from code-v3 on)
    int_tolerance: bool = False
    #: an expected NaN matches a returned NaN (``nan == nan`` is False in Python, so a case whose
    #: expected value is NaN could otherwise never pass)
    nan_equal: bool = True
    #: reprs longer than this are not parsed
    max_repr_chars: int = MAX_REPR_CHARS
    #: where the expected value is a float, a float within this many units in its last place also
    #: matches (0: none; code-v5 on: the rounding another order of a few operations gives)
    float_ulps: int = 0
    #: the tolerance the task's check states (relative, absolute; ``TaskPublished.tolerance``): a number
    #: that matches by the rules above must also lie within it (None: no bound of the task's own)
    stated_tolerance: tuple[float, float] | None = None
    #: a case also accepts the answer the task's reference gave in the same backend, where that answer
    #: differs from the task's expected value in float values alone (code-v5 on: the expected value as
    #: the interpreter that runs the program computes it: ``sum()`` of floats is compensated from 3.12)
    reference_band: bool = False


# ------------------------------------------------------------------------------------ results (untrusted)

_TOKEN = re.compile(
    r"""\s*(?:
      (?P<str>[bB]?(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"))
    | (?P<num>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[jJ]?)
    | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    | (?P<punct>[\[\](){},:+-])
    )""",
    re.VERBOSE | re.DOTALL,
)
_NAMES: dict[str, object] = {
    "None": None,
    "True": True,
    "False": False,
    "inf": math.inf,
    "nan": math.nan,
    "infj": complex(0, math.inf),
    "nanj": complex(0, math.nan),
}
_END = ("end", "")
#: a string body whose escapes are all ones Python knows (repr writes a subset of them)
_ESCAPES = re.compile(
    r"""(?:[^\\]|\\(?:[\\'"abfnrtv0-7]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}))*""", re.DOTALL
)


class _Parser:
    """One pass over the text with one token of lookahead; recursion bounded by ``max_depth``."""

    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.pos = 0
        self.max_depth = max_depth
        self.tok = self._read()

    def _read(self) -> tuple[str, str]:
        m = _TOKEN.match(self.text, self.pos)
        if m is None:
            rest = self.text[self.pos :]
            if not rest.strip():
                self.pos = len(self.text)
                return _END
            raise NotALiteral(f"unexpected text at character {self.pos}: {rest.strip()[:20]!r}")
        self.pos = m.end()
        kind = m.lastgroup
        assert kind is not None
        return kind, m.group(kind)

    def _take(self) -> tuple[str, str]:
        tok = self.tok
        self.tok = self._read()
        return tok

    def _expect(self, punct: str) -> None:
        if self.tok != ("punct", punct):
            raise NotALiteral(f"expected {punct!r} at character {self.pos}")
        self._take()

    def _at(self, punct: str) -> bool:
        return self.tok == ("punct", punct)

    def value(self, depth: int = 0) -> object:
        if depth >= self.max_depth:
            raise NotALiteral(f"nested deeper than {self.max_depth} levels")
        kind, text = self._take()
        if kind == "punct":
            if text == "[":
                return self._items("]", depth)
            if text == "(":
                if self._at(")"):
                    self._take()
                    return ()
                first = self.value(depth + 1)
                if self._at(")"):  # (1+2j): a parenthesised value, not a tuple
                    self._take()
                    return first
                self._expect(",")
                return (first, *self._items(")", depth))
            if text == "{":
                return self._braces(depth)
            if text == "-":
                return self._complex_tail(self._negated(), depth)
            raise NotALiteral(f"unexpected {text!r}")
        if kind == "num":
            return self._complex_tail(self._number(text), depth)
        if kind == "str":
            return _string(text)
        if kind == "name":
            if text in _NAMES:
                return self._complex_tail(_NAMES[text], depth) if text in ("inf", "nan") else _NAMES[text]
            if text in ("set", "frozenset"):
                return self._set_call(text, depth)
            if text in TAGGED_TYPES:
                return self._tagged(text, depth)
            raise NotALiteral(f"the name {text[:40]!r} is not a plain literal")
        raise NotALiteral("the text ended before the value did")

    def _items(self, close: str, depth: int) -> list[object]:
        out: list[object] = []
        while not self._at(close):
            out.append(self.value(depth + 1))
            if not self._at(close):
                self._expect(",")
        self._take()
        return out

    def _braces(self, depth: int) -> object:
        if self._at("}"):
            self._take()
            return {}
        first = self.value(depth + 1)
        if self._at(":"):
            self._take()
            keys, values = [first], [self.value(depth + 1)]
            while self._at(","):
                self._take()
                if self._at("}"):
                    break
                keys.append(self.value(depth + 1))
                self._expect(":")
                values.append(self.value(depth + 1))
            self._expect("}")
            _spread(keys)
            out = {_hashable(k): v for k, v in zip(keys, values, strict=True)}
            if len(out) != len(keys):
                raise NotALiteral("a dict repeats a key: no dict prints that way")
            return out
        elements = [first]
        while self._at(","):
            self._take()
            if self._at("}"):
                break
            elements.append(self.value(depth + 1))
        self._expect("}")
        return _unique_set(elements)

    def _set_call(self, name: str, depth: int) -> object:
        self._expect("(")
        if self._at(")"):
            self._take()
            return set() if name == "set" else frozenset()
        if name == "set":
            raise NotALiteral("set(...) with arguments is not a repr")
        self._expect("{")
        inner = self._braces(depth + 1)
        self._expect(")")
        if not isinstance(inner, set):
            raise NotALiteral("frozenset of something other than a set")
        return frozenset(inner)

    def _tagged(self, name: str, depth: int) -> object:
        """``Name(args)``: a value of a trusted standard-library type, rebuilt with the host's class."""
        if depth + 1 >= self.max_depth:
            raise NotALiteral(f"nested deeper than {self.max_depth} levels")
        self._expect("(")
        return rebuild_tagged(name, self._items(")", depth + 1))

    def _number(self, text: str) -> int | float | complex | LargeInt:
        if text[-1] in "jJ":
            return complex(0, float(text[:-1]))
        if "." in text or "e" in text or "E" in text:
            return float(text)
        if len(text) > MAX_INT_DIGITS:
            try:
                return large_int(text)  # kept as its digits, never converted
            except ValueError as exc:  # leading zeros
                raise NotALiteral(str(exc)) from None
        if len(text) > 1 and text[0] == "0" and text.strip("0"):
            raise NotALiteral("an integer literal with leading zeros")
        return int(text)

    def _negated(self) -> int | float | complex | LargeInt:
        """The number after a minus sign (the sign binds to it alone: ``-1+2j`` is ``(-1)+2j``)."""
        kind, text = self._take()
        if kind == "num" and text[-1] in "jJ":
            return complex(0.0, -float(text[:-1]))  # -1j is complex(0.0, -1.0), as repr() prints it
        if kind == "num" and (self._at("+") or self._at("-")):
            return -float(text)  # the real part of (-0+1j): a float, its sign kept
        if kind == "num":
            return -self._number(text)
        if kind == "name" and text in ("infj", "nanj"):
            return complex(0.0, -float(text[:-1]))
        if kind == "name" and text in ("inf", "nan"):
            return -float(text)
        raise NotALiteral("a sign applied to something other than a number")

    def _complex_tail(self, real: object, depth: int) -> object:
        """``1+2j`` / ``-0-1j`` / ``nan+infj``: a real part followed by a signed imaginary one."""
        if not (self._at("+") or self._at("-")) or isinstance(real, complex):
            return real
        if isinstance(real, LargeInt):
            raise NotALiteral("arithmetic is not a literal")  # no complex has a real part that long
        sign = self._take()[1]
        imag = self.value(depth + 1)
        if not isinstance(imag, complex) or imag.real != 0:
            raise NotALiteral("arithmetic is not a literal")
        assert isinstance(real, int | float)
        return complex(real, imag.imag if sign == "+" else -imag.imag)


def _string(token: str) -> str | bytes:
    is_bytes = token[0] in "bB"
    body = token[2:-1] if is_bytes else token[1:-1]
    if "\\" not in body:
        if is_bytes:
            try:
                return body.encode("ascii")
            except UnicodeEncodeError:
                raise NotALiteral("bytes with a non-ASCII character") from None
        return body
    if not _ESCAPES.fullmatch(body):
        raise NotALiteral("a string with an escape repr() never writes")
    try:
        value = pyast.literal_eval(token)  # one string constant: escapes decoded exactly as Python does
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise NotALiteral("a string with an invalid escape") from None
    assert isinstance(value, str | bytes)
    return value


def _hashable(value: object) -> object:
    try:
        hash(value)
    except TypeError:
        raise NotALiteral("unhashable set element or dict key") from None
    return value


#: at most this many elements of one set (keys of one dict) may share one hash value. Building a set
#: costs time quadratic in the elements that share a hash, and a program controls which do: integers a
#: multiple of 2**61 - 1 apart all hash alike on a 64-bit host, while the WASM guest (32-bit, its hashes
#: modulo 2**31 - 1) builds a set of them at once; 38,000 such integers print in under 1 M characters
#: and cost the host about a minute per result. Plain values a program computes share a hash by chance
#: only (-1 and -2; strings are hashed with this process's own secret), so a real answer never comes near
MAX_SHARED_HASH = 16


def _spread(items: list[object]) -> None:
    """Raise :class:`NotALiteral` where more than :data:`MAX_SHARED_HASH` of ``items`` (about to become a
    set's elements or a dict's keys) share one hash value: one pass, before any set is built."""
    counts: dict[int, int] = {}
    for item in items:
        h = hash(_hashable(item))
        n = counts.get(h, 0) + 1
        if n > MAX_SHARED_HASH:
            raise NotALiteral(f"more than {MAX_SHARED_HASH} set elements or dict keys share one hash value")
        counts[h] = n


def _unique_set(elements: list[object]) -> set[object]:
    _spread(elements)
    out = {_hashable(e) for e in elements}
    if len(out) != len(elements):
        raise NotALiteral("a set repeats an element: no set prints that way")
    return out


def parse_literal(text: str, *, max_chars: int = MAX_REPR_CHARS, max_depth: int = MAX_DEPTH) -> object:
    """Turn a result's ``repr()`` text back into a value, accepting plain literals only.

    Reads the grammar ``repr()`` of None, bool, int, float, complex, str, bytes, list, tuple, set,
    frozenset and dict produces (``set()``, ``frozenset({...})``, ``inf``, ``nan`` included) and
    nothing else. Bounded: at most ``max_chars`` characters and ``max_depth`` levels of nesting; an
    integer of more than :data:`MAX_INT_DIGITS` digits is a :class:`LargeInt`, never converted. Raises
    :class:`NotALiteral` and nothing else.
    """
    if not isinstance(text, str):
        raise NotALiteral(f"a result repr must be text, not {type(text).__name__}")
    if len(text) > max_chars:
        raise NotALiteral(f"repr has {len(text)} characters, more than the {max_chars} allowed")
    key = (text, max_chars, max_depth)
    short = len(text) <= SHARED_CHARS
    if short:
        found = _SHARED.get(key, _MISSING)
        if found is not _MISSING:
            return found
    try:
        parser = _Parser(text, max_depth)
        value = parser.value()
        if parser.tok != _END:
            raise NotALiteral(f"unexpected text after the value at character {parser.pos}")
    except NotALiteral:
        raise
    except (ValueError, TypeError, OverflowError, RecursionError, MemoryError) as exc:
        raise NotALiteral(f"not parsable: {exc.__class__.__name__}") from None
    if short and _shareable(value, 0):
        if len(_SHARED) >= SHARED_KEPT:
            _SHARED.clear()  # dict operations alone: safe for callers on several threads
        _SHARED[key] = value
    return value


#: short answers read back as immutable values, kept (at most ``SHARED_KEPT``, each of at most
#: ``SHARED_CHARS`` characters) and handed out again: a group's samples, and the reference, give the
#: same answers on the same probe plan, and each was parsed anew for every sample (a third of the
#: filter's judging of a small task). Only values no caller can change and whose sharing no comparison
#: can see are kept: ints, strings, bytes, booleans, None, floats other than NaN (a NaN equals itself
#: inside a container only where it is the same object) and tuples and frozensets of those.
SHARED_CHARS = 200
SHARED_KEPT = 8192
_SHARED: dict[tuple[str, int, int], object] = {}
_MISSING = object()
_SHAREABLE_SCALARS = frozenset({int, str, bytes, bool, type(None)})


def _shareable(value: object, depth: int) -> bool:
    kind = type(value)
    if kind in _SHAREABLE_SCALARS:
        return True
    if kind is float:
        return value == value  # not NaN
    if (kind is tuple or kind is frozenset) and depth < 8:
        return all(_shareable(v, depth + 1) for v in value)  # type: ignore[attr-defined]
    return False


# ---------------------------------------------------------------------------- expected values (the task's)


#: tasks are trusted and validated when published: only CPython's own parser limits their nesting
_EXPECTED_MAX_DEPTH = 200


@lru_cache(maxsize=4096)
def _parse_expected(text: str) -> object:
    # an integer past the int/str conversion limit is read as its digits (schemas.literals), not converted
    shielded = shield_long_ints(text.strip())
    try:
        tree = pyast.parse(shielded.text, mode="eval")
        return _convert(tree.body, 0, shielded)
    except NotALiteral:
        raise
    except (SyntaxError, ValueError, TypeError, OverflowError, RecursionError, MemoryError) as exc:
        raise NotALiteral(f"not a literal: {exc.__class__.__name__}") from None


def parse_expected(text: str) -> object:
    """A task's literal (an expected output or an argument tuple): what ``ast.literal_eval`` accepts
    plus ``set()``, ``frozenset({...})``, ``inf`` and ``nan``, and integers past the conversion limit as
    :class:`LargeInt`. Tasks are validated when published, so
    this is parsed once per text and cached; the comparison never mutates what it is given."""
    return _parse_expected(text)


def _convert(node: ast.expr, depth: int, sh: Shielded) -> object:
    if depth > _EXPECTED_MAX_DEPTH:
        raise NotALiteral(f"nested deeper than {_EXPECTED_MAX_DEPTH} levels")
    d = depth + 1
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return sh.restore(node.value)
        if isinstance(node.value, bytes) and sh.digits:
            return sh.restore(node.value.decode("latin-1")).encode("latin-1")
        if isinstance(node.value, _SCALARS):
            return node.value
        raise NotALiteral(f"constant of type {type(node.value).__name__}")
    if isinstance(node, ast.Tuple):
        return tuple(_convert(e, d, sh) for e in node.elts)
    if isinstance(node, ast.List):
        return [_convert(e, d, sh) for e in node.elts]
    if isinstance(node, ast.Set):
        return {_hashable(_convert(e, d, sh)) for e in node.elts}
    if isinstance(node, ast.Dict):
        out: dict[object, object] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                raise NotALiteral("dict unpacking")
            out[_hashable(_convert(k, d, sh))] = _convert(v, d, sh)
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _convert(node.operand, d, sh)
        if isinstance(operand, LargeInt):
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(operand, bool) or not isinstance(operand, int | float | complex):
            raise NotALiteral("sign applied to a non-number")
        return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        # complex numbers print as (1+2j)
        left, right = _convert(node.left, d, sh), _convert(node.right, d, sh)
        if isinstance(left, int | float) and not isinstance(left, bool) and isinstance(right, complex):
            return left + right if isinstance(node.op, ast.Add) else left - right
        raise NotALiteral("arithmetic is not a literal")
    if isinstance(node, ast.Name) and node.id in ("inf", "nan", "infj", "nanj"):
        return _NAMES[node.id]
    if isinstance(node, ast.Name) and (large := sh.value_of(node.id)) is not None:
        return large
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        if node.func.id == "set" and not node.args:
            return set()
        if node.func.id == "frozenset":
            if not node.args:
                return frozenset()
            if len(node.args) == 1 and isinstance(node.args[0], ast.Set):
                inner = _convert(node.args[0], d, sh)
                assert isinstance(inner, set)
                return frozenset(inner)
    raise NotALiteral(f"{node.__class__.__name__} is not a plain literal")


# ------------------------------------------------------------------------------------------- comparison


def canonical_key(value: object) -> object:
    """A hashable, type-tagged form of a value: ``1``, ``1.0`` and ``True`` get different keys.

    Used where values meet as set elements or dict keys, which Python would otherwise merge
    (``{1: 'a'}`` has the key ``True``). A set and a frozenset share a tag, as they do under ``==``; so do
    a dict and the dict types equal to it (``Counter``, ``defaultdict``, ``OrderedDict``).
    """
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    if isinstance(value, LargeInt):
        return ("int", value)
    if isinstance(value, complex) and (math.isnan(value.real) or math.isnan(value.imag)):
        return ("complex", repr(value))
    if isinstance(value, _SCALARS):
        return (type(value).__name__, value)
    if type(value) is Decimal:
        return ("Decimal", str(value) if value.is_nan() else value)
    if type(value) in (Fraction, *_DATETIME_TYPES):
        return (type(value).__name__, value)
    if isinstance(value, tuple):
        return ("tuple", tuple(canonical_key(v) for v in value))
    if isinstance(value, list | deque | array):
        return (type(value).__name__, tuple(canonical_key(v) for v in value))
    if isinstance(value, set | frozenset):
        return ("set", frozenset(canonical_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", frozenset((canonical_key(k), canonical_key(v)) for k, v in value.items()))
    raise NotALiteral(f"{type(value).__name__} is not a plain literal type")


def values_match(expected: object, got: object, options: CompareOptions) -> bool:
    """Type-strict recursive comparison of two values rebuilt by the parsers here (plain literals and
    trusted standard-library values). Never calls a program-defined ``__eq__`` and never raises:
    anything it cannot decide is a mismatch."""
    try:
        return _match(expected, got, options)
    except (RecursionError, MemoryError, NotALiteral, TypeError, ValueError, OverflowError, ArithmeticError):
        return False


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _is_exact_number(v: object) -> bool:
    """A number of any type ``==`` compares by value with ints and floats (bool aside)."""
    return type(v) in (int, float, Fraction, Decimal)


def _numbers_match(e: int | float, g: int | float, o: CompareOptions) -> bool:
    """:func:`_function_numbers_match`, and within the tolerance the task's check states where it
    states one: the check's bound is never loosened by the function's rules (a check stating
    ``< 1e-12`` fails an answer 1e-8 off a large value that a relative 1e-9 accepts), and a looser one
    does not loosen them (the function's own rules are what tell a correct float answer from an
    imprecise one the check happens to tolerate)."""
    if not _function_numbers_match(e, g, o):
        return False
    if o.stated_tolerance is None or e == g or (isinstance(e, float) and math.isnan(e)):
        return True
    rel, abs_ = o.stated_tolerance
    fe, fg = Fraction(e), Fraction(g)
    return abs(fe - fg) <= max(Fraction(rel) * max(abs(fe), abs(fg)), Fraction(abs_))


def _function_numbers_match(e: int | float, g: int | float, o: CompareOptions) -> bool:
    """``e == g`` exactly (Python compares ints and floats by exact value, without overflow), or within
    the float tolerances when the expected value is a float (or, under code-v1's rule, an int meeting a
    float). Two ints always compare exactly."""
    if isinstance(e, float) and math.isnan(e):
        return o.nan_equal and isinstance(g, float) and math.isnan(g)
    if e == g:
        return True
    tolerant = isinstance(e, float) or o.int_tolerance
    if not tolerant or (o.float_rel_tol == 0 and o.float_abs_tol == 0 and o.float_ulps == 0):
        return False
    if any(isinstance(v, float) and not math.isfinite(v) for v in (e, g)):
        return False  # infinities only ever match themselves, NaN only NaN
    # units in the last place of the expected float (of an int, under code-v1's rule: none)
    ulps = Fraction(math.ulp(e)) * o.float_ulps if isinstance(e, float) else Fraction(0)
    if isinstance(e, float) and isinstance(g, float):
        if math.isclose(e, g, rel_tol=o.float_rel_tol, abs_tol=o.float_abs_tol):
            return True
        return bool(ulps) and abs(Fraction(e) - Fraction(g)) <= ulps
    # an int too large for a float meets a float: exact arithmetic, never an OverflowError
    fe, fg = Fraction(e), Fraction(g)
    bound = max(Fraction(o.float_rel_tol) * max(abs(fe), abs(fg)), Fraction(o.float_abs_tol), ulps)
    return abs(fe - fg) <= bound


def _is_nan(v: object) -> bool:
    return (type(v) is float and math.isnan(v)) or (type(v) is Decimal and v.is_nan())  # type: ignore[union-attr]


def _exact_numbers_match(e: object, g: object, o: CompareOptions) -> bool:
    """A Fraction or a Decimal meets a number: by exact value, as ``==`` (``Fraction(15, 2) == 7.5``);
    where the expected value is a float, within its tolerance as a float of the same value would be."""
    if o.int_float == "strict" and type(e) is not type(g):
        return False
    if o.int_float == "float_accepts_int" and type(e) is not type(g) and type(e) is not float:
        return False
    if _is_nan(e) or _is_nan(g):
        return o.nan_equal and _is_nan(e) and _is_nan(g)
    if e == g:  # the host's own classes: exact, and an infinity equals only an infinity of its sign
        return True
    if type(e) is not float or type(g) is float or (o.float_rel_tol == o.float_abs_tol == o.float_ulps == 0):
        return False
    as_float = float(g)  # type: ignore[arg-type] # within a tolerance, rounding to the nearest float changes nothing  # type: ignore[arg-type]
    return math.isfinite(as_float) and _numbers_match(e, as_float, o)


def _match(e: object, g: object, o: CompareOptions) -> bool:
    te, tg = type(e), type(g)
    if te is not tg:
        if _is_number(e) and _is_number(g):
            if o.int_float == "strict":
                return False
            if o.int_float == "float_accepts_int" and not (te is float and tg is int):
                return False
            return _numbers_match(e, g, o)  # type: ignore[arg-type]
        if (te in _EXACT or tg in _EXACT) and _is_exact_number(e) and _is_exact_number(g):
            return _exact_numbers_match(e, g, o)
        if {te, tg} == {LargeInt, Decimal}:
            large, dec = (e, g) if te is LargeInt else (g, e)
            return Decimal(repr(large)) == dec  # exact, and never converted to an int
        if isinstance(e, set | frozenset) and isinstance(g, set | frozenset):
            return _sets_match(e, g)
        if isinstance(e, dict) and isinstance(g, dict):
            return _dicts_match(e, g, o)  # Counter, defaultdict, OrderedDict: dict's == against a dict
        return False
    if te is float:
        return _numbers_match(e, g, o)  # type: ignore[arg-type]
    if te is complex:
        assert isinstance(e, complex) and isinstance(g, complex)
        return _numbers_match(e.real, g.real, o) and _numbers_match(e.imag, g.imag, o)
    if te in (int, str, bytes, bool, type(None), LargeInt, *_DATETIME_TYPES):
        return e == g
    if te in _EXACT:
        return _exact_numbers_match(e, g, o)
    if te is list or te is tuple or te is deque or te is array:
        assert isinstance(e, list | tuple | deque | array) and isinstance(g, list | tuple | deque | array)
        return len(e) == len(g) and all(_match(a, b, o) for a, b in zip(e, g, strict=True))
    if te is set or te is frozenset:
        assert isinstance(e, set | frozenset) and isinstance(g, set | frozenset)
        return _sets_match(e, g)
    if te is Counter:
        assert isinstance(e, Counter) and isinstance(g, Counter)
        # Counter == Counter treats a missing element as a zero count
        return _dicts_match(_no_zeros(e), _no_zeros(g), o)
    if te is OrderedDict:  # OrderedDict == OrderedDict is order-sensitive
        assert isinstance(e, OrderedDict) and isinstance(g, OrderedDict)
        return _dicts_match(e, g, o) and all(
            canonical_key(a) == canonical_key(b) for a, b in zip(e, g, strict=True)
        )
    if te is dict or te is defaultdict:
        assert isinstance(e, dict) and isinstance(g, dict)
        return _dicts_match(e, g, o)
    return False


def differ_in_floats_only(a: object, b: object) -> bool:
    """``a`` and ``b`` have one shape and equal values everywhere but at floats (two results of one
    algorithm under two interpreters' float arithmetic); never raises."""
    try:
        return _same_but_floats(a, b, 0)
    except (RecursionError, MemoryError, NotALiteral, TypeError, ValueError, OverflowError, ArithmeticError):
        return False


def _same_but_floats(a: object, b: object, depth: int) -> bool:
    if depth > _EXPECTED_MAX_DEPTH:
        return False
    if type(a) is float and type(b) is float:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple | deque | array):
        assert isinstance(b, list | tuple | deque | array)
        return len(a) == len(b) and all(_same_but_floats(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        assert isinstance(b, dict)
        keys = {canonical_key(k): k for k in b}
        return len(a) == len(b) and all(
            canonical_key(k) in keys and _same_but_floats(v, b[keys[canonical_key(k)]], depth + 1)
            for k, v in a.items()
        )
    return _match(a, b, _EXACT_RULE)


#: Python's == with the type strictness only
_EXACT_RULE = CompareOptions(float_rel_tol=0.0)


def _no_zeros(counts: Counter[object]) -> dict[object, object]:
    return {k: v for k, v in counts.items() if not (_is_exact_number(v) and v == 0)}


def _dicts_match(e: dict[object, object], g: dict[object, object], o: CompareOptions) -> bool:
    if len(e) != len(g):
        return False
    got_by_key = {canonical_key(k): v for k, v in g.items()}
    for k, v in e.items():
        ck = canonical_key(k)
        if ck not in got_by_key or not _match(v, got_by_key[ck], o):
            return False
    return True


def _sets_match(e: set[object] | frozenset[object], g: set[object] | frozenset[object]) -> bool:
    # set elements are hashable scalars and tuples: compared exactly, type-tagged
    return len(e) == len(g) and {canonical_key(v) for v in e} == {canonical_key(v) for v in g}
