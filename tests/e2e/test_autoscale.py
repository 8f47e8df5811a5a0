"""``rlstream run --autoscale`` on a real broker with real sandbox worker processes: a backlog of programs
on ``rl.generations`` adds a sandbox instance (the lag that caused it logged), the drained backlog retires
it, and every program is executed exactly once across both rebalances."""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path

from infra.kafka.admin import ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.producer import EventProducer
from infra.telemetry.config import MetricsConfig
from rlstream.runner import Child, ScaledKind
from rlstream.scaling import ScalingConfig
from rlstream.settings import Settings
from rlstream.workers import scaling_target
from schemas.rollout import CodeGenerated, SandboxExecuted
from schemas.task import TaskPublished, TestCase
from schemas.topics import CATALOG, EXECUTIONS, GENERATIONS, TASKS
from tests.e2e.conftest import read_topic, run_env

RUN = "scale"
#: each run of the program (its cases, then its probe) takes a third of a second at import: one instance
#: needs ~50 s for the backlog
TASK = TaskPublished(
    task_id="scale/slow",
    prompt="def slow(x: int) -> int:\n",
    entry_point="slow",
    tests=(TestCase(input="(1,)", output="1"),),
)
PROGRAM = "import time\ntime.sleep(0.3)\ndef slow(x):\n    return x\n"
BACKLOG = 80


def _generation(i: int) -> CodeGenerated:
    group = f"{RUN}/{TASK.task_id}/{i}"
    return CodeGenerated(
        sample_id=f"{group}/0",
        group_id=group,
        task_id=TASK.task_id,
        sample_index=0,
        policy_version=0,
        model="tiny",
        prompt_text=TASK.prompt,
        completion_text=PROGRAM,
        code=PROGRAM,
    )


def test_a_backlog_adds_a_sandbox_instance_and_the_drained_one_is_retired(
    own_broker: str, tmp_path: Path
) -> None:
    ensure_topics(own_broker, KafkaConfig(), CATALOG)
    with EventProducer(own_broker, source="tests/autoscale", run_id=RUN) as producer:
        producer.publish(TASK, TASKS.name)
        for i in range(BACKLOG):
            producer.publish(_generation(i), GENERATIONS.name)
    env = run_env(
        own_broker,
        tmp_path / "home",
        RLSTREAM_RUN_ID=RUN,
        RLSTREAM_SANDBOX__WORKERS="1",
        RLSTREAM_SANDBOX__BACKEND="wasm",
        RLSTREAM_METRICS__ENABLED="false",
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    children = [Child("sandbox", logs / "sandbox.log")]
    children[0].start(env)
    config = ScalingConfig(
        kinds=("sandbox",),
        lag_per_instance={"sandbox": 16},
        max_instances=2,  # whatever the cores: one step up, one down
        interval_s=1,
        up_after_s=2,
        down_after_s=5,
        settle_s=10,
    )
    group, topics = scaling_target("sandbox", Settings(run_id=RUN), RUN)
    scaled = ScaledKind(
        "sandbox",
        config,
        own_broker,
        group,
        topics,
        logs,
        metrics=MetricsConfig(enabled=False),
        now=time.monotonic(),
    )
    lines: list[str] = []
    try:
        assert scaled.scaler.maximum == min(2, os.cpu_count() or 1)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not (len(scaled.log) >= 2 and scaled.scaler.count == 1):
            line = scaled.step(time.monotonic(), env, children)
            if line is not None:
                lines.append(line)
            assert all(c.alive() for c in children), "\n".join(c.tail() for c in children)
            time.sleep(0.2)
    finally:
        for child in children:
            child.stop()
        scaled.close()
    tails = "\n".join(c.tail() for c in children)
    assert [(c["before"], c["after"]) for c in scaled.log] == [(1, 2), (2, 1)], (lines, tails)
    up, down = scaled.log
    assert up["lag"] > 16 and down["lag"] <= 16
    assert lines[0].startswith("autoscale sandbox: adding an instance (1 -> 2): lag ")
    assert (logs / "sandbox-1.log").exists()  # the added instance ran, under its own instance id
    # each program's run (its cases; then its probe) committed once, none lost or doubled by the rebalances
    executed = Counter(
        (e.sample_id, e.run_index)
        for _, e in read_topic(own_broker, EXECUTIONS.name)
        if isinstance(e, SandboxExecuted)
    )
    first_runs = {sample for sample, run in executed if run == 0}
    assert first_runs == {_generation(i).sample_id for i in range(BACKLOG)}
    assert set(executed.values()) == {1}, executed.most_common(3)
