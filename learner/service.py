"""The learner's Kafka shell: reads ``rl.experiences`` (read_committed), feeds :class:`LearnerLoop`,
produces the PolicyPublished events it returns on ``rl.policy`` and commits offsets only with them.

Lossless resume, end to end:

* on start the newest complete checkpoint is loaded and its consumed offsets are where reading starts
  (no checkpoint: the beginning of every partition); the group's committed offsets are never read
  back, only written, because the checkpoint is the one source of truth - they exist for the
  scheduler's backpressure (its lag probe) and for operators;
* a checkpoint's PolicyPublished is produced again on start (same version, same event id) unless the
  training log shows its publication was acknowledged, so a learner killed between its checkpoint and
  its event loses neither, and one killed after both leaves no second copy on rl.policy;
* offsets are committed, synchronously, only to what a produced-and-acknowledged PolicyPublished
  lists in ``consumed``, or to what the loop decided without a step since its last checkpoint (every
  sample dropped, or another run's records: :meth:`LearnerLoop.decided`). Such a decision is written
  to the training log (``decided``) before its offsets are committed; a restart from the checkpoint it
  extends reads on after it (the samples it dropped are not read and decided again), and a run whose
  last records were all dropped ends with them committed and accounted.

The partitions are assigned directly rather than through a group subscription: one learner process
owns the whole topic, so a rebalance could only move partitions to nobody.

Experiences of other runs share the topic; they are passed to the loop with their samples removed,
so their offsets are consumed in log order like everything else and nothing of them is trained.

The training log (JSONL, appended) records every optimizer step (``step``), every publication
(``publish``: the version, its trained sample ids, the consumed offsets), every dropped sample
(``drop``) and every commit without a publication (``decided``), each with this process's
``incarnation``. Steps lost in a crash are retrained after the
restart and listed again under the same policy version; the ``publish`` lines (one id list per
version, the same after a re-publication) are the exact account of what was trained.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any, TextIO

from confluent_kafka import (
    OFFSET_BEGINNING,
    TIMESTAMP_NOT_AVAILABLE,
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    TopicPartition,
)
from opentelemetry.context import Context
from opentelemetry.trace import Link

from infra.kafka.admin import client_config
from infra.kafka.consumer import dead_letter_for, decode_message
from infra.kafka.lag import assigned_lag
from infra.kafka.producer import EventProducer
from infra.runtime.port import ProcessorStats, check_topic
from infra.telemetry.messaging import links_to, start_process
from infra.telemetry.tracing import tracer
from learner.lease import LearnerLease
from learner.loop import Decided, LearnerLoop, Record, StepRecord
from schemas.errors import BrokerError, EventDecodeError
from schemas.policy import ConsumedOffset, PolicyPublished
from schemas.rollout import ExperienceReady
from schemas.topics import DLQ, EXPERIENCES, POLICY

log = logging.getLogger(__name__)

#: what a record that is not this run's experience is replaced by (it only moves the offset on)
#: seconds between two measurements of the learner's consumer lag (its metric)
LAG_EVERY_S = 2.0
_SKIPPED = ExperienceReady(group_id="skipped", task_id="skipped", group_size=1, samples=())


class TrainingLog:
    """Appends JSON lines; a line cut by a kill is skipped by :func:`read_training_log`.

    The file is opened at the first line written: a standby learner builds its service long before it
    writes (while another learner still appends), and a line the other's kill cut is only ended then."""

    def __init__(self, path: Path, incarnation: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.incarnation = incarnation
        self._fh: TextIO | None = None

    def _open(self) -> TextIO:
        fh = self.path.open("a", encoding="utf-8")
        if fh.tell() > 0:
            with self.path.open("rb") as last:
                last.seek(-1, os.SEEK_END)
                if last.read(1) != b"\n":
                    # a kill cut the last line: end it, or this process's first line would join it
                    fh.write("\n")
        return fh

    def write(self, kind: str, **fields: Any) -> None:
        if self._fh is None:
            self._fh = self._open()
        line = json.dumps({"kind": kind, "incarnation": self.incarnation, "time": time.time(), **fields})
        # one write per line: a kill leaves at most the last line cut, never two lines interleaved
        self._fh.write(line + "\n")
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()


def read_training_log(path: Path) -> list[dict[str, Any]]:
    """Every whole line of the log (none where no line was ever written)."""
    entries: list[dict[str, Any]] = []
    if not path.exists():
        return entries
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # the line a kill cut off
    return entries


class LearnerService:
    """Runs a :class:`LearnerLoop` against the broker until ``stop`` is set.

    ``run_id`` selects the experiences trained on (group ids ``<run_id>/...``); ``group_id`` is the
    consumer group the offsets are committed under.
    """

    def __init__(
        self,
        loop: LearnerLoop,
        *,
        bootstrap: str,
        run_id: str,
        group_id: str,
        training_log: Path,
        topic: str = EXPERIENCES.name,
        idle_flush_s: float = 2.0,
        progress_every_s: float = 10.0,
        fetch_batch: int = 64,
        lease: LearnerLease | None = None,
    ) -> None:
        self.loop = loop
        #: taken before anything is read (None: this process is the run's only learner)
        self.lease = lease
        self.bootstrap = bootstrap
        self.run_id = run_id
        self.group_id = group_id
        self.topic = topic
        self.idle_flush_s = idle_flush_s
        self.progress_every_s = progress_every_s
        self.fetch_batch = fetch_batch
        self.incarnation = uuid.uuid4().hex[:12]
        self.training_log = TrainingLog(training_log, self.incarnation)
        self.stats = ProcessorStats()
        self.published: list[PolicyPublished] = []
        self._rewards: list[float] = []
        self._dropped_seen = 0
        self._last_metrics: dict[str, float] = {}
        self._consumer: Consumer | None = None
        self._lag_at = float("-inf")
        self._producer: EventProducer | None = None
        self._last_progress = time.monotonic()
        # tracing: each step's span links to the traces of the samples it trained, each publication's
        # span to the steps it covers
        self._sample_traces: dict[str, str] = {}
        self._step_links: list[Link] = []
        self._step_started_ns = time.time_ns()
        previous = loop.on_step

        def on_step(record: StepRecord) -> None:
            self._on_step(record)
            if previous is not None:
                previous(record)

        loop.on_step = on_step

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> None:
        consumed, republish = self.loop.resume()
        entries = read_training_log(self.training_log.path)
        adopted = any(self.loop.adopt(d) for d in reversed(decisions(entries)))
        if adopted:
            consumed = self.loop.consumed
        self._producer = EventProducer(self.bootstrap, source="rlstream/learner", run_id=self.run_id)
        self._consumer = Consumer(
            client_config(
                self.bootstrap,
                **{
                    "group.id": self.group_id,
                    "client.id": f"rlstream-learner-{self.incarnation}",
                    "enable.auto.commit": False,
                    "enable.auto.offset.store": False,
                    "isolation.level": "read_committed",
                    "auto.offset.reset": "earliest",
                },
            )
        )
        self._assign(consumed)
        self.training_log.write(
            "start",
            run_id=self.run_id,
            pid=os.getpid(),
            step=self.loop.engine.step,
            policy_version=self.loop.engine.policy_version,
            consumed=[c.model_dump() for c in consumed],
        )
        log.info(
            "learner %s: run %s, starting at step %d, policy version %d, offsets %s",
            self.incarnation,
            self.run_id,
            self.loop.engine.step,
            self.loop.engine.policy_version,
            {f"{c.topic}[{c.partition}]": c.offset for c in consumed} or "from the beginning",
        )
        if republish is not None:
            acknowledged = any(
                e.get("kind") == "publish" and e.get("policy_version") == republish.policy_version
                for e in entries
            )
            if acknowledged:
                # its publication was acknowledged before the restart (the training log says so only
                # after the broker did): producing it again would put its event id on rl.policy twice
                self._commit_offsets(consumed)
            else:
                self._emit([republish], republished=True)

    def _commit_offsets(self, consumed: tuple[ConsumedOffset, ...]) -> None:
        assert self._consumer is not None
        offsets = [TopicPartition(c.topic, c.partition, c.offset) for c in consumed if c.topic == self.topic]
        if offsets:
            try:
                self._consumer.commit(offsets=offsets, asynchronous=False)
            except KafkaException as exc:  # only lag readers use the group's offsets
                log.warning("learner: committing offsets failed (the checkpoint has them): %s", exc)

    def _assign(self, consumed: tuple[ConsumedOffset, ...]) -> None:
        assert self._consumer is not None
        try:
            md = self._consumer.list_topics(self.topic, 30).topics[self.topic]
        except KafkaException as exc:
            raise BrokerError(
                f"cannot read the partitions of {self.topic}: {exc}",
                hint="check the broker: `rlstream broker status`",
            ) from exc
        if md.error is not None or not md.partitions:
            raise BrokerError(
                f"topic {self.topic} does not exist", hint="create the topics: `rlstream topics create`"
            )
        start = {c.partition: c.offset for c in consumed if c.topic == self.topic}
        self._consumer.assign(
            [TopicPartition(self.topic, p, start.get(p, OFFSET_BEGINNING)) for p in sorted(md.partitions)]
        )

    def run(self, stop: threading.Event, *, idle_exit_s: float | None = None) -> ProcessorStats:
        """Train until ``stop`` is set (or, with ``idle_exit_s``, until no record came for that long).

        What waits is trained without a full batch once no record came for ``idle_flush_s``, and once
        more when the learner has caught up with the log after its start (a poll comes back empty, or
        with a record written after the start) if the first record it read is older than that: what
        waited through a restart has already waited as long as a pause would have made it wait, so
        the first version after a restart does not wait for that pause again. In between, batches
        are the same as without a restart.

        A stop never trains what is waiting: those records were not committed and are read again by
        the next start.

        With a lease, nothing is read before it is held: a warm standby waits here, built, until the
        active learner's process ends, then restores from the log like any restart."""
        if self.lease is not None:
            if not self.lease.try_acquire():
                log.info("learner %s: standing by for the run's lease %s", self.incarnation, self.lease.path)
                if not self.lease.acquire(stop):
                    self.close()
                    return self.stats
            log.info("learner %s: holds the run's lease", self.incarnation)
        started = time.time()
        self.start()
        assert self._consumer is not None
        last_input = time.monotonic()
        flushed = True
        catching_up = True
        first_read: float | None = None
        try:
            while not stop.is_set():
                msgs = self._consumer.consume(self.fetch_batch, 0.5)
                now = time.monotonic()
                offered = 0
                newest = 0.0
                for msg in msgs:
                    if stop.is_set():
                        break
                    offered += self._handle(msg)
                    kind, stamp = msg.timestamp()
                    if kind != TIMESTAMP_NOT_AVAILABLE:
                        first_read = stamp / 1000.0 if first_read is None else first_read
                        newest = max(newest, stamp / 1000.0)
                if offered:
                    last_input, flushed = now, False
                if catching_up and ((not msgs and first_read is not None) or newest >= started):
                    catching_up = False
                    if (
                        not flushed
                        and first_read is not None
                        and time.time() - first_read >= self.idle_flush_s
                    ):
                        self._emit(self.loop.flush())
                        flushed = True
                elif not flushed and now - last_input >= self.idle_flush_s:
                    # the stream paused: train on what is waiting rather than hold it for a full batch
                    self._emit(self.loop.flush())
                    flushed = True
                if idle_exit_s is not None and now - last_input >= idle_exit_s:
                    break
                if now - self._last_progress >= self.progress_every_s:
                    self._progress()
                if now - self._lag_at >= LAG_EVERY_S:
                    self._lag_at = now
                    with contextlib.suppress(KafkaException):  # a metric is not worth failing for
                        parts = [(tp.topic, tp.partition) for tp in self._consumer.assignment()]
                        self.stats.lag = assigned_lag(self._consumer, parts, [self.topic])
        finally:
            self.close()
        return self.stats

    def close(self) -> None:
        try:
            if self._producer is not None:
                self._producer.close()
        finally:
            if self._consumer is not None:
                self._consumer.close()
                self._consumer = None
            self.training_log.close()
            if self.lease is not None:
                self.lease.release()

    # -- records ----------------------------------------------------------------------------------
    def _handle(self, msg: Message) -> int:
        err = msg.error()
        if err is not None:
            if err.code() == KafkaError._PARTITION_EOF:
                return 0
            if err.retriable() or not err.fatal():
                log.warning("learner: consumer error: %s", err)
                return 0
            raise BrokerError(f"the learner's consumer failed: {err}")
        self.stats.consumed += 1
        topic, partition, offset = msg.topic() or self.topic, msg.partition() or 0, msg.offset() or 0
        self.stats.consumed_by_topic[topic] += 1
        event: ExperienceReady = _SKIPPED
        mine = False
        try:
            item = decode_message(msg)
            check_topic(topic, item.event)
            if isinstance(item.event, ExperienceReady) and item.event.group_id.startswith(f"{self.run_id}/"):
                event, mine = item.event, True
        except EventDecodeError as exc:
            log.warning("learner: %s[%d]@%d dead-lettered: %s", topic, partition, offset, exc)
            assert self._producer is not None
            # outside a transaction: a restart from the checkpoint may letter it again, with the same id
            letter = dead_letter_for(msg, exc, stage="learner")
            self._producer.publish(letter, topic=DLQ.name)
            self.stats.dead_lettered += 1
            self.stats.decode_errors += 1
            self.stats.committed((), [(DLQ.name, letter, self.run_id)])
        span = None
        if mine:
            self._rewards.extend(s.reward for s in event.samples)
            for sample in event.samples:
                if sample.traceparent:
                    self._sample_traces[sample.sample_id] = sample.traceparent
            span = start_process(
                topic,
                partition=partition,
                offset=offset,
                event_id=item.envelope.id,
                group=self.group_id,
                traceparent=item.envelope.traceparent,
                tracestate=item.envelope.tracestate,
                key=event.key,
                event=event,
            )
        self._step_started_ns = time.time_ns()
        try:
            published = self.loop.offer(Record(event, topic, partition, offset))
        finally:
            if span is not None:
                span.end()
        self._emit(published)
        return 1

    def _emit(self, events: list[PolicyPublished], *, republished: bool = False) -> None:
        self._log_drops()
        if events:
            self._publish(events, republished=republished)
        decided = self.loop.decided()
        if decided is not None:
            self._commit_decided(decided)

    def _commit_decided(self, decided: Decided) -> None:
        """Records decided without a step: logged (what a restart from the same checkpoint reads on
        after, and what makes the drops before it count), then committed for the group's readers."""
        self.training_log.write(
            "decided",
            step=decided.step,
            policy_version=decided.policy_version,
            base=[c.model_dump() for c in decided.base],
            consumed=[c.model_dump() for c in decided.consumed],
            groups=list(decided.groups),
        )
        self._commit_offsets(decided.consumed)

    def _publish(self, events: list[PolicyPublished], *, republished: bool) -> None:
        assert self._producer is not None and self._consumer is not None
        for event in events:
            # a version's span starts a trace of its own, linked to the steps that made it
            self._producer.publish(event, topic=POLICY.name, links=self._step_links)
            self._step_links = []
        # acknowledged before any offset moves: a crash in between re-publishes from the checkpoint
        self._producer.flush()
        for event in events:
            self.stats.produced += 1
            self.stats.transactions += 1
            self.stats.committed((), [(POLICY.name, event, event.run_id)])
            self.published.append(event)
            self.training_log.write(
                "publish",
                policy_version=event.policy_version,
                step=event.step,
                sample_ids=list(event.trained_sample_ids),
                consumed=[c.model_dump() for c in event.consumed],
                republished=republished,
            )
        self._commit_offsets(events[-1].consumed)
        last = events[-1]
        log.info(
            "learner: published policy version %d (step %d, %d samples) %s",
            last.policy_version,
            last.step,
            len(last.trained_sample_ids),
            last.checkpoint_uri,
        )

    def _log_drops(self) -> None:
        dropped = self.loop.stats.dropped_sample_ids
        if len(dropped) > self._dropped_seen:
            for sample_id in dropped[self._dropped_seen :]:
                self._sample_traces.pop(sample_id, None)
            self.training_log.write(
                "drop",
                policy_version=self.loop.engine.policy_version,
                sample_ids=list(dropped[self._dropped_seen :]),
            )
            self._dropped_seen = len(dropped)

    def _on_step(self, record: StepRecord) -> None:
        self._trace_step(record)
        self.training_log.write(
            "step",
            step=record.step,
            policy_version=record.policy_version,
            sample_ids=list(record.sample_ids),
            metrics={k: round(v, 6) for k, v in record.metrics.items()},
        )
        self._last_metrics = record.metrics

    def _trace_step(self, record: StepRecord) -> None:
        """A span for the step (from when its batch began to be read), a root linked to the trace of
        every sample it trained: a sample's trace is one story, a step gathers many."""
        links = links_to(self._sample_traces.pop(sid, None) for sid in record.sample_ids)
        attributes: dict[str, str | int | float] = {
            "rlstream.run_id": self.run_id,
            "rlstream.learner.step": record.step,
            "rlstream.policy_version": record.policy_version,
            "rlstream.learner.samples": len(record.sample_ids),
        }
        if "loss" in record.metrics:
            attributes["rlstream.learner.loss"] = float(record.metrics["loss"])
        span = tracer().start_span(
            "learner step",
            context=Context(),
            links=links,
            start_time=self._step_started_ns,
            attributes=attributes,
        )
        span.end()
        self._step_links.append(Link(span.get_span_context()))
        self._step_started_ns = time.time_ns()

    def _progress(self) -> None:
        self._last_progress = time.monotonic()
        metrics = self._last_metrics
        fixed = " ".join(
            f"{name}={metrics[name]:.4g}"
            for name in (
                "loss",
                "dpo_margin",
                "dpo_accuracy",
                "clip_fraction",
                "approx_kl",
                "is_ratio_mean",
                "is_ratio_max",
                "is_truncated_fraction",
                "tokens_per_s",
            )
            if name in metrics
        )
        hist = " ".join(
            f"{k.split('.', 1)[1]}:{int(v)}"
            for k, v in sorted(metrics.items())
            if k.startswith("staleness_hist.")
        )
        recent = self._rewards[-64:]
        s = self.loop.stats
        log.info(
            "learner: step %d, policy version %d | %s | staleness_hist %s | reward_mean(last %d) %.3f | "
            "samples seen %d used %d dropped %d | groups written twice, passed over %d | records %d (%.1f/s)",
            self.loop.engine.step,
            self.loop.engine.policy_version,
            fixed or "-",
            hist or "-",
            len(recent),
            sum(recent) / len(recent) if recent else 0.0,
            s.seen,
            s.used,
            s.dropped,
            self.loop.resent_groups,
            self.stats.consumed,
            self.stats.rate(),
        )


def learner_log_path(checkpoint_dir: Path) -> Path:
    return checkpoint_dir / "training.jsonl"


def decisions(entries: list[dict[str, Any]]) -> list[Decided]:
    """The ``decided`` lines of a training log, in order."""
    return [
        Decided(
            step=int(e["step"]),
            policy_version=int(e["policy_version"]),
            base=tuple(ConsumedOffset.model_validate(c) for c in e["base"]),
            consumed=tuple(ConsumedOffset.model_validate(c) for c in e["consumed"]),
            groups=tuple(e["groups"]),
        )
        for e in entries
        if e.get("kind") == "decided"
    ]


def training_account(entries: list[dict[str, Any]]) -> tuple[dict[int, list[str]], list[str]]:
    """From a training log: the sample ids each published version trained (a version published
    again after a restart must list the same ids) and the ids dropped up to the last commit.

    Drops logged after an incarnation's last publication or ``decided`` line were never committed: a
    restart reads those records again and decides anew, so they are left out (a drop is logged before
    the commit that covers it)."""
    versions: dict[int, list[str]] = {}
    dropped: dict[str, None] = {}
    pending: dict[str, list[str]] = {}
    for entry in entries:
        incarnation = str(entry.get("incarnation", ""))
        if entry.get("kind") == "publish":
            version, ids = int(entry["policy_version"]), list(entry["sample_ids"])
            if versions.setdefault(version, ids) != ids:
                raise ValueError(f"policy version {version} was published twice with different samples")
            dropped.update(dict.fromkeys(pending.pop(incarnation, [])))
        elif entry.get("kind") == "decided":
            dropped.update(dict.fromkeys(pending.pop(incarnation, [])))
        elif entry.get("kind") == "drop":
            pending.setdefault(incarnation, []).extend(entry["sample_ids"])
    return versions, list(dropped)
