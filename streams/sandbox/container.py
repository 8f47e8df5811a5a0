"""Container backend: the jail's own CPython under bubblewrap, as ``nobody`` in fresh user, pid, net,
ipc, uts and cgroup namespaces (no further ones: ``--disable-userns`` and a seccomp filter), with a
read-only ``/usr``, size-capped ``/tmp`` and ``/dev/shm``, no network, memory and pid limits from a
per-execution cgroup, and CPU/file-size rlimits. The whole jail is killed at the wall deadline.

The guest talks to the host over three pipes on its own descriptors (stdin is closed): messages in,
answers out, and one-way audit records (:mod:`streams.sandbox.protocol`). Outputs are read through
capped readers; OOM kills and pid-limit hits are read from the cgroup's counters. Every wait here is
``poll`` with this job's own deadline, so descriptor numbers above 1024 and other jobs change nothing.
See README.md for running the same jail under gVisor or Kata.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

from schemas.errors import DependencyError, SandboxError
from streams.sandbox import cgroups, seccomp
from streams.sandbox.limits import Limits, Policy, RawRun
from streams.sandbox.protocol import FrameReader, Oversized, Session, frame, harness_source
from streams.sandbox.watch import SignalWatch

NOBODY = 65534
#: descriptors the jail's process may hold (RLIMIT_NOFILE)
MAX_JAIL_FILES = 256
#: where the jail sees the extra modules (numpy, pandas, scipy) when the set-up installed them
JAIL_SITE = "/opt/rlstream/site"
#: what a program may read besides its own /tmp (the hook labels anything else "filesystem"); the
#: time-zone database because importing pandas reads it (/usr/share/zoneinfo/UTC)
READ_ROOTS = (
    "/usr/lib/python3", "/usr/local/lib/python3", "/tmp/", "/dev/shm/", "/dev/null", "/dev/urandom",
    "/dev/zero", "/usr/share/zoneinfo/", JAIL_SITE + "/",
)  # fmt: skip
#: the devices in the jail's /dev (each bound from the host's; nothing else of the host's /dev is there)
DEV_BINDS = tuple(a for dev in ("/dev/null", "/dev/zero", "/dev/urandom") for a in ("--dev-bind", dev, dev))
#: the jail allows processes and threads (that is why a program is routed here), inside its limits
BLOCK = ("network", "ctypes", "signal", "introspection", "filesystem", "harness_access")
SETUP_HINT = "install bubblewrap: `apt-get install bubblewrap` (scripts/setup.sh does it)"
#: message kinds the guest waits an answer for (the others are one-way on pipes)
ANSWERED = frozenset(b"PJNRA")
#: what the jail's interpreter runs: ask for the stub's compiled code on the message pipe, run it
#: (compiling the stub's source in every jail costs ~5 ms of CPU)
BOOTSTRAP = (
    "import os,sys,marshal\n"
    # (_ctypes and _socket, not the modules over them: those cost ~10 ms of imports per jail)
    "import _ctypes as _rls_c,_socket as _rls_s,_struct\n"
    "class _rls_L(_rls_c._SimpleCData):_type_='l'\n"
    "class _rls_Z(_rls_c._SimpleCData):_type_='z'\n"
    "class _rls_F(_rls_c.CFuncPtr):_flags_=_rls_c.FUNCFLAG_CDECL|_rls_c.FUNCFLAG_USE_ERRNO;_restype_=_rls_L\n"
    "_rls_h=_rls_c.dlopen(None,2)\n"
    # its rlimits (argv[8:], kind:value), set by the jail's own process before anything of the program
    # runs: lowering one's own limits needs no privilege (setting them from outside would, on another
    # uid). Through the prlimit64 system call (argv[7]) for this process, as the watch's filter below
    # goes through seccomp: the resource module is an extension to load (~0.25 ms of CPU per jail)
    "_rls_sc=_rls_F(_rls_c.dlsym(_rls_h,'syscall'))\n"
    "for _rls_a in sys.argv[8:]:\n"
    " _rls_k,_rls_v=map(int,_rls_a.split(':'))\n"
    " _rls_v=_rls_Z(_struct.pack('=QQ',_rls_v,_rls_v))\n"
    " if _rls_sc(_rls_L(int(sys.argv[7])),_rls_L(0),_rls_L(_rls_k),_rls_v,_rls_L(0))<0:\n"
    "  os.write(2,b'rlstream: a resource limit was not set (errno %d)\\n'%_rls_c.get_errno())\n"
    "  os._exit(3)\n"
    # the signal watch (watch.py): its filter (argv[5], hex) installed with a listener that goes to the
    # host over the socket argv[4] and is closed here, before anything of the program runs
    "_rls_f=_rls_Z(bytes.fromhex(sys.argv[5]))\n"
    "_rls_p=_rls_Z(_struct.pack('=H6xQ',len(sys.argv[5])//16,_rls_L.from_buffer(_rls_f).value))\n"
    "_rls_n=_rls_sc("
    "_rls_L(int(sys.argv[6])),_rls_L(1),_rls_L(8),_rls_p)\n"
    "if _rls_n<0:\n"
    " os.write(2,b'rlstream: the signal watch was not installed (errno %d)\\n'%_rls_c.get_errno())\n"
    " os._exit(3)\n"
    "_rls_k=_rls_s.socket(fileno=int(sys.argv[4]))\n"
    "_rls_k.sendmsg([b'w'],[(_rls_s.SOL_SOCKET,_rls_s.SCM_RIGHTS,_rls_n.to_bytes(4,sys.byteorder))])\n"
    "_rls_k.close()\n"
    "os.close(_rls_n)\n"
    "del _rls_c,_rls_s,_rls_L,_rls_Z,_rls_F,_rls_f,_rls_p,_rls_n,_rls_k,_rls_h,_rls_sc,_rls_a,_rls_v\n"
    "for _rls_m in ('_ctypes','_socket','_struct'):sys.modules.pop(_rls_m,None)\n"
    "_rls_o,_rls_i=int(sys.argv[1]),int(sys.argv[2])\n"
    "os.write(_rls_o,b'\\x00\\x00\\x00\\x01P')\n"
    "def _rls_r(n):\n"
    " b=b''\n"
    " while len(b)<n:\n"
    "  c=os.read(_rls_i,n-len(b))\n"
    "  if not c:os._exit(1)\n"
    "  b+=c\n"
    " return b\n"
    "exec(marshal.loads(_rls_r(int.from_bytes(_rls_r(4),'big'))))\n"
)


class _Capped:
    """What one output pipe brought: at most ``cap`` bytes kept, the total counted."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.data = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.cap - len(self.data)
        if room > 0:
            self.data.extend(chunk[:room])

    @property
    def dropped(self) -> bool:
        return self.total > len(self.data)


class _Channel:
    """The host side of one jail's pipes, served from the calling thread with one ``poll`` (no thread
    per pipe): length-prefixed messages and refusal records (bounded), the answers written as the
    jail drains them (never blocking), stdout and stderr read through caps, and the jail leader's
    exit. A deviation stops the jail; so does one call writing past ``16 × cap`` bytes of output (a
    program flooding at GB/s must not cost the host its memory or CPU), or the guest doing so while no
    call is out (``Session.output``). Messages are read until ``deadline``."""

    def __init__(
        self,
        session: Session,
        fds: tuple[int, int, int, int, int],
        cap: int,
        deadline: float,
        stop: Callable[[], None],
    ) -> None:
        messages, self.records, self.answers, out, err = fds
        self.session, self.deadline, self.stop = session, deadline, stop
        self.frames = {messages: FrameReader(), self.records: FrameReader()}
        self.out, self.err = _Capped(cap), _Capped(cap)
        self.outputs = {out: self.out, err: self.err}
        self.flood_after = 16 * cap
        self.flooded = False
        self.pending = bytearray()  # answers the jail has not read yet
        self.poller = select.poll()
        for fd in (messages, self.records, out, err):
            self.poller.register(fd, select.POLLIN)

    def serve(self, until: float, proc: subprocess.Popen[bytes] | None, pidfd: int | None) -> bool:
        """Serve the pipes until ``proc`` exits (True; ``pidfd`` readable, or polled every 10 ms
        without one), ``until`` passes (False) or, with no ``proc``, every pipe is at its end."""
        if pidfd is not None:
            self.poller.register(pidfd, select.POLLIN)
        try:
            while proc is not None or self.frames or self.outputs:
                now = time.perf_counter()
                # a request with a cap of its own (Session.cutoff) ends the run earlier
                cutoff = self.session.cutoff()
                due = self.deadline if cutoff is None else min(self.deadline, cutoff)
                if self.frames and now >= due:
                    self._close_frames()
                # past a capped request's cutoff the jail is ended as at its deadline
                capped = proc is not None and due < self.deadline
                left = min(until, due) if self.frames or capped else until
                if left <= now:
                    return False
                wait = max(1, math.ceil((left - now) * 1000))
                if proc is not None and pidfd is None:
                    if proc.poll() is not None:
                        return True
                    wait = min(wait, 10)
                exited = False
                for fd, _ in self.poller.poll(wait):
                    if fd == pidfd:
                        exited = True
                    elif fd == self.answers:
                        self._write()
                    elif fd in self.outputs:
                        self._output(fd)
                    elif fd in self.frames:
                        self._message(fd)
                if exited:
                    return True
            return False
        finally:
            if pidfd is not None:
                self.poller.unregister(pidfd)

    def close(self) -> None:
        self._close_frames()
        for fd in list(self.outputs):
            del self.outputs[fd]
            self._drop(fd)

    def _drop(self, fd: int) -> None:
        """Stop serving ``fd`` (already taken out of its table) and close it."""
        self.poller.unregister(fd)
        with contextlib.suppress(OSError):
            os.close(fd)

    def _close_frames(self) -> None:
        for fd in list(self.frames):
            del self.frames[fd]
            self._drop(fd)
        if self.answers >= 0:
            with contextlib.suppress(KeyError):
                self.poller.unregister(self.answers)
            with contextlib.suppress(OSError):
                os.close(self.answers)
            self.answers = -1
            self.pending.clear()

    def _output(self, fd: int) -> None:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            del self.outputs[fd]
            self._drop(fd)
            return
        self.outputs[fd].feed(chunk)
        # counted against the request out as read (a pipe's bytes may be read just after the call's
        # result: a few lines of chatter move to the next call, a flood stays with its own); a call
        # flooding past 16 × cap is stopped (Session.output)
        if self.session.output(len(chunk), self.flood_after) and not self.flooded:
            self.flooded = True
            self.stop()

    def _message(self, fd: int) -> None:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            del self.frames[fd]
            self._drop(fd)
            return
        try:
            messages = self.frames[fd].feed(chunk)
        except Oversized as exc:
            self.session.oversized(exc.length)
            self._deviation()
            return
        for msg in messages:
            if fd == self.records and msg[:1] != b"V":
                self.session.refuse("a message other than a refusal record on the record pipe")
                self._deviation()
                return
            reply = self.session.handle(msg)
            if reply is None:
                self._deviation()
                return
            if fd != self.records and msg[:1] and msg[0] in ANSWERED and self.answers >= 0:
                if not self.pending:
                    self.poller.register(self.answers, select.POLLOUT)
                self.pending += frame(reply)
                self._write()

    def _write(self) -> None:
        try:
            del self.pending[: os.write(self.answers, self.pending)]
        except BlockingIOError:
            return
        except OSError:  # the jail closed its end: nothing more is asked
            self._close_frames()
            return
        if not self.pending:
            self.poller.unregister(self.answers)

    def _deviation(self) -> None:
        """The session stopped the guest: the jail is killed and no message of it is read again."""
        self.stop()
        self._close_frames()


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

    def __init__(
        self,
        *,
        python: str = "/usr/bin/python3",
        require_cgroup: bool = True,
        site: Path | None = None,
    ) -> None:
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            raise DependencyError("bubblewrap (bwrap) is not installed", hint=SETUP_HINT)
        if not Path(python).is_file():
            raise DependencyError(
                f"the jail's interpreter {python} does not exist",
                hint="apt-get install python3-minimal, or set RLSTREAM_SANDBOX__CONTAINER_PYTHON",
            )
        self.bwrap, self.python = bwrap, python
        self.setpriv = shutil.which("setpriv")
        if os.geteuid() == 0 and self.setpriv is None:
            raise DependencyError(
                "setpriv (util-linux) is needed to drop root before the jail starts",
                hint="apt-get install util-linux",
            )
        self.require_cgroup = require_cgroup
        self.arch = seccomp.host_arch()  # raises DependencyError on an architecture without a table
        self.filter = seccomp.program(self.arch)
        self.watch_filter = seccomp.watch_program(self.arch)
        self.stub_code = _compile_stub(python, harness_source())
        self.root_binds = _root_binds()  # the host's top directories, looked at once
        real = Path(python).resolve()
        self.extra_binds: list[str] = []
        if not str(real).startswith("/usr/"):
            prefix = real.parent.parent
            self.extra_binds = ["--ro-bind", str(prefix), str(prefix)]
        # the extra modules are built for one interpreter version: bound only where they can load
        self.site = site if site is not None and real.name == "python3.11" else None
        if self.site is not None:
            self.extra_binds += ["--ro-bind", str(self.site), JAIL_SITE]

    def policy(self) -> Policy:
        return Policy(block=BLOCK, read_roots=READ_ROOTS, site=JAIL_SITE if self.site else "")

    @property
    def has_site(self) -> bool:
        return self.site is not None

    def command(
        self,
        limits: Limits,
        filter_fd: int,
        fds: tuple[int, int, int],
        info_fd: int,
        block_fd: int,
        watch_fd: int,
    ) -> list[str]:
        # Run as root, bubblewrap would map the jail's nobody onto the host's root (a user namespace
        # without capabilities, but host-root-owned files would look like the program's own): drop
        # to the host's nobody first, so the jail is nobody on both sides. An exec of setpriv, not
        # Popen(user=, group=, extra_groups=): with those the interpreter must fork() rather than
        # vfork(), and copying this process's page tables (the WASM engine's mappings) cost more CPU
        # than the exec it saves (measured side by side: 24.1 vs 22.4 ms of CPU per job).
        drop = (
            [self.setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
            if os.geteuid() == 0 and self.setpriv
            else []
        )
        size = str(limits.tmpfs_mb << 20)
        return [
            *drop,
            self.bwrap,
            # the jail's process waits on block_fd until it is in its cgroups (see run); info_fd
            # tells us which process that is
            "--info-fd", str(info_fd), "--block-fd", str(block_fd),
            "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try", "--disable-userns", "--uid", str(NOBODY), "--gid", str(NOBODY),
            # no reaper: bubblewrap's init would be a process of the jail's user outside the seccomp
            # filter, whose memory (/proc/1/mem) the program could write
            "--as-pid-1",
            "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL",
            "--seccomp", str(filter_fd),
            *self.root_binds, *self.extra_binds,
            # no /proc: a procfs shows the host's mount sources, memory, kernel and CPUs, and answers
            # os.stat/os.readlink (no audit event) and any child process (no audit hook) unlabelled
            # a /dev of the three devices a program may read (READ_ROOTS) and /dev/shm: a folder of
            # the jail's root, read-only with it (a tmpfs of its own, remounted read-only, was two
            # more mount calls); a full one (a devpts instance, tty, full, random and /proc links)
            # costs ~0.5 ms of CPU per jail and left a tmpfs the program could write past /tmp's cap
            *DEV_BINDS,
            "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
            "--size", size, "--tmpfs", "/tmp",
            "--remount-ro", "/",
            "--chdir", "/tmp", "--hostname", "sandbox",
            "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONHASHSEED", "0",
            "--", self.python, "-I", "-S", "-B", "-c", BOOTSTRAP, *(str(fd) for fd in fds),
            str(watch_fd), self.watch_filter.hex(), str(self.arch.numbers["seccomp"]),
            str(self.arch.numbers["prlimit64"]), *rlimits(limits),
        ]  # fmt: skip

    def run(self, session: Session, limits: Limits, *, deadline: float | None = None) -> RawRun:
        """Run one jail to its end, answering its messages with ``session``."""
        t0 = time.perf_counter()
        if deadline is None:
            deadline = t0 + limits.timeout_s
        group: cgroups.Cgroup | None = None
        owned: list[int] = []
        proc: subprocess.Popen[bytes] | None = None
        killed = threading.Event()
        watch: SignalWatch | None = None
        watch_host: socket.socket | None = None
        channel: _Channel | None = None

        def kill() -> None:
            killed.set()
            if proc is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
            if group is not None:
                group.kill_all()

        def pipe() -> tuple[int, int]:
            r, w = os.pipe()
            owned.extend((r, w))
            return r, w

        def close(fd: int) -> None:
            if fd in owned:
                owned.remove(fd)
                with contextlib.suppress(OSError):
                    os.close(fd)

        try:
            try:
                group = cgroups.create(limits.memory_mb << 20, limits.pids)
            except DependencyError:
                if self.require_cgroup:
                    raise
            try:
                msg_r, msg_w = pipe()
                ans_r, ans_w = pipe()
                rec_r, rec_w = pipe()
                filt_r, filt_w = pipe()
                out_r, out_w = pipe()
                err_r, err_w = pipe()
                info_r, info_w = pipe()
                block_r, block_w = pipe()
                watch_host, watch_jail = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                owned.append(watch_jail.detach())
                watch_jail_fd = owned[-1]
            except OSError as exc:
                raise SandboxError(f"cannot make the jail's pipes: {exc}") from exc
            os.write(filt_w, self.filter)  # a few hundred bytes: fits the pipe's buffer
            close(filt_w)
            os.set_blocking(ans_w, False)
            argv = self.command(limits, filt_r, (msg_w, ans_r, rec_w), info_w, block_r, watch_jail_fd)
            session.stub_code = self.stub_code
            session.start()
            try:
                # No Python code runs between fork and exec in this process (which may hold a
                # wasmtime engine): the jail is placed in its cgroups and limits from outside, below.
                proc = subprocess.Popen(
                    argv,
                    stdin=subprocess.DEVNULL,
                    stdout=out_w,
                    stderr=err_w,
                    pass_fds=(msg_w, ans_r, rec_w, filt_r, info_w, block_r, watch_jail_fd),
                    start_new_session=True,
                    close_fds=True,
                    env={"PATH": "/usr/bin:/bin"},
                )
            except OSError as exc:
                raise SandboxError(f"cannot start the jail: {exc}") from exc
            for fd in (msg_w, ans_r, rec_w, filt_r, out_w, err_w, info_w, block_r, watch_jail_fd):
                close(fd)
            # The jail's process waits on its block pipe until it is in its cgroups, so everything
            # the program starts is inside them from its first instruction (and under the rlimits
            # the bootstrap sets before it asks for the stub).
            jailed = _child_pid(info_r, deadline)
            close(info_r)
            if jailed is not None:
                try:
                    if group is not None:
                        group.join(jailed)
                except OSError as exc:
                    kill()
                    raise SandboxError(f"the jail could not join its cgroup: {exc}") from exc
                watch = SignalWatch(watch_host, jailed, self.arch, deadline)
                watch_host = None  # the watch closes it
                watch.start()
                os.write(block_w, b"go")
            close(block_w)
            served = (msg_r, rec_r, ans_w, out_r, err_r)
            channel = _Channel(session, served, limits.output_bytes, deadline, kill)
            for fd in served:
                owned.remove(fd)  # the channel closes them
            timed_out = False
            pidfd = _pidfd(proc)
            try:
                if not channel.serve(deadline, proc, pidfd) and proc.poll() is None:
                    timed_out = not killed.is_set()
                    kill()
            finally:
                if pidfd is not None:
                    os.close(pidfd)
            proc.wait()
            duration = time.perf_counter() - t0
            # The jail's leader is gone; anything it left behind in the cgroup goes now, and what
            # it wrote is read to the pipes' ends (messages no later than the deadline).
            if group is not None:
                group.kill_all()
            channel.serve(time.perf_counter() + 2, None, None)
            channel.close()
            out, err = channel.out, channel.err
            refusals: list[tuple[str, str]] = []
            if watch is not None:
                watch.stop()
                watch.join(timeout=2)
                refusals = list(watch.records)
            labels: list[str] = ["signal"] if refusals else []
            memory_exceeded = False
            rc = proc.returncode
            if group is not None:
                memory_exceeded = group.oom_killed()
                if group.pids_limit_hit():
                    labels.append("pids_limit")
            if out.dropped or err.dropped or channel.flooded or session.over_budget:
                labels.append("output_limit")
            if rc in (128 + signal.SIGXCPU, -signal.SIGXCPU):
                timed_out = True  # the CPU rlimit is the wall-clock limit's backstop
            if rc in (128 + signal.SIGSEGV, -signal.SIGSEGV) and not refusals and not memory_exceeded:
                # A segmentation fault here is the interpreter's own: a signal the program sends itself
                # is held and refused by the watch (labelled "signal"), and ctypes is refused by the
                # hook, so what faults is the C stack running out (a recursion through C functions,
                # lru_cache's wrapper, past what the stack rlimit holds): the stack limit, as WASM labels
                # its own trap
                labels.append("stack_overflow")
            if jailed is None or (
                b"bwrap:" in bytes(err.data[:400]) and rc not in (0, 1) and session.facts.messages == 0
            ):
                raise SandboxError(
                    f"the jail failed to start: {bytes(err.data[:400]).decode(errors='replace')}"
                )
            if watch is not None and not watch.installed.is_set() and watch.is_alive():
                # stopped, the watch still takes a listener the jail sent: give a thread the load kept
                # from running the time to look (a watch not installed fails the execution below)
                watch.join(timeout=30)
            if watch is not None and not watch.installed.is_set() and not timed_out and not killed.is_set():
                raise SandboxError(
                    "the jail's signal watch was not installed: "
                    + bytes(err.data[:400]).decode(errors="replace")
                )
            return RawRun(
                backend=self.name,
                exit_code=rc,
                stdout=bytes(out.data),
                stderr=bytes(err.data),
                duration_s=duration,
                timed_out=timed_out,
                memory_exceeded=memory_exceeded,
                limit_labels=labels,
                wall_refusals=refusals,
            )
        finally:
            if watch is not None:
                watch.stop()
            if watch_host is not None:
                watch_host.close()
            if proc is not None and proc.returncode is None:
                kill()
                with contextlib.suppress(Exception):
                    proc.wait(timeout=5)
            for fd in list(owned):
                close(fd)
            if channel is not None:
                channel.close()
            if group is not None:
                group.remove()


def _compile_stub(python: str, source: str) -> bytes:
    """The stub compiled by the jail's own interpreter (its bytecode is that version's), once per
    backend: the marshalled code object each jail asks for first."""
    maker = (
        "import marshal,sys\n"
        "sys.stdout.buffer.write(marshal.dumps(compile(sys.stdin.read(), '<string>', 'exec')))\n"
    )
    try:
        done = subprocess.run(
            [python, "-I", "-S", "-B", "-c", maker],
            input=source.encode("utf-8"),
            capture_output=True,
            timeout=60,
            env={"PATH": "/usr/bin:/bin"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DependencyError(f"the jail's interpreter {python} cannot compile the stub: {exc}") from exc
    if done.returncode != 0 or not done.stdout:
        raise DependencyError(
            f"the jail's interpreter {python} cannot compile the stub: {done.stderr[-300:]!r}"
        )
    return done.stdout


def _child_pid(info: int, deadline: float) -> int | None:
    """The jail's process, from bubblewrap's ``--info-fd`` report (``{"child-pid": N, ...}``, written
    and closed as soon as the process exists); None when bubblewrap ended or the deadline came first."""
    poller = select.poll()
    poller.register(info, select.POLLIN)
    data = b""
    while len(data) < 4096:
        left = deadline - time.perf_counter()
        if left <= 0 or not poller.poll(max(1, math.ceil(left * 1000))):
            return None
        chunk = os.read(info, 4096)
        if not chunk:
            break
        data += chunk
    try:
        pid = json.loads(data.decode("utf-8"))["child-pid"]
    except (ValueError, KeyError, TypeError):
        return None
    return pid if type(pid) is int and pid > 1 else None


def rlimits(limits: Limits) -> tuple[str, ...]:
    """The jail's rlimits as the bootstrap's arguments, ``kind:value`` (soft = hard): CPU seconds (the
    wall clock's backstop), largest file, core size and descriptors. Only lowered: a hard limit this
    process was given below a value is kept (the jail inherits this process's limits; setpriv and
    bubblewrap change none), so the bootstrap's ``setrlimit`` never asks for more than it holds."""
    wanted = (
        (resource.RLIMIT_CPU, max(1, math.ceil(limits.timeout_s) + 1)),
        (resource.RLIMIT_FSIZE, limits.file_mb << 20),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, MAX_JAIL_FILES),
    )
    out = []
    for kind, value in wanted:
        hard = resource.getrlimit(kind)[1]
        out.append(f"{kind}:{value if hard == resource.RLIM_INFINITY else min(value, hard)}")
    return tuple(out)


def _pidfd(proc: subprocess.Popen[bytes]) -> int | None:
    """A descriptor that becomes readable the moment the jail's leader exits (``Popen.wait(timeout)``
    polls with sleeps up to 50 ms); None where the kernel has none (the channel then polls the
    process every 10 ms)."""
    try:
        return os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return None
