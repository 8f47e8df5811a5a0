"""A deterministic one-shot run, recorded as the records it writes: what ``max_turns = 1`` must keep byte
for byte. The pipeline's own processors (scheduler, generator, sandbox, reward, filter, experience) and
the learner run in one process over lists standing in for topics; every event is encoded with the real
codec exactly as it goes on the log (type, id, key, body). Fields that are timings (or derive from
timings: the reference run's id) are blanked; everything else - every event id and body - must match.

``python -m tests.golden_run --record`` writes ``tests/golden/one_turn_run.json``. It was recorded from
main before episodes existed (this file runs on that code unchanged); the test
``tests/integration/test_one_turn_golden.py`` runs it again and compares.
"""

from __future__ import annotations

import argparse
import copy
import inspect
import json
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch

from infra.kafka.transactional import Emit, Incoming, State
from learner.config import LearnerConfig
from learner.engine import LearnerEngine
from learner.loop import LearnerLoop, Record
from producers.generator.agent import INPUT_TOPICS as GENERATOR_INPUTS
from producers.generator.agent import GeneratorAgent
from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.policy import PolicyFollower, StalenessPolicy
from producers.generator.rollout import RolloutGenerator
from producers.ingest.synthetic import SAMPLING, synthetic_tasks
from schemas.base import Event
from schemas.codec import decode, encode
from schemas.envelope import Envelope
from schemas.rollout import ExperienceReady
from schemas.task import TaskPublished
from schemas.topics import EXPERIENCES, POLICY, TASKS, topic_for
from streams.config import SchedulerConfig
from streams.experience.agent import INPUT_TOPICS as EXPERIENCE_INPUTS
from streams.experience.agent import ExperienceAgent
from streams.noise.agent import INPUT_TOPICS as FILTER_INPUTS
from streams.noise.agent import FilterAgent
from streams.noise.config import NoiseConfig
from streams.reward.agent import INPUT_TOPICS as REWARD_INPUTS
from streams.reward.agent import RewardAgent
from streams.reward.config import RewardConfig, RewardWeights
from streams.reward.evaluate import Evaluator
from streams.reward.function import get_reward_function
from streams.sandbox.agent import INPUT_TOPICS as SANDBOX_INPUTS
from streams.sandbox.agent import SandboxAgent
from streams.sandbox.config import SandboxConfig
from streams.sandbox.pool import SandboxPool
from streams.sandbox.service import Sandbox
from streams.scheduler.agent import INPUT_TOPICS as SCHEDULER_INPUTS
from streams.scheduler.agent import SchedulerAgent

GOLDEN = Path(__file__).parent / "golden" / "one_turn_run.json"
RUN_ID = "golden"
#: timings, and what is derived from them, per event type: blanked before comparing
VOLATILE = {
    "rlstream.rollout.generated": ("duration_s",),
    "rlstream.rollout.executed": ("duration_s", "load_s", "active_s", "cases.*.duration_s"),
    "rlstream.reference.executed": (
        "@id",
        "execution.duration_s",
        "execution.load_s",
        "execution.active_s",
        "execution.cases.*.duration_s",
    ),
    "rlstream.rollout.scored": ("reference_event_id", "components.efficiency", "details.runtime_ratio"),
    # CPU training here is not bit-for-bit the same run to run: the weights' hash varies in the last bits
    # (the generations the weights produce are compared, and are the same)
    "rlstream.policy.published": ("checkpoint_uri", "sha256", "metrics"),
}
Handler = Callable[[Sequence[Incoming], State], Iterable[Emit]]


@dataclass
class _Node:
    topics: tuple[str, ...]
    handler: Handler
    tick: Callable[[State, float], Iterable[Emit]] | None = None
    state: State = field(default_factory=State)
    position: dict[str, int] = field(default_factory=dict)


class _Tasks:
    def __init__(self, tasks: Iterable[TaskPublished]) -> None:
        self.by_id = {t.task_id: t for t in tasks}

    def get(self, key: str) -> TaskPublished | None:
        return self.by_id.get(key)


def run_records(
    workdir: Path, *, steps: int = 2, tasks: int = 2, group_size: int = 2
) -> list[dict[str, Any]]:
    """The run's records in the order they were written: topic, type, id, key and body."""
    torch.manual_seed(0)
    task_list = synthetic_tasks(tasks)
    table = _Tasks(task_list)
    sandbox = SandboxConfig(cache_dir=Path.home() / ".rlstream" / "cache" / "sandbox", backend="wasm")
    # no efficiency weight: the only timing-dependent part of a reward stays out of what is trained on
    reward_config = RewardConfig(weights=RewardWeights(efficiency=0.0))
    reward_fn = get_reward_function("code-v2", reward_config)
    noise = NoiseConfig()
    evaluator = Evaluator(Sandbox(sandbox), reward_fn, noise)
    policy = load_model("tiny", None, seed=0)
    backend = HFBackend(policy, batch_size=8, seed=0)
    learner_config = LearnerConfig(
        backend="torch",
        accelerator="cpu",
        lr=5e-3,
        token_budget=64,
        checkpoint_dir=workdir / "ckpt",
        pad_token_id=3,
    )
    engine = LearnerEngine(copy.deepcopy(policy.model), learner_config)
    learner = LearnerLoop(engine, run_id=RUN_ID, model_name=policy.name)
    pool = SandboxPool(sandbox, workers=1)
    scheduler = SchedulerAgent(
        SchedulerConfig(group_size=group_size, epochs=steps, sampling=SAMPLING, max_groups_in_flight=tasks),
        RUN_ID,
        lambda fresh: 0,
    )
    generator = GeneratorAgent(
        RolloutGenerator(backend, seed=0), PolicyFollower(backend, StalenessPolicy(2), run_id=RUN_ID)
    )
    reward_kwargs: dict[str, Any] = {}
    if "episode_fn" in inspect.signature(RewardAgent).parameters:  # the build with episodes
        reward_kwargs["episode_fn"] = get_reward_function("code-v3", reward_config)
    nodes = [
        _Node(SCHEDULER_INPUTS, scheduler.handle, scheduler.tick),
        _Node(GENERATOR_INPUTS, generator.handle),
        _Node(SANDBOX_INPUTS, SandboxAgent(pool, table).handle),  # type: ignore[arg-type]
        _Node(REWARD_INPUTS, RewardAgent(reward_fn, table, evaluator.reference, **reward_kwargs).handle),
        _Node(
            FILTER_INPUTS, FilterAgent(noise, reward_fn.compare_options(), table, evaluator.reference).handle
        ),
        _Node(EXPERIENCE_INPUTS, ExperienceAgent(deadline_s=3600.0).handle),
    ]
    try:
        from streams.episode.agent import INPUT_TOPICS as EPISODE_INPUTS
        from streams.episode.agent import EpisodeAgent
        from streams.episode.config import FeedbackConfig

        nodes.append(_Node(EPISODE_INPUTS, EpisodeAgent(table, FeedbackConfig()).handle))
    except ImportError:  # the build before episodes
        pass
    for node in nodes:
        node.state.partition(0)
    topics: dict[str, list[Incoming]] = {}
    written: list[dict[str, Any]] = []
    clock = 1_000_000.0

    def append(event: Event, topic: str | None = None, causation: str | None = None) -> None:
        name = topic or topic_for(type(event).__name__).name
        envelope = Envelope.for_event(
            event,
            source="golden",
            run_id=RUN_ID,
            causation_id=causation,
            time=datetime.fromtimestamp(clock, UTC),
        )
        record = encode(event, envelope)
        decoded = decode(record.value, list(record.headers))
        items = topics.setdefault(name, [])
        items.append(Incoming(decoded.envelope, decoded.event, name, 0, len(items), int(clock * 1000)))
        written.append(
            {
                "topic": name,
                "type": envelope.type,
                "id": envelope.id,
                "key": (record.key or b"").decode(),
                "body": json.loads(record.value),
            }
        )

    try:
        for task in task_list:
            append(task, TASKS.name)
        learned = 0
        for _ in range(steps * 4):
            clock += 1.0
            moved = True
            while moved:
                moved = False
                for node in nodes:
                    batch: list[Incoming] = []
                    for t in node.topics:
                        items = topics.get(t, [])
                        batch += items[node.position.get(t, 0) :]
                        node.position[t] = len(items)
                    emits = list(node.handler(batch, node.state)) if batch else []
                    if node.tick is not None:
                        emits += list(node.tick(node.state, clock))
                    node.state._take_dirty()
                    for emit in emits:
                        moved = True
                        append(emit.event, emit.topic, emit.causation_id)
                experiences = topics.get(EXPERIENCES.name, [])
                for item in experiences[learned:]:
                    assert isinstance(item.event, ExperienceReady)
                    for published in learner.offer(Record(item.event, item.topic, 0, item.offset)):
                        append(published, POLICY.name)
                        moved = True
                learned = len(experiences)
            for published in learner.flush():
                append(published, POLICY.name)
    finally:
        pool.close()
    return written


def _blank(body: Any, path: list[str]) -> None:
    if not path or not isinstance(body, dict | list):
        return
    head, rest = path[0], path[1:]
    targets = (
        body if head == "*" and isinstance(body, list) else [body.get(head)] if isinstance(body, dict) else []
    )
    if not rest:
        if isinstance(body, dict) and head in body:
            body[head] = "<volatile>"
        return
    for child in targets:
        _blank(child, rest)


def normalised(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for r in records:
        r = copy.deepcopy(r)
        base = r["type"].rpartition(".v")[0]
        for path in VOLATILE.get(base, ()):
            if path == "@id":
                r["id"] = "<volatile>"
            else:
                _blank(r["body"], path.split("."))
        out.append(r)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--record", action="store_true", help=f"write {GOLDEN}")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        records = normalised(run_records(Path(tmp)))
    text = json.dumps(records, indent=1, sort_keys=True) + "\n"
    if args.record:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text)
        print(f"wrote {len(records)} records to {GOLDEN}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
