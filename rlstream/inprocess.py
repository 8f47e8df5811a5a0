"""The pipeline's stream processors on the in-memory runtime, with the learner between rounds: for runs
that need many steps of the whole flow faster than a broker allows (``bench/episode_learning.py``), and
for a run that must be the same record for record every time (``tests/golden_run.py``).

The processors are wired exactly as ``rlstream worker`` wires them (:func:`rlstream.workers.stream_processor`,
from a :class:`Settings`), their side inputs read from the same :class:`MemoryLog` they write to, and they
run on :class:`MemoryRuntime` (each step atomic, every record through the real codec). The learner is
not a stream processor: after the processors settle, it is offered the new experiences in log order and
the versions it publishes go on ``rl.policy``, where the generator reads them. The runtime's guarantees
across crashes are the contract suite's and the real-broker tests'; this is for learning dynamics and for
what flows between the processors.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from infra.runtime.memory import MemoryLog, MemoryRuntime
from infra.runtime.sides import MemorySideInputs
from learner.config import LearnerConfig
from learner.engine import LearnerEngine
from learner.loop import LearnerLoop, Record
from producers.generator.models import load_model
from rlstream.settings import Settings
from rlstream.workers import Built, stream_processor
from schemas.base import Event
from schemas.codec import decode, encode
from schemas.envelope import Envelope
from schemas.policy import PolicyPublished
from schemas.rollout import ExperienceReady
from schemas.task import TaskPublished
from schemas.topics import EXPERIENCES, POLICY, TASKS, topic_for


class InProcessRun:
    """``processors`` (names of :data:`rlstream.workers.STREAM_PROCESSORS`) of ``settings`` on the
    in-memory runtime over ``log``, and a learner training a fresh copy of the generator's model."""

    def __init__(
        self,
        settings: Settings,
        learner: LearnerConfig,
        processors: Sequence[str],
        *,
        tasks: Iterable[TaskPublished] = (),
        log: MemoryLog | None = None,
    ) -> None:
        self.settings = settings
        self.run_id = settings.run_id
        self.log = log if log is not None else MemoryLog()
        self.built: list[Built] = []
        try:
            for name in processors:
                self.built.append(stream_processor(name, settings, MemorySideInputs(self.log)))
        except BaseException:
            self.close()
            raise
        self.runtime = MemoryRuntime(self.log, [b.processor for b in self.built], run_id=self.run_id)
        gen = settings.generator
        # the generator's own model (same spec and seed): version 0 is the weights the generator starts with
        self.policy = load_model(gen.model, gen.models_dir or settings.home / "models", seed=gen.seed)
        self.engine = LearnerEngine(self.policy.model, learner)
        self.learner = LearnerLoop(self.engine, run_id=self.run_id, model_name=self.policy.name)
        self.published: list[PolicyPublished] = []
        self._learned: dict[int, int] = {}
        for task in tasks:
            self.publish(task, TASKS.name)

    def close(self) -> None:
        for b in self.built:
            for close in b.closers:
                close()
        self.built = []

    def publish(self, event: Event, topic: str | None = None) -> None:
        """Put ``event`` on the log as a producer outside the processors would."""
        name = topic or topic_for(type(event).__name__).name
        envelope = Envelope.for_event(event, source="test", run_id=self.run_id)
        self.log.publish(name, encode(event, envelope), timestamp_ms=int(self.runtime.clock * 1000))

    def events(self, topic: str) -> list[Event]:
        return [event for _, event in self.log.events(topic)]

    def drain(self, *, advance_s: float = 0.0) -> None:
        """Run the processors until nothing moves, training on each round's new experiences and
        publishing the versions the learner returns; then train on what is left (``flush``)."""
        while True:
            self.runtime.run(advance_s=advance_s)
            if not self._learn():
                break
        for published in self.learner.flush():
            self._publish(published)

    def _learn(self) -> bool:
        """Offer the experiences not offered yet, in log order per partition; whether a version was
        published (then the processors have more to do)."""
        moved = False
        for p in range(len(self.log.topic(EXPERIENCES.name))):
            start = self._learned.get(p, 0)
            raws = self.log.read(EXPERIENCES.name, p, start, self.log.end(EXPERIENCES.name, p) - start)
            self._learned[p] = start + len(raws)
            for raw in raws:
                event = decode(raw.value, raw.headers).event
                assert isinstance(event, ExperienceReady)
                for published in self.learner.offer(Record(event, EXPERIENCES.name, p, raw.offset)):
                    self._publish(published)
                    moved = True
        return moved

    def _publish(self, event: PolicyPublished) -> None:
        self.published.append(event)
        self.publish(event, POLICY.name)
