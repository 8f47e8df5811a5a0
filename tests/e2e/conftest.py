"""Helpers for tests that run whole processors as child processes against the session broker."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from infra.kafka.config import BrokerConfig
from infra.kafka.consumer import decode_message
from schemas.base import Event
from schemas.errors import EventDecodeError
from schemas.rollout import CodeGenerated
from schemas.task import TaskPublished, TestCase
from tests.conftest import private_dir, start_test_cluster

ROOT = Path(__file__).resolve().parents[2]
CACHE = Path.home() / ".rlstream"


#: a /metrics page's samples by name and sorted labels
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(url: str) -> Samples:
    """Every sample of a /metrics page, parsed by Prometheus' own text parser (prometheus-client)."""
    with urllib.request.urlopen(url, timeout=10) as response:
        text = response.read().decode()
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def add_task(prefix: str, i: int) -> TaskPublished:
    """``<prefix>/add<i>``: return x + i, with a reference, one visible case and two hidden ones (one
    negative), so a program that ignores its argument or serves answers in the cases' order is told apart
    by the cases or by the probe's other order."""
    return TaskPublished(
        task_id=f"{prefix}/add{i}",
        prompt=f'def add{i}(x: int) -> int:\n    """Return x + {i}."""\n',
        entry_point=f"add{i}",
        tests=(TestCase(input="(1,)", output=str(1 + i)),),
        hidden_tests=(
            TestCase(input="(10,)", output=str(10 + i)),
            TestCase(input="(-3,)", output=str(i - 3)),
        ),
        reference=f"def add{i}(x):\n    return x + {i}\n",
    )


def hand_written(run_id: str, task: TaskPublished, programs: Iterable[str]) -> list[CodeGenerated]:
    """One group of ``task`` (``<run_id>/<task>/0``) holding ``programs``, each a template with ``{f}``
    (the entry point) and ``{i}`` (the task's number, as :func:`add_task` names it)."""
    group = f"{run_id}/{task.task_id}/0"
    i = task.task_id.rsplit("/add", 1)[1]
    return [
        CodeGenerated(
            sample_id=f"{group}/{n}",
            group_id=group,
            task_id=task.task_id,
            sample_index=n,
            policy_version=0,
            model="hand-written",
            prompt_text=task.prompt,
            completion_text=code,
            code=code.format(f=task.entry_point, i=i),
        )
        for n, code in enumerate(programs)
    ]


@dataclass
class Workers:
    env: dict[str, str]
    logs: Path
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    #: each worker's /metrics port (kept across its restarts)
    ports: dict[str, int] = field(default_factory=dict)

    def start(self, name: str) -> None:
        log = (self.logs / f"{name}.log").open("ab")
        port = self.ports.setdefault(name, free_port())
        self.procs[name] = subprocess.Popen(
            [sys.executable, "-m", "rlstream.cli", "worker", name],
            cwd=ROOT,
            env={**self.env, "RLSTREAM_METRICS__PORT": str(port)},
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def kill9(self, name: str) -> None:
        proc = self.procs[name]
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)

    def alive(self, name: str) -> bool:
        return self.procs[name].poll() is None

    def stop_all(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()

    def metrics_url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.ports[name]}/metrics"

    def log_tail(self, name: str, lines: int = 30) -> str:
        return "\n".join((self.logs / f"{name}.log").read_text(errors="replace").splitlines()[-lines:])


def run_env(bootstrap: str, home: Path, **settings: str) -> dict[str, str]:
    """The environment of a test's ``rlstream run``: a home of its own, the machine's caches (models,
    sandbox runtime, Kafka jars), one thread per torch process, the learner on CPU, no standby learner or
    generator, then ``settings``."""
    return {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "RLSTREAM_HOME": str(home),
        "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "RLSTREAM_GENERATOR__MODELS_DIR": str(CACHE / "models"),
        "RLSTREAM_SANDBOX__CACHE_DIR": str(CACHE / "cache" / "sandbox"),
        "RLSTREAM_BROKER__JAR_DIR": str(CACHE / "kafka"),
        "RLSTREAM_LEARNER__ACCELERATOR": "cpu",
        # no standby learner unless a test asks for one: a third torch process starting on CI's two
        # cores slows every run, and these runs kill no learner
        "RLSTREAM_LEARNER__STANDBY": "off",
        # nor a standby generator: these runs kill no generator either
        "RLSTREAM_GENERATOR__STANDBY": "off",
        **settings,
    }


@pytest.fixture
def own_broker(kafka_lib: Path, test_broker_config: BrokerConfig) -> Iterator[str]:
    """A broker of this test's own: a --steps run ends with requests in flight that expect its newest
    policy version, which no later run's generator could serve; they must not reach other tests."""
    with private_dir("rlstream-test-learning-") as data_dir:
        cluster = start_test_cluster(test_broker_config, kafka_lib, data_dir)
        try:
            yield cluster.running_bootstrap() or ""
        finally:
            cluster.down()


@pytest.fixture
def workers(kafka_catalog: str, tmp_path: Path) -> Iterator[Callable[..., Workers]]:
    made: list[Workers] = []

    def make(run_id: str, **settings: str) -> Workers:
        env = {
            **os.environ,
            "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": kafka_catalog,
            "RLSTREAM_HOME": str(tmp_path / "home"),
            "RLSTREAM_RUN_ID": run_id,
            # the caches the set-up filled: models, compiled sandbox runtime
            "RLSTREAM_GENERATOR__MODELS_DIR": str(CACHE / "models"),
            "RLSTREAM_SANDBOX__CACHE_DIR": str(CACHE / "cache" / "sandbox"),
            "RLSTREAM_SANDBOX__WORKERS": "1",
            "RLSTREAM_PIPELINE__SCHEDULER__ONLY_OWN_RUN": "true",
            "OMP_NUM_THREADS": "1",
            **settings,
        }
        logs = tmp_path / f"logs-{run_id}"
        logs.mkdir(parents=True, exist_ok=True)
        w = Workers(env, logs)
        made.append(w)
        return w

    yield make
    for w in made:
        w.stop_all()


def _end_offset(consumer: Consumer, topic: str, partition: int) -> int:
    # A topic created a moment ago (the first test of a session) may have no elected leader yet:
    # the broker answers NOT_LEADER_FOR_PARTITION until it has one, which is not the test's failure.
    deadline = time.monotonic() + 60
    while True:
        try:
            return int(consumer.get_watermark_offsets(TopicPartition(topic, partition), 30)[1])
        except KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def read_topic(bootstrap: str, topic: str) -> list[tuple[str, Event]]:
    """Every committed event of ``topic`` as (event id, event), skipping undecodable records."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check.{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    parts = sorted(consumer.list_topics(topic, 30).topics[topic].partitions)
    ends = {p: _end_offset(consumer, topic, p) for p in parts}
    consumer.assign([TopicPartition(topic, p, 0) for p in parts])
    out: list[tuple[str, Event]] = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for msg in consumer.consume(1000, 0.5):
            if msg.error() is not None:
                continue
            try:
                item = decode_message(msg)
            except EventDecodeError:
                continue
            out.append((item.envelope.id, item.event))
        positions = consumer.position([TopicPartition(topic, p) for p in parts])
        if all(tp.offset >= ends[tp.partition] or ends[tp.partition] == 0 for tp in positions):
            break
    consumer.close()
    return out
