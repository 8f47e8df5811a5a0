"""Hostile records at every input topic of a running pipeline (the real broker, every processor and
the learner in its own process): each lands in rl.dlq, once per processor that reads it, with an error
that says what is wrong; no processor goes down; and the valid tasks published between them, odd
ones included, each come out the far end exactly once.

The bad records are drawn up front from the hypothesis strategies of ``badinput`` (one of every kind
for every topic, the same on every run) and injected in one batch, interleaved with the tasks.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from harness.faults import fact
from schemas.codec import encode
from schemas.dlq import DeadLettered
from schemas.envelope import Envelope
from schemas.task import TaskPublished, TestCase
from tests.e2e.conftest import CACHE, Workers, read_topic
from tests.reliability.badinput import Bad, bad_kinds, draw

pytestmark = [pytest.mark.kafka, pytest.mark.slow]

#: each processor's input topics (its agent module's INPUT_TOPICS), and the learner's
AGENTS = {
    "scheduler": "streams.scheduler.agent",
    "generator": "producers.generator.agent",
    "sandbox": "streams.sandbox.agent",
    "reward": "streams.reward.agent",
    "filter": "streams.noise.agent",
    "experience": "streams.experience.agent",
}
PROCESSORS = (*AGENTS, "learner")


def _readers() -> dict[str, list[str]]:
    readers: dict[str, list[str]] = {"rl.experiences": ["learner"]}
    for name, module in AGENTS.items():
        for topic in importlib.import_module(module).INPUT_TOPICS:
            readers.setdefault(topic, []).append(name)
    return readers


def _stage(worker: str, run_id: str) -> str:
    """The name a worker dead-letters under (a run's own scheduler and generator carry the run id)."""
    return f"{worker}.{run_id}" if worker in ("scheduler", "generator") else worker


def _tasks(run_id: str) -> list[TaskPublished]:
    plain = [
        TaskPublished(
            task_id=f"bad-input/add{i}",
            prompt=f'def add{i}(x: int) -> int:\n    """Return x + {i}."""\n',
            entry_point=f"add{i}",
            tests=(TestCase(input="(1,)", output=str(1 + i)),),
            hidden_tests=(TestCase(input="(10,)", output=str(10 + i)),),
            reference=f"def add{i}(x):\n    return x + {i}\n",
        )
        for i in range(3)
    ]
    odd = [  # valid, but hostile to anything that assumes ASCII, short prompts or few cases
        TaskPublished(
            task_id="bad-input/odd:unicode_.-1",
            prompt='def echo(s: str) -> str:\n    """Return s \u202e\u0645\u0631\u062d\u0628\u0627 '
            '\U0001f9ea\u200d\u0301 \ufeff\x00 unchanged."""\n',
            entry_point="echo",
            tests=(TestCase(input="('\u00e9\u200b\U0001f600',)", output="'\u00e9\u200b\U0001f600'"),),
            hidden_tests=(TestCase(input="('\\x00\\n',)", output="'\\x00\\n'"),),
            tenant="\u6e2c\u8a66",
        ),
        TaskPublished(
            task_id="bad-input/many-cases",
            prompt='def total(xs: list) -> int:\n    """Return the sum of xs."""\n',
            entry_point="total",
            tests=tuple(
                TestCase(input=f"({list(range(i * 50))!r},)", output=str(sum(range(i * 50))))
                for i in range(40)
            ),
            priority=100,
        ),
    ]
    return plain[:2] + odd[:1] + plain[2:] + odd[1:]


@pytest.fixture
def pipeline(kafka_catalog: str, tmp_path: Path) -> Iterator[Callable[[str], Workers]]:
    made: list[Workers] = []

    def start(run_id: str) -> Workers:
        import os

        env = {
            **os.environ,
            "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": kafka_catalog,
            "RLSTREAM_HOME": str(tmp_path / "home"),
            "RLSTREAM_RUN_ID": run_id,
            "RLSTREAM_GENERATOR__MODELS_DIR": str(CACHE / "models"),
            "RLSTREAM_SANDBOX__CACHE_DIR": str(CACHE / "cache" / "sandbox"),
            "RLSTREAM_SANDBOX__WORKERS": "1",
            "RLSTREAM_PIPELINE__SCHEDULER__ONLY_OWN_RUN": "true",
            "RLSTREAM_PIPELINE__SCHEDULER__GROUP_SIZE": "2",
            "RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__MAX_TOKENS": "24",
            "RLSTREAM_PIPELINE__BATCH_SIZE": "8",
            "RLSTREAM_LEARNER__ACCELERATOR": "cpu",
            "RLSTREAM_LEARNER__BACKEND": "torch",
            "OMP_NUM_THREADS": "1",
        }
        logs = tmp_path / "logs"
        logs.mkdir(exist_ok=True)
        w = Workers(env, logs)
        made.append(w)
        for name in PROCESSORS:
            w.start(name)
        return w

    yield start
    for w in made:
        w.stop_all()


def _bad_records(run_id: str, readers: dict[str, list[str]]) -> list[Bad]:
    out = []
    for t, topic in enumerate(sorted(readers)):
        for k, (kind, strategy) in enumerate(sorted(bad_kinds(topic, b"").items())):
            # a few generated examples in, so the record is not the simplest one of its kind
            bad = draw(strategy, 3, at=100 * t + k)[-1]
            out.append(dataclasses.replace(bad, key=f"{run_id}/bad/{topic}/{kind}".encode()))
    return out


def _publish(
    bootstrap: str, run_id: str, tasks: list[TaskPublished], bad: list[Bad]
) -> dict[bytes, tuple[int, int]]:
    """Tasks and bad records in one batch, interleaved; returns where each bad record landed."""
    where: dict[bytes, tuple[int, int]] = {}

    def landed(err: object, msg: object) -> None:
        assert err is None, f"publishing failed: {err}"
        key, partition, offset = msg.key(), msg.partition(), msg.offset()  # type: ignore[attr-defined]
        if key and key.startswith(f"{run_id}/bad/".encode()):
            where[key] = (partition, offset)

    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})
    queue = list(bad)
    per_task = len(queue) // len(tasks) + 1
    for task in tasks:
        record = encode(task, Envelope.for_event(task, source="bad-input-test", run_id=run_id))
        producer.produce(
            "rl.tasks", record.value, record.key, headers=list(record.headers), on_delivery=landed
        )
        for b in queue[:per_task]:
            producer.produce(b.topic, b.value, b.key, headers=list(b.headers), on_delivery=landed)
            producer.poll(0)
        queue = queue[per_task:]
    assert producer.flush(120) == 0
    assert len(where) == len(bad), "some bad records were not acknowledged"
    return where


def _of_run(bootstrap: str, topic: str, run_id: str) -> list[str]:
    return [eid for eid, _ in _events_of_run(bootstrap, topic, run_id)]


def _events_of_run(bootstrap: str, topic: str, run_id: str) -> list[tuple[str, Any]]:
    return [
        (eid, e)
        for eid, e in read_topic(bootstrap, topic)
        if str(getattr(e, "group_id", "")).startswith(run_id + "/")
    ]


def test_hostile_records_at_every_input_topic_are_dead_lettered_and_the_valid_tasks_flow_exactly_once(
    kafka_catalog: str, pipeline: Callable[[str], Workers]
) -> None:
    run_id = f"bad-{uuid.uuid4().hex[:8]}"
    readers = _readers()
    bad = _bad_records(run_id, readers)
    kinds = {b.kind for b in bad}
    assert {"garbage", "oversized", "deep-nesting", "future-version", "nan", "other-event-class"} <= kinds
    tasks = _tasks(run_id)
    w = pipeline(run_id)
    where = _publish(kafka_catalog, run_id, tasks, bad)

    expected = {(_stage(r, run_id), b.topic, *where[b.key]): b for b in bad for r in readers[b.topic]}

    def letters() -> list[tuple[str, DeadLettered]]:
        return [
            (eid, e)
            for eid, e in read_topic(kafka_catalog, "rl.dlq")
            if isinstance(e, DeadLettered)
            and (e.stage, e.original_topic, e.original_partition, e.original_offset) in expected
        ]

    deadline = time.monotonic() + 900
    while time.monotonic() < deadline:
        done = len(set(_of_run(kafka_catalog, "rl.experiences", run_id))) >= len(tasks)
        lettered = {
            (e.stage, e.original_topic, e.original_partition, e.original_offset) for _, e in letters()
        }
        dead = [n for n in PROCESSORS if not w.alive(n)]
        assert not dead, "processors died:\n" + "\n".join(f"--- {n}\n{w.log_tail(n)}" for n in dead)
        if done and lettered >= set(expected):
            break
        time.sleep(3)
    else:
        missing = sorted(set(expected) - lettered)[:10]
        tails = "\n".join(f"--- {n}\n{w.log_tail(n, 15)}" for n in PROCESSORS)
        raise AssertionError(f"timed out; experiences done: {done}; letters missing: {missing}\n{tails}")
    time.sleep(3)  # anything written twice would land now

    # every bad record: one letter per processor that reads its topic, naming what is wrong
    got = letters()
    ids = Counter(eid for eid, _ in got)
    assert not [i for i, c in ids.items() if c > 1], "a dead letter was written twice"
    per_reader = Counter((e.stage, e.original_topic, e.original_partition, e.original_offset) for _, e in got)
    assert set(per_reader) == set(expected) and set(per_reader.values()) == {1}
    for _, letter in got:
        b = expected[(letter.stage, letter.original_topic, letter.original_partition, letter.original_offset)]
        assert letter.error_type == "EventDecodeError", (b.kind, letter.error)
        for words in b.reason:
            assert words.lower() in letter.error.lower(), f"{b.kind} on {b.topic}: {letter.error!r}"
        assert letter.original_key_b64 and base64.b64decode(letter.original_key_b64) == b.key
        kept = base64.b64decode(letter.original_value_b64)
        assert (b.value or b"").startswith(kept) and len(letter.original_value_b64) < 512 * 1024

    # every valid task, the odd ones included, all the way through exactly once
    n, g = len(tasks), 2
    for topic, count in (
        ("rl.rollouts.requested", n),
        ("rl.generations", n * g),
        ("rl.executions", n * g),
        ("rl.rewards", n * g),
        ("rl.verdicts", n * g),
        ("rl.experiences", n),
    ):
        events = _events_of_run(kafka_catalog, topic, run_id)
        ids_of_run = [eid for eid, _ in events]
        assert not [i for i, c in Counter(ids_of_run).items() if c > 1], f"{topic}: duplicate events"
        # a sample may run more than once on purpose (the filter's re-runs, the probe run)
        facts = [fact(e, "sample_id" if hasattr(e, "sample_id") else "group_id") for _, e in events]
        twice = Counter(facts).most_common(2)
        assert len(set(facts)) == len(facts), f"{topic}: a fact under two event ids: {twice}"
        firsts = {key for key, _run in facts}
        shown = sorted(f"{type(e).__name__} {e.group_id} {getattr(e, 'sample_id', '')}" for _, e in events)
        assert len(firsts) == count, f"{topic}: {len(firsts)} of the run, expected {count}: {shown}"
    assert all(w.alive(n) for n in PROCESSORS), "a processor went down"
