"""The container's fork server (``SandboxConfig.container_fork_server``): one long-lived jail that forks
every execution. What it must keep of a jail per execution, tested in both modes where both must hold
it, and what only the server can break (it survives its executions; it refuses malformed jobs; no
execution reaches it, its keeper or a later execution).

Every probe below the audit hook runs in a child interpreter the program starts (no hook at all)."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from streams.sandbox import Limits, Sandbox, SandboxConfig, seccomp
from streams.sandbox.container import ContainerBackend

LIMITS = Limits(timeout_s=4.0, memory_mb=256, output_bytes=64 * 1024, pids=24, tmpfs_mb=4, file_mb=2)
ARCH = seccomp.host_arch()
CAPGET = {0xC000003E: 125, 0xC00000B7: 90}[ARCH.audit]


@pytest.fixture(scope="module")
def forked() -> Iterator[Sandbox]:
    box = Sandbox(SandboxConfig(container_fork_server=True))
    box.ensure("container")
    yield box
    box.container().close()


def _child(sandbox: Sandbox, child: str, prelude: str = "") -> dict[str, Any]:
    """Run ``child`` in a hook-free interpreter the program starts; what it printed after OUT."""
    program = (
        "import subprocess, sys\n"
        f"{prelude}"
        f"r = subprocess.run([sys.executable, '-I', '-c', {child!r}], capture_output=True, text=True)\n"
        "print(r.stdout, r.stderr)\n"
    )
    r = sandbox.run_script(program, limits=LIMITS, backend="container")
    assert r.infra_error is None, r.infra_error
    line = next((x.strip() for x in r.stdout.splitlines() if x.strip().startswith("OUT")), None)
    assert line is not None, (r.stdout, r.stderr)
    out: dict[str, Any] = json.loads(line[3:])
    return out


#: the pids a child sees alive in its pid namespace (its own, its parent's, and any other process)
LIVING = (
    "import os\n"
    "def alive(p):\n"
    "    try:\n"
    "        os.kill(p, 0)\n"
    "        return True\n"
    "    except PermissionError:\n"
    "        return True\n"
    "    except ProcessLookupError:\n"
    "        return False\n"
    "living = [p for p in range(1, 4000) if alive(p)]\n"
)


def test_the_programs_process_holds_no_capability(jail: Sandbox) -> None:
    # read from a child, of the program's process (pid 1) and its own: the fork server's jail holds
    # CAP_SYS_ADMIN in its user namespace to make each execution's namespaces; no execution keeps it
    child = (
        "import ctypes, json\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        "out = {}\n"
        "for pid in (1, 0):\n"
        "    hdr = (ctypes.c_uint32 * 2)(0x20080522, pid)\n"
        "    data = (ctypes.c_uint32 * 6)()\n"
        f"    r = libc.syscall(ctypes.c_long({CAPGET}), hdr, data)\n"
        "    out[str(pid)] = [int(r), list(data)]\n"
        # the bounding set (PR_CAPBSET_READ; a child inherits the program's): no capability in it
        "out['bounding'] = [c for c in range(64) if libc.prctl(23, c, 0, 0, 0) == 1]\n"
        "print('OUT' + json.dumps(out))\n"
    )
    seen = _child(jail, child)
    assert seen == {"1": [0, [0] * 6], "0": [0, [0] * 6], "bounding": []}, seen


def test_nothing_an_execution_leaves_reaches_a_later_one(jail: Sandbox) -> None:
    # files in /tmp and /dev/shm, a module's state, a process left running: the next execution (a fork
    # of the same server, in the fork server's mode) sees none of it
    leave = (
        "import collections, subprocess, sys\n"
        "open('/tmp/mark', 'w').write('x')\n"
        "open('/dev/shm/mark', 'w').write('x')\n"
        "collections.rls_mark = 1\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True)\n"
        "print('LEFT')\n"
    )
    r = jail.run_script(leave, limits=LIMITS, backend="container")
    assert r.infra_error is None and "LEFT" in r.stdout, (r.stdout, r.stderr)
    look = (
        "import collections, os\n"
        "print('SEEN', sorted(os.listdir('/tmp')), sorted(os.listdir('/dev/shm')),\n"
        "      hasattr(collections, 'rls_mark'))\n"
    )
    r = jail.run_script(look, limits=LIMITS, backend="container")
    assert "SEEN [] [] False" in r.stdout, (r.stdout, r.stderr)
    seen = _child(
        jail, LIVING + "import json\nprint('OUT' + json.dumps({'living': living, 'me': os.getpid()}))\n"
    )
    # the program (1) and this child: nothing of the earlier execution, nothing of a server or keeper
    assert seen["living"] == sorted({1, seen["me"]}), seen


def test_the_program_cannot_name_its_parent_or_the_server(forked: Sandbox) -> None:
    # the execution is pid 1 of a pid namespace of its own: its keeper and the server are outside it,
    # so no pid it can write names them (getppid() is 0; kill(0) is its own group, which the watch
    # refuses and labels)
    r = forked.run_script("import os\nprint('PPID', os.getppid())\n", limits=LIMITS, backend="container")
    assert "PPID 0" in r.stdout, (r.stdout, r.stderr)
    seen = _child(forked, LIVING + "import json\nprint('OUT' + json.dumps({'living': living}))\n")
    assert len(seen["living"]) == 2, seen  # pid 1 (the program) and the child itself
    # the program's parent, as the program names it, signalled by a hook-free child: refused by the
    # watch (kill(0) is the program's own group) and labelled; the program, its keeper and the server
    # live on
    kill_parent = "import os, signal, sys\nos.kill(int(sys.argv[1]), signal.SIGKILL)\n"
    program = (
        "import os, subprocess, sys\n"
        f"subprocess.run([sys.executable, '-I', '-c', {kill_parent!r}, str(os.getppid())])\n"
        "print('ALIVE')\n"
    )
    server = forked.container().server
    assert server is not None
    before = server.pid
    r = forked.run_script(program, limits=LIMITS, backend="container")
    assert r.infra_error is None and "ALIVE" in r.stdout, (r.stdout, r.stderr)
    assert "signal" in r.violations, r.violations
    assert server.pid == before and server.proc is not None and server.proc.poll() is None


@pytest.mark.parametrize(
    "program",
    [
        "while True:\n    pass\n",  # killed at its deadline
        "import os\nwhile True:\n    os.fork()\n",  # the pids limit
        "x = bytearray(1 << 30)\n",  # the memory limit
        "import os\nos._exit(7)\n",
        "import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)\n",  # a crash
    ],
    ids=["deadline", "fork bomb", "memory", "exit", "segfault"],
)
def test_the_server_outlives_executions_that_end_badly(forked: Sandbox, program: str) -> None:
    server = forked.container().server
    assert server is not None
    forked.run_script("pass\n", limits=LIMITS, backend="container")
    before = server.pid
    limits = Limits(timeout_s=1.5, memory_mb=128, pids=16, tmpfs_mb=4, file_mb=2)
    r = forked.run_script(program, limits=limits, backend="container")
    assert r.infra_error is None, r.infra_error
    assert r.exit_code != 0 or r.timed_out
    after = forked.run_script("print('FINE')\n", limits=LIMITS, backend="container")
    assert "FINE" in after.stdout, (after.stdout, after.stderr)
    assert server.pid == before, "the server was restarted: an execution ended it"


def test_the_server_refuses_malformed_jobs_and_keeps_serving(forked: Sandbox) -> None:
    # the control channel carries a job's few numbers and exactly seven descriptors, size-checked: any
    # other datagram is dropped (its descriptors closed) and the server serves the next job
    backend: ContainerBackend = forked.container()
    forked.run_script("pass\n", limits=LIMITS, backend="container")
    server = backend.server
    assert server is not None and server.control is not None
    before = server.pid
    bad = [
        (b"4194304 0:5 1:2097152 4:0 7:256", 0),  # no descriptors
        (b"4194304 0:5 1:2097152 4:0 7:256", 3),  # too few
        (b"4194304 0:5 1:2097152 4:0 7:256", 9),  # too many (the kernel cuts them: truncated)
        (b"4194304 rm -rf", 7),  # not numbers
        (b"", 7),  # nothing
        (b"4194304 " + b"0:5 " * 2000, 7),  # past the size limit
    ]
    for text, count in bad:
        r, w = os.pipe()
        try:
            fds = [w] * count
            rights = [
                (socket.SOL_SOCKET, socket.SCM_RIGHTS, b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds))
            ]
            server.control.sendmsg([text], rights if count else [])
            os.close(w)
            w = -1
            # every copy the server received is closed: the pipe reaches its end
            ready, _, _ = select.select([r], [], [], 10)
            assert ready and os.read(r, 1) == b"", (text[:40], count)
        finally:
            os.close(r)
            if w >= 0:
                os.close(w)
    time.sleep(0.2)
    after = forked.run_script("print('FINE')\n", limits=LIMITS, backend="container")
    assert "FINE" in after.stdout, (after.stdout, after.stderr)
    assert server.pid == before


def test_the_server_is_started_again_once_it_has_ended(forked: Sandbox) -> None:
    backend = forked.container()
    forked.run_script("pass\n", limits=LIMITS, backend="container")
    server = backend.server
    assert server is not None and server.proc is not None
    first = server.pid
    server.proc.kill()
    server.proc.wait()
    r = forked.run_script("print('FINE')\n", limits=LIMITS, backend="container")
    assert "FINE" in r.stdout, (r.stdout, r.stderr)
    assert server.pid not in (None, first)


def test_an_execution_ends_with_the_same_status_in_both_modes(jail: Sandbox) -> None:
    r = jail.run_script("import os\nos._exit(7)\n", limits=LIMITS, backend="container")
    assert r.infra_error is None and r.exit_code == 7 and not r.violations, (r.exit_code, r.violations)
    limits = Limits(timeout_s=1.0, memory_mb=128, pids=16, tmpfs_mb=4, file_mb=2)
    r = jail.run_script("while True:\n    pass\n", limits=limits, backend="container")
    # killed at the deadline: a jail of its own ends with bubblewrap killed (-9 to the host's wait), a
    # forked execution with its keeper's 128 + the signal; both read as the latter
    assert r.infra_error is None and r.timed_out and r.exit_code == 137, (r.exit_code, r.timed_out)
    # killed for flooding its output (no deadline): the same
    r = jail.run_script("while True:\n    print('x' * 4096)\n", limits=limits, backend="container")
    assert r.infra_error is None and not r.timed_out and r.exit_code == 137, (r.exit_code, r.violations)
    assert "output_limit" in r.violations, r.violations
    # the kernel's kill at the memory limit
    r = jail.run_script("x = bytearray(1 << 30)\n", limits=limits, backend="container")
    assert r.memory_exceeded and r.exit_code == 137, (r.exit_code, r.memory_exceeded)


def test_concurrent_executions_each_get_their_own_answer_and_tmp(forked: Sandbox) -> None:
    # one server, four threads of executions at once: each gets back its own value, and its /tmp holds
    # its own file alone (the descriptors and namespaces of one job never reach another's fork)
    code = (
        "import os\n"
        "def f(a):\n"
        "    open('/tmp/m', 'w').write(str(a))\n"
        "    return (a, sorted(os.listdir('/tmp')), open('/tmp/m').read())\n"
    )
    wrong: list[object] = []

    def worker(k: int) -> None:
        for i in range(8):
            n = 100 * k + i
            r = forked.run_cases(code, "f", [f"({n},)"], limits=LIMITS, backend="container")
            if r.infra_error or [c.result_repr for c in r.cases] != [f"({n}, ['m'], '{n}')"]:
                wrong.append((n, r.infra_error, r.cases))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == [], wrong[:3]


def test_an_executions_mounts_stay_in_its_own_namespace(forked: Sandbox) -> None:
    # its /tmp and /dev/shm are mounted in the keeper's new mount namespace: none of them appears in
    # the server's (which would keep an execution's files alive, and stack under the next execution's)
    server = forked.container().server
    assert server is not None
    forked.run_script("pass\n", limits=LIMITS, backend="container")
    table = Path(f"/proc/{server.pid}/mountinfo")
    before = table.read_text()
    r = forked.run_script("open('/tmp/big', 'wb').write(b'x' * 100000)\n", limits=LIMITS, backend="container")
    assert r.infra_error is None and r.exit_code == 0, (r.exit_code, r.stderr)
    assert table.read_text() == before
    assert "shared:" not in before  # nothing the server mounts propagates anywhere


def _descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (host's /proc): a server's keepers, executions and their children."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry.name))
    out: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in out:
                out.add(child)
                todo.append(child)
    return out


def _running(pids: set[int]) -> set[int]:
    """Those of ``pids`` still there and not a zombie (the ones this test looks for are nobody's)."""
    left = set()
    for pid in pids:
        with contextlib.suppress(OSError, IndexError):
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                left.add(pid)
    return left


def _gone(pids: set[int], within: float = 10.0) -> set[int]:
    end = time.monotonic() + within
    while _running(pids) and time.monotonic() < end:
        time.sleep(0.05)
    return _running(pids)


def _server_killed(server: Any) -> tuple[int, set[int]]:
    """SIGKILL the server's interpreter (not through the backend): its pid and what ran below it."""
    pid = server.pid
    assert pid is not None
    below = _descendants(pid)
    os.kill(pid, signal.SIGKILL)
    return pid, below


def test_a_server_killed_between_executions_is_noticed_and_replaced(forked: Sandbox) -> None:
    # the next execution, sent at once (before the thread holding the server's jail has reaped it),
    # goes to a new server and succeeds; nothing of the old one remains
    server = forked.container().server
    assert server is not None
    forked.run_script("pass\n", limits=LIMITS, backend="container")
    assert server.proc is not None
    jail_pid = server.proc.pid
    old, below = _server_killed(server)
    r = forked.run_script("print('FINE')\n", limits=LIMITS, backend="container")
    assert r.infra_error is None and "FINE" in r.stdout, (r.infra_error, r.stdout, r.stderr)
    assert server.pid not in (None, old)
    assert _gone({old, jail_pid} | below) == set()


def test_a_server_killed_mid_execution_fails_that_execution_clearly_and_leaves_nothing(
    forked: Sandbox,
) -> None:
    server = forked.container().server
    assert server is not None
    forked.run_script("pass\n", limits=LIMITS, backend="container")
    assert server.proc is not None
    jail_pid = server.proc.pid
    # the execution starts a child of its own and waits: its keeper, itself and its child below the server
    program = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "time.sleep(30)\n"
    )
    limits = Limits(timeout_s=20.0, memory_mb=256, pids=24, tmpfs_mb=4, file_mb=2)
    box: dict[str, Any] = {}
    run = threading.Thread(
        target=lambda: box.update(r=forked.run_script(program, limits=limits, backend="container"))
    )
    t0 = time.monotonic()
    run.start()
    assert server.pid is not None
    while len(_descendants(server.pid)) < 3 and time.monotonic() - t0 < 15:
        time.sleep(0.05)
    assert len(_descendants(server.pid)) >= 3, "the execution's child never started"
    old, below = _server_killed(server)
    run.join(timeout=15)
    assert not run.is_alive(), "the execution hung once its server had ended"
    assert time.monotonic() - t0 < 15  # not held to its 20 s deadline
    r = box["r"]
    assert r.infra_error is not None and "the fork server ended during the execution" in r.infra_error, (
        r.infra_error,
        r.exit_code,
    )
    assert _gone({old, jail_pid} | below) == set()
    after = forked.run_script("print('FINE')\n", limits=LIMITS, backend="container")
    assert after.infra_error is None and "FINE" in after.stdout, (after.infra_error, after.stderr)


def test_a_server_killed_at_any_moment_never_hangs_or_leaks_an_execution(forked: Sandbox) -> None:
    # executions from three threads while the server is killed five times at spread moments (some land
    # while a job is queued, forked, starting or running): each ends, either answered or as an infra
    # error naming the fork server; no process of a killed server remains
    server = forked.container().server
    assert server is not None
    forked.run_script("pass\n", limits=LIMITS, backend="container")
    results: list[tuple[int, Any]] = []
    code = "import time\ndef f(a):\n    time.sleep(0.05)\n    return a + 1\n"

    def worker(k: int) -> None:
        for i in range(10):
            n = 100 * k + i
            results.append((n, forked.run_cases(code, "f", [f"({n},)"], limits=LIMITS, backend="container")))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    killed: set[int] = set()
    for pause in (0.3, 0.45, 0.2, 0.6, 0.35):
        time.sleep(pause)
        with server.lock:  # a server being started has no pid yet
            if server.pid is None or server.proc is None or not server.alive():
                continue
            killed.add(server.proc.pid)
            old, below = _server_killed(server)
        killed |= {old} | below
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "an execution hung"
    assert killed, "no server was killed"
    wrong = [
        (n, r.infra_error, r.cases)
        for n, r in results
        if not (
            (r.infra_error is None and [c.result_repr for c in r.cases] == [str(n + 1)])
            or (r.infra_error is not None and "fork server" in r.infra_error)
        )
    ]
    assert wrong == [], wrong[:3]
    assert len(results) == 30
    assert any(r.infra_error is None for _, r in results)
    assert _gone(killed) == set()
