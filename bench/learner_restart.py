"""Learner restart: a training learner worker killed with SIGKILL, started again at once (as a process
manager would), and timed from the kill to its first new policy version, ``--kills`` times in one run;
each restart split into where its seconds went, from the restarted learner's own log and training log:

* ``process``: interpreter start and the command line's imports, up to the learner's first log line;
* ``model``: importing torch and transformers and building the model;
* ``engine``: importing DeepSpeed and building the engine;
* ``resume``: loading the checkpoint, the Kafka clients and the partitions' assignment;
* ``first_step``: reading the backlog until the first optimizer step ended;
* ``publish``: from that step to its version acknowledged (checkpoint, weights, PolicyPublished).

Experiences of the tiny model's shape trickle in meanwhile (``--every`` seconds a group), as from a
running pipeline. Prints one JSON object: per restart and the medians.

``--standby``: two learner workers, as ``rlstream run`` starts them: the one holding the run's lease is
killed (only once the other stands by, built), the standby takes over and the killed one is started
again behind it as the next standby. Its phases are ``takeover`` (from the kill to the standby's
start line: the lease, the checkpoint, the Kafka clients and the assignment), ``first_step`` and
``publish``.

    .venv/bin/python -m bench.learner_restart [--kills 5] [--every 3] [--standby] [--bootstrap HOST:PORT]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.bus import broker
from infra.kafka.admin import ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.producer import EventProducer
from learner.lease import lease_holder, lease_path
from learner.service import read_training_log
from schemas.rollout import ExperienceReady, ExperienceSample
from schemas.topics import CATALOG

CACHE = Path.home() / ".rlstream"
ROOT = Path(__file__).resolve().parents[1]
GROUP_SIZE = 2
PHASES = ("process", "model", "engine", "resume", "first_step", "publish")
STANDBY_PHASES = ("takeover", "first_step", "publish")


def experience(run_id: str, g: int) -> ExperienceReady:
    samples = tuple(
        ExperienceSample(
            sample_id=f"{run_id}/t{g}/{g}/{i}",
            policy_version=0,
            reward=float(i % 2),
            advantage=1.0 if i % 2 else -1.0,
            prompt_token_ids=tuple(20 + (g + k) % 300 for k in range(40)),
            completion_token_ids=(10 + g % 50,),
            behaviour_logprobs=(-6.0,),
        )
        for i in range(GROUP_SIZE)
    )
    return ExperienceReady(
        group_id=f"{run_id}/t{g}/{g}", task_id=f"t{g}", group_size=GROUP_SIZE, samples=samples
    )


def _log_time(line: str) -> float:
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()


def _phases(t0: float, lines: list[str], entries: list[dict[str, Any]], incarnation: str) -> dict[str, Any]:
    mine = [e for e in entries if e.get("incarnation") == incarnation]
    start = next(e["time"] for e in mine if e["kind"] == "start")
    step = next((e["time"] for e in mine if e["kind"] == "step"), None)
    publish = next((e["time"] for e in mine if e["kind"] == "publish" and not e.get("republished")), None)
    # "learner: model NAME loaded in X s, engine built in Y s", logged once the engine is built
    built = next(
        (
            _log_time(x)
            for x in lines
            if " learner: model " in x and " loaded in " in x and _log_time(x) >= t0
        ),
        None,
    )
    marks: list[float | None] = [t0, None, None, built, start, step, publish]
    if built is not None:
        line = next(x for x in lines if " learner: model " in x and " loaded in " in x and _log_time(x) >= t0)
        model_s = float(line.split(" loaded in ")[1].split(" s")[0])
        engine_s = float(line.split("engine built in ")[1].split(" s")[0])
        marks[1], marks[2] = built - engine_s - model_s, built - engine_s
    out: dict[str, Any] = {}
    for name, a, b in zip(PHASES, marks, marks[1:], strict=False):
        out[name] = None if a is None or b is None else round(b - a, 2)
    out["first_new_version_s"] = None if publish is None else round(publish - t0, 2)
    return out


def _takeover_phases(t0: float, entries: list[dict[str, Any]], incarnation: str) -> dict[str, Any]:
    mine = [e for e in entries if e.get("incarnation") == incarnation]
    start = next(e["time"] for e in mine if e["kind"] == "start")
    step = next((e["time"] for e in mine if e["kind"] == "step"), None)
    publish = next((e["time"] for e in mine if e["kind"] == "publish" and not e.get("republished")), None)
    marks = [t0, start, step, publish]
    out: dict[str, Any] = {}
    for name, a, b in zip(STANDBY_PHASES, marks, marks[1:], strict=False):
        out[name] = None if a is None or b is None else round(b - a, 2)
    out["first_new_version_s"] = None if publish is None else round(publish - t0, 2)
    return out


def measure(
    kills: int = 5, every_s: float = 3.0, bootstrap: str | None = None, *, standby: bool = False
) -> dict[str, Any]:
    with (
        broker(bootstrap, CACHE / "kafka") as server,
        tempfile.TemporaryDirectory(prefix="rlstream-lr-") as tmp,
    ):
        ensure_topics(server, KafkaConfig(), CATALOG)
        run_id = f"restart-{uuid.uuid4().hex[:8]}"
        home = Path(tmp) / "home"
        env = {
            **os.environ,
            "OMP_NUM_THREADS": "1",
            "RLSTREAM_RUN_ID": run_id,
            "RLSTREAM_HOME": str(home),
            "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": server,
            "RLSTREAM_GENERATOR__MODEL": "tiny",
            "RLSTREAM_GENERATOR__MODELS_DIR": str(CACHE / "models"),
            "RLSTREAM_LEARNER__ACCELERATOR": "cpu",
            "RLSTREAM_LEARNER__TOKEN_BUDGET": "256",
            "RLSTREAM_LEARNER__STALENESS_BOUND": "1000",
        }
        train_log = home / "runs" / run_id / "learner" / "training.jsonl"
        worker_log = Path(tmp) / "learner.log"
        stop = threading.Event()

        def feed() -> None:
            with EventProducer(server, source="bench", run_id=run_id) as producer:
                g = 0
                while not stop.is_set():
                    producer.publish(experience(run_id, g))
                    producer.flush()
                    g += 1
                    stop.wait(every_s)

        def spawn(log: Path = worker_log) -> subprocess.Popen[bytes]:
            return subprocess.Popen(
                [sys.executable, "-m", "rlstream.cli", "worker", "learner"],
                cwd=ROOT,
                env=env,
                stdout=log.open("ab"),
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

        def entries() -> list[dict[str, Any]]:
            return read_training_log(train_log) if train_log.exists() else []

        def wait(cond: Any, timeout_s: float, what: str) -> None:
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                if cond():
                    return
                time.sleep(0.05)
            tails = "\n".join(p.read_text(errors="replace")[-3000:] for p in sorted(Path(tmp).glob("*.log")))
            raise SystemExit(f"timed out waiting for {what}:\n{tails}")

        feeder = threading.Thread(target=feed, daemon=True)
        feeder.start()
        if standby:
            restarts = _standby_kills(kills, spawn, entries, wait, Path(tmp), train_log.parent)
            stop.set()
            feeder.join(30)
            return _result(kills, every_s, restarts, STANDBY_PHASES)
        proc = spawn()
        restarts = []
        try:
            for _ in range(kills):
                # a learner that has trained and published in this life: two publications of its own
                def settled() -> bool:
                    es = entries()
                    starts = [e for e in es if e["kind"] == "start"]
                    if not starts:
                        return False
                    me = starts[-1]["incarnation"]
                    return sum(1 for e in es if e["kind"] == "publish" and e["incarnation"] == me) >= 2

                wait(settled, 600, "a learner that publishes")
                before = max(e["policy_version"] for e in entries() if e["kind"] == "publish")
                t0 = time.time()
                proc.send_signal(signal.SIGKILL)
                proc.wait(30)
                proc = spawn()

                def new_version(before: int = before) -> bool:
                    return any(e["kind"] == "publish" and e["policy_version"] > before for e in entries())

                wait(new_version, 600, "a new policy version")
                es = entries()
                incarnation = next(e["incarnation"] for e in es if e["kind"] == "start" and e["time"] > t0)
                lines = worker_log.read_text(errors="replace").splitlines()
                restarts.append(_phases(t0, lines, es, incarnation))
                print(json.dumps(restarts[-1]), file=sys.stderr, flush=True)
        finally:
            stop.set()
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
        feeder.join(30)

    return _result(kills, every_s, restarts, PHASES)


def _result(
    kills: int, every_s: float, restarts: list[dict[str, Any]], phases: tuple[str, ...]
) -> dict[str, Any]:
    def median(key: str) -> float | None:
        values = [r[key] for r in restarts if r.get(key) is not None]
        return round(statistics.median(values), 2) if values else None

    return {
        "kills": kills,
        "every_s": every_s,
        "restarts": restarts,
        "median": {k: median(k) for k in (*phases, "first_new_version_s")},
    }


def _standby_kills(
    kills: int,
    spawn: Any,
    entries: Any,
    wait: Any,
    tmp: Path,
    learner_dir: Path,
) -> list[dict[str, Any]]:
    """Two learners; each time, the lease holder is killed once the other stands by."""
    logs = [tmp / "learner-a.log", tmp / "learner-b.log"]
    procs = [spawn(logs[0]), None]
    lease = lease_path(learner_dir)
    restarts: list[dict[str, Any]] = []

    def standing_by(i: int) -> bool:
        return logs[i].exists() and "standing by for the run's lease" in logs[i].read_text(errors="replace")

    try:
        wait(lambda: lease_holder(lease) is not None, 600, "the first learner holding the lease")
        procs[1] = spawn(logs[1])
        for _ in range(kills):
            holder = lease_holder(lease)
            active = next(i for i, p in enumerate(procs) if p is not None and p.pid == holder)
            other = 1 - active

            def settled(pid: int | None = holder) -> bool:
                es = entries()
                starts = [e for e in es if e["kind"] == "start" and e.get("pid") == pid]
                if not starts:
                    return False
                me = starts[-1]["incarnation"]
                return sum(1 for e in es if e["kind"] == "publish" and e["incarnation"] == me) >= 2

            wait(settled, 600, "a learner that publishes")
            # the standby is built and waits (the restarted one reads its log afresh each life)
            wait(lambda other=other: standing_by(other), 600, "a standby learner")
            before = max(e["policy_version"] for e in entries() if e["kind"] == "publish")
            t0 = time.time()
            proc = procs[active]
            assert proc is not None
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
            logs[active].write_text("")  # its next life's "standing by" is the one waited for
            procs[active] = spawn(logs[active])

            def new_version(before: int = before) -> bool:
                return any(e["kind"] == "publish" and e["policy_version"] > before for e in entries())

            wait(new_version, 600, "a new policy version")
            es = entries()
            incarnation = next(e["incarnation"] for e in es if e["kind"] == "start" and e["time"] > t0)
            restarts.append(_takeover_phases(t0, es, incarnation))
            print(json.dumps(restarts[-1]), file=sys.stderr, flush=True)
    finally:
        for p in procs:
            if p is not None and p.poll() is None:
                p.kill()
                p.wait(30)
    return restarts


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--every", type=float, default=3.0, help="seconds between two experiences")
    parser.add_argument("--bootstrap", default=None, help="an existing cluster (default: a local broker)")
    parser.add_argument(
        "--standby", action="store_true", help="a warm standby takes over from the killed one"
    )
    args = parser.parse_args()
    print(json.dumps(measure(args.kills, args.every, args.bootstrap, standby=args.standby), indent=1))


if __name__ == "__main__":
    main()
