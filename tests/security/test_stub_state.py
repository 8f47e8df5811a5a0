"""The stub's own checks (the answers it keeps and reads again, the arguments a task keeps) are out of the
program's reach, on both backends. The programs are wrong for a real caller (one answer list refilled by
every call; a kept argument sorted in place) and, from inside a call, look for the stub's state along
every route a program has to a frame or a function: a traceback's frame, ``sys._getframe``, the
generators in the frames' locals (the stub's own is one), every function they find with a closure.
There they clear every list, rebind every name they can (``f_locals`` writes through on 3.13+) and
replace every closure cell that holds a function by one that says "unchanged". None of it turns the
wrong answers into passes; the stub generator's frame is refused to whoever asks for it; a program's
legitimate use of frames (a stack printed, a caller named in a log line, a traceback) still works."""

from __future__ import annotations

import itertools
import sys

import pytest

from streams.sandbox import Limits, Sandbox
from streams.sandbox.protocol import CHANGED_AFTER_RETURN
from streams.sandbox.result import Job

BACKENDS = ["wasm", "container"]
LIMITS = Limits(timeout_s=30.0, memory_mb=512)
INPUTS = ("([3, 1, 2],)", "([5, 9, 4],)", "([3, 1, 2],)", "([],)")

#: where a program starts its walk: a frame of its own, by a name no static scan reads
STARTS = {
    "traceback": (
        "    try:\n        raise ValueError\n    except ValueError as e:\n"
        "        return getattr(e.__traceback__, 'tb_' + 'frame')\n"
    ),
    "getframe": "    return getattr(sys, '_get' + 'frame')(0)\n",
    "exc_info": (
        "    try:\n        1 / 0\n    except ZeroDivisionError:\n"
        "        return getattr(sys.exc_info()[2], 'tb_' + 'frame')\n"
    ),
}

#: what it does to everything it finds along the way (``seen``: objects already visited)
TAMPER = """
import sys
BACK, LOCALS, GLOBALS, GFRAME = "f_" + "back", "f_" + "locals", "f_" + "globals", "gi_" + "frame"
REFUSED = []


def _start():
{start}

def _unchanged(*args, **kwargs):
    return False


def _spoil(obj, seen, depth=0):
    if id(obj) in seen or depth > 3:
        return
    seen.add(id(obj))
    if type(obj) is list and obj and obj is not _buf:
        obj.clear()
    cells = getattr(obj, "__closure__", None) if callable(obj) else None
    for cell in cells or ():
        try:
            inner = cell.cell_contents
        except ValueError:
            continue
        if callable(inner) and not isinstance(inner, type):
            try:
                cell.cell_contents = _unchanged
            except Exception:
                pass
        else:
            _spoil(inner, seen, depth + 1)
    if type(obj).__name__ == "generator":
        try:
            _walk(getattr(obj, GFRAME), seen)
        except PermissionError:
            REFUSED.append(1)


def _walk(frame, seen):
    while frame is not None:
        if getattr(frame, GLOBALS) is globals():  # its own frames: nothing of the judge's there
            frame = getattr(frame, BACK)
            continue
        names = getattr(frame, LOCALS)
        for key, value in list(names.items()):
            _spoil(value, seen)
            if type(value) is bool or type(value) is int:
                try:
                    names[key] = not value if type(value) is bool else 1 << 60
                except Exception:
                    pass
        frame = getattr(frame, BACK)


def _tamper():
    try:
        _walk(_start(), set())
    except PermissionError:
        REFUSED.append(1)

"""

#: wrong for a caller holding an earlier answer: every call refills one list
BUFFER = (
    TAMPER
    + """
_buf = []


def f(xs):
    _tamper()
    _buf.clear()
    _buf.extend(sorted(xs))
    return _buf
"""
)
#: wrong where the task keeps its argument: it sorts the caller's list in place
SORTS_ARGUMENT = (
    TAMPER
    + """
_buf = None


def f(xs):
    _tamper()
    xs.sort()
    return xs[-1] if xs else None
"""
)


def _run(sandbox: Sandbox, code: str, backend: str, **job: bool) -> tuple[list[str | None], tuple[str, ...]]:
    r = sandbox.execute(
        Job(mode="cases", code=code, entry_point="f", inputs=INPUTS, limits=LIMITS, **job),  # type: ignore[arg-type]
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    got = [
        c.result_repr if c.status == "ok" else ("changed" if c.error == CHANGED_AFTER_RETURN else c.error)
        for c in r.cases
    ]
    return got, r.violations


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("start", "caller"), list(itertools.product(STARTS, [False, True])))
def test_a_refilled_answer_is_seen_whatever_the_program_does_to_the_frames_it_reaches(
    sandbox: Sandbox, backend: str, start: str, caller: bool
) -> None:
    got, _ = _run(sandbox, BUFFER.format(start=STARTS[start]), backend, caller=caller)
    assert got[:3] == ["changed", "changed", "changed"], got


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("start", list(STARTS))
def test_a_kept_argument_changed_is_seen_whatever_the_program_does_to_the_frames_it_reaches(
    sandbox: Sandbox, backend: str, start: str
) -> None:
    got, _ = _run(sandbox, SORTS_ARGUMENT.format(start=STARTS[start]), backend, caller=True, keep_args=True)
    assert all(g is not None and "CallerStateError" in g for g in got[:3]), got


#: looks for the stub's generator wherever the program can look from its frame up (every frame's
#: locals and globals, every code's constants, the objects in them, a bound method's owner) and, were
#: one found, resumes it itself: it would run the stub's turn under the program's own frames
STUB_GENERATOR = """
import sys


def _search():
    seen, todo = set(), []
    frame = sys._getframe(1)
    while frame is not None:
        todo += [frame.f_locals, frame.f_globals, frame.f_code]
        frame = frame.f_back
    while todo and len(seen) < 50000:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if type(obj).__name__ == "generator":
            return obj
        if type(obj) is dict:
            todo += list(obj.values())
        elif type(obj) in (list, tuple, set, frozenset):
            todo += list(obj)
        elif type(obj).__name__ == "code":
            todo += list(obj.co_consts)
        elif type(obj).__name__ == "function":
            todo += [obj.__code__, obj.__defaults__, obj.__closure__]
        elif type(obj).__name__ == "cell":
            try:
                todo.append(obj.cell_contents)
            except ValueError:
                pass
        elif type(obj).__name__ in ("builtin_function_or_method", "method-wrapper", "method"):
            todo.append(getattr(obj, "__self__", None))
    return None


def f(xs):
    found = _search()
    if found is None:
        return "no generator"
    try:
        found.gi_frame
    except PermissionError:
        return "frame refused"
    return "reached"
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_stub_generator_is_nowhere_the_program_looks(sandbox: Sandbox, backend: str) -> None:
    got, _ = _run(sandbox, STUB_GENERATOR, backend)
    assert got == ["'no generator'"] * 4


#: every class the program can find (object's subclasses, theirs, ...) that the stub's function made:
#: a class statement makes a heap type, which the program can give a __del__ (red-team
#: a42_tag_finaliser_unspelt_58: the stub's tag class, whose instances the stub let go of in its turn)
STUB_CLASSES = """
def f(xs):
    seen, todo, found = set(), [object], []
    while todo:
        c = todo.pop()
        if id(c) in seen:
            continue
        seen.add(id(c))
        if getattr(c, "__qualname__", "").startswith("_rls_main."):
            found.append(c.__qualname__)
        try:
            todo.extend(type.__subclasses__(c))
        except TypeError:
            pass
    return sorted(found)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_class_the_stub_made_is_the_programs_to_find(sandbox: Sandbox, backend: str) -> None:
    """Whatever the stub lets go of in its turn (its plain copies' tags, the errors it raises and
    catches) is of a builtin type nothing can be set on: no class of its own is there to change."""
    got, _ = _run(sandbox, STUB_CLASSES, backend)
    assert got == ["[]"] * 4


#: frames used as correct programs use them: a stack printed, a caller named in a log record, a
#: traceback printed and formatted, inspect.stack() read; its answers are right
FRAMES_USED = """
import inspect
import io
import logging
import sys
import traceback

logging.basicConfig(stream=sys.stderr, format="%(funcName)s:%(lineno)d %(message)s")
log = logging.getLogger("solution")


def _named():
    return inspect.stack()[1].function


def f(xs):
    out = io.StringIO()
    traceback.print_stack(file=out)
    log.warning("called from %s", _named())
    try:
        {}["missing"]
    except KeyError:
        traceback.print_exc(file=out)
        text = "".join(traceback.format_exception(*sys.exc_info()))
    if "KeyError" not in text or "Traceback" not in out.getvalue():
        return None
    return sorted(xs)
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("caller", [False, True])
def test_frames_used_as_correct_programs_use_them_still_work(
    sandbox: Sandbox, backend: str, caller: bool
) -> None:
    got, _ = _run(sandbox, FRAMES_USED, backend, caller=caller)
    assert got == ["[1, 2, 3]", "[4, 5, 9]", "[1, 2, 3]", "[]"]


#: the standard library's Python-coded int conversions (3.12+), patched to lie and to note where they ran
PATCHED_CONVERSIONS = """
import sys

_ran = []
try:
    sys.set_int_max_str_digits(0)
    str(10**10000)  # imports _pylong
    _pylong = sys.modules["_pylong"]
    _pylong.int_to_decimal_string = lambda n: (_ran.append(1), "0")[1]
except (KeyError, ValueError):  # 3.11: no such module
    pass


def f(x):
    return [len(_ran), 10**9500 + x]
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_int_written_in_the_stubs_turn_is_written_by_the_stub(sandbox: Sandbox, backend: str) -> None:
    # red-team a32_pylong_*: 3.12+ writes an int past ~30,000 bits with _pylong's Python code, which it
    # finds in sys.modules each time: a patch of the program's ran in the stub's turn
    job = Job(mode="cases", code=PATCHED_CONVERSIONS, entry_point="f", inputs=("(1,)", "(2,)"), limits=LIMITS)
    r = sandbox.execute(job, backend)  # type: ignore[arg-type]
    assert r.infra_error is None, r.infra_error
    assert [c.status for c in r.cases] == ["ok", "ok"], r.cases
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        expected = [f"[0, {10**9500 + 1}]", f"[0, {10**9500 + 2}]"]
    finally:
        sys.set_int_max_str_digits(limit)
    assert [c.result_repr for c in r.cases] == expected


#: a property of the program's on the parser's node class, and a huge int in a request
PARSER_CLASSES = """
import _ast

_ran = []


def _value(node):
    _ran.append(1)
    return node.__dict__.get("_v")


def _set_value(node, v):
    node.__dict__["_v"] = v


_ast.Constant.value = property(_value, _set_value)


def f(x):
    return [len(_ran), x % 1000]
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_request_is_read_without_the_programs_parser_classes(sandbox: Sandbox, backend: str) -> None:
    # red-team a33_ast_node_property_key_buffer_30: the stub parsed each request into _ast nodes in its
    # turn, and a property on _ast.Constant ran there; a request past the conversion limit is read too
    limit = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        huge = f"({10**12000 + 7},)"
    finally:
        sys.set_int_max_str_digits(limit)
    job = Job(mode="cases", code=PARSER_CLASSES, entry_point="f", inputs=("(1234,)", huge), limits=LIMITS)
    r = sandbox.execute(job, backend)  # type: ignore[arg-type]
    assert r.infra_error is None, r.infra_error
    assert [c.result_repr for c in r.cases] == ["[0, 234]", "[0, 7]"], r.cases
