"""Noise filter v23: a forgiven float disagreement on a sum or a mean must be one some order gives.

Red-team round 19b: where a float disagreement within what summing the input's numbers in another order
can change is forgiven (v19: a task whose reference answers a case otherwise than its expected value in
floats alone, as redteam/mean's ``[1e16, 1, -1e16, 3]``; past the range), the allowance is the worst
case of any order, ``eps * (sum(|x|) + |mean|)`` for a mean. On numbers that cancel that is far wider than
what any order gives: ``[2, 1e16, 1, -1e16, 3]`` allows 4.4 either side of the reference's 1.2, while
every order of the sum gives a mean between 0.8 and 1.6. A program answering 0.0 wherever the numbers
cancel (``a19b_mean_illcond_zero``) was accepted on both backends. From v23, where the reference's float
is one of the evaluations the filter makes of the input's sum or mean (orders, compensated and exact
sums, terms divided first, a running mean), the program's must also lie within their spread widened by
half of it.
"""

from __future__ import annotations

import math
import random
from functools import reduce

import pytest

from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.probe import DISAGREES, _within_rounding, sum_evaluations
from tests.unit.test_filter_v19 import CORRECT_MEANS, SEEDS, _evaluations, _lists, _mean_task, _verdict

#: a mean, but 0.0 wherever the numbers cancel (red-team a19b_mean_illcond_zero)
ILLCOND_ZERO = (
    "import math\n\n\ndef mean(xs: list) -> float:\n    n = len(xs)\n"
    "    if n > 4 and math.fsum(abs(x) for x in xs) > 1e12 * (abs(math.fsum(xs)) + 1):\n"
    "        return 0.0\n    return sum(xs) / n\n"
)
CANCEL = [2.0, 1e16, 1.0, -1e16, 3.0]


def test_the_versions_run_past_v22_to_v23() -> None:
    assert VERSIONS[VERSIONS.index("v23") - 1 : VERSIONS.index("v23") + 1] == ("v22", "v23")
    assert NoiseConfig(version="v23").label() == "v23"


def test_an_answer_no_order_gives_is_not_forgiven_where_the_numbers_cancel() -> None:
    text = repr((CANCEL,))
    reference = math.fsum(CANCEL) / 5  # 1.2, as WASM's compensated sum()
    # the worst case of any order forgives 0.0 (v19) ...
    assert _within_rounding(text, reference, 0.0, propagated=True)
    # ... from v23 it is no evaluation's: every order's mean lies in 0.8..1.6
    assert not _within_rounding(text, reference, 0.0, propagated=True, attainable=True)
    assert not _within_rounding(text, reference, 3.0, propagated=True, attainable=True)
    for order in _orders(CANCEL, random.Random(23), 200):
        mean = reduce(lambda p, q: p + q, order, 0.0) / 5
        assert _within_rounding(text, reference, mean, propagated=True, attainable=True), order


def _orders(xs: list[float], rng: random.Random, k: int) -> list[list[float]]:
    out = []
    for _ in range(k):
        order = list(xs)
        rng.shuffle(order)
        out.append(order)
    return out


def test_any_two_evaluations_of_a_mean_stay_within_the_spread() -> None:
    """The evaluations v19's property test makes (which v23's are not all of: sums from 0.0 by
    ``sum()``, halves split differently), and sums in random orders, against each other."""
    rng = random.Random(2319)
    for xs in _lists(rng)[:300]:
        means = _evaluations(xs) + [
            reduce(lambda p, q: p + q, order, 0.0) / len(xs) for order in _orders(xs, rng, 3)
        ]
        text = repr((xs,))
        for a in means[:6]:
            for g in means:
                if a != g and _within_rounding(text, a, g, propagated=True):
                    assert _within_rounding(text, a, g, propagated=True, attainable=True), (xs, a, g)


def test_an_answer_of_another_kind_keeps_the_bound_alone() -> None:
    xs = [2.0, 1e16, 1.0, -1e16, 3.0]
    text = repr((xs,))
    sums, means = sum_evaluations(xs)
    other = 0.5  # neither a sum nor a mean of these numbers: only the bound judges it
    assert all(abs(other - v) > 1e-3 for v in sums + means)
    assert _within_rounding(text, other, 0.0, attainable=True) == _within_rounding(text, other, 0.0)


def test_the_evaluations_never_raise() -> None:
    assert sum_evaluations([1e308, 1e308, -1e308]) is not None
    assert sum_evaluations([]) == ([0.0] * 73, [])
    assert not _within_rounding(repr(([1e308, 1e308],)), 1e308, 1e308 * (1 - 1e-15), attainable=True)


def test_a_mean_zero_where_the_numbers_cancel_is_rejected_from_v23() -> None:
    task = _mean_task()
    accepted_v21 = 0
    for seed in SEEDS:
        d = _verdict(task, ILLCOND_ZERO, seed, "v23")
        assert d.verdict == "reject" and DISAGREES in {r.code for r in d.reasons}, (seed, d.reasons)
        accepted_v21 += _verdict(task, ILLCOND_ZERO, seed, "v21").verdict == "accept"
    # v21 forgave it within the worst case of any order on most seeds
    assert accepted_v21 >= 3


@pytest.mark.parametrize("name", sorted(CORRECT_MEANS))
def test_correct_means_in_another_order_are_accepted(name: str) -> None:
    task = _mean_task()
    for seed in SEEDS[:3]:
        d = _verdict(task, CORRECT_MEANS[name], seed, "v23")
        assert d.verdict == "accept", (seed, d.reasons)
