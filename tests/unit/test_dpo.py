"""DPO's pairing rule and loss against numbers worked out by hand."""

from __future__ import annotations

import math

import pytest
import torch

from learner.dpo import Candidate, Pair, dpo_loss, pair_chunks, preference_pairs, sequence_logprobs
from schemas.errors import InputError

torch.set_num_threads(1)


def _t(*values: float) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


# ------------------------------------------------------------------------------------------- pairing
def test_accepted_samples_pair_by_reward_widest_gap_first() -> None:
    group = [Candidate("a", 1.0, "accept"), Candidate("b", 0.25, "accept"), Candidate("c", 0.5, "accept")]
    assert preference_pairs(group, min_margin=0.1) == [
        Pair("a", "b", 0.75),
        Pair("a", "c", 0.5),
        Pair("c", "b", 0.25),
    ]


def test_near_ties_and_ties_make_no_pair() -> None:
    group = [Candidate("a", 0.50, "accept"), Candidate("b", 0.45, "accept"), Candidate("c", 0.5, "accept")]
    assert preference_pairs(group, min_margin=0.1) == []
    # even with no margin asked, equal rewards have no direction to teach
    assert [(p.chosen, p.rejected) for p in preference_pairs(group, min_margin=0.0)] == [
        ("a", "b"),
        ("c", "b"),
    ]


def test_a_rejected_sample_loses_to_every_accepted_one_whatever_its_reward() -> None:
    # a hack earns full reward; the rule must not prefer it to an honest partial answer
    group = [Candidate("hack", 1.0, "reject"), Candidate("honest", 0.3, "accept")]
    assert preference_pairs(group) == [Pair("honest", "hack", pytest.approx(-0.7))]  # type: ignore[arg-type]


def test_masked_samples_never_pair_and_two_rejected_ones_do_not_pair_with_each_other() -> None:
    group = [
        Candidate("flaky", 1.0, "mask"),
        Candidate("r1", 0.0, "reject"),
        Candidate("r2", 0.9, "reject"),
        Candidate("ok", 0.5, "accept"),
    ]
    pairs = preference_pairs(group)
    assert {(p.chosen, p.rejected) for p in pairs} == {("ok", "r1"), ("ok", "r2")}


def test_a_review_in_force_decides_which_side_a_sample_takes() -> None:
    # the caller resolves reviews: the same rewards with a reviewer's reject on the best sample flip it
    automated = [Candidate("x", 1.0, "accept"), Candidate("y", 0.0, "accept")]
    reviewed = [Candidate("x", 1.0, "reject"), Candidate("y", 0.0, "accept")]
    assert [(p.chosen, p.rejected) for p in preference_pairs(automated)] == [("x", "y")]
    assert [(p.chosen, p.rejected) for p in preference_pairs(reviewed)] == [("y", "x")]


def test_pairs_do_not_depend_on_the_order_samples_arrive_in_and_can_be_capped() -> None:
    group = [Candidate(str(i), i / 10, "accept") for i in range(6)]
    assert preference_pairs(group) == preference_pairs(list(reversed(group)))
    top = preference_pairs(group, max_pairs=2)
    assert [(p.chosen, p.rejected) for p in top] == [("5", "0"), ("4", "0")]


def test_pairing_refuses_bad_arguments_naming_them() -> None:
    with pytest.raises(InputError, match="min_margin"):
        preference_pairs([], min_margin=-1)
    with pytest.raises(InputError, match="max_pairs"):
        preference_pairs([], max_pairs=-1)
    with pytest.raises(InputError, match="twice"):
        preference_pairs([Candidate("a", 1, "accept"), Candidate("a", 0, "accept")])


# ---------------------------------------------------------------------------------------------- loss
def test_pair_chunks_bound_distinct_samples_per_step_and_keep_the_order() -> None:
    pairs = [Pair("a", "b", 1.0), Pair("a", "c", 1.0), Pair("d", "b", 0.5), Pair("e", "f", 0.2)]
    # a, b, c fit three rows; d would make a fourth
    assert pair_chunks(pairs, max_rows=3) == [pairs[:2], pairs[2:3], pairs[3:]]
    assert pair_chunks(pairs, max_rows=6) == [pairs]
    # a pair never splits: below two rows, each pair is a step of its own
    assert pair_chunks(pairs, max_rows=1) == [[p] for p in pairs]
    assert pair_chunks([], max_rows=4) == []


def test_sequence_logprobs_sum_the_completion_and_ignore_masked_infinities() -> None:
    lp = _t(-1.0, -0.5, -math.inf).reshape(1, 3)
    assert sequence_logprobs(lp, torch.tensor([[False, True, False]])).tolist() == [-0.5]
    with pytest.raises(InputError, match="one shape"):
        sequence_logprobs(lp, torch.tensor([[True]]))


def test_loss_at_the_reference_is_ln_2_with_zero_margin() -> None:
    # policy = reference: both implicit rewards 0, h = 0, loss = -log σ(0) = ln 2, accuracy 0 (no pair
    # ordered yet)
    out = dpo_loss(_t(-3.0), _t(-2.0), _t(-3.0), _t(-2.0), beta=0.1)
    assert float(out.loss) == pytest.approx(math.log(2))
    assert out.margin == 0.0 and out.accuracy == 0.0


def test_loss_implicit_rewards_margin_and_accuracy_by_hand() -> None:
    # pair 0: chosen up 2 nats vs the reference, rejected down 1 -> rewards 0.2 and -0.1, h = 0.3
    # pair 1: chosen down 1, rejected up 1 -> rewards -0.1 and 0.1, h = -0.2
    out = dpo_loss(_t(-1.0, -4.0), _t(-6.0, -1.0), _t(-3.0, -3.0), _t(-5.0, -2.0), beta=0.1)
    assert out.chosen_reward.tolist() == pytest.approx([0.2, -0.1])
    assert out.rejected_reward.tolist() == pytest.approx([-0.1, 0.1])
    assert out.margin == pytest.approx(0.05)
    assert out.accuracy == 0.5
    want = (-math.log(1 / (1 + math.exp(-0.3))) - math.log(1 / (1 + math.exp(0.2)))) / 2
    assert float(out.loss) == pytest.approx(want)


def test_gradient_raises_the_chosen_side_lowers_the_rejected_and_leaves_the_reference_alone() -> None:
    # one pair with h = β·((−1 − −2) − (−1 − −1)) = 0.5·1 = 0.5: d loss / d log π(c) = −β(1 − σ(h)),
    # d loss / d log π(r) = +β(1 − σ(h))
    pc, pr = _t(-1.0).requires_grad_(), _t(-1.0).requires_grad_()
    rc, rr = _t(-2.0).requires_grad_(), _t(-1.0).requires_grad_()
    dpo_loss(pc, pr, rc, rr, beta=0.5).loss.backward()  # type: ignore[no-untyped-call]
    step = 0.5 * (1 - 1 / (1 + math.exp(-0.5)))
    assert pc.grad is not None and pr.grad is not None
    assert float(pc.grad) == pytest.approx(-step)
    assert float(pr.grad) == pytest.approx(step)
    # the reference is frozen: no gradient reaches it
    assert rc.grad is None and rr.grad is None


def test_a_well_ordered_pair_contributes_little() -> None:
    far = dpo_loss(_t(0.0), _t(-100.0), _t(0.0), _t(0.0), beta=1.0)
    # -log σ(100) = log(1 + e^-100) ~ 3.7e-44: the pair's gradient is as small
    assert 0.0 <= float(far.loss) < 1e-40
    assert far.accuracy == 1.0


def test_loss_refuses_bad_arguments_naming_them() -> None:
    with pytest.raises(InputError, match="beta"):
        dpo_loss(_t(0.0), _t(0.0), _t(0.0), _t(0.0), beta=0.0)
    with pytest.raises(InputError, match="one shape"):
        dpo_loss(_t(0.0, 1.0), _t(0.0), _t(0.0), _t(0.0), beta=0.1)


def test_no_pairs_give_a_zero_loss_that_still_backpropagates() -> None:
    empty = torch.zeros(0, dtype=torch.float64, requires_grad=True)
    out = dpo_loss(empty, empty, empty.detach(), empty.detach(), beta=0.1)
    out.loss.backward()  # type: ignore[no-untyped-call]
    assert float(out.loss.detach()) == 0.0 and out.accuracy == 0.0
