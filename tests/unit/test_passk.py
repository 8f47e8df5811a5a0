"""pass@k, the unbiased estimator."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schemas.errors import InputError
from streams.reward.passk import mean_pass_at_k, pass_at_k, pass_at_k_table


def test_reference_vector() -> None:
    assert abs(pass_at_k(10, 3, 1) - 0.3) < 1e-12
    assert abs(pass_at_k(10, 3, 5) - 11 / 12) < 1e-12
    assert pass_at_k(10, 3, 10) == 1.0


def test_edges() -> None:
    assert pass_at_k(5, 0, 1) == 0.0
    assert pass_at_k(5, 5, 1) == 1.0
    assert pass_at_k(5, 1, 5) == 1.0
    with pytest.raises(InputError):
        pass_at_k(3, 1, 5)
    with pytest.raises(InputError):
        pass_at_k(3, 4, 1)


@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_matches_the_binomial_form(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    exact = 1.0 - math.comb(n - c, k) / math.comb(n, k)
    assert abs(pass_at_k(n, c, k) - exact) < 1e-12


def test_per_task_and_policy_version() -> None:
    outcomes = [("a", 1, i < 3) for i in range(10)] + [("a", 2, True)] * 10 + [("b", 1, False)] * 4
    rows = {(r.task_id, r.policy_version): r for r in pass_at_k_table(outcomes, ks=(1, 5, 10))}
    assert abs(rows[("a", 1)].values[5] - 11 / 12) < 1e-12
    assert rows[("a", 2)].values == {1: 1.0, 5: 1.0, 10: 1.0}
    assert rows[("b", 1)].values == {1: 0.0}  # k > n is left out, not guessed
    means = mean_pass_at_k(rows.values())
    assert abs(means[1][1] - 0.15) < 1e-12
    assert means[1][10] == 1.0  # only task a has 10 samples under version 1
