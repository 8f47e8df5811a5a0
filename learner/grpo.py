"""The learning rule, in one file: GRPO's clipped surrogate with off-policy corrections.

Every function is a pure tensor function (no model, no optimizer, no DeepSpeed), so each can be checked
against numbers worked out by hand. Shapes: ``[B, T]`` for per-token quantities (B sequences, T target
positions), ``[B]`` or ``[B, T]`` for advantages, and a ``mask`` that is true exactly on the completion
tokens that may feed the gradient (prompt and padding positions are false).

Two modes, both with a truncated importance ratio (cap ``C``) so a stale sample cannot blow up a step:

* **coupled** (``proximal_logprobs=None``): the PPO ratio is taken directly against the behaviour
  policy μ that generated the sample, ``r = π_θ/μ``. Where ``r > C`` the ratio is truncated: its value
  becomes ``C`` and its gradient ``C·∇log π_θ`` instead of ``r·∇log π_θ``. For a positive advantage
  that token is clipped anyway (``C ≥ 1+ε``); for a negative one truncation bounds the push-down that an
  unbounded ``r·A`` would cause (the dual-clip form of PPO with ``C`` as the second clip).
* **decoupled** (``proximal_logprobs`` given; decoupled PPO): the trust region is measured against a
  proximal policy π_prox (the learner's own weights before this batch's updates) and the staleness is
  corrected by a separate, gradient-free importance weight ``w = min(π_prox/μ, C)``:
  ``w · min(r·A, clip(r)·A)`` with ``r = π_θ/π_prox``.

When the behaviour policy and the current one coincide, the importance ratio is exactly 1 in both modes
and the objective's gradient is plain ``A·∇log π``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from schemas.advantages import group_advantages
from schemas.errors import InputError

__all__ = [
    "METRIC_NAMES",
    "GRPOLoss",
    "group_advantages",
    "grpo_loss",
    "kl_k3",
    "masked_mean",
    "token_logprobs",
]

#: the learner's metric names (dashboards and PolicyPublished.metrics rely on them; never rename)
METRIC_NAMES = (
    "loss",
    "clip_fraction",
    "approx_kl",
    "is_ratio_mean",
    "is_ratio_max",
    "is_truncated_fraction",
    "staleness_hist",
    "tokens_per_s",
)

#: exponent ceiling for ratios reported as metrics (e^50 is finite in float32 and plainly "huge")
_MAX_LOG_RATIO = 50.0


def token_logprobs(logits: Tensor, targets: Tensor, *, temperature: float = 1.0) -> Tensor:
    """log π(target) at each position: ``logits[..., V]`` (position t scores ``targets[..., t]``).

    Computed in float32 whatever the logits' dtype: bf16 log-softmax is too coarse for ratios near 1.
    ``temperature`` must be the one the generator sampled with, or the behaviour log-probs it recorded
    describe a different distribution and the importance ratio is wrong from the first step.
    """
    if temperature <= 0:
        raise InputError(f"temperature must be > 0, got {temperature}", location="temperature")
    scores = logits.float()
    if temperature != 1.0:
        scores = scores / temperature
    picked = scores.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(scores, dim=-1)


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """Mean of ``values`` over the true entries of ``mask`` (0 when none); masked entries contribute
    nothing, not even a NaN or an infinity sitting in them."""
    keep = mask.bool()
    total = torch.where(keep, values, torch.zeros_like(values)).sum()
    return total / keep.sum().clamp(min=1)


def _masked_max(values: Tensor, mask: Tensor) -> Tensor:
    keep = mask.bool()
    if not bool(keep.any()):
        return torch.zeros((), dtype=values.dtype, device=values.device)
    return values[keep].max()


def kl_k3(logprobs: Tensor, ref_logprobs: Tensor) -> Tensor:
    """Per-token k3 estimate of KL(π_θ ‖ π_ref): ``ρ − 1 − log ρ`` with ``ρ = π_ref/π_θ``.

    Unbiased for samples of π_θ and never negative, unlike the plain log-ratio.
    """
    log_rho = ref_logprobs - logprobs
    return torch.exp(log_rho) - 1.0 - log_rho


@dataclass(frozen=True)
class GRPOLoss:
    """The scalar to back-propagate and the step's metrics (plain floats, names from METRIC_NAMES;
    ``kl_ref`` is added when a reference policy is used)."""

    loss: Tensor
    metrics: dict[str, float]


def grpo_loss(
    logprobs: Tensor,
    behaviour_logprobs: Tensor,
    advantages: Tensor,
    mask: Tensor,
    *,
    clip_eps_low: float = 0.2,
    clip_eps_high: float | None = None,
    is_cap: float = 2.0,
    proximal_logprobs: Tensor | None = None,
    ref_logprobs: Tensor | None = None,
    kl_coef: float = 0.0,
) -> GRPOLoss:
    """GRPO's token-level clipped surrogate, averaged over every unmasked token of the batch.

    ``logprobs`` carries the gradient (the current policy π_θ); ``behaviour_logprobs`` are the ones the
    generator recorded; ``proximal_logprobs`` switches on decoupled mode; ``ref_logprobs`` with
    ``kl_coef > 0`` adds ``kl_coef · k3(π_θ ‖ π_ref)``.
    """
    if logprobs.shape != behaviour_logprobs.shape or logprobs.shape != mask.shape:
        raise InputError(
            f"logprobs {tuple(logprobs.shape)}, behaviour_logprobs {tuple(behaviour_logprobs.shape)} "
            f"and mask {tuple(mask.shape)} must have one shape",
            location="grpo_loss",
        )
    if is_cap < 1.0:
        raise InputError(f"is_cap must be >= 1, got {is_cap}", location="is_cap")
    eps_high = clip_eps_low if clip_eps_high is None else clip_eps_high
    if advantages.dim() == logprobs.dim() - 1:
        advantages = advantages.unsqueeze(-1)
    keep = mask.bool()

    def only_kept(values: Tensor) -> Tensor:
        # Padding may hold anything (-inf log-probs, garbage ratios): zero it before any arithmetic, so
        # no NaN can reach the gradient through a branch whose value is later masked out.
        return torch.where(keep, values.to(logprobs.dtype), torch.zeros((), dtype=logprobs.dtype))

    logprobs = only_kept(logprobs)
    adv = only_kept(advantages.to(logprobs.dtype).expand_as(logprobs))
    behaviour = only_kept(behaviour_logprobs)
    if proximal_logprobs is not None:
        proximal_logprobs = only_kept(proximal_logprobs)
    if ref_logprobs is not None:
        ref_logprobs = only_kept(ref_logprobs)
    log_cap = math.log(is_cap)

    if proximal_logprobs is None:
        # The ratio against μ is the PPO ratio; truncation replaces r by C (value) and its gradient
        # r·∇logπ by C·∇logπ. Both branches of the `where` stay finite so the unused one cannot turn
        # the gradient into NaN.
        log_ratio = logprobs - behaviour
        raw_log_is = log_ratio.detach()
        truncated = raw_log_is > log_cap
        unit_with_grad = torch.exp(log_ratio - raw_log_is)  # value 1, gradient ∇logπ
        ratio = torch.where(truncated, is_cap * unit_with_grad, torch.exp(log_ratio.clamp(max=log_cap)))
        weight = torch.ones_like(ratio)
        old = behaviour
    else:
        proximal = proximal_logprobs.detach()
        raw_log_is = proximal - behaviour
        truncated = raw_log_is > log_cap
        weight = torch.exp(raw_log_is.clamp(max=log_cap))
        ratio = torch.exp((logprobs - proximal).clamp(max=_MAX_LOG_RATIO))
        old = proximal

    unclipped = ratio * adv
    clipped = ratio.clamp(1.0 - clip_eps_low, 1.0 + eps_high) * adv
    objective = weight * torch.minimum(unclipped, clipped)
    loss = -masked_mean(objective, keep)

    metrics: dict[str, float] = {}
    if ref_logprobs is not None and kl_coef > 0.0:
        kl = masked_mean(kl_k3(logprobs, ref_logprobs), keep)
        loss = loss + kl_coef * kl
        metrics["kl_ref"] = float(kl.detach())
    elif kl_coef > 0.0:
        raise InputError(
            "kl_coef > 0 needs the reference policy's log-probs",
            location="ref_logprobs",
            hint="pass ref_logprobs, or set kl_coef to 0",
        )

    with torch.no_grad():
        ratio_value = ratio.detach()
        was_clipped = ((ratio_value > 1.0 + eps_high) & (adv > 0)) | (
            (ratio_value < 1.0 - clip_eps_low) & (adv < 0)
        )
        raw_is = torch.exp(raw_log_is.clamp(max=_MAX_LOG_RATIO))
        log_r = logprobs.detach() - old
        metrics.update(
            loss=float(loss.detach()),
            clip_fraction=float(masked_mean(was_clipped.to(logprobs.dtype), keep)),
            approx_kl=float(masked_mean(torch.exp(log_r.clamp(max=_MAX_LOG_RATIO)) - 1.0 - log_r, keep)),
            is_ratio_mean=float(masked_mean(raw_is, keep)),
            is_ratio_max=float(_masked_max(raw_is, keep)),
            is_truncated_fraction=float(masked_mean(truncated.to(logprobs.dtype), keep)),
        )
    return GRPOLoss(loss=loss, metrics=metrics)
