"""Per-execution cgroups for the container backend (v1 hosts: memory + pids hierarchies; v2 hosts:
one unified directory). Created before the jail starts, read after it ends (so OOM kills and pid-limit
hits are *observed*, not guessed from an exit status), killed and removed afterwards."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from schemas.errors import DependencyError

ROOT = Path("/sys/fs/cgroup")
GROUP = "rlstream-sandbox"


def _write(path: Path, text: str) -> None:
    """One write to a control file (no text layer: a jail's cgroup files cost ~12 opens)."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _read_file(path: Path) -> str:
    """A control or counter file's whole text; raises OSError."""
    fd = os.open(path, os.O_RDONLY)
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode(errors="replace")


#: (pid, controller) -> this process's cgroup path: read once per process (a fork reads its own)
_OWN: dict[tuple[int, str], str] = {}


def _own_path(controller: str) -> str:
    """This process's cgroup path for a v1 controller ('' for v2: the 0:: line). Never guessed: a
    process that cannot read it (out of descriptors, say) must not create cgroups at the hierarchy's
    root instead of under its own."""
    key = (os.getpid(), controller)
    if key in _OWN:
        return _OWN[key]
    try:
        text = _read_file(Path("/proc/self/cgroup"))
    except OSError as exc:
        raise DependencyError(f"cannot read this process's cgroup: {exc}") from exc
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _hid, ctrls, path = parts
        if (controller and controller in ctrls.split(",")) or (not controller and ctrls == ""):
            _OWN[key] = path
            return path
    raise DependencyError(f"this process has no {controller or 'unified'} cgroup in /proc/self/cgroup")


#: pid -> the hierarchy's version, looked up once per process
_VERSION: dict[int, int | None] = {}


def _version() -> int | None:
    pid = os.getpid()
    if pid not in _VERSION:
        _VERSION[pid] = cgroup_version()
    return _VERSION[pid]


def cgroup_version() -> int | None:
    if (ROOT / "memory" / "memory.limit_in_bytes").exists() or (ROOT / "memory").is_dir():
        return 1 if (ROOT / "pids").is_dir() else None
    if (ROOT / "cgroup.controllers").exists():
        return 2
    return None


@dataclass
class Cgroup:
    """One execution's cgroup(s): ``procs`` files to join, counters to read, dirs to remove."""

    version: int
    dirs: list[Path]
    memory_dir: Path
    pids_dir: Path

    @property
    def procs_files(self) -> list[Path]:
        return [d / "cgroup.procs" for d in self.dirs]

    @property
    def join_files(self) -> list[Path]:
        """Where a (single-threaded) process is moved in. On v1 ``tasks`` moves just that thread,
        which skips the thread-group lock a ``cgroup.procs`` write takes; for a process with one
        thread the result is the same."""
        return [d / ("tasks" if self.version == 1 else "cgroup.procs") for d in self.dirs]

    def join(self, pid: int) -> None:
        """Move the single-threaded process ``pid`` (and so everything it starts) into this cgroup;
        raises OSError when it cannot be moved."""
        for path in self.join_files:
            _write(path, str(pid))

    def _read(self, path: Path) -> str:
        try:
            return _read_file(path)
        except OSError:
            return ""

    def _counter(self, path: Path, key: str) -> int:
        for line in self._read(path).splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == key:
                with contextlib.suppress(ValueError):
                    return int(parts[1])
        return 0

    def oom_killed(self) -> bool:
        if self.version == 1:
            return self._counter(self.memory_dir / "memory.oom_control", "oom_kill") > 0
        return self._counter(self.memory_dir / "memory.events", "oom_kill") > 0

    def memory_limit_hit(self) -> bool:
        if self.version == 1:
            try:
                return int(self._read(self.memory_dir / "memory.failcnt") or 0) > 0
            except ValueError:
                return False
        return self._counter(self.memory_dir / "memory.events", "max") > 0

    def pids_limit_hit(self) -> bool:
        return self._counter(self.pids_dir / "pids.events", "max") > 0

    def pids(self) -> list[int]:
        out: list[int] = []
        for f in self.procs_files:
            for line in self._read(f).split():
                with contextlib.suppress(ValueError):
                    out.append(int(line))
        return out

    def kill_all(self) -> None:
        """SIGKILL everything inside, until nothing is left (a fork bomb keeps forking while we
        kill; the pids limit bounds it)."""
        if self.version == 2:
            with contextlib.suppress(OSError):  # a kernel before 5.14 has no cgroup.kill
                _write(self.dirs[0] / "cgroup.kill", "1")
        for _ in range(200):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def remove(self) -> None:
        self.kill_all()
        for d in self.dirs:
            for _ in range(100):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def create(memory_bytes: int, pids_max: int) -> Cgroup:
    """A fresh cgroup with the memory (swap included) and pids limits set."""
    version = _version()
    name = f"{GROUP}/{os.getpid()}-{secrets.token_hex(6)}"
    made: list[Path] = []
    try:
        if version == 1:
            mem = ROOT / "memory" / _own_path("memory").lstrip("/") / name
            pids = ROOT / "pids" / _own_path("pids").lstrip("/") / name
            mem.mkdir(parents=True)
            made.append(mem)
            pids.mkdir(parents=True)
            made.append(pids)
            _write(mem / "memory.limit_in_bytes", str(memory_bytes))
            with contextlib.suppress(FileNotFoundError):  # a kernel without swap accounting
                _write(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
            with contextlib.suppress(FileNotFoundError):
                _write(mem / "memory.swappiness", "0")
            _write(pids / "pids.max", str(pids_max))
            return Cgroup(version=1, dirs=[mem, pids], memory_dir=mem, pids_dir=pids)
        if version == 2:
            parent = ROOT / _own_path("").lstrip("/") / GROUP
            parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):
                _write(parent / "cgroup.subtree_control", "+memory +pids")
            d = parent / name.split("/", 1)[1]
            d.mkdir()
            made.append(d)
            _write(d / "memory.max", str(memory_bytes))
            with contextlib.suppress(FileNotFoundError):  # a kernel without swap accounting
                _write(d / "memory.swap.max", "0")
            _write(d / "pids.max", str(pids_max))
            return Cgroup(version=2, dirs=[d], memory_dir=d, pids_dir=d)
    except OSError as exc:
        for d in reversed(made):  # nothing half-made is left behind
            with contextlib.suppress(OSError):
                d.rmdir()
        raise DependencyError(
            f"cannot create a cgroup for the container sandbox: {exc}",
            hint="run as root or in a delegated cgroup (systemd-run --user --scope -p Delegate=yes), "
            "or set RLSTREAM_SANDBOX__CONTAINER_REQUIRE_CGROUP=false to rely on rlimits only",
        ) from exc
    raise DependencyError(
        "no cgroup memory/pids controllers are mounted under /sys/fs/cgroup",
        hint="mount cgroup v2 (or v1 memory and pids), or set "
        "RLSTREAM_SANDBOX__CONTAINER_REQUIRE_CGROUP=false to rely on rlimits only",
    )
