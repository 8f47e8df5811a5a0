"""Sampling semantics shared by every backend: temperature, top-p, greedy, stop strings, seeds."""

from __future__ import annotations

import math

import pytest
import torch

from producers.generator.sampling import derive_seed, find_stop, processed_logprobs, sample_next

torch.set_num_threads(1)


def _probs(values: list[float]) -> torch.Tensor:
    return torch.log(torch.tensor([values]))


def test_top_p_keeps_the_smallest_set_reaching_p_and_renormalises() -> None:
    logits = _probs([0.5, 0.3, 0.15, 0.05])
    out = processed_logprobs(logits, temperature=1.0, top_p=0.8).exp()[0]
    # 0.05 + 0.15 = 0.2 <= 1 - 0.8: both removed; 0.5 and 0.3 renormalised
    assert out[2] == 0 and out[3] == 0
    assert math.isclose(float(out[0]), 0.5 / 0.8, rel_tol=1e-5)
    assert math.isclose(float(out[1]), 0.3 / 0.8, rel_tol=1e-5)


def test_top_p_always_keeps_the_most_likely_token() -> None:
    out = processed_logprobs(_probs([0.9, 0.05, 0.05]), temperature=1.0, top_p=0.01).exp()[0]
    assert out.tolist() == [1.0, 0.0, 0.0]


def test_temperature_applies_before_top_p() -> None:
    logits = torch.tensor([[2.0, 1.0, 0.0]])
    hot = processed_logprobs(logits, temperature=2.0, top_p=1.0)
    assert torch.allclose(hot, torch.log_softmax(logits / 2.0, dim=-1))


def test_greedy_takes_argmax_and_reports_unprocessed_logprob() -> None:
    logits = torch.tensor([[0.1, 3.0, 0.2]])
    logprobs = processed_logprobs(logits, temperature=0.0, top_p=0.5)
    assert torch.allclose(logprobs, torch.log_softmax(logits, dim=-1))
    assert sample_next(logprobs, 0.0, [torch.Generator()]).tolist() == [1]


def test_each_row_draws_from_its_own_generator() -> None:
    logprobs = torch.log_softmax(torch.zeros(2, 1000), dim=-1)
    first = sample_next(logprobs, 1.0, [torch.Generator().manual_seed(1), torch.Generator().manual_seed(2)])
    again = sample_next(logprobs[:1], 1.0, [torch.Generator().manual_seed(1)])
    assert first[0] == again[0]


def test_find_stop_returns_the_earliest_match() -> None:
    assert find_stop("abc\ndef x", ["def", "\n"]) == (3, "\n")
    assert find_stop("abc", ["zz", ""]) is None


def test_derived_seeds_are_stable_and_distinct() -> None:
    assert derive_seed(0, "g1", 0) == derive_seed(0, "g1", 0)
    assert derive_seed(0, "g1", 0) != derive_seed(0, "g1", 1)
    assert 0 <= derive_seed("x") < 2**63


def _ascending_rule(logits: torch.Tensor, top_p: float) -> torch.Tensor:
    """Top-p as the HF warper and vLLM write it: drop ascending tokens while cumulative mass <= 1 - p."""
    sorted_logits, order = torch.sort(logits, dim=-1, descending=False)
    remove_sorted = sorted_logits.softmax(dim=-1).cumsum(dim=-1) <= (1.0 - top_p)
    remove_sorted[..., -1] = False
    return remove_sorted.scatter(-1, order, remove_sorted)


@pytest.mark.parametrize("scale", [0.5, 3.0, 12.0], ids=["flat", "medium", "peaked"])
@pytest.mark.parametrize("top_p", [0.5, 0.9, 0.95])
def test_top_p_keeps_exactly_the_set_of_the_reference_rule(scale: float, top_p: float) -> None:
    logits = torch.randn(6, 5000, generator=torch.Generator().manual_seed(int(scale * 10))) * scale
    ours = processed_logprobs(logits, temperature=1.0, top_p=top_p)
    assert torch.equal(torch.isinf(ours), _ascending_rule(logits, top_p))


def test_draws_follow_the_processed_distribution_and_never_pick_removed_tokens() -> None:
    logprobs = processed_logprobs(torch.log(torch.tensor([[0.6, 0.25, 0.1, 0.05]])), 1.0, top_p=0.8)
    generator = torch.Generator().manual_seed(0)
    counts = torch.zeros(4)
    for _ in range(4000):
        counts[sample_next(logprobs, 1.0, [generator])[0]] += 1
    assert counts[2] == 0 and counts[3] == 0
    assert abs(counts[0] / 4000 - 0.6 / 0.85) < 0.03
