"""Only the stub speaks on its channel. The channel is within the program's reach (WASM's ``_host``
import, the jail's pipes named in ``sys.argv``), so a program can send the host messages of its own:
answer its requests itself, past every check the stub makes on an answer (one list refilled by every
call, an argument sorted in place), or claim its answers changed. Every message of the stub's carries
the run's key, which the program has no way to read: whatever it sends in the stub's name, with no key,
a guessed one, or any bytes it finds, stops its run as a protocol deviation, on both backends, and no
case it answered that way passes."""

from __future__ import annotations

import pytest

from streams.sandbox import Limits, Sandbox
from streams.sandbox.protocol import TAMPER
from streams.sandbox.result import Job

BACKENDS = ["wasm", "container"]
LIMITS = Limits(timeout_s=30.0, memory_mb=512)
INPUTS = ("([3, 1, 2],)", "([5, 9, 4],)", "([],)")

#: the stub's channel as the program reaches it, and a message sent in the stub's name with ``key``
#: between its kind and its payload; then the program answers every request itself
CHANNEL = """
import ast
import os
import sys

_buf = []


def _door():
    host = sys.modules.get("_host")
    if host is not None:
        return host.call
    out_fd, in_fd = int(sys.argv[1]), int(sys.argv[2])

    def read(n):
        data = b""
        while len(data) < n:
            chunk = os.read(in_fd, n - len(data))
            if not chunk:
                raise OSError("closed")
            data += chunk
        return data

    def call(msg):
        data = len(msg).to_bytes(4, "big") + msg
        while data:
            data = data[os.write(out_fd, data):]
        return read(int.from_bytes(read(4), "big"))

    return call


def _keys():
{keys}


def _answer(xs):
    _buf[:] = sorted(xs)  # one list, refilled by every call
    return _buf


def f(xs):
    call = _door()
    for key in _keys():
        request = call(b"R" + key + b"o" + repr(_answer(xs)).encode())
        while request[:1] == b"C":
            args = ast.literal_eval(request[1:].decode())
            request = call(b"R" + key + b"o" + repr(_answer(*args)).encode())
        if request == b"E":
            os._exit(0)
    return _answer(xs)
"""

KEYS = {
    "none": "    return [b'']",
    "guessed": "    return [os.urandom(16)]",
    # every 16 bytes the program can find from its own frame up: the driver's and the module's
    # namespaces, the objects in them, and the job's literals its inputs hold
    "searched": """    seen, found, todo = set(), [], [sys._getframe(2)]
    frame = sys._getframe(2)
    while frame is not None:
        todo += [frame.f_locals, frame.f_globals]
        frame = frame.f_back
    while todo and len(seen) < 20000:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if type(obj) is bytes and len(obj) >= 16:
            found += [obj[i:i + 16] for i in range(0, min(len(obj), 64) - 15)]
        elif type(obj) is dict:
            todo += list(obj.values())
        elif type(obj) in (list, tuple, set, frozenset):
            todo += list(obj)
        elif callable(obj):
            for attr in ("__defaults__", "__kwdefaults__", "__closure__"):
                try:
                    todo.append(getattr(obj, attr))
                except Exception:
                    pass
        elif type(obj).__name__ == "cell":
            try:
                todo.append(obj.cell_contents)
            except ValueError:
                pass
    return found[:50] or [b'']""",
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("keys", list(KEYS))
def test_a_program_answering_its_requests_itself_stops_its_run(
    sandbox: Sandbox, backend: str, keys: str
) -> None:
    code = CHANNEL.replace("{keys}", KEYS[keys])
    r = sandbox.execute(
        Job(mode="cases", code=code, entry_point="f", inputs=INPUTS, limits=LIMITS),
        backend,  # type: ignore[arg-type]
    )
    assert r.infra_error is None, r.infra_error
    assert TAMPER in r.violations, (r.violations, r.deviation)
    assert "without the run's key" in (r.deviation or "")
    assert not any(c.status == "ok" for c in r.cases), r.cases


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_leaving_the_channel_alone_is_answered_as_before(sandbox: Sandbox, backend: str) -> None:
    code = "def f(xs):\n    return sorted(xs)\n"
    r = sandbox.execute(
        Job(mode="cases", code=code, entry_point="f", inputs=INPUTS, limits=LIMITS),
        backend,  # type: ignore[arg-type]
    )
    assert r.deviation is None and TAMPER not in r.violations
    assert [c.result_repr for c in r.cases] == ["[1, 2, 3]", "[4, 5, 9]", "[]"]
