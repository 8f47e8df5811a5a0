"""The learning rule against numbers worked out by hand (see each test's comments)."""

from __future__ import annotations

import math

import pytest
import torch

from learner.grpo import METRIC_NAMES, group_advantages, grpo_loss, kl_k3, masked_mean, token_logprobs
from schemas.errors import InputError

torch.set_num_threads(1)

LN = math.log


def leaf(values: list[list[float]]) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64, requires_grad=True)


def backprop(loss: torch.Tensor) -> None:
    loss.backward()  # type: ignore[no-untyped-call]


def t(values: object) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


# -- token log-probs ----------------------------------------------------------------------------------


def test_token_logprobs_gathers_the_target_under_softmax() -> None:
    # logits [0, ln 3]: softmax = [1/4, 3/4]; target 1 -> ln(3/4), target 0 -> ln(1/4)
    logits = torch.tensor([[[0.0, LN(3)], [0.0, LN(3)]]])
    out = token_logprobs(logits, torch.tensor([[1, 0]]))
    assert out.dtype == torch.float32
    assert out.tolist()[0] == pytest.approx([LN(0.75), LN(0.25)], abs=1e-6)


def test_token_logprobs_applies_the_sampling_temperature() -> None:
    # temperature 2: logits become [0, ln(3)/2] -> p(1) = sqrt3 / (1 + sqrt3)
    logits = torch.tensor([[[0.0, LN(3)]]])
    out = token_logprobs(logits, torch.tensor([[1]]), temperature=2.0)
    assert float(out[0, 0]) == pytest.approx(LN(math.sqrt(3) / (1 + math.sqrt(3))), abs=1e-6)


def test_token_logprobs_is_float32_even_for_bf16_logits() -> None:
    logits = torch.tensor([[[0.0, LN(3)]]], dtype=torch.bfloat16)
    assert token_logprobs(logits, torch.tensor([[1]])).dtype == torch.float32


# -- group advantages ---------------------------------------------------------------------------------


def test_group_advantages_mean_centred_and_std_normalised() -> None:
    # rewards [1, 0, 0, 1]: mean 0.5, centred [.5, -.5, -.5, .5], population std 0.5 -> [1, -1, -1, 1]
    assert group_advantages([1.0, 0.0, 0.0, 1.0]) == pytest.approx([1.0, -1.0, -1.0, 1.0])
    # [3, 1] without std: mean 2 -> [1, -1]
    assert group_advantages([3.0, 1.0], normalise_std=False) == pytest.approx([1.0, -1.0])
    # [1, 0, 0, 0]: mean .25, centred [.75, -.25, -.25, -.25], std sqrt(3)/4
    s = math.sqrt(3) / 4
    assert group_advantages([1.0, 0.0, 0.0, 0.0]) == pytest.approx(
        [0.75 / s, -0.25 / s, -0.25 / s, -0.25 / s]
    )


def test_group_advantages_of_a_uniform_group_are_zero() -> None:
    assert group_advantages([0.7, 0.7, 0.7]) == [0.0, 0.0, 0.0]
    assert group_advantages([0.2]) == [0.0]


def test_group_advantages_reject_empty_and_non_finite() -> None:
    with pytest.raises(InputError, match="at least one"):
        group_advantages([])
    with pytest.raises(InputError, match=r"rewards\[1\]"):
        group_advantages([1.0, float("nan")])


def test_advantages_import_without_torch() -> None:
    # the experience processor imports this module; it must not drag torch or DeepSpeed in
    import subprocess
    import sys

    code = (
        "import sys, schemas.advantages; assert 'torch' not in sys.modules and 'deepspeed' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- importance ratio ---------------------------------------------------------------------------------


@pytest.mark.parametrize("decoupled", [False, True])
def test_is_ratio_is_exactly_one_on_policy(decoupled: bool) -> None:
    # behaviour == current policy: ratio exp(0) = 1 exactly, nothing truncated or clipped.
    # advantages per row [1, -1], mask keeps 3 tokens: A = 1, 1, -1 -> objective mean 1/3, loss -1/3.
    # gradient of the loss w.r.t. each kept log-prob: -A/3 -> [[-1/3, -1/3], [1/3, 0]]
    lp = leaf([[LN(0.5), LN(0.25)], [LN(0.1), LN(0.9)]])
    behaviour = lp.detach().clone()
    mask = torch.tensor([[True, True], [True, False]])
    out = grpo_loss(lp, behaviour, t([1.0, -1.0]), mask, proximal_logprobs=lp.detach() if decoupled else None)
    assert out.metrics["is_ratio_mean"] == 1.0
    assert out.metrics["is_ratio_max"] == 1.0
    assert out.metrics["is_truncated_fraction"] == 0.0
    assert out.metrics["clip_fraction"] == 0.0
    assert out.metrics["approx_kl"] == 0.0
    assert float(out.loss.detach()) == pytest.approx(-1 / 3)
    backprop(out.loss)
    assert lp.grad is not None
    assert lp.grad.flatten().tolist() == pytest.approx([-1 / 3, -1 / 3, 1 / 3, 0.0])


def test_stale_sample_is_truncated_at_the_cap_coupled() -> None:
    # behaviour p = 0.1, current p = 0.5 -> raw ratio 5 > cap 2.
    # A = -1: truncated ratio value 2, clip range [0.8, 1.2]: min(2*(-1), 1.2*(-1)) = -2 -> loss +2.
    # gradient is C*A*dlogp instead of r*A*dlogp: dloss/dlogp = -(2 * -1) = 2 (not 5).
    lp = leaf([[LN(0.5)]])
    out = grpo_loss(lp, t([[LN(0.1)]]), t([-1.0]), torch.tensor([[True]]), is_cap=2.0)
    assert out.metrics["is_ratio_max"] == pytest.approx(5.0)
    assert out.metrics["is_truncated_fraction"] == 1.0
    assert float(out.loss.detach()) == pytest.approx(2.0)
    backprop(out.loss)
    assert lp.grad is not None
    assert float(lp.grad[0, 0]) == pytest.approx(2.0)


def test_stale_sample_with_positive_advantage_is_clipped_not_amplified() -> None:
    # same ratio 5 (truncated to 2), A = +1: min(2*1, 1.2*1) = 1.2 -> loss -1.2, no gradient, clipped
    lp = leaf([[LN(0.5)]])
    out = grpo_loss(lp, t([[LN(0.1)]]), t([1.0]), torch.tensor([[True]]), is_cap=2.0)
    assert float(out.loss.detach()) == pytest.approx(-1.2)
    assert out.metrics["clip_fraction"] == 1.0
    backprop(out.loss)
    assert lp.grad is not None
    assert float(lp.grad[0, 0]) == 0.0


def test_ratio_below_the_cap_is_not_truncated() -> None:
    # raw ratio 0.5/0.3 = 5/3 < cap 2, A = -1: min(-5/3, -1.2) = -5/3; gradient -A*r = 5/3
    lp = leaf([[LN(0.5)]])
    out = grpo_loss(lp, t([[LN(0.3)]]), t([-1.0]), torch.tensor([[True]]), is_cap=2.0)
    assert out.metrics["is_truncated_fraction"] == 0.0
    assert float(out.loss.detach()) == pytest.approx(5 / 3)
    backprop(out.loss)
    assert lp.grad is not None
    assert float(lp.grad[0, 0]) == pytest.approx(5 / 3)


def test_decoupled_mode_weights_by_truncated_proximal_over_behaviour() -> None:
    # proximal = current = 0.5, behaviour 0.1: w = min(5, 2) = 2, r = 1 -> objective 2*A.
    # A = 0.5: loss -1, gradient -w*A = -1; A = -0.5: loss +1, gradient +1
    for adv, loss, grad in [(0.5, -1.0, -1.0), (-0.5, 1.0, 1.0)]:
        lp = leaf([[LN(0.5)]])
        out = grpo_loss(
            lp, t([[LN(0.1)]]), t([adv]), torch.tensor([[True]]), is_cap=2.0, proximal_logprobs=lp.detach()
        )
        assert out.metrics["is_ratio_max"] == pytest.approx(5.0)
        assert out.metrics["is_truncated_fraction"] == 1.0
        assert float(out.loss.detach()) == pytest.approx(loss)
        backprop(out.loss)
        assert lp.grad is not None
        assert float(lp.grad[0, 0]) == pytest.approx(grad)


def test_decoupled_mode_clips_against_the_proximal_policy() -> None:
    # proximal 0.4 = behaviour (w = 1); current 0.6: r = 1.5 > 1.2 with A = 1 -> clipped, no gradient
    lp = leaf([[LN(0.6)]])
    out = grpo_loss(lp, t([[LN(0.4)]]), t([1.0]), torch.tensor([[True]]), proximal_logprobs=t([[LN(0.4)]]))
    assert out.metrics["is_ratio_max"] == pytest.approx(1.0)
    assert out.metrics["clip_fraction"] == 1.0
    assert float(out.loss.detach()) == pytest.approx(-1.2)
    backprop(out.loss)
    assert lp.grad is not None
    assert float(lp.grad[0, 0]) == 0.0


# -- clipping at the boundaries -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ratio", "adv", "clipped", "grad"),
    [
        # just inside the upper bound: unclipped, dloss/dlogp = -A*r
        (1.19, 1.0, False, -1.19),
        # just past it with A > 0: clipped, the gradient vanishes
        (1.21, 1.0, True, 0.0),
        # past the upper bound with A < 0: min picks r*A (pessimistic), gradient -A*r = 1.21
        (1.21, -1.0, False, 1.21),
        # just inside the lower bound with A < 0: unclipped, gradient 0.81
        (0.81, -1.0, False, 0.81),
        # just past the lower bound with A < 0: clipped, no gradient
        (0.79, -1.0, True, 0.0),
        # below the lower bound with A > 0: min picks r*A, gradient -0.79
        (0.79, 1.0, False, -0.79),
    ],
)
def test_clip_boundaries(ratio: float, adv: float, clipped: bool, grad: float) -> None:
    behaviour = LN(0.5)
    lp = leaf([[behaviour + LN(ratio)]])
    out = grpo_loss(lp, t([[behaviour]]), t([adv]), torch.tensor([[True]]), clip_eps_low=0.2, is_cap=2.0)
    assert out.metrics["clip_fraction"] == (1.0 if clipped else 0.0)
    expected = min(ratio * adv, min(max(ratio, 0.8), 1.2) * adv)
    assert float(out.loss.detach()) == pytest.approx(-expected)
    backprop(out.loss)
    assert lp.grad is not None
    assert float(lp.grad[0, 0]) == pytest.approx(grad)


def test_asymmetric_clip_high() -> None:
    # clip_eps_high 0.28: ratio 1.25 with A = 1 is still inside [0.8, 1.28] -> loss -1.25, unclipped
    lp = leaf([[LN(0.5) + LN(1.25)]])
    out = grpo_loss(lp, t([[LN(0.5)]]), t([1.0]), torch.tensor([[True]]), clip_eps_high=0.28, is_cap=2.0)
    assert out.metrics["clip_fraction"] == 0.0
    assert float(out.loss.detach()) == pytest.approx(-1.25)


# -- masks --------------------------------------------------------------------------------------------


def test_masked_tokens_contribute_nothing() -> None:
    # The same two real tokens, once alone and once padded with garbage (a huge stale ratio, an
    # infinite behaviour log-prob): identical loss and metrics, zero gradient on the padding.
    real = [[LN(0.5), LN(0.4)]]
    alone = leaf(real)
    a = grpo_loss(alone, t([[LN(0.5), LN(0.5)]]), t([1.0]), torch.ones(1, 2, dtype=torch.bool))
    padded = leaf([[LN(0.5), LN(0.4), LN(0.9), 0.0]])
    b = grpo_loss(
        padded,
        t([[LN(0.5), LN(0.5), LN(1e-9), -math.inf]]),
        t([1.0]),
        torch.tensor([[True, True, False, False]]),
    )
    assert float(b.loss.detach()) == pytest.approx(float(a.loss.detach()))
    assert b.metrics == pytest.approx(a.metrics)
    backprop(b.loss)
    assert padded.grad is not None
    assert padded.grad.tolist()[0][2:] == [0.0, 0.0]
    assert not torch.isnan(padded.grad).any()


def test_fully_masked_batch_gives_zero_loss() -> None:
    lp = leaf([[LN(0.5)]])
    out = grpo_loss(lp, t([[LN(0.5)]]), t([1.0]), torch.tensor([[False]]))
    assert float(out.loss.detach()) == 0.0
    assert out.metrics["is_ratio_max"] == 0.0


def test_masked_mean() -> None:
    values = t([[1.0, math.nan], [3.0, math.inf]])
    assert float(masked_mean(values, torch.tensor([[True, False], [True, False]]))) == 2.0


# -- KL to the reference ------------------------------------------------------------------------------


def test_k3_kl_by_hand() -> None:
    # current 0.5, reference 0.25: rho = 0.5 -> k3 = 0.5 - 1 - ln 0.5 = ln 2 - 0.5
    assert float(kl_k3(t([LN(0.5)]), t([LN(0.25)]))) == pytest.approx(LN(2) - 0.5)
    assert float(kl_k3(t([LN(0.3)]), t([LN(0.3)]))) == 0.0


def test_kl_term_is_added_with_its_coefficient() -> None:
    # on-policy, A = 0 -> surrogate 0; loss = 0.1 * (ln 2 - 0.5)
    # d k3/d logp = 1 - rho = 0.5 -> gradient 0.1 * 0.5 = 0.05
    lp = leaf([[LN(0.5)]])
    out = grpo_loss(
        lp, lp.detach(), t([0.0]), torch.tensor([[True]]), ref_logprobs=t([[LN(0.25)]]), kl_coef=0.1
    )
    assert float(out.loss.detach()) == pytest.approx(0.1 * (LN(2) - 0.5))
    assert out.metrics["kl_ref"] == pytest.approx(LN(2) - 0.5)
    backprop(out.loss)
    assert lp.grad is not None
    assert float(lp.grad[0, 0]) == pytest.approx(0.05)


def test_kl_without_reference_is_an_input_error() -> None:
    with pytest.raises(InputError, match="reference"):
        grpo_loss(t([[0.0]]), t([[0.0]]), t([1.0]), torch.tensor([[True]]), kl_coef=0.1)


def test_approx_kl_by_hand() -> None:
    # behaviour 0.5, current 0.6: r = 1.2 -> k3 = 0.2 - ln 1.2
    lp = leaf([[LN(0.6)]])
    out = grpo_loss(lp, t([[LN(0.5)]]), t([1.0]), torch.tensor([[True]]), is_cap=2.0)
    assert out.metrics["approx_kl"] == pytest.approx(0.2 - LN(1.2))


def test_metric_names_are_fixed() -> None:
    out = grpo_loss(t([[0.0]]), t([[0.0]]), t([1.0]), torch.tensor([[True]]))
    assert set(out.metrics) == set(METRIC_NAMES) - {"staleness_hist", "tokens_per_s"}


def test_shape_mismatch_and_bad_cap_are_input_errors() -> None:
    with pytest.raises(InputError, match="one shape"):
        grpo_loss(t([[0.0, 0.0]]), t([[0.0]]), t([1.0]), torch.tensor([[True]]))
    with pytest.raises(InputError, match="is_cap"):
        grpo_loss(t([[0.0]]), t([[0.0]]), t([1.0]), torch.tensor([[True]]), is_cap=0.5)
