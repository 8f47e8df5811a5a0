"""Attacks on the container jail's signal labels: ways a process of the jail may get a signal to the
program (the jail's pid 1) other than ``kill`` aimed at pid 1 itself. The program keeps a second thread
and a handler for the signals sent, and starts a child interpreter (no audit hook) that attacks; the
program prints what it received. An attack is contained when nothing arrived and the run is labelled
``signal``, or refused by the jail's filter."""

from __future__ import annotations

import pytest

from streams.sandbox import Limits, Sandbox

LIMITS = Limits(timeout_s=6.0, memory_mb=256, output_bytes=64 * 1024, pids=24, tmpfs_mb=4, file_mb=2)

#: the program: a thread whose id the child gets as argv[1], a handler that records SIGUSR1, SIGIO,
#: SIGURG and SIGXFSZ, then the child's code (argv[1]: that thread's id), then what arrived
PROGRAM = """
import os, signal, subprocess, sys, threading, time
got = []
for s in (signal.SIGUSR1, signal.SIGIO, signal.SIGURG, signal.SIGXFSZ):
    signal.signal(s, lambda n, f: got.append(n))
stop, ids = threading.Event(), []
def hold():
    ids.append(threading.get_native_id())
    stop.wait(30)
threading.Thread(target=hold, daemon=True).start()
while not ids:
    time.sleep(0.01)
head = "import fcntl, os, signal, socket, struct, sys, time\\n"
r = subprocess.run([sys.executable, "-I", "-c", head + CHILD, str(ids[0])], capture_output=True, text=True)
print("child", r.returncode, r.stdout.strip(), r.stderr.strip()[-200:])
AFTER
time.sleep(0.3)
print("GOT", got)
"""

F_SETSIG = 10

#: each child arms a SIGIO owner naming the program's thread (or a pidfd of that thread) and fires it
OWNER_BY_THREAD = {
    "F_SETOWN_EX(F_OWNER_PID, thread)": (
        "r, w = os.pipe()\n"
        "fcntl.fcntl(r, 15, struct.pack('=ii', 1, int(sys.argv[1])))\n"
        "fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)\n"
        f"fcntl.fcntl(r, {F_SETSIG}, signal.SIGUSR1)\n"
        "os.write(w, b'x')\n"
    ),
    "ioctl(FIOSETOWN, thread)": (
        "a, b = socket.socketpair()\n"
        "fcntl.ioctl(a, 0x8901, struct.pack('=i', int(sys.argv[1])))\n"
        "fcntl.fcntl(a, fcntl.F_SETFL, fcntl.fcntl(a, fcntl.F_GETFL) | os.O_ASYNC)\n"
        f"fcntl.fcntl(a, {F_SETSIG}, signal.SIGUSR1)\n"
        "b.send(b'x')\n"
    ),
    "pidfd_send_signal(pidfd of a thread)": (
        "fd = os.pidfd_open(int(sys.argv[1]), os.O_EXCL)\n"  # PIDFD_THREAD
        "signal.pidfd_send_signal(fd, signal.SIGUSR1)\n"
    ),
}


def attack(
    sandbox: Sandbox, child: str, after: str = ""
) -> tuple[list[int], tuple[str, ...], str, int | None]:
    program = PROGRAM.replace("CHILD", repr(child)).replace("AFTER", after)
    r = sandbox.run_script(program, limits=LIMITS, backend="container")
    got = [line for line in r.stdout.splitlines() if line.startswith("GOT ")]
    assert got, (r.exit_code, r.stdout, r.stderr)
    return [int(n) for n in got[-1][5:-1].split(", ") if n], r.violations, r.stdout, r.exit_code


def test_an_owner_or_a_pidfd_naming_one_of_the_programs_threads_is_refused_and_labelled(
    sandbox: Sandbox,
) -> None:
    # one run, three children: each must be refused before anything is delivered
    child = "".join(
        f"try:\n{''.join('    ' + line + chr(10) for line in code.splitlines())}"
        f"    print({name!r}, 'passed')\nexcept OSError as e:\n    print({name!r}, 'refused', e.errno)\n"
        for name, code in OWNER_BY_THREAD.items()
    )
    got, violations, stdout, _ = attack(sandbox, child + "time.sleep(0.2)\n")
    assert got == [] and violations == ("signal",), (got, violations, stdout)
    assert stdout.count("refused 1") == len(OWNER_BY_THREAD), stdout


def test_f_setown_naming_a_thread_of_the_program_is_refused_and_labelled(sandbox: Sandbox) -> None:
    got, violations, stdout, _ = attack(
        sandbox,
        "r, w = os.pipe()\n"
        "fcntl.fcntl(r, fcntl.F_SETOWN, int(sys.argv[1]))\n"
        "fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)\n"
        f"fcntl.fcntl(r, {F_SETSIG}, signal.SIGUSR1)\n"
        "os.write(w, b'x')\ntime.sleep(0.2)\n",
    )
    assert got == [] and violations == ("signal",), (got, violations, stdout)


@pytest.mark.parametrize(
    ("limit", "after"),
    [
        ("RLIMIT_FSIZE", "open('/tmp/f', 'wb').write(b'more than one byte')"),
        ("RLIMIT_CPU", "t0 = time.process_time()\nwhile time.process_time() - t0 < 1.5: pass"),
    ],
    ids=["fsize", "cpu"],
)
def test_a_child_cannot_set_the_programs_resource_limits(sandbox: Sandbox, limit: str, after: str) -> None:
    child = f"import resource\nresource.prlimit(1, resource.{limit}, (1, 1))\nprint('lowered')\n"
    try:
        after = "try:\n    " + after.replace("\n", "\n    ") + "\nexcept OSError as e:\n    print(e)"
        got, violations, stdout, exit_code = attack(sandbox, child, after)
    except AssertionError:  # the program was killed before it could print (RLIMIT_CPU)
        pytest.fail("the program was killed by a limit a child set")
    assert "lowered" not in stdout or violations, (got, violations, stdout, exit_code)
