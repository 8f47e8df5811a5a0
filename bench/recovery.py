"""Recovery from faults, measured: ``python -m bench.recovery`` injects the fault suite's faults
(``harness.faults``: SIGKILL of a worker while work is in flight, the broker killed and started again on
its data, one broker of three lost) into a whole training run on a cluster of its own, prints each
fault's recovery figures as it goes (``RECOVERY {...}`` lines) and one table at the end, checks the run's
account (nothing lost, nothing doubled), and writes everything as JSON::

    .venv/bin/python -m bench.recovery [--faults generator,learner,broker] [--runtime transactional|faust]
                                       [--out build/bench/recovery.json]

Faults (``--faults``, in this order whatever the order given): a stream processor by name (``scheduler``,
``generator``, ``sandbox``, ``reward``, ``filter``, ``experience``; its figure: ``stage_output_s``, the
killed stage's first committed output after the kill, and its restart from its log), ``learner`` (killed
with a warm standby waiting), ``projector``, ``broker`` (the only broker killed and started again on its
data: after the worker faults, on the same run) and ``broker-1of3`` (a run of its own on three brokers,
the leader of most partitions killed and left down). The default takes a few minutes on 2 cores.

Seconds are from the fault (broker time of the first committed event after it; log time for a worker's
start-up). Throughput back (``harness.recovery.throughput_back``): the committed output per second of the
stage a fault hit (the pipeline's events; for the learner, the samples it trained) in the ``before_s``
before the fault is the baseline; the figure is the start of the first ``window_s`` after the fault in
which at least ``share`` of that rate was committed again (0 when nothing slowed down; a stop of ``d``
seconds at full speed after it reads about ``d``). The fault suite (``tests/reliability/test_faults.py``)
prints the same table for the faults it injects."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.recovery import cell, table

# -- the bench ----------------------------------------------------------------------------------------
#: every fault, in the order a run injects them (the broker's restart disturbs every stage: last)
WORKER_FAULTS = (
    "scheduler",
    "generator",
    "sandbox",
    "reward",
    "filter",
    "experience",
    "learner",
    "projector",
)
FAULTS = (*WORKER_FAULTS, "broker", "broker-1of3")
DEFAULT_FAULTS = ("generator", "learner", "broker")
#: issue 24's goals on 2 cores, per fault: the figure that says it and its limit in seconds (a worker's
#: stage commits again; the pipeline commits again after a broker restart; with one broker of three
#: lost, the first event downstream stands in for "no stage stalls")
GOALS = {
    **{name: ("stage_output_s", 15.0) for name in WORKER_FAULTS[:6]},
    "learner": ("learner_restarted_s", 15.0),
    "projector": ("first_batch_applied_s", 15.0),
    "broker": ("first_event_downstream_s", 30.0),
    "broker-1of3": ("first_event_downstream_s", 15.0),
}


def goals(entries: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each measured fault against its goal (:data:`GOALS`): the figure, the limit, whether it was met
    (None: the figure was not seen)."""
    out = []
    for entry in entries:
        name = entry.get("name")
        if name not in GOALS:
            continue
        key, limit = GOALS[name]
        got = entry.get(key)
        out.append(
            {
                "fault": entry["fault"],
                "figure": key,
                "seconds": got,
                "limit_s": limit,
                "met": None if got is None else got <= limit,
            }
        )
    return out


def _progress(what: str) -> None:
    print(f"{datetime.now(UTC):%H:%M:%S} {what}", flush=True)


def measure(
    faults: Sequence[str] = DEFAULT_FAULTS,
    *,
    runtime: str = "transactional",
    jar_dir: Path | None = None,
    workdir: Path | None = None,
) -> dict[str, Any]:
    """Every fault in ``faults`` injected into runs on clusters of their own (one broker; three for
    ``broker-1of3``); returns the recovery entries (each with the fault's ``name``), each run's account
    and worker restarts, and the goals. ``workdir``: where the brokers' data, the runs' settings homes
    and the workers' logs stay (default: a temporary directory, removed at the end)."""
    import contextlib
    import tempfile

    from harness import faults as f
    from infra.kafka.config import BrokerConfig
    from infra.kafka.jars import require_jars
    from infra.kafka.local import LocalCluster, find_free_base_port
    from schemas.errors import UsageError

    unknown = [x for x in faults if x not in FAULTS]
    if unknown:
        raise UsageError(f"unknown fault(s) {', '.join(unknown)}", hint="one of: " + ", ".join(FAULTS))
    config = BrokerConfig()
    lib = require_jars(jar_dir or Path.home() / ".rlstream" / "kafka", config.kafka_version)
    env = {"RLSTREAM_RUNTIME": runtime}
    label = " (faust)" if runtime == "faust" else ""
    entries: list[dict[str, Any]] = []
    accounts: list[dict[str, Any]] = []

    def on_cluster(brokers: int, names: list[str]) -> None:
        with contextlib.ExitStack() as stack:
            if workdir is None:
                tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="rlstream-bench-recovery-"))
            else:
                tmp = str(workdir / f"{brokers}-broker")
                Path(tmp).mkdir(parents=True, exist_ok=False)
            cluster = LocalCluster(
                config.model_copy(
                    update={
                        "base_port": find_free_base_port(config.host, 2 * brokers),
                        "brokers": brokers,
                        "heap_mb": 384 if brokers > 1 else 512,
                        "start_timeout_s": 180.0,
                    }
                ),
                data_dir=Path(tmp) / "kafka",
                lib_dir=lib,
            )
            try:
                _progress(f"starting {brokers} broker(s)")
                cluster.up(brokers)
                bootstrap = cluster.running_bootstrap() or ""
                _progress(f"starting the run's workers ({runtime} runtime)")
                run = f.start(bootstrap, Path(tmp) / "run", **env)
                try:
                    for name in names:
                        _progress(f"fault: {name}")
                        before = len(run.recoveries)
                        if name in f.PROCESSORS:
                            f.kill_worker(run, name, label=label)
                        elif name == "learner":
                            f.kill_learner(run, label=label)
                        elif name == "projector":
                            f.kill_projector(run, label=label)
                        elif name == "broker":
                            f.restart_broker(run, cluster)
                        else:
                            f.lose_a_broker(run, cluster)
                        for entry in run.recoveries[before:]:
                            entry["name"] = name
                    _progress("the learner catching up; then the run's account, read afresh from the log")
                    counts = f.finish(run, effectively_once=runtime == "faust")
                    accounts.append(
                        {
                            "brokers": brokers,
                            "counts": counts,
                            "killed": dict(run.workers.killed),
                            "worker_exits_restarted": dict(run.workers.restarts),
                        }
                    )
                    entries.extend(run.recoveries)
                finally:
                    run.workers.stop()
                    run.follower.close()
            finally:
                cluster.down()

    single = [x for x in FAULTS if x in faults and x != "broker-1of3"]
    if single:
        on_cluster(1, single)
    if "broker-1of3" in faults:
        on_cluster(3, ["broker-1of3"])
    return {
        "runtime": runtime,
        "faults": list(faults),
        "recoveries": entries,
        "runs": accounts,
        "goals": goals(entries),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--faults", default=",".join(DEFAULT_FAULTS), help="subset of: " + ", ".join(FAULTS))
    ap.add_argument("--runtime", choices=("transactional", "faust"), default="transactional")
    ap.add_argument("--out", type=Path, default=Path("build") / "bench" / "recovery.json")
    ap.add_argument("--jar-dir", type=Path, default=None, help="the Kafka jars (default ~/.rlstream/kafka)")
    ap.add_argument(
        "--workdir", type=Path, default=None, help="keep the workers' logs and the brokers' data here"
    )
    args = ap.parse_args()
    names = [n.strip() for n in args.faults.split(",") if n.strip()]
    unknown = [n for n in names if n not in FAULTS]
    if unknown or not names:
        ap.error(f"unknown or no fault(s) {', '.join(unknown)}; known: {', '.join(FAULTS)}")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    started = datetime.now(UTC)
    result = measure(names, runtime=args.runtime, jar_dir=args.jar_dir, workdir=args.workdir)
    load = os.getloadavg()[0]
    result.update(
        started=started.isoformat(),
        seconds=round((datetime.now(UTC) - started).total_seconds(), 1),
        cpus=os.cpu_count(),
        load_average=load,
        command=" ".join([Path(sys.executable).name, "-m", "bench.recovery", *sys.argv[1:]]),
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1, default=str) + "\n")
    print(
        f"\nrecovery per fault, seconds from the fault ({args.runtime} runtime, {os.cpu_count()} CPUs, "
        f"load average {load:.1f}):"
    )
    for line in table([{k: v for k, v in e.items() if k != "name"} for e in result["recoveries"]]):
        print(line)
    for goal in result["goals"]:
        verdict = {True: "met", False: "NOT met", None: "not seen"}[goal["met"]]
        seconds = cell(goal["seconds"])
        print(f"goal: {goal['fault']}: {goal['figure']} {seconds} <= {goal['limit_s']:g} s: {verdict}")
    for account in result["runs"]:
        print(f"account ({account['brokers']} broker(s)): {json.dumps(account['counts'])}")
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
