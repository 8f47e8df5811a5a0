"""Programs are parsed on one long-lived thread, from the depth a thread started per program parsed
them: the deepest nesting that parses (and the reason one level deeper fails) is the same, whoever
calls and from however deep, and concurrent callers each get their own program's tree."""

from __future__ import annotations

import ast
import os
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from streams.reward import static

Parse = Callable[[str], tuple[ast.Module | None, str]]

SHAPES: dict[str, Callable[[int], str]] = {
    "unary": lambda n: "x = " + "-" * n + "1\n",
    "attribute": lambda n: "x = a" + ".b" * n + "\n",
    "sum": lambda n: "x = 1" + "+1" * n + "\n",
}


def _thread_per_program(code: str, frames: int = 0) -> tuple[ast.Module | None, str]:
    """How programs were parsed before: a thread started for each, its target parsing it (``frames``
    deeper on that thread)."""
    out: list[tuple[ast.Module | None, str]] = []
    if frames:
        worker = threading.Thread(target=lambda: out.append(_from_depth(frames, static._parse, code)))
    else:
        worker = threading.Thread(target=lambda: out.append(static._parse(code)), name="rlstream-parse")
    worker.start()
    worker.join()
    return out[0] if out else (None, "MemoryError")


def _deepest(parse: Parse, shape: Callable[[int], str]) -> tuple[int, str]:
    """The deepest nesting of ``shape`` that parses, and why one level deeper does not."""
    lo, hi = 1, 20_000
    assert parse(shape(lo))[0] is not None and parse(shape(hi))[0] is None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if parse(shape(mid))[0] is not None:
            lo = mid
        else:
            hi = mid
    return lo, parse(shape(hi))[1]


def _from_depth(frames: int, parse: Parse, code: str) -> tuple[ast.Module | None, str]:
    return parse(code) if frames == 0 else _from_depth(frames - 1, parse, code)


@pytest.fixture
def default_recursion_limit() -> Iterator[None]:
    """The interpreter's own recursion limit, which bounds how deep a parse nests: programs other tests
    run in this process raise it (``sys.setrecursionlimit(10**6)``) and never lower it again, and a worker
    process runs at the default."""
    kept = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(kept)


@pytest.mark.usefixtures("default_recursion_limit")
def test_the_deepest_program_that_parses_is_the_one_a_thread_per_program_parsed() -> None:
    for shape in SHAPES.values():
        before = _deepest(_thread_per_program, shape)
        assert _deepest(static.parse_program, shape) == before
        # called from deeper in the caller's stack: the same
        assert _deepest(lambda c: _from_depth(40, static.parse_program, c), shape) == before
    # the comparison can tell: parsing from a few frames deeper on the parsing thread nests less deep
    deeper = _deepest(lambda c: _thread_per_program(c, frames=8), SHAPES["unary"])
    assert deeper[0] < _deepest(_thread_per_program, SHAPES["unary"])[0]


def test_concurrent_callers_each_get_their_own_programs_tree() -> None:
    codes = [f"def f{i}(x):\n    return x + {i}\n" for i in range(200)]
    with ThreadPoolExecutor(8) as pool:
        trees = list(pool.map(static.parse_program, codes))
    for i, (tree, error) in enumerate(trees):
        assert error == "" and tree is not None
        assert isinstance(tree.body[0], ast.FunctionDef) and tree.body[0].name == f"f{i}"
    assert static.parse_program("def (:\n") == _thread_per_program("def (:\n")
    assert static.parse_program("  \n") == (None, "empty")


def test_a_forked_child_parses_on_a_thread_of_its_own() -> None:
    static.parse_program("x = 1\n")  # the parent's thread is running
    pid = os.fork()
    if pid == 0:  # the child: the parent's thread is not here; a parse must still answer
        tree, error = static.parse_program("y = 2\n")
        os._exit(0 if tree is not None and error == "" else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
