"""Load: a backlog of N trivial tasks through every processor at once (scheduler, tiny-model generator,
sandbox, reward, filter, experience, learner), each its own process on a real broker.

What it shows: memory stays bounded while the backlog drains (the scheduler holds at its backpressure
bounds instead of flooding the pipeline), throughput per window stays steady, and what a sample
costs end to end. Sampled every few seconds: the RSS of every process (a worker together with its
children: the sandbox's pool, the broker JVM), the learner's lag and the groups in flight. From the log
itself (broker timestamps): samples judged per window, request -> experience latency per group and
generation -> verdict latency per sample.

The tasks are the synthetic family's one-token comparisons (``return x > `` completed by one token),
each with its own thresholds so no sandbox result is served from the cache. The command line, with its
own broker: ``python -m bench.load``.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from infra.kafka.admin import ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.consumer import decode_message
from infra.kafka.lag import LagProbe
from infra.kafka.producer import EventProducer
from schemas.errors import BrokerError, RlstreamError
from schemas.rollout import CodeGenerated, ExperienceReady, NoiseVerdict, RolloutRequested
from schemas.task import TaskPublished, TestCase
from schemas.topics import CATALOG, EXPERIENCES, GENERATIONS, ROLLOUTS_REQUESTED, TASKS, VERDICTS

CACHE = Path.home() / ".rlstream"
WORKERS = ("scheduler", "generator", "sandbox", "reward", "filter", "experience", "learner")
LEARNER_GROUP = "rlstream.learner"

_TEMPLATES = (
    ("is_large", "x", ">"),
    ("is_small", "x", "<"),
    ("at_least", "value", ">="),
    ("at_most", "value", "<="),
)


def load_tasks(n: int, prefix: str = "load") -> list[TaskPublished]:
    """``n`` trivial tasks: a comparison against a small threshold, completed by one token. Each has
    its own scale, so its cases (and every sandbox job) differ from every other task's."""
    tasks = []
    for i in range(n):
        name, arg, op = _TEMPLATES[i % len(_TEMPLATES)]
        scale = 100 * (i + 1)
        big = op in (">", ">=")
        head = f'def {name}({arg}: int) -> bool:\n    """Compare {arg} with a small threshold."""\n'
        tasks.append(
            TaskPublished(
                task_id=f"{prefix}/{i:05d}",
                prompt=f"{head}    return {arg} {op} ",
                entry_point=name,
                tests=(
                    TestCase(input=f"({10 * scale},)", output=repr(big)),
                    TestCase(input=f"({-10 * scale},)", output=repr(not big)),
                ),
                hidden_tests=(
                    TestCase(input=f"({5 * scale},)", output=repr(big)),
                    TestCase(input=f"({-7 * scale - 3},)", output=repr(not big)),
                ),
                reference=f"{head}    return {arg} {op} 0\n",
                source="load",
            )
        )
    return tasks


# ---- processes and their memory ------------------------------------------------------------------


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            stat = (proc / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(proc.name))
    return kids


def _rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss_mb(pids: dict[str, int]) -> dict[str, float]:
    """RSS in MiB of each named process together with all its descendants (0 when it is gone)."""
    kids = _children()
    out: dict[str, float] = {}
    for name, root in pids.items():
        total, todo = 0, [root]
        while todo:
            pid = todo.pop()
            total += _rss_kb(pid)
            todo.extend(kids.get(pid, ()))
        out[name] = round(total / 1024, 1)
    return out


@dataclass
class Fleet:
    """The worker processes of one run, with their logs."""

    env: dict[str, str]
    logs: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    restarts: dict[str, int] = field(default_factory=dict)

    def start(self, name: str) -> None:
        log = (self.logs / f"{name}.log").open("ab")
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", "rlstream.cli", "worker", name],
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )

    def pids(self) -> dict[str, int]:
        return {name: p.pid for name, p in self.procs.items()}

    def revive(self, echo: Callable[[str], None]) -> None:
        """Restart a worker that exited (the runtime resumes from its last committed transaction)."""
        for name, proc in list(self.procs.items()):
            if proc.poll() is not None:
                self.restarts[name] = self.restarts.get(name, 0) + 1
                echo(f"[load] worker {name} exited ({proc.returncode}); restarting")
                self.start(name)

    def stop(self) -> None:
        stop_all(self.procs.values())


def stop_all(procs: Iterable[subprocess.Popen[bytes]]) -> None:
    """SIGTERM every worker still running, then wait for each (a minute to end its transaction and close
    cleanly; killed past that)."""
    procs = list(procs)
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def tiny_run_env(bootstrap: str, home: Path, run_id: str, group_size: int, **extra: str) -> dict[str, str]:
    """The environment of a bench run's workers: one-token samples from the tiny model, a training learner
    on the CPU, one sandbox worker, the shared model and sandbox caches; ``extra`` adds or replaces."""
    return {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "RLSTREAM_HOME": str(home),
        "RLSTREAM_RUN_ID": run_id,
        "RLSTREAM_GENERATOR__MODEL": "tiny",
        "RLSTREAM_GENERATOR__MODELS_DIR": str(CACHE / "models"),
        "RLSTREAM_SANDBOX__CACHE_DIR": str(CACHE / "cache" / "sandbox"),
        "RLSTREAM_SANDBOX__WORKERS": "1",
        "RLSTREAM_LEARNER__ACCELERATOR": "cpu",
        "RLSTREAM_LEARNER__LR": "0.005",
        "RLSTREAM_LEARNER__TOKEN_BUDGET": "4096",
        "RLSTREAM_PIPELINE__SCHEDULER__ONLY_OWN_RUN": "true",
        "RLSTREAM_PIPELINE__SCHEDULER__GROUP_SIZE": str(group_size),
        "RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__MAX_TOKENS": "1",
        "RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__TEMPERATURE": "1.0",
        "RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__TOP_P": "1.0",
        **extra,
    }


def worker_env(bootstrap: str, home: Path, run_id: str, group_size: int, **extra: str) -> dict[str, str]:
    return tiny_run_env(bootstrap, home, run_id, group_size, **{"RLSTREAM_SANDBOX__BACKEND": "wasm", **extra})


# ---- the run's events, as they are committed -------------------------------------------------------


@dataclass
class Account:
    """Broker timestamps (seconds) of the run's events, keyed by event id (duplicates counted)."""

    run_id: str
    requested: dict[str, float] = field(default_factory=dict)  # group id -> time
    experienced: dict[str, float] = field(default_factory=dict)  # group id -> time
    generated: dict[str, float] = field(default_factory=dict)  # sample id -> time
    judged: dict[str, float] = field(default_factory=dict)  # sample id -> time
    verdicts: dict[str, int] = field(default_factory=dict)
    duplicates: dict[str, int] = field(default_factory=dict)  # topic -> repeated event ids
    _seen: set[tuple[str, str]] = field(default_factory=set)

    def fold(self, topic: str, event_id: str, event: Any, at: float) -> None:
        if (topic, event_id) in self._seen:
            self.duplicates[topic] = self.duplicates.get(topic, 0) + 1
            return
        group = str(getattr(event, "group_id", ""))
        if not group.startswith(self.run_id + "/"):
            return
        self._seen.add((topic, event_id))
        if isinstance(event, RolloutRequested):
            self.requested.setdefault(event.group_id, at)
        elif isinstance(event, ExperienceReady):
            self.experienced.setdefault(event.group_id, at)
        elif isinstance(event, CodeGenerated):
            self.generated.setdefault(event.sample_id, at)
        elif isinstance(event, NoiseVerdict):
            self.judged.setdefault(event.sample_id, at)
            self.verdicts[event.verdict] = self.verdicts.get(event.verdict, 0) + 1

    def in_flight_at(self, t: float) -> int:
        issued = sum(1 for at in self.requested.values() if at <= t)
        done = sum(1 for at in self.experienced.values() if at <= t)
        return issued - done


class Tail:
    """Follows the run's topics (read_committed) from a point in time."""

    TOPICS = (ROLLOUTS_REQUESTED.name, GENERATIONS.name, VERDICTS.name, EXPERIENCES.name)

    def __init__(self, bootstrap: str, since_ms: int) -> None:
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"rlstream.load.{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "isolation.level": "read_committed",
            }
        )
        wanted = [
            TopicPartition(t, p, since_ms)
            for t in self.TOPICS
            for p in self._consumer.list_topics(t, 30).topics[t].partitions
        ]
        deadline = time.monotonic() + 60
        while True:
            try:
                starts = self._consumer.offsets_for_times(wanted, 30)
                break
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        self._consumer.assign(
            [TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else -1) for tp in starts]
        )

    def poll(self, account: Account, budget_s: float = 1.0) -> None:
        deadline = time.monotonic() + budget_s
        while time.monotonic() < deadline:
            msgs = self._consumer.consume(1000, 0.2)
            if not msgs:
                return
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() != KafkaError._PARTITION_EOF:
                        raise BrokerError(f"following the run failed: {err}")
                    continue
                with suppress(RlstreamError):
                    item = decode_message(msg)
                    account.fold(msg.topic() or "", item.envelope.id, item.event, msg.timestamp()[1] / 1000)

    def close(self) -> None:
        self._consumer.close()


# ---- figures --------------------------------------------------------------------------------------


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def figures(
    account: Account,
    samples: list[dict[str, Any]],
    *,
    started: float,
    window_s: float,
    n_groups: int,
    group_size: int,
) -> dict[str, Any]:
    judged = sorted(account.judged.values())
    group_lat = [
        account.experienced[g] - at for g, at in account.requested.items() if g in account.experienced
    ]
    sample_lat = [account.judged[s] - at for s, at in account.generated.items() if s in account.judged]
    windows: list[int] = []
    if judged:
        t0 = judged[0]
        for at in judged:
            i = int((at - t0) // window_s)
            windows.extend([0] * (i + 1 - len(windows)))
            windows[i] += 1
    steady = windows[1:-1]  # the first window warms up, the last is cut short
    span = judged[-1] - judged[0] if len(judged) > 1 else 0.0
    rss_max: dict[str, float] = {}
    rss_first: dict[str, float] = {}
    rss_last: dict[str, float] = {}
    for s in samples:
        for name, mb in s["rss_mb"].items():
            rss_max[name] = max(rss_max.get(name, 0.0), mb)
    # the halves of the drain (from the first verdict on): start-up is not growth
    drain = [s for s in samples if s["samples_judged"] > 0]
    half = len(drain) // 2
    for part, into in ((drain[:half], rss_first), (drain[half:], rss_last)):
        for s in part:
            for name, mb in s["rss_mb"].items():
                into[name] = max(into.get(name, 0.0), mb)
    lags = [s["learner_lag"] for s in samples if s["learner_lag"] is not None]
    return {
        "run_id": account.run_id,
        "tasks": n_groups,
        "group_size": group_size,
        "elapsed_s": round(time.time() - started, 1),
        "groups_requested": len(account.requested),
        "groups_done": len(account.experienced),
        "samples_generated": len(account.generated),
        "samples_judged": len(judged),
        "verdicts": dict(account.verdicts),
        "duplicate_event_ids": dict(account.duplicates),
        "samples_per_s": round((len(judged) - 1) / span, 3) if span > 0 else 0.0,
        "window_s": window_s,
        "samples_per_window": windows,
        "window_mean": round(statistics.mean(steady), 1) if steady else None,
        "window_cv": round(statistics.pstdev(steady) / statistics.mean(steady), 3)
        if len(steady) > 1 and statistics.mean(steady) > 0
        else None,
        "request_to_experience_p50_s": round(_pct(group_lat, 0.5), 3),
        "request_to_experience_p99_s": round(_pct(group_lat, 0.99), 3),
        "generation_to_verdict_p50_s": round(_pct(sample_lat, 0.5), 3),
        "generation_to_verdict_p99_s": round(_pct(sample_lat, 0.99), 3),
        "rss_max_mb": rss_max,
        "rss_max_first_half_mb": rss_first,
        "rss_max_second_half_mb": rss_last,
        "learner_lag_max": max(lags) if lags else None,
        "groups_in_flight_max": max((s["groups_in_flight"] for s in samples), default=0),
        "restarts": {},
        "timeline": samples,
    }


# ---- the run ----------------------------------------------------------------------------------------


@contextmanager
def _home(home: Path | None) -> Iterator[Path]:
    if home is not None:
        home.mkdir(parents=True, exist_ok=True)
        yield home
        return
    with tempfile.TemporaryDirectory(prefix="rlstream-load-") as tmp:
        yield Path(tmp)


def run_load(
    bootstrap: str,
    n_tasks: int,
    *,
    group_size: int = 2,
    home: Path | None = None,
    max_seconds: float | None = None,
    sample_every_s: float = 5.0,
    window_s: float = 60.0,
    report_every_s: float = 60.0,
    on_report: Callable[[dict[str, Any]], None] | None = None,
    echo: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
    env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Publish ``n_tasks`` tasks as one run, run every worker until each task's group has its
    experience (or ``max_seconds``), and return the figures (see the module docstring)."""
    ensure_topics(bootstrap, KafkaConfig(), CATALOG)
    run_id = f"load-{uuid.uuid4().hex[:8]}"
    with _home(home) as h:
        logs = h / "logs" / run_id
        logs.mkdir(parents=True, exist_ok=True)
        fleet = Fleet(worker_env(bootstrap, h, run_id, group_size, **(env or {})), logs)
        started = time.time()
        tail = Tail(bootstrap, int(started * 1000) - 1000)
        lag = LagProbe(bootstrap, LEARNER_GROUP, EXPERIENCES.name)
        account = Account(run_id)
        samples: list[dict[str, Any]] = []
        broker_pid = _broker_pid(bootstrap)
        result: dict[str, Any] = {}
        try:
            for name in WORKERS:
                fleet.start(name)
            with EventProducer(bootstrap, source="bench/load", run_id=run_id) as producer:
                for task in load_tasks(n_tasks, prefix=f"{run_id}-t"):
                    producer.publish(task, topic=TASKS.name)
            echo(f"[load] run {run_id}: {n_tasks} tasks published (G={group_size}); logs in {logs}")
            next_sample = next_report = time.monotonic()
            while len(account.experienced) < n_tasks:
                tail.poll(account)
                now = time.monotonic()
                if now >= next_sample:
                    next_sample = now + sample_every_s
                    fleet.revive(echo)
                    pids = fleet.pids()
                    if broker_pid is not None:
                        pids["broker"] = broker_pid
                    try:
                        learner_lag: int | None = lag.lag()
                    except BrokerError:
                        learner_lag = None
                    samples.append(
                        {
                            "t": round(time.time() - started, 1),
                            "rss_mb": tree_rss_mb(pids),
                            "learner_lag": learner_lag,
                            "groups_in_flight": account.in_flight_at(time.time()),
                            "groups_done": len(account.experienced),
                            "samples_judged": len(account.judged),
                        }
                    )
                if now >= next_report:
                    next_report = now + report_every_s
                    result = figures(
                        account,
                        samples,
                        started=started,
                        window_s=window_s,
                        n_groups=n_tasks,
                        group_size=group_size,
                    )
                    result.update(finished=False, restarts=dict(fleet.restarts))
                    echo(
                        f"[load] {result['elapsed_s']:.0f}s: groups {result['groups_done']}/{n_tasks}, "
                        f"samples {result['samples_judged']} ({result['samples_per_s']}/s), "
                        f"in flight {samples[-1]['groups_in_flight'] if samples else 0}, "
                        f"learner lag {samples[-1]['learner_lag'] if samples else None}, "
                        f"rss {samples[-1]['rss_mb'] if samples else {}}"
                    )
                    if on_report is not None:
                        on_report(result)
                if max_seconds is not None and time.time() - started > max_seconds:
                    echo(f"[load] stopping after {max_seconds:.0f}s")
                    break
            tail.poll(account, budget_s=3.0)
        finally:
            fleet.stop()
            tail.close()
            lag.close()
        result = figures(
            account, samples, started=started, window_s=window_s, n_groups=n_tasks, group_size=group_size
        )
        result.update(finished=len(account.experienced) >= n_tasks, restarts=dict(fleet.restarts))
        if on_report is not None:
            on_report(result)
        return result


def _broker_pid(bootstrap: str) -> int | None:
    """The pid of the local broker JVM listening on the first bootstrap port, if it is on this machine."""
    from infra.kafka.local import port_holder

    port = int(bootstrap.split(",")[0].rsplit(":", 1)[1])
    holder = port_holder(port)
    if holder and holder.startswith("pid "):
        return int(holder.split()[1])
    return None


def summary_table(result: dict[str, Any]) -> str:
    r = result

    def pair(a: str, b: str) -> str:
        return f"{r[a]} / {r[b]}"

    rows: list[tuple[str, object]] = [
        ("tasks (groups)", r["tasks"]),
        ("groups done", r["groups_done"]),
        ("samples judged", r["samples_judged"]),
        ("samples/s", r["samples_per_s"]),
        (f"samples per {r['window_s']:.0f}s window (mean / cv)", pair("window_mean", "window_cv")),
        ("request->experience p50/p99 s", pair("request_to_experience_p50_s", "request_to_experience_p99_s")),
        ("generation->verdict p50/p99 s", pair("generation_to_verdict_p50_s", "generation_to_verdict_p99_s")),
        ("learner lag max", r["learner_lag_max"]),
        ("groups in flight max", r["groups_in_flight_max"]),
        ("duplicate event ids", r["duplicate_event_ids"] or 0),
    ]
    for name, mb in sorted(result["rss_max_mb"].items()):
        first = result["rss_max_first_half_mb"].get(name, 0.0)
        second = result["rss_max_second_half_mb"].get(name, 0.0)
        rows.append((f"RSS max MiB {name} (drain 1st / 2nd half)", f"{mb} ({first} / {second})"))
    return "| measure | value |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)
