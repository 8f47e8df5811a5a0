"""Traces in a real OpenTelemetry backend: ``rlstream run`` exports every worker's spans over OTLP/HTTP
to the backend the set-up builds, and each sample's trace is read back through the backend's query API.

One trace per sample, across every hop: born in the generator (linked to its group's request), then
sandbox, reward, noise filter and the experience processor, each a ``process`` span (child of the
``send`` span of the record it handles, with the messaging attributes); the learner's step span links
to the trace of every sample it trained. ``rlstream lineage`` names the same trace id.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, TopicPartition

from infra.kafka.config import BrokerConfig
from infra.kafka.consumer import ConsumedEvent, decode_message
from infra.telemetry.backend import TraceBackend, binary_path, span_service, span_tags
from schemas.errors import DependencyError, EventDecodeError
from schemas.policy import PolicyPublished
from schemas.rollout import CodeGenerated
from schemas.topics import GENERATIONS, POLICY
from tests.cli_support import run_cli
from tests.conftest import private_dir, start_test_cluster
from tests.e2e.conftest import ROOT

CACHE = Path.home() / ".rlstream"

#: (service, span name) of every hop a sample's trace must show
HOPS = (
    ("rlstream-generator", "send rl.generations"),
    ("rlstream-sandbox", "process rl.generations"),
    ("rlstream-sandbox", "send rl.executions"),
    ("rlstream-reward", "process rl.executions"),
    ("rlstream-reward", "send rl.rewards"),
    ("rlstream-filter", "process rl.rewards"),
    ("rlstream-filter", "send rl.verdicts"),
    ("rlstream-experience", "process rl.verdicts"),
)


@pytest.fixture
def trace_backend(tmp_path: Path) -> Iterator[TraceBackend]:
    backend = TraceBackend(binary_path(CACHE), tmp_path / "trace-backend")
    try:
        backend.start()
    except DependencyError as exc:
        pytest.fail(f"trace tests need the trace backend: {exc}", pytrace=False)
    try:
        yield backend
    finally:
        backend.stop()


@pytest.fixture
def own_broker(kafka_lib: Path, test_broker_config: BrokerConfig) -> Iterator[str]:
    """A --steps run leaves the learner's offsets and policy versions behind: a broker of its own."""
    with private_dir("rlstream-test-traces-") as data_dir:
        cluster = start_test_cluster(test_broker_config, kafka_lib, data_dir)
        try:
            yield cluster.running_bootstrap() or ""
        finally:
            cluster.down()


def _read(bootstrap: str, topic: str) -> list[ConsumedEvent]:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"check.{uuid.uuid4().hex}",
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
        }
    )
    try:
        parts = sorted(consumer.list_topics(topic, 30).topics[topic].partitions)
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), 30)[1] for p in parts}
        consumer.assign([TopicPartition(topic, p, 0) for p in parts])
        out: list[ConsumedEvent] = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for msg in consumer.consume(500, 0.5):
                if msg.error() is None:
                    try:
                        out.append(decode_message(msg))
                    except EventDecodeError:
                        continue
            positions = consumer.position([TopicPartition(topic, p) for p in parts])
            if all(tp.offset >= ends[tp.partition] for tp in positions):
                break
        return out
    finally:
        consumer.close()


def _trace_id(traceparent: str | None) -> str:
    assert traceparent, "a record without traceparent"
    return traceparent.split("-")[1]


def _wait_for_trace(backend: TraceBackend, trace_id: str, timeout_s: float = 60.0) -> dict[str, Any]:
    """The trace once every hop has arrived (exporters send in batches)."""
    deadline = time.monotonic() + timeout_s
    found: set[tuple[str, str]] = set()
    while True:
        trace = backend.trace(trace_id)
        if trace is not None:
            found = {(span_service(trace, s), s["operationName"]) for s in trace["spans"]}
            if set(HOPS) <= found:
                return trace
        if time.monotonic() > deadline:
            raise AssertionError(f"trace {trace_id}: hops missing {sorted(set(HOPS) - found)}")
        time.sleep(1.0)


def test_each_sample_has_one_trace_across_every_hop_in_the_backend(
    own_broker: str, trace_backend: TraceBackend, tmp_path: Path
) -> None:
    run_id = f"traces-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "RLSTREAM_HOME": str(tmp_path / "home"),
        "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": own_broker,
        "RLSTREAM_GENERATOR__MODELS_DIR": str(CACHE / "models"),
        "RLSTREAM_SANDBOX__CACHE_DIR": str(CACHE / "cache" / "sandbox"),
        "RLSTREAM_SANDBOX__WORKERS": "1",
        "RLSTREAM_LEARNER__ACCELERATOR": "cpu",
        "RLSTREAM_TELEMETRY__OTLP_ENDPOINT": trace_backend.otlp_endpoint,
        # a --steps run issues groups until the learner's first step: hold it to a few while the
        # learner starts, so the run stays small
        "RLSTREAM_PIPELINE__SCHEDULER__MAX_LEARNER_LAG": "2",
        "RLSTREAM_PIPELINE__SCHEDULER__MAX_GROUPS_IN_FLIGHT": "2",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlstream.cli",
            "run",
            "--tasks",
            "synthetic",
            "--limit",
            "2",
            "--group-size",
            "2",
            "--model",
            "tiny",
            "--steps",
            "1",
            "--run-id",
            run_id,
            "--timeout",
            "420",
            "--json",
            "--no-report",  # the report is test_report's
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-4000:]

    samples = {
        item.event.sample_id: item
        for item in _read(own_broker, GENERATIONS.name)
        if isinstance(item.event, CodeGenerated) and item.event.group_id.startswith(f"{run_id}/")
    }
    assert len(samples) >= 4, sorted(samples)
    trace_of = {sid: _trace_id(item.envelope.traceparent) for sid, item in samples.items()}
    assert len(set(trace_of.values())) == len(samples), "two samples share a trace"

    for sample_id, item in samples.items():
        trace = _wait_for_trace(trace_backend, trace_of[sample_id])
        spans = trace["spans"]
        # one story: every span that names a sample names this one, and only the generator's send
        # span is a root
        named = {span_tags(span).get("rlstream.sample_id", sample_id) for span in spans}
        assert named == {sample_id}, named
        roots = [s for s in spans if not any(r["refType"] == "CHILD_OF" for r in s["references"])]
        assert [(span_service(trace, s), s["operationName"]) for s in roots] == [HOPS[0]]
        # ... linked to where its group's request was read, in the group's own trace
        links = [r for r in roots[0]["references"] if r["refType"] == "FOLLOWS_FROM"]
        assert len(links) == 1 and links[0]["traceID"] != trace_of[sample_id]
        group_trace = trace_backend.trace(links[0]["traceID"])
        assert group_trace is not None
        by_hop = {(span_service(group_trace, s), s["operationName"]): s for s in group_trace["spans"]}
        assert ("rlstream-scheduler", "send rl.rollouts.requested") in by_hop, sorted(by_hop)
        # the group's experience is sent in the group's trace, linked to this sample's trace
        experience = by_hop[("rlstream-experience", "send rl.experiences")]
        assert trace_of[sample_id] in {r["traceID"] for r in experience["references"]}
        # the messaging semantic conventions, on the sandbox's process span of this very record
        process = next(
            s
            for s in spans
            if s["operationName"] == "process rl.generations" and span_service(trace, s) == "rlstream-sandbox"
        )
        tags = span_tags(process)
        assert tags["span.kind"] == "consumer"
        assert tags["messaging.system"] == "kafka"
        assert tags["messaging.destination.name"] == GENERATIONS.name
        assert tags["messaging.operation.type"] == "process"
        assert tags["messaging.consumer.group.name"] == "rlstream.sandbox"
        assert tags["messaging.message.id"] == item.envelope.id
        assert int(tags["messaging.kafka.offset"]) == item.offset

    # the learner's steps link to the trace of every sample they trained
    trained = {
        sid
        for item in _read(own_broker, POLICY.name)
        if isinstance(item.event, PolicyPublished) and item.event.run_id == run_id
        for sid in item.event.trained_sample_ids
    }
    assert trained and trained <= set(samples), trained
    deadline = time.monotonic() + 60
    while True:
        steps = trace_backend.find_traces(
            "rlstream-learner", operation="learner step", tags={"rlstream.run_id": run_id}
        )
        linked = {
            ref["traceID"]
            for t in steps
            for s in t["spans"]
            if s["operationName"] == "learner step"
            for ref in s["references"]
            if ref["refType"] == "FOLLOWS_FROM"
        }
        if {trace_of[s] for s in trained} <= linked or time.monotonic() > deadline:
            break
        time.sleep(1.0)
    print(f"\n{len(samples)} samples, each its own trace; {len(trained)} trained, in {len(steps)} step(s)")
    missing = sorted(s for s in trained if trace_of[s] not in linked)
    assert not missing, f"trained samples whose trace no learner step links to: {missing}"

    # rlstream lineage names the trace the backend has
    sample_id = sorted(trained)[0]
    shown = run_cli("lineage", sample_id, "--json", env=env)
    assert shown.returncode in (0, 1), shown.stderr
    assert json.loads(shown.stdout)["trace_id"] == trace_of[sample_id]
