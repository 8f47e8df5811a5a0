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

import array
import contextlib
import json
import math
import os
import re
import resource
import select
import shutil
import signal
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from schemas.errors import DependencyError, SandboxError
from streams.sandbox import cgroups, seccomp
from streams.sandbox.limits import Limits, Policy, RawRun, jail_exit_status
from streams.sandbox.protocol import FrameReader, Oversized, Session, frame, harness_source
from streams.sandbox.watch import SignalWatch

NOBODY = 65534
#: descriptors the jail's process may hold (RLIMIT_NOFILE)
MAX_JAIL_FILES = 256
assert seccomp.CHANNEL_FDS[-1] < MAX_JAIL_FILES, "the channel's descriptors lie below the jail's limit"
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
    # the channel's three descriptors (argv[1:4]) to seccomp.CHANNEL_FDS, close-on-exec, before the
    # watch is installed (it holds every close or replacement of those numbers); each, and the watch's
    # socket (argv[4]), first to the lowest free number, so that no move lands on another
    "_rls_t=[os.dup(int(_rls_a)) for _rls_a in sys.argv[1:5]]\n"
    "for _rls_a in sys.argv[1:5]:os.close(int(_rls_a))\n"
    f"for _rls_a,_rls_d in zip(_rls_t,{seccomp.CHANNEL_FDS!r}):\n"
    " os.dup2(_rls_a,_rls_d,False);os.close(_rls_a)\n"
    f"sys.argv[1:5]=[*{tuple(map(str, seccomp.CHANNEL_FDS))!r},str(_rls_t[3])]\n"
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
    "del _rls_t,_rls_d\n"
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

#: namespaces each execution gets from inside the fork server's jail: net, ipc, pid, mount, uts (the
#: cgroup namespace is unshared by the execution itself once the host has moved it into its cgroup)
FORK_NAMESPACES = 0x40000000 | 0x08000000 | 0x20000000 | 0x00020000 | 0x04000000
#: what the fork server runs (argv: the control socket, then the system call numbers seccomp,
#: prlimit64, unshare, mount, prctl, capset, then the watch filter and the program's filter in hex).
#: It imports the stub's modules once, then serves jobs: each a datagram of the control socket (the
#: /tmp bytes and the rlimits, at most 4096 bytes, checked) with exactly seven descriptors (message,
#: answer, record pipes, stdout, stderr, the watch socket, the status pipe). Per job it forks a keeper
#: that unshares fresh namespaces and forks the execution, pid 1 of its new pid namespace; the keeper
#: writes the execution's exit status to the status pipe and exits. The server never runs the program
#: and holds nothing of any execution after the fork.
FORK_SERVER = (
    "import os,sys,marshal,_signal\n"
    "import _ctypes as _rls_c,_socket as _rls_s,_struct\n"
    # the stub's modules, imported once for every execution (a fresh jail pays ~3.5 ms of CPU for them;
    # fractions, whose class the stub names by identity, ~5 ms more: guest_harness.pysrc, _real)
    "import _json,_ast,collections,array,fractions\n"
    "try:import _sha2\n"
    "except ImportError:import _sha256\n"
    "class _rls_L(_rls_c._SimpleCData):_type_='l'\n"
    "class _rls_Z(_rls_c._SimpleCData):_type_='z'\n"
    "class _rls_F(_rls_c.CFuncPtr):_flags_=_rls_c.FUNCFLAG_CDECL|_rls_c.FUNCFLAG_USE_ERRNO;_restype_=_rls_L\n"
    "_rls_sc=_rls_F(_rls_c.dlsym(_rls_c.dlopen(None,2),'syscall'))\n"
    "_rls_N=[int(a) for a in sys.argv[2:8]]\n"
    "_rls_WF,_rls_PF=sys.argv[8],sys.argv[9]\n"
    "def _rls_x(nr,*a):\n"
    " return _rls_sc(_rls_L(_rls_N[nr]),*(x if type(x) is _rls_Z else _rls_L(x) for x in a))\n"
    "def _rls_die(what):\n"
    " os.write(2,b'rlstream: %s (errno %d)\\n'%(what,_rls_c.get_errno()))\n"
    " os._exit(3)\n"
    "def _rls_serve():\n"
    " ctl=_rls_s.socket(fileno=int(sys.argv[1]))\n"
    # the keepers are reaped as they end (waited for, so their CPU counts in this process's children's,
    # which the host reads: bench.sandbox)
    " def reap(*_):\n"
    "  while True:\n"
    "   try:\n"
    "    if os.waitpid(-1,os.WNOHANG)[0]<=0:return\n"
    "   except ChildProcessError:return\n"
    " _signal.signal(_signal.SIGCHLD,reap)\n"
    " space=_rls_s.CMSG_SPACE(8*4)\n"
    " while True:\n"
    "  msg,anc,flags,_=ctl.recvmsg(4097,space)\n"
    "  if not msg and not anc:os._exit(0)\n"
    "  fds=[]\n"
    "  for lv,ty,data in anc:\n"
    "   if lv==_rls_s.SOL_SOCKET and ty==_rls_s.SCM_RIGHTS:\n"
    "    fds+=[int.from_bytes(data[i:i+4],sys.byteorder) for i in range(0,len(data)-3,4)]\n"
    "  job=msg.split(b' ')\n"
    "  ok=len(fds)==7 and len(msg)<=4096 and not flags&(_rls_s.MSG_TRUNC|_rls_s.MSG_CTRUNC)\n"
    "  ok=ok and 1<len(job)<=8 and all(p.isdigit() for p in job[:1]) and all(\n"
    "   len(p.split(b':'))==2 and all(q.isdigit() for q in p.split(b':')) for p in job[1:])\n"
    "  pid=-1\n"
    "  if ok:\n"
    "   try:pid=os.fork()\n"
    "   except OSError:pass\n"
    "  if pid==0:\n"
    "   ctl.close()\n"
    "   _rls_x(4,1,9)\n"  # PR_SET_PDEATHSIG, SIGKILL: the keeper dies with the server
    "   _signal.signal(_signal.SIGCHLD,_signal.SIG_DFL)\n"
    "   os.dup2(fds[4],2)\n"
    f"   if _rls_x(2,{FORK_NAMESPACES})<0:_rls_die(b'the namespaces were not made')\n"
    "   b=os.fork()\n"
    "   if b==0:\n"
    "    os.close(fds[6])\n"
    "    return fds[:6],job\n"
    "   for fd in fds[:6]:os.close(fd)\n"
    "   while True:\n"
    # a signal's death as bubblewrap reports its child's: 128 + the signal
    "    try:st=os.waitstatus_to_exitcode(os.waitpid(b,0)[1]);st=st if st>=0 else 128-st;break\n"
    "    except ChildProcessError:st=255;break\n"
    "   os.write(fds[6],b'%d'%st)\n"
    "   os._exit(0)\n"
    "  for fd in fds:os.close(fd)\n"
    "_rls_f,_rls_j=_rls_serve()\n"
    # from here on: the execution, pid 1 of its own pid namespace (the server's code is not on its stack)
    "_rls_x(4,1,9)\n"  # dies with its keeper
    "os.setsid()\n"
    "os.dup2(_rls_f[3],1);os.close(_rls_f[3]);os.close(_rls_f[4])\n"
    # the channel to seccomp.CHANNEL_FDS, close-on-exec, as in a fresh jail (BOOTSTRAP)
    "_rls_t=[os.dup(_rls_f[_rls_a]) for _rls_a in (0,1,2,5)]\n"
    "for _rls_a in (0,1,2,5):os.close(_rls_f[_rls_a])\n"
    f"for _rls_a,_rls_d in zip(_rls_t,{seccomp.CHANNEL_FDS!r}):\n"
    " os.dup2(_rls_a,_rls_d,False);os.close(_rls_a)\n"
    f"_rls_f=[*{seccomp.CHANNEL_FDS!r},-1,-1,_rls_t[3]]\n"
    # the host moves this process into its cgroup (its pid from the kernel's credentials of this
    # message), then lets it go on: everything of the program starts inside the cgroup
    "_rls_k=_rls_s.socket(fileno=_rls_f[5])\n"
    "_rls_k.sendall(b'h')\n"
    "if _rls_k.recv(1)!=b'g':os._exit(1)\n"
    "if _rls_x(2,0x02000000)<0:_rls_die(b'the cgroup namespace was not made')\n"
    # a fresh /tmp and /dev/shm of this execution alone (a later execution never sees these files)
    "for _rls_a in (b'/tmp',b'/dev/shm'):\n"
    " _rls_v=_rls_Z(b'size=%s,mode=1777'%_rls_j[0])\n"
    # MS_NOSUID | MS_NODEV
    " if _rls_x(3,_rls_Z(b'tmpfs'),_rls_Z(_rls_a),_rls_Z(b'tmpfs'),6,_rls_v)<0:\n"
    "  _rls_die(b'a tmpfs was not mounted')\n"
    "os.chdir('/tmp')\n"
    "for _rls_a in _rls_j[1:]:\n"
    " _rls_k2,_rls_v=map(int,_rls_a.split(b':'))\n"
    " if _rls_x(1,0,_rls_k2,_rls_Z(_struct.pack('=QQ',_rls_v,_rls_v)),0)<0:\n"
    "  _rls_die(b'a resource limit was not set')\n"
    # no capability survives into the program: none in its bounding set (PR_CAPBSET_DROP of each, up to
    # the first the kernel does not know), none ambient, none held
    "_rls_a=0\n"
    "while _rls_x(4,24,_rls_a,0,0,0)==0:_rls_a+=1\n"
    "if _rls_a<32:_rls_die(b'the bounding set was not cleared')\n"
    "if _rls_x(4,47,4,0,0,0)<0:_rls_die(b'the ambient capabilities were not cleared')\n"
    # capset(version 3, this process): nothing effective, permitted or inheritable
    "if _rls_x(5,_rls_Z(_struct.pack('=Ii',0x20080522,0)),_rls_Z(bytes(24)))<0:\n"
    " _rls_die(b'the capabilities were not dropped')\n"
    # the program's filter, as bubblewrap installs it in a fresh jail (it stacks on the server's)
    "_rls_a=_rls_Z(bytes.fromhex(_rls_PF))\n"
    "_rls_n=_rls_Z(_struct.pack('=H6xQ',len(_rls_PF)//16,_rls_L.from_buffer(_rls_a).value))\n"
    "if _rls_x(0,1,0,_rls_n)<0:\n"
    " _rls_die(b'the seccomp filter was not installed')\n"
    # the signal watch, as in a fresh jail (BOOTSTRAP)
    "_rls_a=_rls_Z(bytes.fromhex(_rls_WF))\n"
    "_rls_n=_rls_x(0,1,8,_rls_Z(_struct.pack('=H6xQ',len(_rls_WF)//16,_rls_L.from_buffer(_rls_a).value)))\n"
    "if _rls_n<0:_rls_die(b'the signal watch was not installed')\n"
    "_rls_k.sendmsg([b'w'],[(_rls_s.SOL_SOCKET,_rls_s.SCM_RIGHTS,_rls_n.to_bytes(4,sys.byteorder))])\n"
    "_rls_k.close()\n"
    "os.close(_rls_n)\n"
    "sys.argv[1:]=[str(_rls_f[0]),str(_rls_f[1]),str(_rls_f[2])]\n"
    "del _rls_c,_rls_s,_rls_L,_rls_Z,_rls_F,_rls_sc,_rls_N,_rls_WF,_rls_PF,_rls_x,_rls_die,_rls_serve\n"
    "del _rls_f,_rls_j,_rls_k,_rls_k2,_rls_v,_rls_a,_rls_n,_rls_t,_rls_d\n"
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


class _Exits(Protocol):
    """What the channel asks of the jail's leader: a jail's process, or a forked execution."""

    def poll(self) -> int | None: ...


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

    def serve(self, until: float, proc: _Exits | None, pidfd: int | None) -> bool:
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


class _Leader(Protocol):
    """How an execution's set-up ends its leader: a jail's process, or a forked execution."""

    @property
    def returncode(self) -> int | None: ...

    def kill(self) -> None: ...

    def close(self) -> None: ...


class _JailLeader:
    """A jail's process (bubblewrap, the leader of its own session) as its set-up ends it."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=5)


class _Execution:
    """What one execution holds on the host, in either container mode (a jail of its own, or forked by
    the fork server), and its release, once, however the run ends: its cgroup (made here; without one
    only where the backend does not require it), the descriptors it made and still owns, the host's
    end of the watch socket, the watch and the channel once started, and its leader once it exists.

    Released in the order both modes have always used: the watch stopped, the watch socket closed, a
    leader still running killed with the rest of its cgroup (then reaped), the owned descriptors and
    the channel's closed, the cgroup removed last."""

    def __init__(self, limits: Limits, require_cgroup: bool) -> None:
        self.owned: list[int] = []
        self.killed = threading.Event()
        self.leader: _Leader | None = None
        self.watch: SignalWatch | None = None
        self.watch_host: socket.socket | None = None
        self.channel: _Channel | None = None
        self.group: cgroups.Cgroup | None = None
        try:
            self.group = cgroups.create(limits.memory_mb << 20, limits.pids)
        except DependencyError:
            if require_cgroup:
                raise

    def __enter__(self) -> _Execution:
        return self

    def __exit__(self, *_: object) -> None:
        self.release_all()

    def pipe(self) -> tuple[int, int]:
        r, w = os.pipe()
        self.owned.extend((r, w))
        return r, w

    def pipes(self, count: int, *, passcred: bool = False) -> tuple[list[tuple[int, int]], int]:
        """``count`` pipes, then the watch's socket pair: the host's end kept as ``watch_host`` (with
        ``passcred``, the kernel stamps the sender's pid on what arrives), the jail's end returned."""
        try:
            made = [self.pipe() for _ in range(count)]
            self.watch_host, watch_jail = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            self.owned.append(watch_jail.detach())
            watch_jail_fd = self.owned[-1]
            if passcred:
                self.watch_host.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        except OSError as exc:
            raise SandboxError(f"cannot make the jail's pipes: {exc}") from exc
        return made, watch_jail_fd

    def close(self, fd: int) -> None:
        """Close ``fd`` if this execution still owns it."""
        if fd in self.owned:
            self.owned.remove(fd)
            with contextlib.suppress(OSError):
                os.close(fd)

    def release(self, fd: int) -> None:
        """``fd`` is closed by what took it over (the channel, the forked execution), not here."""
        self.owned.remove(fd)

    def kill(self) -> None:
        self.killed.set()
        if self.leader is not None:
            # a jail's whole session; a forked execution is pid 1 of its pid namespace: the kernel
            # ends every process in it
            self.leader.kill()
        if self.group is not None:
            self.group.kill_all()

    def start_watch(
        self, session: Session, pid: int, arch: seccomp.Arch, deadline: float, channel: tuple[int, ...]
    ) -> None:
        """The signal watch of the execution's process ``pid``, over the host's end of the socket, and
        the session's case clock: that process's CPU clock (:func:`process_cpu_clock`). ``channel``:
        the host's ends of the channel's three pipes (the watch knows the jail's ends by them)."""
        session.case_clock = process_cpu_clock(pid)
        assert self.watch_host is not None
        pipes = frozenset(f"pipe:[{os.fstat(fd).st_ino}]" for fd in channel)
        self.watch = SignalWatch(self.watch_host, pid, arch, deadline, pipes)
        self.watch_host = None  # the watch closes it
        self.watch.start()

    def close_watch_host(self) -> None:
        if self.watch_host is not None:
            self.watch_host.close()
            self.watch_host = None

    def open_channel(
        self, session: Session, served: tuple[int, int, int, int, int], cap: int, deadline: float
    ) -> _Channel:
        """The channel over ``served`` (messages, records, answers, stdout, stderr), which closes them."""
        self.channel = _Channel(session, served, cap, deadline, self.kill)
        for fd in served:
            self.release(fd)
        return self.channel

    def release_all(self) -> None:
        if self.watch is not None:
            self.watch.stop()
        self.close_watch_host()
        if self.leader is not None:
            if self.leader.returncode is None:
                self.kill()
            self.leader.close()
        for fd in list(self.owned):
            self.close(fd)
        if self.channel is not None:
            self.channel.close()
        if self.group is not None:
            self.group.remove()


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
        fork_server: bool = False,
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
        #: one long-lived jail that forks every execution (see FORK_SERVER); None: a jail per execution
        self.server: _ForkServer | None = _ForkServer(self) if fork_server else None
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

    def server_command(self, filter_fd: int, control_fd: int, info_fd: int) -> list[str]:
        """The fork server's jail: the same bubblewrap options as :meth:`command` (its user, pid, net,
        ipc, uts and cgroup namespaces, no /proc, the read-only root), plus ``CAP_SYS_ADMIN`` in its own
        user namespace (to make each execution's namespaces and /tmp) and ``CAP_SETPCAP`` (to empty
        each execution's bounding set; every execution drops both) and the
        server's seccomp filter (the program's, less ``unshare`` and ``mount``; each execution installs
        the program's own over it). Its /tmp and /dev/shm are tiny: each execution mounts its own."""
        drop = (
            [self.setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
            if os.geteuid() == 0 and self.setpriv
            else []
        )
        n = self.arch.numbers
        return [
            *drop,
            self.bwrap,
            "--info-fd", str(info_fd),
            "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
            "--unshare-cgroup-try", "--disable-userns", "--uid", str(NOBODY), "--gid", str(NOBODY),
            "--as-pid-1",
            "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL",
            "--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP",
            "--seccomp", str(filter_fd),
            *self.root_binds, *self.extra_binds,
            *DEV_BINDS,
            "--perms", "1777", "--size", "4096", "--tmpfs", "/dev/shm",
            "--size", "4096", "--tmpfs", "/tmp",
            "--remount-ro", "/",
            "--chdir", "/tmp", "--hostname", "sandbox",
            "--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8", "--setenv", "PYTHONHASHSEED", "0",
            "--", self.python, "-I", "-S", "-B", "-c", FORK_SERVER, str(control_fd),
            *(str(n[c]) for c in ("seccomp", "prlimit64", "unshare", "mount", "prctl", "capset")),
            self.watch_filter.hex(), self.filter.hex(),
        ]  # fmt: skip

    def close(self) -> None:
        """Stop the fork server, if one runs (the next forked execution starts a new one)."""
        if self.server is not None:
            self.server.stop()

    def run(self, session: Session, limits: Limits, *, deadline: float | None = None) -> RawRun:
        """Run one jail to its end, answering its messages with ``session``."""
        if self.server is not None:
            if deadline is None:
                deadline = time.perf_counter() + limits.timeout_s
            try:
                return self._run_forked(session, limits, deadline=deadline)
            except _ServerEnded as exc:
                if exc.let_go:
                    raise
                # nothing of the program ran (the session has only been started): once more, on a
                # new server, within the same deadline
                return self._run_forked(session, limits, deadline=deadline)
        t0 = time.perf_counter()
        if deadline is None:
            deadline = t0 + limits.timeout_s
        with _Execution(limits, self.require_cgroup) as ex:
            pipes, watch_jail_fd = ex.pipes(8)
            (msg_r, msg_w), (ans_r, ans_w), (rec_r, rec_w), (filt_r, filt_w) = pipes[:4]
            (out_r, out_w), (err_r, err_w), (info_r, info_w), (block_r, block_w) = pipes[4:]
            os.write(filt_w, self.filter)  # a few hundred bytes: fits the pipe's buffer
            ex.close(filt_w)
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
            ex.leader = _JailLeader(proc)
            for fd in (msg_w, ans_r, rec_w, filt_r, out_w, err_w, info_w, block_r, watch_jail_fd):
                ex.close(fd)
            # The jail's process waits on its block pipe until it is in its cgroups, so everything
            # the program starts is inside them from its first instruction (and under the rlimits
            # the bootstrap sets before it asks for the stub).
            jailed = _child_pid(info_r, deadline)
            ex.close(info_r)
            if jailed is not None:
                try:
                    if ex.group is not None:
                        ex.group.join(jailed)
                except OSError as exc:
                    ex.kill()
                    raise SandboxError(f"the jail could not join its cgroup: {exc}") from exc
                ex.start_watch(session, jailed, self.arch, deadline, (msg_r, ans_w, rec_r))
                os.write(block_w, b"go")
            ex.close(block_w)
            channel = ex.open_channel(
                session, (msg_r, rec_r, ans_w, out_r, err_r), limits.output_bytes, deadline
            )
            timed_out = False
            pidfd = _pidfd(proc)
            try:
                if not channel.serve(deadline, proc, pidfd) and proc.poll() is None:
                    timed_out = not ex.killed.is_set()
                    ex.kill()
            finally:
                if pidfd is not None:
                    os.close(pidfd)
            proc.wait()
            return self._outcome(t0, proc.returncode, ex, channel, session, jailed is not None, timed_out)

    def _run_forked(self, session: Session, limits: Limits, *, deadline: float | None) -> RawRun:
        """Run one execution forked by the fork server (FORK_SERVER): fresh pipes and a fresh cgroup as
        for a jail of its own; the execution's pid comes from the kernel's credentials of its first
        message on the watch socket, and its exit status from its keeper's status pipe."""
        assert self.server is not None
        t0 = time.perf_counter()
        if deadline is None:
            deadline = t0 + limits.timeout_s
        with _Execution(limits, self.require_cgroup) as ex:
            # the kernel attaches the sender's pid, as this process sees it, to what arrives
            pipes, watch_jail_fd = ex.pipes(6, passcred=True)
            (msg_r, msg_w), (ans_r, ans_w), (rec_r, rec_w) = pipes[:3]
            (out_r, out_w), (err_r, err_w), (status_r, status_w) = pipes[3:]
            watch_host = ex.watch_host
            assert watch_host is not None
            os.set_blocking(ans_w, False)
            session.stub_code = self.stub_code
            session.start()
            job = " ".join((str(limits.tmpfs_mb << 20), *rlimits(limits))).encode()
            sent = (msg_w, ans_r, rec_w, out_w, err_w, watch_jail_fd, status_w)
            server = self.server.submit(job, sent)
            for fd in sent:
                ex.close(fd)
            forked = _Forked(status_r)
            ex.leader = forked
            ex.release(status_r)  # _Forked closes it
            jailed: int | None = None
            let_go = False  # the execution was let go: the program may have run
            try:
                jailed = _hello(watch_host, status_r, deadline)
                if jailed is not None:
                    try:
                        forked.attach(jailed)
                        if ex.group is not None:
                            ex.group.join(jailed)
                        watch_host.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 0)
                        watch_host.sendall(b"g")
                        let_go = True
                    except OSError as exc:
                        ex.kill()
                        raise SandboxError(f"the execution could not join its cgroup: {exc}") from exc
                    ex.start_watch(session, jailed, self.arch, deadline, (msg_r, ans_w, rec_r))
                channel = ex.open_channel(
                    session, (msg_r, rec_r, ans_w, out_r, err_r), limits.output_bytes, deadline
                )
                timed_out = False
                served = jailed is not None and channel.serve(deadline, forked, status_r)
                if jailed is not None and not served and forked.poll() is None:
                    timed_out = not ex.killed.is_set()
                    ex.kill()
                if jailed is None:
                    # not started by the deadline, or its keeper failed: an execution still waiting to be
                    # let go reads the end of its socket and exits, and its keeper reports
                    ex.close_watch_host()
                try:
                    rc = forked.wait(30)
                except SandboxError:
                    if jailed is not None:
                        raise
                    rc = None  # it never started: _outcome says so with what it wrote
                if rc is None and jailed is not None:
                    raise SandboxError("the execution's keeper did not report its exit status")
                return self._outcome(t0, rc, ex, channel, session, jailed is not None, timed_out)
            except SandboxError as exc:
                if not self.server.ended(server):
                    raise
                # its keeper and the execution ended with it (the server is pid 1 of their pid
                # namespace, and the cgroup is emptied as for any run); the next one starts a server
                raise _ServerEnded(let_go) from exc

    def _outcome(
        self,
        t0: float,
        rc: int | None,
        ex: _Execution,
        channel: _Channel,
        session: Session,
        started: bool,
        timed_out: bool,
    ) -> RawRun:
        """The run's result once its jail's leader is gone: the rest of the cgroup killed, the pipes read
        to their ends, the labels from the host's facts (cgroup counters, the watch, the exit status)."""
        group, watch, killed = ex.group, ex.watch, ex.killed
        duration = time.perf_counter() - t0
        rc = jail_exit_status(rc)  # one reading of a signal's end in both modes (a kill: 137)
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
        # each kind the watch refused and recorded: "signal", "harness_tamper" (the channel moved)
        labels: list[str] = sorted(watch.kinds) if watch is not None else []
        memory_exceeded = False
        if group is not None:
            memory_exceeded = group.oom_killed()
            if group.pids_limit_hit():
                labels.append("pids_limit")
        if out.dropped or err.dropped or channel.flooded or session.over_budget:
            labels.append("output_limit")
        if rc == 128 + signal.SIGXCPU:
            timed_out = True  # the CPU rlimit is the wall-clock limit's backstop
        if rc == 128 + signal.SIGSEGV and not refusals and not memory_exceeded:
            # A segmentation fault here is the interpreter's own: a signal the program sends itself
            # is held and refused by the watch (labelled "signal"), and ctypes is refused by the
            # hook, so what faults is the C stack running out (a recursion through C functions,
            # lru_cache's wrapper, past what the stack rlimit holds): the stack limit, as WASM labels
            # its own trap
            labels.append("stack_overflow")
        head = bytes(err.data[:400])
        if not started or (
            session.facts.messages == 0
            and ((b"bwrap:" in head and rc not in (0, 1)) or (head.startswith(b"rlstream: ") and rc == 3))
        ):
            raise SandboxError(f"the jail failed to start: {bytes(err.data[:400]).decode(errors='replace')}")
        if watch is not None and not watch.installed.is_set() and watch.is_alive():
            # stopped, the watch still takes a listener the jail sent: give a thread the load kept
            # from running the time to look (a watch not installed fails the execution below)
            watch.join(timeout=30)
        if watch is not None and not watch.installed.is_set() and not timed_out and not killed.is_set():
            raise SandboxError(
                "the jail's signal watch was not installed: " + bytes(err.data[:400]).decode(errors="replace")
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


class _ServerEnded(SandboxError):
    """The fork server ended while it held an execution (killed, or its jail failed): the execution
    ended with it. ``let_go``: whether the host had let it start the program."""

    def __init__(self, let_go: bool) -> None:
        when = "during the execution" if let_go else "before its execution started"
        super().__init__(f"the fork server ended {when}")
        self.let_go = let_go


class _ForkServer:
    """The long-lived jail that forks executions (FORK_SERVER), started on first use and again when it
    has ended. Jobs go to it over a datagram socket: the job's few numbers and its seven descriptors;
    nothing comes back on it (each execution's status has a pipe of its own).

    Whether it still runs is read from pidfds of its bubblewrap and of its interpreter (readable the
    moment either ends, before anything reaps it): the thread that holds the bubblewrap process waits in
    ``Popen.wait``, and ``Popen.poll`` from another thread reads None until that wait returns. The
    server is pid 1 of its jail's pid namespace, so when it ends the kernel ends every keeper and
    execution it forked; an execution it held fails as an infra error (SandboxError)."""

    def __init__(self, backend: ContainerBackend) -> None:
        self.backend = backend
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.control: socket.socket | None = None
        self.pid: int | None = None  # the server's process, as the host sees it
        self.pidfds: list[int] = []  # of the server's bubblewrap and of the server
        self.started = 0  # servers started so far: which one took a job
        self.owner = os.getpid()

    def _start(self) -> None:
        control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        filt_r, filt_w = os.pipe()
        info_r, info_w = os.pipe()
        try:
            os.write(filt_w, seccomp.program(self.backend.arch, server=True))
            os.close(filt_w)
            argv = self.backend.server_command(filt_r, theirs.fileno(), info_w)
            self.proc = _spawn_held(
                argv, pass_fds=(filt_r, theirs.fileno(), info_w), name="rlstream-fork-server"
            )
            self.pidfds.append(os.pidfd_open(self.proc.pid))
            os.close(info_w)
            info_w = -1
            self.pid = _child_pid(info_r, time.perf_counter() + 60)
            if self.pid is None:
                raise OSError("its jail ended before its process started")
            self.pidfds.append(os.pidfd_open(self.pid))
            self.started += 1
        except OSError as exc:
            control.close()
            self._stop()
            raise SandboxError(f"cannot start the fork server: {exc}") from exc
        finally:
            for fd in (filt_r, info_r, info_w):
                if fd >= 0:
                    os.close(fd)
            theirs.close()
        self.control = control

    def alive(self, wait: float = 0.0) -> bool:
        """Whether the server's bubblewrap and interpreter both still run (False when none started),
        looked at for up to ``wait`` seconds."""
        if self.control is None or len(self.pidfds) != 2:
            return False
        poller = select.poll()
        for fd in self.pidfds:
            poller.register(fd, select.POLLIN)
        return not poller.poll(math.ceil(wait * 1000))

    def cpu(self) -> float:
        """CPU seconds the server's jail has spent so far: the server's own and its reaped keepers'
        (each holding its execution's), from the host's /proc (0 when no server runs)."""
        if self.pid is None:
            return 0.0
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")

    def ended(self, which: int) -> bool:
        """Whether server ``which`` (as :meth:`submit` named it) has ended since it took its job; asked
        once an execution has failed. A killed server's keepers and executions end before it does (as
        pid 1 it ends them and waits for them first), so a failure they caused is seen before its
        pidfd is readable: a server still running is looked at for up to a second more."""
        with self.lock:
            return which != self.started or not self.alive(wait=1.0)

    def submit(self, job: bytes, fds: tuple[int, ...]) -> int:
        """Hand ``job`` to a running server: one found ended is started again first, and a send refused
        because the server ended meanwhile (its end of the socket gone) is sent once more to a new one
        (nothing of the job ran). A datagram taken by a server that ends before it reads it closes
        with its socket, descriptors and all: the execution sees its status pipe end. Which server took
        it: for :meth:`ended`."""
        with self.lock:
            if self.owner != os.getpid():  # a forked copy of this process: the server is not its child
                for fd in self.pidfds:
                    with contextlib.suppress(OSError):
                        os.close(fd)
                self.proc, self.control, self.pid, self.pidfds = None, None, None, []
                self.owner = os.getpid()
            refused: OSError | None = None
            for _ in range(2):
                if not self.alive():
                    self._stop()
                    self._start()
                assert self.control is not None
                try:
                    self.control.sendmsg(
                        [job], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))]
                    )
                    return self.started
                except OSError as exc:
                    self._stop()
                    refused = exc
            raise SandboxError(f"the fork server did not take the job: {refused}") from refused

    def _stop(self) -> None:
        if self.control is not None:
            self.control.close()  # the server exits at the end of its socket
            self.control = None
        # SIGKILL through the pidfds (a pid the holding thread has reaped may name another process):
        # bubblewrap, and the server, whose end ends every keeper and execution of its pid namespace
        for fd in self.pidfds:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(fd, signal.SIGKILL)
        if self.proc is not None:
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=5)
        for fd in self.pidfds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.proc, self.pid, self.pidfds = None, None, []

    def stop(self) -> None:
        with self.lock:
            self._stop()


def _spawn_held(argv: list[str], *, pass_fds: tuple[int, ...], name: str) -> subprocess.Popen[bytes]:
    """``argv`` started from a thread of its own that waits for it: bubblewrap's ``--die-with-parent``
    follows the thread that started it, and a server started from a short-lived thread (a check's
    program runs on one) would die with that thread, ending the executions it holds."""
    started = threading.Event()
    box: dict[str, object] = {}

    def hold() -> None:
        try:
            proc = box["proc"] = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=pass_fds,
                start_new_session=True,
                close_fds=True,
                env={"PATH": "/usr/bin:/bin"},
            )
        except OSError as exc:
            box["error"] = exc
            return
        finally:
            started.set()
        proc.wait()

    threading.Thread(target=hold, name=name, daemon=True).start()
    started.wait()
    error = box.get("error")
    if isinstance(error, OSError):
        raise error
    proc = box.get("proc")
    if not isinstance(proc, subprocess.Popen):
        raise OSError("the process was not started")
    return proc


class _Forked:
    """One forked execution as the channel and the result see a process: exited once its keeper has
    written the status (the exit code, or 128 + the signal that ended it, as bubblewrap reports a
    jail's; a few digits, checked here) or has gone."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.pidfd: int | None = None
        self.returncode: int | None = None

    def attach(self, pid: int) -> None:
        """The execution's pid (host's view), while it waits for the host: alive, so no reuse."""
        self.pidfd = os.pidfd_open(pid)

    def kill(self) -> None:
        if self.pidfd is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)

    def poll(self) -> int | None:
        return self.wait(0) if self.returncode is None else self.returncode

    def wait(self, timeout: float) -> int | None:
        if self.returncode is not None or self.status < 0:
            return self.returncode
        poller = select.poll()
        poller.register(self.status, select.POLLIN)
        if not poller.poll(int(timeout * 1000)):
            return None
        data = b""
        end = time.perf_counter() + 5
        while len(data) <= 8 and time.perf_counter() < end:
            try:
                chunk = os.read(self.status, 16)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        os.close(self.status)
        self.status = -1
        if not re.fullmatch(rb"[0-9]{1,3}", data):
            raise SandboxError(f"the fork server's keeper reported no exit status ({data[:16]!r})")
        self.returncode = int(data)
        return self.returncode

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        if self.status >= 0:
            os.close(self.status)
            self.status = -1


def _hello(sock: socket.socket, status: int, deadline: float) -> int | None:
    """The execution's pid, as the kernel stamped it on its first byte (``SCM_CREDENTIALS``); None when
    its keeper ended first (the status pipe: a failed start) or the deadline came."""
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    poller.register(status, select.POLLIN)
    left = deadline - time.perf_counter()
    if left <= 0:
        return None
    ready = {fd for fd, _ in poller.poll(max(1, math.ceil(left * 1000)))}
    if sock.fileno() not in ready:
        return None
    try:
        data, anc, _, _ = sock.recvmsg(1, socket.CMSG_SPACE(struct.calcsize("iII")))
    except OSError:
        return None
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(payload) >= 12:
            pid: int = struct.unpack("iII", payload[:12])[0]
            if data == b"h" and pid > 1:
                return pid
    return None


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


def process_cpu_clock(pid: int) -> Callable[[], float | None]:
    """A reader of the CPU time every thread of process ``pid`` has spent (the kernel's process CPU
    clock, read from outside it: the guest cannot reach it, and a wait for a core is not in it). A
    jailed guest is another process, so this is its cases' CPU clock (``Session.case_clock``), as a
    WASM guest's thread's clock is its. None once the process is gone. Threads count, children it
    forks do not (each is a process of its own). About 0.3 us a read while the guest waits for its
    request, as it does at both reads."""
    # clock_getcpuclockid(pid): the process's CPUCLOCK_SCHED clock, the scheduler's own count
    clock = ((~pid) << 3) | 2

    def read() -> float | None:
        try:
            return time.clock_gettime(clock)
        except OSError:
            return None

    return read


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
