"""``rlstream worker generator`` against a real broker: a warm standby of the generator's instance takes
it over when it is killed with SIGKILL mid-run, and every requested sample is committed exactly once.

Two generator processes of one run and instance start as ``rlstream run`` starts them: the first holds
the instance's lease and generates; the second, built (model and policy loaded), stands by on the lease.
The first is killed while groups are pending; the standby takes the lease, starts as the same instance
(its transactional id fences the dead one's open transaction, its static group membership takes the
dead one's partitions), and finishes the groups."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Consumer, TopicPartition

from infra.kafka.consumer import decode_message
from infra.kafka.producer import EventProducer
from infra.runtime.lease import lease_holder
from rlstream.workers import worker_lease_path
from schemas.errors import EventDecodeError
from schemas.rollout import CodeGenerated, RolloutRequested, SamplingParams
from schemas.topics import GENERATIONS

HOME = Path.home() / ".rlstream"
GROUPS, GROUP_SIZE = 8, 2
PROMPT = 'def add(a: int, b: int) -> int:\n    """Return a + b."""\n'


def _worker(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "rlstream.cli", "worker", "generator", "--progress-every", "2"],
        env=env,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )


def _wait_for(
    predicate: Callable[[], bool], timeout_s: float, proc: subprocess.Popen[bytes], log: Path, what: str
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        if proc.poll() is not None:
            pytest.fail(f"the generator exited ({proc.returncode}) before {what}:\n{log.read_text()[-3000:]}")
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}:\n{log.read_text()[-3000:]}")


class Generations:
    """The committed generations of one run (read_committed), read as they come."""

    def __init__(self, bootstrap: str, run_id: str) -> None:
        self.run_id = run_id
        self.samples: list[str] = []
        self._consumer = Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"check.{uuid.uuid4().hex}",
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        meta = self._consumer.list_topics(GENERATIONS.name, 30).topics[GENERATIONS.name]
        self._consumer.assign([TopicPartition(GENERATIONS.name, p, 0) for p in meta.partitions])

    def poll(self) -> int:
        for msg in self._consumer.consume(500, 0.2):
            if msg.error() is not None:
                continue
            try:
                event = decode_message(msg).event
            except EventDecodeError:
                continue  # other tests dead-letter-test this shared topic with garbage
            if isinstance(event, CodeGenerated) and event.group_id.startswith(f"{self.run_id}/"):
                self.samples.append(event.sample_id)
        return len(self.samples)

    def close(self) -> None:
        self._consumer.close()


def test_kill_9_and_the_standby_generator_taking_over_commits_every_sample_once(
    kafka_catalog: str, tmp_path: Path
) -> None:
    run_id = f"gs-{uuid.uuid4().hex[:8]}"
    home = tmp_path / "home"
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "RLSTREAM_RUN_ID": run_id,
        "RLSTREAM_HOME": str(home),
        "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": kafka_catalog,
        "RLSTREAM_GENERATOR__MODEL": "tiny",
        "RLSTREAM_GENERATOR__MODELS_DIR": str(HOME / "models"),
        "RLSTREAM_METRICS__ENABLED": "false",
    }
    lease = worker_lease_path(home, run_id, "generator", "0")
    first_log, standby_log = tmp_path / "generator.log", tmp_path / "generator-standby.log"
    seen = Generations(kafka_catalog, run_id)
    first = _worker(env, first_log)
    second: subprocess.Popen[bytes] | None = None
    try:
        _wait_for(lambda: lease_holder(lease) == first.pid, 300, first, first_log, "the first one's lease")
        second = _worker(env, standby_log)
        _wait_for(
            lambda: "standing by for the instance's lease" in standby_log.read_text(),
            300,
            second,
            standby_log,
            "the standby built and waiting",
        )
        assert lease_holder(lease) == first.pid, "the standby took the lease from a live holder"
        with EventProducer(kafka_catalog, source="test", run_id=run_id) as producer:
            for g in range(GROUPS):
                producer.publish(
                    RolloutRequested(
                        group_id=f"{run_id}/g{g}",
                        task_id="t-add",
                        group_size=GROUP_SIZE,
                        prompt=PROMPT,
                        entry_point="add",
                        policy_version=0,
                        sampling=SamplingParams(temperature=1.0, max_tokens=96),
                    )
                )
        _wait_for(lambda: seen.poll() >= GROUP_SIZE, 300, first, first_log, "the first group generated")
        killed_time = time.time()
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        partial = len(seen.samples)
        assert partial < GROUPS * GROUP_SIZE, "the kill should land while groups are still pending"
        assert second is not None
        _wait_for(
            lambda: seen.poll() >= GROUPS * GROUP_SIZE, 300, second, standby_log, "every group generated"
        )
        # linger: a sample committed twice would show up now
        linger = time.monotonic() + 3
        while time.monotonic() < linger:
            seen.poll()
        assert lease_holder(lease) == second.pid
        second.send_signal(signal.SIGTERM)
        assert second.wait(60) == 0, standby_log.read_text()[-3000:]
    finally:
        seen.close()
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
    assert len(seen.samples) == GROUPS * GROUP_SIZE, f"{len(seen.samples)} samples"
    assert len(set(seen.samples)) == len(seen.samples), "a sample was committed twice"
    # the standby took over without a restart: built before the kill, it only took the lease after it
    text = standby_log.read_text()
    assert text.index("built generator") < text.index("holds the instance's lease")
    taken = next(line for line in text.splitlines() if "holds the instance's lease" in line)
    assert time.mktime(time.strptime(taken[:19], "%Y-%m-%d %H:%M:%S")) >= int(killed_time)
