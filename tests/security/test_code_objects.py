"""A program may not run bytecode of its own making. CPython checks none of what a code object's
bytecode does: an index past a frame's locals reads any word of memory (red-team a25 read the stub's
generator off the driver's value stack that way, and with it the run's key). A code object made of raw
fields (``CodeType(...)``, ``code.replace(...)``) is refused and recorded, whatever it changes, on both
backends; the one the standard library makes (``types.coroutine``, which asyncio uses) still is made
(asyncio runs in the jail: WASM refuses the socket pair an event loop needs)."""

from __future__ import annotations

import pytest

from streams.sandbox import Limits, Sandbox
from streams.sandbox.result import Job

BACKENDS = ["wasm", "container"]
LIMITS = Limits(timeout_s=30.0, memory_mb=512)

MAKES = {
    "replace": "code.replace(co_name='g')",
    "replace_bytecode": "code.replace(co_code=code.co_code)",
    "constructor": (
        "type(code)(code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount, code.co_nlocals,"
        " code.co_stacksize, code.co_flags, code.co_code, code.co_consts, code.co_names, code.co_varnames,"
        " code.co_filename, 'g', code.co_qualname, code.co_firstlineno, code.co_linetable,"
        " code.co_exceptiontable)"
    ),
}

MAKE = """
def _template(x):
    return x + 1


def f(x):
    code = _template.__code__
    try:
        made = {make}
    except PermissionError as exc:
        return "refused: " + str(exc)
    return "made " + made.co_name
"""

COROUTINE = """
import asyncio


async def _twice(x):
    await asyncio.sleep(0)
    return 2 * x


def f(x):
    return asyncio.run(_twice(x))
"""


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("make", list(MAKES))
def test_a_code_object_made_of_raw_fields_is_refused(sandbox: Sandbox, backend: str, make: str) -> None:
    r = sandbox.execute(
        Job(
            mode="cases", code=MAKE.format(make=MAKES[make]), entry_point="f", inputs=("(1,)",), limits=LIMITS
        ),
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    assert [c.result_repr for c in r.cases] == [
        "'refused: sandbox: introspection is not allowed (code.__new__)'"
    ]
    assert "introspection" in r.violations


@pytest.mark.parametrize("backend", ["container"])  # WASM has no socket pair for an event loop
def test_asyncio_still_runs_its_coroutines(sandbox: Sandbox, backend: str) -> None:
    r = sandbox.execute(
        Job(mode="cases", code=COROUTINE, entry_point="f", inputs=("(1,)", "(4,)"), limits=LIMITS),
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    assert [c.result_repr for c in r.cases] == ["2", "8"], r.cases
    assert not r.violations


#: the same code object unmarshalled from a dump whose bytecode is patched (red-team a25_marshal_*),
#: from one unpatched, and plain data copied through marshal (a fast deep copy)
MARSHAL = """
import marshal


def _template(x):
    return x + 1


def f(how):
    data = marshal.dumps(_template.__code__)
    if how == "patched":
        data = data.replace(_template.__code__.co_code, bytes(len(_template.__code__.co_code)))
    if how == "copy":
        value = {"a": [1, 2.5, ("x", None)], "b": {3, 4}}
        return marshal.loads(marshal.dumps(value)) == value
    try:
        return marshal.loads(data).co_name
    except PermissionError as exc:
        return "refused: " + str(exc)
"""

#: modules imported for the first time in a call (each one's .pyc unmarshalled by the import system)
IMPORTS = """
def f(x):
    import difflib
    import email.mime.text
    import statistics

    return [statistics.median([x, 1, 9]), difflib.SequenceMatcher(None, "ab", "abc").ratio() > 0.5,
            email.mime.text.MIMEText("hi").get_content_type()]
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_marshal_makes_no_code_the_import_system_did_not_read(sandbox: Sandbox, backend: str) -> None:
    r = sandbox.execute(
        Job(
            mode="cases",
            code=MARSHAL,
            entry_point="f",
            inputs=("('patched',)", "('same',)", "('copy',)"),
            limits=LIMITS,
        ),
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    refused = "'refused: sandbox: introspection is not allowed (marshal.loads)'"
    assert [c.result_repr for c in r.cases] == [refused, refused, "True"]
    assert "introspection" in r.violations


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_import_system_still_loads_its_compiled_modules(sandbox: Sandbox, backend: str) -> None:
    r = sandbox.execute(
        Job(mode="cases", code=IMPORTS, entry_point="f", inputs=("(4,)",), limits=LIMITS),
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    assert [c.result_repr for c in r.cases] == ["[4, True, 'text/plain']"], r.cases
    assert not r.violations


#: the gate handed a buffer the program may change after the check; what the gate is made of asked for;
#: and marshal's real function, which a fresh module object of marshal hands out again, called directly
REAL_LOADS = """
import importlib.util
import marshal


def f(how):
    value = [1, ("a", 2.5)]
    if how == "buffer":
        return marshal.loads(bytearray(marshal.dumps(value))) == value
    try:
        if how == "code":  # the inner function's, which the outer one calls
            inner = [c for c in marshal.loads.__code__.co_consts if type(c).__name__ == "function"]
            return len(inner[0].__code__.co_consts)
        fresh = importlib.util.module_from_spec(importlib.util.find_spec("marshal"))
        return fresh.loads(marshal.dumps(value)) == value
    except PermissionError as exc:
        return "refused: " + str(exc)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_marshal_reads_only_what_its_check_read(sandbox: Sandbox, backend: str) -> None:
    r = sandbox.execute(
        Job(
            mode="cases",
            code=REAL_LOADS,
            entry_point="f",
            inputs=("('buffer',)", "('code',)", "('real',)"),
            limits=LIMITS,
        ),
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    assert [c.result_repr for c in r.cases] == [
        "True",
        "'refused: sandbox: harness_access is not allowed (object.__getattr__)'",
        "'refused: sandbox: introspection is not allowed (marshal.loads)'",
    ]


#: types.coroutine on a generator function (no event loop: WASM has none), driven by hand
GENERATOR_COROUTINE = """
import types


@types.coroutine
def _step():
    got = yield "paused"
    return got * 2


async def _twice():
    return await _step()


def f(x):
    coro = _twice()
    first = coro.send(None)
    try:
        coro.send(x)
    except StopIteration as stop:
        return [first, stop.value]
"""

#: the types.coroutine of a fresh module object (its own code.replace, not the gate's), and the
#: gate's code read off it
COROUTINE_ELSEWHERE = """
import importlib
import types


def _gen():
    yield 1


def f(how):
    try:
        if how == "fresh module":
            importlib.reload(types).coroutine(_gen)
        else:  # the inner function's, which the outer one calls
            inner = [c for c in types.coroutine.__code__.co_consts if type(c).__name__ == "function"]
            inner[0].__code__
    except PermissionError as exc:
        return "refused: " + str(exc)
    return "allowed"
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_types_coroutine_marks_a_generator_and_nothing_else_may(sandbox: Sandbox, backend: str) -> None:
    # red-team a30_coroutine_*: types.coroutine's code run with the program's globals, or handed a
    # look-alike whose replace was the program's, made crafted bytecode while the hook trusted the caller
    r = sandbox.execute(
        Job(mode="cases", code=GENERATOR_COROUTINE, entry_point="f", inputs=("(21,)",), limits=LIMITS),
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    assert [c.result_repr for c in r.cases] == ["['paused', 42]"], r.cases
    assert not r.violations
    r = sandbox.execute(
        Job(
            mode="cases",
            code=COROUTINE_ELSEWHERE,
            entry_point="f",
            inputs=("('its code',)", "('fresh module',)"),  # (reload rebinds types.coroutine)
            limits=LIMITS,
        ),
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    assert [c.result_repr for c in r.cases] == [
        "'refused: sandbox: harness_access is not allowed (object.__getattr__)'",
        "'refused: sandbox: introspection is not allowed (code.__new__)'",
    ], r.cases


#: an error raised inside a marshal gate: its traceback, printed and walked
GATE_ERROR = """
import marshal
import traceback

DATA = {"copy refused": 0, "truncated": marshal.dumps([1, "two", 3.0])[:-3], "bad data": b"\\xff\\x00"}


def f(how):
    try:
        marshal.loads(DATA[how])
    except Exception as exc:
        printed = traceback.format_exc()
        names, tb = [], exc.__traceback__
        while tb is not None:
            names.append(tb.tb_frame.f_globals.get("__name__"))
            last, tb = tb.tb_frame, tb.tb_next
        held = sorted(k for k, v in last.f_locals.items() if type(v).__name__ in ("function", "dict"))
        return [type(exc).__name__, names[-1], held, "Traceback" in printed]
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gates_error_shows_nothing_of_the_gate(sandbox: Sandbox, backend: str) -> None:
    # red-team a30_gate_frame_token_eq_*: the traceback held the gate's frame, whose code's constants
    # were the token table and the real marshal.loads; a31c_ok_marshal_error_format_exc_30: printing
    # that traceback was then refused. The traceback ends at the outer function now (its code holds
    # the inner one alone), and printing it is a program's right; data cut short is marshal's EOFError
    r = sandbox.execute(
        Job(
            mode="cases",
            code=GATE_ERROR,
            entry_point="f",
            inputs=("('copy refused',)", "('truncated',)", "('bad data',)"),
            limits=LIMITS,
        ),
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    assert [c.result_repr for c in r.cases] == [
        "['TypeError', '_rls_gate', [], True]",
        "['EOFError', '_rls_gate', [], True]",
        "['PermissionError', '_rls_gate', [], True]",
    ], r.cases
    assert r.violations == ("introspection",)  # the bad data's refusal alone
