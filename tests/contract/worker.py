"""The contract processor as a worker process of its own (so that a test can kill it with SIGKILL):

    python -m tests.contract.worker transactional|faust BOOTSTRAP IN OUT NAME DELAY_S IDLE_S [EXPECT]

It runs until its input has been idle for IDLE_S seconds, then prints ``STATE <json>``: the task ids
its restored-and-updated state says it handled. With EXPECT (a count, optional), idle also needs the
state to name that many tasks, or no progress for :data:`STALL_S`: a worker restarted after a kill -9
on a loaded machine can hold its partitions for several seconds before it fetches one of them, and
exiting then would leave that partition's records unhandled by the test's doing, not the runtime's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
import time
import traceback
from typing import Any

from infra.faust.runtime import FaustHosted, FaustRunner
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.state import State
from rlstream.settings import Settings
from rlstream.workers import Built, faust_runner
from tests.contract.relay import HANDLED, handled, relay

#: with EXPECT, how long a worker short of it may make no progress before it gives up (the test then
#: names what is missing)
STALL_S = 60.0
#: how long without progress, short of EXPECT, before the worker logs where its event loops and threads
#: are waiting (once per stall)
SNAPSHOT_S = 20.0


def _count(state: State) -> int:
    """How many tasks the state names; read while the runtime's loop may write it."""
    for _ in range(100):
        try:
            return len(handled(state))
        except RuntimeError:  # changed size while read: read again
            time.sleep(0.01)
    return -1


def _progress(runner: FaustRunner, hosted: FaustHosted, topic: str) -> str:
    """Per input partition, read while the runtime's loop runs: which of its records were handled (from
    where this assignment started, the committed offset, to one past the unbroken run the runtime
    recorded as handled), a hole in that run, the partition's end as last fetched, and how many tasks the
    state names there. A worker stopped short of EXPECT thus says whether records never reached the
    processor (handled short of the end; from S to S: none at all) or were handled and are missing from
    the state."""
    parts = []
    try:
        owned = [tp for tp in runner.app.consumer.assignment() if tp.topic == topic]
        for tp in sorted(owned, key=lambda tp: tp.partition):
            ledger, p = runner.app.handled, tp.partition
            parts.append(
                f"p{p} handled from {ledger.since(tp.topic, p)} to {ledger.committable(tp.topic, p)}"
                f" (hole {ledger.hole(tp.topic, p)})"
                f" of {runner.app.consumer.highwater(tp)}, state {len(hosted.state.keys(p, HANDLED))}"
            )
    except Exception as exc:  # read across threads: say what could not be read
        parts.append(f"({type(exc).__name__}: {exc})")
    return "; ".join(parts) or "no input partition assigned"


def _frames(where: list[tuple[str, int, str]], depth: int = 4) -> str:
    """The innermost ``depth`` of (file, line, function), innermost first."""
    return " < ".join(f"{path.rsplit('/', 2)[-1]}:{line} {name}" for path, line, name in where[::-1][:depth])


#: a coroutine's, generator's or async generator's frame, and what it awaits
_FRAME, _AWAITS = ("cr_frame", "gi_frame", "ag_frame"), ("cr_await", "gi_yieldfrom", "ag_await")


def _awaiting(task: asyncio.Task[Any]) -> list[tuple[str, int, str]]:
    """Where a task waits: its coroutine and what it awaits, down to the innermost frame."""
    chain: list[tuple[str, int, str]] = []
    step: Any = task.get_coro()
    while step is not None and len(chain) < 40:
        frame = next((getattr(step, a) for a in _FRAME if hasattr(step, a)), None)
        if frame is not None:
            chain.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        step = next((getattr(step, a) for a in _AWAITS if hasattr(step, a)), None)
    return chain


def _tasks(loop: asyncio.AbstractEventLoop | None) -> list[str]:
    if loop is None:
        return ["(no loop)"]
    for _ in range(20):  # read from another thread: the set may change while read
        try:
            tasks = list(asyncio.all_tasks(loop))
            break
        except RuntimeError:
            time.sleep(0.01)
    else:
        return ["(tasks could not be read)"]
    named = ((getattr(t.get_coro(), "__qualname__", t.get_name()), t) for t in tasks if not t.done())
    return sorted(f"{name}: {_frames(_awaiting(t))}" for name, t in named)


def _snapshot(runner: FaustRunner, hosted: FaustHosted, topic: str) -> str:
    """Where a stalled Faust worker waits: its consumer's flow (Faust's flags, the partitions it has paused
    or counts as active, its read offsets, aiokafka's positions and pauses), the asyncio tasks of the
    app's loop and of the consumer thread's loop, and every thread's stack."""
    lines: list[str] = []
    app: Any = runner.app
    try:
        consumer = app.consumer
        ours = sorted((tp for tp in consumer.assignment() if tp.topic == topic), key=lambda tp: tp.partition)
        lines.append(
            f"flow_active {consumer.flow_active}, flow_control active {app.flow_control.is_active()}, "
            f"rebalancing {app.rebalancing} (rebalances {app.rebalancing_count}), generation "
            f"{app.consumer_generation_id}, recovery completed {app.tables.recovery.completed.is_set()}, "
            f"in recovery {app.tables.recovery.in_recovery}"
        )
        paused = {tp.partition for tp in consumer._paused_partitions if tp.topic == topic}
        active = consumer._active_partitions
        lines.append(
            f"Faust: paused {sorted(paused)}, active "
            f"{None if active is None else sorted(tp.partition for tp in active if tp.topic == topic)}, "
            f"read offsets { {tp.partition: consumer._read_offset.get(tp) for tp in ours} }"
        )
        kafka = consumer._thread._consumer
        state = kafka._subscription.subscription.assignment
        positions = [(tp.partition, state.state_value(tp)) for tp in ours]
        lines.append(
            "aiokafka: " + ", ".join(f"p{p} position {s._position} paused {s.paused}" for p, s in positions)
        )
        queues = {
            tp.partition: sorted(channel.queue.qsize() for channel in channels)
            for tp, channels in list(app.topics._tp_index.items())
            if tp.topic == topic
        }
        lines.append(
            f"stream queues {queues}, unacked {len(consumer._unacked_messages)}, producer buffer "
            f"{app.producer.buffer.size}, processor lock held {hosted._guard().locked()}, "
            f"handler thread queue {hosted._executor._work_queue.qsize()}"
        )
        lines.append("app loop tasks: " + " | ".join(_tasks(app.loop)))
        lines.append("consumer loop tasks: " + " | ".join(_tasks(consumer._thread.thread_loop)))
    except Exception as exc:  # read across threads: say what could not be read
        lines.append(f"({type(exc).__name__}: {exc})")
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        where = [(f.filename, f.lineno or 0, f.name) for f in traceback.extract_stack(frame)]
        lines.append(f"thread {names.get(ident, ident)}: {_frames(where, 6)}")
    return "\n  ".join(lines)


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
            last, since, shown = (-1, -1), time.monotonic(), False
            while not stop.wait(0.5):
                now, seen = time.monotonic(), (runner.stats.consumed, _count(hosted.state))
                if seen != last or not hosted.assigned:
                    last, since, shown = seen, now, False
                elif seen[1] < expect and now - since >= SNAPSHOT_S and not shown:
                    shown = True
                    logging.info(
                        "no progress for %.0f s short of %d tasks (%s); where it waits:\n  %s",
                        now - since,
                        expect,
                        _progress(runner, hosted, topic_in),
                        _snapshot(runner, hosted, topic_in),
                    )
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
        print("CHANGELOG " + hosted.changelog_topic, flush=True)
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
