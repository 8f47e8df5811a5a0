"""Limits of one execution and the raw outcome every backend reports (pure data)."""

from __future__ import annotations

from dataclasses import dataclass, field

from streams.sandbox.config import SandboxConfig


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 10.0
    memory_mb: int = 512
    output_bytes: int = 64 * 1024
    #: container only: processes+threads, private /tmp size, largest file
    pids: int = 32
    tmpfs_mb: int = 16
    file_mb: int = 8

    @classmethod
    def from_config(
        cls, config: SandboxConfig, *, timeout_s: float | None = None, memory_mb: int | None = None
    ) -> Limits:
        return cls(
            timeout_s=timeout_s if timeout_s is not None else config.timeout_s,
            memory_mb=memory_mb if memory_mb is not None else config.memory_mb,
            output_bytes=config.output_bytes,
            pids=config.container_pids,
            tmpfs_mb=config.container_tmpfs_mb,
            file_mb=config.container_file_mb,
        )

    def key(self) -> str:
        return (
            f"t={self.timeout_s:g};m={self.memory_mb};o={self.output_bytes};p={self.pids};"
            f"tmp={self.tmpfs_mb};f={self.file_mb}"
        )


@dataclass(frozen=True)
class Policy:
    """What a backend's guest is told: the kinds its audit hook refuses, where it may read, which
    imports it reports (``route``), and a folder of extra modules to import from (``site``)."""

    block: tuple[str, ...]
    read_roots: tuple[str, ...]
    route: tuple[str, ...] = ()
    site: str = ""


@dataclass
class RawRun:
    """What one backend observed of one guest (the call interface's facts are its session's)."""

    backend: str
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    duration_s: float
    timed_out: bool = False
    #: the limit refused the guest memory: the container's cgroup counted an OOM kill, or the WASM
    #: store's limit refused a memory.grow (counted by the module's own rewritten grow, see growth.py)
    memory_exceeded: bool = False
    #: labels the backend itself saw: limits hit (output_limit, pids_limit, stack_overflow) and its
    #: walls refusing an action (WASM: filesystem, a path WASI refused)
    limit_labels: list[str] = field(default_factory=list)
    #: what the walls refused, as (kind, detail) records like the audit hook's
    wall_refusals: list[tuple[str, str]] = field(default_factory=list)
    #: the runtime stopped the program for another reason (a trap's words)
    trap: str | None = None
    #: WASM: opens refused because the guest held MAX_OPEN_FILES files
    open_files_refused: int = 0


def jail_exit_status(rc: int | None) -> int | None:
    """A jailed process's end as its run reports it: the exit code, or 128 + the signal that ended it.

    A jail reports its program's signal deaths that way (bubblewrap and the fork server's keeper
    both do), but the host's own kill of a jail of its own at the deadline, or for a flood, ends
    bubblewrap itself, which the host's wait reads as ``-signal``; read the same here, the same run
    reads the same status in either container mode (137 for a SIGKILL, from the host or from the
    kernel at the memory limit), as a shell would print it."""
    return 128 - rc if rc is not None and rc < 0 else rc
