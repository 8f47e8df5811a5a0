"""The supervised stage: its loss (cross-entropy on the completion tokens only), curated examples as
training rows, and epochs over them through the learner's engine (``rlstream sft``).

The loss is a pure tensor function in the layout of ``learner/grpo.py`` (``[B, T]`` per-token log-probs and a
``mask`` true exactly on the generated tokens), so a conversation's prompt and feedback tokens are
context, never targets: the model is taught what to answer, not to predict what it is told.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch import Tensor

from learner.batch import TrainSample, collate, pack
from learner.grpo import masked_mean
from schemas.errors import InputError

if TYPE_CHECKING:
    from learner.engine import LearnerEngine

__all__ = ["Curve", "nll", "sft_loss", "train"]


def sft_loss(logprobs: Tensor, mask: Tensor) -> Tensor:
    """Mean negative log-likelihood over every masked-in token of the batch (a token-level mean, as
    ``grpo_loss`` takes: a long completion weighs in proportion to its tokens); 0 when none is."""
    if logprobs.shape != mask.shape:
        raise InputError(
            f"logprobs {tuple(logprobs.shape)} and mask {tuple(mask.shape)} must have one shape",
            location="sft_loss",
        )
    return -masked_mean(logprobs, mask)


# --- the stage: epochs over curated examples (their rows: rlstream/sft.py) ----------------------------


@dataclass(frozen=True)
class Curve:
    """The stage's loss: one value per optimizer step, and the token-weighted mean per epoch."""

    steps: tuple[float, ...]
    epochs: tuple[float, ...]
    tokens: int


def nll(
    engine: LearnerEngine, samples: Sequence[TrainSample], *, token_budget: int, pad_token_id: int
) -> float:
    """Mean negative log-likelihood per answer token of ``samples`` under the engine's current weights
    (no update): what the stage lowers, measured before and after."""
    total = 0.0
    tokens = 0
    for rows in pack(list(samples), token_budget=token_budget):
        batch = collate(rows, pad_token_id=pad_token_id)
        loss = sft_loss(engine.logprobs(batch), batch.loss_mask.to(engine.device))
        total += float(loss) * batch.num_loss_tokens
        tokens += batch.num_loss_tokens
    return total / tokens if tokens else math.nan


def train(
    engine: LearnerEngine,
    samples: Sequence[TrainSample],
    *,
    epochs: int,
    token_budget: int,
    pad_token_id: int,
    seed: int,
    progress: Callable[[int, int, float], None] | None = None,
) -> Curve:
    """``epochs`` passes over ``samples``, each in a fresh order drawn from ``seed`` (the same seed gives
    the same steps), packed into batches of at most ``token_budget`` tokens. ``progress(epoch, step,
    loss)`` after each step."""
    if epochs < 1:
        raise InputError(f"epochs must be >= 1, got {epochs}", location="epochs")
    too_long = [s.sample_id for s in samples if s.length > token_budget]
    if too_long:
        raise InputError(
            f"{len(too_long)} example(s) longer than the token budget {token_budget}, e.g. {too_long[0]}",
            location="token_budget",
        )
    rng = random.Random(seed)
    steps: list[float] = []
    per_epoch: list[float] = []
    tokens = 0
    for epoch in range(1, epochs + 1):
        order = list(samples)
        rng.shuffle(order)
        weighted = 0.0
        counted = 0
        for rows in pack(order, token_budget=token_budget):
            batch = collate(rows, pad_token_id=pad_token_id)
            loss = engine.sft_step(batch)["sft_loss"]
            steps.append(loss)
            weighted += loss * batch.num_loss_tokens
            counted += batch.num_loss_tokens
            tokens += batch.num_tokens
            if progress is not None:
                progress(epoch, len(steps), loss)
        per_epoch.append(weighted / counted if counted else math.nan)
    return Curve(steps=tuple(steps), epochs=tuple(per_epoch), tokens=tokens)
