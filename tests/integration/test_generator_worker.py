"""The generator worker on the real broker with the tiny model: requests in, samples out exactly once,
policy versions followed between batches, re-deliveries recognisable by event id."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch
from confluent_kafka import Consumer, TopicPartition

from infra.kafka.consumer import decode_message
from infra.kafka.global_table import TopicFollower
from infra.kafka.producer import EventProducer
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.port import Hosted
from producers.generator.agent import GeneratorAgent
from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.policy import PolicyFollower, StalenessPolicy
from producers.generator.rollout import RolloutGenerator
from producers.generator.sampling import teacher_forced_logprobs
from producers.generator.weights import write_safetensors
from schemas.errors import EventDecodeError
from schemas.policy import PolicyPublished
from schemas.rollout import CodeGenerated, RolloutRequested, SamplingParams
from schemas.topics import GENERATIONS

torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[2]
PROMPT = 'def add(a: int, b: int) -> int:\n    """Return a + b."""\n'


def _request(group_id: str, *, size: int = 3, version: int = 0, max_tokens: int = 12) -> RolloutRequested:
    return RolloutRequested(
        group_id=group_id,
        task_id="t-add",
        group_size=size,
        prompt=PROMPT,
        entry_point="add",
        policy_version=version,
        sampling=SamplingParams(temperature=1.0, max_tokens=max_tokens),
    )


def _generations(
    bootstrap: str, prefix: str, want: int, timeout_s: float = 240.0, linger_s: float = 2.0
) -> list[tuple[str, CodeGenerated]]:
    """(event id, sample) of every committed generation whose group id starts with ``prefix``."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check.{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    meta = consumer.list_topics(GENERATIONS.name, 30).topics[GENERATIONS.name]
    consumer.assign([TopicPartition(GENERATIONS.name, p, 0) for p in meta.partitions])
    found: list[tuple[str, CodeGenerated]] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and len(found) < want:
            for msg in consumer.consume(500, 0.5):
                if msg.error() is not None:
                    continue
                try:
                    consumed = decode_message(msg)
                except EventDecodeError:
                    continue  # other tests dead-letter-test this shared topic with garbage
                event = consumed.event
                if isinstance(event, CodeGenerated) and event.group_id.startswith(prefix):
                    found.append((consumed.envelope.id, event))
        # linger briefly so an unexpected duplicate would show up too
        end = time.monotonic() + linger_s
        while time.monotonic() < end:
            for msg in consumer.consume(500, 0.5):
                if msg.error() is not None:
                    continue
                try:
                    consumed = decode_message(msg)
                except EventDecodeError:
                    continue
                event = consumed.event
                if isinstance(event, CodeGenerated) and event.group_id.startswith(prefix):
                    found.append((consumed.envelope.id, event))
    finally:
        consumer.close()
    return found


@pytest.fixture
def worker_topics(new_topic: Callable[..., str]) -> tuple[str, str]:
    return new_topic(3, "requests"), new_topic(1, "policy")


@pytest.fixture
def running_worker(
    kafka_catalog: str, worker_topics: tuple[str, str]
) -> Iterator[tuple[GeneratorAgent, str]]:
    requests, policy = worker_topics
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    backend = HFBackend(load_model("tiny"), batch_size=4)
    watcher = TopicFollower(kafka_catalog, policy, PolicyPublished)
    agent = GeneratorAgent(
        RolloutGenerator(backend, seed=0),
        PolicyFollower(backend, StalenessPolicy(max_staleness=0), run_id=run_id),
        watcher,
    )
    proc = TransactionalProcessor(
        Hosted(f"generator-test-{uuid.uuid4().hex[:8]}", [requests], agent.handle, batch_size=1),
        bootstrap=kafka_catalog,
        run_id=run_id,
    )
    stop = threading.Event()
    thread = threading.Thread(target=proc.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield agent, run_id
    finally:
        stop.set()
        thread.join(60)
        watcher.close()


def test_worker_generates_follows_policy_and_recognises_redeliveries(
    kafka_catalog: str,
    worker_topics: tuple[str, str],
    running_worker: tuple[GeneratorAgent, str],
    tmp_path: Path,
) -> None:
    requests, policy_topic = worker_topics
    agent, run_id = running_worker
    prefix = f"{run_id}/"
    with EventProducer(kafka_catalog, source="test", run_id=run_id) as producer:
        producer.publish(_request(prefix + "g1"), topic=requests)
        producer.publish(_request(prefix + "g2"), topic=requests)
        producer.flush()
        first = _generations(kafka_catalog, prefix, 6)
        assert sorted(e.sample_id for _, e in first) == [
            f"{prefix}g{g}/{i}" for g in (1, 2) for i in range(3)
        ]
        assert {e.policy_version for _, e in first} == {0}

        # the learner publishes v1: the next request (which already expects v1) waits for it, then uses it
        model = load_model("tiny").model  # the learner's copy: same start, then trained
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.3)
        digest = write_safetensors(model, tmp_path / "v1.safetensors")
        producer.publish(_request(prefix + "g3", version=1), topic=requests)
        producer.flush()
        time.sleep(1.0)  # the request arrives first: the worker must defer, not generate with v0
        producer.publish(
            PolicyPublished(
                run_id=run_id,
                policy_version=1,
                step=10,
                checkpoint_uri=(tmp_path / "v1.safetensors").as_uri(),
                sha256=digest,
            ),
            topic=policy_topic,
        )
        producer.flush()
        third = [e for _, e in _generations(kafka_catalog, prefix + "g3", 3)]
        assert len(third) == 3 and {e.policy_version for e in third} == {1}
        for sample in third:  # recorded behaviour log-probs are those of the v1 weights
            v1 = teacher_forced_logprobs(
                model, sample.prompt_token_ids, sample.completion_token_ids, temperature=1.0, top_p=1.0
            )
            assert max(abs(a - b) for a, b in zip(v1, sample.behaviour_logprobs, strict=True)) < 1e-4

        # a re-delivered request yields the same event ids (consumers drop the copies by id)
        producer.publish(_request(prefix + "g1"), topic=requests)
        producer.flush()
        again = _generations(kafka_catalog, prefix + "g1", 6)
    ids = [event_id for event_id, _ in again]
    assert len(ids) == 6 and len(set(ids)) == 3
    assert agent.samples == 12 and agent.tokens > 0  # the progress metrics count the re-run as work
    assert agent.throughput().startswith("12 samples")


WORKER_SCRIPT = """
import sys, threading, torch
torch.set_num_threads(1)
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.port import Hosted
from infra.kafka.global_table import TopicFollower
from producers.generator.agent import GeneratorAgent
from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.policy import PolicyFollower, StalenessPolicy
from producers.generator.rollout import RolloutGenerator
from schemas.policy import PolicyPublished
bootstrap, requests, policy, name = sys.argv[1:5]
backend = HFBackend(load_model("tiny"), batch_size=4)
agent = GeneratorAgent(RolloutGenerator(backend), PolicyFollower(backend, StalenessPolicy(1)),
                       TopicFollower(bootstrap, policy, PolicyPublished))
proc = TransactionalProcessor(Hosted(name, [requests], agent.handle, batch_size=1), bootstrap=bootstrap)
print("ready", flush=True)
proc.run(threading.Event())
"""


def _spawn(bootstrap: str, requests: str, policy: str, name: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER_SCRIPT, bootstrap, requests, policy, name],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"},
    )


def test_killing_the_worker_mid_group_and_restarting_produces_each_sample_once(
    kafka_catalog: str, worker_topics: tuple[str, str]
) -> None:
    requests, policy = worker_topics
    prefix = f"kill-{uuid.uuid4().hex[:8]}/"
    name = f"generator-kill-{uuid.uuid4().hex[:8]}"
    groups = 6
    with EventProducer(kafka_catalog, source="test") as producer:
        for g in range(groups):
            producer.publish(_request(f"{prefix}g{g}", size=4, max_tokens=160), topic=requests)
    worker = _spawn(kafka_catalog, requests, policy, name)
    try:
        partial = _generations(kafka_catalog, prefix, 4, timeout_s=240, linger_s=0.0)
        worker.send_signal(signal.SIGKILL)  # most likely in the middle of the next group
        assert 4 <= len(partial) < groups * 4, "the kill should land while groups are still pending"
        worker.wait(30)
        worker = _spawn(kafka_catalog, requests, policy, name)
        done = _generations(kafka_catalog, prefix, groups * 4, timeout_s=300)
    finally:
        worker.kill()
        output = worker.communicate(timeout=30)[0]
    sample_ids = [e.sample_id for _, e in done]
    assert len(sample_ids) == groups * 4, f"got {len(sample_ids)} samples; worker said:\n{output[-2000:]}"
    assert len(set(sample_ids)) == groups * 4, "a sample was produced twice"
