"""Kill a runtime's worker again and again while records flow, and check that nothing is lost:

    python -m tests.contract.stress faust --rounds 10 [--kills 4] [--bootstrap HOST:PORT]

Each round writes tasks to a fresh 3-partition topic at a steady rate while the contract processor
(``tests/contract/worker.py``, the relay) runs as a worker process that is killed with SIGKILL at random
moments, some of them while the restarted worker is still joining its group or restoring its state, and
restarted at once. Then a last worker runs until the input is idle, and the round checks what the
contract promises: every task has its output (nothing lost), every record written twice is the very same
record, and the last worker's restored state names every task. A round that fails prints the task ids it
lost and keeps the workers' logs. Without ``--bootstrap`` a broker of its own is started.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from infra.kafka.admin import admin_client
from infra.kafka.jars import lib_dir
from infra.kafka.local import LocalCluster, find_free_base_port
from infra.kafka.producer import EventProducer
from rlstream.settings import get_settings
from schemas.base import Event
from schemas.rollout import RolloutRequested
from schemas.task import TaskPublished, TestCase
from tests.e2e.conftest import read_topic

ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def broker(bootstrap: str | None) -> Iterator[str]:
    if bootstrap:
        yield bootstrap
        return
    settings = get_settings()
    config = settings.broker
    lib = lib_dir(config.jar_dir or settings.home / "kafka", config.kafka_version)
    data_dir = Path(tempfile.mkdtemp(prefix="rlstream-stress-"))
    config = config.model_copy(
        update={"heap_mb": 512, "start_timeout_s": 180.0, "base_port": find_free_base_port(config.host, 2)}
    )
    cluster = LocalCluster(config, data_dir=data_dir, lib_dir=lib)
    try:
        cluster.up(1)
        yield cluster.running_bootstrap() or ""
    finally:
        cluster.down()
        shutil.rmtree(data_dir, ignore_errors=True)


def new_topic(bootstrap: str, prefix: str) -> str:
    from confluent_kafka.cimpl import NewTopic

    name = f"{prefix}.{uuid.uuid4().hex[:12]}"
    admin = admin_client(bootstrap)
    for future in admin.create_topics([NewTopic(name, num_partitions=3, replication_factor=-1)]).values():
        future.result(30)
    return name


def task(task_id: str) -> TaskPublished:
    return TaskPublished(
        task_id=task_id, prompt="def f(x):\n", entry_point="f", tests=(TestCase(input="(1,)", output="1"),)
    )


class Round:
    def __init__(self, runtime: str, bootstrap: str, logs: Path, rng: random.Random) -> None:
        self.runtime = runtime
        self.bootstrap = bootstrap
        self.logs = logs
        self.rng = rng
        self.topic_in = new_topic(bootstrap, "stress.in")
        self.topic_out = new_topic(bootstrap, "stress.out")
        self.name = f"stress-{uuid.uuid4().hex[:8]}"
        self.published: list[str] = []
        self.runs = 0

    def _start(self, idle_s: float) -> subprocess.Popen[str]:
        self.runs += 1
        log = (self.logs / f"{self.name}-{self.runs}.log").open("w")
        args = [self.runtime, self.bootstrap, self.topic_in, self.topic_out, self.name, "0.01", str(idle_s)]
        return subprocess.Popen(
            [sys.executable, "-m", "tests.contract.worker", *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )

    def _produce(self, stop: threading.Event, rate: float) -> None:
        with EventProducer(self.bootstrap, source="stress") as producer:
            i = 0
            while not stop.is_set():
                t = task(f"{self.name}/t{i:05d}")
                producer.publish(t, topic=self.topic_in)
                self.published.append(t.task_id)
                i += 1
                time.sleep(1 / rate)

    def run(self, kills: int, rate: float, workers: int) -> dict[str, object]:
        stop = threading.Event()
        producer = threading.Thread(target=self._produce, args=(stop, rate), daemon=True)
        producer.start()
        # with two or more instances in the group, every kill and restart rebalances the survivors while
        # records are in flight
        running = [self._start(idle_s=600) for _ in range(workers)]
        try:
            for _ in range(kills):
                # from "still joining" (a kill during the restarted worker's rebalance and restore) to
                # "well under way"
                time.sleep(self.rng.uniform(1.0, 25.0))
                i = self.rng.randrange(len(running))
                running[i].send_signal(signal.SIGKILL)
                running[i].wait(30)
                running[i] = self._start(idle_s=600)
            time.sleep(self.rng.uniform(5.0, 15.0))
        finally:
            stop.set()
            producer.join()
            for worker in running:
                worker.send_signal(signal.SIGKILL)
                worker.wait(30)
        last = self._start(idle_s=8.0)
        out, _ = last.communicate(timeout=600)
        line = next((x for x in out.splitlines() if "STATE " in x), None)
        state = set(json.loads(line.split("STATE ", 1)[1])) if line else None
        outputs = read_topic(self.bootstrap, self.topic_out)
        by_id: dict[str, Event] = {}
        changed = 0
        for event_id, event in outputs:
            if by_id.setdefault(event_id, event) != event:
                changed += 1
        got = {e.task_id for e in by_id.values() if isinstance(e, RolloutRequested)}
        expected = set(self.published)
        return {
            "published": len(expected),
            "lost": sorted(expected - got),
            "state_missing": None if state is None else sorted(expected - state),
            "duplicates": len(outputs) - len(by_id),
            "changed": changed,
            "last_rc": last.returncode,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runtime", choices=("faust", "transactional"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kills", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2, help="instances of the worker in the group")
    parser.add_argument("--rate", type=float, default=40.0, help="tasks written per second")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--logs", type=Path, default=None)
    a = parser.parse_args()
    rng = random.Random(a.seed)
    logs = a.logs or Path(tempfile.mkdtemp(prefix="rlstream-stress-logs-"))
    logs.mkdir(parents=True, exist_ok=True)
    failed = 0
    with broker(a.bootstrap) as bootstrap:
        for n in range(1, a.rounds + 1):
            r = Round(a.runtime, bootstrap, logs, rng)
            result = r.run(a.kills, a.rate, a.workers)
            bad = bool(result["lost"] or result["state_missing"] or result["changed"] or result["last_rc"])
            failed += bad
            summary = {k: (f"{len(v)}: {v[:3]}" if isinstance(v, list) else v) for k, v in result.items()}
            print(f"ROUND {n} {'FAIL' if bad else 'ok'} {r.name} {json.dumps(summary)}", flush=True)
    total = {"runtime": a.runtime, "rounds": a.rounds, "failed": failed, "logs": str(logs)}
    print(f"STRESS {json.dumps(total)}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
