"""The supervised stage's loss: cross-entropy on the completion tokens only.

A pure tensor function in the layout of ``learner/grpo.py`` (``[B, T]`` per-token log-probs and a
``mask`` true exactly on the generated tokens), so a conversation's prompt and feedback tokens are
context, never targets: the model is taught what to answer, not to predict what it is told.
"""

from __future__ import annotations

from torch import Tensor

from learner.grpo import masked_mean
from schemas.errors import InputError

__all__ = ["sft_loss"]


def sft_loss(logprobs: Tensor, mask: Tensor) -> Tensor:
    """Mean negative log-likelihood over every masked-in token of the batch (a token-level mean, as
    ``grpo_loss`` takes: a long completion weighs in proportion to its tokens); 0 when none is."""
    if logprobs.shape != mask.shape:
        raise InputError(
            f"logprobs {tuple(logprobs.shape)} and mask {tuple(mask.shape)} must have one shape",
            location="sft_loss",
        )
    return -masked_mean(logprobs, mask)
