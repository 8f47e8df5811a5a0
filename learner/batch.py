"""Batch assembly: from ExperienceReady events to padded training batches (pure; no model, no Kafka).

Each sample becomes one row ``prompt + completion``; an episode of several turns one row ``prompt +
feedback_1 + turn_1 + feedback_2 + turn_2 + ...`` (one trajectory). The model's logits at position t score
token t+1, so the per-token tensors have ``L - 1`` columns, and the loss mask is true exactly on the
columns that score a generated token: prompt and feedback tokens are never trained, and each generated
token carries the behaviour log-prob of its own turn (so each turn's importance ratio is against the
policy version that sampled it). Samples are taken in arrival order (so a batch covers a contiguous run of the
log) and a batch is closed when adding the next row would exceed the token budget (rows x longest row,
padding included, since that is what the step's memory pays for).

A sample the learner must not train on is dropped and counted in :class:`AssemblyStats`, never used
silently and never lost silently: too stale (its policy version lags the learner's by more than the
bound), too long for the budget on its own, without usable behaviour log-probs, or masked or
rejected by a human review in force before it was trained on.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

import torch
from torch import Tensor

from learner.dpo import Candidate, Pair, preference_pairs
from schemas.advantages import group_advantages
from schemas.rollout import ExperienceReady

#: one turn of an episode after its prompt: the feedback tokens before it, its generated tokens and their
#: behaviour log-probs
TurnTokens = tuple[tuple[int, ...], tuple[int, ...], tuple[float, ...]]


@dataclass(frozen=True)
class TrainSample:
    sample_id: str
    group_id: str
    #: an episode's oldest turn's version (what staleness is measured by)
    policy_version: int
    reward: float
    advantage: float
    prompt_token_ids: tuple[int, ...]
    completion_token_ids: tuple[int, ...]
    behaviour_logprobs: tuple[float, ...]
    #: an episode's turns (empty: a one-turn sample, whose completion is its only generated piece)
    turns: tuple[TurnTokens, ...] = ()

    def pieces(self) -> list[tuple[tuple[int, ...], tuple[float, ...] | None]]:
        """The tokens after the prompt, in order: (tokens, their behaviour log-probs) for generated
        pieces, (tokens, None) for feedback."""
        if not self.turns:
            return [(self.completion_token_ids, self.behaviour_logprobs)]
        out: list[tuple[tuple[int, ...], tuple[float, ...] | None]] = []
        for feedback, generated, logprobs in self.turns:
            if feedback:
                out.append((feedback, None))
            out.append((generated, logprobs))
        return out

    @property
    def length(self) -> int:
        return len(self.prompt_token_ids) + sum(len(tokens) for tokens, _ in self.pieces())

    @property
    def generated(self) -> int:
        """Generated tokens: the ones the loss is taken over."""
        return sum(len(tokens) for tokens, logprobs in self.pieces() if logprobs is not None)

    @property
    def valid(self) -> bool:
        """Every generated piece has tokens and one behaviour log-prob per token."""
        return all(
            tokens and len(logprobs) == len(tokens)
            for tokens, logprobs in self.pieces()
            if logprobs is not None
        )

    def token_ids(self) -> tuple[int, ...]:
        return self.prompt_token_ids + tuple(t for tokens, _ in self.pieces() for t in tokens)


@dataclass
class AssemblyStats:
    """What happened to every sample offered: ``seen == used + dropped_*``."""

    seen: int = 0
    used: int = 0
    dropped_stale: int = 0
    dropped_too_long: int = 0
    dropped_invalid: int = 0
    #: a human review in force says mask or reject (see :func:`apply_reviews`)
    dropped_review: int = 0
    #: DPO only: in no preference pair of its group (a tie, or nothing to compare it with)
    dropped_unpaired: int = 0
    #: staleness (learner version - sample version) -> count, over the samples used
    staleness_hist: Counter[int] = field(default_factory=Counter)
    dropped_sample_ids: list[str] = field(default_factory=list)

    @property
    def dropped(self) -> int:
        return (
            self.dropped_stale
            + self.dropped_too_long
            + self.dropped_invalid
            + self.dropped_review
            + self.dropped_unpaired
        )

    def merge(self, other: AssemblyStats) -> None:
        self.seen += other.seen
        self.used += other.used
        self.dropped_stale += other.dropped_stale
        self.dropped_too_long += other.dropped_too_long
        self.dropped_invalid += other.dropped_invalid
        self.dropped_review += other.dropped_review
        self.dropped_unpaired += other.dropped_unpaired
        self.staleness_hist.update(other.staleness_hist)
        self.dropped_sample_ids.extend(other.dropped_sample_ids)


@dataclass(frozen=True)
class Batch:
    """One step's data. ``[B, L]``: input_ids, attention_mask; ``[B, L-1]``: targets, loss_mask,
    behaviour_logprobs; ``[B]``: advantages."""

    input_ids: Tensor
    attention_mask: Tensor
    targets: Tensor
    loss_mask: Tensor
    behaviour_logprobs: Tensor
    advantages: Tensor
    sample_ids: tuple[str, ...]
    policy_versions: tuple[int, ...]
    #: non-padding tokens (prompt + completion) in the batch
    num_tokens: int
    #: generated tokens, the ones the loss is averaged over
    num_loss_tokens: int

    @property
    def rows(self) -> int:
        return int(self.input_ids.shape[0])

    def to(self, device: torch.device | str) -> Batch:
        return Batch(
            input_ids=self.input_ids.to(device),
            attention_mask=self.attention_mask.to(device),
            targets=self.targets.to(device),
            loss_mask=self.loss_mask.to(device),
            behaviour_logprobs=self.behaviour_logprobs.to(device),
            advantages=self.advantages.to(device),
            sample_ids=self.sample_ids,
            policy_versions=self.policy_versions,
            num_tokens=self.num_tokens,
            num_loss_tokens=self.num_loss_tokens,
        )


def samples_of(event: ExperienceReady) -> list[TrainSample]:
    return [
        TrainSample(
            sample_id=s.sample_id,
            group_id=event.group_id,
            policy_version=s.policy_version,
            reward=s.reward,
            advantage=s.advantage,
            prompt_token_ids=s.prompt_token_ids,
            completion_token_ids=s.completion_token_ids,
            behaviour_logprobs=s.behaviour_logprobs,
            turns=tuple(
                (t.feedback_token_ids, t.completion_token_ids, t.behaviour_logprobs) for t in s.turns
            ),
        )
        for s in event.samples
    ]


def apply_reviews(
    event: ExperienceReady, verdict_in_force: Callable[[str], str | None]
) -> tuple[list[TrainSample], list[str]]:
    """The group's samples without those a human review in force masks or rejects, and the ids
    removed. Advantages are group-relative, so when a sample leaves, the rest are recomputed over the
    samples that stay (the same definition the experience processor used); an untouched group keeps
    its advantages exactly. An ``accept`` review changes nothing here: a sample the filter kept out of
    its group carries no tokens to train on."""
    samples = samples_of(event)
    removed = [s.sample_id for s in samples if verdict_in_force(s.sample_id) in ("mask", "reject")]
    if not removed:
        return samples, []
    kept = [s for s in samples if s.sample_id not in removed]
    if kept:
        advantages = group_advantages([s.reward for s in kept], normalise_std=event.std_normalised)
        kept = [replace(s, advantage=a) for s, a in zip(kept, advantages, strict=True)]
    return kept, removed


def _in_vocab(ids: Sequence[int], vocab_size: int | None) -> bool:
    return min(ids, default=0) >= 0 and (vocab_size is None or max(ids, default=0) < vocab_size)


def select_samples(
    samples: Iterable[TrainSample],
    *,
    current_version: int,
    staleness_bound: int,
    token_budget: int,
    vocab_size: int | None = None,
) -> tuple[list[TrainSample], AssemblyStats]:
    """Keep the samples the learner may train on now; count every one it may not.

    A token id outside the model's vocabulary (e.g. from a hostile record) makes a sample invalid: the
    embedding lookup would fail the step, again after every restart."""
    stats = AssemblyStats()
    kept: list[TrainSample] = []
    for s in samples:
        stats.seen += 1
        staleness = current_version - s.policy_version
        if staleness > staleness_bound:
            stats.dropped_stale += 1
            stats.dropped_sample_ids.append(s.sample_id)
        elif not s.prompt_token_ids or not s.valid or not _in_vocab(s.token_ids(), vocab_size):
            # no prompt token means nothing scores the first completion token; no log-probs, no ratio
            stats.dropped_invalid += 1
            stats.dropped_sample_ids.append(s.sample_id)
        elif s.length > token_budget:
            stats.dropped_too_long += 1
            stats.dropped_sample_ids.append(s.sample_id)
        else:
            stats.used += 1
            # a sample from a *newer* version than the learner's (a restarted learner) counts as fresh
            stats.staleness_hist[max(staleness, 0)] += 1
            kept.append(s)
    return kept, stats


def select_pairs(
    event: ExperienceReady,
    verdict_in_force: Callable[[str], str | None],
    *,
    current_version: int,
    staleness_bound: int,
    token_budget: int,
    vocab_size: int | None = None,
    min_margin: float,
    max_pairs: int,
) -> tuple[list[TrainSample], list[Pair], AssemblyStats]:
    """DPO's take on one group: its preference pairs (``learner/dpo.py``'s rule) among the samples the
    learner may train on now, and those samples (the ones in a pair, in the group's order).

    Every sample of the experience was accepted by the noise filter; a human review in force replaces
    that verdict: ``mask`` drops the sample (counted as a review drop), ``reject`` keeps it as the
    dispreferred side of a pair with each accepted sample of its group. A sample that is in no pair
    teaches nothing here and is counted as unpaired, never trained silently."""
    verdicts = {s.sample_id: verdict_in_force(s.sample_id) or "accept" for s in event.samples}
    masked = [sid for sid, v in verdicts.items() if v == "mask"]
    usable, stats = select_samples(
        (s for s in samples_of(event) if verdicts[s.sample_id] != "mask"),
        current_version=current_version,
        staleness_bound=staleness_bound,
        token_budget=token_budget,
        vocab_size=vocab_size,
    )
    stats.seen += len(masked)
    stats.dropped_review += len(masked)
    stats.dropped_sample_ids.extend(masked)
    candidates = [
        Candidate(s.sample_id, s.reward, "reject" if verdicts[s.sample_id] == "reject" else "accept")
        for s in usable
    ]
    pairs = preference_pairs(candidates, min_margin=min_margin, max_pairs=max_pairs)
    paired = {sid for p in pairs for sid in (p.chosen, p.rejected)}
    kept = [s for s in usable if s.sample_id in paired]
    for s in usable:
        if s.sample_id not in paired:
            # select_samples counted it as used: move it to the unpaired drops
            stats.used -= 1
            stats.staleness_hist[max(current_version - s.policy_version, 0)] -= 1
            stats.dropped_unpaired += 1
            stats.dropped_sample_ids.append(s.sample_id)
    stats.staleness_hist = +stats.staleness_hist  # no zero counts left behind
    return kept, pairs, stats


def pack(samples: Sequence[TrainSample], *, token_budget: int) -> list[list[TrainSample]]:
    """Split samples, in order, into groups whose padded size (rows x longest) fits the budget.
    Every sample must fit on its own (``select_samples`` guarantees it)."""
    groups: list[list[TrainSample]] = []
    current: list[TrainSample] = []
    longest = 0
    for s in samples:
        grown = max(longest, s.length)
        if current and grown * (len(current) + 1) > token_budget:
            groups.append(current)
            current, grown = [], s.length
        current.append(s)
        longest = grown
    if current:
        groups.append(current)
    return groups


def collate(samples: Sequence[TrainSample], *, pad_token_id: int = 0) -> Batch:
    """Right-padded tensors for one batch (see the module docstring for the layout)."""
    if not samples:
        raise ValueError("collate needs at least one sample")
    width = max(s.length for s in samples)
    rows = len(samples)
    input_ids = torch.full((rows, width), pad_token_id, dtype=torch.long)
    attention_mask = torch.zeros((rows, width), dtype=torch.long)
    loss_mask = torch.zeros((rows, width - 1), dtype=torch.bool)
    behaviour = torch.zeros((rows, width - 1), dtype=torch.float32)
    for i, s in enumerate(samples):
        ids = s.token_ids()
        input_ids[i, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        attention_mask[i, : len(ids)] = 1
        at = len(s.prompt_token_ids)
        for tokens, logprobs in s.pieces():
            if logprobs is not None:
                # column t scores token t+1: a generated token at position at+j is scored by column at+j-1
                loss_mask[i, at - 1 : at + len(tokens) - 1] = True
                behaviour[i, at - 1 : at + len(tokens) - 1] = torch.tensor(logprobs, dtype=torch.float32)
            at += len(tokens)
    return Batch(
        input_ids=input_ids,
        attention_mask=attention_mask,
        targets=input_ids[:, 1:].clone(),
        loss_mask=loss_mask,
        behaviour_logprobs=behaviour,
        advantages=torch.tensor([s.advantage for s in samples], dtype=torch.float32),
        sample_ids=tuple(s.sample_id for s in samples),
        policy_versions=tuple(s.policy_version for s in samples),
        num_tokens=sum(s.length for s in samples),
        num_loss_tokens=sum(s.generated for s in samples),
    )


def build_batches(
    events: Iterable[ExperienceReady],
    *,
    current_version: int,
    staleness_bound: int,
    token_budget: int,
    pad_token_id: int = 0,
) -> tuple[list[Batch], AssemblyStats]:
    """Everything above in one call: select, pack, collate."""
    samples = [s for e in events for s in samples_of(e)]
    kept, stats = select_samples(
        samples, current_version=current_version, staleness_bound=staleness_bound, token_budget=token_budget
    )
    batches = [collate(g, pad_token_id=pad_token_id) for g in pack(kept, token_budget=token_budget)]
    return batches, stats
