"""Parsing of plain Python literals reported over the trusted channel, and type-strict comparison.

The sandbox returns ``repr()`` text of each value the program returned. Only plain literals are ever
turned back into values here: anything else (the repr of a custom object, a call, a name) is a
failure and is never compared with the program's own ``==``. Expected values never enter the sandbox,
so a program cannot learn them and cannot override how they are compared.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Literal

from schemas.literals import LargeInt, Shielded, shield_long_ints
from schemas.rollout import MAX_RESULT_CHARS

#: how an expected ``int`` and a returned ``float`` (or the other way round) compare
IntFloatPolicy = Literal["strict", "float_accepts_int", "numeric"]

_SCALARS = (int, float, complex, str, bytes, bool, type(None))


class NotALiteral(ValueError):
    """The text is not a plain literal (or is too large to be trusted)."""


@dataclass(frozen=True)
class CompareOptions:
    """How values are compared; part of a reward function's configuration (and so of its version)."""

    #: ``strict``: int and float never match; ``float_accepts_int``: an expected float accepts an int;
    #: ``numeric``: ints and floats compare by value both ways (bools never match numbers)
    int_float: IntFloatPolicy = "numeric"
    float_rel_tol: float = 1e-9
    float_abs_tol: float = 1e-6
    #: an expected NaN matches a returned NaN
    nan_equal: bool = True
    #: reprs longer than this are not parsed (a flood is a failure, not a memory problem for the host);
    #: the sandbox reports nothing longer either: one limit, ``schemas.rollout.MAX_RESULT_CHARS``
    max_repr_chars: int = MAX_RESULT_CHARS


def parse_literal(text: str, *, max_chars: int = MAX_RESULT_CHARS) -> object:
    """Turn ``repr()`` text back into a value, accepting plain literals only.

    Besides what ``ast.literal_eval`` takes, this accepts the reprs that plain values produce but
    ``literal_eval`` refuses: ``set()``, ``frozenset({...})``, ``inf``, ``-inf`` and ``nan``, and
    integers past Python's int/str conversion limit, as :class:`schemas.literals.LargeInt` (never
    converted: that costs time quadratic in the digits). Raises :class:`NotALiteral` for anything else.
    """
    if len(text) > max_chars:
        raise NotALiteral(f"repr has {len(text)} characters, more than the {max_chars} allowed")
    shielded = shield_long_ints(text.strip())
    try:
        tree = ast.parse(shielded.text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise NotALiteral(f"not parsable: {exc.__class__.__name__}") from None
    try:
        return _convert(tree.body, shielded)
    except RecursionError:
        raise NotALiteral("nested too deeply") from None
    except ValueError as exc:  # a long integer with leading zeros
        raise NotALiteral(str(exc)) from None


def _convert(node: ast.expr, sh: Shielded) -> object:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return sh.restore(node.value)
        if isinstance(node.value, bytes) and sh.digits:
            return sh.restore(node.value.decode("latin-1")).encode("latin-1")
        if isinstance(node.value, _SCALARS):
            return node.value
        raise NotALiteral(f"constant of type {type(node.value).__name__}")
    if isinstance(node, ast.Tuple):
        return tuple(_convert(e, sh) for e in node.elts)
    if isinstance(node, ast.List):
        return [_convert(e, sh) for e in node.elts]
    if isinstance(node, ast.Set):
        return {_hashable(_convert(e, sh)) for e in node.elts}
    if isinstance(node, ast.Dict):
        out: dict[object, object] = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:
                raise NotALiteral("dict unpacking")
            out[_hashable(_convert(k, sh))] = _convert(v, sh)
        return out
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        operand = _convert(node.operand, sh)
        if isinstance(operand, LargeInt):
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(operand, bool) or not isinstance(operand, int | float | complex):
            raise NotALiteral("sign applied to a non-number")
        return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        # complex numbers print as (1+2j)
        left, right = _convert(node.left, sh), _convert(node.right, sh)
        if isinstance(left, int | float) and not isinstance(left, bool) and isinstance(right, complex):
            return left + right if isinstance(node.op, ast.Add) else left - right
        raise NotALiteral("arithmetic is not a literal")
    if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
        return float(node.id)
    if isinstance(node, ast.Name) and (large := sh.value_of(node.id)) is not None:
        return large
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        if node.func.id == "set" and not node.args:
            return set()
        if node.func.id == "frozenset":
            if not node.args:
                return frozenset()
            if len(node.args) == 1 and isinstance(node.args[0], ast.Set):
                inner = _convert(node.args[0], sh)
                assert isinstance(inner, set)
                return frozenset(inner)
    raise NotALiteral(f"{node.__class__.__name__} is not a plain literal")


def _hashable(value: object) -> object:
    try:
        hash(value)
    except TypeError:
        raise NotALiteral("unhashable set element or dict key") from None
    return value


def canonical_key(value: object) -> object:
    """A hashable, type-tagged form of a value: ``1``, ``1.0`` and ``True`` get different keys.

    Used where values meet as set elements or dict keys, which Python would otherwise merge
    (``{1: 'a'}`` has the key ``True``).
    """
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    if isinstance(value, LargeInt):
        return ("int", value)
    if isinstance(value, _SCALARS):
        return (type(value).__name__, value)
    if isinstance(value, tuple):
        return ("tuple", tuple(canonical_key(v) for v in value))
    if isinstance(value, list):
        return ("list", tuple(canonical_key(v) for v in value))
    if isinstance(value, set | frozenset):
        return (type(value).__name__, frozenset(canonical_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", frozenset((canonical_key(k), canonical_key(v)) for k, v in value.items()))
    raise NotALiteral(f"{type(value).__name__} is not a plain literal type")


def values_match(expected: object, got: object, options: CompareOptions) -> bool:
    """Type-strict recursive comparison of two plain values. Never calls a program-defined ``__eq__``:
    both sides come from :func:`parse_literal`, so every type here is a builtin."""
    try:
        return _match(expected, got, options)
    except RecursionError:
        return False


def _is_number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _floats_close(a: float, b: float, o: CompareOptions) -> bool:
    if math.isnan(a) or math.isnan(b):
        return o.nan_equal and math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=o.float_rel_tol, abs_tol=o.float_abs_tol)


def _match(e: object, g: object, o: CompareOptions) -> bool:
    te, tg = type(e), type(g)
    if te is not tg:
        if _is_number(e) and _is_number(g):
            if o.int_float == "strict":
                return False
            if o.int_float == "float_accepts_int" and not (te is float and tg is int):
                return False
            return _floats_close(float(e), float(g), o)  # type: ignore[arg-type]
        return False
    if te is float:
        return _floats_close(e, g, o)  # type: ignore[arg-type]
    if te is complex:
        return _floats_close(e.real, g.real, o) and _floats_close(e.imag, g.imag, o)  # type: ignore[attr-defined]
    if te in (int, str, bytes, bool, type(None), LargeInt):
        return e == g
    if te is list or te is tuple:
        el, gl = e, g
        assert isinstance(el, list | tuple) and isinstance(gl, list | tuple)
        return len(el) == len(gl) and all(_match(a, b, o) for a, b in zip(el, gl, strict=True))
    if te is set or te is frozenset:
        # set elements are hashable scalars/tuples: compare exactly, type-tagged
        assert isinstance(e, set | frozenset) and isinstance(g, set | frozenset)
        return {canonical_key(v) for v in e} == {canonical_key(v) for v in g}
    if te is dict:
        assert isinstance(e, dict) and isinstance(g, dict)
        if len(e) != len(g):
            return False
        got_by_key = {canonical_key(k): v for k, v in g.items()}
        for k, v in e.items():
            ck = canonical_key(k)
            if ck not in got_by_key or not _match(v, got_by_key[ck], o):
                return False
        return True
    return False
