"""An execution whose results take megabytes is published, scored and never dead-lettered, on the real
broker: the topics that carry executions take records that large (``max.message.bytes``), so do the
processors' state changelogs (the reward keeps the execution until its sample's code arrives), and the
sandbox keeps one execution's results within a documented total, failing the cases past it."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from infra.kafka.admin import admin_client, ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.consumer import decode_message
from infra.kafka.global_table import GlobalTable
from infra.kafka.producer import EventProducer
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.port import Emit, Hosted, Incoming
from infra.runtime.state import State
from rlstream.settings import get_settings
from schemas.dlq import DeadLettered
from schemas.errors import EventDecodeError
from schemas.reference import ReferenceExecuted
from schemas.rollout import (
    MAX_EXECUTION_RESULT_BYTES,
    RESULT_NOT_KEPT,
    CodeGenerated,
    RewardScored,
    SandboxExecuted,
)
from schemas.task import TaskPublished, TestCase
from schemas.topics import DLQ, EXECUTIONS, REFERENCES, REWARDS, TASKS, Topic
from streams.reward.agent import RewardAgent
from streams.reward.evaluate import Evaluator
from streams.reward.function import get_reward_function
from streams.sandbox.agent import SandboxAgent
from streams.sandbox.pool import SandboxPool
from streams.sandbox.service import Sandbox

#: cases 0-3 return small values (and pass); cases 4-11 return 900,000 characters each (and fail):
#: eight of them are ~7 MB, more than one execution keeps
PROGRAM = "def spread(i):\n    if i < 4:\n        return i * 2\n    return chr(97 + i) * 900_000\n"
LARGE = 900_002  # the repr's characters (and bytes of JSON)


def _task(task_id: str) -> TaskPublished:
    return TaskPublished(
        task_id=task_id,
        prompt="def spread(i):\n",
        entry_point="spread",
        tests=tuple(TestCase(input=f"({i},)", output=str(i * 2) if i < 4 else "'short'") for i in range(12)),
        reference=PROGRAM,
    )


def _read(bootstrap: str, topic: str, want: Callable[[Any], bool], timeout_s: float) -> list[Any]:
    """Every committed event of ``topic`` that ``want`` accepts, once at least one arrived."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check.{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    meta = consumer.list_topics(topic, 30).topics[topic]
    consumer.assign([TopicPartition(topic, p, 0) for p in meta.partitions])
    found: list[Any] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            for msg in consumer.consume(100, 0.5):
                if msg.error() is not None:
                    continue
                try:
                    event = decode_message(msg).event
                except EventDecodeError:
                    continue  # other tests put garbage on the shared topics
                if want(event):
                    found.append((event, len(msg.value() or b"")))
            if found:
                return found
    finally:
        consumer.close()
    return found


Flow = tuple[str, str, str, GlobalTable[TaskPublished]]


@pytest.fixture
def flow(
    kafka_catalog: str, kafka_config: KafkaConfig
) -> Iterator[tuple[str, str, str, GlobalTable[TaskPublished]]]:
    """A sandbox and a reward processor on private generations and executions topics (made like the
    catalog's); references, rewards and dead letters go to the catalog's topics."""
    suffix = uuid.uuid4().hex[:10]
    generations, executions = f"test.generations.{suffix}", f"test.executions.{suffix}"
    ensure_topics(
        kafka_catalog,
        kafka_config,
        [
            Topic(generations, "group_id", "CodeGenerated", "test"),
            replace(EXECUTIONS, name=executions),
        ],
    )
    settings = get_settings()
    config = settings.sandbox.model_copy(update={"cache_dir": settings.cache_dir / "sandbox", "workers": 1})
    tasks: GlobalTable[TaskPublished] = GlobalTable(
        kafka_catalog, TASKS.name, TaskPublished, key=lambda t: t.task_id
    )
    tasks.start()
    pool = SandboxPool(config, workers=1)
    sandbox = SandboxAgent(pool, tasks)
    reward_fn = get_reward_function(settings.reward_function, settings.reward)
    evaluator = Evaluator(Sandbox(config), reward_fn, settings.noise)
    reward = RewardAgent(reward_fn, tasks, lambda task, backend: evaluator.reference(task, backend))

    def to_private(batch: Sequence[Incoming], state: State) -> list[Emit]:
        return [
            replace(e, topic=executions) if isinstance(e.event, SandboxExecuted) else e
            for e in sandbox.handle(batch, state)
        ]

    processors = [
        TransactionalProcessor(
            Hosted(f"sandbox-large-{suffix}", [generations], to_private), bootstrap=kafka_catalog
        ),
        TransactionalProcessor(
            Hosted(f"reward-large-{suffix}", [generations, executions], reward.handle),
            bootstrap=kafka_catalog,
        ),
    ]
    stop = threading.Event()
    threads = [threading.Thread(target=p.run, args=(stop,), daemon=True) for p in processors]
    for t in threads:
        t.start()
    try:
        yield kafka_catalog, generations, executions, tasks
    finally:
        stop.set()
        for t in threads:
            t.join(60)
        pool.close()
        tasks.close()
        admin_client(kafka_catalog).delete_topics([generations, executions])


def test_a_program_returning_large_results_on_many_cases_is_scored_not_dead_lettered(
    flow: Flow,
) -> None:
    bootstrap, generations, executions, tasks = flow
    task = _task(f"large-{uuid.uuid4().hex[:8]}")
    sample = CodeGenerated(
        sample_id=f"{task.task_id}/0",
        group_id=f"{task.task_id}/g",
        task_id=task.task_id,
        sample_index=0,
        policy_version=0,
        model="test",
        prompt_text=task.prompt,
        completion_text=PROGRAM,
        code=PROGRAM,
    )
    # a run of its own: a task without one belongs to every scheduler that reads it (another test's
    # pipeline on the shared broker would run it)
    with EventProducer(bootstrap, source="test/large", run_id=f"large-{uuid.uuid4().hex[:8]}") as producer:
        producer.publish(task)
        producer.flush()
        deadline = time.monotonic() + 60
        while tasks.get(task.task_id) is None and time.monotonic() < deadline:
            time.sleep(0.2)  # the processors' task table follows rl.tasks
        producer.publish(sample, topic=generations)
        producer.flush()

    [(scored, _)] = _read(
        bootstrap,
        REWARDS.name,
        lambda e: isinstance(e, RewardScored) and e.sample_id == sample.sample_id,
        300,
    )
    assert scored.total_cases == 12 and scored.passed == 4

    [(execution, size)] = _read(bootstrap, executions, lambda e: isinstance(e, SandboxExecuted), 30)
    assert size > 3 * 1024 * 1024  # three times what a topic takes by default
    statuses = [c.status for c in execution.cases]
    kept = [c for c in execution.cases if c.result_repr is not None and len(c.result_repr) == LARGE]
    assert len(kept) == MAX_EXECUTION_RESULT_BYTES // LARGE == 4
    assert [c.error for c in execution.cases[8:]] == [RESULT_NOT_KEPT] * 4
    assert statuses == ["ok"] * 8 + ["error"] * 4

    references = _read(
        bootstrap,
        REFERENCES.name,
        lambda e: isinstance(e, ReferenceExecuted) and e.task_id == task.task_id,
        30,
    )
    assert references and references[0][1] > 3 * 1024 * 1024
    letters = _read(
        bootstrap,
        DLQ.name,
        lambda e: isinstance(e, DeadLettered) and e.original_topic in (generations, executions),
        3,
    )
    assert not letters
