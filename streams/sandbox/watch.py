"""Signals aimed at the jail's program, refused and labelled by the host.

The program's own process is the jail's pid 1. A signal to it from inside the program is refused by
the guest's audit hook, but a child process has no audit hook (it may not even be Python), and
``pidfd_send_signal`` raises no audit event. So the jail's bootstrap installs a second seccomp filter
(:func:`streams.sandbox.seccomp.watch_program`) before the program loads, with
``SECCOMP_FILTER_FLAG_NEW_LISTENER``, and hands the listener to the host over a socket that it then
closes: no process of the jail holds it. Every signal that may reach pid 1 stops its sender until this
thread has answered: refused with ``EPERM`` and recorded as a ``signal`` refusal when it targets the
program's process (by pid, its group, every process, one of its threads, a pidfd of it), let through
otherwise (a ``tkill`` or a pidfd aimed at one of the program's children). An owner for ``SIGIO``/
``SIGURG`` (``fcntl`` ``F_SETOWN``/``F_SETOWN_EX``, ``ioctl`` ``FIOSETOWN``/``SIOCSPGRP``) is a signal to
come: naming the program's process (by any of its thread ids, which the kernel takes as the process)
or its group is refused the same way (the host reads the owner from the sender's memory).

The channel's descriptors (``seccomp.CHANNEL_FDS``) are held the same way: a ``close``, a ``dup2``/
``dup3`` onto one or a ``close_range`` covering one is refused with ``EPERM`` wherever that number in
the sender's table is one of the channel's pipes (read from ``/proc/<sender>/fd``): the stub's messages
never go anywhere but to the host, from the program's process or from a forked copy of it (which holds
the stub and the key as well). It is recorded as a ``harness_tamper`` refusal when the sender is the
program's process, or when the call is a ``dup2``/``dup3`` onto a live channel; a ``vfork`` child (the
program's memory, a table of its own: ``subprocess``, ``os.posix_spawn``; told by ``kcmp`` on the host)
passes, as does any process where the number is not the channel (a child after its exec: the channel is
close-on-exec).

The answer is decided from integers the kernel copied (pids, thread ids) and, for a pidfd, from the
host's ``/proc/<sender>/fdinfo``: a multi-threaded sender that swaps the descriptor between that read
and the kernel's own use could still signal its parent unlabelled — which pid 1 (the jail's init)
ignores unless the program installed a handler.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import socket
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path

from streams.sandbox.seccomp import CHANNEL_CALLS, CHANNEL_FDS, F_SETOWN, F_SETOWN_EX, JAIL_INIT, Arch

#: struct seccomp_notif: id, pid, flags, then struct seccomp_data (nr, arch, ip, args[6])
_NOTIF = struct.Struct("=QIIiIQ6Q")
#: struct seccomp_notif_resp: id, val, error, flags
_RESP = struct.Struct("=QqiI")
# _IOWR('!', 0, struct seccomp_notif) and _IOWR('!', 1, struct seccomp_notif_resp)
_RECV = 0xC0000000 | (_NOTIF.size << 16) | (ord("!") << 8) | 0
_SEND = 0xC0000000 | (_RESP.size << 16) | (ord("!") << 8) | 1
_CONTINUE = 1  # SECCOMP_USER_NOTIF_FLAG_CONTINUE
_KCMP_VM, _KCMP_FILES = 1, 2
EPERM = 1
#: refusal records kept per run (a program may ask again and again; each ask is answered)
MAX_RECORDS = 16


class SignalWatch(threading.Thread):
    """The host side of one jail's signal watch: receives the listener on ``sock``, then answers every
    held signal until the jail is gone or :meth:`stop` is called. ``init`` is the host's pid of the
    jail's pid 1."""

    def __init__(
        self,
        sock: socket.socket,
        init: int,
        arch: Arch,
        deadline: float,
        channel: frozenset[str] = frozenset(),
    ) -> None:
        super().__init__(daemon=True, name="rlstream-jail-signals")
        self.sock, self.init, self.deadline = sock, init, deadline
        #: what a descriptor of the channel reads as in /proc/<pid>/fd ("pipe:[inode]", one per pipe)
        self.channel = channel
        self.names = {arch.numbers[n]: n for n in ("kill", "tkill", "tgkill", "rt_sigqueueinfo")}
        self.names |= {arch.numbers[n]: n for n in ("rt_tgsigqueueinfo", "pidfd_send_signal", "fcntl")}
        self.names |= {arch.numbers["ioctl"]: "ioctl"}
        self.names |= {arch.numbers[n]: n for n in CHANNEL_CALLS if n in arch.numbers}
        self._kcmp = _kcmp_caller(arch.numbers["kcmp"])
        self.records: list[tuple[str, str]] = []
        #: the kinds of every refusal recorded (records past MAX_RECORDS are counted, not kept)
        self.kinds: set[str] = set()
        self.refused = 0
        self.installed = threading.Event()
        self._done = threading.Event()

    def stop(self) -> None:
        self._done.set()

    def run(self) -> None:
        listener = self._receive()
        if listener is None:
            return
        self.installed.set()
        try:
            poller = select.poll()
            poller.register(listener, select.POLLIN)
            while not self._done.is_set():
                events = poller.poll(20)
                if any(ev & (select.POLLHUP | select.POLLERR) for _, ev in events):
                    return  # no process of the jail is left under the filter
                if events:
                    self._answer(listener)
        finally:
            os.close(listener)

    def _receive(self) -> int | None:
        try:
            with self.sock:
                poller = select.poll()
                poller.register(self.sock, select.POLLIN)
                while True:
                    # stopped or past the deadline, the socket is still looked at once: on a loaded
                    # machine this thread may first run after the jail has sent its listener and ended,
                    # and a listener sent is a watch installed
                    done = self._done.is_set()
                    left = self.deadline - time.perf_counter()
                    wait = 0 if done or left <= 0 else max(1, min(20, int(left * 1000)))
                    if not poller.poll(wait):
                        if done or left <= 0:
                            return None
                        continue
                    _, fds, _, _ = socket.recv_fds(self.sock, 1, 1)
                    if not fds:
                        return None
                    for extra in fds[1:]:
                        os.close(extra)
                    return fds[0]
        except OSError:
            return None

    def _answer(self, listener: int) -> None:
        buf = bytearray(_NOTIF.size)  # the kernel wants it zeroed
        try:
            fcntl.ioctl(listener, _RECV, buf, True)
        except OSError:
            return  # the sender is gone (ENOENT) or was interrupted: nothing to answer
        nid, sender, _, nr, _, _, *args = _NOTIF.unpack(buf)
        name = self.names.get(nr, str(nr))
        if name in CHANNEL_CALLS:
            self._answer_channel(listener, nid, sender, name, args)
            return
        target = _signed(args[0])
        if name == "tkill":
            aimed = target in self._init_threads()
        elif name == "pidfd_send_signal":
            # a pidfd may name one thread (PIDFD_THREAD): any thread of the program is the program
            aimed = _pidfd_target(sender, target) in {None, *self._init_host_threads()}
        elif name == "fcntl" and _signed(args[1]) == F_SETOWN:
            aimed = self._owner_names_init(_signed(args[2]))
        elif name in ("fcntl", "ioctl"):
            aimed = self._owner_is_init(sender, args[1] & 0xFFFFFFFF, args[2])
        else:
            aimed = True  # the filter holds these only when they reach pid 1, its group or everyone
        if aimed:
            self._record("signal", f"{name}({target}, {_signed(args[1])}) from pid {sender}")
        self._respond(listener, nid, refuse=aimed)

    def _answer_channel(self, listener: int, nid: int, sender: int, name: str, args: list[int]) -> None:
        """A ``close``/``close_range`` covering, or a ``dup2``/``dup3`` onto, a descriptor numbered as
        the channel's: refused wherever that number in the sender's table is the channel (its own
        process, a thread of it, a forked copy of it, which holds the stub and the key as well), let
        through where it is not (a child that executed another program: the channel is close-on-exec,
        so the number is free or the child's own). Labelled ``harness_tamper`` when the sender is the
        program's process (any of its threads), or a ``dup2``/``dup3`` onto a live channel from
        anywhere; a child's ``close_range`` before its exec (``subprocess``'s ``close_fds``, which then
        closes its descriptors one by one) is refused unlabelled: its copies close at the exec."""
        if name == "close_range":
            first, last = args[0] & 0xFFFFFFFF, args[1] & 0xFFFFFFFF
            numbers = [fd for fd in CHANNEL_FDS if first <= fd <= last]
        else:
            numbers = [args[CHANNEL_CALLS[name]] & 0xFFFFFFFF]
        held = [fd for fd in numbers if self._holds_channel(sender, fd)]
        if held and self._spawning_child(sender):
            held = []  # its copies, closed or replaced before its exec: the program's table is not its own
        if held:
            if name in ("dup2", "dup3") or sender in self._init_host_threads():
                shown = {"close": 1, "dup2": 2}.get(name, 3)
                call = ", ".join(str(_signed(a)) for a in args[:shown])
                self._record(
                    "harness_tamper", f"{name}({call}) on the channel's descriptors from pid {sender}"
                )
            else:
                self.refused += 1
        self._respond(listener, nid, refuse=bool(held))

    def _spawning_child(self, sender: int) -> bool:
        """Whether ``sender`` is a child of the program's process that shares its memory but not its
        descriptors and is no thread of it: a ``vfork`` child (``subprocess``, ``os.posix_spawn``),
        which runs no Python and ends in an exec or an exit; closing its copies (``close_fds``) then
        costs no round trip per descriptor. A forked copy (``os.fork``: memory of its own) and a thread
        are not."""
        if self._kcmp is None or sender in self._init_host_threads():
            return False
        same_vm = self._kcmp(self.init, sender, _KCMP_VM)
        return same_vm == 0 and self._kcmp(self.init, sender, _KCMP_FILES) not in (0, -1)

    def _holds_channel(self, sender: int, fd: int) -> bool:
        """Whether descriptor ``fd`` of ``sender`` is one of the channel's pipes; one the host cannot
        read but that exists counts as the channel."""
        try:
            return os.readlink(f"/proc/{sender}/fd/{fd}") in self.channel
        except FileNotFoundError:
            return False  # not open there (or the sender is gone): nothing of the channel to move
        except OSError:
            return True

    def _record(self, kind: str, detail: str) -> None:
        self.refused += 1
        self.kinds.add(kind)
        if len(self.records) < MAX_RECORDS:
            self.records.append((kind, detail))

    @staticmethod
    def _respond(listener: int, nid: int, *, refuse: bool) -> None:
        resp = _RESP.pack(nid, 0, -EPERM, 0) if refuse else _RESP.pack(nid, 0, 0, _CONTINUE)
        with contextlib.suppress(OSError):
            fcntl.ioctl(listener, _SEND, resp)

    def _owner_is_init(self, sender: int, request: int, pointer: int) -> bool:
        """Whether the owner an ``F_SETOWN_EX`` (struct f_owner_ex: type, pid) or ``FIOSETOWN``/
        ``SIOCSPGRP`` (int: a pid, or minus a group) names the program's process, its group or one of
        its threads; an owner the host cannot read counts as the program."""
        size = 8 if request == F_SETOWN_EX else 4
        try:
            with open(f"/proc/{sender}/mem", "rb", buffering=0) as mem:
                mem.seek(pointer)
                data = mem.read(size)
        except (OSError, OverflowError, ValueError):
            return True
        if len(data) != size:
            return True
        if request == F_SETOWN_EX:
            kind, pid = struct.unpack("=ii", data)
            # F_OWNER_TID (0) and F_OWNER_PID (1) both accept a thread's id; the kernel signals the
            # whole process for F_OWNER_PID. F_OWNER_PGRP (2) names a group, whose id is a leader's.
            return pid == JAIL_INIT if kind == 2 else pid in self._init_threads()
        (owner,) = struct.unpack("=i", data)
        return self._owner_names_init(owner)

    def _owner_names_init(self, owner: int) -> bool:
        """Whether an ``F_SETOWN``-style owner (a pid, or minus a group) reaches the program: the kernel
        takes any of its thread ids as the process (``find_vpid``), so each of them counts."""
        return owner == -JAIL_INIT if owner < 0 else owner in self._init_threads()

    def _init_host_threads(self) -> set[int]:
        """The host's ids of the threads of the jail's pid 1 (what a pidfd's ``Pid:`` shows)."""
        out = {self.init}
        with contextlib.suppress(OSError):
            out |= {
                int(task.name) for task in Path(f"/proc/{self.init}/task").iterdir() if task.name.isdigit()
            }
        return out

    def _init_threads(self) -> set[int]:
        """The jail's ids of the threads of its pid 1."""
        out = {JAIL_INIT}
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{self.init}/task").iterdir():
                # bytes: a thread's name (the status file's first line) is the program's to choose
                with contextlib.suppress(OSError, ValueError, IndexError):
                    for line in (task / "status").read_bytes().splitlines():
                        if line.startswith(b"NSpid:"):
                            out.add(int(line.split()[-1]))
        return out


def _kcmp_caller(nr: int) -> Callable[[int, int, int], int] | None:
    """kcmp(pid1, pid2, type) on the host (the jail's filter refuses it to the program): 0 when the two
    processes share the resource, -1 on an error; None where the host cannot call it."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        call = libc.syscall
        call.restype = ctypes.c_long
    except (ImportError, OSError, AttributeError):
        return None

    def kcmp(pid1: int, pid2: int, kind: int) -> int:
        args = (nr, pid1, pid2, kind, 0, 0)
        return int(call(*(ctypes.c_long(a) for a in args)))

    return kcmp


def _signed(value: int) -> int:
    """A 64-bit register holding a C int."""
    low = value & 0xFFFFFFFF
    return low - (1 << 32) if low & 0x80000000 else low


def _pidfd_target(sender: int, fd: int) -> int | None:
    """The host's pid of the process a pidfd of ``sender`` refers to; 0 when it is no pidfd (the kernel
    refuses it anyway), None when the host cannot tell (treated as aimed at the program)."""
    try:
        text = Path(f"/proc/{sender}/fdinfo/{fd}").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("Pid:"):
            try:
                return int(line.split()[1])
            except (IndexError, ValueError):
                return None
    return 0
