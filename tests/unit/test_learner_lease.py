"""The run's learner lease: one holder at a time, freed by its holder's death, never taken by a probe."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

from learner.lease import LearnerLease, lease_holder, lease_path

HOLD = """
import sys, time
from pathlib import Path
from learner.lease import LearnerLease
lease = LearnerLease(Path(sys.argv[1]))
assert lease.try_acquire()
print("held", flush=True)
time.sleep(600)
"""


def test_one_holder_at_a_time_until_it_lets_go(tmp_path: Path) -> None:
    path = lease_path(tmp_path / "learner")
    active, standby = LearnerLease(path), LearnerLease(path)
    assert lease_holder(path) is None
    assert active.try_acquire()
    assert not standby.try_acquire()
    assert lease_holder(path) is not None  # this process
    assert active.try_acquire(), "the holder keeps it"
    active.release()
    assert lease_holder(path) is None
    assert standby.try_acquire()
    assert not active.try_acquire()
    standby.release()


def test_a_waiting_standby_gives_up_when_stopped(tmp_path: Path) -> None:
    path = lease_path(tmp_path)
    active = LearnerLease(path)
    assert active.try_acquire()
    stop = threading.Event()
    stop.set()
    assert not LearnerLease(path).acquire(stop)
    active.release()


def test_the_holders_death_by_sigkill_hands_the_lease_to_the_standby(tmp_path: Path) -> None:
    path = lease_path(tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, cwd=Path(__file__).parents[2]
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
        assert lease_holder(path) == holder.pid
        standby = LearnerLease(path, poll_s=0.01)
        assert not standby.try_acquire()
        got: list[bool] = []
        waiter = threading.Thread(target=lambda: got.append(standby.acquire(threading.Event())))
        waiter.start()
        holder.send_signal(signal.SIGKILL)
        holder.wait(30)
        waiter.join(30)
        assert got == [True]
        assert lease_holder(path) is not None and lease_holder(path) != holder.pid
        standby.release()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait(30)
