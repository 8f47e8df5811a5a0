"""The float tolerance a task's check states, read from its source: the comparison the check makes
between the candidate's answer and the expected one, carried on the task (``TaskPublished.tolerance``)
so the reward and the probe compare float answers as the check does.

Read where an assertion compares a value computed from a call of the candidate with an expected value:

- ``abs(<candidate call> - y) < tol`` (or ``<=``, either operand order, ``math.fabs``): ``abs_tol=tol``;
- ``math.isclose(<candidate call>, y, rel_tol=r, abs_tol=a)`` (or ``isclose`` imported from ``math``):
  ``rel_tol=r``, ``abs_tol=a``, with ``isclose``'s own defaults (1e-9, 0) where it names none.

A check that states one tolerance states the task's. One that states several different ones, or whose
tolerances are not plain numbers, states none the task can carry (its float answers are then compared
as the reward function compares them). ``<`` is read as ``<=``: the two differ on one boundary value.
"""

from __future__ import annotations

import ast
import math

from schemas import pyast
from schemas.task import FloatTolerance

#: ``math.isclose``'s own defaults
ISCLOSE_REL_TOL = 1e-9
ISCLOSE_ABS_TOL = 0.0


def stated_tolerance(check: str, candidate: str = "candidate") -> FloatTolerance | None:
    """The one float tolerance ``check`` states for the answers of ``candidate`` (None: none, or
    several that differ, or the source does not parse)."""
    try:
        tree = pyast.parse(check)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    found: set[tuple[float, float]] = set()
    for node in ast.walk(tree):
        tolerance = _from_node(node, candidate)
        if tolerance is not None:
            found.add(tolerance)
    if len(found) != 1:
        return None
    rel, abs_ = found.pop()
    try:
        return FloatTolerance(rel_tol=rel, abs_tol=abs_)
    except ValueError:
        return None


def assertion_tolerance(test: ast.expr, candidate: str = "candidate") -> FloatTolerance | None:
    """The tolerance one assertion's test states (``abs(candidate(x) - y) < tol``; ``isclose``)."""
    found = _from_node(test, candidate)
    if found is None:
        return None
    try:
        return FloatTolerance(rel_tol=found[0], abs_tol=found[1])
    except ValueError:
        return None


def _from_node(node: ast.AST, candidate: str) -> tuple[float, float] | None:
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if isinstance(op, ast.Lt | ast.LtE):
            difference, bound = left, right
        elif isinstance(op, ast.Gt | ast.GtE):
            difference, bound = right, left
        else:
            return None
        tol = _number(bound)
        if tol is None or not _is_abs_difference(difference, candidate):
            return None
        return (0.0, tol)
    if isinstance(node, ast.Call) and _names(node.func, "isclose"):
        if len(node.args) != 2 or not any(_calls(a, candidate) for a in node.args):
            return None
        rel, abs_ = ISCLOSE_REL_TOL, ISCLOSE_ABS_TOL
        for kw in node.keywords:
            value = _number(kw.value)
            if value is None:
                return None
            if kw.arg == "rel_tol":
                rel = value
            elif kw.arg == "abs_tol":
                abs_ = value
            else:
                return None
        return (rel, abs_)
    return None


def _is_abs_difference(node: ast.expr, candidate: str) -> bool:
    """``abs(a - b)`` or ``math.fabs(a - b)`` with a call of the candidate in ``a`` or ``b``."""
    if not (isinstance(node, ast.Call) and (_names(node.func, "abs") or _names(node.func, "fabs"))):
        return False
    if len(node.args) != 1 or node.keywords:
        return False
    inner = node.args[0]
    return (
        isinstance(inner, ast.BinOp)
        and isinstance(inner.op, ast.Sub)
        and (_calls(inner.left, candidate) or _calls(inner.right, candidate))
    )


def _names(func: ast.expr, name: str) -> bool:
    """``name`` or ``math.name``."""
    if isinstance(func, ast.Name):
        return func.id == name
    return (
        isinstance(func, ast.Attribute)
        and func.attr == name
        and isinstance(func.value, ast.Name)
        and func.value.id == "math"
    )


def _calls(node: ast.expr, candidate: str) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == candidate
        for n in ast.walk(node)
    )


def _number(node: ast.expr) -> float | None:
    """A non-negative finite number written as a literal (``1e-6``, ``0.001``, ``10 ** -6``)."""
    try:
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            base, exponent = pyast.literal_eval(node.left), pyast.literal_eval(node.right)
            if not all(type(v) in (int, float) for v in (base, exponent)) or abs(exponent) > 400:
                return None
            value = float(base) ** exponent
        else:
            value = pyast.literal_eval(node)
    except (
        ValueError,
        SyntaxError,
        TypeError,
        MemoryError,
        RecursionError,
        OverflowError,
        ZeroDivisionError,
    ):
        return None
    if type(value) not in (int, float):
        return None
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else None
