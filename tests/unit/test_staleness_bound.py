"""The scheduler's policy-staleness bound, on the in-memory runtime with the real scheduler and generator
processors (tiny model, real sha256-verified checkpoints): groups are held back while the run's generators
run weights more than ``max_staleness`` versions behind the newest published policy, and released once the
generators say (``PolicyLoaded`` on ``rl.policy.loaded``) that they have loaded it."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from infra.runtime.memory import MemoryLog, MemoryRuntime
from infra.runtime.port import Hosted
from infra.runtime.sides import MemorySideInputs
from producers.generator.models import load_model
from producers.generator.weights import write_safetensors
from rlstream.settings import Settings
from rlstream.workers import Built, stream_processor
from schemas.codec import encode
from schemas.envelope import Envelope
from schemas.policy import PolicyLoaded, PolicyPublished
from schemas.rollout import CodeGenerated, RolloutRequested
from schemas.task import TaskPublished, TestCase
from schemas.topics import GENERATIONS, POLICY, POLICY_LOADED, ROLLOUTS_REQUESTED, TASKS
from streams.scheduler.agent import POLICY_VERSION, RUNNING_VERSION, SchedulerAgent

MODELS = Path.home() / ".rlstream" / "models"
#: the run, its log and runtime, its settings, and the scheduler's agent (what it decided last)
Pipeline = tuple[str, MemoryLog, MemoryRuntime, Settings, SchedulerAgent]


@pytest.fixture
def pipeline(tmp_path: Path) -> Iterator[Pipeline]:
    run_id = f"stale-{uuid.uuid4().hex[:6]}"
    settings = Settings(
        run_id=run_id,
        home=tmp_path,
        generator={"model": "tiny", "models_dir": MODELS},
        pipeline={
            "scheduler": {
                "only_own_run": True,
                "group_size": 2,
                "max_staleness": 1,
                "sampling": {"max_tokens": 1},
            }
        },
    )
    log = MemoryLog()
    built: list[Built] = [
        stream_processor(name, settings, MemorySideInputs(log)) for name in ("scheduler", "generator")
    ]
    try:
        hosted = built[0].processor
        assert isinstance(hosted, Hosted) and isinstance(hosted.handler.__self__, SchedulerAgent)  # type: ignore[attr-defined]
        rt = MemoryRuntime(log, [b.processor for b in built], run_id=run_id)
        yield run_id, log, rt, settings, hosted.handler.__self__  # type: ignore[attr-defined]
    finally:
        for b in built:
            for close in b.closers:
                close()


def _publish(log: MemoryLog, run_id: str, event: TaskPublished | PolicyPublished) -> None:
    log.publish(
        TASKS.name if isinstance(event, TaskPublished) else POLICY.name,
        encode(event, Envelope.for_event(event, source="test", run_id=run_id)),
    )


def _settle(rt: MemoryRuntime, name: str) -> None:
    for _ in range(50):
        rt.step(name)
        rt.clock += 1.0
        if rt.lag(name) == 0:
            rt.step(name)  # a last tick
            return
    raise AssertionError(f"{name} never caught up")


def test_groups_wait_while_the_generators_are_too_stale_and_flow_once_they_catch_up(
    pipeline: Pipeline, tmp_path: Path
) -> None:
    run_id, log, rt, settings, agent = pipeline
    scheduler, generator = "scheduler." + run_id, "generator." + run_id
    # the learner has published v1 and v2 (the tiny model's own weights, saved twice)
    model = load_model("tiny", MODELS, seed=settings.generator.seed)
    for version in (1, 2):
        path = tmp_path / f"v{version}" / "model.safetensors"
        digest = write_safetensors(model.model, path)
        published = PolicyPublished(
            run_id=run_id, policy_version=version, step=version, checkpoint_uri=path.as_uri(), sha256=digest
        )
        _publish(log, run_id, published)
    for i in range(3):
        task = TaskPublished(
            task_id=f"{run_id}/t{i}",
            prompt="def f(x):\n",
            entry_point="f",
            tests=(TestCase(input="(1,)", output="1"),),
        )
        _publish(log, run_id, task)

    # the generators have loaded nothing yet: they run v0, two versions behind v2 (bound 1)
    _settle(rt, scheduler)
    assert [e for _, e in log.events(ROLLOUTS_REQUESTED.name)] == []
    state = rt.state(scheduler)
    assert state.get(0, POLICY_VERSION, run_id) == 2 and state.get(0, RUNNING_VERSION, run_id) is None
    assert agent.last_decision.reason == "policy staleness 2 > 1"

    # the generators read the publications, load v2 and say so; the scheduler releases the groups
    _settle(rt, generator)
    loaded = [e for _, e in log.events(POLICY_LOADED.name) if isinstance(e, PolicyLoaded)]
    assert [(e.published_version, e.policy_version, e.loaded) for e in loaded] == [(1, 2, True), (2, 2, True)]
    _settle(rt, scheduler)
    assert agent.last_decision.issue
    requests = [e for _, e in log.events(ROLLOUTS_REQUESTED.name) if isinstance(e, RolloutRequested)]
    assert sorted(r.task_id for r in requests) == [f"{run_id}/t{i}" for i in range(3)]
    assert {r.policy_version for r in requests} == {2}

    # and the samples are generated with the weights the generators said they run
    _settle(rt, generator)
    samples = [e for _, e in log.events(GENERATIONS.name) if isinstance(e, CodeGenerated)]
    assert len(samples) == 3 * 2 and {s.policy_version for s in samples} == {2}
    # re-reading the publications (a batch handled again) writes the same facts, not new ones
    assert len(log.events(POLICY_LOADED.name)) == 2
