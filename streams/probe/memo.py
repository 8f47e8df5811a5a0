"""The task's reference with its recursive functions memoised, to answer probe inputs the plain reference
is too slow for (pure).

Beyond the cases' range a reference whose cost is exponential in its argument (a Fibonacci numbered by
plain recursion) answers nothing within the probe run's deadline, so a program wrong only there goes
unjudged. Such a reference is run once more on the same plan with its entry point, and every module
function it reaches that calls itself (directly or through others), replaced by a memoising wrapper;
that run's answers count only where every plain run left an input unanswered, and only where it
answered every input a plain run settled exactly as that run did (``streams/noise/probe.py``).

Memoising is sound only for a function whose answer depends on its arguments alone and which cannot
change them. So a function is wrapped only when it is a plain module-level ``def`` bound once (no
decorator, no generator, defaults that are constants) in a module with no ``global``/``nonlocal``
statement; a call is served from the table only when its arguments are immutable plain values (numbers,
strings, bytes, None, tuples and frozensets of them), keyed by their types too (``1``, ``1.0`` and
``True`` are three calls; floats by their repr, so ``-0.0`` is not ``0.0``), and an answer is kept only
when it is such a value as well (a caller may change a list it got back). State a function keeps
elsewhere (a module-level list it appends to) is what the comparison with the plain runs catches.
"""

from __future__ import annotations

import ast

from schemas import pyast

#: the wrapper added to the reference's module; the names it binds are unlikely in a task's own code
_WRAPPER = """

def _rlstream_memoised(function):
    plain = (int, float, complex, str, bytes, bool, type(None))

    class Unkeyable(Exception):
        pass

    def key(value):
        kind = type(value)
        if kind is float or kind is complex:
            return (kind, repr(value))
        if kind in plain:
            return (kind, value)
        if kind is tuple or kind is frozenset:
            return (kind, tuple(key(v) for v in value))
        raise Unkeyable

    table = {}

    def memoised(*args, **kwargs):
        try:
            k = (key(args), key(tuple(sorted(kwargs.items()))))
        except (Unkeyable, RecursionError):
            return function(*args, **kwargs)
        if k in table:
            return table[k]
        value = function(*args, **kwargs)
        try:
            key(value)
        except (Unkeyable, RecursionError):
            return value
        table[k] = value
        return value

    return memoised
"""


def memoised_reference(source: str, entry_point: str) -> str | None:
    """``source`` with its entry point and the recursive module functions it reaches memoised, or None
    where that is not sound (see the module's docstring) or would change nothing (no recursion)."""
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if any(isinstance(node, ast.Global | ast.Nonlocal) for node in ast.walk(tree)):
        return None
    bound: dict[str, int] = {}
    for stmt in tree.body:
        for name in _bound_names(stmt):
            bound[name] = bound.get(name, 0) + 1
    defs = {s.name: s for s in tree.body if isinstance(s, ast.FunctionDef) and bound.get(s.name) == 1}
    if entry_point not in defs or "_rlstream_memoised" in bound:
        return None
    calls = {name: _called(fn, set(defs)) for name, fn in defs.items()}
    reached = _reach(entry_point, calls)
    recursive = {f for f in reached if f in _reach_from_callees(f, calls)}
    if not recursive:
        return None
    chosen = sorted(recursive | {entry_point})
    if not all(_wrappable(defs[name]) for name in chosen):
        return None
    rebinds = "".join(f"{name} = _rlstream_memoised({name})\n" for name in chosen)
    return source.rstrip("\n") + "\n" + _WRAPPER + "\n\n" + rebinds


def _bound_names(stmt: ast.stmt) -> list[str]:
    """Names a module-level statement binds (any binding: a def, an import, an assignment...)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [stmt.name]
    out: list[str] = []
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            out.append(node.id)
        elif isinstance(node, ast.alias):
            out.append((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append(node.name)
    return out


def _called(fn: ast.FunctionDef, names: set[str]) -> set[str]:
    """The module functions ``fn`` calls by name."""
    return {
        node.func.id
        for node in ast.walk(fn)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in names
    }


def _reach(start: str, calls: dict[str, set[str]]) -> set[str]:
    seen = {start}
    todo = [start]
    while todo:
        for g in calls.get(todo.pop(), set()):
            if g not in seen:
                seen.add(g)
                todo.append(g)
    return seen


def _reach_from_callees(f: str, calls: dict[str, set[str]]) -> set[str]:
    out: set[str] = set()
    for g in calls.get(f, set()):
        out |= _reach(g, calls)
    return out


def _wrappable(fn: ast.FunctionDef) -> bool:
    """A function whose answer can depend on its arguments alone: undecorated, not a generator, every
    default a constant (a mutable default is state kept across calls)."""
    if fn.decorator_list:
        return False
    own = [n for n in ast.walk(fn) if n is not fn]
    if any(isinstance(n, ast.Yield | ast.YieldFrom | ast.Await) for n in own):
        return False
    defaults = [*fn.args.defaults, *(d for d in fn.args.kw_defaults if d is not None)]
    return all(_constant(d) for d in defaults)


def _constant(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _constant(node.operand)
    if isinstance(node, ast.Tuple):
        return all(_constant(e) for e in node.elts)
    return False
