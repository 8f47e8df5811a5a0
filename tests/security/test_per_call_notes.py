"""What the host notes of single calls, on the real backends (noise filter v11 reads both): a call that
floods its output by itself is stopped and named, a run's chatter is not stopped at all, and a
RecursionError that ends one of the program's threads during a call is noted on that call (the jail:
threads run there only). A RecursionError the interpreter raised on a deep stack is told from one the
program raised itself on a shallow one (noise filter v12 reads it)."""

from __future__ import annotations

import pytest

from streams.sandbox import Limits, Sandbox

LIMITS = Limits(timeout_s=5.0, memory_mb=256, output_bytes=4096)

FLOODS_AT_3 = """
import sys

def f(x):
    if x == 3:
        while True:
            sys.stderr.write("." * 1000)
    print("call", x, "x" * 1000)
    return x
"""

THREAD_RECURSION = """
import sys
import threading

sys.setrecursionlimit(1 << 14)

def _down(n):
    return 0 if n == 0 else 1 + _down(n - 1)

def f(n):
    out = []
    worker = threading.Thread(target=lambda: out.append(_down(n)))
    worker.start()
    worker.join()
    return out[0]
"""


@pytest.mark.parametrize("backend", ["wasm", "container"])
def test_a_call_that_floods_by_itself_is_stopped_and_named(sandbox: Sandbox, backend: str) -> None:
    # each call before it prints about 1 KB: 3 KB in all, under the 64 KB bound of one call; the run's
    # total passes the 4 KB cap with no call stopped for it
    r = sandbox.run_cases(FLOODS_AT_3, "f", [f"({i},)" for i in range(6)], limits=LIMITS, backend=backend)
    assert r.infra_error is None, r.infra_error
    assert [c.status for c in r.cases[:3]] == ["ok", "ok", "ok"]
    assert r.cases[3].status != "ok" and r.output_flood == 3
    assert "output_limit" in r.violations and not r.timed_out


@pytest.mark.parametrize("backend", ["wasm", "container"])
def test_a_runs_chatter_past_the_cap_stops_nothing(sandbox: Sandbox, backend: str) -> None:
    chatty = "def f(x):\n    print('x' * 3000)\n    return x\n"
    r = sandbox.run_cases(chatty, "f", [f"({i},)" for i in range(40)], limits=LIMITS, backend=backend)
    assert r.infra_error is None, r.infra_error
    assert all(c.status == "ok" for c in r.cases) and r.output_flood is None
    assert "output_limit" in r.violations  # what is kept is still capped


def test_a_recursion_error_on_a_thread_is_noted_on_its_call(sandbox: Sandbox) -> None:
    r = sandbox.run_cases(
        THREAD_RECURSION, "f", ["(10,)", "(100000,)", "(20,)"], limits=LIMITS, backend="container"
    )
    assert r.infra_error is None, r.infra_error
    assert [c.status for c in r.cases] == ["ok", "error", "ok"]
    assert (r.cases[1].error or "").startswith("IndexError")  # the join code's error, as before
    assert r.thread_recursion == (1,)
    # a RecursionError raised by the call itself is its own error, named as such: no note
    own = "def f(n):\n    raise RecursionError('maximum recursion depth exceeded')\n"
    r = sandbox.run_cases(own, "f", ["(1,)"], limits=LIMITS, backend="container")
    assert r.thread_recursion == () and (r.cases[0].error or "").startswith("RecursionError")


SHALLOW_THREAD_RECURSION = """
import threading

def _raise():
    raise RecursionError("maximum recursion depth exceeded")

def f(n):
    out = []
    worker = threading.Thread(target=_raise)
    worker.start()
    worker.join()
    return out[0]
"""


def test_a_recursion_error_a_thread_raises_without_recursing_is_not_noted(sandbox: Sandbox) -> None:
    # red-team a14_thread_shallow_recursion_13: the note would forgive the call's error past the
    # range as a stack run out, for a thread one frame deep
    r = sandbox.run_cases(SHALLOW_THREAD_RECURSION, "f", ["(1,)"], limits=LIMITS, backend="container")
    assert r.infra_error is None, r.infra_error
    assert (r.cases[0].error or "").startswith("IndexError")
    assert r.thread_recursion == ()


FORGED_THREAD_NOTE = """
import threading

def f(n):
    for d in getattr(threading.excepthook, "__defaults__", None) or ():
        if type(d) is list and len(d) == 2:
            d[0] = RecursionError("maximum recursion depth exceeded") if n else True
    raise IndexError("list index out of range")
"""


def test_what_a_program_writes_into_the_thread_hooks_state_is_no_note(sandbox: Sandbox) -> None:
    # red-team a14_forge_thread_note_13: the wrapped hook's defaults are readable, and a flag set
    # there by hand made the call's error read as a thread's stack run out
    r = sandbox.run_cases(FORGED_THREAD_NOTE, "f", ["(0,)", "(1,)"], limits=LIMITS, backend="container")
    assert r.infra_error is None, r.infra_error
    assert [(c.error or "").split(":")[0] for c in r.cases] == ["IndexError", "IndexError"]
    assert r.thread_recursion == ()


RECURSION_ERRORS = """
import functools
import sys
import types


def _down(n):
    return 0 if n == 0 else 1 + _down(n - 1)


@functools.lru_cache(maxsize=None)
def _cached(n):
    return 0 if n == 0 else 1 + _cached(n - 1)


def _forged():
    frame, tb = sys._getframe(), None
    for _ in range(2000):
        tb = types.TracebackType(tb, frame, 0, 1)
    raise RecursionError("maximum recursion depth exceeded").with_traceback(tb)


def _count(n):
    # one generator per level, finished (and so without a caller) by the time the error is read
    if n == 0:
        return 0
    yield 1
    yield from _count(n - 1)


def f(kind):
    if kind == "generators":
        return sum(_count(10**6))
    if kind == "own":
        raise RecursionError("maximum recursion depth exceeded")
    if kind == "forged":
        _forged()
    if kind == "lowered":
        sys.setrecursionlimit(40)
        try:
            return _down(10**6)
        finally:
            sys.setrecursionlimit(1000)
    return (_cached if kind == "cached" else _down)(10**6)
"""


@pytest.mark.parametrize("backend", ["wasm", "container"])
def test_a_deep_recursion_error_is_told_from_one_a_program_raises_itself(
    sandbox: Sandbox, backend: str
) -> None:
    kinds = ["own", "recursed", "cached", "forged", "lowered", "generators"]
    r = sandbox.run_cases(RECURSION_ERRORS, "f", [repr((k,)) for k in kinds], limits=LIMITS, backend=backend)
    assert r.infra_error is None, r.infra_error
    assert [(c.error or "").split(":")[0] for c in r.cases] == ["RecursionError"] * len(kinds)
    # the interpreter's, on a deep stack (through lru_cache's C wrapper too: in WASM the C stack
    # ends it after a few hundred levels); not the program's own, a forged traceback's, nor one
    # raised on a stack the program made shallow by lowering the limit; recursion through `yield from`
    # is recursion too
    assert r.deep_recursion == (1, 2, 5)
    ok = sandbox.run_cases("def f(x):\n    return x\n", "f", ["(1,)"], limits=LIMITS, backend=backend)
    assert ok.deep_recursion is None  # no call raised: nothing recorded
