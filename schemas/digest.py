"""Digests of results whose text cannot travel: one canonical form, computed alike by the sandbox's stub
(``streams/sandbox/guest_harness.pysrc``, ``_digest``) and by the host (:func:`value_digest`).

A result's ``repr`` is the only way an answer travels, and its size is bounded (``MAX_RESULT_CHARS`` a
result, ``MAX_EXECUTION_RESULT_BYTES`` an execution). Where a result is past either, the stub reports a
fixed-size digest of a *canonical text* of the value instead, and the judge compares digests. The
canonical text is a prefix-free grammar, one token a value:

====================  ==================================================================================
``i<digits>;``        an int (its decimal digits, a ``-`` first when negative); one of more than
                      :data:`MAX_DIGEST_DIGITS` digits is a mark (below)
``T`` ``F`` ``N``     True, False, None
``s<n>:<text>``       a str of ``n`` characters
``b<n>:<hex>``        bytes, ``n`` of them, in hex
``[...]`` ``(...)``   a list, a tuple: their items' tokens in order
``{...}``             a dict: each key's token followed by its value's, the entries sorted as text
``<...>``             a set or a frozenset (one under ``==``): its elements' tokens, sorted
``x``                 a *mark*: a part that is equal to no part of a value of exact kinds
====================  ==================================================================================

The *kind* says what the text stands for:

- ``E`` (exact): the value holds ints, strs, bools, None, bytes, lists, tuples, dicts, sets and
  frozensets only. For two such values the comparer's equality (``streams.reward.literals``: type-strict
  ``==``) is equality of their canonical texts.
- ``N``: the value holds something else, written as what it equals *when the other side is exact*:
  a float or a ``Fraction`` that is an integer as that int (not inside a set or a dict key, where the
  comparer tells a float from an int), an integral ``Decimal`` likewise, a ``Counter``,
  ``defaultdict`` or ``OrderedDict`` as the dict of its items (``==`` against a dict); every other
  float, number or value (a complex, a ``deque``, a date, a non-integral float, a NaN) as a mark. So
  an ``N`` text equals an ``E`` text exactly where the comparer, under its ``numeric`` rule, finds the
  two values equal with the ``E`` one expected; two ``N`` texts say nothing of each other.
- ``X``: the canonical text is longer than :data:`MAX_DIGEST_CHARS` characters: not computed past that.
  Unequal to every ``E`` value within the cap (their texts' lengths differ).

A digest is ``<kind>:<sha256 hex of the text, UTF-8 with lone surrogates kept>:<the text's length>``
(``X:<64 zeros>:<the cap>`` past the cap). Only an expected (the reference's, or a case's) value of kind
``E`` is ever judged by digest.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import re
from collections import Counter, OrderedDict, defaultdict, deque
from decimal import Decimal
from fractions import Fraction

from schemas.literals import LargeInt
from schemas.rollout import MAX_RESULT_CHARS

#: the longest canonical text the stub and the host write (characters); past it the digest is ``X``
MAX_DIGEST_CHARS = 8 * MAX_RESULT_CHARS
#: an int of more decimal digits than this is a mark in the canonical text (converting it costs time
#: quadratic in its digits on some interpreters)
MAX_DIGEST_DIGITS = 20_000
#: the bit length past which the stub marks an int without converting it (more than
#: ``MAX_DIGEST_DIGITS`` digits for certain), and below which it converts it to count them
_DIGEST_BITS = int(MAX_DIGEST_DIGITS * math.log2(10)) + 8
#: what a digest looks like; anything else is not one
DIGEST = re.compile(r"[EN]:[0-9a-f]{64}:[0-9]{1,10}|X:0{64}:[0-9]{1,10}")
#: the digest of a canonical text past the cap
OVER_CAP = "X:" + "0" * 64 + ":" + str(MAX_DIGEST_CHARS)


class _OverCap(Exception):
    pass


class _Writer:
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.chars = 0
        self.converted = False

    def count(self, text: str) -> str:
        self.chars += len(text)
        if self.chars > self.cap:
            raise _OverCap
        return text

    def mark(self) -> str:
        self.converted = True
        return self.count("x")

    def int_text(self, digits: str) -> str:
        if len(digits.lstrip("-")) > MAX_DIGEST_DIGITS:
            return self.mark()
        return self.count("i" + digits + ";")

    def write(self, v: object, key: bool) -> str:
        t = type(v)
        if t is int:
            assert isinstance(v, int)
            if v.bit_length() > _DIGEST_BITS:
                return self.mark()
            return self.int_text(_int_digits(v))
        if t is LargeInt:
            assert isinstance(v, LargeInt)
            return self.int_text(repr(v))
        if t is str:
            assert isinstance(v, str)
            return self.count("s" + str(len(v)) + ":" + v)
        if t is bool:
            return self.count("T" if v else "F")
        if v is None:
            return self.count("N")
        if t is bytes:
            assert isinstance(v, bytes)
            return self.count("b" + str(len(v)) + ":" + v.hex())
        if t is list or t is tuple:
            assert isinstance(v, list | tuple)
            self.count("[]")
            kinds = set(map(type, v))
            if kinds == {int} and max(map(int.bit_length, v)) < 13_000:
                # the common large answer, written at C speed (the same text as item by item)
                inner = self.count("i" + ";i".join(map(str, v)) + ";")
            elif kinds == {str}:
                inner = self.count("".join(["s" + str(len(x)) + ":" + x for x in v]))
            else:
                inner = "".join([self.write(x, key) for x in v])
            return ("[" + inner + "]") if t is list else ("(" + inner + ")")
        if t is set or t is frozenset:
            assert isinstance(v, set | frozenset)
            self.count("<>")
            return "<" + "".join(sorted([self.write(x, True) for x in v])) + ">"
        if t is dict:
            assert isinstance(v, dict)
            return self._entries(list(v.items()))
        # -- N: what equals an exact value, or a mark
        self.converted = True
        if t is float:
            assert isinstance(v, float)
            if key or not v.is_integer():
                return self.mark()
            return self.write(int(v), key)
        if t is Fraction:
            assert isinstance(v, Fraction)
            if key or v.denominator != 1:
                return self.mark()
            return self.write(v.numerator, key)
        if t is Decimal:
            assert isinstance(v, Decimal)
            whole = None if key else decimal_int(str(v))
            return self.mark() if whole is None else self.int_text(whole)
        if t is Counter or t is defaultdict or t is OrderedDict:
            assert isinstance(v, dict)
            return self._entries(list(v.items()))
        if t in (complex, deque, *_DATETIME):
            return self.mark()
        raise TypeError(f"no canonical text for {t.__name__}")

    def _entries(self, items: list[tuple[object, object]]) -> str:
        self.count("{}")
        return "{" + "".join(sorted([self.write(k, True) + self.write(x, False) for k, x in items])) + "}"


_DATETIME = (datetime.date, datetime.datetime, datetime.time, datetime.timedelta, datetime.timezone)


def _int_digits(v: int) -> str:
    import sys

    if v.bit_length() < 13_000:  # fewer than 4,000 digits: within the conversion limit
        return str(v)
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return str(v)
    finally:
        sys.set_int_max_str_digits(before)


#: ``str()`` of a finite Decimal: sign, digits, an optional fraction, an optional exponent
_DECIMAL_PARTS = re.compile(r"(-?)([0-9]+)(?:\.([0-9]*))?(?:E([+-]?[0-9]+))?")


def decimal_int(text: str) -> str | None:
    """The decimal digits of the integer a Decimal's ``str()`` stands for (``-`` first when negative;
    ``0`` for a zero of either sign), or None: not an integer, not finite, or past
    :data:`MAX_DIGEST_DIGITS` digits (the stub reads the same text the same way)."""
    m = _DECIMAL_PARTS.fullmatch(text)
    if m is None:
        return None
    sign, whole, frac, exp = m[1], m[2], m[3] or "", m[4]
    digits = (whole + frac).lstrip("0")
    if not digits:
        return "0"
    if exp is not None and len(exp) >= 12:
        return None
    shift = (int(exp) if exp is not None else 0) - len(frac)
    if shift < 0:
        kept, dropped = digits[:shift] if len(digits) > -shift else "", digits[shift:]
        if dropped.strip("0"):
            return None
        digits = kept or "0"
        if digits == "0":
            return "0"
    elif len(digits) + shift > MAX_DIGEST_DIGITS:
        return None
    else:
        digits += "0" * shift
    return sign + digits


def canonical_text(value: object, cap: int = MAX_DIGEST_CHARS) -> tuple[str, str] | None:
    """(kind, text) of ``value`` (``E`` or ``N``), or None where the text passes ``cap``. Raises
    TypeError for a value no parser here makes."""
    w = _Writer(cap)
    try:
        text = w.write(value, False)
    except _OverCap:
        return None
    return ("N" if w.converted else "E"), text


def value_digest(value: object) -> str | None:
    """The digest the stub would report for ``value`` (a value rebuilt by ``streams.reward.literals``),
    or None where it has no canonical text (a type no result has)."""
    try:
        found = canonical_text(value)
    except (TypeError, RecursionError):
        return None
    if found is None:
        return OVER_CAP
    kind, text = found
    return f"{kind}:{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}:{len(text)}"


def digests_equal(expected: str, got: str) -> bool | None:
    """Whether a program's answer with digest ``got`` equals the expected answer with digest
    ``expected`` under the comparer's ``numeric`` rule; None where digests cannot tell (the expected
    value is not of exact kinds, or either digest is malformed)."""
    if not DIGEST.fullmatch(expected) or not DIGEST.fullmatch(got) or expected[0] != "E":
        return None
    if got[0] == "X":
        return False
    return expected[2:] == got[2:]
