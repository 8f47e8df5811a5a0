"""The stub's channel in the jail cannot be moved: its three descriptors (``seccomp.CHANNEL_FDS``,
which ``sys.argv[1:4]`` names) are neither closed nor replaced by any process that holds them — the
program's own (any of its threads) or a forked copy of it, which holds the stub and the run's key as
well — while the program's children, which close their copies before an exec or hold no channel after
it (close-on-exec), use those numbers freely and unlabelled.

``os.dup2``, ``os.close`` and ``os.closerange`` raise no audit event: the wall is the watch's seccomp
filter (``seccomp.watch_program``), whose listener the host keeps (``watch.SignalWatch``). Red-team
a47_dup2_tap_key_buffer_58 and a47_child_relay_key_buffer_58 pointed the stub's out descriptor at a
pipe of their own and read the key off the first message; both modes are tested (a jail of its own
and the fork server's executions, which move the channel each in its own bootstrap)."""

from __future__ import annotations

import ast

from streams.sandbox import Limits, Sandbox, seccomp

LIMITS = Limits(timeout_s=8.0, memory_mb=256, output_bytes=64 * 1024, pids=24, tmpfs_mb=4, file_mb=2)
EPERM = 1


#: every way the program's process, a thread of it and a forked copy of it may close or replace one
#: of the channel's descriptors from Python (none raises an audit event); each outcome: "done" or errno
MOVES = """
import os, sys, threading

CH = [int(a) for a in sys.argv[1:4]]
_r, _w = os.pipe()


def _attempt(out, tag, call):
    try:
        call()
        out[tag] = "done"
    except OSError as exc:
        out[tag] = exc.errno


def _moves(out, who):
    for fd in CH:
        _attempt(out, f"{who}:dup2:{fd}", lambda: os.dup2(_w, fd))
        _attempt(out, f"{who}:dup3:{fd}", lambda: os.dup2(_w, fd, inheritable=False))
        _attempt(out, f"{who}:close:{fd}", lambda: os.close(fd))
        # closerange: close_range, then (refused) each descriptor closed one by one
        os.closerange(fd, fd + 1)
        _attempt(out, f"{who}:closerange:{fd}", lambda: os.fstat(fd))


OUT = {"argv": CH}
_moves(OUT, "process")
_t = threading.Thread(target=_moves, args=(OUT, "thread"))
_t.start()
_t.join()
_kr, _kw = os.pipe()
_pid = os.fork()
if _pid == 0:
    _child = {}
    _moves(_child, "fork")
    os.write(_kw, repr(_child).encode())
    os._exit(0)
os.close(_kw)
os.waitpid(_pid, 0)
OUT.update(eval(os.read(_kr, 1 << 16)))


def f(x):
    return OUT if x == 0 else x * 2
"""


def test_no_process_holding_the_channel_can_close_or_replace_its_descriptors(jail: Sandbox) -> None:
    r = jail.run_cases(MOVES, "f", ["(0,)", "(21,)"], limits=LIMITS, backend="container")
    assert r.infra_error is None, r.infra_error
    assert [c.status for c in r.cases] == ["ok", "ok"], (r.cases, r.stderr)
    out = ast.literal_eval(r.cases[0].result_repr or "")
    assert out.pop("argv") == list(seccomp.CHANNEL_FDS), out
    moves = [m for m in out if m.split(":")[1] != "closerange"]
    assert len(moves) == 3 * 3 * 3, out
    # every dup2, dup3 and close refused; after each closerange the descriptor is still open (fstat)
    assert all(out[m] == EPERM for m in moves), out
    assert all(out[m] == "done" for m in out if m.split(":")[1] == "closerange"), out
    # the channel is still the stub's: the next case is answered through it
    assert r.cases[1].result_repr == "42"
    assert "harness_tamper" in r.violations, r.violations
    details = [d for kind, d in r.refusals if kind == "harness_tamper"]
    assert any(d.startswith("dup2(") for d in details) and any(d.startswith("close(") for d in details)


#: the program's children: subprocess (close_fds closes the copies before the exec), posix_spawn with
#: a file action onto a channel's number, bash keeping its script at 255, a hook-free interpreter
#: opening a descriptor at each number (free after the exec: the channel is close-on-exec)
CHILDREN = """
import os, subprocess, sys

CH = [int(a) for a in sys.argv[1:4]]
print("true", subprocess.run(["true"]).returncode)
r, w = os.pipe()
pid = os.posix_spawn(
    "/bin/bash", ["bash", "-c", f"echo spawned >&{CH[0]}"], {"PATH": "/usr/bin:/bin"},
    file_actions=[(os.POSIX_SPAWN_DUP2, w, CH[0])],
)
os.waitpid(pid, 0)
os.close(w)
print(os.read(r, 100).decode().strip())
print(subprocess.run(["bash", "-c", "exec 255>/dev/null; exec 253>&1; echo bash >&253"],
                     capture_output=True, text=True).stdout.strip())
code = "import os\\nfor fd in {CH}:\\n    os.dup2(1, fd)\\n    os.close(fd)\\nprint('child')"
print(subprocess.run([sys.executable, "-I", "-c", code.format(CH=CH)],
                     capture_output=True, text=True).stdout.strip())
"""


def test_the_programs_children_use_the_channels_numbers_unlabelled(jail: Sandbox) -> None:
    r = jail.run_script(CHILDREN, limits=LIMITS, backend="container")
    assert r.infra_error is None, r.infra_error
    assert r.exit_code == 0 and r.violations == (), (r.violations, r.refusals, r.stdout, r.stderr)
    assert r.stdout.split() == ["true", "0", "spawned", "bash", "child"], (r.stdout, r.stderr)
