"""Direct preference optimisation, in one file: which samples make a preference pair, and the loss.

Both halves are pure: :func:`preference_pairs` works on plain records (no tensors, no events), and
:func:`dpo_loss` on per-sequence log-probabilities, so each can be checked against numbers worked out by
hand, like ``learner/grpo.py``.

The pairing rule. A group is one prompt sampled several times, so two of its samples differ only in what
the policy wrote: exactly the comparison DPO learns from. Within a group,

* a sample whose verdict in force is ``mask`` never pairs: masking says its reward carries no signal
  (a flaky check, a task that cannot judge), and a preference built on it would teach noise;
* a ``reject``ed sample (a hack the filter caught, or one a human reviewer rejected) is dispreferred to
  every accepted sample of its group, whatever the rewards say: its reward is what a hack earns, not
  what the program is worth;
* between two accepted samples, the one whose reward is higher by at least ``min_margin`` is preferred;
  ties and near-ties make no pair (a pair whose sides are equally good teaches an arbitrary direction).

A human review in force replaces the automated verdict before the rule applies (the caller resolves it:
:class:`Candidate` carries the verdict in force, not the filter's).

The loss (per pair, with the frozen reference policy ``ref``, usually the policy the stage started from)::

    h = β · ((log π(c) − log ref(c)) − (log π(r) − log ref(r)))
    loss = −log σ(h)

``β·(log π − log ref)`` is each side's implicit reward; their difference ``h`` is the margin. The loss
falls as the margin grows, so its gradient raises the chosen side's log-probability and lowers the
rejected side's, each by ``β·(1 − σ(h))``: the pairs the policy already orders well contribute little.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F
from torch import Tensor

from schemas.errors import InputError

__all__ = [
    "Candidate",
    "DPOLoss",
    "Pair",
    "dpo_loss",
    "pair_chunks",
    "preference_pairs",
    "sequence_logprobs",
]

Verdict = Literal["accept", "mask", "reject"]


@dataclass(frozen=True)
class Candidate:
    """One sample of a group as the pairing rule sees it: its reward and the verdict in force (a human
    review's where one is in force, else the noise filter's)."""

    sample_id: str
    reward: float
    verdict: Verdict


@dataclass(frozen=True)
class Pair:
    chosen: str
    rejected: str
    #: reward of the chosen minus reward of the rejected (how strongly the log prefers it)
    reward_gap: float


def preference_pairs(
    group: Iterable[Candidate], *, min_margin: float = 0.1, max_pairs: int | None = None
) -> list[Pair]:
    """The group's preference pairs by the rule in the module's docstring, widest reward gap first
    (ties by sample ids, so the same group always yields the same list); at most ``max_pairs`` of them
    (None: all). Each unordered pair of samples appears at most once."""
    if min_margin < 0:
        raise InputError(f"min_margin must be >= 0, got {min_margin}", location="min_margin")
    if max_pairs is not None and max_pairs < 0:
        raise InputError(f"max_pairs must be >= 0, got {max_pairs}", location="max_pairs")
    members = sorted(group, key=lambda c: c.sample_id)
    ids = [c.sample_id for c in members]
    if len(set(ids)) != len(ids):
        raise InputError("a group lists a sample twice", location="sample_id")
    accepted = [c for c in members if c.verdict == "accept"]
    rejected = [c for c in members if c.verdict == "reject"]
    pairs = [Pair(a.sample_id, r.sample_id, a.reward - r.reward) for a in accepted for r in rejected]
    for i, a in enumerate(accepted):
        for b in accepted[i + 1 :]:
            hi, lo = (a, b) if a.reward >= b.reward else (b, a)
            gap = hi.reward - lo.reward
            # a zero margin still needs a strict order: equal rewards never pair
            if gap > 0 and gap >= min_margin:
                pairs.append(Pair(hi.sample_id, lo.sample_id, gap))
    pairs.sort(key=lambda p: (-p.reward_gap, p.chosen, p.rejected))
    return pairs if max_pairs is None else pairs[:max_pairs]


def pair_chunks(pairs: Sequence[Pair], *, max_rows: int) -> list[list[Pair]]:
    """Pairs, in order, split into steps of at most ``max_rows`` distinct samples each (a sample in
    several pairs of one step is scored once). A step always takes at least one pair, so with
    ``max_rows`` below 2 each pair is a step of its own."""
    chunks: list[list[Pair]] = []
    current: list[Pair] = []
    rows: set[str] = set()
    for pair in pairs:
        grown = rows | {pair.chosen, pair.rejected}
        if current and len(grown) > max_rows:
            chunks.append(current)
            current, grown = [], {pair.chosen, pair.rejected}
        current.append(pair)
        rows = grown
    if current:
        chunks.append(current)
    return chunks


def sequence_logprobs(token_logprobs: Tensor, mask: Tensor) -> Tensor:
    """``[B, T]`` per-token log-probs -> ``[B]`` log-probability of each sequence's masked-in tokens
    (the completion: the prompt and feedback are context, not choices the policy made)."""
    if token_logprobs.shape != mask.shape:
        raise InputError(
            f"logprobs {tuple(token_logprobs.shape)} and mask {tuple(mask.shape)} must have one shape",
            location="sequence_logprobs",
        )
    keep = mask.bool()
    # where() rather than a product: a masked position holding -inf must not turn the sum into NaN
    return torch.where(keep, token_logprobs, torch.zeros_like(token_logprobs)).sum(dim=-1)


@dataclass(frozen=True)
class DPOLoss:
    loss: Tensor
    #: β·(log π − log ref) of each side, per pair (detached)
    chosen_reward: Tensor
    rejected_reward: Tensor
    #: mean of chosen_reward − rejected_reward over the batch
    margin: float
    #: fraction of pairs whose chosen side has the higher implicit reward
    accuracy: float


def dpo_loss(
    policy_chosen: Tensor,
    policy_rejected: Tensor,
    reference_chosen: Tensor,
    reference_rejected: Tensor,
    *,
    beta: float,
) -> DPOLoss:
    """Mean DPO loss over ``[P]`` pairs of sequence log-probs (policy and frozen reference)."""
    if beta <= 0:
        raise InputError(f"beta must be > 0, got {beta}", location="beta")
    shapes = {tuple(t.shape) for t in (policy_chosen, policy_rejected, reference_chosen, reference_rejected)}
    if len(shapes) != 1 or len(next(iter(shapes))) != 1:
        raise InputError(f"expected four [P] tensors of one shape, got {sorted(shapes)}", location="dpo_loss")
    chosen = beta * (policy_chosen - reference_chosen.detach())
    rejected = beta * (policy_rejected - reference_rejected.detach())
    h = chosen - rejected
    loss = -F.logsigmoid(h).mean() if h.numel() else h.sum()
    gap = h.detach()
    return DPOLoss(
        loss=loss,
        chosen_reward=chosen.detach(),
        rejected_reward=rejected.detach(),
        margin=float(gap.mean()) if gap.numel() else 0.0,
        accuracy=float((gap > 0).float().mean()) if gap.numel() else 0.0,
    )
