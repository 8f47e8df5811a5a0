"""The container jail's seccomp filter: a classic-BPF program made here, in pure Python, and handed to
bubblewrap (``--seccomp FD``), which installs it just before it starts the jail's interpreter.

What it refuses (``EPERM`` unless said otherwise); everything else is allowed:

- sockets of any family but ``AF_UNIX``, ``AF_INET`` and ``AF_INET6`` (``EAFNOSUPPORT``): the jail's
  network namespace is empty, so these reach nothing, while ``AF_VSOCK`` would reach the VM's host and
  ``AF_NETLINK``/``AF_PACKET`` the kernel's interfaces;
- new namespaces of any kind (``unshare``, ``setns``, ``clone`` with a ``CLONE_NEW*`` flag; ``clone3``,
  whose flags the filter cannot read, answers ``ENOSYS`` so the C library falls back to ``clone``);
- reading or writing other processes (``ptrace``, ``process_vm_readv/writev``, ``kcmp``,
  ``pidfd_getfd``, ``process_madvise``);
- watching files (``inotify_*``, ``fanotify_*``: the jails share a read-only ``/usr``);
- the kernel's larger attack surfaces and anything administrative: ``bpf``, ``perf_event_open``,
  ``userfaultfd``, ``io_uring_*``, ``keyctl``/``add_key``/``request_key``, mounts, modules, ``kexec``,
  ``reboot``, clocks, ``swapon``, ``acct``, ``syslog``, file handles, ``chroot``/``pivot_root``,
  ``sethostname``, ``vhangup``; on x86-64 also ``iopl``/``ioperm``/``modify_ldt``/``uselib`` and the
  x32 system-call ABI.

A second, smaller filter (:func:`watch_program`) is installed by the jail's bootstrap before the
program loads, with a listener the host keeps (:mod:`streams.sandbox.watch`): every signal aimed at the
program's own process (the jail's pid 1), its process group or every process — ``kill``, ``tgkill``,
``rt_sigqueueinfo``/``rt_tgsigqueueinfo``, a ``tkill`` and a ``pidfd_send_signal`` whose target the host
looks up, and an owner for ``SIGIO``/``SIGURG`` (``F_SETOWN``, ``F_SETOWN_EX``, ``FIOSETOWN``,
``SIOCSPGRP``) — is held until the host has answered, so it is refused and labelled whichever process of the
jail sent it, a child without an audit hook or a program that is not Python. Signal 0 (an existence
test) and signals to the program's children pass without a stop. The same filter holds every ``close``,
``dup2``/``dup3`` onto and ``close_range`` covering one of the stub's channel descriptors
(:data:`CHANNEL_FDS`, where the bootstrap moved them): the host refuses it where the sender's descriptor
there is the channel (the program's process, its threads, a forked copy of it).

A system call of another architecture than the host's kills the process. The tables below are the
kernel's numbers for x86-64 and aarch64; another host architecture cannot run the container backend
(it fails as a missing dependency rather than run unfiltered).
"""

from __future__ import annotations

import platform
import struct

from schemas.errors import DependencyError

EPERM, ENOSYS, EAFNOSUPPORT = 1, 38, 97
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
#: CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET
CLONE_NEW_MASK = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000
X32_SYSCALL_BIT = 0x40000000

RET_ALLOW = 0x7FFF0000
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_USER_NOTIF = 0x7FC00000

# classic BPF opcodes
LD_W_ABS = 0x20
JEQ_K = 0x15
JGT_K = 0x25
JGE_K = 0x35
JSET_K = 0x45
RET_K = 0x06

OFFSET_NR, OFFSET_ARCH, OFFSET_ARG0 = 0, 4, 16
#: the low 32 bits of argument n (both architectures are little-endian): a pid_t or an int
ARG = (16, 24, 32, 40, 48, 56)
#: the program's own process inside the jail's pid namespace (bubblewrap's --as-pid-1)
JAIL_INIT = 1
#: the descriptors of the stub's channel in the jail's process (messages out, answers in, records out):
#: the bootstrap moves the channel here before the watch is installed (below the jail's RLIMIT_NOFILE,
#: 256), and the watch holds every call that would close or replace one of them
CHANNEL_FDS = (253, 254, 255)
assert tuple(range(CHANNEL_FDS[0], CHANNEL_FDS[-1] + 1)) == CHANNEL_FDS, "the watch reads one range"
#: the calls that close or replace a descriptor number the watch looks at: the argument that names it
#: (close_range's two, the first and the last of a range)
CHANNEL_CALLS = {"close": 0, "dup2": 1, "dup3": 1, "close_range": 0}
#: fcntl commands and ioctl requests that name a process (or group) to receive SIGIO/SIGURG
F_SETOWN, F_SETOWN_EX, FIOSETOWN, SIOCSPGRP = 8, 15, 0x8901, 0x8902

#: the refused calls common to both tables
_REFUSED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
    "unshare", "setns",
    "inotify_init1", "inotify_add_watch", "fanotify_init", "fanotify_mark",
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key",
    "mount", "umount2", "pivot_root", "chroot", "mount_setattr", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load", "reboot",
    "swapon", "swapoff", "acct", "syslog", "quotactl", "quotactl_fd",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie",
    "sethostname", "setdomainname", "vhangup",
)  # fmt: skip


class Arch:
    def __init__(self, audit: int, numbers: dict[str, int], *, x32: bool = False) -> None:
        self.audit, self.numbers, self.x32 = audit, numbers, x32


X86_64 = Arch(
    0xC000003E,
    {
        "socket": 41, "socketpair": 53, "clone": 56, "clone3": 435,
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
        "pidfd_getfd": 438, "process_madvise": 440, "unshare": 272, "setns": 308,
        "inotify_init": 253, "inotify_init1": 294, "inotify_add_watch": 254, "fanotify_init": 300,
        "fanotify_mark": 301, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "keyctl": 250, "add_key": 248, "request_key": 249,
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "mount_setattr": 442,
        "move_mount": 429, "open_tree": 428, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "init_module": 175, "finit_module": 313, "delete_module": 176,
        "kexec_load": 246, "kexec_file_load": 320, "reboot": 169, "swapon": 167, "swapoff": 168,
        "acct": 163, "syslog": 103, "quotactl": 179, "quotactl_fd": 443,
        "settimeofday": 164, "clock_settime": 227, "clock_adjtime": 305, "adjtimex": 159,
        "open_by_handle_at": 304, "name_to_handle_at": 303, "lookup_dcookie": 212,
        "sethostname": 170, "setdomainname": 171, "vhangup": 153,
        "iopl": 172, "ioperm": 173, "modify_ldt": 154, "uselib": 134,
        "kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
        "pidfd_send_signal": 424, "seccomp": 317, "fcntl": 72, "ioctl": 16, "prlimit64": 302,
        "prctl": 157, "capset": 126, "close": 3, "dup2": 33, "dup3": 292, "close_range": 436,
    },
    x32=True,
)  # fmt: skip

AARCH64 = Arch(
    0xC00000B7,
    {
        "socket": 198, "socketpair": 199, "clone": 220, "clone3": 435,
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272,
        "pidfd_getfd": 438, "process_madvise": 440, "unshare": 97, "setns": 268,
        "inotify_init1": 26, "inotify_add_watch": 27, "fanotify_init": 262, "fanotify_mark": 263,
        "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
        "keyctl": 219, "add_key": 217, "request_key": 218,
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "mount_setattr": 442,
        "move_mount": 429, "open_tree": 428, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
        "fspick": 433, "init_module": 105, "finit_module": 273, "delete_module": 106,
        "kexec_load": 104, "kexec_file_load": 294, "reboot": 142, "swapon": 224, "swapoff": 225,
        "acct": 89, "syslog": 116, "quotactl": 60, "quotactl_fd": 443,
        "settimeofday": 170, "clock_settime": 112, "clock_adjtime": 266, "adjtimex": 171,
        "open_by_handle_at": 265, "name_to_handle_at": 264, "lookup_dcookie": 18,
        "sethostname": 161, "setdomainname": 162, "vhangup": 58,
        "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240,
        "pidfd_send_signal": 424, "seccomp": 277, "fcntl": 25, "ioctl": 29, "prlimit64": 261,
        "prctl": 167, "capset": 91, "close": 57, "dup3": 24, "close_range": 436,
    },
)  # fmt: skip

_ARCHES = {"x86_64": X86_64, "amd64": X86_64, "aarch64": AARCH64, "arm64": AARCH64}
_X86_ONLY = ("inotify_init", "iopl", "ioperm", "modify_ldt", "uselib")


def host_arch() -> Arch:
    machine = platform.machine().lower()
    arch = _ARCHES.get(machine)
    if arch is None:
        raise DependencyError(
            f"the container sandbox has no seccomp filter for this architecture ({machine})",
            hint="use the WASM backend: RLSTREAM_SANDBOX__BACKEND=wasm",
        )
    return arch


def refused_calls(arch: Arch) -> tuple[str, ...]:
    extra = tuple(n for n in _X86_ONLY if n in arch.numbers)
    return _REFUSED + extra


#: what the fork server's own filter lets through that the program's refuses: the server makes each
#: execution's namespaces (``unshare``) and its ``/tmp`` and ``/dev/shm`` (``mount``); every execution
#: installs the full :func:`program` over it before anything of the program runs
SERVER_ALLOWED = ("unshare", "mount")


def program(arch: Arch | None = None, *, server: bool = False) -> bytes:
    """The filter as bubblewrap reads it: an array of ``struct sock_filter`` (u16 code, u8 jt, u8 jf,
    u32 k), native byte order. ``server``: the fork server's (:data:`SERVER_ALLOWED` let through;
    the server runs only its own code)."""
    arch = arch or host_arch()
    n = arch.numbers
    # Instructions with symbolic jump targets, resolved by _assemble: ("label", name) marks a position.
    code: list[tuple[object, ...]] = [
        (LD_W_ABS, 0, 0, OFFSET_ARCH),
        (JEQ_K, 0, "kill", arch.audit),
        (LD_W_ABS, 0, 0, OFFSET_NR),
    ]
    if arch.x32:
        code.append((JGE_K, "eperm", 0, X32_SYSCALL_BIT))
    code += [
        (JEQ_K, "sockets", 0, n["socket"]),
        (JEQ_K, "sockets", 0, n["socketpair"]),
        (JEQ_K, "clone", 0, n["clone"]),
        (JEQ_K, "enosys", 0, n["clone3"]),
        (JEQ_K, "prlimit", 0, n["prlimit64"]),
    ]
    refused = [name for name in refused_calls(arch) if not (server and name in SERVER_ALLOWED)]
    code += [(JEQ_K, "eperm", 0, n[name]) for name in refused]
    code += [
        (RET_K, 0, 0, RET_ALLOW),
        ("label", "sockets"),
        (LD_W_ABS, 0, 0, OFFSET_ARG0),
        (JEQ_K, "allow", 0, AF_UNIX),
        (JEQ_K, "allow", 0, AF_INET),
        (JEQ_K, "allow", 0, AF_INET6),
        (RET_K, 0, 0, RET_ERRNO | EAFNOSUPPORT),
        ("label", "clone"),
        (LD_W_ABS, 0, 0, OFFSET_ARG0),
        (JSET_K, "eperm", 0, CLONE_NEW_MASK),
        (RET_K, 0, 0, RET_ALLOW),
        # prlimit64(pid, ...): a process's own limits only (pid 0, as setrlimit passes). Another process's
        # would let a child lower the program's RLIMIT_CPU or RLIMIT_FSIZE, and the kernel's SIGKILL or
        # SIGXFSZ at that limit is a signal no watch sees
        ("label", "prlimit"),
        (LD_W_ABS, 0, 0, OFFSET_ARG0),
        (JEQ_K, "allow", "eperm", 0),
        ("label", "allow"),
        (RET_K, 0, 0, RET_ALLOW),
        ("label", "eperm"),
        (RET_K, 0, 0, RET_ERRNO | EPERM),
        ("label", "enosys"),
        (RET_K, 0, 0, RET_ERRNO | ENOSYS),
        ("label", "kill"),
        (RET_K, 0, 0, RET_KILL_PROCESS),
    ]
    return _assemble(code)


def watch_program(arch: Arch | None = None) -> bytes:
    """The filter whose listener the host keeps: signals that may reach the jail's pid 1 (by pid, by
    its group, to every process, or by a thread id or a pidfd the host must look up), and every call
    that would close or replace a descriptor numbered as the channel's (:data:`CHANNEL_FDS`), wait for
    the host's answer; everything else is allowed here (the main filter decides the rest)."""
    arch = arch or host_arch()
    n = arch.numbers
    code: list[tuple[object, ...]] = [
        (LD_W_ABS, 0, 0, OFFSET_ARCH),
        (JEQ_K, 0, "allow", arch.audit),  # another architecture: the main filter kills it
        (LD_W_ABS, 0, 0, OFFSET_NR),
        (JEQ_K, "kill", 0, n["kill"]),
        (JEQ_K, "kill", 0, n["rt_sigqueueinfo"]),  # (tgid, sig, info): the shape of kill's
        (JEQ_K, "tgkill", 0, n["tgkill"]),
        (JEQ_K, "tgkill", 0, n["rt_tgsigqueueinfo"]),
        (JEQ_K, "ask", 0, n["tkill"]),  # (tid, sig): a thread of any process
        (JEQ_K, "ask", 0, n["pidfd_send_signal"]),  # (pidfd, sig, ...): the host reads the target
        (JEQ_K, "fcntl", 0, n["fcntl"]),
        (JEQ_K, "ioctl", 0, n["ioctl"]),
        (JEQ_K, "close", 0, n["close"]),
        *([(JEQ_K, "dup", 0, n["dup2"])] if "dup2" in n else []),  # aarch64 has dup3 alone
        (JEQ_K, "dup", 0, n["dup3"]),
        (JEQ_K, "close_range", 0, n["close_range"]),
        (RET_K, 0, 0, RET_ALLOW),
        # close(fd), dup2/dup3(old, new): a channel's descriptor closed or replaced (the kernel reads
        # an unsigned int: the low 32 bits) is the host's to decide; close_range(first, last, flags)
        # likewise when its range covers one of them (whatever its flags: CLOSE_RANGE_CLOEXEC would
        # close them at an exec)
        ("label", "close"),
        (LD_W_ABS, 0, 0, ARG[0]),
        (JGE_K, 0, "allow", CHANNEL_FDS[0]),
        (JGT_K, "allow", "notify", CHANNEL_FDS[-1]),
        ("label", "dup"),
        (LD_W_ABS, 0, 0, ARG[1]),
        (JGE_K, 0, "allow", CHANNEL_FDS[0]),
        (JGT_K, "allow", "notify", CHANNEL_FDS[-1]),
        ("label", "close_range"),
        (LD_W_ABS, 0, 0, ARG[0]),
        (JGT_K, "allow", 0, CHANNEL_FDS[-1]),
        (LD_W_ABS, 0, 0, ARG[1]),
        (JGE_K, "notify", "allow", CHANNEL_FDS[0]),
        # fcntl(fd, F_SETOWN, owner): SIGIO/SIGURG for a process or group. Any owner but 0 (none) is
        # the host's to decide: the kernel takes any thread id of pid 1 as pid 1 itself
        ("label", "fcntl"),
        (LD_W_ABS, 0, 0, ARG[1]),
        (JEQ_K, "notify", 0, F_SETOWN_EX),  # (fd, F_SETOWN_EX, struct *): the host reads it
        (JEQ_K, 0, "allow", F_SETOWN),
        (LD_W_ABS, 0, 0, ARG[2]),
        (JEQ_K, "allow", "notify", 0),
        ("label", "ioctl"),  # ioctl(fd, FIOSETOWN or SIOCSPGRP, int *): the host reads the owner
        (LD_W_ABS, 0, 0, ARG[1]),
        (JEQ_K, "notify", 0, FIOSETOWN),
        (JEQ_K, "notify", "allow", SIOCSPGRP),
        ("label", "kill"),  # kill(pid, sig): pid 1, 0 (its own group) or -1 (every process)
        (LD_W_ABS, 0, 0, ARG[1]),
        (JEQ_K, "allow", 0, 0),
        (LD_W_ABS, 0, 0, ARG[0]),
        (JEQ_K, "notify", 0, JAIL_INIT),
        (JEQ_K, "notify", 0, 0),
        (JEQ_K, "notify", "allow", 0xFFFFFFFF),
        ("label", "tgkill"),  # tgkill(tgid, tid, sig)
        (LD_W_ABS, 0, 0, ARG[2]),
        (JEQ_K, "allow", 0, 0),
        (LD_W_ABS, 0, 0, ARG[0]),
        (JEQ_K, "notify", "allow", JAIL_INIT),
        ("label", "ask"),  # tkill(tid, sig) / pidfd_send_signal(fd, sig, ...)
        (LD_W_ABS, 0, 0, ARG[1]),
        (JEQ_K, "allow", "notify", 0),
        ("label", "notify"),
        (RET_K, 0, 0, RET_USER_NOTIF),
        ("label", "allow"),  # jumps go forward only: the shared answers come last
        (RET_K, 0, 0, RET_ALLOW),
    ]
    return _assemble(code)


def _assemble(code: list[tuple[object, ...]]) -> bytes:
    """Instructions with symbolic jump targets (("label", name) marks a position) -> ``struct
    sock_filter`` array (u16 code, u8 jt, u8 jf, u32 k), native byte order."""
    labels: dict[object, int] = {}
    position = 0
    for ins in code:
        if ins[0] == "label":
            labels[ins[1]] = position
        else:
            position += 1
    out = bytearray()
    position = 0
    for ins in code:
        if ins[0] == "label":
            continue
        op, jt, jf, k = ins

        def offset(target: object, here: int = position) -> int:
            if isinstance(target, int):
                return target
            rel = labels[target] - here - 1
            if not 0 <= rel <= 255:
                raise ValueError(f"seccomp jump to {target} out of range ({rel})")
            return rel

        assert isinstance(op, int) and isinstance(k, int)
        out += struct.pack("=HBBI", op, offset(jt), offset(jf), k)
        position += 1
    return bytes(out)
