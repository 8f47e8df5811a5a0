"""The supervised loss against numbers worked out by hand."""

from __future__ import annotations

import math

import pytest
import torch

from learner.grpo import token_logprobs
from learner.sft import sft_loss
from schemas.errors import InputError

torch.set_num_threads(1)

LN = math.log


def test_sft_loss_is_the_mean_nll_of_the_completion_tokens_only() -> None:
    # row 0: a prompt token (masked out, log-prob ln 1/8) then two completion tokens ln 1/2 and ln 1/4;
    # row 1: one completion token ln 1, then padding holding -inf. Mean over the three completion
    # tokens: -(ln 1/2 + ln 1/4 + ln 1) / 3 = (ln 2 + ln 4) / 3 = ln 2
    logprobs = torch.tensor([[LN(1 / 8), LN(1 / 2), LN(1 / 4)], [0.0, -math.inf, -math.inf]])
    mask = torch.tensor([[False, True, True], [True, False, False]])
    assert float(sft_loss(logprobs, mask)) == pytest.approx(LN(2), abs=1e-6)


def test_sft_loss_gradient_raises_the_target_and_touches_no_prompt_logit() -> None:
    # one completion position with logits [0, 0] and target 1: p = 1/2, loss ln 2, and the gradient of
    # -log softmax_1 is softmax - onehot = [1/2, -1/2]; the prompt position (masked) gets none
    logits = torch.zeros((1, 2, 2), dtype=torch.float64, requires_grad=True)
    loss = sft_loss(token_logprobs(logits, torch.tensor([[0, 1]])), torch.tensor([[False, True]]))
    loss.backward()  # type: ignore[no-untyped-call]
    assert float(loss) == pytest.approx(LN(2))
    assert logits.grad is not None
    assert logits.grad[0, 1].tolist() == pytest.approx([0.5, -0.5])
    assert logits.grad[0, 0].tolist() == [0.0, 0.0]


def test_sft_loss_of_no_completion_token_is_zero() -> None:
    assert float(sft_loss(torch.full((1, 2), -math.inf), torch.zeros((1, 2), dtype=torch.bool))) == 0.0


def test_sft_loss_rejects_mismatched_shapes() -> None:
    with pytest.raises(InputError):
        sft_loss(torch.zeros((1, 2)), torch.ones((1, 3), dtype=torch.bool))
