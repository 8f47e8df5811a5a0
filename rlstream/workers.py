"""Wiring of each processor: which agent, which inputs, which adapters, and which runtime hosts it.
``rlstream worker NAME`` runs one of these in its own process; ``rlstream run`` starts them all;
``faust -A rlstream.faust_app worker`` hosts the stream processors as agents of one Faust app.

The stream processors are built once (:func:`stream_processor`, runtime-neutral) and hosted by the
runtime the settings name (``RLSTREAM_RUNTIME``): Kafka transactions or Faust. The learner and the
projector are consumers of their own on either runtime (each exactly-once by its own offsets)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from infra.kafka.sides import KafkaSideInputs
from infra.kafka.transactional import TransactionalProcessor
from infra.runtime.lease import Lease
from infra.runtime.port import Handler, Hosted, Processor, ProcessorStats, Tick
from infra.runtime.sides import SideInputs
from infra.runtime.state import Kind
from learner.config import default_checkpoint_dir
from rlstream.commands.broker import bootstrap_servers
from rlstream.settings import Settings
from schemas.errors import UsageError
from schemas.rollout import SandboxExecuted
from schemas.task import TaskPublished

if TYPE_CHECKING:
    from consumers.projections.projector import Projector
    from infra.faust.runtime import App, FaustHosted, FaustRunner
    from learner.service import LearnerService

log = logging.getLogger(__name__)

#: the consumer group the learner commits its offsets under (its lag drives backpressure)
LEARNER_GROUP = "rlstream.learner"

STREAM_PROCESSORS = (
    "scheduler",
    "generator",
    "evaluator",
    "sandbox",
    "episode",
    "reward",
    "filter",
    "experience",
    "monitor",
)
PIPELINE_WORKERS = (*STREAM_PROCESSORS, "learner", "projector")
#: the stream processors whose instances take turns on a lease (:func:`worker_lease_path`), so a warm
#: standby of an instance can wait, built, and take over when it dies: the generator, whose start-up
#: (torch, the model, the policy) is most of a restart
LEASED_WORKERS = ("generator",)

Runtime = Literal["transactional", "faust"]


@dataclass
class Worker:
    name: str
    processor: TransactionalProcessor | LearnerService | Projector | FaustRunner
    closers: list[Callable[[], None]]
    #: the lease of its instance (:data:`LEASED_WORKERS`): nothing is read before it is held
    lease: Lease | None = None

    @property
    def stats(self) -> ProcessorStats:
        return self.processor.stats

    def metric_sources(self) -> list[tuple[str, Callable[[], ProcessorStats]]]:
        """What its ``/metrics`` reports: each processor it hosts by name (a Faust app may host several)."""
        hosted = getattr(self.processor, "hosted", [])  # a Faust runner (its module is slow to import)
        if len(hosted) > 1:
            return [(h.name, lambda h=h: h.stats) for h in hosted]  # type: ignore[misc]
        return [(self.name, lambda: self.processor.stats)]

    def run(self, stop: threading.Event, *, idle_exit_s: float | None = None) -> None:
        try:
            if self.lease is not None and not self._take_lease(stop):
                # stopped while standing by: the processor never started (never joined its group nor
                # registered its transactional id), so there is nothing of it to end but its clients
                close = getattr(self.processor, "close", None)
                if close is not None:
                    close()
                return
            self.processor.run(stop, idle_exit_s=idle_exit_s)
        finally:
            self.close()

    def _take_lease(self, stop: threading.Event) -> bool:
        """Hold the instance's lease before the processor starts: a warm standby (another process of the
        same instance, built) waits here until the holder dies, then starts as that instance: its
        transactional id fences the dead one's producer and its static group membership takes the dead
        one's partitions at once. Whether the lease is held (False: stopped while waiting)."""
        assert self.lease is not None
        if not self.lease.try_acquire():
            log.info("%s: standing by for the instance's lease %s", self.name, self.lease.path)
            if not self.lease.acquire(stop):
                return False
        log.info("%s: holds the instance's lease", self.name)
        return True

    def close(self) -> None:
        """Close what the worker opened besides its processor (which closes itself when it runs)."""
        for close in self.closers:
            try:
                close()
            except Exception:  # a failing close must not hide the others
                log.exception("%s: closing failed", self.name)


@dataclass(frozen=True)
class _Factory:
    settings: Settings

    def make(
        self,
        name: str,
        topics: tuple[str, ...],
        handler: Handler,
        tick: Tick | None = None,
        batch_size: int | None = None,
        kinds: tuple[Kind[Any], ...] = (),
        *,
        outputs: tuple[str, ...],
    ) -> Processor:
        extra: dict[str, Any] = {} if tick is None else {"on_tick": tick}
        return Hosted(
            name,
            topics,
            handler,
            output_topics=outputs,
            kinds=kinds,
            batch_size=batch_size or self.settings.pipeline.batch_size,
            **extra,
        )


@dataclass
class Built:
    """A stream processor and what to close when its worker stops."""

    processor: Processor
    closers: list[Callable[[], None]] = field(default_factory=list)


def scaling_target(kind: str, settings: Settings, run_id: str) -> tuple[str, tuple[str, ...]]:
    """The consumer group of worker ``kind`` in run ``run_id`` and the input topics whose lag is its
    work waiting (policy versions and other side inputs are not work): what ``--autoscale`` reads."""
    from schemas.topics import EVALUATIONS_REQUESTED, GENERATIONS, ROLLOUTS_REQUESTED, TURNS, retry_topic

    topics = {
        "sandbox": (GENERATIONS.name, retry_topic("sandbox").name),
        "generator": (ROLLOUTS_REQUESTED.name, TURNS.name),
        "evaluator": (EVALUATIONS_REQUESTED.name, TURNS.name),
    }
    if kind not in topics:
        raise UsageError(f"cannot scale {kind!r}", hint="one of: " + ", ".join(topics))
    # the processor's name, as stream_processor names it: the generators' groups are per run
    name = kind if kind == "sandbox" else f"{kind}.{run_id}"
    group = f"{settings.faust.app_prefix}.{name}" if settings.runtime == "faust" else f"rlstream.{name}"
    return group, topics[kind]


def build(name: str, settings: Settings, *, instance: str = "0", runtime: Runtime | None = None) -> Worker:
    """The worker ``name`` on ``runtime`` (default: the settings' ``runtime``)."""
    bootstrap = bootstrap_servers(name)  # the worker's own principal
    if name == "learner":
        return _build_learner(settings, bootstrap)
    if name == "projector":
        from consumers.projections.projector import Projector
        from consumers.projections.store import make_engine

        engine = make_engine(settings.projections_url)
        projector = Projector(bootstrap, engine, settings.projections, instance=instance)
        return Worker(name, projector, [engine.dispose])
    built = stream_processor(name, settings, KafkaSideInputs(bootstrap, learner_group=LEARNER_GROUP))
    leased = name in LEASED_WORKERS
    lease = Lease(worker_lease_path(settings.home, settings.run_id, name, instance)) if leased else None
    if (runtime or settings.runtime) == "faust":
        # replicas of one processor share its app id: Faust balances the partitions between them; each
        # instance is a static member of the group (what a standby taking over an instance relies on)
        return Worker(name, faust_runner(settings, bootstrap, [built], instance=instance), [], lease)
    # a leased instance is a static member of its group under its client id: whoever takes the instance
    # over (a standby, or the instance restarted) gets the dead one's partitions at once, with no
    # rebalance and no wait for the dead one's session to time out
    static = {"group.instance.id": f"rlstream.{built.processor.name}.{instance}"} if leased else None
    proc = TransactionalProcessor(
        built.processor,
        bootstrap=bootstrap,
        instance=instance,
        run_id=settings.run_id,
        # None: the cluster's default replication
        replication_factor=settings.kafka.replication_factor or -1,
        grace_s=settings.pipeline.state_grace_s,
        consumer_config=static,
    )
    return Worker(name, proc, built.closers, lease)


def worker_lease_path(home: Path, run_id: str, name: str, instance: str) -> Path:
    """The lease of instance ``instance`` of worker ``name`` in run ``run_id`` (settings home ``home``):
    the processes that run that instance (the active one and a warm standby) take turns on it."""
    return home / "runs" / run_id / "leases" / f"{name}.{instance}.lease"


def stream_processor(name: str, settings: Settings, sides: SideInputs) -> Built:
    """One of the stream processors, runtime-neutral (:class:`~infra.runtime.port.Processor`),
    reading its side inputs from ``sides`` (closed with it)."""
    if name not in STREAM_PROCESSORS:
        raise UsageError(f"unknown stream processor {name!r}", hint="one of: " + ", ".join(STREAM_PROCESSORS))
    pipe = settings.pipeline
    common = _Factory(settings)
    closers: list[Callable[[], None]] = [sides.close]
    if name == "scheduler":
        from streams.scheduler.agent import INPUT_TOPICS, KINDS, OUTPUT_TOPICS, SchedulerAgent

        agent = SchedulerAgent(
            pipe.scheduler, settings.run_id, sides.learner_lag(), max_turns=settings.episodes.max_turns
        )
        # a focused run reads rl.tasks on its own (consumer group and state per run), so it never
        # skips another run's tasks nor is held up by them; the other processors serve every run
        own = f"scheduler.{settings.run_id}" if pipe.scheduler.only_own_run else name
        return Built(
            common.make(own, INPUT_TOPICS, agent.handle, agent.tick, kinds=KINDS, outputs=OUTPUT_TOPICS),
            closers,
        )
    if name == "monitor":
        from streams.monitor.agent import INPUT_TOPICS as MON_INPUTS
        from streams.monitor.agent import KINDS as MON_KINDS
        from streams.monitor.agent import OUTPUT_TOPICS as MON_OUTPUTS
        from streams.monitor.agent import MonitorAgent
        from streams.monitor.rules import DEFAULT_RULES, load_rules

        monitor = MonitorAgent(load_rules(settings.monitor.rules or DEFAULT_RULES), sides.learner_lag())
        return Built(
            common.make(name, MON_INPUTS, monitor.handle, monitor.tick, kinds=MON_KINDS, outputs=MON_OUTPUTS),
            closers,
        )
    if name == "experience":
        from streams.experience.agent import INPUT_TOPICS as EXP_INPUTS
        from streams.experience.agent import KINDS as EXP_KINDS
        from streams.experience.agent import OUTPUT_TOPICS as EXP_OUTPUTS
        from streams.experience.agent import ExperienceAgent

        # every run's human reviews in force replace the automated verdicts of a group being assembled
        exp = ExperienceAgent(
            deadline_s=pipe.group_deadline_s, normalise_std=pipe.normalise_std, reviews=sides.reviews()
        )
        return Built(
            common.make(name, EXP_INPUTS, exp.handle, exp.tick, kinds=EXP_KINDS, outputs=EXP_OUTPUTS), closers
        )
    if name in ("sandbox", "episode", "reward", "filter"):
        return _build_execution_side(name, settings, common, sides, closers)
    from producers.generator.agent import EVAL_INPUT_TOPICS, EVAL_OUTPUT_TOPICS, build_generator
    from producers.generator.agent import INPUT_TOPICS as GEN_INPUTS
    from producers.generator.agent import OUTPUT_TOPICS as GEN_OUTPUTS

    models_dir = settings.generator.models_dir or settings.home / "models"
    agent_handle, close = build_generator(
        settings.generator,
        models_dir,
        run_id=settings.run_id,
        watcher=sides.policy(),
        lane="eval" if name == "evaluator" else "train",
    )
    closers.insert(0, close)
    # a generator serves one run's policy lineage: a consumer group per run, so requests of other
    # runs are left to their own generators, never taken and dropped. The evaluator is a generator
    # of its own on the evaluation lane: its weight swaps never touch training's, and neither
    # lane waits for the other
    topics, outputs = (
        (EVAL_INPUT_TOPICS, EVAL_OUTPUT_TOPICS) if name == "evaluator" else (GEN_INPUTS, GEN_OUTPUTS)
    )
    return Built(
        common.make(f"{name}.{settings.run_id}", topics, agent_handle, batch_size=1, outputs=outputs),
        closers,
    )


def _build_learner(settings: Settings, bootstrap: str) -> Worker:
    """The learner trains the generator's own model (same spec, same seed, so version 0 is the weights
    the generator starts with) and scores tokens at the temperature the scheduler asks samples for."""
    import socket

    from infra.kafka.reviews import ReviewFollower
    from learner.engine import LearnerEngine
    from learner.lease import LearnerLease, lease_path
    from learner.loop import LearnerLoop
    from learner.service import LearnerService, learner_log_path
    from producers.generator.models import load_model

    gen = settings.generator
    started = time.monotonic()
    policy = load_model(gen.model, gen.models_dir or settings.home / "models", seed=gen.seed)
    loaded = time.monotonic()
    config = settings.learner
    update: dict[str, object] = {
        "temperature": settings.pipeline.scheduler.sampling.temperature,
        "pad_token_id": policy.pad_token_id,
    }
    update["checkpoint_dir"] = learner_checkpoint_dir(settings)
    if config.distributed.launcher == "single":
        # a single process needs no agreed rendezvous port: a free one lets several learners coexist
        with socket.socket() as s:
            s.bind((config.distributed.master_addr, 0))
            port = int(s.getsockname()[1])
        update["distributed"] = config.distributed.model_copy(update={"master_port": port})
    config = config.model_copy(update=update)
    engine = LearnerEngine(policy.model, config)
    # a restarted learner trains again only after these: what its restart time is made of
    log.info(
        "learner: model %s loaded in %.1f s, engine built in %.1f s",
        policy.name,
        loaded - started,
        time.monotonic() - loaded,
    )
    # human reviews on rl.reviews that mask or reject a sample keep it out of any step not yet taken
    reviews = ReviewFollower(bootstrap, settings.run_id)
    loop = LearnerLoop(engine, run_id=settings.run_id, model_name=policy.name, reviews=reviews)
    service = LearnerService(
        loop,
        bootstrap=bootstrap,
        run_id=settings.run_id,
        group_id=LEARNER_GROUP,
        training_log=learner_log_path(config.checkpoint_dir),
        # the run's learners take turns: the second one started is a warm standby
        lease=LearnerLease(lease_path(config.checkpoint_dir)),
    )
    return Worker("learner", service, [reviews.close])


def learner_checkpoint_dir(settings: Settings) -> Path:
    """Where the run's learner keeps its checkpoints, training log and lease."""
    config = settings.learner
    if config.checkpoint_dir == type(config)().checkpoint_dir:  # not configured: one folder per run
        return default_checkpoint_dir(settings.home, settings.run_id)
    return config.checkpoint_dir


def _build_execution_side(
    name: str, settings: Settings, common: _Factory, sides: SideInputs, closers: list[Callable[[], None]]
) -> Built:
    from streams.reward.evaluate import Evaluator
    from streams.reward.function import get_reward_function
    from streams.sandbox.service import Sandbox

    sandbox_config = settings.sandbox
    if sandbox_config.cache_dir is None:
        sandbox_config = sandbox_config.model_copy(update={"cache_dir": settings.cache_dir / "sandbox"})
    tasks = sides.tasks()
    reward_fn = get_reward_function(settings.reward_function, settings.reward)

    def evaluator() -> Evaluator:
        return Evaluator(
            Sandbox(sandbox_config),
            reward_fn,
            settings.noise,
            cache_entries=settings.pipeline.reference_cache_entries,
        )

    def reference_runner(on: Evaluator) -> Callable[[TaskPublished, str], SandboxExecuted | None]:
        return lambda task, backend: on.reference(task, backend)

    if name == "sandbox":
        from streams.noise.config import resumes_probes, retries_cut_calls
        from streams.sandbox.agent import INPUT_TOPICS as SB_INPUTS
        from streams.sandbox.agent import OUTPUT_TOPICS as SB_OUTPUTS
        from streams.sandbox.agent import SandboxAgent
        from streams.sandbox.pool import SandboxPool

        pool = SandboxPool(sandbox_config)
        closers.insert(0, pool.close)
        agent = SandboxAgent(
            pool,
            tasks,
            reruns=settings.noise.reruns,
            probe=settings.noise.probe,
            max_retries=settings.pipeline.max_retries,
            backoff_s=settings.pipeline.retry_backoff_s,
            resume=resumes_probes(settings.noise),
            retry_cut=retries_cut_calls(settings.noise),
        )
        return Built(common.make(name, SB_INPUTS, agent.handle, outputs=SB_OUTPUTS), closers)
    if name == "episode":
        from streams.episode.agent import INPUT_TOPICS as EP_INPUTS
        from streams.episode.agent import KINDS as EP_KINDS
        from streams.episode.agent import OUTPUT_TOPICS as EP_OUTPUTS
        from streams.episode.agent import EpisodeAgent

        eagent = EpisodeAgent(tasks, settings.episodes.feedback)
        return Built(common.make(name, EP_INPUTS, eagent.handle, kinds=EP_KINDS, outputs=EP_OUTPUTS), closers)
    if name == "reward":
        from streams.reward.agent import INPUT_TOPICS as RW_INPUTS
        from streams.reward.agent import KINDS as RW_KINDS
        from streams.reward.agent import OUTPUT_TOPICS as RW_OUTPUTS
        from streams.reward.agent import RewardAgent

        episode_fn = get_reward_function(settings.episodes.reward_function, settings.reward)
        ragent = RewardAgent(
            reward_fn,
            tasks,
            reference_runner(evaluator()),
            episode_fn=episode_fn,
            references_kept=settings.pipeline.reference_cache_entries,
        )
        return Built(common.make(name, RW_INPUTS, ragent.handle, kinds=RW_KINDS, outputs=RW_OUTPUTS), closers)
    from streams.noise.agent import INPUT_TOPICS as NF_INPUTS
    from streams.noise.agent import KINDS as NF_KINDS
    from streams.noise.agent import OUTPUT_TOPICS as NF_OUTPUTS
    from streams.noise.agent import FilterAgent

    on = evaluator()
    if settings.pipeline.warm_probe_references:
        from streams.sandbox.pool import SandboxPool

        # the reference's runs of a plan, all at once (each a fresh sandbox: none served from a cache)
        ref_pool = SandboxPool(
            sandbox_config.model_copy(update={"result_cache_entries": 0}), workers=on.probe_reference_runs
        )
        on.pool = ref_pool
        # the warming thread stops before the pool it submits to
        closers[:0] = [on.close, ref_pool.close]
    fagent = FilterAgent(
        settings.noise,
        reward_fn.compare_options(),
        tasks,
        reference_runner(on),
        probe_reference=lambda task, backend, seed: on.reference_probe(task, backend, seed),
        references_kept=settings.pipeline.reference_cache_entries,
        warm_reference=on.warm_probe if settings.pipeline.warm_probe_references else None,
    )
    return Built(common.make(name, NF_INPUTS, fagent.handle, kinds=NF_KINDS, outputs=NF_OUTPUTS), closers)


# -- the Faust runtime --------------------------------------------------------------------------------
def faust_app(
    settings: Settings, bootstrap: str, built: list[Built], *, app_id: str, instance: str | None = None
) -> tuple[App, list[FaustHosted]]:
    """A Faust app hosting ``built`` as agents (one consumer group, one table per processor); with an
    ``instance``, a static member of its group (``infra.faust.config.app_settings``)."""
    from infra.faust.config import app_settings
    from infra.faust.runtime import CHANGELOG_CONFIGS, App, FaustHosted, TopicWidths
    from infra.kafka.admin import ensure_topics, metadata
    from schemas.topics import Topic

    def widths() -> dict[str, int]:
        md = metadata(bootstrap, timeout_s=30)
        return {name: len(t.partitions) for name, t in md.topics.items() if t.error is None}

    partitions = TopicWidths(widths)
    datadir = settings.home / "faust"
    datadir.mkdir(parents=True, exist_ok=True)  # Faust makes only the last folder of its app's path
    app = App(
        app_id,
        **app_settings(
            app_id,
            bootstrap,
            settings.kafka,
            settings.faust,
            replication_factor=settings.kafka.replication_factor,
            partitions=settings.kafka.partitions,
            instance=instance,
            datadir=datadir,
        ),
    )
    hosted = [
        FaustHosted(
            app,
            b.processor,
            run_id=settings.run_id,
            partitions=partitions,
            # a state partition per partition of the widest input, as on the transactional runtime
            state_partitions=max(partitions(t) for t in b.processor.input_topics),
            batch_wait_s=settings.faust.batch_wait_s,
            grace_s=settings.pipeline.state_grace_s,
        )
        for b in built
    ]
    # the state changelogs exist before the app's first rebalance: a topic Faust declares at start-up can
    # be missing from the assignment's metadata, and its partitions then stay unassigned until the
    # clients refresh their metadata (minutes)
    ensure_topics(
        bootstrap,
        settings.kafka,
        [
            Topic(h.changelog_topic, "state key", "state", h.name, CHANGELOG_CONFIGS, h.table.partitions)
            for h in hosted
        ],
    )
    return app, hosted


def faust_runner(
    settings: Settings, bootstrap: str, built: list[Built], *, instance: str | None = None
) -> FaustRunner:
    """A Faust worker in this process hosting ``built`` (``rlstream worker NAME --runtime faust``);
    ``instance`` as :func:`faust_app`."""
    from infra.faust.runtime import FaustRunner

    names = ".".join(b.processor.name for b in built)
    app_id = f"{settings.faust.app_prefix}.{names}"
    app, hosted = faust_app(settings, bootstrap, built, app_id=app_id, instance=instance)
    return FaustRunner(app, hosted, [close for b in built for close in b.closers])
