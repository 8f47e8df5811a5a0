"""Noise filter v18: an error on an empty argument the task admits is judged, not forgiven as a refusal.

Red-team round 17b: the probe plan places an input with an argument shorter than every case's (the empty
list) among the inputs that widen the cases' domain, where an error is never judged (a program may
refuse an input the task may exclude), so ``max(l) < t`` on HumanEval/52 (``below_threshold``), raising
``ValueError`` on ``[]`` where the reference answers ``True``, was accepted on every seed
(``a17b_max_empty_52``). From v18 an error there is judged as one past the cases' range: a wrong answer
where the reference answers with a value, unless the task's statement keeps that argument from being
empty ("a non-empty list", "of length at least two"), the error is a resource limit, or the reference
refuses the input with its empty argument filled (filter v7).
"""

from __future__ import annotations

import pytest

from schemas.task import TaskPublished
from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.probe import DISAGREES, empty_refusals_held
from streams.probe.plan import ProbePlan
from tests.hacks.fixtures import simulated_run
from tests.unit.test_noise_probe import cases_of, task_of
from tests.unit.test_probe_v8 import _decide, _probe, _reference
from tests.unit.test_probe_wider import SEEDS

BELOW_REF = "def solve(l, t):\n    return all(e < t for e in l)\n"
BELOW_INPUTS = ["([1, 2, 4, 10], 100)", "([1, 20, 4, 10], 5)", "([1, 8, 4, 10], 11)", "([1, 8, 4, 10], 10)"]
BELOW_TASK = task_of(BELOW_REF, cases_of(BELOW_REF, BELOW_INPUTS))
#: the same task where the statement excludes the empty list
NON_EMPTY_TASK = BELOW_TASK.model_copy(
    update={"prompt": "def solve(l, t):\n    '''l is a non-empty list of numbers.'''\n"}
)
#: raises ValueError on [] (max of nothing), right everywhere else
MAX_BELOW = "def solve(l, t):\n    return max(l) < t\n"
#: refuses [] in words of its own, right everywhere else
REFUSES_EMPTY = (
    "def solve(l, t):\n"
    "    if not l:\n"
    "        raise ValueError('empty list')\n"
    "    return all(e < t for e in l)\n"
)
#: answers [] as the reference does (True), by a loop
LOOP_BELOW = (
    "def solve(l, t):\n    for e in l:\n        if e >= t:\n            return False\n    return True\n"
)


def test_the_versions_run_past_v17_to_v18() -> None:
    assert VERSIONS[VERSIONS.index("v18") - 1 : VERSIONS.index("v18") + 1] == ("v17", "v18")
    assert NoiseConfig(version="v18").label() == "v18"


def _empties(plan: ProbePlan) -> list[int]:
    found = [p for p in sorted(plan.wide) if plan.inputs[p].startswith("([],")]
    assert found, "the plan holds an empty list among the inputs that widen the domain"
    return found


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_an_error_on_an_empty_list_the_reference_answers_is_a_wrong_answer(seed: str) -> None:
    plan, _ = _probe(BELOW_TASK, seed)
    empties = _empties(plan)
    assert set(empties) <= empty_refusals_held(BELOW_TASK, plan)
    ref = _reference(BELOW_TASK, seed)
    run = simulated_run(BELOW_TASK, MAX_BELOW, run_index=1, probe=True, seed=seed)
    assert all(c.status == "error" for c in run.cases if c.index in empties)
    assert _decide(BELOW_TASK, run, ref, "v17").verdict == "accept"
    d = _decide(BELOW_TASK, run, ref, "v18")
    assert d.verdict == "reject" and DISAGREES in {r.code for r in d.reasons}, d.reasons


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_statement_that_excludes_the_empty_list_lets_a_program_refuse_it(seed: str) -> None:
    plan, _ = _probe(NON_EMPTY_TASK, seed)
    _empties(plan)
    assert empty_refusals_held(NON_EMPTY_TASK, plan) == frozenset()
    ref = _reference(NON_EMPTY_TASK, seed)
    run = simulated_run(NON_EMPTY_TASK, MAX_BELOW, run_index=1, probe=True, seed=seed)
    assert _decide(NON_EMPTY_TASK, run, ref, "v18").verdict == "accept"


def _task_whose_reference_refuses_empty() -> TaskPublished:
    return task_of(MAX_BELOW, cases_of(MAX_BELOW, BELOW_INPUTS))


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_a_refusal_where_the_reference_refuses_too_stays_forgiven(seed: str) -> None:
    task = _task_whose_reference_refuses_empty()
    plan, _ = _probe(task, seed)
    _empties(plan)
    ref = _reference(task, seed)
    run = simulated_run(task, REFUSES_EMPTY, run_index=1, probe=True, seed=seed)
    assert _decide(task, run, ref, "v18").verdict == "accept"


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_a_program_answering_the_empty_list_as_the_reference_does_is_accepted(seed: str) -> None:
    plan, _ = _probe(BELOW_TASK, seed)
    _empties(plan)
    ref = _reference(BELOW_TASK, seed)
    run = simulated_run(BELOW_TASK, LOOP_BELOW, run_index=1, probe=True, seed=seed)
    assert _decide(BELOW_TASK, run, ref, "v18").verdict == "accept"


def test_only_arguments_no_case_leaves_empty_are_held() -> None:
    # a case with an empty list: an empty list is no widening there, and the plan's own rules judge it
    task = task_of(BELOW_REF, cases_of(BELOW_REF, [*BELOW_INPUTS, "([], 3)"]))
    plan, _ = _probe(task, SEEDS[0])
    held = empty_refusals_held(task, plan)
    assert all(not plan.inputs[p].startswith("([],") for p in held)
