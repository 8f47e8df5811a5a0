"""Fault injection on a whole training run, shared by the fault suite (``tests/reliability``) and
``python -m bench.recovery``: a whole pipeline as supervised child processes on a cluster of its own, a
follower of the run's events with their broker timestamps (to time recoveries), the faults themselves
(:func:`kill_worker`, :func:`kill_learner`, :func:`kill_projector`, :func:`restart_broker`,
:func:`lose_a_broker`), each recording its recovery figures on the :class:`Run`, and the exactly-once
account of a finished run.

The supervisor restarts any worker that exits, as a process manager would (a worker may exit on its
own while the broker is away); every restart is counted and reported.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._config import ConfigResource

from harness import recovery
from harness.load import load_tasks, stop_all, tiny_run_env
from infra.kafka.admin import ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.consumer import decode_message
from infra.kafka.local import LocalCluster, _wait_gone
from infra.kafka.producer import EventProducer
from learner.lease import lease_holder, lease_path
from learner.service import read_training_log, training_account
from rlstream.workers import LEASED_WORKERS, worker_lease_path
from schemas.errors import RlstreamError, UsageError
from schemas.policy import PolicyPublished
from schemas.rollout import SandboxExecuted
from schemas.task import TaskPublished
from schemas.topics import (
    CATALOG,
    EXECUTIONS,
    EXPERIENCES,
    GENERATIONS,
    POLICY,
    REWARDS,
    ROLLOUTS_REQUESTED,
    TASKS,
    VERDICTS,
)

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path.home() / ".rlstream"
PIPELINE = ("scheduler", "generator", "sandbox", "reward", "filter", "experience", "learner", "projector")
#: the run's topics, in flow order (rl.policy last: the learner's output)
FLOW = (
    ROLLOUTS_REQUESTED.name,
    GENERATIONS.name,
    EXECUTIONS.name,
    REWARDS.name,
    VERDICTS.name,
    EXPERIENCES.name,
    POLICY.name,
)
#: the recovery figure measured at the end of a run: seconds from a fault until the committed output of
#: the stage it hit (the pipeline's, or the learner's trained samples) ran at 90 % of its rate before the
#: fault again (``recovery.throughput_back``)
THROUGHPUT = "throughput_back_90pct_s"
#: how long a wave's tasks may take to be acknowledged
PUBLISH_TIMEOUT_S = 180.0
#: the per-sample topics: one event per sample of every group
PER_SAMPLE = (GENERATIONS.name, EXECUTIONS.name, REWARDS.name, VERDICTS.name)


def worker_env(bootstrap: str, home: Path, run_id: str, group_size: int, **extra: str) -> dict[str, str]:
    """Every worker of a faulted run: small bounds (two groups in flight, batches of 4) so a fault always
    lands while work is in flight."""
    bounds = {"RLSTREAM_PIPELINE__BATCH_SIZE": "4", "RLSTREAM_PIPELINE__SCHEDULER__MAX_GROUPS_IN_FLIGHT": "2"}
    return tiny_run_env(bootstrap, home, run_id, group_size, **{**bounds, **extra})


@dataclass
class Supervised:
    """The run's workers as child processes; ``revive`` restarts the ones that exited."""

    env: dict[str, str]
    logs: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    restarts: Counter[str] = field(default_factory=Counter)
    killed: Counter[str] = field(default_factory=Counter)
    #: the worker each process runs, where it is not its name (a second learner: ``learner-standby``)
    kinds: dict[str, str] = field(default_factory=dict)

    def start(self, name: str, *, kind: str | None = None) -> None:
        kind = self.kinds.setdefault(name, kind or name)
        log = (self.logs / f"{name}.log").open("ab")
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", "rlstream.cli", "worker", kind],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def kill9(self, name: str) -> float:
        """SIGKILL the worker; returns the wall time of the kill. The supervisor restarts it."""
        proc = self.procs[name]
        at = time.time()
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        self.killed[name] += 1
        self.start(name)
        return at

    def pause(self, name: str) -> None:
        """SIGSTOP the worker: it holds what it has and takes nothing more until :meth:`resume` (or a
        kill). Its consumer's session runs out after ``session.timeout.ms`` (10 s) of this."""
        self.procs[name].send_signal(signal.SIGSTOP)

    def resume(self, name: str) -> None:
        self.procs[name].send_signal(signal.SIGCONT)

    def holding(self, lease: Path) -> str:
        """The name of the process that holds ``lease`` (the learner's, or a generator instance's)."""
        pid = lease_holder(lease)
        return next(name for name, proc in self.procs.items() if proc.pid == pid)

    def standing_by(self, name: str) -> bool:
        """Whether process ``name`` (a learner, a generator) is built and waits on its lease."""
        return "standing by for the " in (self.logs / f"{name}.log").read_text(errors="replace")

    def revive(self) -> None:
        for name, proc in list(self.procs.items()):
            if proc.poll() is not None:
                self.restarts[name] += 1
                self.start(name)

    def stop(self) -> None:
        stop_all(self.procs.values())

    def tails(self, lines: int = 25) -> str:
        out = []
        for name in self.procs:
            text = (self.logs / f"{name}.log").read_text(errors="replace").splitlines()
            out.append(f"--- {name}\n" + "\n".join(text[-lines:]))
        return "\n".join(out)


@dataclass(frozen=True)
class Seen:
    event_id: str
    event: Any
    at: float  # broker timestamp, seconds
    partition: int
    offset: int


def _of_run(event: Any, run_id: str) -> bool:
    if isinstance(event, PolicyPublished):
        return event.run_id == run_id
    return str(getattr(event, "group_id", "")).startswith(f"{run_id}/")


class Follower:
    """Every committed event of the run on its topics, read as it is committed (read_committed), with
    broker timestamps. Survives broker restarts and failovers (the client reconnects by itself)."""

    def __init__(self, bootstrap: str, run_id: str, topics: Iterable[str] = FLOW) -> None:
        self.run_id = run_id
        self.events: dict[str, list[Seen]] = defaultdict(list)
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"test.follow.{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
                "log_level": 2,  # a broker away is expected here: no reconnect errors in the output
            }
        )
        parts: list[TopicPartition] = []
        for topic in topics:
            md = self._consumer.list_topics(topic, 30).topics[topic]
            parts.extend(TopicPartition(topic, p, 0) for p in md.partitions)
        self._consumer.assign(parts)

    def poll(self, budget_s: float = 0.5) -> None:
        deadline = time.monotonic() + budget_s
        while time.monotonic() < deadline:
            msgs = self._consumer.consume(500, 0.1)
            if not msgs:
                return
            for msg in msgs:
                if msg.error() is not None:
                    if msg.error().code() != KafkaError._PARTITION_EOF:  # type: ignore[union-attr]
                        continue  # a broker away: the client retries by itself
                    continue
                try:
                    item = decode_message(msg)
                except RlstreamError:
                    continue
                if _of_run(item.event, self.run_id):
                    self.events[msg.topic() or ""].append(
                        Seen(
                            item.envelope.id,
                            item.event,
                            msg.timestamp()[1] / 1000.0,
                            msg.partition() or 0,
                            msg.offset() or 0,
                        )
                    )

    def count(self, topic: str) -> int:
        return len({s.event_id for s in self.events[topic]})

    def done_tasks(self) -> set[str]:
        return {s.event.task_id for s in self.events[EXPERIENCES.name]}

    def first_after(
        self, t0: float, topics: Iterable[str], where: Callable[[Any], bool] = lambda e: True
    ) -> float | None:
        """Seconds from ``t0`` to the first event on ``topics`` created after it (None: none yet)."""
        times = [s.at for t in topics for s in self.events[t] if s.at > t0 and where(s.event)]
        return round(min(times) - t0, 2) if times else None

    def throughput_back(self, t0: float, stage: str = "pipeline") -> float | None:
        """Seconds from ``t0`` until the run's committed output ran at 90 % of its rate before ``t0``
        again (``recovery.throughput_back``; None: not yet). The ``pipeline``'s output is its stages'
        events; the ``learner``'s, the samples it trained, each at the time of the version that
        published it (a version published again after a restart counts once)."""
        self.poll()
        if stage == "learner":
            versions: dict[int, Seen] = {}
            for seen in self.events[POLICY.name]:
                versions.setdefault(seen.event.policy_version, seen)
            times = [v.at for v in versions.values() for _ in v.event.trained_sample_ids]
        else:
            times = [s.at for t in FLOW[1:-1] for s in self.events[t]]
        return recovery.throughput_back(times, t0, time.time())

    def first_version_at(self) -> float | None:
        """The broker time of the run's first policy version (None: none yet)."""
        return min((s.at for s in self.events[POLICY.name]), default=None)

    def max_policy_version(self) -> int:
        return max((s.event.policy_version for s in self.events[POLICY.name]), default=0)

    def close(self) -> None:
        self._consumer.close()


@dataclass
class Run:
    """One run under test: its workers, its events and the recovery figures measured on it."""

    bootstrap: str
    run_id: str
    home: Path
    group_size: int
    workers: Supervised
    follower: Follower
    tasks: list[TaskPublished] = field(default_factory=list)
    recoveries: list[dict[str, Any]] = field(default_factory=list)
    waves: int = 0
    _faults: list[tuple[dict[str, Any], float, str]] = field(default_factory=list)

    @property
    def training_log(self) -> Path:
        return self.home / "runs" / self.run_id / "learner" / "training.jsonl"

    @property
    def learner_lease(self) -> Path:
        return lease_path(self.training_log.parent)

    def worker_lease(self, name: str) -> Path:
        """The lease of the run's instance 0 of worker ``name`` (:data:`LEASED_WORKERS`)."""
        return worker_lease_path(self.home, self.run_id, name, "0")

    def publish_wave(self, n: int) -> list[TaskPublished]:
        self.waves += 1
        wave = load_tasks(n, prefix=f"{self.run_id}-w{self.waves}")
        # a cluster started moments ago may take a while to hand out its first producer id on a busy
        # machine (CI: over 30 s on three brokers); the scenario is about faults, not start-up speed
        with EventProducer(
            self.bootstrap, source="test/faults", run_id=self.run_id, delivery_timeout_s=PUBLISH_TIMEOUT_S
        ) as producer:
            for task in wave:
                producer.publish(task, topic=TASKS.name)
        self.tasks.extend(wave)
        return wave

    def wait(self, cond: Callable[[], bool], timeout_s: float, what: str) -> float:
        """Poll the log and keep the workers alive until ``cond``; returns the wall time it held."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.follower.poll()
            self.workers.revive()
            if cond():
                return time.time()
            time.sleep(0.2)
        raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}\n{self.workers.tails()}")

    def wave_done(self, wave: list[TaskPublished]) -> Callable[[], bool]:
        ids = {t.task_id for t in wave}
        return lambda: ids <= self.follower.done_tasks()

    def wave_progress(self, wave: list[TaskPublished], at_least: int) -> Callable[[], bool]:
        ids = {t.task_id for t in wave}
        return lambda: (
            len(ids & {s.event.task_id for s in self.follower.events[EXPERIENCES.name]}) >= at_least
        )

    def learner_covers_all(self) -> bool:
        """Whether the learner's publications and drops account for every sample of the run's experiences."""
        if not self.training_log.exists():
            return False
        trained, dropped = training_account(read_training_log(self.training_log))
        # drops count once committed: with the publication that covers them, or on their own when
        # nothing trained waits for one (the last groups of a run dropped as stale)
        done = {s for ids in trained.values() for s in ids} | set(dropped)
        produced = {s.sample_id for e in self.follower.events[EXPERIENCES.name] for s in e.event.samples}
        return produced <= done

    @property
    def projection_url(self) -> str:
        return f"sqlite:///{self.home / 'projections.sqlite'}"

    def projected(self) -> int:
        """Records the projector has applied so far (the offsets it stored with its rows)."""
        path = self.home / "projections.sqlite"
        if not path.exists():
            return 0
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            try:
                (total,) = db.execute("SELECT COALESCE(SUM(next_offset), 0) FROM applied_offsets").fetchone()
            except sqlite3.Error:  # not migrated yet, or locked for a moment
                return 0
        return int(total)

    def learner_started_after(self, t0: float) -> float | None:
        """Seconds from ``t0`` to the first learner start logged after it (None: none yet)."""
        if not self.training_log.exists():
            return None
        starts = [
            e["time"] for e in read_training_log(self.training_log) if e["kind"] == "start" and e["time"] > t0
        ]
        return round(min(starts) - t0, 2) if starts else None

    def record(self, fault: str, t0: float, *, stage: str = "pipeline", **figures: Any) -> None:
        """The figures measured on the fault at ``t0``; its throughput figure, of the ``stage`` it
        hit (``Follower.throughput_back``), is added by :meth:`settle`."""
        entry = {"fault": fault, **figures, THROUGHPUT: None}
        self.recoveries.append(entry)
        self._faults.append((entry, t0, stage))
        print(f"\nRECOVERY {json.dumps(entry)}", flush=True)

    def settle(self) -> None:
        """At the end of the run (once the work after every fault is on the log): when the pipeline's
        committed output ran at 90 % of its rate before each fault again."""
        for entry, t0, stage in self._faults:
            entry[THROUGHPUT] = self.follower.throughput_back(t0, stage)
            print(f"\nRECOVERY {json.dumps(entry)}", flush=True)
        self._faults.clear()


def read_all(bootstrap: str, topic: str, run_id: str) -> list[Seen]:
    """Every committed event of the run on ``topic``, read afresh from offset 0 to the end now."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"test.check.{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    try:
        parts = sorted(consumer.list_topics(topic, 30).topics[topic].partitions)
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), 30)[1] for p in parts}
        consumer.assign([TopicPartition(topic, p, 0) for p in parts])
        open_parts = {p for p in parts if ends[p] > 0}
        out: list[Seen] = []
        deadline = time.monotonic() + 120
        while open_parts and time.monotonic() < deadline:
            for msg in consumer.consume(1000, 0.5):
                part = msg.partition() or 0
                if msg.error() is not None:
                    if msg.error().code() == KafkaError._PARTITION_EOF:  # type: ignore[union-attr]
                        open_parts.discard(part)
                    continue
                if (msg.offset() or 0) + 1 >= ends[part]:
                    open_parts.discard(part)
                try:
                    item = decode_message(msg)
                except RlstreamError:
                    continue
                if _of_run(item.event, run_id):
                    out.append(
                        Seen(
                            item.envelope.id, item.event, msg.timestamp()[1] / 1000.0, part, msg.offset() or 0
                        )
                    )
        assert not open_parts, f"could not read {topic} to its end"
        return out
    finally:
        consumer.close()


def cli(run: Run, *args: str, timeout_s: float = 600) -> subprocess.CompletedProcess[str]:
    """``rlstream ARGS`` as the run's workers see the cluster and the settings home, with nothing on its
    stdin (a command that waited for input would hang rather than fail)."""
    return subprocess.run(
        [sys.executable, "-m", "rlstream.cli", *args],
        cwd=ROOT,
        env=run.workers.env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        stdin=subprocess.DEVNULL,
    )


def catch_up_projection(run: Run) -> None:
    """The run's projection applied to the end of the log (``rlstream project run --once``)."""
    done = cli(run, "project", "run", "--once", "--url", run.projection_url)
    assert done.returncode == 0, done.stderr[-3000:]


def assert_projection_matches_a_rebuild(run: Run, rebuilt: Path) -> None:
    """The projection the (killed and restarted) projector kept up incrementally, caught up to the end
    of the log, is row for row the projection rebuilt from offset 0."""
    catch_up_projection(run)
    done = cli(run, "project", "rebuild", "--url", f"sqlite:///{rebuilt}")
    assert done.returncode == 0, done.stderr[-3000:]
    diff = cli(run, "project", "diff", run.projection_url, f"sqlite:///{rebuilt}", "--json")
    assert diff.returncode == 0, diff.stdout[-3000:] + diff.stderr[-3000:]
    result = json.loads(diff.stdout)
    assert result["identical"], result
    rows = {t["table"]: t["rows_a"] for t in result["tables"]}
    assert rows.get("samples", 0) >= len(run.tasks) * run.group_size, rows


def fact(event: Any, attr: str = "sample_id") -> tuple[str, int]:
    """What one event states once: its ``attr`` (a sample's id, or a group's) and, for a sandbox run,
    which run of the sample it is - a sample runs more than once on purpose (the filter's re-runs, the
    probe run), each run its own fact."""
    return str(getattr(event, attr)), event.run_index if isinstance(event, SandboxExecuted) else 0


def assert_exactly_once(run: Run) -> dict[str, int]:
    """The run's account, read afresh from the log: every task yields its group exactly once, every
    sample exactly one event per stage, no event id twice on any topic, and the learner trained each
    accepted sample exactly once (or dropped it as stale, and counted it). Returns the counts."""
    n, g = len(run.tasks), run.group_size
    task_ids = {t.task_id for t in run.tasks}
    seen = {topic: read_all(run.bootstrap, topic, run.run_id) for topic in FLOW}
    for topic, events in seen.items():
        dupes = [i for i, c in Counter(s.event_id for s in events).items() if c > 1]
        assert not dupes, f"{topic}: event ids twice on the log: {dupes[:3]}"

    def per(topic: str, attr: str) -> Counter[str]:
        return Counter(str(getattr(s.event, attr)) for s in seen[topic])

    requested = per(ROLLOUTS_REQUESTED.name, "task_id")
    assert set(requested) == task_ids and set(requested.values()) == {1}, requested
    assembled = per(EXPERIENCES.name, "task_id")
    assert set(assembled) == task_ids and set(assembled.values()) == {1}, assembled
    groups = {s.event.group_id for s in seen[ROLLOUTS_REQUESTED.name]}
    assert {s.event.group_id for s in seen[EXPERIENCES.name]} == groups
    assert not any(s.event.partial for s in seen[EXPERIENCES.name]), "a group timed out incomplete"
    for topic in PER_SAMPLE:
        # a sample may run more than once on purpose (the filter's re-runs, the probe run): each run
        # is its own fact, named by its index, and must be on the log exactly once
        facts = Counter(fact(s.event) for s in seen[topic])
        samples = {sample for sample, _run in facts}
        assert len(samples) == n * g, f"{topic}: {len(samples)} samples, expected {n * g}"
        assert set(facts.values()) == {1}, f"{topic}: a sample (run) twice: {facts.most_common(2)}"
        assert {s.event.group_id for s in seen[topic]} == groups, topic

    # what feeds the gradient: accepted samples, and rejected ones as the failures they are
    accepted = {
        s.event.sample_id
        for s in seen[VERDICTS.name]
        if s.event.verdict == "accept" or (s.event.verdict == "reject" and s.event.failure_reward is not None)
    }
    produced = [x.sample_id for s in seen[EXPERIENCES.name] for x in s.event.samples]
    assert len(produced) == len(set(produced)), "a sample in two experiences"
    assert set(produced) == accepted, "experiences do not carry exactly the accepted and rejected samples"

    trained_by_version, dropped = training_account(read_training_log(run.training_log))
    trained = [s for ids in trained_by_version.values() for s in ids]
    assert len(trained) == len(set(trained)), "a sample was trained in two published versions"
    assert not set(trained) & set(dropped), "a sample both trained and dropped"
    assert set(trained) | set(dropped) == accepted, "the learner's account differs from the accepted samples"
    # every published version is on rl.policy once (re-publications after a restart keep the event id)
    versions = Counter(s.event.policy_version for s in seen[POLICY.name])
    assert set(versions.values()) <= {1}, versions
    return {
        "tasks": n,
        "samples": n * g,
        "accepted": len(accepted),
        "trained": len(trained),
        "dropped_stale": len(dropped),
        "policy_versions": len(versions),
    }


def assert_effectively_once(run: Run) -> dict[str, Any]:
    """The account of a run on an at-least-once runtime (Faust), read afresh from the log and the
    projection: a record may be on the log more than once, but only under one event id per fact (a task
    one group, a group one experience, a sample one event per stage); the learner trained each sample of
    the experiences once; the projection holds each fact once. Returns the counts, duplicates per topic
    included."""
    n, g = len(run.tasks), run.group_size
    task_ids = {t.task_id for t in run.tasks}
    seen = {topic: read_all(run.bootstrap, topic, run.run_id) for topic in FLOW}
    duplicates = {topic: len(events) - len({s.event_id for s in events}) for topic, events in seen.items()}

    def one_id_per(topic: str, attr: str) -> dict[tuple[str, int], Any]:
        """Fact -> its one event (the first on the log); fails if a fact has two event ids. A sample
        may run more than once on purpose (the filter's re-runs, the probe run): each run is its own
        fact, named by its index."""
        ids: dict[tuple[str, int], set[str]] = defaultdict(set)
        first: dict[tuple[str, int], Any] = {}
        for s in seen[topic]:
            key = fact(s.event, attr)
            ids[key].add(s.event_id)
            first.setdefault(key, s.event)
        twice = {k: sorted(v) for k, v in ids.items() if len(v) > 1}
        assert not twice, f"{topic}: a {attr} under two event ids: {list(twice.items())[:2]}"
        return first

    requested = one_id_per(ROLLOUTS_REQUESTED.name, "group_id")
    assert sorted(e.task_id for e in requested.values()) == sorted(task_ids), "each task one group"
    experiences = one_id_per(EXPERIENCES.name, "group_id")
    assert set(experiences) == set(requested), "each group one experience"
    assert not any(e.partial for e in experiences.values()), "a group timed out incomplete"
    runs = 0
    for topic in PER_SAMPLE:
        facts = one_id_per(topic, "sample_id")
        samples = {sample for sample, _run in facts}
        assert len(samples) == n * g, f"{topic}: {len(samples)} samples, expected {n * g}"
        if topic == EXECUTIONS.name:
            runs = len(facts)

    in_experiences = [x.sample_id for e in experiences.values() for x in e.samples]
    assert len(in_experiences) == len(set(in_experiences)), "a sample in two experiences"
    trained_by_version, dropped = training_account(read_training_log(run.training_log))
    trained = [s for ids in trained_by_version.values() for s in ids]
    assert len(trained) == len(set(trained)), "a sample was trained in two published versions"
    assert set(trained) | set(dropped) == set(in_experiences), "the learner's account differs"

    path = run.home / "projections.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30) as db:

        def rows(table: str, column: str = "group_id") -> int:
            (count,) = db.execute(
                f"SELECT COUNT(*) FROM {table} WHERE {column} LIKE ?", (f"{run.run_id}/%",)
            ).fetchone()
            return int(count)

        projected = {
            "groups": rows("groups"),
            "samples": rows("samples"),
            "executions": rows("executions"),
            "verdicts": rows("verdicts"),
            "experiences": rows("experiences"),
            "experience_samples": rows("experience_samples"),
        }
    expected = {
        "groups": n,
        "samples": n * g,
        "executions": runs,  # each run of a sample once (re-runs and probe runs included)
        "verdicts": n * g,
        "experiences": n,
        "experience_samples": len(in_experiences),
    }
    assert projected == expected, f"projected {projected}, expected {expected}"
    counts = {
        "tasks": n,
        "samples": n * g,
        "trained": len(trained),
        "dropped_stale": len(dropped),
        "duplicates_on_log": duplicates,
    }
    print(f"\nDUPLICATES {json.dumps({'runtime': 'faust', 'run': run.run_id, **duplicates})}", flush=True)
    return counts


# -- the faults ---------------------------------------------------------------------------------------
#: samples per group, and tasks per wave: two groups in flight at most (``worker_env``), so a wave keeps
#: every stage busy for a while after its first task is done
G = 2
WAVE = 6
#: how long one stage of a scenario may take on a busy 2-core machine (generous: never a speed check)
STAGE_TIMEOUT_S = 600
#: the stream processors, in the pipeline's order (each one's output topic is FLOW's at its index)
PROCESSORS = PIPELINE[:6]


def start(bootstrap: str, workdir: Path, **env: str) -> Run:
    """Every worker of a new run on ``bootstrap`` (settings home and logs under ``workdir``), followed
    from the start. ``env``: further settings of the workers (``RLSTREAM_RUNTIME="faust"``)."""
    ensure_topics(bootstrap, KafkaConfig(), CATALOG)
    run_id = f"faults-{uuid.uuid4().hex[:8]}"
    home = workdir / "home"
    logs = workdir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    # small learner batches: a version is published every few groups, so a kill lands between them
    env = {"RLSTREAM_LEARNER__TOKEN_BUDGET": "256", **env}
    workers = Supervised(worker_env(bootstrap, home, run_id, G, **env), logs)
    for name in PIPELINE:
        workers.start(name)
    try:
        follower = Follower(bootstrap, run_id)
    except BaseException:
        workers.stop()
        raise
    return Run(bootstrap, run_id, home, G, workers, follower)


def finish(run: Run, *, effectively_once: bool = False) -> dict[str, Any]:
    """The learner caught up with every experience, the workers stopped, the throughput figures settled
    and the run's account checked, read afresh from the log: exactly once (the transactional runtime),
    or ``effectively_once`` (Faust: the projection caught up to the end of the log first); returns its
    counts."""
    run.wait(run.learner_covers_all, STAGE_TIMEOUT_S, "the learner to account for every experience")
    run.workers.stop()
    run.settle()
    if not effectively_once:
        return assert_exactly_once(run)
    catch_up_projection(run)
    return assert_effectively_once(run)


def kill_worker(run: Run, name: str, *, label: str = "") -> None:
    """A stream processor killed with SIGKILL while a wave is under way (restarted at once, as a
    supervisor does). Recorded: the first event downstream after the kill, the killed stage's own first
    output after it (its stage commits again), and the start-up of the process that took over from its
    log (:func:`restart_timeline`). A leased worker (the generator) has a warm standby waiting on its
    instance's lease, as ``rlstream run`` keeps one: the holder is killed, and the standby must be the
    one that takes over (the killed one, restarted, is the next standby)."""
    if name not in PROCESSORS:
        raise UsageError(f"{name!r} is not a stream processor", hint="one of: " + ", ".join(PROCESSORS))
    killed = taker = name
    lease: Path | None = None
    if name in LEASED_WORKERS:
        lease = run.worker_lease(name)
        taker = start_standby(run, name)
        killed = run.workers.holding(lease)
    wave = run.publish_wave(WAVE)
    run.wait(run.wave_progress(wave, 1), STAGE_TIMEOUT_S, "the wave under way")
    t0 = run.workers.kill9(killed)
    run.wait(run.wave_done(wave), STAGE_TIMEOUT_S, f"the wave after the {name}'s kill")
    if lease is not None and lease_holder(lease) != run.workers.procs[taker].pid:
        raise AssertionError(f"the standby {name} did not take over: {run.workers.tails()}")
    started: dict[str, Any] = restart_timeline(run.workers.logs / f"{taker}.log", t0)
    run.record(
        f"kill -9 {name}{label}",
        t0,
        first_event_downstream_s=run.follower.first_after(t0, FLOW[1:-1]),
        # the stage's own output topic: when the killed stage committed again
        stage_output_s=run.follower.first_after(t0, [FLOW[PIPELINE.index(name)]]),
        **started,
    )


def start_standby(run: Run, name: str) -> str:
    """A warm standby of the run's instance 0 of leased worker ``name`` (process ``<name>-standby``), as
    ``rlstream run`` keeps one: started once the first one holds the instance's lease (not on the same
    cores at the same time as its start-up), if not running yet; returns the name of the process that
    stands by once it does (after a takeover, the first one restarted)."""
    lease = run.worker_lease(name)
    spare = f"{name}-standby"
    if spare not in run.workers.procs:
        run.wait(lambda: lease_holder(lease) is not None, STAGE_TIMEOUT_S, f"the {name}'s lease")
        run.workers.start(spare, kind=name)

    def other() -> str:
        return spare if run.workers.holding(lease) == name else name

    run.wait(lambda: run.workers.standing_by(other()), STAGE_TIMEOUT_S, f"the standby {name}")
    return other()


def kill_learner(run: Run, *, label: str = "") -> None:
    """The learner killed with SIGKILL once it has trained for a while, a warm standby waiting on the
    run's lease (as ``rlstream run`` keeps one); more work arrives while it is away. Checks that the
    standby took over."""
    wave = run.publish_wave(WAVE)

    def trained_a_while() -> bool:
        # the learner's throughput before the kill is its baseline: at least one measuring window of it
        first = run.follower.first_version_at()
        return first is not None and time.time() - first >= recovery.WINDOW_S

    run.wait(trained_a_while, STAGE_TIMEOUT_S, "the learner training for a while")
    # a warm standby, as `rlstream run` starts one once the first learner holds the run's lease
    run.workers.start("learner-standby", kind="learner")
    run.wait(lambda: run.workers.standing_by("learner-standby"), STAGE_TIMEOUT_S, "the standby learner")
    before = run.follower.max_policy_version()
    active = run.workers.holding(run.learner_lease)
    standby = run.workers.procs["learner-standby" if active == "learner" else "learner"].pid
    t0 = run.workers.kill9(active)
    # work that arrives while the learner is away: it must be trained once the learner is back
    late = run.publish_wave(WAVE // 2)
    run.wait(run.wave_done(wave + late), STAGE_TIMEOUT_S, "the waves after the learner's kill")
    new_version = run.wait(
        lambda: run.follower.max_policy_version() > before, STAGE_TIMEOUT_S, "a new policy version"
    )
    caught_up = run.wait(run.learner_covers_all, STAGE_TIMEOUT_S, "the learner caught up")
    took_over = [e for e in read_training_log(run.training_log) if e["kind"] == "start" and e["time"] > t0]
    if not took_over or took_over[0]["pid"] != standby:
        raise AssertionError(f"the standby did not take over: {took_over[:1]}")
    run.record(
        f"kill -9 learner{label}",
        t0,
        learner_restarted_s=run.learner_started_after(t0),
        first_new_policy_version_s=run.follower.first_after(
            t0, [POLICY.name], lambda e: e.policy_version > before
        ),
        new_version_seen_s=round(new_version - t0, 2),
        learner_caught_up_s=round(caught_up - t0, 2),
        stage="learner",
    )


def kill_projector(run: Run, *, label: str = "") -> None:
    """The projector killed with SIGKILL while it applies a wave."""
    wave = run.publish_wave(WAVE // 2)
    run.wait(lambda: run.projected() > 0, STAGE_TIMEOUT_S, "the projector under way")
    run.wait(run.wave_progress(wave, 1), STAGE_TIMEOUT_S, "the wave under way")
    before = run.projected()
    t0 = run.workers.kill9("projector")
    moved = run.wait(lambda: run.projected() > before, STAGE_TIMEOUT_S, "the projector applying again")
    run.wait(run.wave_done(wave), STAGE_TIMEOUT_S, "the wave after the projector's kill")
    run.record(f"kill -9 projector{label}", t0, first_batch_applied_s=round(moved - t0, 2))


def restart_broker(run: Run, cluster: LocalCluster) -> None:
    """The run's only broker killed with SIGKILL while a wave is under way and started again on its data."""
    wave = run.publish_wave(WAVE)
    run.wait(run.wave_progress(wave, 2), STAGE_TIMEOUT_S, "the wave under way")
    restarts_before = sum(run.workers.restarts.values())
    (node,) = cluster.status(probe=False).nodes
    if node.pid is None:
        raise AssertionError("the broker is not running")
    t0 = time.time()
    os.kill(node.pid, signal.SIGKILL)
    _wait_gone(node.pid, 30)
    cluster.up()
    back = time.time()
    try:
        run.wait(run.wave_done(wave), STAGE_TIMEOUT_S, "the wave after the broker's restart")
    except AssertionError as stalled:
        raise AssertionError(f"{stalled}\n{_broker_view(run.bootstrap, cluster)}") from None
    done = time.time()
    caught_up = run.wait(run.learner_covers_all, STAGE_TIMEOUT_S, "the learner caught up")
    run.record(
        "kill -9 broker, start again on the same data",
        t0,
        broker_answering_s=round(back - t0, 2),
        first_event_downstream_s=run.follower.first_after(t0, FLOW[1:-1]),
        wave_done_s=round(done - t0, 2),
        learner_caught_up_s=round(caught_up - t0, 2),
        worker_exits_restarted=sum(run.workers.restarts.values()) - restarts_before,
    )


#: what a broker's log says about its coordinators and its own troubles
_BROKER_LOG_MARKS = ("ERROR", "WARN", "oordinator", "__consumer_offsets", "__transaction_state")


def _broker_view(bootstrap: str, cluster: LocalCluster, lines: int = 60) -> str:
    """What the broker says when a stage stalls after its restart: the state of every consumer group as
    its group coordinator answers (or the error it answers with: a coordinator still loading its
    partitions of __consumer_offsets says so), and its own log's lines on coordinators and errors."""
    out = ["--- the broker's consumer groups"]
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        listed = admin.list_consumer_groups(request_timeout=10).result()
        ids = sorted(g.group_id for g in listed.valid)
        described = admin.describe_consumer_groups(ids, request_timeout=10) if ids else {}
        out += [] if ids else ["(no group listed)"]
        for gid, fut in described.items():
            try:
                g = fut.result()
                out.append(f"{gid}: {g.state} ({len(g.members)} member(s))")
            except Exception as exc:  # the error is the finding
                out.append(f"{gid}: {exc}")
        out += [f"(listing) {e}" for e in listed.errors]
    except Exception as exc:  # the error is the finding
        out.append(f"(not answered) {exc}")
    out.append("--- the run's topics where an open transaction holds read_committed readers back")
    out += _held_back(bootstrap) or ["(none)"]
    for node in cluster.status(probe=False).nodes:
        out.append(f"--- broker {node.node_id}'s log ({node.log_file})")
        try:
            text = node.log_file.read_text(errors="replace").splitlines()
        except OSError as exc:
            out.append(f"(unreadable: {exc})")
            continue
        out += [ln[:300] for ln in text if any(m in ln for m in _BROKER_LOG_MARKS)][-lines:]
    return "\n".join(out)


def _held_back(bootstrap: str) -> list[str]:
    """Each partition of the run's topics and the processors' changelogs whose last stable offset (what a
    read_committed reader may read up to) lies below its end: a transaction open there holds back every
    reader of it."""
    found = []
    stable = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "rlstream.faults.view",
            "isolation.level": "read_committed",
        }
    )
    ends = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "rlstream.faults.view",
            "isolation.level": "read_uncommitted",
        }
    )
    try:
        md = ends.list_topics(timeout=10)
        changelogs = sorted(t for t in md.topics if t.startswith("rlstream.state."))
        for topic in (*FLOW, *changelogs):
            meta = md.topics.get(topic)
            for p in sorted(meta.partitions) if meta is not None else ():
                try:
                    _, lso = stable.get_watermark_offsets(TopicPartition(topic, p), 10)
                    _, end = ends.get_watermark_offsets(TopicPartition(topic, p), 10)
                except Exception as exc:  # the error is the finding
                    found.append(f"{topic}[{p}]: {exc}")
                    continue
                if lso < end:
                    found.append(f"{topic}[{p}]: stable offset {lso} < end {end}")
    except Exception as exc:  # the error is the finding
        found.append(f"(not answered) {exc}")
    finally:
        stable.close()
        ends.close()
    return found


def _leaders(bootstrap: str, topics: list[str]) -> Counter[int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    md = admin.list_topics(timeout=30)
    return Counter(p.leader for t in topics if t in md.topics for p in md.topics[t].partitions.values())


def lose_a_broker(run: Run, cluster: LocalCluster) -> None:
    """On a 3-broker cluster (every event topic on 3 replicas, writes need 2 in sync: checked first), the
    broker leading the most partitions killed with SIGKILL while a wave is under way and left down for a
    further wave."""
    admin = AdminClient({"bootstrap.servers": run.bootstrap})
    md = admin.list_topics(timeout=30)
    replicas = {len(p.replicas) for p in md.topics[EXPERIENCES.name].partitions.values()}
    (cfg,) = admin.describe_configs([ConfigResource(ConfigResource.Type.TOPIC, EXPERIENCES.name)]).values()
    in_sync = cfg.result(30)["min.insync.replicas"].value
    if replicas != {3} or in_sync != "2":
        raise AssertionError(f"not the scenario: replicas {replicas}, min.insync.replicas {in_sync}")

    wave = run.publish_wave(WAVE)
    run.wait(run.wave_progress(wave, 2), STAGE_TIMEOUT_S, "the wave under way")
    # the broker leading the most partitions of the run's topics and of the transaction and offset logs
    leaders = _leaders(run.bootstrap, [*FLOW, "__transaction_state", "__consumer_offsets"])
    victim_id = leaders.most_common(1)[0][0]
    victim = next(n for n in cluster.status(probe=False).nodes if n.node_id == victim_id)
    if victim.pid is None:
        raise AssertionError(f"broker {victim_id} is not running")
    restarts_before = sum(run.workers.restarts.values())
    t0 = time.time()
    os.kill(victim.pid, signal.SIGKILL)
    run.wait(run.wave_done(wave), STAGE_TIMEOUT_S, "the wave after a broker's kill")
    done = time.time()
    # a whole further wave with the broker still down: two in-sync replicas are enough for acks=all
    wave2 = run.publish_wave(WAVE)
    run.wait(run.wave_done(wave2), STAGE_TIMEOUT_S, "a wave with one broker down")
    caught_up = run.wait(run.learner_covers_all, STAGE_TIMEOUT_S, "the learner caught up")
    run.record(
        f"kill -9 broker {victim_id} of 3 (leader of {leaders[victim_id]} partitions), left down",
        t0,
        first_event_downstream_s=run.follower.first_after(t0, FLOW[1:-1]),
        wave_done_s=round(done - t0, 2),
        learner_caught_up_s=round(caught_up - t0, 2),
        worker_exits_restarted=sum(run.workers.restarts.values()) - restarts_before,
    )


# -- a restarted worker's start-up, from its log ------------------------------------------------------
#: the milestones of a stream processor's start-up, by the first log line after the restart that says
#: it (substring, case-insensitive), in the order they happen: the worker built (its imports, the
#: generator's model and policy), and on Faust the worker ready (joined, its state restored)
START_MARKS: tuple[tuple[str, str], ...] = (
    ("built_s", "] INFO built "),
    # a standby that took the instance over (built before the kill)
    ("lease_held_s", "holds the instance's lease"),
    ("faust_ready_s", "[^---Recovery]: Worker ready"),
)


def restart_timeline(log: Path, t0: float) -> dict[str, float | None]:
    """Seconds from ``t0`` (a kill) to the restarted worker's first log line (the process started: its
    interpreter, the command's imports and settings) and to each of :data:`START_MARKS`, read from the
    worker's log (``%(asctime)s`` local time, millisecond resolution); None where it does not say it."""
    out: dict[str, float | None] = {"log_first_line_s": None, **{k: None for k, _ in START_MARKS}}
    if not log.exists():
        return out
    for line in log.read_text(errors="replace").splitlines():
        at = _logged_at(line)
        if at is None or at < t0:
            continue
        if out["log_first_line_s"] is None:
            out["log_first_line_s"] = round(at - t0, 2)
        lowered = line.lower()
        for key, mark in START_MARKS:
            if out[key] is None and mark.lower() in lowered:
                out[key] = round(at - t0, 2)
    return out


def _logged_at(line: str) -> float | None:
    """The time of a log line that starts with ``%(asctime)s`` (``2026-01-02 03:04:05,678``)."""
    try:
        return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f").timestamp()
    except ValueError:
        return None
