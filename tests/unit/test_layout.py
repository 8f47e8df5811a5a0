"""Where ``rlstream run`` places its workers, and what a processor sharing a process keeps of its own:
its Kafka principal and its service name on traces."""

from __future__ import annotations

import threading

import pytest

from infra.kafka import security
from infra.telemetry import tracing
from infra.telemetry.config import TelemetryConfig
from rlstream.commands.worker import run_worker, worker_names
from rlstream.layout import RunConfig, processes, resolve
from rlstream.workers import PIPELINE_WORKERS
from schemas.errors import UsageError


def test_auto_shares_processes_on_few_cores_only() -> None:
    auto = RunConfig()
    assert resolve(auto, 2, "transactional") == "shared"
    assert resolve(auto, 4, "transactional") == "shared"
    assert resolve(auto, 8, "transactional") == "split"
    assert resolve(RunConfig(shared_up_to_cores=16), 8, "transactional") == "shared"
    assert resolve(RunConfig(layout="split"), 2, "transactional") == "split"
    assert resolve(RunConfig(layout="shared"), 64, "transactional") == "shared"


def test_on_faust_every_process_runs_one_app() -> None:
    assert resolve(RunConfig(), 2, "faust") == "split"
    with pytest.raises(UsageError, match="transactional runtime only"):
        resolve(RunConfig(layout="shared"), 2, "faust")


def test_the_shared_layout_keeps_torch_workers_and_the_scheduler_apart() -> None:
    placed = processes(PIPELINE_WORKERS, "shared")
    assert placed == [
        "scheduler",
        "generator",
        "evaluator",
        "sandbox,episode,reward,filter,experience,monitor,projector",
        "learner",
    ]
    # every worker runs exactly once, whatever the layout
    for layout in ("split", "shared"):
        names = [n for p in processes(PIPELINE_WORKERS, layout) for n in p.split(",")]  # type: ignore[arg-type]
        assert sorted(names) == sorted(PIPELINE_WORKERS)
    assert processes(("scheduler", "sandbox", "learner"), "shared") == ["scheduler", "sandbox", "learner"]


def test_a_worker_list_names_known_processors_once() -> None:
    assert worker_names("reward, filter,experience") == ["reward", "filter", "experience"]
    with pytest.raises(UsageError, match="unknown worker rewards"):
        worker_names("rewards,filter")
    with pytest.raises(UsageError, match="named twice"):
        worker_names("reward,reward")
    with pytest.raises(UsageError):
        worker_names(",")


def test_a_shared_process_refuses_the_faust_runtime_before_connecting_anywhere() -> None:
    with pytest.raises(UsageError, match="transactional runtime only"):
        run_worker("reward,filter", runtime="faust")


def _on_thread(target: object) -> None:
    t = threading.Thread(target=target)  # type: ignore[arg-type]
    t.start()
    t.join()


def test_each_processor_thread_connects_as_its_own_principal() -> None:
    process = security.Credentials(protocol="SASL_PLAINTEXT", mechanism="PLAIN", username="rlstream-cli")
    seen: dict[str, str | None] = {}

    def processor(name: str) -> None:
        with security.per_thread():
            security.use(security.Credentials(protocol="SASL_PLAINTEXT", mechanism="PLAIN", username=name))
            seen[name] = security.current().username

    before = security.current()
    security.use(process)
    try:
        _on_thread(lambda: processor("rlstream-reward"))
        _on_thread(lambda: processor("rlstream-filter"))
        assert seen == {"rlstream-reward": "rlstream-reward", "rlstream-filter": "rlstream-filter"}
        # neither changed what the process's other clients connect as
        assert security.current().username == "rlstream-cli"
    finally:
        security.use(before)


def test_each_processor_thread_traces_as_its_own_service() -> None:
    names: dict[str, str] = {}

    def processor(name: str) -> None:
        with tracing.per_thread(TelemetryConfig(), f"rlstream-{name}"):
            span = tracing.tracer().start_span("process rl.rewards")
            names[name] = span.resource.attributes["service.name"]  # type: ignore[attr-defined]
            span.end()

    _on_thread(lambda: processor("reward"))
    _on_thread(lambda: processor("filter"))
    assert names == {"reward": "rlstream-reward", "filter": "rlstream-filter"}
