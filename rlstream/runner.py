"""The main job: one command that starts whatever is not running (broker, topics, every worker),
publishes the run's tasks, shows live progress and stops cleanly with a summary.

Workers run as child processes (``rlstream worker NAME``), each with its own log file; where cores are
few, the light stream processors share one (``rlstream worker sandbox,reward,...``, see
:mod:`rlstream.layout`). A worker process that dies is restarted (each exactly-once processor in it
resumes from its last committed transaction). Ctrl-C stops them gracefully; nothing is lost: a later
``rlstream run --run-id <same id>`` resumes the run.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import json
import math
import os
import signal
import socket
import struct
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

from consumers.evaluation import SampleOutcome, evaluate
from infra.kafka.admin import client_config, ensure_topics
from infra.kafka.consumer import decode_message
from infra.kafka.lag import LagProbe
from infra.kafka.producer import EventProducer
from infra.telemetry.config import MetricsConfig
from learner.lease import lease_holder, lease_path
from producers.ingest.publisher import TaskPublisher
from rlstream.layout import TORCH_WORKERS, processes, resolve
from rlstream.scaling import Scaler, ScalingConfig
from rlstream.settings import Settings
from rlstream.workers import (
    LEARNER_GROUP,
    PIPELINE_WORKERS,
    learner_checkpoint_dir,
    scaling_target,
    worker_lease_path,
)
from schemas.alert import AlertRaised, AlertResolved
from schemas.curriculum import CurriculumLevelChanged
from schemas.dlq import DeadLettered
from schemas.errors import BrokerError, RlstreamError
from schemas.policy import PolicyPublished
from schemas.rollout import CodeGenerated, ExperienceReady, NoiseVerdict, RewardScored, RolloutRequested
from schemas.task import TaskPublished
from schemas.topics import (
    ALERTS,
    CATALOG,
    CURRICULUM,
    DLQ,
    EVALUATIONS_REQUESTED,
    EXPERIENCES,
    GENERATIONS,
    POLICY,
    REWARDS,
    ROLLOUTS_REQUESTED,
    VERDICTS,
)

#: a worker that dies more than RESTARTS times within RESTART_WINDOW_S ends the run; counted per window,
#: not per run, because every broker restart costs each worker one restart and a long run sees several
RESTARTS = 3
RESTART_WINDOW_S = 600.0


#: what a learner process holds besides its model's training state (interpreter, torch, DeepSpeed,
#: transformers, the Kafka clients), bytes
LEARNER_BASE_BYTES = 3 * 2**29
#: fp32 copies of the weights a training learner holds: the weights, their gradients, Adam's two moments
LEARNER_WEIGHT_COPIES = 4


def model_parameters(folder: Path) -> int | None:
    """The parameters of a model folder's safetensors files, counted from their headers (None: no
    such file, or one that cannot be read)."""
    total = 0
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    for path in files:
        try:
            with path.open("rb") as fh:
                (size,) = struct.unpack("<Q", fh.read(8))
                header = json.loads(fh.read(size))
        except (OSError, ValueError, struct.error):
            return None
        total += sum(math.prod(t["shape"]) for k, t in header.items() if k != "__metadata__")
    return total


def available_memory() -> int | None:
    """MemAvailable of this machine, bytes (None where the kernel does not say)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def learner_footprint(parameters: int) -> int:
    """What one training learner of a model with ``parameters`` holds in memory, bytes (an estimate)."""
    return LEARNER_BASE_BYTES + LEARNER_WEIGHT_COPIES * 4 * parameters


def standby_decision(mode: str, parameters: int | None, available: int | None) -> tuple[bool, str]:
    """Whether ``rlstream run`` starts a standby learner, and why (said on the run's first lines).

    ``auto`` starts one when a learner's estimated footprint is at most half the memory available
    before the run starts: the rest of the pipeline (the generator holds the same model) keeps the
    other half."""
    if mode == "off":
        return False, "off (RLSTREAM_LEARNER__STANDBY=off)"
    if mode == "on":
        return True, "on (RLSTREAM_LEARNER__STANDBY=on)"
    if parameters is None or available is None:
        return False, "off (the model's size or the available memory is unknown: set it on to force)"
    need = learner_footprint(parameters)
    gib = 2**30
    if 2 * need <= available:
        return True, f"on (a learner needs ~{need / gib:.1f} GiB, {available / gib:.1f} GiB available)"
    return False, f"off (a learner needs ~{need / gib:.1f} GiB, {available / gib:.1f} GiB available)"


#: what a generator process holds besides its model's weights (interpreter, torch, transformers, the
#: Kafka clients), bytes: measured 553 MiB after the imports, 808 MiB with smollm2 loaded
GENERATOR_BASE_BYTES = 600 * 2**20


def generator_footprint(parameters: int) -> int:
    """What one generator (hf backend, on a CPU) of a model with ``parameters`` holds, bytes (an
    estimate: its fp32 weights besides the base; activations of a batch are small beside them)."""
    return GENERATOR_BASE_BYTES + 4 * parameters


def generator_standby_decision(
    mode: str, backend: str, device: str, parameters: int | None, available: int | None
) -> tuple[bool, str]:
    """Whether ``rlstream run`` starts a standby generator, and why (said on the run's first lines).

    ``auto`` starts one for an hf generator on a CPU whose estimated footprint is at most a quarter of
    the memory available before the run starts (the learners, the evaluator and the other workers keep
    the rest); on an accelerator a second copy of the model would take its memory, so only ``on`` does."""
    if mode == "off":
        return False, "off (RLSTREAM_GENERATOR__STANDBY=off)"
    if mode == "on":
        return True, "on (RLSTREAM_GENERATOR__STANDBY=on)"
    if backend != "hf" or device != "cpu":
        return False, f"off (a {backend} generator on {device}: set RLSTREAM_GENERATOR__STANDBY=on to force)"
    if parameters is None or available is None:
        return False, "off (the model's size or the available memory is unknown: set it on to force)"
    need = generator_footprint(parameters)
    gib = 2**30
    said = f"a generator needs ~{need / gib:.1f} GiB, {available / gib:.1f} GiB available"
    return (4 * need <= available), ("on" if 4 * need <= available else "off") + f" ({said})"


def model_folder(settings: Settings) -> Path:
    """The folder the run's model is loaded from (``tiny`` and ``smollm2`` are cached in the models
    directory)."""
    spec = settings.generator.model
    if spec in ("tiny", "smollm2"):
        return (settings.generator.models_dir or settings.home / "models") / spec
    return Path(spec).expanduser()


def _letter_key(letter: DeadLettered) -> str:
    """The dead letter's original Kafka key (a group id for the rollout topics), or ''."""
    if not letter.original_key_b64:
        return ""
    try:
        return base64.b64decode(letter.original_key_b64).decode()
    except (ValueError, UnicodeDecodeError):
        return ""


#: sparkline glyphs, lowest to highest
_BARS = "▁▂▃▄▅▆▇█"
#: a policy version's mean reward shows on the curve once this many of its samples are judged
CURVE_MIN_SAMPLES = 4


def sparkline(values: list[float]) -> str:
    """One glyph per value, scaled from 0 (or the lowest value, if negative) to the highest."""
    if not values:
        return ""
    low, high = min(0.0, *values), max(values)
    span = high - low
    if span <= 0:
        return _BARS[0] * len(values)
    return "".join(_BARS[min(int((v - low) / span * (len(_BARS) - 1) + 0.5), len(_BARS) - 1)] for v in values)


@dataclass
class Progress:
    """What the live line and the summary show, folded from the run's events: one fold per event type
    (:meth:`fold` dispatches on it)."""

    run_id: str
    expected_groups: int
    started: float = field(default_factory=time.monotonic)
    generations: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)
    reasons: Counter[str] = field(default_factory=Counter)
    rewards: list[float] = field(default_factory=list)
    groups_done: int = 0
    partial_groups: int = 0
    dead_letters: int = 0
    lag: int = 0
    seen: set[str] = field(default_factory=set)
    #: records whose event id was seen before (a re-sent record: none on the transactional runtime)
    duplicates: int = 0
    #: with a learner: the run is done when it has published step N (instead of when groups are done)
    target_steps: int | None = None
    policy_version: int = 0
    learner_step: int = 0
    requested: int = 0
    #: evaluation rounds: samples asked for, samples generated and judged, versions with a round
    eval_requested: int = 0
    eval_samples: set[str] = field(default_factory=set)
    judged: set[str] = field(default_factory=set)
    eval_versions: set[int] = field(default_factory=set)
    #: the version the learner published when it reached ``target_steps`` (evaluated before the end)
    final_version: int | None = None
    #: the newest policy version a training sample of the run was generated with (generators follow the
    #: learner)
    generated_version: int = 0
    #: turns each judged training episode used (its final turn + 1)
    turns_used: list[int] = field(default_factory=list)
    #: the level curriculum's moves, in order
    levels: list[CurriculumLevelChanged] = field(default_factory=list)
    #: the policy version each sample was generated with (training and evaluation), and its task
    sample_version: dict[str, tuple[int, str]] = field(default_factory=dict)
    #: each judged sample's reward, and whether each scored sample passed every case: joined with the
    #: samples' versions when shown, so the order the topics are read in does not matter
    sample_reward: dict[str, float] = field(default_factory=dict)
    sample_passed: dict[str, bool] = field(default_factory=dict)
    #: the monitor's alerts about this run (or every run) firing now, by (rule, run, since), and how many
    #: were raised in all
    alerts_firing: dict[tuple[str, str | None, int], AlertRaised] = field(default_factory=dict)
    alerts_raised: int = 0

    def mine(self, group_id: str) -> bool:
        return group_id.startswith(f"{self.run_id}/")

    def fold(self, event_id: str, event: Any) -> None:
        if event_id in self.seen:
            self.duplicates += 1
            return
        self.seen.add(event_id)
        _fold(event, self)

    @property
    def eval_judged(self) -> int:
        return len(self.eval_samples & self.judged)

    def evaluated(self, held_out: int) -> bool:
        """Every evaluation sample asked for is judged, and (a --steps run with held-out tasks) the round
        of the final version has been asked for."""
        if self.eval_judged < self.eval_requested:
            return False
        if held_out and self.final_version is not None:
            return max(self.eval_versions, default=-1) >= self.final_version
        return True

    @property
    def done(self) -> bool:
        if self.target_steps is not None:
            return self.learner_step >= self.target_steps
        return self.groups_done >= self.expected_groups and self.eval_judged >= self.eval_requested

    def curve(self) -> dict[int, float]:
        """Mean reward of the training samples per policy version that generated them (versions with at
        least :data:`CURVE_MIN_SAMPLES` judged)."""
        by_version: dict[int, list[float]] = {}
        for sample, reward in self.sample_reward.items():
            generated = self.sample_version.get(sample)
            if generated is not None and sample not in self.eval_samples:
                by_version.setdefault(generated[0], []).append(reward)
        return {v: sum(r) / len(r) for v, r in sorted(by_version.items()) if len(r) >= CURVE_MIN_SAMPLES}

    def held_out_pass_at_1(self) -> dict[int, float]:
        """Per evaluated version: the mean over held-out tasks of their unbiased pass@1 (`rlstream eval`'s
        figure), from the samples scored so far."""
        outcomes = [
            SampleOutcome("eval", *self.sample_version[sample], passed)
            for sample in self.eval_samples
            if (passed := self.sample_passed.get(sample)) is not None
        ]
        return {r.policy_version: r.pass_at[1] for r in evaluate(outcomes, (1,))}

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        n = sum(self.verdicts.values())
        mean = sum(self.rewards) / len(self.rewards) if self.rewards else 0.0
        mix = " ".join(f"{k}={v}" for k, v in sorted(self.verdicts.items())) or "-"
        done = (
            f"step {self.learner_step}/{self.target_steps} (policy v{self.policy_version})"
            if self.target_steps
            else f"groups {self.groups_done}/{self.expected_groups} | policy v{self.policy_version} "
            f"step {self.learner_step}"
        )
        level = f" | level {self.levels[-1].to_level}" if self.levels else ""
        if not n:
            return (
                f"[run {self.run_id}] {elapsed:.0f}s | {done}{level} | waiting for the first samples "
                f"(the workers load their models and join their groups)" + self._alerts_part()
            )
        return (
            f"[run {self.run_id}] {elapsed:.0f}s | {done} | samples {n} ({n / elapsed:.1f}/s), "
            f"reward mean {mean:.3f}, last 64 {self._recent_mean():.3f}"
            + self._curve_part()
            + self._eval_part()
            + level
            + f" | verdicts {mix} | {self._turns_part()}learner lag {self.lag} | dlq {self.dead_letters}"
            + self._alerts_part()
        )

    def _alerts_part(self) -> str:
        if not self.alerts_firing:
            return ""
        return " | ALERTS " + ", ".join(sorted({a.rule for a in self.alerts_firing.values()}))

    def _curve_part(self) -> str:
        curve = self.curve()
        if not curve:
            return ""
        (v0, r0), (v1, r1) = next(iter(curve.items())), list(curve.items())[-1]
        ends = f"v{v0} {r0:.2f}" + (f" → v{v1} {r1:.2f}" if v1 != v0 else "")
        return f" | reward by version {sparkline(list(curve.values()))} {ends}"

    def _turns_part(self) -> str:
        if max(self.turns_used, default=1) <= 1:
            return ""
        return f"turns per episode {sum(self.turns_used) / len(self.turns_used):.2f} | "

    def _eval_part(self) -> str:
        if not self.eval_requested:
            return ""
        passes = " → ".join(f"v{v} {p:.2f}" for v, p in self.held_out_pass_at_1().items())
        return f" | held-out pass@1 {passes or '-'} ({self.eval_judged}/{self.eval_requested} judged)"

    def _recent_mean(self, n: int = 64) -> float:
        recent = self.rewards[-n:]
        return sum(recent) / len(recent) if recent else 0.0

    def summary(self) -> dict[str, Any]:
        n = sum(self.verdicts.values())
        return {
            "run_id": self.run_id,
            "groups": self.groups_done,
            # a --steps run issues groups until the learner is done: there is no expected number
            "expected_groups": None if self.target_steps else self.expected_groups,
            "partial_groups": self.partial_groups,
            "generations": self.generations,
            "samples_judged": n,
            "reward_mean": sum(self.rewards) / len(self.rewards) if self.rewards else 0.0,
            "pass_rate": sum(1 for r in self.rewards if r > 0) / n if n else 0.0,
            "verdicts": dict(self.verdicts),
            "alerts_raised": self.alerts_raised,
            "alerts_firing": sorted({a.rule for a in self.alerts_firing.values()}),
            "top_reasons": dict(self.reasons.most_common(8)),
            "dead_letters": self.dead_letters,
            "duplicate_records": self.duplicates,
            "policy_version": self.policy_version,
            "learner_step": self.learner_step,
            "generated_version": self.generated_version,
            "reward_mean_last_64": self._recent_mean(),
            "reward_by_version": {v: round(r, 4) for v, r in self.curve().items()},
            "held_out_pass_at_1": {v: round(p, 4) for v, p in self.held_out_pass_at_1().items()},
            "evaluation_samples": self.eval_judged,
            "evaluation_samples_requested": self.eval_requested,
            "evaluated_versions": sorted(self.eval_versions),
            "mean_turns_used": sum(self.turns_used) / len(self.turns_used) if self.turns_used else 0.0,
            "curriculum": [describe_move(m) for m in self.levels],
            "seconds": round(time.monotonic() - self.started, 1),
        }


def describe_move(move: CurriculumLevelChanged) -> str:
    """One line per level change, e.g. ``level 1 -> 2 at v5: held-out pass@1 0.625 >= 0.5 (8 tasks)``."""
    if move.from_level is None:
        return f"level {move.to_level} (start)"
    head = f"level {move.from_level} -> {move.to_level}"
    if move.reason == "passed":
        return (
            f"{head} at v{move.policy_version}: held-out pass@1 {move.pass_at_1:.3f} >= {move.threshold} "
            f"({move.tasks} tasks, {move.samples} samples)"
        )
    if move.reason == "exhausted":
        return f"{head}: every task of level {move.from_level} had its groups"
    return f"{head}: level {move.from_level} has no held-out task to measure it"


@functools.singledispatch
def _fold(event: Any, progress: Progress) -> None:
    """Events the progress has no use for."""


@_fold.register
def _(event: CodeGenerated, progress: Progress) -> None:
    if not progress.mine(event.group_id):
        return
    progress.sample_version[event.sample_id] = (event.policy_version, event.task_id)
    if event.split == "eval":
        progress.eval_samples.add(event.sample_id)
    else:
        progress.generations += 1
        progress.generated_version = max(progress.generated_version, event.policy_version)


@_fold.register
def _(event: RewardScored, progress: Progress) -> None:
    if progress.mine(event.group_id):
        progress.sample_passed[event.sample_id] = 0 < event.total_cases == event.passed


@_fold.register
def _(event: NoiseVerdict, progress: Progress) -> None:
    if not progress.mine(event.group_id):
        return
    progress.judged.add(event.sample_id)
    if event.sample_id in progress.eval_samples:
        return  # an evaluation sample: not part of training's figures
    progress.verdicts[event.verdict] += 1
    progress.rewards.append(event.reward)
    progress.turns_used.append(event.turn + 1)
    progress.reasons.update(r.code for r in event.reasons)
    progress.sample_reward[event.sample_id] = event.reward


@_fold.register
def _(event: ExperienceReady, progress: Progress) -> None:
    if progress.mine(event.group_id):
        progress.groups_done += 1
        progress.partial_groups += int(event.partial)


@_fold.register
def _(event: CurriculumLevelChanged, progress: Progress) -> None:
    if event.run_id == progress.run_id:
        progress.levels.append(event)


@_fold.register
def _(event: DeadLettered, progress: Progress) -> None:
    if progress.mine(_letter_key(event)):
        progress.dead_letters += 1


@_fold.register
def _(event: RolloutRequested, progress: Progress) -> None:
    if not progress.mine(event.group_id):
        return
    if event.split == "eval":
        progress.eval_requested += event.group_size
        progress.eval_versions.add(event.policy_version)
    else:
        progress.requested += 1


@_fold.register
def _(event: PolicyPublished, progress: Progress) -> None:
    if event.run_id != progress.run_id:
        return
    progress.policy_version = max(progress.policy_version, event.policy_version)
    progress.learner_step = max(progress.learner_step, event.step)
    if progress.target_steps is not None and event.step >= progress.target_steps:
        progress.final_version = min(progress.final_version or event.policy_version, event.policy_version)


@_fold.register
def _(event: AlertRaised, progress: Progress) -> None:
    if event.run_id in (progress.run_id, None):
        progress.alerts_firing[(event.rule, event.run_id, event.since_ms)] = event
        progress.alerts_raised += 1


@_fold.register
def _(event: AlertResolved, progress: Progress) -> None:
    progress.alerts_firing.pop((event.rule, event.run_id, event.since_ms), None)


class RunWatcher:
    """Reads the run's events (read_committed) from the moment the run started."""

    TOPICS = (
        EVALUATIONS_REQUESTED.name,
        GENERATIONS.name,
        VERDICTS.name,
        EXPERIENCES.name,
        DLQ.name,
        POLICY.name,
        ROLLOUTS_REQUESTED.name,
        CURRICULUM.name,
        REWARDS.name,
        ALERTS.name,
    )

    def __init__(self, bootstrap: str, since: datetime) -> None:
        self._consumer = Consumer(
            client_config(
                bootstrap,
                **{
                    "group.id": f"rlstream.watch.{uuid.uuid4().hex}",
                    "enable.auto.commit": False,
                    "isolation.level": "read_committed",
                },
            )
        )
        ms = max(int(since.timestamp() * 1000) - 1000, 0)
        wanted: list[TopicPartition] = []
        for topic in self.TOPICS:
            md = self._consumer.list_topics(topic, 30).topics[topic]
            wanted.extend(TopicPartition(topic, p, ms) for p in md.partitions)
        starts = self._offsets_for_times(wanted)
        # a partition with nothing newer than `since` answers -1: start at its end
        self._consumer.assign(
            [TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else -1) for tp in starts]
        )

    def _offsets_for_times(self, wanted: list[TopicPartition]) -> list[TopicPartition]:
        # topics created a moment ago may not have elected their leaders yet
        deadline = time.monotonic() + 60
        while True:
            try:
                return list(self._consumer.offsets_for_times(wanted, 30))
            except KafkaException as exc:
                if time.monotonic() > deadline:
                    raise RlstreamError(f"cannot read the run's start offsets: {exc}") from exc
                time.sleep(1.0)

    def poll(self, progress: Progress, budget_s: float = 0.5) -> None:
        deadline = time.monotonic() + budget_s
        while time.monotonic() < deadline:
            msgs = self._consumer.consume(500, 0.1)
            if not msgs:
                return
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() != KafkaError._PARTITION_EOF:
                        raise RlstreamError(f"watching the run failed: {err}")
                    continue
                with contextlib.suppress(RlstreamError):
                    item = decode_message(msg)
                    progress.fold(item.envelope.id, item.event)

    def close(self) -> None:
        self._consumer.close()


@dataclass
class Child:
    name: str
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    log: TextIO | None = None
    restarts: int = 0
    recent_restarts: list[float] = field(default_factory=list)
    #: the port of its /metrics (None: metrics off)
    metrics_port: int | None = None
    #: which replica of its kind (``--instance``): distinct transactional ids, one consumer group
    instance: str = "0"
    #: a second process of the same instance, started as its warm standby (it waits on the instance's
    #: lease; once it took over, the first one, restarted, is the standby)
    standby: bool = False

    @property
    def label(self) -> str:
        """Its name, with its instance when it is not the kind's first (and ``standby``: a standby's)."""
        label = self.name if self.instance == "0" else f"{self.name}-{self.instance}"
        return f"{label}-standby" if self.standby else label

    def may_restart(self, now: float) -> bool:
        """Whether another restart stays within the budget of the window ending ``now``."""
        self.recent_restarts = [t for t in self.recent_restarts if now - t < RESTART_WINDOW_S]
        return len(self.recent_restarts) < RESTARTS

    def start(self, env: dict[str, str]) -> None:
        self.log = self.log_path.open("ab")  # type: ignore[assignment]
        if self.metrics_port is not None:
            env = {**env, "RLSTREAM_METRICS__PORT": str(self.metrics_port)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rlstream.cli", "worker", self.name, "--instance", self.instance],
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # Ctrl-C reaches the runner only; it stops the workers in order
        )

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout_s: float = 30.0) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if self.log is not None:
            self.log.close()

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


class ScaledKind:
    """The extra instances of one worker kind that ``--autoscale`` runs beside the run's first one: the
    lag of the kind's group on its input topics, read every ``interval_s``, moves a :class:`Scaler`,
    whose changes start or retire processes (the newest first). A retired instance is stopped like any
    worker (SIGTERM: its transaction ends, its partitions move to the others)."""

    def __init__(
        self,
        kind: str,
        config: ScalingConfig,
        bootstrap: str,
        group: str,
        topics: tuple[str, ...],
        log_dir: Path,
        *,
        metrics: MetricsConfig,
        now: float,
    ) -> None:
        self.kind = kind
        self.log_dir = log_dir
        self.metrics = metrics
        self.interval_s = config.interval_s
        self.probes = [LagProbe(bootstrap, group, topic) for topic in topics]
        try:
            partitions = len(self.probes[0].partitions())
        except BrokerError:
            self.close()
            raise
        self.scaler = Scaler(kind, config, min(partitions, os.cpu_count() or 1), now=now)
        self.extras: list[Child] = []
        self._next_read = now
        #: every change made, for the run's summary
        self.log: list[dict[str, Any]] = []

    def step(self, now: float, env: dict[str, str], children: list[Child]) -> str | None:
        """Read the lag when due and apply the change it calls for; the line to log, if any."""
        if now < self._next_read:
            return None
        self._next_read = now + self.interval_s
        try:
            lag = sum(probe.lag() for probe in self.probes)
        except BrokerError:
            return None  # a coordinator still being placed: the next reading decides
        change = self.scaler.observe(lag, now)
        if change is None:
            return None
        if change.after > change.before:
            instance = str(change.after - 1)
            # a port of its own: the run's ports are taken by the first instances
            port = free_ports(self.metrics.host, 1)[0] if self.metrics.enabled else None
            child = Child(
                self.kind, self.log_dir / f"{self.kind}-{instance}.log", metrics_port=port, instance=instance
            )
            child.start(env)
            self.extras.append(child)
            children.append(child)
        else:
            child = self.extras.pop()
            children.remove(child)
            child.stop()
        self.log.append({**change.__dict__, "at": datetime.now(UTC).isoformat()})
        return change.describe()

    def close(self) -> None:
        for probe in self.probes:
            probe.close()


def torch_threads(workers: Iterable[str], cpus: int | None) -> int:
    """Threads per torch worker: the cores divided among the torch workers of the run, at least one.

    Each torch process otherwise takes every core for itself; on two cores the generator, the
    evaluator and the learner then oversubscribe them and OpenMP's spinning threads stall each other
    (measured: smollm2 decoding 2.2 tokens/s with two threads per process under load vs 10.6 with
    one, batch 1; bench/group_generation.py).
    """
    sharing = sum(1 for w in workers if w in TORCH_WORKERS)
    return max(1, (cpus or 1) // max(sharing, 1))


def metrics_ports(config: MetricsConfig, count: int) -> list[int | None]:
    """The /metrics port of each of ``count`` workers: the configured port and the ones after it when
    ``RLSTREAM_METRICS__PORT`` was set, else free ports (two runs on one machine never collide)."""
    if not config.enabled:
        return [None] * count
    if "port" in config.model_fields_set and config.port:
        return [config.port + i for i in range(count)]
    return free_ports(config.host, count)


def free_ports(host: str, count: int) -> list[int | None]:
    ports: list[int | None] = []
    sockets = []
    try:
        for _ in range(count):  # held open together: no two alike
            s = socket.socket()
            s.bind((host, 0))
            sockets.append(s)
            ports.append(int(s.getsockname()[1]))
    finally:
        for s in sockets:
            s.close()
    return ports


def new_run_id() -> str:
    return "run-" + datetime.now(UTC).strftime("%Y%m%d-%H%M%S")


def publish_tasks(bootstrap: str, run_id: str, tasks: Iterable[TaskPublished]) -> int:
    with EventProducer(bootstrap, source="rlstream/run", run_id=run_id) as producer:
        return len(TaskPublisher(producer).publish_many(tasks))


def _drain(
    children: list[Child],
    watcher: RunWatcher,
    progress: Progress,
    echo: Any,
    *,
    held_out: int = 0,
    stall_s: float = 120.0,
    progress_every_s: float = 2.0,
) -> None:
    """Stop issuing groups and let those already requested finish: a request left behind expects a
    policy version of this run, which no later run's generator follows (it would wait on it forever).
    With held-out tasks the scheduler stays up: it stops training by itself at the final step and
    issues the final version's evaluation round, which the run waits for. The wait lasts as long as
    groups or evaluation samples keep finishing (a final round takes many minutes on a CPU); it gives
    up after ``stall_s`` in which nothing finished, and says so."""
    if not held_out:
        for child in children:
            if child.name == "scheduler":
                child.stop()
    watcher.poll(progress)
    echo(
        f"[run {progress.run_id}] learner reached step {progress.learner_step}; finishing "
        f"{max(progress.requested - progress.groups_done, 0)} group(s) in flight"
        + (f" and the evaluation of v{progress.final_version}" if held_out else "")
    )
    seen = (progress.groups_done, progress.eval_judged)
    moved = last_line = time.monotonic()
    while not (progress.groups_done >= progress.requested and progress.evaluated(held_out)):
        watcher.poll(progress)
        now = time.monotonic()
        if (progress.groups_done, progress.eval_judged) != seen:
            seen, moved = (progress.groups_done, progress.eval_judged), now
        elif now - moved > stall_s:
            echo(
                f"[run {progress.run_id}] nothing finished for {stall_s:.0f}s; stopping with "
                f"{max(progress.requested - progress.groups_done, 0)} group(s) and "
                f"{max(progress.eval_requested - progress.eval_judged, 0)} evaluation sample(s) unfinished"
            )
            return
        if now - last_line >= progress_every_s:
            last_line = now
            echo(progress.line())


def run_pipeline(
    settings: Settings,
    bootstrap: str,
    *,
    run_id: str,
    tasks: list[TaskPublished],
    workers: tuple[str, ...] = PIPELINE_WORKERS,
    env_overrides: dict[str, str],
    echo: Any,
    timeout_s: float | None = None,
    progress_every_s: float = 5.0,
    target_steps: int | None = None,
    resume: bool = False,
    autoscale: bool = False,
) -> dict[str, Any]:
    """Publish ``tasks`` under ``run_id``, run every worker until each group has its experience (or
    Ctrl-C / the timeout), and return the summary. ``resume``: the run existed before, so its
    progress is counted from the start of the log, not from now. ``autoscale``: the kinds the scaling
    settings name run as many processes as their lag calls for (:class:`ScaledKind`)."""
    ensure_topics(bootstrap, settings.kafka, CATALOG)
    started_at = datetime.fromtimestamp(0, UTC) if resume else datetime.now(UTC)
    log_dir = settings.home / "runs" / run_id / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "RLSTREAM_RUN_ID": run_id,
        "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "RLSTREAM_HOME": str(settings.home),
        **env_overrides,
    }
    if "OMP_NUM_THREADS" not in os.environ:  # the caller's own choice stands
        threads = str(torch_threads(workers, os.cpu_count()))
        env.update({"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads})
    if settings.telemetry.otlp_endpoint:  # every worker exports where the run does
        env["RLSTREAM_TELEMETRY__OTLP_ENDPOINT"] = settings.telemetry.otlp_endpoint
    layout = resolve(settings.run, os.cpu_count(), settings.runtime)
    placed = processes(workers, layout)
    ports = metrics_ports(settings.metrics, len(placed))
    children = [
        Child(name, log_dir / f"{name.replace(',', '+')}.log", metrics_port=port)
        for name, port in zip(placed, ports, strict=True)
    ]
    # a warm standby learner: started once the first learner holds the run's lease (so the two do not
    # start up on the same cores at once), it takes over when that one dies; the learner restarted
    # behind it waits as the next standby
    standby: Child | None = None
    lease = lease_path(learner_checkpoint_dir(settings.model_copy(update={"run_id": run_id})))
    if "learner" in workers:
        on, why = standby_decision(
            settings.learner.standby, model_parameters(model_folder(settings)), available_memory()
        )
        echo(f"[run {run_id}] standby learner: {why}")
        if on:
            port = free_ports(settings.metrics.host, 1)[0] if settings.metrics.enabled else None
            standby = Child("learner", log_dir / "learner-1.log", metrics_port=port, instance="1")
    # a warm standby generator, the same way: a second process of the generator's instance 0, started
    # once the first one holds the instance's lease; whichever of the two holds it generates
    gen_standby: Child | None = None
    gen_lease = worker_lease_path(settings.home, run_id, "generator", "0")
    if "generator" in workers:
        gen = settings.generator
        on, why = generator_standby_decision(
            gen.standby, gen.backend, gen.device, model_parameters(model_folder(settings)), available_memory()
        )
        echo(f"[run {run_id}] standby generator: {why}")
        if on:
            port = free_ports(settings.metrics.host, 1)[0] if settings.metrics.enabled else None
            gen_standby = Child(
                "generator", log_dir / "generator-standby.log", metrics_port=port, instance="0", standby=True
            )
    standbys = [(c, path) for c, path in ((standby, lease), (gen_standby, gen_lease)) if c is not None]
    served = [c for c in (*children, standby, gen_standby) if c is not None and c.metrics_port is not None]
    metrics = {c.label: f"http://{settings.metrics.host}:{c.metrics_port}/metrics" for c in served}
    progress = Progress(
        run_id,
        # held-out tasks have evaluation rounds, never training groups
        expected_groups=sum(t.split != "eval" for t in tasks) * settings.pipeline.scheduler.epochs,
        target_steps=target_steps,
    )
    interrupted = False
    watcher: RunWatcher | None = None
    lag: LagProbe | None = None
    scaled: list[ScaledKind] = []
    # SIGTERM (a supervisor stopping the run) is handled like Ctrl-C, and Ctrl-C works even where the
    # runner was started with SIGINT ignored: either way the workers are stopped, never orphaned
    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        for child in children:
            child.start(env)
        watcher = RunWatcher(bootstrap, started_at)
        lag = LagProbe(bootstrap, LEARNER_GROUP, EXPERIENCES.name)
        if autoscale:
            for kind in (k for k in settings.scaling.kinds if k in workers):
                group, topics = scaling_target(kind, settings, run_id)
                scaled.append(
                    ScaledKind(
                        kind,
                        settings.scaling,
                        bootstrap,
                        group,
                        topics,
                        log_dir,
                        metrics=settings.metrics,
                        now=time.monotonic(),
                    )
                )
            echo(
                f"[run {run_id}] autoscale: "
                + ", ".join(f"{k.kind} 1..{k.scaler.maximum}" for k in scaled)
                + f" instances on lag (every {settings.scaling.interval_s:g}s)"
            )
        published = publish_tasks(bootstrap, run_id, tasks)
        echo(
            f"[run {run_id}] {published} task(s) published; workers ({layout} layout): "
            f"{' | '.join(c.name for c in children)}; logs in {log_dir}"
        )
        if metrics:
            ends = ", ".join(f"{c.label} :{c.metrics_port}" for c in served)
            echo(f"[run {run_id}] metrics (Prometheus) on {settings.metrics.host}: {ends}")
        last_line = 0.0
        while not progress.done:
            watcher.poll(progress)
            now = time.monotonic()
            if now - last_line >= progress_every_s:
                with contextlib.suppress(BrokerError):  # a group coordinator still loading: next time
                    progress.lag = lag.lag()
                echo(progress.line())
                last_line = now
            for scaled_kind in scaled:
                if (line := scaled_kind.step(now, env, children)) is not None:
                    echo(f"[run {run_id}] {line}")
            for waiting, held in standbys:
                if waiting.proc is None and lease_holder(held) is not None:
                    waiting.start(env)
                    children.append(waiting)
            for child in children:
                if not child.alive():
                    if not child.may_restart(now):
                        raise RlstreamError(
                            f"worker {child.name} died {RESTARTS + 1} times within "
                            f"{RESTART_WINDOW_S:.0f}s; last lines of {child.log_path}:\n{child.tail()}"
                        )
                    child.restarts += 1
                    child.recent_restarts.append(now)
                    echo(
                        f"[run {run_id}] worker {child.name} exited; restarting "
                        f"({len(child.recent_restarts)}/{RESTARTS} in {RESTART_WINDOW_S:.0f}s, "
                        f"{child.restarts} in all)"
                    )
                    child.start(env)
            if timeout_s is not None and now - progress.started > timeout_s:
                echo(f"[run {run_id}] timeout after {timeout_s:.0f}s; stopping")
                break
        if target_steps is not None and progress.done:
            held_out = sum(t.split == "eval" for t in tasks)
            _drain(
                children,
                watcher,
                progress,
                echo,
                held_out=held_out,
                # a sample of the final round may take minutes to generate and judge on a busy CPU
                stall_s=420.0 if held_out else 120.0,
                progress_every_s=progress_every_s,
            )
    except KeyboardInterrupt:
        interrupted = True
        echo(f"[run {run_id}] interrupted: stopping the workers (resume with --run-id {run_id})")
    finally:
        # every child is stopped whatever happened above: none outlives the run (a second Ctrl-C
        # must not cut this short)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        holders = {c.name: lease_holder(path) for c, path in standbys}
        for child in children:
            # a standby first: stopped after the active one, it would take the lease and start working
            if child.name in holders and child.proc is not None and child.proc.pid != holders[child.name]:
                child.stop()
        for child in children:
            child.stop()
        if watcher is not None:
            with contextlib.suppress(RlstreamError):
                watcher.poll(progress, budget_s=1.0)
            watcher.close()
        if lag is not None:
            lag.close()
        for scaled_kind in scaled:
            scaled_kind.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    summary = progress.summary()
    summary["runtime"] = settings.runtime
    summary["layout"] = layout
    summary["processes"] = [c.name for c in children if c.instance == "0" and not c.standby]
    summary["interrupted"] = interrupted
    summary["logs"] = str(log_dir)
    summary["metrics"] = metrics
    if autoscale:
        summary["scaling"] = [change for scaled_kind in scaled for change in scaled_kind.log]
    return summary
