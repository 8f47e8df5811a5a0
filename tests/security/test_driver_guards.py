"""The driver's guards of the stub's turn (the stub generator it resumes, the collector's switches, the
signal mask) are out of the program's reach, on both backends. On 3.13+ (WASM's 3.15) a frame's
``f_locals`` writes through, so a program that rebinds the driver's locals from its entry point could
keep the collector on at the stub generator's resumption (a collection it scheduled would run its
finaliser on the stub's frame) or swap the stub for a generator of its own. The wrong programs here
rebind every local of the driver's they find and leave a finaliser behind that tampers with whatever
frame it runs on; their wrong answers are still seen, and the driver holds none of its guards in a
local."""

from __future__ import annotations

import pytest

from streams.sandbox import Limits, Sandbox
from streams.sandbox.protocol import CHANGED_AFTER_RETURN
from streams.sandbox.result import Job

BACKENDS = ["wasm", "container"]
LIMITS = Limits(timeout_s=30.0, memory_mb=512)
INPUTS = ("([3, 1, 2],)", "([5, 9, 4],)", "([3, 1, 2],)", "([],)")
GUARDS = ("main", "_gc_isenabled", "_gc_disable", "_gc_enable", "_mask")

#: rebinds the driver's locals and leaves a cycle with a finaliser for a collection it schedules with
#: allocations that no periodic check follows before the stub resumes (a list literal in a function)
REBIND = """
import gc
import sys

LOCALS, BACK, FRAME = "f_" + "locals", "f_" + "back", "tb_" + "frame"
_big = {}
exec("def _allocate():\\n    return [" + "[], " * 20000 + "]\\n", _big)


def _tamper_caller():
    try:
        raise ValueError
    except ValueError as e:
        frame = getattr(getattr(e.__traceback__, FRAME), BACK)
    while frame is not None:
        try:
            names = getattr(frame, LOCALS)
            if "before" in names:
                names["before"] = None
            for key in ("_held", "_last", "kept"):
                if type(names.get(key)) is list:
                    names[key].clear()
        except Exception:
            pass
        frame = getattr(frame, BACK)


class _Cycle:
    def __init__(self):
        self.me = self

    def __del__(self):
        _tamper_caller()
        _Cycle()


def _fake():
    while True:
        yield None


def _rebind():
    names = getattr(getattr(sys, "_get" + "frame")(2), LOCALS)
    replacements = {
        "_gc_disable": _big["_allocate"],
        "_gc_isenabled": lambda: True,
        "_gc_enable": gc.enable,
        "_mask": None,
        "main": _fake() if SWAP else names.get("main"),
    }
    for key, value in replacements.items():
        if key in names:
            try:
                names[key] = value
            except Exception:
                pass
    gc.enable()
    gc.set_threshold(1)
    _Cycle()
"""

#: wrong for a caller holding an earlier answer: every call refills one list
BUFFER = """
_buf = []


def f(xs):
    _rebind()
    _buf.clear()
    _buf.extend(sorted(xs))
    return _buf
"""
#: wrong where the task keeps its argument: it sorts the caller's list in place
SORTS_ARGUMENT = """
def f(xs):
    _rebind()
    xs.sort()
    return xs[-1] if xs else None
"""


def _run(sandbox: Sandbox, code: str, backend: str, **job: bool) -> tuple[list[str | None], str | None]:
    r = sandbox.execute(
        Job(mode="cases", code=code, entry_point="f", inputs=INPUTS, limits=LIMITS, **job),  # type: ignore[arg-type]
        backend,  # type: ignore[arg-type]
    )
    got = [
        c.result_repr if c.status == "ok" else ("changed" if c.error == CHANGED_AFTER_RETURN else c.error)
        for c in r.cases
    ]
    return got, r.infra_error


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("swap", [False, True])
def test_a_refilled_answer_is_seen_whatever_the_program_rebinds_in_the_driver(
    sandbox: Sandbox, backend: str, swap: bool
) -> None:
    got, infra = _run(sandbox, f"SWAP = {swap}\n" + REBIND + BUFFER, backend, caller=True)
    assert infra is None, infra
    assert got[:3] == ["changed", "changed", "changed"], got


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("swap", [False, True])
def test_a_kept_argument_changed_is_seen_whatever_the_program_rebinds_in_the_driver(
    sandbox: Sandbox, backend: str, swap: bool
) -> None:
    got, infra = _run(
        sandbox, f"SWAP = {swap}\n" + REBIND + SORTS_ARGUMENT, backend, caller=True, keep_args=True
    )
    assert infra is None, infra
    assert all(g is not None and "CallerStateError" in g for g in got[:3]), got


#: names the driver's locals that guard the stub's turn
GUARD_LOCALS = """
import sys


def f(xs):
    return sorted(set(getattr(sys, "_get" + "frame")(1).f_locals) & {guards!r})
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_driver_holds_no_guard_of_the_stubs_turn_in_a_local(sandbox: Sandbox, backend: str) -> None:
    got, infra = _run(sandbox, GUARD_LOCALS.format(guards=set(GUARDS)), backend)
    assert infra is None, infra
    assert got == ["[]"] * 4


#: resumes the stub's generator itself, wherever it finds it near the driver, with a fast timer whose
#: handler, landing on the stub's frame, stops the stub keeping answers (on db25152 in the jail: every
#: later call's refilled buffer passed); WASM has no timer, so there it only drives
DRIVES = """
import sys

try:
    import signal
    _timer = signal.setitimer
except (ImportError, AttributeError):
    signal = _timer = None

_buf = []
_hit = [False]


def _handler(signum, frame):
    while frame is not None and not _hit[0]:
        names = frame.f_locals
        if "_held_chars" in names and "_held" in names:
            names["_held_chars"][0] = 1 << 60
            names["_held"].clear()
            _hit[0] = True
            _timer(signal.ITIMER_REAL, 0, 0)
        frame = frame.f_back


def _generator():
    driver = sys._getframe(2)
    places = list(driver.f_locals.values()) + list(driver.f_code.co_consts)
    for value in list(driver.f_globals.values()):
        places += list(getattr(getattr(value, "__code__", None), "co_consts", ()))
    for value in places + [getattr(p, "__self__", None) for p in places]:
        for item in value if type(value) is list else [value]:
            if type(item).__name__ == "generator":
                return item
    return None


def _impl(xs):
    _buf[:] = sorted(xs)  # one list, refilled by every call
    return _buf


def f(xs):
    out = _impl(xs)
    stub = _generator()
    if stub is None or _hit[0] is None:
        return out
    _hit[0] = None if _timer is None else False
    if _timer is not None:
        signal.signal(signal.SIGALRM, _handler)
        _timer(signal.ITIMER_REAL, 0.0003, 0.0003)
    outcome = (True, out, None)
    while True:
        order = stub.send(outcome)
        outcome = (True, _impl(*order[1]), None)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_cannot_resume_the_stub_itself(sandbox: Sandbox, backend: str) -> None:
    inputs = tuple(f"([{i}, {i + 3}, {i + 1}],)" for i in range(30))
    r = sandbox.execute(
        Job(mode="cases", code=DRIVES, entry_point="f", inputs=inputs, limits=LIMITS, caller=True),
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    assert [c.error == CHANGED_AFTER_RETURN for c in r.cases[:-1]] == [True] * 29, r.cases


#: a thread of the program's beside a fast timer: the kernel hands the timer's signal to that thread,
#: the interpreter's flag trips, and the main thread ran the handler at its next periodic check, inside
#: the stub's turn, handed the stub's frame (on c1a51b3 in the jail, 57 of 60 refilled buffers passed)
THREAD_TIMER = """
import signal
import threading
import time

_buf = []
_hit = []


def _handler(signum, frame):
    while frame is not None and not _hit:
        names = frame.f_locals
        if "_held_chars" in names and "_held" in names:
            names["_held_chars"][0] = 1 << 60
            names["_held"].clear()
            _hit.append(1)
        frame = frame.f_back


def _idle():
    while True:
        time.sleep(0.0001)


def f(xs):
    if not _hit and not threading.active_count() > 1:
        threading.Thread(target=_idle, daemon=True).start()
        signal.signal(signal.SIGALRM, _handler)
        signal.setitimer(signal.ITIMER_REAL, 0.0002, 0.0002)
    _buf[:] = sorted(xs)  # one list, refilled by every call
    return _buf
"""

#: a correct program timing its calls out with a timer whose handler raises, beside a worker thread:
#: a signal that arrives while the stub reads an answer reaches the handler as the next call begins
TIMEOUTS = """
import signal
import threading
import time

_ticks = []


def _tick(signum, frame):
    _ticks.append(signum)


def _work():
    while True:
        time.sleep(0.001)


def f(xs):
    if not _ticks and threading.active_count() == 1:
        threading.Thread(target=_work, daemon=True).start()
        signal.signal(signal.SIGALRM, _tick)
        signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
    deadline = time.monotonic() + 0.002
    while time.monotonic() < deadline:
        pass
    return sorted(xs)
"""


def test_a_signal_another_thread_receives_never_runs_a_handler_in_the_stubs_turn(sandbox: Sandbox) -> None:
    inputs = tuple(f"([{i}, {i + 3}, {i + 1}],)" for i in range(60))
    r = sandbox.execute(
        Job(mode="cases", code=THREAD_TIMER, entry_point="f", inputs=inputs, limits=LIMITS, caller=True),
        "container",
    )
    assert r.infra_error is None, r.infra_error
    assert [c.error == CHANGED_AFTER_RETURN for c in r.cases[:-1]] == [True] * 59, r.cases


def test_a_programs_timer_handlers_still_run_beside_its_threads(sandbox: Sandbox) -> None:
    inputs = tuple(f"([{i}, {i + 3}, {i + 1}],)" for i in range(40))
    r = sandbox.execute(
        Job(mode="cases", code=TIMEOUTS, entry_point="f", inputs=inputs, limits=LIMITS), "container"
    )
    assert r.infra_error is None, r.infra_error
    assert [c.result_repr for c in r.cases] == [repr(sorted([i, i + 3, i + 1])) for i in range(40)]
    assert not r.violations
