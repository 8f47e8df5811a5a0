"""A worker's /metrics: what a processor committed on the in-memory runtime, served over HTTP and read
back with Prometheus' own text parser (prometheus-client)."""

from __future__ import annotations

import socket
from collections.abc import Iterable, Sequence

import pytest

from infra.runtime.memory import MemoryLog, MemoryRuntime
from infra.runtime.port import Emit, Hosted, Incoming, ProcessorStats
from infra.runtime.state import State
from infra.runtime.tally import sandbox_outcome
from infra.telemetry.metrics import serve_metrics
from schemas.codec import encode
from schemas.envelope import Envelope
from schemas.rollout import CaseResult, RewardScored, SandboxExecuted
from schemas.topics import DLQ, EXECUTIONS, REWARDS
from tests.e2e.conftest import scrape


def execution(i: int, status: str = "ok", **fields: object) -> SandboxExecuted:
    cases = (CaseResult(index=0, status=status, result_repr="1"),)  # type: ignore[arg-type]
    return SandboxExecuted(
        sample_id=f"run-m/t/0/{i}", group_id="run-m/t/0", task_id="t", backend="wasm", cases=cases, **fields
    )


def score(batch: Sequence[Incoming], state: State) -> Iterable[Emit]:
    """Rewards 1.0 for a run whose cases all returned, else 0.0; a sample named ``.../9`` breaks it."""
    for item in batch:
        ex = item.event
        assert isinstance(ex, SandboxExecuted)
        if ex.sample_id.endswith("/9"):
            raise ValueError("cannot score this one")
        total = 1.0 if sandbox_outcome(ex) == "ok" else 0.0
        yield Emit(
            RewardScored(
                sample_id=ex.sample_id,
                group_id=ex.group_id,
                task_id=ex.task_id,
                execution_event_id=item.envelope.id,
                reward_fn="code",
                reward_version="v3",
                components={},
                weights={},
                total=total,
                passed=int(total),
                total_cases=1,
            )
        )


def test_metrics_say_what_the_processor_committed_in_prometheus_text_format() -> None:
    log = MemoryLog(partitions=1)
    rt = MemoryRuntime(log, [Hosted("score", (EXECUTIONS.name,), score, batch_size=2)], run_id="run-m")
    for ex in (execution(0), execution(1), execution(2, status="error"), execution(9)):
        log.publish(EXECUTIONS.name, encode(ex, Envelope.for_event(ex, source="test", run_id="run-m")))
    log.append(EXECUTIONS.name, b"k", b"\x00 not an event", [("ce_type", b"x")])
    rt.run()
    server = serve_metrics([("score", lambda: rt.stats("score"))], host="127.0.0.1", port=0)
    try:
        got = scrape(server.url)
    finally:
        server.close()

    def value(name: str, **labels: str) -> float:
        return got[(name, tuple(sorted({"processor": "score", **labels}.items())))]

    written = {topic: len(log.events(topic)) for topic in (REWARDS.name, DLQ.name)}
    assert written == {REWARDS.name: 3, DLQ.name: 2}
    assert value("rlstream_events_consumed_total", topic=EXECUTIONS.name) == 5
    assert value("rlstream_events_produced_total", topic=REWARDS.name) == written[REWARDS.name]
    assert value("rlstream_events_produced_total", topic=DLQ.name) == written[DLQ.name]
    assert value("rlstream_errors_total", stage="handler") == 1
    assert value("rlstream_errors_total", stage="decode") == 1
    letters = {"stage": "score", "original_topic": EXECUTIONS.name, "disposition": "dead"}
    assert value("rlstream_dead_letters_total", **letters) == 2
    reward = {"run": "run-m", "reward_fn": "code-v3"}
    assert (value("rlstream_reward_count", **reward), value("rlstream_reward_sum", **reward)) == (3, 2.0)
    assert value("rlstream_reward_mean", **reward) == pytest.approx(2 / 3)
    assert value("rlstream_batch_records_count") == value("rlstream_transactions_total") >= 3
    assert got[("process_resident_memory_bytes", ())] > 0


def test_sandbox_outcomes() -> None:
    assert sandbox_outcome(execution(0)) == "ok"
    assert sandbox_outcome(execution(0, status="error")) == "error"
    assert sandbox_outcome(execution(0, timed_out=True)) == "timeout"
    assert sandbox_outcome(execution(0, memory_exceeded=True)) == "memory"
    assert sandbox_outcome(execution(0, violation="network", violations=("network",))) == "violation"
    assert sandbox_outcome(execution(0, infra_error="runtime missing", timed_out=True)) == "infra_error"


def test_a_taken_port_moves_the_metrics_to_a_free_one_instead_of_failing_the_worker() -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        taken = held.getsockname()[1]
        server = serve_metrics([], host="127.0.0.1", port=taken)
        try:
            assert server.port != taken
            assert ("process_resident_memory_bytes", ()) in scrape(server.url)
        finally:
            server.close()


def test_sandbox_run_times_are_a_histogram_per_run_whose_buckets_give_percentiles() -> None:
    stats = ProcessorStats()
    durations = [0.02] * 90 + [3.0] * 10  # p90 in the 0.025 s bucket, p95 in the 5 s one
    for i, d in enumerate(durations):
        stats.tally.observe(execution(i, duration_s=d), "run-m")
    server = serve_metrics([("sandbox", lambda: stats)], host="127.0.0.1", port=0)
    try:
        got = scrape(server.url)
    finally:
        server.close()
    labels = {"processor": "sandbox", "run": "run-m", "backend": "wasm"}

    def bucket(le: str) -> float:
        return got[("rlstream_sandbox_run_seconds_bucket", tuple(sorted({**labels, "le": le}.items())))]

    assert (bucket("0.025"), bucket("2.5"), bucket("5.0"), bucket("+Inf")) == (90, 90, 100, 100)
    assert got[("rlstream_sandbox_run_seconds_count", tuple(sorted(labels.items())))] == 100
    assert got[("rlstream_sandbox_run_seconds_sum", tuple(sorted(labels.items())))] == pytest.approx(31.8)
