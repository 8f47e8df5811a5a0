"""One contract, three runtimes: in-memory, Kafka transactions, Faust.

Every runtime that hosts rlstream's processors must: hand every record to the processor and write what
it emits (a flow from task to experience through the real stream processors, the scheduler's level
curriculum holding the harder task back until the easier level is done); dead-letter a record that
does not decode or that the handler cannot use, and go on with the others; hand a deferred batch over
again later instead of dead-lettering it; after a crash mid-run and a restart, lose nothing and restore
the processor's state from its changelog. The runtimes differ in one declared way: the in-memory and
transactional runtimes never write a record twice; the Faust runtime (at-least-once) may, and then only
the very same record again (same event id), which every consumer is idempotent by — the count is
printed as ``DUPLICATES``.

The Kafka runtimes share the session broker; a crash is a SIGKILL of a worker process of their own
(``tests/contract/worker.py``); the flow runs the pipeline's processors in one process per runtime (for
Faust: ``faust -A rlstream.faust_app worker``, the way Faust users run an app).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pytest
from confluent_kafka import Consumer, Message, TopicPartition

from infra.kafka.consumer import decode_message
from infra.kafka.producer import EventProducer
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.memory import MemoryLog, MemoryRuntime
from infra.runtime.sides import MemorySideInputs
from rlstream.settings import Settings
from rlstream.workers import STREAM_PROCESSORS, Built, stream_processor
from schemas.base import Event
from schemas.codec import encode
from schemas.curriculum import CurriculumLevelChanged
from schemas.dlq import DeadLettered
from schemas.envelope import Envelope
from schemas.episode import TurnEnded
from schemas.rollout import CodeGenerated, ExperienceReady, NoiseVerdict, RolloutRequested
from schemas.task import TaskPublished, TestCase
from tests.contract.relay import handled, relay
from tests.e2e.conftest import read_topic

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path.home() / ".rlstream"
RUNTIMES = ("memory", "transactional", "faust")


def task(task_id: str) -> TaskPublished:
    return TaskPublished(
        task_id=task_id,
        prompt="def f(x):\n",
        entry_point="f",
        tests=(TestCase(input="(1,)", output="1"),),
    )


class Harness(Protocol):
    """One runtime hosting the contract processor over a topic pair of its own."""

    runtime: str
    topic_in: str
    topic_out: str

    def publish(self, tasks: list[TaskPublished]) -> None: ...

    def publish_garbage(self) -> None: ...

    def run_until_idle(self, *, delay_s: float = 0.0, expect: int = 0) -> list[str]:
        """Host the processor until its input is drained (with ``expect``: and its state names that many
        tasks, or it stalls); returns the task ids its state handled."""

    def crash_mid_run(self, *, delay_s: float) -> None:
        """Host the processor and kill it while it is under way."""

    def outputs(self) -> list[tuple[str, Event]]: ...

    def letters(self) -> list[DeadLettered]: ...

    def log_tail(self) -> str:
        """The end of the last worker's log (empty in memory)."""

    def account(self, missing: list[str]) -> str:
        """Where each of the ``missing`` tasks' records is: its input partition and offset, whether its
        output and its state record (on the changelog) were written (empty in memory)."""


class MemoryHarness:
    runtime = "memory"

    def __init__(self) -> None:
        self.log = MemoryLog()
        self.topic_in, self.topic_out = "contract.in", "contract.out"
        self.processor, self.core = relay("relay", self.topic_in, self.topic_out)
        self.rt = MemoryRuntime(self.log, [self.processor])

    def publish(self, tasks: list[TaskPublished]) -> None:
        for t in tasks:
            self.log.publish(self.topic_in, encode(t, Envelope.for_event(t, source="test")))

    def publish_garbage(self) -> None:
        self.log.append(self.topic_in, b"k", b"\x00 not an event", [("ce_type", b"x")])

    def run_until_idle(self, *, delay_s: float = 0.0, expect: int = 0) -> list[str]:
        self.rt.run(advance_s=0.05)
        return handled(self.rt.state("relay"))

    def crash_mid_run(self, *, delay_s: float) -> None:
        self.rt.step("relay")
        self.rt.step("relay", crash=True)  # handled, then lost before it was committed
        self.rt.restart("relay", relay("relay", self.topic_in, self.topic_out)[0])

    def outputs(self) -> list[tuple[str, Event]]:
        return self.log.events(self.topic_out)

    def letters(self) -> list[DeadLettered]:
        return [e for _, e in self.log.events("rl.dlq") if isinstance(e, DeadLettered)]

    def log_tail(self) -> str:
        return ""

    def account(self, missing: list[str]) -> str:
        return ""


class KafkaHarness:
    """The contract processor as a worker process on the session broker."""

    def __init__(self, runtime: str, bootstrap: str, new_topic: Callable[..., str], logs: Path) -> None:
        self.runtime = runtime
        self.bootstrap = bootstrap
        self.topic_in, self.topic_out = new_topic(3, "contract.in"), new_topic(3, "contract.out")
        self.name = f"contract-{uuid.uuid4().hex[:8]}"
        self.logs = logs
        self.runs = 0
        #: the state's changelog topic, as the last worker named it (Faust)
        self.changelog: str | None = None

    def publish(self, tasks: list[TaskPublished]) -> None:
        with EventProducer(self.bootstrap, source="test") as producer:
            for t in tasks:
                producer.publish(t, topic=self.topic_in)

    def publish_garbage(self) -> None:
        with EventProducer(self.bootstrap, source="test") as producer:
            producer.produce_raw(self.topic_in, b"\x00 not an event", key=b"k", headers=[("ce_type", b"x")])

    def _start(self, delay_s: float, idle_s: float, expect: int = 0) -> subprocess.Popen[str]:
        self.runs += 1
        log = self.logs / f"{self.name}-{self.runs}.log"
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.contract.worker",
                self.runtime,
                self.bootstrap,
                self.topic_in,
                self.topic_out,
                self.name,
                str(delay_s),
                str(idle_s),
                str(expect),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=log.open("w"),
            text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )

    def run_until_idle(self, *, delay_s: float = 0.0, expect: int = 0) -> list[str]:
        worker = self._start(delay_s, idle_s=6.0, expect=expect)
        out, _ = worker.communicate(timeout=300)
        assert worker.returncode == 0, self._tail()
        # (Faust's worker writes terminal control codes to stdout: the line may not start with it)
        line = next((x for x in out.splitlines() if "STATE " in x), None)
        assert line is not None, out + self._tail()
        changelog = next((x for x in out.splitlines() if "CHANGELOG " in x), None)
        if changelog is not None:
            self.changelog = changelog.split("CHANGELOG ", 1)[1].strip()
        return list(json.loads(line.split("STATE ", 1)[1]))

    def crash_mid_run(self, *, delay_s: float) -> None:
        worker = self._start(delay_s, idle_s=60.0)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and len(self.outputs()) < 20:
            assert worker.poll() is None, self._tail()
            time.sleep(0.5)
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
        assert len(self.outputs()) > 0, self._tail()

    def _tail(self) -> str:
        """The last worker's warnings, errors and accounts of itself (a stall's snapshot, its "stopping:"
        line), then the end of its log."""
        lines = (self.logs / f"{self.name}-{self.runs}.log").read_text(errors="replace").splitlines()
        marks = (" WARNING ", " ERROR ", "no progress for", "stopping:")
        noted = [x for x in lines[:-40] if any(m in x for m in marks) or x.startswith("  ")][-60:]
        return "\n".join([*noted, "...", *lines[-40:]] if noted else lines[-40:])

    def log_tail(self) -> str:
        return self._tail()

    def outputs(self) -> list[tuple[str, Event]]:
        return read_topic(self.bootstrap, self.topic_out)

    def letters(self) -> list[DeadLettered]:
        return [
            e
            for _, e in read_topic(self.bootstrap, "rl.dlq")
            if isinstance(e, DeadLettered) and e.original_topic == self.topic_in
        ]

    def account(self, missing: list[str]) -> str:
        where = {}
        for msg in _records(self.bootstrap, self.topic_in):
            event = decode_message(msg).event
            if isinstance(event, TaskPublished) and event.task_id in missing:
                where[event.task_id] = (msg.partition(), msg.offset())
        written = {e.task_id for _, e in self.outputs() if isinstance(e, RolloutRequested)}
        # a state record's key is <partition>:<kind>:<key> (infra/faust/runtime.py, TableStore)
        saved = set()
        if self.changelog is not None:
            saved = {
                (msg.key() or b"").decode(errors="replace").split(":", 2)[-1]
                for msg in _records(self.bootstrap, self.changelog)
                if msg.value() is not None
            }
        return "\n".join(
            f"{task_id}: input p{at[0]} offset {at[1]}"
            f", output {'written' if task_id in written else 'missing'}, state on the changelog "
            f"{'yes' if task_id in saved else 'no' if self.changelog else '(unknown)'}"
            for task_id, at in ((t, where.get(t, ("?", "?"))) for t in missing)
        )


def _records(bootstrap: str, topic: str) -> list[Message]:
    """Every record of ``topic`` as the broker holds it (uncommitted ones too), in partition order."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check.{uuid.uuid4().hex}"})
    try:
        parts = sorted(consumer.list_topics(topic, 30).topics[topic].partitions)
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), 30)[1] for p in parts}
        consumer.assign([TopicPartition(topic, p, 0) for p in parts])
        out: list[Message] = []
        reached = {p: 0 for p in parts}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any(reached[p] < ends[p] for p in parts):
            for msg in consumer.consume(1000, 0.5):
                if msg.error() is None:
                    out.append(msg)
                    reached[msg.partition()] = (msg.offset() or 0) + 1
        return sorted(out, key=lambda m: (m.partition(), m.offset()))
    finally:
        consumer.close()


@pytest.fixture(params=RUNTIMES)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Harness:
    if request.param == "memory":
        return MemoryHarness()
    bootstrap = request.getfixturevalue("kafka_catalog")
    return KafkaHarness(request.param, bootstrap, request.getfixturevalue("new_topic"), tmp_path)


def _account(h: Harness, expected: set[str], why: str = "") -> int:
    """Every expected task has its output; any record written twice is the very same record. Returns
    how many records were written again (none but on Faust). ``why``: what to show if one is missing."""
    outs = h.outputs()
    by_id: dict[str, Event] = {}
    for event_id, event in outs:
        assert by_id.setdefault(event_id, event) == event, f"{event_id} written twice with different content"
    tasks = Counter(e.task_id for e in by_id.values() if isinstance(e, RolloutRequested))
    assert set(tasks) == expected, (
        f"missing {sorted(expected - set(tasks))[:5]}, extra {sorted(set(tasks) - expected)[:5]}\n{why}"
    )
    assert set(tasks.values()) == {1}, "a task has two different outputs"
    duplicates = len(outs) - len(by_id)
    print(
        f"\nDUPLICATES {json.dumps({'runtime': h.runtime, 'records': len(outs), 'duplicates': duplicates})}"
    )
    if h.runtime != "faust":
        assert duplicates == 0, f"{h.runtime}: {duplicates} record(s) written twice"
    return duplicates


def test_every_record_is_handled_and_a_poison_record_is_dead_lettered(harness: Harness) -> None:
    good = [task(f"ok{i}") for i in range(12)]
    harness.publish(good[:6])
    harness.publish_garbage()
    harness.publish([task("poison-1")])
    harness.publish(good[6:])
    state = harness.run_until_idle()
    _account(harness, {t.task_id for t in good})
    assert sorted(state) == sorted(t.task_id for t in good)
    letters = harness.letters()
    reasons = sorted(f"{letter.error_type}: {letter.error}" for letter in letters)
    assert len(letters) == 2, reasons
    assert any("poison-1 is poison" in r and r.startswith("ValueError") for r in reasons), reasons
    assert any(r.startswith("EventDecodeError") for r in reasons), reasons


def test_a_deferred_batch_is_handled_again_later_not_dead_lettered(harness: Harness) -> None:
    if harness.runtime != "memory":
        pytest.skip("the worker process defers nothing; Defer on Kafka: test_deferral_on_the_broker")
    tasks = [task("a"), task("defer-b"), task("c")]
    harness.publish(tasks)
    assert sorted(harness.run_until_idle()) == ["a", "c", "defer-b"]
    _account(harness, {"a", "c", "defer-b"})
    assert harness.letters() == []


def test_a_crash_mid_run_loses_nothing_and_the_state_is_restored(harness: Harness) -> None:
    tasks = [task(f"t{i:03d}") for i in range(150)]
    harness.publish(tasks)
    harness.crash_mid_run(delay_s=0.02)
    state = harness.run_until_idle(expect=len(tasks))
    expected = sorted(t.task_id for t in tasks)
    missing = sorted(set(expected) - set(state))
    # short of every task, where the missing ones are: their input offsets (against the restarted
    # worker's "stopping:" line in the log: handled up to, hole), whether their outputs and their state
    # records were ever written; and the log says where a worker that made no progress was waiting
    account = ""
    if missing:
        account = f"state lacks {len(missing)}\n{harness.account(missing[:20])}\n{harness.log_tail()}"
    _account(harness, {t.task_id for t in tasks}, account)
    # the restarted worker's state, restored from the changelog and carried on, names every task
    assert state == expected, account


@pytest.mark.parametrize("runtime", ["transactional", "faust"])
def test_deferral_on_the_broker(runtime: str, kafka_catalog: str, new_topic: Callable[..., str]) -> None:
    """A Defer holds the batch and hands it over again (no dead letter, nothing twice), in process."""
    topic_in, topic_out = new_topic(1, "defer.in"), new_topic(1, "defer.out")
    processor, core = relay(f"defer-{uuid.uuid4().hex[:8]}", topic_in, topic_out, defers=2)
    with EventProducer(kafka_catalog, source="test") as producer:
        for t in (task("a"), task("defer-b"), task("c")):
            producer.publish(t, topic=topic_in)
    stop = threading.Event()
    runner: Any
    if runtime == "faust":
        from rlstream.workers import faust_runner

        runner = faust_runner(
            Settings(kafka={"bootstrap_servers": kafka_catalog}), kafka_catalog, [Built(processor)]
        )
        runner.run(stop, idle_exit_s=6.0)
    else:
        runner = TransactionalProcessor(processor, bootstrap=kafka_catalog)
        runner.run(stop, idle_exit_s=6.0)
    outs = read_topic(kafka_catalog, topic_out)
    assert sorted(getattr(e, "task_id", "") for _, e in outs) == ["a", "c", "defer-b"]
    assert core.defers_left == 0 and runner.stats.dead_lettered == 0


# -- a flow from task to experience through the real stream processors -----------------------------
FLOW_TASKS = 3
G = 2
FLOW_TURNS = 2
#: the training pipeline's processors (the evaluator has no held-out task to sample here; the monitor
#: watches a run, it is no part of it)
FLOW_PROCESSORS = tuple(p for p in STREAM_PROCESSORS if p not in ("evaluator", "monitor"))


def _flow_env(run_id: str, home: Path) -> dict[str, str]:
    return {
        "RLSTREAM_RUN_ID": run_id,
        "RLSTREAM_HOME": str(home),
        "RLSTREAM_GENERATOR__MODEL": "tiny",
        "RLSTREAM_GENERATOR__MODELS_DIR": str(CACHE / "models"),
        "RLSTREAM_SANDBOX__CACHE_DIR": str(CACHE / "cache" / "sandbox"),
        "RLSTREAM_SANDBOX__WORKERS": "1",
        "RLSTREAM_PIPELINE__BATCH_SIZE": "4",
        "RLSTREAM_PIPELINE__SCHEDULER__ONLY_OWN_RUN": "true",
        # graded tasks: level 2 waits until level 1's groups are done (no held-out task measures it)
        "RLSTREAM_PIPELINE__SCHEDULER__LEVELS__ENABLED": "true",
        "RLSTREAM_PIPELINE__SCHEDULER__GROUP_SIZE": str(G),
        "RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__MAX_TOKENS": "1",
        "RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__TEMPERATURE": "1.0",
        "RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__TOP_P": "1.0",
        "RLSTREAM_FAUST__PROCESSORS": json.dumps(FLOW_PROCESSORS),
    }


def _flow_tasks(run_id: str) -> list[TaskPublished]:
    """One one-shot task and the others episodes of up to two turns (one token cannot pass ``add``'s
    visible case: each episode's first turn fails it and the episode step sends it back with feedback)."""
    return [
        TaskPublished(
            task_id=f"{run_id}/add{i}",
            prompt=f'def add{i}(x: int) -> int:\n    """Return x + {i}."""\n',
            entry_point=f"add{i}",
            tests=(TestCase(input="(1,)", output=str(1 + i)),),
            hidden_tests=(TestCase(input="(10,)", output=str(10 + i)),),
            reference=f"def add{i}(x):\n    return x + {i}\n",
            max_turns=None if i == 0 else FLOW_TURNS,
            difficulty=1 if i < FLOW_TASKS - 1 else 2,
        )
        for i in range(FLOW_TASKS)
    ]


def _assert_flow(events: Callable[[str], list[tuple[str, Event]]], run_id: str, runtime: str) -> None:
    def of_run(topic: str) -> dict[str, Event]:
        out: dict[str, Event] = {}
        for event_id, e in events(topic):
            if str(getattr(e, "group_id", "")).startswith(run_id + "/"):
                assert out.setdefault(event_id, e) == e
        return out

    experiences = [e for e in of_run("rl.experiences").values() if isinstance(e, ExperienceReady)]
    assert sorted(e.task_id for e in experiences) == sorted(t.task_id for t in _flow_tasks(run_id)), runtime
    assert all(e.group_size == G and not e.partial for e in experiences)
    verdicts = {e.sample_id: e for e in of_run("rl.verdicts").values() if isinstance(e, NoiseVerdict)}
    assert len(verdicts) == FLOW_TASKS * G, runtime
    # the episode step: each turn of an episode ended once, the last one final, and the verdict judged it
    turns = [e for e in of_run("rl.turns").values() if isinstance(e, TurnEnded)]
    generations = [e for e in of_run("rl.generations").values() if isinstance(e, CodeGenerated)]
    one_shot = f"{run_id}/add0"
    assert not [t for t in turns if t.task_id == one_shot], f"{runtime}: a one-shot sample had a turn end"
    assert sorted((g.sample_id, g.turn) for g in generations if g.task_id != one_shot) == sorted(
        (t.sample_id, t.turn) for t in turns
    ), f"{runtime}: a turn generated without ending, or ended twice"
    finals = {t.sample_id: t.turn for t in turns if t.outcome == "final"}
    assert len(finals) == (FLOW_TASKS - 1) * G, f"{runtime}: an episode without its final turn"
    assert all(verdicts[sid].turn == turn for sid, turn in finals.items()), runtime
    assert any(turn > 0 for turn in finals.values()), f"{runtime}: no episode reached a second turn"
    assert len(generations) == G + len(turns), runtime
    moves = {
        (e.from_level, e.to_level, e.reason)
        for _, e in events("rl.curriculum")
        if isinstance(e, CurriculumLevelChanged) and e.run_id == run_id
    }
    assert moves == {(None, 1, "start"), (1, 2, "exhausted")}, runtime


def test_a_flow_from_task_to_experience_in_memory(tmp_path: Path) -> None:
    """... with the generator and the episode step crashing mid-episode: a turn handled and lost before
    its step was committed is handled again, once."""
    run_id = f"flow-{uuid.uuid4().hex[:6]}"
    env = _flow_env(run_id, tmp_path)
    # (the processors are named here, not by the Faust setting)
    settings = Settings(**_settings_from_env({k: v for k, v in env.items() if "FAUST" not in k}))
    log = MemoryLog()
    built = [stream_processor(name, settings, MemorySideInputs(log)) for name in FLOW_PROCESSORS]
    try:
        rt = MemoryRuntime(log, [b.processor for b in built], run_id=run_id)
        for t in _flow_tasks(run_id):
            log.publish("rl.tasks", encode(t, Envelope.for_event(t, source="test", run_id=run_id)))
        rt.run(advance_s=0.1, until=lambda: bool(log.events("rl.turns")))
        # the generator has turns to answer: it crashes, then the episode step the next time it has a
        # turn to end (a second turn's generation or execution)
        generator = f"generator.{run_id}"
        assert rt.lag(generator) > 0
        rt.step(generator, crash=True)
        names = [b.processor.name for b in built]
        crashed = False
        for _ in range(100):
            for name in names:
                crash = name == "episode" and not crashed and rt.lag(name) > 0
                rt.step(name, crash=crash)
                crashed = crashed or crash
            rt.clock += 0.1
            if crashed:
                break
        assert crashed, "the episode step never had a turn to end after the generator's crash"
        rt.run(advance_s=0.1)
    finally:
        _close(built)
    _assert_flow(log.events, run_id, "memory")


@pytest.mark.slow
@pytest.mark.parametrize("runtime", ["transactional", "faust"])
def test_a_flow_from_task_to_experience_on_the_broker(
    runtime: str, kafka_catalog: str, tmp_path: Path
) -> None:
    run_id = f"flow-{uuid.uuid4().hex[:6]}"
    env = {**os.environ, **_flow_env(run_id, tmp_path), "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": kafka_catalog}
    # the level-2 task is published once the run has started at level 1: tasks spread over partitions,
    # and a worker that reads the level-2 one first starts the run there (then again at 1, as it
    # should), so the level-2 task was never gated and no "exhausted" move is owed
    tasks = _flow_tasks(run_id)
    first, later = [t for t in tasks if t.difficulty == 1], [t for t in tasks if t.difficulty != 1]
    with EventProducer(kafka_catalog, source="test", run_id=run_id) as producer:
        for t in first:
            producer.publish(t)
    log = (tmp_path / "worker.log").open("w")
    if runtime == "faust":
        # every stream processor as an agent of one Faust app, run by Faust's own worker command
        env["RLSTREAM_FAUST__APP_PREFIX"] = f"rlstream.faust.{run_id}"
        cmd = [sys.executable, "-m", "faust", "-A", "rlstream.faust_app", "worker", "-l", "info"]
    else:
        cmd = [sys.executable, "-m", "tests.contract.flow_worker"]
    worker = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 420
        while later and time.monotonic() < deadline:
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-4000:]
            if any(
                isinstance(e, CurriculumLevelChanged) and e.run_id == run_id and e.to_level == 1
                for _, e in read_topic(kafka_catalog, "rl.curriculum")
            ):
                with EventProducer(kafka_catalog, source="test", run_id=run_id) as producer:
                    for t in later:
                        producer.publish(t)
                later = []
            else:
                time.sleep(1)
        while time.monotonic() < deadline:
            assert worker.poll() is None, (tmp_path / "worker.log").read_text()[-4000:]
            done = [
                e
                for _, e in read_topic(kafka_catalog, "rl.experiences")
                if isinstance(e, ExperienceReady) and e.group_id.startswith(run_id)
            ]
            if len(done) >= FLOW_TASKS:
                break
            time.sleep(2)
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(60)
        except subprocess.TimeoutExpired:
            worker.kill()
    _assert_flow(lambda topic: read_topic(kafka_catalog, topic), run_id, runtime)


def _settings_from_env(env: dict[str, str]) -> dict[str, Any]:
    """``RLSTREAM_A__B=v`` variables as nested settings keyword arguments."""
    out: dict[str, Any] = {}
    for name, value in env.items():
        path = name.removeprefix("RLSTREAM_").lower().split("__")
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return out


def _close(built: list[Built]) -> None:
    for b in built:
        for close in b.closers:
            close()
