"""The container jail's walls below the audit hook, and the host around both backends.

A program in the jail may start processes, so the hook (an in-process courtesy) is no wall: each
refusal here is tested from a child interpreter the program starts, which has no hook at all, so
what stops it is the seccomp filter, the namespaces or the limits. Also: /dev (three devices,
read-only) and /dev/shm's cap, that there is no /proc, one guest starving another of descriptors,
descriptors above 1024, and terminal escapes in the CLI's plain output."""

from __future__ import annotations

import contextlib
import json
import os
import random
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from streams.sandbox import ExecutionResult, Limits, Sandbox, seccomp
from streams.sandbox.cgroups import GROUP, ROOT, cgroup_version
from streams.sandbox.wasm import MAX_OPEN_FILES

LIMITS = Limits(timeout_s=4.0, memory_mb=256, output_bytes=64 * 1024, pids=24, tmpfs_mb=4, file_mb=2)
ARCH = seccomp.host_arch()
NR = ARCH.numbers
EPERM, EAFNOSUPPORT = 1, 97

#: families the filter refuses (sockets it refuses with EAFNOSUPPORT), and some it allows
REFUSED_FAMILIES = {
    "AF_VSOCK": 40, "AF_NETLINK": 16, "AF_PACKET": 17, "AF_BLUETOOTH": 31, "AF_ALG": 38, "AF_KEY": 15,
    "AF_APPLETALK": 5, "AF_CAN": 29, "AF_TIPC": 30, "AF_RDS": 21, "AF_XDP": 44, "AF_X25": 9,
}  # fmt: skip
ALLOWED_FAMILIES = {"AF_UNIX": 1, "AF_INET": 2, "AF_INET6": 10}
SOCKET_TYPES = (1, 2, 3, 5)  # stream, datagram, raw, seqpacket
CLONE_NEW = {
    "newuser": 0x10000000, "newns": 0x00020000, "newnet": 0x40000000, "newpid": 0x20000000,
    "newipc": 0x08000000, "newuts": 0x04000000, "newcgroup": 0x02000000,
}  # fmt: skip

#: a child interpreter (no audit hook) that makes raw system calls and prints their outcomes
PROBE = """
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
calls = json.loads(sys.argv[1])
out = {}
for name, nr, args in calls:
    ctypes.set_errno(0)
    buf = ctypes.create_string_buffer(256)
    real = [ctypes.addressof(buf) if a == "buf" else a for a in args]
    r = libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in real])
    out[name] = [int(r), ctypes.get_errno()]
    if r >= 0 and name.startswith(("socket", "inotify", "userfaultfd", "io_uring", "bpf", "perf")):
        os.close(r)
print("PROBE" + json.dumps(out))
"""


def probe(sandbox: Sandbox, calls: list[tuple[str, int, list[object]]]) -> dict[str, tuple[int, int]]:
    """Run the calls from a hook-free child interpreter in the jail: name -> (return, errno)."""
    program = (
        "import subprocess, sys\n"
        f"r = subprocess.run([sys.executable, '-I', '-c', {PROBE!r}, {json.dumps(calls)!r}],\n"
        "                   capture_output=True, text=True)\n"
        "print(r.stdout, r.stderr)\n"
    )
    r = sandbox.run_script(program, limits=LIMITS, backend="container")
    assert r.infra_error is None, r.infra_error
    line = next((x for x in r.stdout.splitlines() if x.strip().startswith("PROBE")), None)
    assert line is not None, (r.stdout, r.stderr)
    return {k: (v[0], v[1]) for k, v in json.loads(line.strip()[5:]).items()}


def test_the_jail_refuses_socket_families_beyond_unix_and_ip(sandbox: Sandbox) -> None:
    rng = random.Random(14)
    calls: list[tuple[str, int, list[object]]] = []
    for name, fam in {**REFUSED_FAMILIES, **ALLOWED_FAMILIES}.items():
        for kind in rng.sample(SOCKET_TYPES, 2):
            calls.append((f"socket:{name}:{kind}", NR["socket"], [fam, kind, 0]))
        calls.append((f"socketpair:{name}", NR["socketpair"], [fam, 1, 0, "buf"]))
    got = probe(sandbox, calls)
    for key, (rc, err) in got.items():
        family = key.split(":")[1]
        if family in REFUSED_FAMILIES:
            assert (rc, err) == (-1, EAFNOSUPPORT), (key, rc, err)
    # the families a program may use still work (inside an empty network namespace)
    assert (
        got["socket:AF_UNIX:1" if "socket:AF_UNIX:1" in got else next(k for k in got if "AF_UNIX" in k)][0]
        >= 0
    )


def test_the_jail_refuses_new_namespaces_of_every_kind(sandbox: Sandbox) -> None:
    calls: list[tuple[str, int, list[object]]] = [
        (f"unshare:{k}", NR["unshare"], [v]) for k, v in CLONE_NEW.items()
    ]
    calls += [(f"clone:{k}", NR["clone"], [v | 17, 0, 0, 0, 0]) for k, v in CLONE_NEW.items()]  # 17: SIGCHLD
    calls += [("setns", NR["setns"], [0, 0]), ("clone3", NR["clone3"], ["buf", 88])]
    got = probe(sandbox, calls)
    for key, (rc, err) in got.items():
        assert rc == -1 and err in (EPERM, 38), (key, rc, err)  # 38: ENOSYS (clone3 falls back)
    r = sandbox.run_script(
        "import subprocess\n"
        "print(subprocess.run(['unshare', '-Ur', 'id'], capture_output=True, text=True))\n",
        limits=LIMITS,
        backend="container",
    )
    assert "uid=0" not in r.stdout and "returncode=0" not in r.stdout, r.stdout


def test_the_jail_refuses_reaching_other_processes(sandbox: Sandbox) -> None:
    calls: list[tuple[str, int, list[object]]] = [
        ("ptrace:attach-init", NR["ptrace"], [16, 1, 0, 0]),  # PTRACE_ATTACH to pid 1
        ("ptrace:seize-parent", NR["ptrace"], [0x4206, os.getppid(), 0, 0]),
        ("ptrace:traceme", NR["ptrace"], [0, 0, 0, 0]),
        ("process_vm_readv", NR["process_vm_readv"], [1, "buf", 1, "buf", 1, 0]),
        ("process_vm_writev", NR["process_vm_writev"], [1, "buf", 1, "buf", 1, 0]),
        ("kcmp", NR["kcmp"], [1, 1, 0, 0, 0]),
        ("pidfd_getfd", NR["pidfd_getfd"], [0, 0, 0]),
    ]
    for key, (rc, err) in probe(sandbox, calls).items():
        assert (rc, err) == (-1, EPERM), (key, rc, err)


def test_the_jail_refuses_file_watches_and_the_kernels_larger_surfaces(sandbox: Sandbox) -> None:
    names: list[tuple[str, list[object]]] = [
        ("inotify_init1", [0]), ("inotify_add_watch", [3, "buf", 0xFFF]), ("fanotify_init", [0, 0]),
        ("fanotify_mark", [3, 1, 0xFFF, -100, "buf"]), ("bpf", [0, "buf", 16]),
        ("perf_event_open", ["buf", 0, -1, -1, 0]), ("userfaultfd", [0]), ("io_uring_setup", [4, "buf"]),
        ("keyctl", [0, 0, 0]), ("add_key", ["buf", "buf", 0, 0, -3]), ("request_key", ["buf", "buf", 0, 0]),
        ("mount", ["buf", "buf", "buf", 0, 0]), ("umount2", ["buf", 0]), ("chroot", ["buf"]),
        ("pivot_root", ["buf", "buf"]), ("init_module", [0, 0, "buf"]), ("kexec_load", [0, 0, 0, 0]),
        ("syslog", [10, 0, 0]), ("acct", [0]), ("swapoff", ["buf"]), ("settimeofday", [0, 0]),
        ("clock_settime", [0, "buf"]), ("open_by_handle_at", [3, "buf", 0]), ("sethostname", ["buf", 1]),
        ("vhangup", []),
    ]  # fmt: skip
    if ARCH is seccomp.X86_64:
        names += [("inotify_init", []), ("iopl", [3]), ("ioperm", [0, 1, 1]), ("modify_ldt", [0, "buf", 16])]
    calls: list[tuple[str, int, list[object]]] = [(n, NR[n], a) for n, a in names]
    for key, (rc, err) in probe(sandbox, calls).items():
        assert (rc, err) == (-1, EPERM), (key, rc, err)


SIGUSR2 = 12


def test_signals_aimed_at_the_program_are_refused_and_labelled_whoever_sends_them(sandbox: Sandbox) -> None:
    # pid 1 is the program's own process; 0 its group; -1 every process
    calls: list[tuple[str, int, list[object]]] = [
        ("kill:init", NR["kill"], [1, SIGUSR2]),
        ("kill:group", NR["kill"], [0, SIGUSR2]),
        ("kill:everyone", NR["kill"], [-1, SIGUSR2]),
        ("tgkill:init", NR["tgkill"], [1, 1, SIGUSR2]),
        ("tkill:init", NR["tkill"], [1, SIGUSR2]),
        ("rt_sigqueueinfo:init", NR["rt_sigqueueinfo"], [1, SIGUSR2, "buf"]),
        ("rt_tgsigqueueinfo:init", NR["rt_tgsigqueueinfo"], [1, 1, SIGUSR2, "buf"]),
        # an owner for SIGIO/SIGURG is a signal to come: pid 1 or its group
        ("fcntl:setown-init", NR["fcntl"], [0, 8, 1]),
        ("fcntl:setown-group", NR["fcntl"], [0, 8, -1]),
    ]
    for key, (rc, err) in probe(sandbox, calls).items():
        assert (rc, err) == (-1, EPERM), (key, rc, err)
    r = sandbox.run_script(
        "import subprocess, sys\n"
        "code = 'import os, signal; signal.pidfd_send_signal(os.pidfd_open(os.getppid()), 12)'\n"
        "print(subprocess.run([sys.executable, '-I', '-c', code], capture_output=True, text=True))\n"
        "shell = ['sh', '-c', 'kill -USR2 1 && echo delivered']\n"
        "print(subprocess.run(shell, capture_output=True, text=True))\n",
        limits=LIMITS,
        backend="container",
    )
    assert r.violations == ("signal",), (r.violations, r.stdout)
    assert "PermissionError" in r.stdout and "stdout='delivered" not in r.stdout, r.stdout
    assert any("pidfd_send_signal" in d for _, d in r.refusals) and any("kill(1" in d for _, d in r.refusals)


def test_signals_to_the_programs_own_children_pass_unlabelled(sandbox: Sandbox) -> None:
    r = sandbox.run_script(
        "import multiprocessing as mp, os, signal, subprocess, sys\n"
        "p = subprocess.Popen(['sleep', '5']); p.terminate(); print('terminated', p.wait())\n"
        "q = subprocess.Popen(['sleep', '5'])\n"
        "signal.pidfd_send_signal(os.pidfd_open(q.pid), signal.SIGKILL); print('pidfd', q.wait())\n"
        "code = 'import os; os.kill(os.getppid(), 0); print(1)'\n"  # an existence test delivers nothing
        "print('probe', subprocess.run([sys.executable, '-I', '-c', code], capture_output=True).returncode)\n"
        "with mp.get_context('spawn').Pool(2) as pool:\n"
        "    print(pool.map(abs, [-1, -2]))\n",
        limits=LIMITS,
        backend="container",
    )
    assert r.exit_code == 0 and r.violations == (), (r.violations, r.stdout, r.stderr)
    assert r.stdout.split() == ["terminated", "-15", "pidfd", "-9", "probe", "0", "[1,", "2]"], r.stdout


def test_the_jail_holds_nothing_of_the_host_or_of_other_jails(sandbox: Sandbox) -> None:
    # asked from a child interpreter, which has no audit hook: what answers is the jail's own view.
    # It has no /proc: a procfs showed the host's mount sources (/proc/self/mountinfo), its memory,
    # kernel and CPUs, and answered os.stat/os.readlink probes no audit event reports.
    child = (
        "import os, json\n"
        "seen = {'proc': os.path.exists('/proc'), 'read': [], 'fds': 0}\n"
        "for p in ('/proc/self/mountinfo', '/proc/1/cmdline', '/proc/meminfo', '/proc/self/exe'):\n"
        "    try:\n"
        "        seen['read'].append(os.readlink(p) if p.endswith('exe') else open(p).read()[:80])\n"
        "    except OSError:\n"
        "        pass\n"
        "print('OUT' + json.dumps(seen))\n"
    )
    program = (
        "import json, os, subprocess, sys\n"
        f"r = subprocess.run([sys.executable, '-I', '-c', {child!r}], capture_output=True, text=True)\n"
        "print(r.stdout, r.stderr)\n"
        "def _open(fd):\n"
        "    try:\n"
        "        os.fstat(fd)\n"
        "        return True\n"
        "    except OSError:\n"
        "        return False\n"
        "print('FDS', sum(_open(fd) for fd in range(256)))\n"
    )
    results: list[tuple[dict[str, object], int]] = []

    def one() -> None:
        r = sandbox.run_script(program, limits=LIMITS, backend="container")
        lines = [x.strip() for x in r.stdout.splitlines()]
        out = next((x for x in lines if x.startswith("OUT")), None)
        fds = next((x for x in lines if x.startswith("FDS")), None)
        assert out is not None and fds is not None, (r.stdout, r.stderr)
        results.append((json.loads(out[3:]), int(fds.split()[1])))

    threads = [threading.Thread(target=one) for _ in range(2)]  # two jails at once
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 2, results  # an assertion in a thread is not lost
    for seen, fds in results:
        assert seen["proc"] is False and seen["read"] == [], seen
        # stdin closed, stdout, stderr and the three pipes of its own job: nothing of another jail's
        assert fds <= 8, fds


def _descendants(pid: int) -> dict[int, dict[str, str]]:
    """Every living descendant of ``pid``: its ``/proc/<pid>/status`` fields (as the host sees them)."""
    parent: dict[int, int] = {}
    status: dict[int, dict[str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = dict(
                line.split(":", 1) for line in (entry / "status").read_text().splitlines() if ":" in line
            )
            status[int(entry.name)] = {k: v.strip() for k, v in fields.items()}
            parent[int(entry.name)] = int(fields["PPid"])
    out: dict[int, dict[str, str]] = {}
    frontier = [pid]
    while frontier:
        p = frontier.pop()
        for child, ppid in parent.items():
            if ppid == p and child not in out:
                out[child] = status[child]
                frontier.append(child)
    return out


@pytest.mark.skipif(os.geteuid() != 0, reason="the jail drops to nobody only when its host runs as root")
def test_every_process_of_a_jail_started_by_root_is_the_hosts_nobody(sandbox: Sandbox) -> None:
    # inside, bubblewrap's user namespace makes any uid look like 65534; what matters is the uid outside,
    # which decides whose files the jail could touch if it reached them: the host's nobody, no groups
    done: list[object] = []
    job = threading.Thread(
        target=lambda: done.append(
            sandbox.run_script("import time\ntime.sleep(2)\n", limits=LIMITS, backend="container")
        )
    )
    job.start()
    jailed: dict[int, dict[str, str]] = {}
    while job.is_alive():
        for pid, st in _descendants(os.getpid()).items():
            if st["Name"] == "bwrap":  # the jail: bubblewrap and all it starts
                jailed |= {pid: st, **_descendants(pid)}
        time.sleep(0.05)
    job.join()
    assert done and not getattr(done[0], "infra_error", None), done
    assert {st["Name"] for st in jailed.values()} >= {"bwrap", "python3"}, jailed
    for pid, st in jailed.items():
        assert st["Uid"].split() == ["65534"] * 4, (pid, st["Name"], st["Uid"])
        assert st["Gid"].split() == ["65534"] * 4, (pid, st["Name"], st["Gid"])
        assert st["Groups"] == "", (pid, st["Name"], st["Groups"])


def _in_child(sandbox: Sandbox, child: str) -> ExecutionResult:
    """Run ``child`` in an interpreter the jailed program starts (it inherits the program's jail and
    limits, and no audit hook stands between it and the system); the program prints what it printed."""
    program = (
        "import subprocess, sys\n"
        f"r = subprocess.run([sys.executable, '-I', '-c', {child!r}], capture_output=True, text=True)\n"
        "print(r.stdout, r.stderr)\n"
    )
    r = sandbox.run_script(program, limits=LIMITS, backend="container")
    assert r.infra_error is None, r.infra_error
    return r


def test_dev_shm_is_capped_like_tmp(sandbox: Sandbox) -> None:
    code = (
        "import os\n"
        "total = 0\n"
        "try:\n"
        "    for i in range(100):\n"
        "        with open(f'/dev/shm/f{i}', 'wb') as f:\n"
        "            f.write(b'x' * (1536 << 10))\n"
        "        total += 1536 << 10\n"
        "except OSError as exc:\n"
        "    print('STOPPED', exc.errno, total)\n"
    )
    r = sandbox.run_script(code, limits=LIMITS, backend="container")
    assert "STOPPED 28" in r.stdout, (r.stdout, r.stderr)  # ENOSPC: the tmpfs is full
    assert int(r.stdout.split()[-1]) <= LIMITS.tmpfs_mb << 20


def test_dev_holds_the_readable_devices_and_is_read_only(sandbox: Sandbox) -> None:
    # from a child interpreter: no audit hook between it and /dev
    child = (
        "import os\n"
        "print('DEV', sorted(os.listdir('/dev')))\n"
        "try:\n"
        "    open('/dev/planted', 'wb').close()\n"
        "except OSError as exc:\n"
        "    print('REFUSED', exc.errno)\n"
        "with open('/dev/null', 'wb') as f:\n"
        "    f.write(b'x')\n"
        "with open('/dev/urandom', 'rb') as f, open('/dev/zero', 'rb') as z:\n"
        "    print('READ', len(f.read(4)), z.read(2))\n"
    )
    r = _in_child(sandbox, child)
    assert "DEV ['null', 'shm', 'urandom', 'zero']" in r.stdout, (r.stdout, r.stderr)
    assert "REFUSED 30" in r.stdout, (r.stdout, r.stderr)  # EROFS
    assert "READ 4 b'\\x00\\x00'" in r.stdout, (r.stdout, r.stderr)


def test_the_program_and_its_children_run_under_the_jails_resource_limits(sandbox: Sandbox) -> None:
    # read from a child interpreter (it inherits the program's limits, and no hook stands between it
    # and getrlimit): CPU = timeout + 1 s, file size, no core files, 256 descriptors, soft = hard
    child = (
        "import resource as r\n"
        "kinds = (r.RLIMIT_CPU, r.RLIMIT_FSIZE, r.RLIMIT_CORE, r.RLIMIT_NOFILE)\n"
        "print('LIMITS', [r.getrlimit(k) for k in kinds])\n"
    )
    r = _in_child(sandbox, child)
    want = [(5, 5), (2 << 20, 2 << 20), (0, 0), (256, 256)]
    assert f"LIMITS {want}" in r.stdout, (r.stdout, r.stderr)


def _own_cgroup_children() -> list[Path]:
    """This process's sandbox cgroups still on disk."""
    if cgroup_version() != 1:
        parent = ROOT / Path("/proc/self/cgroup").read_text().split("0::", 1)[1].strip().lstrip("/") / GROUP
        return list(parent.glob(f"{os.getpid()}-*")) if parent.is_dir() else []
    found: list[Path] = []
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, ctrls, path = line.split(":", 2)
        for ctrl in ("memory", "pids"):
            if ctrl in ctrls.split(","):
                d = ROOT / ctrl / path.lstrip("/") / GROUP
                found += list(d.glob(f"{os.getpid()}-*")) if d.is_dir() else []
    return found


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_descriptor_hungry_wasm_guest_cannot_starve_a_container_job(sandbox: Sandbox) -> None:
    hungry = (
        "import time\n"
        "files = []\n"
        "try:\n"
        "    while True:\n"
        "        files.append(open('/usr/local/lib/python315.zip', 'rb'))\n"
        "except OSError as exc:\n"
        "    print('HELD', len(files), exc.errno)\n"
        "time.sleep(2.5)\n"
    )
    before = _open_fds()
    peak: list[int] = []
    out: dict[str, object] = {}

    def run_hungry() -> None:
        out["wasm"] = sandbox.run_script(hungry, limits=Limits(timeout_s=6.0), backend="wasm")

    def watch() -> None:
        while "wasm" not in out:
            peak.append(_open_fds())
            time.sleep(0.05)

    threads = [threading.Thread(target=run_hungry), threading.Thread(target=watch)]
    for t in threads:
        t.start()
    time.sleep(0.5)  # the guest holds its files now
    t0 = time.perf_counter()
    stuck = sandbox.run_script("while True:\n    pass\n", limits=Limits(timeout_s=2.0), backend="container")
    took = time.perf_counter() - t0
    for t in threads:
        t.join()
    wasm = out["wasm"]
    assert f"HELD {MAX_OPEN_FILES - 1}" in wasm.stdout or f"HELD {MAX_OPEN_FILES}" in wasm.stdout, wasm  # type: ignore[attr-defined]
    assert max(peak) - before <= MAX_OPEN_FILES + 24, (before, max(peak))
    assert stuck.timed_out and stuck.infra_error is None
    assert took < 2.0 + 2.0, took  # stopped at its own deadline, whatever the other guest does
    assert _own_cgroup_children() == []


@contextlib.contextmanager
def descriptors_above(n: int) -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < n + 256:
        pytest.fail(f"the hard descriptor limit {hard} is below {n + 256}", pytrace=False)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, n + 256), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(n)]
    try:
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_container_jobs_run_and_stop_with_descriptors_above_1024(sandbox: Sandbox) -> None:
    with descriptors_above(1100):
        ok = sandbox.run_cases(
            "def f(x):\n    return x * 2\n", "f", ["(21,)"], limits=LIMITS, backend="container"
        )
        assert ok.infra_error is None and ok.cases[0].result_repr == "42"
        t0 = time.perf_counter()
        stuck = sandbox.run_script(
            "import time\ntime.sleep(60)\n", limits=Limits(timeout_s=1.5), backend="container"
        )
        assert stuck.timed_out and time.perf_counter() - t0 < 1.5 + 2.0
    assert _own_cgroup_children() == []


ESCAPES = {
    "osc52-clipboard": "\x1b]52;c;cm0gLXJmIH4K\x07",
    "title": "\x1b]0;all tests passed\x07",
    "overwrite": "FAILED\r\x1b[Kall 164 tests passed",
    "c1-csi": "\x9b31m",
    "bidi": "\u202eok\u202c",
}


def test_plain_cli_output_shows_terminal_controls_instead_of_obeying_them(tmp_path: Path) -> None:
    program = tmp_path / "p.py"
    body = "".join(f"print({v!r})\nimport sys; sys.stderr.write({v!r} + '\\n')\n" for v in ESCAPES.values())
    program.write_text(body)
    cli = Path(sys.executable).parent / "rlstream"
    proc = subprocess.run(
        [str(cli), "sandbox", "exec", str(program), "--backend", "wasm"],
        capture_output=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    shown = proc.stdout.decode() + proc.stderr.decode()
    for raw in ("\x1b", "\x07", "\r", "\x9b", "\u202e"):
        assert raw not in shown, (raw, shown)
    assert "\\x1b]52;c;" in shown and "\\x0d\\x1b[K" in shown and "\\u202e" in shown
    json_out = subprocess.run(
        [str(cli), "sandbox", "exec", str(program), "--backend", "wasm", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (
        ESCAPES["title"] in json.loads(json_out.stdout)["stdout"]
    )  # JSON carries the bytes, escaped by JSON
