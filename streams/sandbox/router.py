"""The ``auto`` router: WASM first; the container only for programs WASI cannot run.

Decided twice: before running, by the program's imports (a static pre-check), and after, by failure
signatures that only a missing capability produces (a refused thread or process, a module the WASI
build lacks). A wrong answer, a timeout or a memory limit is the program's own result and is never
re-run elsewhere.
"""

from __future__ import annotations

import ast

from streams.sandbox.result import ExecutionResult

#: modules whose use needs processes or threads: such programs go straight to the container
NEEDS_CONTAINER = {
    "subprocess": "starts processes",
    "multiprocessing": "starts processes",
    "concurrent": "starts threads or processes",
    "_thread": "starts threads",
    "pty": "starts processes",
}
#: os functions WASI does not have
NEEDS_CONTAINER_OS = {
    "fork",
    "forkpty",
    "system",
    "popen",
    "spawnl",
    "spawnv",
    "execv",
    "execl",
    "posix_spawn",
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
)


def static_reason(code: str) -> str | None:
    """Why this program should skip WASM, from its source alone; None when WASM should try."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return None  # a syntax error is the program's own result: WASM reports it
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "os":
                hit = [a.name for a in node.names if a.name in NEEDS_CONTAINER_OS]
                if hit:
                    return f"static: uses os.{hit[0]}"
        for name in names:
            top = name.split(".")[0]
            if top in NEEDS_CONTAINER:
                return f"static: imports {name} ({NEEDS_CONTAINER[top]})"
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "os"
            and node.attr in NEEDS_CONTAINER_OS
        ):
            return f"static: uses os.{node.attr}"
    return None


def failure_reason(result: ExecutionResult) -> str | None:
    """Why a WASM result should be re-run in the container; None when it stands as it is."""
    if result.timed_out or result.memory_exceeded or result.infra_error:
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
