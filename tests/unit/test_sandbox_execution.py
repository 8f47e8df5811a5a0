"""What one container execution holds on the host (streams/sandbox/container.py ``_Execution``, shared
by the jail per execution and the fork server): whichever way a run ends, a leader still running is
killed with the rest of its cgroup before anything is closed, every descriptor the execution still
owns is closed exactly once (those handed over are left to their new owner), and the cgroup is
removed last; a missing cgroup fails the run only where the backend requires one."""

from __future__ import annotations

import os

import pytest

from schemas.errors import DependencyError
from streams.sandbox import cgroups
from streams.sandbox.container import _Execution
from streams.sandbox.limits import Limits, jail_exit_status


class _Group:
    def __init__(self, log: list[str]) -> None:
        self.log = log

    def kill_all(self) -> None:
        self.log.append("group.kill_all")

    def remove(self) -> None:
        self.log.append("group.remove")


class _Leader:
    def __init__(self, log: list[str], returncode: int | None) -> None:
        self.log, self.returncode = log, returncode

    def kill(self) -> None:
        self.log.append("leader.kill")

    def close(self) -> None:
        self.log.append("leader.close")


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


@pytest.mark.parametrize("returncode", [None, 0])
def test_a_run_that_fails_midway_kills_its_leader_then_closes_then_removes_its_cgroup(
    monkeypatch: pytest.MonkeyPatch, returncode: int | None
) -> None:
    log: list[str] = []
    monkeypatch.setattr(cgroups, "create", lambda memory, pids: _Group(log))
    ex = _Execution(Limits(), require_cgroup=True)
    made: list[int] = []

    def fail_midway() -> None:
        with ex:
            pipes, jail_end = ex.pipes(3)
            made.extend([*(fd for pair in pipes for fd in pair), jail_end])
            ex.leader = _Leader(log, returncode)
            ex.close(made[0])
            ex.release(made[1])  # handed over: its new owner closes it
            raise RuntimeError("the run failed")

    with pytest.raises(RuntimeError):
        fail_midway()
    running = ["leader.kill", "group.kill_all"] if returncode is None else []
    assert log == [*running, "leader.close", "group.remove"]
    assert ex.killed.is_set() == (returncode is None)
    assert ex.watch_host is None
    assert [_is_open(fd) for fd in made] == [False, True, False, False, False, False, False]
    os.close(made[1])


def test_a_missing_cgroup_fails_the_run_only_where_one_is_required(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(memory: int, pids: int) -> None:
        raise DependencyError("no cgroup")

    monkeypatch.setattr(cgroups, "create", missing)
    with pytest.raises(DependencyError):
        _Execution(Limits(), require_cgroup=True)
    with _Execution(Limits(), require_cgroup=False) as ex:
        assert ex.group is None
        ex.kill()  # nothing to kill yet: only marked
    assert ex.killed.is_set()


def test_a_signals_end_reads_the_same_whichever_process_reported_it() -> None:
    # the host's wait on a jail's bubblewrap it killed reads -9; a jail's program killed by a signal
    # reads 128 + the signal (bubblewrap's report, and the fork server keeper's): one reading for both
    assert jail_exit_status(-9) == jail_exit_status(137) == 137
    assert jail_exit_status(-24) == 152  # SIGXCPU, the CPU limit's
    assert [jail_exit_status(rc) for rc in (0, 1, 7, 255, None)] == [0, 1, 7, 255, None]
