"""The contract processor as a worker process of its own (so that a test can kill it with SIGKILL):

    python -m tests.contract.worker transactional|faust BOOTSTRAP IN OUT NAME DELAY_S IDLE_S [EXPECT]

It runs until its input has been idle for IDLE_S seconds, then prints ``STATE <json>``: the task ids
its restored-and-updated state says it handled. With EXPECT (a count, optional), idle also needs the
state to name that many tasks, or no progress for :data:`STALL_S`: a worker restarted after a kill -9
on a loaded machine can hold its partitions for several seconds before it fetches one of them, and
exiting then would leave that partition's records unhandled by the test's doing, not the runtime's.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time

from infra.faust.runtime import FaustHosted, FaustRunner
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.state import State
from rlstream.settings import Settings
from rlstream.workers import Built, faust_runner
from tests.contract.relay import HANDLED, handled, relay

#: with EXPECT, how long a worker short of it may make no progress before it gives up (the test then
#: names what is missing)
STALL_S = 60.0


def _count(state: State) -> int:
    """How many tasks the state names; read while the runtime's loop may write it."""
    for _ in range(100):
        try:
            return len(handled(state))
        except RuntimeError:  # changed size while read: read again
            time.sleep(0.01)
    return -1


def _progress(runner: FaustRunner, hosted: FaustHosted, topic: str) -> str:
    """Per input partition, read while the runtime's loop runs: how far its records were handled (one
    past the unbroken run the runtime recorded as handled), a hole in that run, the partition's end as
    last fetched, and how many tasks the state names there. A worker stopped short of EXPECT thus says
    whether records never reached the processor (handled short of the end) or were handled and are
    missing from the state."""
    parts = []
    try:
        owned = [tp for tp in runner.app.consumer.assignment() if tp.topic == topic]
        for tp in sorted(owned, key=lambda tp: tp.partition):
            ledger, p = runner.app.handled, tp.partition
            parts.append(
                f"p{p} handled to {ledger.committable(tp.topic, p)} (hole {ledger.hole(tp.topic, p)})"
                f" of {runner.app.consumer.highwater(tp)}, state {len(hosted.state.keys(p, HANDLED))}"
            )
    except Exception as exc:  # read across threads: say what could not be read
        parts.append(f"({type(exc).__name__}: {exc})")
    return "; ".join(parts) or "no input partition assigned"


def main(
    runtime: str,
    bootstrap: str,
    topic_in: str,
    topic_out: str,
    name: str,
    delay_s: float,
    idle_s: float,
    expect: int = 0,
) -> None:
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s {runtime} %(levelname)s %(message)s")
    processor, _ = relay(name, topic_in, topic_out, delay_s=delay_s, defers=0)
    if runtime == "faust":
        runner = faust_runner(Settings(kafka={"bootstrap_servers": bootstrap}), bootstrap, [Built(processor)])
        hosted = runner.hosted[0]
        stop = threading.Event()

        def watch() -> None:
            last, since = (-1, -1), time.monotonic()
            while not stop.wait(0.5):
                now, seen = time.monotonic(), (runner.stats.consumed, _count(hosted.state))
                if seen != last or not hosted.assigned:
                    last, since = seen, now
                elif now - since >= idle_s and (seen[1] >= expect or now - since >= STALL_S):
                    logging.info(
                        "stopping: %d consumed, the state names %d of %d tasks; %s",
                        *seen,
                        expect,
                        _progress(runner, hosted, topic_in),
                    )
                    stop.set()

        threading.Thread(target=watch, daemon=True).start()
        runner.run(stop)
        print("STATE " + json.dumps(handled(hosted.state)), flush=True)
        return
    proc = TransactionalProcessor(processor, bootstrap=bootstrap)
    proc.start()
    idle_since = time.monotonic()
    try:
        while True:
            if proc.step() or not proc.assigned:
                idle_since = time.monotonic()
                continue
            quiet = time.monotonic() - idle_since
            if quiet >= idle_s and (_count(proc.state) >= expect or quiet >= STALL_S):
                break
        # before closing: a closed consumer has given its partitions, and their state, away
        print("STATE " + json.dumps(handled(proc.state)), flush=True)
    finally:
        proc.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], a[1], a[2], a[3], a[4], float(a[5]), float(a[6]), int(a[7]) if len(a) > 7 else 0)
