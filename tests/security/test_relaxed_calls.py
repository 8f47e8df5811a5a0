# ruff: noqa: E501 - program texts are kept on one line each
"""Calls the guest's audit hook lets through because they reach nothing, each shown still to reach
nothing: a read of a path absent from the guest's view (a library looking for an optional rc file) is
answered "no such file" without opening anything; setting the trace or profile function that is already
set (a test runner's save and restore) changes nothing; a local socket pair (an event loop's wake-up
channel) talks only to itself. Everything next to them stays refused and labelled."""

from __future__ import annotations

import pytest

from streams.sandbox import ExecutionResult, Limits, Sandbox

BACKENDS = ["wasm", "container"]
LIMITS = Limits(timeout_s=4.0, memory_mb=192, output_bytes=16 * 1024, pids=24, tmpfs_mb=4, file_mb=2)


def run(sandbox: Sandbox, code: str, backend: str) -> ExecutionResult:
    r = sandbox.run_script(code, limits=LIMITS, backend=backend)
    assert r.infra_error is None, r.infra_error
    return r


DOCTEST = '''
import doctest

def flip(s):
    """
    >>> flip('aB')
    'Ab'
    """
    return s.swapcase()

print(doctest.testmod())
'''


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_running_its_own_doctests_is_not_refused(sandbox: Sandbox, backend: str) -> None:
    r = run(sandbox, DOCTEST, backend)
    assert (r.exit_code, r.violations) == (0, ()), r.stderr[-800:]
    assert "TestResults(failed=0, attempted=1)" in r.stdout


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_absent_path_read_opens_nothing_and_a_present_one_stays_labelled(
    sandbox: Sandbox, backend: str
) -> None:
    code = (
        "import os\n"
        "for p in ('/.pdbrc', '/etc/shadow', 'x/../../../etc/hostname'):\n"
        "    try:\n"
        "        open(p).read()\n"
        "        print('READ', p)\n"
        "    except FileNotFoundError:\n"
        "        print('absent', p)\n"
        # absent, and asked to create: refused, labelled, nothing made
        "try:\n"
        "    open('/.pdbrc', 'w').write('x')\n"
        "except PermissionError:\n"
        "    print('refused')\n"
        "print(os.path.exists('/.pdbrc'))\n"
    )
    r = run(sandbox, code, backend)
    assert "READ" not in r.stdout, r.stdout
    assert r.stdout.count("absent") == 3 and "refused\nFalse" in r.stdout, (r.stdout, r.stderr[-500:])
    assert r.violations == ("filesystem",)


def test_a_present_file_outside_the_roots_stays_refused_in_the_jail(sandbox: Sandbox) -> None:
    # the jail's interpreter exists in its view, outside the roots: that read is a probe, labelled
    r = run(sandbox, "import sys\nprint(len(open(sys.executable, 'rb').read()))\n", "container")
    assert r.exit_code != 0 and r.violation == "filesystem", (r.stdout, r.stderr[-500:])


TRACE = (
    "import sys\n"
    "sys.settrace(sys.gettrace())\n"
    "sys.settrace(None)\n"
    "sys.setprofile(None)\n"
    "print('restored', sys.gettrace(), sys.getprofile())\n"
    "print(sorted(sys.settrace.__globals__))\n"
    "seen = []\n"
    "for set_ in (sys.settrace, sys.settrace.__defaults__[0], sys.setprofile):\n"
    "    try:\n"
    "        set_(lambda frame, event, arg: seen.append(frame))\n"
    "        print('SET')\n"
    "    except PermissionError:\n"
    "        print('refused')\n"
    "def f():\n"
    "    return 1\n"
    "f()\n"
    "print('seen', len(seen), sys.gettrace(), sys.getprofile())\n"
)


@pytest.mark.parametrize("backend", BACKENDS)
def test_restoring_the_trace_function_is_allowed_and_setting_one_is_not(
    sandbox: Sandbox, backend: str
) -> None:
    r = run(sandbox, TRACE, backend)
    assert r.exit_code == 0, r.stderr[-800:]
    lines = r.stdout.splitlines()
    assert lines[0] == "restored None None"
    assert lines[1] == "[]"  # the functions' globals hold nothing of the stub
    assert lines[2:5] == ["refused"] * 3  # through the new function, the original, the profiler
    assert lines[5] == "seen 0 None None"
    assert r.violations == ("introspection",)


SOCKETS = (
    "import _socket, os, socket\n"
    "a, b = socket.socketpair()\n"
    "a.sendall(b'ping')\n"
    "print(b.recv(4))\n"
    "for name, attempt in (\n"
    "    ('socket', lambda: socket.socket(socket.AF_UNIX)),\n"
    "    ('raw', lambda: _socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),\n"
    "    ('not-a-socket', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, 0, os.open('/dev/null', 0))),\n"
    "    ('connect', lambda: socket.socket(socket.AF_UNIX).connect('/tmp/s')),\n"
    "    ('bind', lambda: socket.socket(socket.AF_UNIX).bind('\\0abstract')),\n"
    "    ('sendto', lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b'x', '\\0abstract')),\n"
    "    ('pair-connect', lambda: a.connect('/tmp/s')),\n"
    "    ('inet', lambda: socket.socket(socket.AF_INET)),\n"
    "    ('inet-pair', lambda: socket.socketpair(socket.AF_INET)),\n"
    "):\n"
    "    try:\n"
    "        attempt()\n"
    "        print(name, 'PASSED')\n"
    "    except PermissionError:\n"
    "        print(name, 'refused')\n"
    "    except OSError as exc:\n"
    "        print(name, 'failed', exc.errno)\n"
)


def test_a_local_socket_pair_talks_only_to_itself(sandbox: Sandbox) -> None:
    r = run(sandbox, SOCKETS, "container")
    assert r.exit_code == 0, r.stderr[-800:]
    lines = r.stdout.splitlines()
    assert lines[0] == "b'ping'"
    made = ("socket", "raw", "not-a-socket", "connect", "bind", "sendto", "pair-connect", "inet")
    refused = [f"{n} refused" for n in made]
    assert lines[1:] == [*refused, "inet-pair failed 95"]  # the kernel makes pairs of local sockets only
    assert r.violations == ("network",)


def test_an_event_loop_runs_in_the_jail(sandbox: Sandbox) -> None:
    code = "import asyncio\nasync def m(a):\n    await asyncio.sleep(0)\n    return a + 1\nprint(asyncio.run(m(41)))\n"
    r = run(sandbox, code, "container")
    assert (r.exit_code, r.stdout, r.violations) == (0, "42\n", ()), r.stderr[-800:]


def test_the_wasm_guest_has_no_local_socket_pair(sandbox: Sandbox) -> None:
    # WASI has no socket pair: python's fallback (a loopback listener) stays network, refused
    r = run(sandbox, "import socket\nsocket.socketpair()\n", "wasm")
    assert r.exit_code != 0 and r.violation == "network"
