"""The pipeline's own processors wired in one process, for tests that need many steps of the whole flow
faster than a broker allows: every processor's real handler (generator, sandbox, episode step, reward,
filter, experience) with its state, the real sandbox pool, and the learner's loop and engine training
and publishing versions the generator loads. What stands in for Kafka is a list per topic: every
emitted event is encoded and decoded with the real codec (so what a processor reads is what the log
would hold), and each processor reads its input topics in order from its own position.

The transactional runtime's guarantees (exactly once across crashes) are not what this exercises; the
real-broker tests do that. This is for learning dynamics and for what flows between the processors.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from infra.kafka.transactional import Emit, Incoming, State
from learner.config import LearnerConfig
from learner.engine import LearnerEngine
from learner.loop import LearnerLoop, Record
from producers.generator.agent import INPUT_TOPICS as GENERATOR_INPUTS
from producers.generator.agent import GeneratorAgent
from producers.generator.hf_backend import HFBackend
from producers.generator.models import PolicyModel
from producers.generator.policy import PolicyFollower, StalenessPolicy
from producers.generator.rollout import RolloutGenerator
from schemas.base import Event
from schemas.codec import decode, encode
from schemas.envelope import Envelope
from schemas.policy import PolicyPublished
from schemas.rollout import ExperienceReady, RolloutRequested, SamplingParams
from schemas.task import TaskPublished
from schemas.topics import EXPERIENCES, POLICY, ROLLOUTS_REQUESTED, topic_for
from streams.episode.agent import INPUT_TOPICS as EPISODE_INPUTS
from streams.episode.agent import EpisodeAgent
from streams.episode.config import FeedbackConfig
from streams.experience.agent import INPUT_TOPICS as EXPERIENCE_INPUTS
from streams.experience.agent import ExperienceAgent
from streams.noise.agent import INPUT_TOPICS as FILTER_INPUTS
from streams.noise.agent import FilterAgent
from streams.noise.config import NoiseConfig
from streams.reward.agent import INPUT_TOPICS as REWARD_INPUTS
from streams.reward.agent import RewardAgent
from streams.reward.config import RewardConfig
from streams.reward.evaluate import Evaluator
from streams.reward.function import get_reward_function
from streams.sandbox.agent import INPUT_TOPICS as SANDBOX_INPUTS
from streams.sandbox.agent import SandboxAgent
from streams.sandbox.config import SandboxConfig
from streams.sandbox.pool import SandboxPool
from streams.sandbox.service import Sandbox

Handler = Callable[[Sequence[Incoming], State], Iterable[Emit]]


class Tasks:
    def __init__(self, tasks: Iterable[TaskPublished]) -> None:
        self.by_id = {t.task_id: t for t in tasks}

    def get(self, key: str) -> TaskPublished | None:
        return self.by_id.get(key)


@dataclass
class Node:
    name: str
    topics: tuple[str, ...]
    handler: Handler
    state: State = field(default_factory=State)
    position: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.state.partition(0)  # one partition, owned


@dataclass
class Log:
    """Topics as lists of the records a processor would read (one partition each)."""

    run_id: str
    topics: dict[str, list[Incoming]] = field(default_factory=dict)

    def append(self, event: Event, *, topic: str | None = None, causation_id: str | None = None) -> Incoming:
        name = topic or topic_for(type(event).__name__).name
        envelope = Envelope.for_event(
            event, source="inprocess", run_id=self.run_id, causation_id=causation_id
        )
        record = encode(event, envelope)
        decoded = decode(record.value, list(record.headers))  # what a consumer of the log would read
        records = self.topics.setdefault(name, [])
        item = Incoming(
            decoded.envelope, decoded.event, name, 0, len(records), int(datetime.now(UTC).timestamp() * 1000)
        )
        records.append(item)
        return item

    def events(self, topic: str) -> list[Event]:
        return [i.event for i in self.topics.get(topic, [])]


class InProcessPipeline:
    """Generator -> sandbox -> episode step -> reward -> filter -> experience -> learner, in one process."""

    def __init__(
        self,
        policy: PolicyModel,
        tasks: Sequence[TaskPublished],
        *,
        run_id: str,
        home: Path,
        learner: LearnerConfig,
        sandbox: SandboxConfig,
        noise: NoiseConfig | None = None,
        feedback: FeedbackConfig | None = None,
        reward: RewardConfig | None = None,
        seed: int = 0,
    ) -> None:
        self.log = Log(run_id)
        self.tasks = Tasks(tasks)
        noise = noise or NoiseConfig()
        backend = HFBackend(policy, batch_size=64, seed=seed)
        follower = PolicyFollower(backend, StalenessPolicy(learner.staleness_bound), run_id=run_id)
        self.generator = GeneratorAgent(RolloutGenerator(backend, seed=seed), follower)
        self.pool = SandboxPool(sandbox, workers=1)
        reward_fn = get_reward_function("code-v2", reward)
        episode_fn = get_reward_function("code-v3", reward)
        evaluator = Evaluator(Sandbox(sandbox), reward_fn, noise)

        def reference(task: TaskPublished, backend_name: str):  # type: ignore[no-untyped-def]
            return evaluator.reference(task, backend_name)

        self.nodes = [
            Node("generator", GENERATOR_INPUTS, self.generator.handle),
            Node("sandbox", SANDBOX_INPUTS, SandboxAgent(self.pool, self.tasks, reruns=noise.reruns).handle),  # type: ignore[arg-type]
            Node("episode", EPISODE_INPUTS, EpisodeAgent(self.tasks, feedback or FeedbackConfig()).handle),
            Node(
                "reward",
                REWARD_INPUTS,
                RewardAgent(reward_fn, self.tasks, reference, episode_fn=episode_fn).handle,
            ),
            Node(
                "filter",
                FILTER_INPUTS,
                FilterAgent(noise, episode_fn.compare_options(), self.tasks, reference).handle,
            ),
            Node("experience", EXPERIENCE_INPUTS, ExperienceAgent(deadline_s=3600.0).handle),
        ]
        # the learner trains its own copy of the weights; the generator loads what it publishes
        self.engine = LearnerEngine(copy.deepcopy(policy.model), learner)
        self.learner = LearnerLoop(self.engine, run_id=run_id, model_name=policy.name)
        self._learned = 0
        self.published: list[PolicyPublished] = []

    def close(self) -> None:
        self.pool.close()

    def request(self, task: TaskPublished, epoch: int, group_size: int, sampling: SamplingParams) -> None:
        self.log.append(
            RolloutRequested(
                group_id=f"{self.log.run_id}/{task.task_id}/{epoch}",
                task_id=task.task_id,
                group_size=group_size,
                prompt=task.prompt,
                entry_point=task.entry_point,
                policy_version=self.engine.policy_version,
                sampling=sampling,
                max_turns=task.max_turns or 1,
            ),
            topic=ROLLOUTS_REQUESTED.name,
        )

    def drain(self) -> None:
        """Hand every processor what it has not read, until nothing moves; then train on the new
        experiences (and publish the versions the learner returns)."""
        moved = True
        while moved:
            moved = False
            for node in self.nodes:
                batch: list[Incoming] = []
                for topic in node.topics:
                    records = self.log.topics.get(topic, [])
                    start = node.position.get(topic, 0)
                    batch += records[start:]
                    node.position[topic] = len(records)
                if not batch:
                    continue
                moved = True
                for emit in node.handler(batch, node.state):
                    self.log.append(emit.event, topic=emit.topic, causation_id=emit.causation_id)
                node.state._take_dirty()
        experiences = self.log.topics.get(EXPERIENCES.name, [])
        for item in experiences[self._learned :]:
            assert isinstance(item.event, ExperienceReady)
            for published in self.learner.offer(Record(item.event, item.topic, 0, item.offset)):
                self._publish(published)
        self._learned = len(experiences)
        for published in self.learner.flush():
            self._publish(published)

    def _publish(self, event: PolicyPublished) -> None:
        self.published.append(event)
        self.log.append(event, topic=POLICY.name)
