"""Container backend: the jail's own CPython under bubblewrap, as ``nobody`` in fresh user, pid, net,
ipc, uts and cgroup namespaces, with a read-only ``/usr``, a size-capped ``/tmp``, no network, memory
and pid limits from a per-execution cgroup, and CPU/file-size rlimits. The whole jail is killed at the
wall deadline. Outputs are read through capped readers; OOM kills and pid-limit hits are read from the
cgroup's counters. See README.md for running the same jail under gVisor or Kata.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from schemas.errors import DependencyError, SandboxError
from streams.sandbox import cgroups
from streams.sandbox.limits import Limits, RawRun
from streams.sandbox.protocol import harness_source

CHANNEL_FD = 3
NOBODY = 65534
#: what a program may read besides its own /tmp (the hook labels anything else "filesystem")
READ_ROOTS = ("/usr/lib/python3", "/usr/local/lib/python3", "/tmp/", "/dev/null", "/dev/urandom", "/dev/zero")
#: the jail allows processes and threads (that is why a program is routed here), inside its limits
BLOCK = ("network", "ctypes", "signal", "introspection", "filesystem")
SETUP_HINT = "install bubblewrap: `apt-get install bubblewrap` (scripts/setup.sh does it)"


class _CappedReader(threading.Thread):
    """Reads a pipe to EOF keeping at most ``cap`` bytes; past ``kill_after`` bytes in total it calls
    ``on_flood`` (a program flooding at GB/s must not cost the host its memory or CPU)."""

    def __init__(self, fd: int, cap: int, kill_after: int, on_flood: Callable[[], None]) -> None:
        super().__init__(daemon=True)
        self.fd, self.cap, self.kill_after, self.on_flood = fd, cap, kill_after, on_flood
        self.data = bytearray()
        self.total = 0
        self.flooded = False

    def run(self) -> None:
        try:
            while True:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    break
                self.total += len(chunk)
                room = self.cap - len(self.data)
                if room > 0:
                    self.data.extend(chunk[:room])
                if self.total > self.kill_after and not self.flooded:
                    self.flooded = True
                    self.on_flood()
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self.fd)

    @property
    def dropped(self) -> bool:
        return self.total > len(self.data)


def _root_binds() -> list[str]:
    args: list[str] = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/lib", "/lib64", "/lib32", "/sbin"):
        p = Path(top)
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), top]
        elif p.is_dir():
            args += ["--ro-bind", top, top]
    return args


class ContainerBackend:
    name = "container"

    def __init__(self, *, python: str = "/usr/bin/python3", require_cgroup: bool = True) -> None:
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise DependencyError("bubblewrap (bwrap) is not installed", hint=SETUP_HINT)
        prlimit = shutil.which("prlimit")
        if prlimit is None:
            raise DependencyError("prlimit (util-linux) is not installed", hint="apt-get install util-linux")
        if not Path(python).is_file():
            raise DependencyError(
                f"the jail's interpreter {python} does not exist",
                hint="apt-get install python3-minimal, or set RLSTREAM_SANDBOX__CONTAINER_PYTHON",
            )
        self.bwrap, self.prlimit, self.python = bwrap, prlimit, python
        self.setpriv = shutil.which("setpriv")
        if os.geteuid() == 0 and self.setpriv is None:
            raise DependencyError(
                "setpriv (util-linux) is needed to drop root before the jail starts",
                hint="apt-get install util-linux",
            )
        self.require_cgroup = require_cgroup
        self.harness = harness_source()
        real = Path(python).resolve()
        self.extra_binds: list[str] = []
        if not str(real).startswith("/usr/"):
            prefix = real.parent.parent
            self.extra_binds = ["--ro-bind", str(prefix), str(prefix)]

    def policy(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return BLOCK, READ_ROOTS

    def command(self, limits: Limits) -> list[str]:
        cpu = max(1, math.ceil(limits.timeout_s) + 1)
        # Run as root, bubblewrap would map the jail's nobody onto the host's root (a user namespace
        # without capabilities, but host-root-owned files would look like the program's own): drop
        # to the host's nobody first, so the jail is nobody on both sides.
        drop = (
            [self.setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
            if os.geteuid() == 0 and self.setpriv
            else []
        )
        return [
            self.prlimit, f"--cpu={cpu}", f"--fsize={limits.file_mb << 20}", "--core=0",
            f"--nofile={256}", "--",
            *drop,
            self.bwrap,
            "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try", "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL",
            *_root_binds(), *self.extra_binds,
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(limits.tmpfs_mb << 20), "--tmpfs", "/tmp",
            "--remount-ro", "/",
            "--chdir", "/tmp", "--hostname", "sandbox",
            "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONHASHSEED", "0",
            "--", self.python, "-I", "-S", "-B", "-c", self.harness,
        ]  # fmt: skip

    def run(self, make_job: Callable[[str], bytes], limits: Limits) -> RawRun:
        group: cgroups.Cgroup | None = None
        try:
            group = cgroups.create(limits.memory_mb << 20, limits.pids)
        except DependencyError:
            if self.require_cgroup:
                raise
        inner = self.command(limits)
        if group is not None:
            # The shell joins the cgroups and then becomes the jail: everything the program starts is
            # inside the limits from its first instruction, and no Python code runs between fork and
            # exec in this process (which may hold a wasmtime engine).
            joins = " && ".join(f'echo $$ > "{p}"' for p in group.join_files)
            argv = ["/bin/sh", "-c", f'{joins} || exit 125; exec "$@"', "sh", *inner]
        else:
            argv = inner
        ch_r, ch_w = os.pipe()
        job = make_job(str(ch_w))
        killed = threading.Event()
        proc: subprocess.Popen[bytes] | None = None

        def kill() -> None:
            killed.set()
            if proc is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
            if group is not None:
                group.kill_all()

        t0 = time.perf_counter()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(ch_w,),
                start_new_session=True,
                close_fds=True,
                env={"PATH": "/usr/bin:/bin"},
            )
        except OSError as exc:
            os.close(ch_r)
            os.close(ch_w)
            if group is not None:
                group.remove()
            raise SandboxError(f"cannot start the jail: {exc}") from exc
        os.close(ch_w)
        assert proc.stdin and proc.stdout and proc.stderr
        flood_after = 16 * limits.output_bytes
        out = _CappedReader(os.dup(proc.stdout.fileno()), limits.output_bytes, flood_after, kill)
        err = _CappedReader(os.dup(proc.stderr.fileno()), limits.output_bytes, flood_after, kill)
        channel_cap = max(4 << 20, 8 * limits.output_bytes)
        chan = _CappedReader(ch_r, channel_cap, channel_cap, kill)
        proc.stdout.close()
        proc.stderr.close()
        for reader in (out, err, chan):
            reader.start()

        def feed() -> None:
            with contextlib.suppress(OSError):
                assert proc is not None and proc.stdin is not None
                proc.stdin.write(job)
                proc.stdin.close()

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        timed_out = False
        if not _wait_exit(proc, t0 + limits.timeout_s):
            timed_out = not killed.is_set()
            kill()
        proc.wait()
        duration = time.perf_counter() - t0
        # The jail's leader is gone; anything it left behind in the cgroup goes now.
        if group is not None:
            group.kill_all()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for reader in (out, err, chan):
            reader.join(timeout=2)
        feeder.join(timeout=1)
        labels: list[str] = []
        memory_exceeded = False
        rc = proc.returncode
        if group is not None:
            memory_exceeded = group.oom_killed()
            if group.pids_limit_hit():
                labels.append("pids_limit")
            group.remove()
        if rc == 125 and group is not None and not out.data and not err.data:
            raise SandboxError("the jail could not join its cgroup")
        if out.dropped or err.dropped or chan.dropped or out.flooded or err.flooded:
            labels.append("output_limit")
        if rc in (128 + signal.SIGXFSZ, -signal.SIGXFSZ):
            labels.append("file_size_limit")
        if rc in (128 + signal.SIGXCPU, -signal.SIGXCPU):
            timed_out = True  # the CPU rlimit is the wall-clock limit's backstop
        if b"bwrap:" in bytes(err.data[:400]) and rc not in (0, 1):
            raise SandboxError(f"the jail failed to start: {bytes(err.data[:400]).decode(errors='replace')}")
        frames = _split(bytes(chan.data))
        return RawRun(
            backend=self.name,
            exit_code=rc,
            stdout=bytes(out.data),
            stderr=bytes(err.data),
            frames=frames,
            duration_s=duration,
            timed_out=timed_out,
            memory_exceeded=memory_exceeded,
            limit_labels=labels,
        )


def _wait_exit(proc: subprocess.Popen[bytes], deadline: float) -> bool:
    """Wait for the jail's leader until ``deadline`` (perf_counter); True when it exited. A pidfd
    wakes us the moment it exits (``Popen.wait(timeout)`` polls with sleeps up to 50 ms)."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=max(0.0, deadline - time.perf_counter()))
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                return proc.poll() is not None
            ready, _, _ = select.select([pidfd], [], [], left)
            if ready:
                return True
    finally:
        os.close(pidfd)


def _split(data: bytes) -> list[bytes]:
    from streams.sandbox.protocol import split_length_prefixed

    return split_length_prefixed(data)
