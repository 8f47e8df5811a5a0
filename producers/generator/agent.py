"""The generator processor: ``rl.rollouts.requested`` -> ``rl.generations``, following ``rl.policy``.

A thin shell over :class:`RolloutGenerator` on the exactly-once runtime: a request's samples and the
request's offset commit together, so a worker killed mid-group and restarted produces each sample
exactly once (and a re-delivered request yields the same event ids: ``sample_id`` is
``f"{group_id}/{index}"``). New policy versions are loaded (sha256-verified) between batches; when the
weights in use are staler than the bound allows, the request is deferred instead of generating samples
the learner would discard.

A training generator loads a new version as soon as it reads it on ``rl.policy`` (requests or not), and
says so with a ``PolicyLoaded`` on ``rl.policy.loaded`` in the same transaction that consumes the
publication: the scheduler's staleness bound compares the newest version with these, so it holds groups
back while the generators are behind and releases them once they have caught up. (A batch that is deferred
or aborted is read again, and the same publication yields the same event id.)

Every generator instance must see every policy version, so besides the (consumer-group) input topics it
follows ``rl.policy`` whole (a side input: no group, from the beginning): a restarted worker finds the
newest version at once instead of waiting for the next publication.

The same agent serves evaluation rounds (``rlstream worker evaluator``, reading
``rl.evaluations.requested``): an evaluation request is generated under exactly the version it names,
loaded for it (version 0 is the base model), never under another, and with no staleness check.

Both lanes read ``rl.turns`` too: a TurnEnded that continues an episode of their split is answered
with the episode's next turn, in the same transaction that consumes it (so a worker killed mid-episode
neither loses nor repeats a turn). A training turn is sampled with the newest weights the generator has
(each turn records its own version); an evaluation turn under exactly its round's version.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from infra.runtime.port import Defer, Emit, Incoming, PoisonRecord
from infra.runtime.sides import PolicySource
from infra.runtime.state import State
from producers.generator.config import GeneratorConfig
from producers.generator.factory import base_weights, make_backend
from producers.generator.policy import NotPublished, PolicyFollower, StalenessPolicy
from producers.generator.rollout import RolloutGenerator
from schemas.episode import TurnEnded
from schemas.policy import PolicyLoaded, PolicyPublished
from schemas.rollout import RolloutRequested
from schemas.task import Split
from schemas.topics import (
    EVALUATIONS_REQUESTED,
    GENERATIONS,
    POLICY,
    POLICY_LOADED,
    ROLLOUTS_REQUESTED,
    TURNS,
)

log = logging.getLogger(__name__)

INPUT_TOPICS = (ROLLOUTS_REQUESTED.name, POLICY.name, TURNS.name)
#: the evaluator: the evaluation rounds' lane
EVAL_INPUT_TOPICS = (EVALUATIONS_REQUESTED.name, POLICY.name, TURNS.name)
#: where it writes (the access plan grants exactly these; the host refuses any other): the training lane
#: also says which weights it loaded; the evaluator writes its samples only
OUTPUT_TOPICS = (GENERATIONS.name, POLICY_LOADED.name)
EVAL_OUTPUT_TOPICS = (GENERATIONS.name,)


class GeneratorAgent:
    def __init__(
        self,
        generator: RolloutGenerator,
        follower: PolicyFollower,
        watcher: PolicySource | None = None,
        *,
        lane: Split = "train",
    ) -> None:
        self.generator = generator
        self.follower = follower
        self.watcher = watcher
        #: whose episodes' later turns this agent generates (the evaluator: eval)
        self.lane = lane
        self.samples = 0
        self.tokens = 0
        self.seconds = 0.0

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        # policy versions first: what is learned here stays even if the requests are deferred
        published: list[Incoming] = []
        for msg in batch:
            if isinstance(msg.event, PolicyPublished):
                self.follower.observe(msg.event)
                published.append(msg)
        if self.watcher is not None:
            for event in self.watcher.poll():
                self.follower.observe(event)
        out: list[Emit] = []
        turns: list[tuple[TurnEnded, str]] = []
        synced = False
        if self.lane == "train" and published:
            self._sync()
            synced = True
            out.extend(self._loaded(published))
        for msg in batch:
            request = msg.event
            run = self.follower.run_id
            if run is not None and msg.envelope.run_id not in (None, run):
                # another run's request: its policy lineage is not ours (that run's generator, in a
                # consumer group of its own, serves it)
                continue
            if isinstance(request, TurnEnded):
                if request.outcome == "continue" and request.split == self.lane:
                    if not synced and self.lane == "train":
                        self._sync()
                        synced = True
                    turns.append((request, msg.envelope.id))
                continue
            if not isinstance(request, RolloutRequested):
                continue
            if request.split == "eval":
                self._exact(request.policy_version, request.group_id)
            else:
                if not synced:
                    self._sync()
                    synced = True
                decision = self.follower.check(request.policy_version)
                if not decision.generate:
                    raise Defer(decision.reason, delay_s=1.0)
            t0 = time.perf_counter()
            samples = self.generator.generate(request)
            if request.split == "eval" and any(s.policy_version != request.policy_version for s in samples):
                raise RuntimeError(
                    f"evaluation {request.group_id} was not sampled under v{request.policy_version}"
                )
            elapsed = time.perf_counter() - t0
            tokens = sum(len(s.completion_token_ids) for s in samples)
            self.seconds += elapsed
            self.samples += len(samples)
            self.tokens += tokens
            log.info(
                "generator: group %s: %d samples, %d tokens in %.1f s (%.0f tokens/s) with policy v%d",
                request.group_id,
                len(samples),
                tokens,
                elapsed,
                tokens / elapsed if elapsed else 0.0,
                self.follower.backend.policy_version,
            )
            # one trace per sample, born here and linked to its group's request
            out.extend(Emit(sample, causation_id=msg.envelope.id, new_trace=True) for sample in samples)
        if turns:
            out.extend(self._next_turns(turns))
        return out

    def _next_turns(self, turns: list[tuple[TurnEnded, str]]) -> list[Emit]:
        """The next turn of each episode, batched: training turns with the newest weights within the
        staleness bound of the turn before; evaluation turns under exactly their round's version (one
        batch per version)."""
        batches: dict[int | None, list[tuple[TurnEnded, str]]] = {}
        for turn, fid in turns:
            batches.setdefault(turn.policy_version if turn.split == "eval" else None, []).append((turn, fid))
        out: list[Emit] = []
        for version, batch in batches.items():
            if version is not None:
                self._exact(version, f"{batch[0][0].sample_id} turn {batch[0][0].turn + 1}")
            for turn, _ in batch:
                decision = self.follower.check(turn.policy_version) if version is None else None
                if decision is not None and not decision.generate:
                    raise Defer(decision.reason, delay_s=1.0)
            t0 = time.perf_counter()
            samples = self.generator.continue_episodes(batch)
            elapsed = time.perf_counter() - t0
            if version is not None and any(s.policy_version != version for s in samples):
                raise RuntimeError(
                    f"evaluation turns of {batch[0][0].group_id} were not sampled under v{version}"
                )
            tokens = sum(len(s.completion_token_ids) for s in samples)
            self.seconds += elapsed
            self.samples += len(samples)
            self.tokens += tokens
            log.info(
                "generator: %d later turn(s), %d tokens in %.1f s with policy v%d",
                len(samples),
                tokens,
                elapsed,
                self.follower.backend.policy_version,
            )
            # each episode's trace goes on through every turn
            out += [Emit(sample, causation_id=fid) for sample, (_, fid) in zip(samples, batch, strict=True)]
        return out

    def _loaded(self, published: Sequence[Incoming]) -> list[Emit]:
        """What the training weights are after reading each of this run's ``published`` versions."""
        out: list[Emit] = []
        for msg in published:
            event = msg.event
            assert isinstance(event, PolicyPublished)
            if self.follower.run_id is not None and event.run_id != self.follower.run_id:
                continue
            error = self.follower.refused.get(event.policy_version)
            fact = PolicyLoaded(
                run_id=event.run_id,
                policy_version=self.follower.training_version,
                published_version=event.policy_version,
                loaded=error is None and self.follower.training_version >= event.policy_version,
                error=error,
            )
            out.append(
                Emit(fact, topic=POLICY_LOADED.name, causation_id=msg.envelope.id, run_id=event.run_id)
            )
        return out

    def _sync(self) -> None:
        loaded = self.follower.sync()
        if loaded is not None:
            if loaded.loaded:
                log.info("generator: now generating with policy v%d", loaded.version)
            else:
                log.error("generator: policy v%d refused: %s", loaded.version, loaded.error)

    def _exact(self, version: int, what: str) -> None:
        """Hold exactly the version an evaluation request (or turn) names, or say why not."""
        try:
            loaded = self.follower.exact(version)
        except NotPublished as exc:
            raise Defer(f"evaluation {what}: {exc}", delay_s=1.0) from None
        if loaded is None:
            return
        if not loaded.loaded:
            # nothing else could sample under that version: the request is dead-lettered with the reason
            raise PoisonRecord(f"evaluation {what}: policy v{loaded.version}: {loaded.error}")
        log.info("generator: evaluating with policy v%d", loaded.version)

    def throughput(self) -> str:
        rate = self.tokens / self.seconds if self.seconds else 0.0
        return f"{self.samples} samples, {self.tokens} tokens, {rate:.0f} tokens/s"


def build_generator(
    config: GeneratorConfig,
    models_dir: Path,
    *,
    run_id: str | None,
    watcher: PolicySource | None = None,
    lane: Split = "train",
) -> tuple[Callable[[Sequence[Incoming], State], list[Emit]], Callable[[], None]]:
    """The handler of the generator processor and a closer that logs its throughput.

    With a ``watcher`` of the policy topic, every version published so far is read first and the newest
    version of this run is loaded before the first request (what a restarted worker needs)."""
    started = time.monotonic()
    backend = make_backend(config, models_dir)
    log.info("generator: model %s loaded in %.1f s", config.model, time.monotonic() - started)
    follower = PolicyFollower(
        backend,
        StalenessPolicy(config.max_staleness),
        run_id=run_id,
        base_weights=lambda: base_weights(config, models_dir),
    )
    if watcher is not None:
        for event in watcher.catch_up():
            follower.observe(event)
        loaded = follower.sync()
        if loaded is not None:
            log.info("generator: starting with policy v%d (loaded=%s)", loaded.version, loaded.loaded)
    generator = RolloutGenerator(backend, seed=config.seed, stop_at_function_end=config.stop_at_function_end)
    agent = GeneratorAgent(generator, follower, watcher, lane=lane)

    def close() -> None:
        log.info("generator: %s", agent.throughput())

    return agent.handle, close
