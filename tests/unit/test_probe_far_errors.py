"""Noise filter v5: past the cases' range an error is judged where the reference answers with a value
(a program that refuses inputs its task defines is wrong there), except a resource limit, which a
correct program may hit where its reference does not; v4 and older still forgive every error there."""

from __future__ import annotations

import pytest

from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.noise.probe import resource_limit
from streams.probe.plan import probe_due, probe_run_index
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.unit.test_probe_wider import ADD_REF, ADD_TASK, SEEDS

OPTS = CompareOptions()
REFUSES_FAR = (
    "def solve(a, b):\n    if max(a, b) > 1000:\n        raise ValueError('out of range')\n    return a + b\n"
)
#: a correct program that runs out of stack on large inputs its (iterative) reference answers
RECURSES = (
    "def solve(a, b):\n    if max(a, b) > 1000:\n"
    "        raise RecursionError('maximum recursion depth exceeded')\n"
    "    return a + b\n"
)


def verdict(code: str, seed: str, version: str) -> tuple[str, set[str]]:
    first = simulated_run(ADD_TASK, code)
    runs = [first]
    if probe_due(ADD_TASK, first):
        runs.append(simulated_run(ADD_TASK, code, run_index=probe_run_index(0), probe=True, seed=seed))
    ref = simulated_reference_probe(ADD_TASK, seed=seed)
    d = decide(
        task=ADD_TASK,
        code=code,
        executions=runs,
        config=NoiseConfig(version=version),  # type: ignore[arg-type]
        options=OPTS,
        probe_reference=ref,
    )
    return d.verdict, {r.code for r in d.reasons}


@pytest.mark.parametrize("seed", SEEDS)
def test_an_error_past_the_cases_range_where_the_reference_answers_is_a_wrong_answer(seed: str) -> None:
    got, codes = verdict(REFUSES_FAR, seed, "v5")
    assert got == "reject" and "wrong.disagrees_with_reference" in codes, codes
    # old verdicts replay as they were
    assert verdict(REFUSES_FAR, seed, "v4")[0] == "accept"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_resource_limit_past_the_cases_range_is_forgiven(seed: str) -> None:
    assert verdict(RECURSES, seed, "v5")[0] == "accept"
    assert verdict(ADD_REF, seed, "v5")[0] == "accept"


def test_resource_limits_are_told_from_a_programs_own_refusals() -> None:
    assert resource_limit("RecursionError: maximum recursion depth exceeded")
    assert resource_limit("MemoryError")
    assert resource_limit("ValueError: Exceeds the limit (4300 digits) for integer string conversion")
    assert not resource_limit("ValueError: out of range")
    assert not resource_limit("OverflowError: int too large")
    assert not resource_limit("IndexError: list index out of range")
