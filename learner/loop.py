"""The learner's bookkeeping between the log and the engine, without any Kafka client: records go in in
log order, optimizer steps, checkpoints and PolicyPublished events come out.

Lossless resume rests on three rules kept here:

* a step trains whole ExperienceReady records only (a group is never split across a checkpoint), taken
  from the front of a FIFO in log order, so what has been trained is always a prefix of each partition;
* the consumed offsets written into a checkpoint are, per partition, one past the last record whose
  samples were all trained or dropped (and counted) - records still waiting are read again after a
  restart, records before it never are;
* Kafka offsets are committed only to what a returned PolicyPublished lists in ``consumed`` (that event
  is built only after its checkpoint is complete), or to what :meth:`LearnerLoop.decided` returns:
  offsets moved past records decided without a step (every sample dropped, or none of this run's)
  while nothing trained waits for a publication. Those need no checkpoint - the weights and optimizer
  are the last checkpoint's - so the caller records them beside it (the training log) and a restart
  from that very checkpoint takes them back (:meth:`LearnerLoop.adopt`) instead of deciding again.

The samples a version trained are listed in its PolicyPublished (``trained_sample_ids``): steps taken
after the last checkpoint and lost in a crash are retrained after the restart and listed then, so the
union over published versions names every trained sample exactly once.

A group's experience may be on the log twice (a runtime that delivers at least once wrote it again,
with the same event id): the group ids of the last ``resent_window_groups`` records taken are kept (and
checkpointed with the offsets they cover), and a record of a group already taken or waiting is passed
over like another run's — its offset moves on, nothing of it is trained — and counted.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from learner.batch import (
    AssemblyStats,
    TrainSample,
    apply_reviews,
    collate,
    samples_of,
    select_pairs,
    select_samples,
)
from learner.dpo import Pair, pair_chunks
from learner.engine import LearnerEngine
from schemas.policy import ConsumedOffset, PolicyPublished
from schemas.rollout import ExperienceReady


@dataclass(frozen=True)
class Record:
    """One ExperienceReady as read from the log, with where it was read."""

    event: ExperienceReady
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True)
class Decided:
    """Offsets moved, since the checkpoint the loop last wrote or loaded, only past records decided
    without a step: what was dropped or passed over there is settled without a new version.

    ``step``, ``policy_version`` and ``base`` (that checkpoint's offsets) name the checkpoint it extends;
    ``groups``: the group ids taken since it (what the checkpoint's recent groups lack)."""

    step: int
    policy_version: int
    base: tuple[ConsumedOffset, ...]
    consumed: tuple[ConsumedOffset, ...]
    groups: tuple[str, ...]


@dataclass(frozen=True)
class StepRecord:
    """One optimizer step, for the training log."""

    step: int
    policy_version: int
    sample_ids: tuple[str, ...]
    metrics: dict[str, float]


class ReviewLookup(Protocol):
    """Human reviews in force (``rl.reviews``), as the learner sees them just before a step."""

    def refresh(self) -> None:
        """Take in every review recorded up to now."""

    def verdict(self, sample_id: str) -> str | None:
        """The verdict of the review in force for the sample, or None."""


def _no_review(sample_id: str) -> None:
    return None


@dataclass
class _Pending:
    record: Record
    samples: list[TrainSample] = field(default_factory=list)


class _RecentGroups:
    """The last ``size`` group ids taken, in order, with a set for lookups."""

    def __init__(self, size: int, ids: Iterable[str] = ()) -> None:
        self.size = size
        self._order: deque[str] = deque()
        self._ids: set[str] = set()
        for group_id in ids:
            self.add(group_id)

    def __contains__(self, group_id: str) -> bool:
        return group_id in self._ids

    def add(self, group_id: str) -> None:
        if self.size <= 0 or group_id in self._ids:
            return
        self._order.append(group_id)
        self._ids.add(group_id)
        while len(self._order) > self.size:
            self._ids.discard(self._order.popleft())

    def __iter__(self) -> Iterator[str]:
        return iter(self._order)


#: what a record of a group taken before is replaced by (it only moves the offset on)
_RESENT = ExperienceReady(group_id="resent", task_id="resent", group_size=1, samples=())


class LearnerLoop:
    def __init__(
        self,
        engine: LearnerEngine,
        *,
        run_id: str,
        model_name: str = "",
        on_step: Callable[[StepRecord], None] | None = None,
        reviews: ReviewLookup | None = None,
    ) -> None:
        self.engine = engine
        #: a review's mask/reject takes effect for any sample not trained yet: read just before a step
        self.reviews = reviews
        self.config = engine.config
        self.run_id = run_id
        self.model_name = model_name
        self.on_step = on_step
        self._fifo: deque[_Pending] = deque()
        #: (topic, partition) -> next offset to read, covering only fully processed records
        self._position: dict[tuple[str, int], int] = {}
        #: (topic, partition) -> next offset expected from the log (anything lower was already offered)
        self._offered: dict[tuple[str, int], int] = {}
        self._trained_since_publish: list[str] = []
        self._steps_since_publish = 0
        self._last_metrics: dict[str, float] = {}
        self.stats = AssemblyStats()
        #: groups taken (trained or dropped) and groups waiting in the FIFO
        self._taken = _RecentGroups(self.config.resent_window_groups)
        self._waiting: set[str] = set()
        #: records of a group already taken or waiting (written twice on the log), passed over
        self.resent_groups = 0
        #: the offsets of the checkpoint written or loaded last, the groups taken since it, and the
        #: offsets last returned by :meth:`decided`
        self._checkpointed: tuple[ConsumedOffset, ...] = ()
        self._groups_since_checkpoint: deque[str] = deque(maxlen=self.config.resent_window_groups)
        self._decided_at: dict[tuple[str, int], int] = {}

    # -- resume -----------------------------------------------------------------------------------
    def resume(self) -> tuple[tuple[ConsumedOffset, ...], PolicyPublished | None]:
        """Load the newest complete checkpoint. Returns the offsets to seek to (empty: no checkpoint,
        start from the beginning) and that checkpoint's PolicyPublished to emit again (idempotent: same
        version, same event id), or None."""
        found = self.engine.checkpoints.newest()
        if found is None:
            return (), None
        path, manifest = found
        self.engine.load_checkpoint(path)
        self._position = {(c.topic, c.partition): c.offset for c in manifest.consumed}
        self._offered = dict(self._position)
        self._taken = _RecentGroups(self.config.resent_window_groups, manifest.extra.get("recent_groups", ()))
        self._checkpointed = self.consumed
        self._decided_at = dict(self._position)
        return manifest.consumed, self.engine.republish(path, manifest)

    def adopt(self, decided: Decided) -> bool:
        """Right after :meth:`resume`: take back what an earlier life decided past the checkpoint it
        loaded, if ``decided`` extends exactly that checkpoint (else nothing changes and False)."""
        engine = self.engine
        if (decided.step, decided.policy_version, decided.base) != (
            engine.step,
            engine.policy_version,
            self._checkpointed,
        ):
            return False
        moved = {(c.topic, c.partition): c.offset for c in decided.consumed}
        if any(moved.get(key, -1) < offset for key, offset in self._position.items()):
            return False
        self._position = moved
        self._offered = dict(moved)
        for group_id in decided.groups:
            self._taken.add(group_id)
        self._groups_since_checkpoint.clear()
        self._groups_since_checkpoint.extend(decided.groups)
        self._decided_at = dict(moved)
        return True

    def decided(self) -> Decided | None:
        """The offsets to commit now without a publication: when they moved (since the last
        checkpoint or the last call) only past records decided without a step, and no trained step
        waits for a publication. None otherwise."""
        if self._steps_since_publish:
            return None  # the next publication covers them, with the samples trained meanwhile
        if self._position == self._decided_at:
            return None
        self._decided_at = dict(self._position)
        return Decided(
            step=self.engine.step,
            policy_version=self.engine.policy_version,
            base=self._checkpointed,
            consumed=self.consumed,
            groups=tuple(self._groups_since_checkpoint),
        )

    @property
    def consumed(self) -> tuple[ConsumedOffset, ...]:
        return tuple(
            ConsumedOffset(topic=t, partition=p, offset=o) for (t, p), o in sorted(self._position.items())
        )

    # -- the stream -------------------------------------------------------------------------------
    def offer(self, record: Record) -> list[PolicyPublished]:
        """Take one record (in log order per partition); train and publish when a batch is full."""
        key = (record.topic, record.partition)
        if record.offset < self._offered.get(key, 0):
            return []  # re-delivered: already trained, counted, or waiting in the queue
        self._offered[key] = record.offset + 1
        group_id = record.event.group_id
        if record.event.samples and (group_id in self._taken or group_id in self._waiting):
            self.resent_groups += 1
            record = Record(_RESENT, record.topic, record.partition, record.offset)
        elif record.event.samples:
            self._waiting.add(group_id)
        self._fifo.append(_Pending(record))
        published: list[PolicyPublished] = []
        while self._pending_tokens() > self.config.token_budget:
            published += self._train_front(allow_partial_budget=False)
        return published

    def flush(self) -> list[PolicyPublished]:
        """Train on everything waiting (e.g. when the stream has been idle), then publish what has not
        been published yet."""
        published: list[PolicyPublished] = []
        while self._fifo:
            published += self._train_front(allow_partial_budget=True)
        if self._steps_since_publish:
            published.append(self._publish())
        return published

    # -- internals --------------------------------------------------------------------------------
    def _pending_tokens(self) -> int:
        rows = sum(len(p.record.event.samples) for p in self._fifo)
        width = max((s.length for p in self._fifo for s in samples_of(p.record.event)), default=0)
        return rows * width

    def _train_front(self, *, allow_partial_budget: bool) -> list[PolicyPublished]:
        """One or more steps on the longest prefix of whole records that fits the budget."""
        c = self.config
        lookup: Callable[[str], str | None] = _no_review
        if self.reviews is not None:
            self.reviews.refresh()
            lookup = self.reviews.verdict
        taken: list[_Pending] = []
        batch_samples: list[TrainSample] = []
        width = 0
        step_stats = AssemblyStats()
        batch_pairs: list[Pair] = []
        while self._fifo:
            head = self._fifo[0]
            kept, pairs, stats = self._select(head.record.event, lookup)
            grown = max([width, *(s.length for s in kept)])
            if taken and grown * (len(batch_samples) + len(kept)) > c.token_budget:
                break
            self._fifo.popleft()
            if head.record.event.samples:
                self._waiting.discard(head.record.event.group_id)
                self._taken.add(head.record.event.group_id)
                self._groups_since_checkpoint.append(head.record.event.group_id)
            step_stats.merge(stats)
            head.samples = kept
            taken.append(head)
            batch_samples += kept
            batch_pairs += pairs
            width = grown
        if not taken:
            return []
        self.stats.merge(step_stats)
        stepped = False
        # one record alone can exceed the budget: then it takes several steps, none checkpointed alone
        per_chunk = max(1, c.token_budget // max(width, 1))
        steps = (
            self._dpo_steps(batch_samples, batch_pairs, per_chunk, step_stats)
            if c.algorithm == "dpo"
            else self._grpo_steps(batch_samples, per_chunk, step_stats)
        )
        for ids, metrics in steps:
            self._last_metrics = metrics
            self._trained_since_publish += ids
            self._steps_since_publish += 1
            if self.on_step is not None:
                self.on_step(StepRecord(self.engine.step, self.engine.policy_version, ids, metrics))
            stepped = True
        for pending in taken:
            key = (pending.record.topic, pending.record.partition)
            self._position[key] = max(self._position.get(key, 0), pending.record.offset + 1)
        if stepped and self._steps_since_publish >= c.publish_every:
            return [self._publish()]
        return []

    def _select(
        self, event: ExperienceReady, lookup: Callable[[str], str | None]
    ) -> tuple[list[TrainSample], list[Pair], AssemblyStats]:
        """What of one record is trained now (and, for DPO, its pairs), with what was dropped."""
        c = self.config
        version, vocab = self.engine.policy_version, self.engine.vocab_size
        if c.algorithm == "dpo":
            return select_pairs(
                event,
                lookup,
                current_version=version,
                staleness_bound=c.staleness_bound,
                token_budget=c.token_budget,
                vocab_size=vocab,
                min_margin=c.dpo.min_margin,
                max_pairs=c.dpo.max_pairs_per_group,
            )
        reviewed, removed = apply_reviews(event, lookup)
        kept, stats = select_samples(
            reviewed,
            current_version=version,
            staleness_bound=c.staleness_bound,
            token_budget=c.token_budget,
            vocab_size=vocab,
        )
        stats.seen += len(removed)
        stats.dropped_review += len(removed)
        stats.dropped_sample_ids.extend(removed)
        return kept, [], stats

    def _grpo_steps(
        self, samples: list[TrainSample], per_chunk: int, stats: AssemblyStats
    ) -> Iterator[tuple[tuple[str, ...], dict[str, float]]]:
        for i in range(0, len(samples), per_chunk):
            chunk = samples[i : i + per_chunk]
            batch = collate(chunk, pad_token_id=self.config.pad_token_id)
            yield batch.sample_ids, self.engine.train_step(batch, staleness_hist=stats.staleness_hist)

    def _dpo_steps(
        self, samples: list[TrainSample], pairs: list[Pair], per_chunk: int, stats: AssemblyStats
    ) -> Iterator[tuple[tuple[str, ...], dict[str, float]]]:
        by_id = {s.sample_id: s for s in samples}
        listed: set[str] = set()
        for chunk in pair_chunks(pairs, max_rows=per_chunk):
            ids = list(dict.fromkeys(sid for p in chunk for sid in (p.chosen, p.rejected)))
            row = {sid: i for i, sid in enumerate(ids)}
            batch = collate([by_id[sid] for sid in ids], pad_token_id=self.config.pad_token_id)
            metrics = self.engine.dpo_step(
                batch,
                [(row[p.chosen], row[p.rejected]) for p in chunk],
                staleness_hist=stats.staleness_hist,
            )
            # a sample in pairs of two steps is listed by the first: each trained sample once per version
            new = tuple(sid for sid in ids if sid not in listed)
            listed.update(new)
            yield new, metrics

    def _publish(self) -> PolicyPublished:
        metrics = {k: v for k, v in self._last_metrics.items() if not k.startswith("staleness_hist.")}
        metrics.update(
            samples_seen=float(self.stats.seen),
            samples_used=float(self.stats.used),
            samples_dropped_stale=float(self.stats.dropped_stale),
            samples_dropped_too_long=float(self.stats.dropped_too_long),
            samples_dropped_invalid=float(self.stats.dropped_invalid),
            samples_dropped_review=float(self.stats.dropped_review),
            groups_resent_skipped=float(self.resent_groups),
        )
        if self.config.algorithm == "dpo":
            metrics["samples_dropped_unpaired"] = float(self.stats.dropped_unpaired)
        for lag, count in sorted(Counter(self.stats.staleness_hist).items()):
            metrics[f"staleness_hist.{lag}"] = float(count)
        event = self.engine.publish(
            run_id=self.run_id,
            consumed=self.consumed,
            trained_sample_ids=self._trained_since_publish,
            metrics=metrics,
            model_name=self.model_name,
            resume={"recent_groups": list(self._taken)},
        )
        self._trained_since_publish = []
        self._steps_since_publish = 0
        self._checkpointed = event.consumed
        self._decided_at = dict(self._position)
        self._groups_since_checkpoint.clear()
        return event
