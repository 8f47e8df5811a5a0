"""Which process of several alike does a job: the one holding the job's lease, an exclusive lock on a
file (the learner of a run: :mod:`learner.lease`; a generator instance of a run:
:func:`rlstream.workers.worker_lease_path`).

A worker takes the lease after it has imported everything and built what it needs (a model, an engine),
and only then reads the log; a second process of the same job (a warm standby) waits on the lease,
ready. The kernel ends the lease when its holder's process ends, however it ends (SIGKILL included),
so the standby takes over within a poll of the lease and restores everything else from the log as any
restarted worker does: it only skips the start-up.

A holder never gives the lease up while it lives, so two processes never do the job at once, and no
zombie can exist: a process that still holds the lease (stalled, or paused) is never replaced, and one
that no longer holds it is gone. The lock is the kernel's, so a lease is for processes of one host (what
``rlstream run`` starts); a shared file system's locks may not hold the same promise.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from pathlib import Path
from typing import IO


class Lease:
    """The lease at ``path``, taken at most once by this object."""

    def __init__(self, path: Path, *, poll_s: float = 0.05) -> None:
        self.path = path
        self.poll_s = poll_s
        self._fh: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._fh is not None

    def try_acquire(self) -> bool:
        """Take the lease if nobody holds it; never waits."""
        if self._fh is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            return False
        # who holds it, for the runner (it starts a standby once the lease is held) and for operators
        fh.seek(0)
        fh.truncate()
        fh.write(json.dumps({"pid": os.getpid(), "since": time.time()}) + "\n")
        fh.flush()
        self._fh = fh
        return True

    def acquire(self, stop: threading.Event) -> bool:
        """Wait for the lease until ``stop`` is set; whether it is held."""
        while not stop.is_set():
            if self.try_acquire():
                return True
            stop.wait(self.poll_s)
        return False

    def release(self) -> None:
        """Give the lease up (a stopping worker, after its last commit)."""
        if self._fh is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def lease_holder(path: Path) -> int | None:
    """The pid of the process holding the lease at ``path`` (None: nobody, as far as can be told).

    Asks the lock itself (a shared lock that cannot be had means it is held), then reads who wrote the
    file; the probe never takes the lease from anybody, it only makes a taker's one attempt fail."""
    try:
        fh = path.open("r", encoding="utf-8")
    except FileNotFoundError:
        return None
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                return int(json.loads(fh.readline())["pid"])
            except (ValueError, KeyError, TypeError):
                return None  # held, its holder still writing who it is
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return None
