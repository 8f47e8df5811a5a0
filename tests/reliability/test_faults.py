"""Fault injection on a whole training run: every processor and the learner as its own process, the real
broker, the real sandbox, the tiny model. Faults land while groups are in flight:

* the learner killed with SIGKILL while a warm standby learner waits on the run's lease (the e2e
  suite kills each of the six stream processors once),
* the broker killed with SIGKILL and started again on the same data directory,
* on a 3-broker cluster (replication 3, ``min.insync.replicas=2``, acks=all), one broker killed for
  the rest of the run,
* on the Faust runtime (at-least-once), every stream processor, the learner and the projector killed
  with SIGKILL in turn, with a poison record on every processor's input topics; the generator's kill is
  taken over by its warm standby (``bench.recovery --faults generator`` does the same on transactions).

After each run, read afresh from the log: every task yields its group exactly once, every sample one
event per stage, no event id twice on any topic, and the learner trained every accepted sample exactly
once (or dropped it as stale and said so). On Faust a record may be on the log twice, under the same
event id (counted and printed as ``DUPLICATES``), and never twice in the learner's account nor in the
projection. Recovery times (fault -> next event downstream, fault ->
the learner caught up, fault -> the pipeline's committed output back at 90 % of its rate before the fault)
are printed as ``RECOVERY {...}`` lines, written to ``recovery.json`` in the
test's temporary directory, and gathered at the end of the session into one table per fault (also as
JSON: ``--recovery-json``; the figures: ``harness.recovery``; ``python -m bench.recovery`` injects the same
faults (``harness.faults``) outside pytest); nothing asserts on them.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness import faults
from harness.faults import (
    FLOW,
    PIPELINE,
    STAGE_TIMEOUT_S,
    WAVE,
    Run,
    assert_effectively_once,
    assert_projection_matches_a_rebuild,
)
from infra.kafka.config import BrokerConfig
from infra.kafka.local import LocalCluster
from infra.kafka.producer import EventProducer
from infra.runtime.lease import lease_holder
from schemas.dlq import DeadLettered
from schemas.task import TaskPublished
from schemas.topics import DLQ, POLICY
from tests.conftest import private_dir, start_test_cluster
from tests.e2e.conftest import read_topic
from tests.reliability import recovery


def _cluster(lib: Path, config: BrokerConfig, brokers: int) -> Iterator[LocalCluster]:
    with private_dir("rlstream-test-faults-") as data_dir:
        cluster = start_test_cluster(config, lib, data_dir, brokers=brokers)
        try:
            yield cluster
        finally:
            cluster.down()


@pytest.fixture
def one_broker(kafka_lib: Path, test_broker_config: BrokerConfig) -> Iterator[LocalCluster]:
    """A broker of this test's own: the test kills it."""
    yield from _cluster(kafka_lib, test_broker_config, 1)


@pytest.fixture
def three_brokers(kafka_lib: Path, test_broker_config: BrokerConfig) -> Iterator[LocalCluster]:
    yield from _cluster(kafka_lib, test_broker_config.model_copy(update={"heap_mb": 384}), 3)


@pytest.fixture
def run_factory(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[list[Run]]:
    runs: list[Run] = []
    yield runs
    for run in runs:
        run.workers.stop()
        run.settle()
        run.follower.close()
        (tmp_path / "recovery.json").write_text(json.dumps(run.recoveries, indent=1) + "\n")
        # the session's recovery table (tests/conftest.py) gathers these from every pytest worker
        request.node.user_properties.append((recovery.PROPERTY, run.recoveries))


def _start(bootstrap: str, tmp_path: Path, runs: list[Run], **env: str) -> Run:
    run = faults.start(bootstrap, tmp_path, **env)
    runs.append(run)
    return run


def _finish(run: Run, tmp_path: Path) -> dict[str, Any]:
    counts = faults.finish(run)
    summary = {"counts": counts, "restarts": dict(run.workers.restarts), "killed": dict(run.workers.killed)}
    print(f"\nACCOUNT {json.dumps(summary)}", flush=True)
    (tmp_path / "recovery.json").write_text(json.dumps(run.recoveries, indent=1) + "\n")
    return counts


def test_learner_kill_and_broker_restart_lose_nothing_and_repeat_nothing(
    one_broker: LocalCluster, run_factory: list[Run], tmp_path: Path
) -> None:
    bootstrap = one_broker.running_bootstrap()
    assert bootstrap
    run = _start(bootstrap, tmp_path, run_factory)
    faults.kill_learner(run)
    faults.kill_projector(run)
    faults.restart_broker(run, one_broker)
    counts = _finish(run, tmp_path)
    assert counts["tasks"] == len(run.tasks) == WAVE + WAVE // 2 + WAVE // 2 + WAVE
    assert run.workers.killed == {"learner": 1, "projector": 1}
    assert_projection_matches_a_rebuild(run, tmp_path / "rebuilt.sqlite")


def test_one_of_three_brokers_killed_loses_nothing_and_repeats_nothing(
    three_brokers: LocalCluster, run_factory: list[Run], tmp_path: Path
) -> None:
    bootstrap = three_brokers.running_bootstrap()
    assert bootstrap
    run = _start(bootstrap, tmp_path, run_factory)
    faults.lose_a_broker(run, three_brokers)
    counts = _finish(run, tmp_path)
    assert counts["tasks"] == 2 * WAVE
    assert_projection_matches_a_rebuild(run, tmp_path / "rebuilt.sqlite")


#: the stream processors' input topics (a poison record goes on each)
PROCESSOR_INPUTS = (
    "rl.tasks",
    "rl.rollouts.requested",
    "rl.generations",
    "rl.executions",
    "rl.rewards",
    "rl.verdicts",
)


@pytest.mark.slow
def test_on_faust_a_kill_9_of_every_worker_is_effectively_once(
    one_broker: LocalCluster, run_factory: list[Run], tmp_path: Path
) -> None:
    """The e2e pipeline scenario and the kill -9 faults on the Faust runtime, in one run: each of the
    six Faust processors, the learner and the projector killed with SIGKILL while groups are in flight,
    a poison record on every processor's input topics. A broker of its own: the projection is compared
    with a rebuild of the whole log, which must hold this run only."""
    kafka_catalog = one_broker.running_bootstrap()
    assert kafka_catalog
    run = _start(kafka_catalog, tmp_path, run_factory, RLSTREAM_RUNTIME="faust")
    # a warm standby generator, as `rlstream run` keeps one: the generator's kill below is its takeover
    standby = faults.start_standby(run, "generator")
    poison_key = f"{run.run_id}/poison".encode()
    with EventProducer(kafka_catalog, source="test/faults", run_id=run.run_id) as producer:
        for topic in PROCESSOR_INPUTS:
            producer.produce_raw(topic, b"\x00 not an event", key=poison_key, headers=[("ce_type", b"x")])
    wave = run.publish_wave(WAVE)
    run.wait(run.wave_progress(wave, 1), STAGE_TIMEOUT_S, "the wave under way")
    late: list[TaskPublished] = []
    killed_at: dict[str, float] = {}
    for name in (*PIPELINE[:6], "learner", "projector"):
        killed_at[name] = run.workers.kill9(name)
        if name == "experience":
            late = run.publish_wave(WAVE // 2)  # work that arrives while workers come and go
        time.sleep(3)
    run.wait(run.wave_done(wave + late), STAGE_TIMEOUT_S, "the waves after the kills")
    assert lease_holder(run.worker_lease("generator")) == run.workers.procs[standby].pid, "no takeover"
    for name, t0 in killed_at.items():
        downstream = [POLICY.name] if name == "learner" else FLOW[1:-1]
        # a stream processor's own output topic (the flow's topics are in the pipeline's order): when
        # the killed stage committed again, apart from the kills after it
        own = [FLOW[PIPELINE.index(name)]] if name in PIPELINE[:6] else []
        run.record(
            f"kill -9 {name} (faust)",
            t0,
            first_event_downstream_s=run.follower.first_after(t0, downstream),
            stage_output_s=run.follower.first_after(t0, own) if own else None,
        )
    run.wait(run.learner_covers_all, STAGE_TIMEOUT_S, "the learner caught up")
    run.workers.stop()
    # (catches the projection up to the end of the log first)
    assert_projection_matches_a_rebuild(run, tmp_path / "rebuilt.sqlite")
    counts = assert_effectively_once(run)
    print(f"\nACCOUNT {json.dumps(counts)}", flush=True)
    assert counts["tasks"] == len(run.tasks) == WAVE + WAVE // 2
    assert run.workers.killed == dict.fromkeys((*PIPELINE[:6], "learner", "projector"), 1)
    letters = [e for _, e in read_topic(kafka_catalog, DLQ.name) if isinstance(e, DeadLettered)]
    poisoned = {
        letter.original_topic
        for letter in letters
        if letter.original_key_b64 and base64.b64decode(letter.original_key_b64) == poison_key
    }
    assert poisoned == set(PROCESSOR_INPUTS), f"dead-lettered from {sorted(poisoned)}"
