"""Python's parser behind one process-wide lock.

CPython 3.11's AST constructor is not thread-safe (gh-106905, fixed in 3.12): two threads building ASTs
at once fail with ``SystemError: AST constructor recursion depth mismatch``. The sandbox pool, the reward
and the probe planner parse literals and programs on threads, so every parse in those paths goes
through here. Re-entrant: a caller holding the lock (a probe plan being made) may parse again.
"""

from __future__ import annotations

import ast
import threading
from typing import Any

LOCK = threading.RLock()


def literal_eval(node_or_string: str | ast.AST) -> Any:
    with LOCK:
        return ast.literal_eval(node_or_string)


def parse(source: str, *args: Any, **kwargs: Any) -> Any:
    """:func:`ast.parse` (its result's type depends on ``mode``, as there)."""
    with LOCK:
        return ast.parse(source, *args, **kwargs)
