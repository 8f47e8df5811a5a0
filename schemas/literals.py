"""Integers past Python's int/str conversion limit in literal text, kept as their decimal digits.

A correct program may return an integer with more than 4,300 digits (a factorial, a Fibonacci
number), and a task may expect one. Python refuses to convert such an integer to or from text
(``sys.get_int_max_str_digits``), and its parser refuses the literal, because the conversion costs
time quadratic in the digits. Lifting the limit in a process that parses programs' results would let
a hostile result cost seconds of CPU; instead such an integer is never converted: it is kept as its
canonical decimal text (:class:`LargeInt`) and compared by it. Two such integers are equal exactly
when their texts are, and one never equals a shorter int or any float (a float is below 10**309).
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

#: Python's default int/str conversion limit: an integer literal with more decimal digits than this
#: is kept as a :class:`LargeInt`
MAX_INT_DIGITS = 4300

# a run of more digits than that which is an integer literal of its own: not part of a name, a float
# (a '.', an exponent or 'j' touching it), a hex literal or an escape in a string
_LONG_INT = re.compile(rf"(?<![\w.\\])[0-9]{{{MAX_INT_DIGITS + 1},}}(?![\w.])")


@dataclass(frozen=True, slots=True)
class LargeInt:
    """An integer with more than :data:`MAX_INT_DIGITS` decimal digits, as its digits (no leading
    zero) and sign; its ``repr`` is the literal Python would print."""

    digits: str
    negative: bool = False

    def __neg__(self) -> LargeInt:
        return LargeInt(self.digits, not self.negative)

    def __pos__(self) -> LargeInt:
        return self

    def __repr__(self) -> str:
        return f"-{self.digits}" if self.negative else self.digits


def large_int(digits: str) -> LargeInt | int:
    """The value of a run of decimal digits longer than the conversion limit. Raises ``ValueError``
    for leading zeros (not a Python literal; ``000`` alone is 0)."""
    if digits[0] == "0":
        if digits.strip("0"):
            raise ValueError("an integer literal with leading zeros")
        return 0
    return LargeInt(digits)


@dataclass(frozen=True, slots=True)
class Shielded:
    """Literal text Python's parser reads without converting a long integer: each integer literal
    longer than the conversion limit replaced by a name ``<prefix><n>_`` (``digits[n]`` its digits).

    A run of digits inside a string is replaced too; :meth:`restore` puts it back in the string's
    value. The prefix holds a random nonce, so no text can contain a name by chance or by design."""

    text: str
    prefix: str = ""
    digits: tuple[str, ...] = ()

    def value_of(self, name: str) -> LargeInt | int | None:
        """The integer a name of this text stands for (None: not one of its names)."""
        if not self.digits or not name.startswith(self.prefix) or not name.endswith("_"):
            return None
        index = name[len(self.prefix) : -1]
        if not index.isdigit() or int(index) >= len(self.digits):
            return None
        return large_int(self.digits[int(index)])

    def restore(self, value: str) -> str:
        """A string constant of the shielded text with the digits its names stand for put back."""
        if not self.digits or self.prefix not in value:
            return value
        return re.sub(re.escape(self.prefix) + r"([0-9]+)_", lambda m: self.digits[int(m[1])], value)


def shield_long_ints(text: str) -> Shielded:
    """``text`` ready for Python's parser (see :class:`Shielded`). Text without an integer past the
    limit comes back as it is: one regex search, linear in the text."""
    if _LONG_INT.search(text) is None:
        return Shielded(text)
    prefix = f"_rlstream_int_{secrets.token_hex(8)}_"
    digits: list[str] = []

    def name(match: re.Match[str]) -> str:
        digits.append(match.group())
        return f"{prefix}{len(digits) - 1}_"

    return Shielded(_LONG_INT.sub(name, text), prefix, tuple(digits))


def without_long_ints(text: str) -> str:
    """``text`` with each integer literal longer than the conversion limit read as ``0``: the same
    shape of literal, for a check that only asks whether the text is one."""
    return _LONG_INT.sub("0", text)
