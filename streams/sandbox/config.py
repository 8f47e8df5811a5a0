"""Configuration of the sandbox (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

BackendName = Literal["wasm", "container", "auto"]


class SandboxConfig(BaseModel):
    model_config = {"frozen": True}

    #: which backend runs programs: ``auto`` tries WASM and falls back to the container only for
    #: programs WASI cannot run (threads, subprocesses, modules the WASI build lacks)
    backend: BackendName = "auto"
    #: wall-clock limit of one execution (all cases of one sample together), seconds
    timeout_s: float = Field(default=10.0, gt=0, le=3600)
    #: memory limit of one execution, MiB (WASM linear memory; the container's cgroup)
    memory_mb: int = Field(default=512, ge=32, le=65536)
    #: stdout and stderr are each kept up to this many bytes; the rest is dropped and labelled
    output_bytes: int = Field(default=64 * 1024, ge=1024, le=64 * 1024 * 1024)
    #: where the runtime artifact, the compiled module and the result cache live;
    #: None: ``<RLSTREAM_HOME>/cache/sandbox`` (filled in by the composition root)
    cache_dir: Path | None = None
    #: worker processes of the pool; 0 = one per CPU core
    workers: int = Field(default=0, ge=0, le=512)
    #: results kept by the in-memory content-hash cache (0 disables it)
    result_cache_entries: int = Field(default=65536, ge=0)
    #: and the memory they may take, MiB (a probe run's result holds hundreds of cases)
    result_cache_mb: int = Field(default=256, ge=0)
    #: the interpreter the container backend runs inside the jail (bound read-only from the host)
    container_python: str = "/usr/bin/python3"
    #: the container's private /tmp, MiB (a tmpfs with a size; nothing else is writable)
    container_tmpfs_mb: int = Field(default=16, ge=1, le=4096)
    #: the most processes+threads one container execution may hold (cgroup pids.max)
    container_pids: int = Field(default=32, ge=4, le=4096)
    #: the largest file a container execution may write (RLIMIT_FSIZE), MiB
    container_file_mb: int = Field(default=8, ge=1, le=4096)
    #: refuse to run the container backend without cgroup memory/pids limits (else rlimits only)
    container_require_cgroup: bool = True
    #: run container executions in one long-lived jail that forks each of them, with namespaces,
    #: cgroup, rlimits, /tmp and seccomp filter of its own (README.md, *The fork server*): ~3x less CPU
    #: per execution than a jail each; off (a jail each) where a user namespace may not hold
    #: capabilities
    container_fork_server: bool = True
