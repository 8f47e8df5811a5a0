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


@dataclass
class RawRun:
    """What one backend observed while running one job (before the channel is interpreted)."""

    backend: str
    exit_code: int | None
    stdout: bytes
    stderr: bytes
    frames: list[bytes]
    duration_s: float
    timed_out: bool = False
    memory_exceeded: bool = False
    #: limits the backend itself saw hit: output_limit, pids_limit, file_size_limit, stack_overflow, ...
    limit_labels: list[str] = field(default_factory=list)
    #: the runtime stopped the program for another reason (a trap's words)
    trap: str | None = None
