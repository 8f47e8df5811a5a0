"""Noise filter v19: a mean's float allowance is the sum's divided by the count, not the sum's own.

Red-team round 17: on a task whose reference answers a case otherwise than its expected value in floats
alone (redteam/mean's ``[1e16, 1, -1e16, 3]``: 0.75 by a left-to-right sum, 1.0 by WASM's compensated
``sum()``), a float disagreement on a generated input is forgiven within what summing the input's
numbers in another order can change, ``n * eps * sum(|x|)``. That is the bound of a sum; a mean is the
sum divided by n, and another order changes it n times less, so the mean rounded to 15 significant
digits (up to 22 units in a double's last place off) stayed within it on every input of the pinned plan
(``a17_mean_15_digits``). From v19 an answer that is the mean of the input's numbers gets the sum's bound
divided by the count, plus the division's own rounding: ``eps * (sum(|x|) + |mean|)``, which bounds what
any two evaluations of a mean that sum in some order can differ by.
"""

from __future__ import annotations

import math
import random
from functools import reduce

import pytest

from schemas.task import TaskPublished
from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.filter import decide
from streams.noise.probe import DISAGREES, _within_rounding
from streams.noise.rules import assess_task
from streams.probe.plan import probe_due, probe_run_index
from streams.reward.code_v5 import V5_COMPARE
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.hacks.redteam.tasks import all_tasks

V5 = V5_COMPARE.options()
SEEDS = ["5eed" * 8, *(f"{k:08x}" * 4 for k in range(5))]

#: the backend's reference: a compensated sum (WASM's Python sums floats as math.fsum does, nearly),
#: so it answers the task's ill-conditioned case 1.0 where the task expects 0.75: the task gets a band
COMPENSATED_REF = "import math\n\n\ndef mean(xs: list) -> float:\n    return math.fsum(xs) / len(xs)\n"
#: the mean rounded to 15 significant digits: up to 22 units in the last place off
MEAN_15_DIGITS = 'def mean(xs: list) -> float:\n    return float(f"{sum(xs) / len(xs):.15g}")\n'
CORRECT_MEANS = {
    "loop": (
        "def mean(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total / len(xs)\n"
    ),
    "statistics": "import statistics\n\n\ndef mean(xs):\n    return statistics.mean(xs)\n",
    "by_magnitude": "def mean(xs):\n    return sum(sorted(xs, key=abs)) / len(xs)\n",
    "reversed": "def mean(xs):\n    return sum(reversed(xs)) / len(xs)\n",
    "terms_divided": "def mean(xs):\n    return sum(x / len(xs) for x in xs)\n",
    "running": (
        "def mean(xs):\n    m = 0.0\n    for k, x in enumerate(xs, 1):\n"
        "        m += (x - m) / k\n    return m\n"
    ),
}


def _mean_task() -> TaskPublished:
    task = all_tasks()["redteam/mean"]
    return task.model_copy(update={"reference": COMPENSATED_REF})


def _verdict(task: TaskPublished, code: str, seed: str, version: str):  # type: ignore[no-untyped-def]
    first = simulated_run(task, code)
    assert probe_due(task, first)
    probe = simulated_run(task, code, run_index=probe_run_index(0), probe=True, seed=seed)
    reference = simulated_run(task, COMPENSATED_REF, sample_id=f"{task.task_id}#reference")
    quality = assess_task(task, V5, min_cases=2, reference_execution=reference)
    return decide(
        task=task,
        code=code,
        executions=[first, probe],
        config=NoiseConfig(version=version),  # type: ignore[arg-type]
        options=V5,
        task_quality=quality,
        probe_reference=simulated_reference_probe(task, seed=seed),
    )


def test_the_versions_run_past_v18_to_v19() -> None:
    assert VERSIONS[VERSIONS.index("v19") - 1 : VERSIONS.index("v19") + 1] == ("v18", "v19")
    assert NoiseConfig(version="v19").label() == "v19"


def test_a_mean_rounded_to_15_digits_is_rejected_from_v19() -> None:
    task = _mean_task()
    accepted_v18 = 0
    for seed in SEEDS:
        d = _verdict(task, MEAN_15_DIGITS, seed, "v19")
        assert d.verdict == "reject" and DISAGREES in {r.code for r in d.reasons}, (seed, d.reasons)
        accepted_v18 += _verdict(task, MEAN_15_DIGITS, seed, "v18").verdict == "accept"
    # v18 forgave it within a sum's bound on most seeds
    assert accepted_v18 >= 3


@pytest.mark.parametrize("name", sorted(CORRECT_MEANS))
def test_correct_means_in_another_order_are_accepted(name: str) -> None:
    task = _mean_task()
    for seed in SEEDS[:3]:
        d = _verdict(task, CORRECT_MEANS[name], seed, "v19")
        assert d.verdict == "accept", (seed, d.reasons)


def _pairwise(xs: list[float]) -> float:
    if len(xs) <= 2:
        return sum(xs, 0.0)
    half = len(xs) // 2
    return _pairwise(xs[:half]) + _pairwise(xs[half:])


def _evaluations(xs: list[float]) -> list[float]:
    n = len(xs)
    running = 0.0
    for k, x in enumerate(xs, 1):
        running += (x - running) / k
    return [
        reduce(lambda a, b: a + b, xs, 0.0) / n,
        reduce(lambda a, b: a + b, reversed(xs), 0.0) / n,
        sum(sorted(xs), 0.0) / n,
        sum(sorted(xs, key=abs, reverse=True), 0.0) / n,
        _pairwise(xs) / n,
        math.fsum(xs) / n,
        math.fsum(x / n for x in xs),
        sum((x / n for x in xs), 0.0),
        running,
    ]


def _lists(rng: random.Random) -> list[list[float]]:
    out: list[list[float]] = []
    for _ in range(4000):
        n = rng.choice([1, 2, 3, 4, 5, 8, 13, 40, 200])
        kind = rng.randrange(4)
        if kind == 0:  # one sign, one scale
            xs = [rng.uniform(0, 10) for _ in range(n)]
        elif kind == 1:  # both signs, scales far apart
            xs = [rng.choice([-1, 1]) * 10 ** rng.uniform(-8, 16) for _ in range(n)]
        elif kind == 2:  # cancellation around huge values, as the task's hidden case
            big = 10 ** rng.uniform(10, 17)
            xs = [big, -big, *(rng.uniform(-9, 9) for _ in range(n))]
            rng.shuffle(xs)
        else:  # integers and floats mixed
            xs = [rng.choice([rng.randint(-(10**6), 10**6), rng.uniform(-1e3, 1e3)]) for _ in range(n)]
        out.append([float(x) for x in xs])
    return out


def test_any_two_evaluations_of_a_mean_stay_within_the_mean_band() -> None:
    rng = random.Random(19)
    for xs in _lists(rng):
        means = _evaluations(xs)
        text = repr((xs,))
        for a in means:
            for g in means:
                if a != g:
                    assert _within_rounding(text, a, g, propagated=True), (xs, a, g)


def test_the_mean_band_is_the_sums_divided_by_the_count() -> None:
    xs = [1.0, 1.0, 2.5]
    text = repr((xs,))
    a = sum(xs) / len(xs)  # 1.5, whose unit in the last place is eps
    off = a + 10 * math.ulp(a)  # 10 units off: what 15 digits can do
    assert _within_rounding(text, a, off)  # a sum's bound (3 * eps * 4.5) forgives it
    assert not _within_rounding(text, a, off, propagated=True)  # a mean's (eps * (4.5 + 1.5)) does not
    assert _within_rounding(text, a, a + 5 * math.ulp(a), propagated=True)
    # a sum keeps the sum's bound: the answer is the sum itself
    total = sum(xs)
    assert _within_rounding(text, total, total + 3 * math.ulp(total), propagated=True)
    # where the mean cannot be told from the sum (the numbers cancel to about nothing), the sum's bound
    cancel = [1e16, 1.0, -1e16, 3.0, 5.0]
    naive = reduce(lambda p, q: p + q, cancel, 0.0) / 5  # 1.6, the exact mean 2.0
    assert _within_rounding(repr((cancel,)), naive, math.fsum(cancel) / 5, propagated=True)


def test_numbers_past_the_float_range_have_no_band_and_never_raise() -> None:
    text = repr(([1.5e308, 1.5e308, -1.0],))
    assert not _within_rounding(text, 1.0, 1.0000001)
    assert not _within_rounding(text, 1.0, 1.0000001, propagated=True)
    assert not _within_rounding(repr(([10**400, 1],)), 1.0, 1.5, propagated=True)
