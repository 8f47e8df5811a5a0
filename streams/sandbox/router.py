"""The ``auto`` router: WASM first; the container only for programs WASI cannot run, or would run
differently (numpy, pandas and scipy: numpy's default integer is 32-bit on wasm32, 64-bit in the jail).

Decided twice: before running, by the program's imports (a static pre-check), and after, by what the
WASM run showed: its audit hook's records (a refused thread or process, an import of numpy...) and
failure text that only a missing capability produces (a module the WASI build lacks). Both are things
the program controls, which is harmless here: the most a program gains by faking them is to be run
again, in the container, and judged there. A wrong answer, a timeout or a memory limit is the
program's own result and is never re-run elsewhere.
"""

from __future__ import annotations

import ast
import re
import sys

from schemas import pyast
from streams.sandbox.result import ExecutionResult

#: modules whose use needs processes or threads: such programs go straight to the container
NEEDS_CONTAINER = {
    "subprocess": "starts processes",
    "multiprocessing": "starts processes",
    "concurrent": "starts threads or processes",
    "_thread": "starts threads",
    "pty": "starts processes",
    # WASI has no socket pair (nor any socket): an event loop cannot make its wake-up channel there
    "asyncio": "makes an event loop, whose wake-up channel is a socket pair",
}
#: modules the container runs with 64-bit integers (when the set-up gave the jail its own numpy)
NUMERIC = {"numpy", "pandas", "scipy"}
_NO_WASI_OS = ("fork", "forkpty", "system", "popen", "spawnl", "spawnv", "execv", "execl", "posix_spawn")
_WORD_SIZE = "the word size: 32-bit on wasm32, 64-bit in the jail"
#: module attributes that send a program to the container, read as ``module.name`` or imported by name:
#: os functions WASI does not have, and sys's word-sized values (2**31 - 1 on wasm32, 2**63 - 1 in the
#: jail: a correct program that starts a minimum at sys.maxsize answers 2147483647 in WASM for a larger one)
ROUTED_ATTRIBUTES: dict[str, dict[str, str]] = {
    "os": {name: f"uses os.{name}" for name in _NO_WASI_OS},
    "sys": {"maxsize": f"reads sys.maxsize ({_WORD_SIZE})"},
}
#: text that only a missing WASI capability produces
FAILURE_SIGNATURES = (
    "can't start new thread",
    "wasi does not support processes",
    "No module named '_thread'",
    "has no attribute 'fork'",
    "has no attribute 'system'",
    "has no attribute 'popen'",
    "has no attribute 'posix_spawn'",
    "has no attribute 'kill'",
    # the WASM guest's C stack is small (about 112 kB): CPython's compiler overflows it on a 45-branch
    # elif chain or a 300-term sum, and a recursion through a C function (a recursive function under
    # functools.lru_cache) ends near 250 levels whatever sys.setrecursionlimit allows, where the jail's
    # interpreter goes thousands deep (HumanEval/49's case recurses 1101 levels); the message is the
    # interpreter's C-stack guard's, never the recursion limit's ("maximum recursion depth exceeded")
    "Stack overflow (used ",
)


def static_reason(code: str, *, numpy_in_container: bool = False) -> str | None:
    """Why this program should skip WASM, from its source alone; None when WASM should try."""
    try:
        tree = pyast.parse(code)
    except (SyntaxError, ValueError):
        return None  # a syntax error is the program's own result: WASM reports it
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            routed = ROUTED_ATTRIBUTES.get(node.module, {})
            for alias in node.names:
                if alias.name in routed:
                    return f"static: {routed[alias.name]}"
        for name in names:
            top = name.split(".")[0]
            if top in NEEDS_CONTAINER:
                return f"static: imports {name} ({NEEDS_CONTAINER[top]})"
            if top in NUMERIC and numpy_in_container:
                return f"static: imports {name} (64-bit integers in the container)"
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            routed = ROUTED_ATTRIBUTES.get(node.value.id, {})
            if node.attr in routed:
                return f"static: {routed[node.attr]}"
    return None


def failure_reason(result: ExecutionResult, *, numpy_in_container: bool = False) -> str | None:
    """Why a WASM result should be re-run in the container; None when it stands as it is."""
    if result.infra_error:
        return None
    if numpy_in_container:
        # whatever the WASM run gave, its integers were 32-bit: the container's answer is the one
        for name in result.route_hints:
            if name in NUMERIC:
                return f"wasm imported {name} (64-bit integers in the container)"
    if result.timed_out or result.memory_exceeded:
        return None
    for kind in ("process", "thread"):
        if kind in result.violations:
            return f"wasm refused: the program tried to start a {kind}"
    texts = [result.load_error or "", result.stderr[-4000:]]
    texts += [c.error or "" for c in result.cases if c.status == "error"]
    for text in texts:
        for sig in FAILURE_SIGNATURES:
            if sig in text:
                return f"wasm cannot run it: {sig}"
        if "ModuleNotFoundError: No module named" in text:
            return "wasm cannot run it: " + text[text.index("No module named") :][:80]
    return None


#: what only a Python older than the program's produces: syntax it cannot read, a name a standard
#: module gained later (``itertools.batched``, 3.12)
_OLDER_PYTHON = (
    re.compile(r"AttributeError: module '([\w.]+)' has no attribute '(\w+)'"),
    re.compile(r"ImportError: cannot import name '(\w+)' from '([\w.]+)'"),
)


def older_python_reason(result: ExecutionResult) -> str | None:
    """Why a container result shows that the jail's Python (3.11) lacks what the program uses, which
    the WASM guest's (3.15) has: syntax the jail cannot read, or a name a standard module gained later.
    ``auto`` then runs the program in WASM (its numpy integers are 32-bit there: the lesser harm than
    failing a correct program for our Python's age). None when the result stands as it is."""
    if result.infra_error or result.timed_out or result.memory_exceeded:
        return None
    load = result.load_error or ""
    if load.startswith("SyntaxError"):
        return f"the container's Python cannot read it: {load[:80]}"
    texts = [load, result.stderr[-4000:], *(c.error or "" for c in result.cases if c.status == "error")]
    for text in texts:
        for pattern in _OLDER_PYTHON:
            m = pattern.search(text)
            if m is None:
                continue
            module = m.group(1) if pattern is _OLDER_PYTHON[0] else m.group(2)
            if module.split(".")[0] in sys.stdlib_module_names:
                return f"the container's Python lacks it: {m.group(0)[:100]}"
    return None
