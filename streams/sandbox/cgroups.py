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


def _own_path(controller: str) -> str:
    """This process's cgroup path for a v1 controller ('' for v2: the 0:: line). Never guessed: a
    process that cannot read it (out of descriptors, say) must not create cgroups at the hierarchy's
    root instead of under its own."""
    try:
        text = Path("/proc/self/cgroup").read_text()
    except OSError as exc:
        raise DependencyError(f"cannot read this process's cgroup: {exc}") from exc
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _hid, ctrls, path = parts
        if (controller and controller in ctrls.split(",")) or (not controller and ctrls == ""):
            return path
    raise DependencyError(f"this process has no {controller or 'unified'} cgroup in /proc/self/cgroup")


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
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, str(pid).encode())
            finally:
                os.close(fd)

    def _read(self, path: Path) -> str:
        try:
            return path.read_text()
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
        kill = self.dirs[0] / "cgroup.kill"
        if self.version == 2 and kill.exists():
            with contextlib.suppress(OSError):
                kill.write_text("1")
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
    version = cgroup_version()
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
            (mem / "memory.limit_in_bytes").write_text(str(memory_bytes))
            memsw = mem / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                memsw.write_text(str(memory_bytes))
            if (mem / "memory.swappiness").exists():
                (mem / "memory.swappiness").write_text("0")
            (pids / "pids.max").write_text(str(pids_max))
            return Cgroup(version=1, dirs=[mem, pids], memory_dir=mem, pids_dir=pids)
        if version == 2:
            parent = ROOT / _own_path("").lstrip("/") / GROUP
            parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):
                (parent / "cgroup.subtree_control").write_text("+memory +pids")
            d = parent / name.split("/", 1)[1]
            d.mkdir()
            made.append(d)
            (d / "memory.max").write_text(str(memory_bytes))
            if (d / "memory.swap.max").exists():
                (d / "memory.swap.max").write_text("0")
            (d / "pids.max").write_text(str(pids_max))
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
