"""Seeded probe plans p12/c12: every input that can tie carries the inputs that show its other right
answers. Filter v16 judges a tie the statement leaves open with the reference's answer on the input or on
its mirror counted right, but through p11/c11 the plan held a mirror only for the inputs inside the
seeded domain: those of the plan of the task alone that repeat a list's element more often than a case
does (``[1.0, 2.0, 3.0, 1.0, 4.0, 5.0, 2.0]`` on HumanEval/20: two closest pairs at distance 0) had none,
and a mirror alone gives the tie-breaks of the first and the last by position, while a correct program
that sorts its list first takes the smallest or the largest by value (``[1.0, 2.0, 3.0, 4.0, 5.0, 5.0,
2.0]``: the reference takes (2.0, 2.0) on it and on its mirror, the last closest pair is (5.0, 5.0)). So
a correct program breaking the tie the other way was rejected (``a15_ok_tie_last_20``, on every seed).
p12/c12 mirror every input with a list argument to reverse and add its sorted twins (``ProbePlan.orders``,
both ways; not of the long inputs at the end); every input p11/c11 draw stays, and runs of p11/c11 still
find their plans byte for byte."""

from __future__ import annotations

from typing import Any

import pytest

from streams.noise.probe import _tie_links
from streams.probe.plan import (
    ProbePlan,
    _plan,
    recorded_plan,
)
from streams.reward.correctness import expected_cases
from tests.hacks.fixtures import simulated_verdict
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import args as _args
from tests.unit.plan_pins import assert_pinned_plans_found
from tests.unit.plan_pins import task as _task
from tests.unit.test_probe_wider import OPTS, SEEDS

MATRIX_SEED = "5eed" * 8
P11_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the generations of p11/c11 and p12/c12 (p13/c13 draw every input p12/c12 do: test_probe_v13)
P11 = 9
P12 = 10
CODE = {p.name: p.code for p in PROGRAMS}

#: digests of p11/c11 plans drawn before p12/c12 existed (seeds P11_SEEDS)
P11_DIGESTS = {
    "HumanEval/0": (
        "8ae7bdd43b06e33462422d660314ec4d3ea49fd5b507adad56bed129e73f301f",
        "8e7fce8ad05b9266d62509de67d41966f02fda3bcef9e60a219a499c8527ec9e",
        "1284e7134e0f1b1a3daa9ab03417368e2c170470b09907039e3d8fe120f15198",
    ),
    "HumanEval/20": (
        "9f4198f2863c65518bcf5b390351713ea223bb74cefe3a8cf915a0a4038ec7dd",
        "0ba4cce24994784bdb3f951d0bf1d9f4b661d7e1ce154331660a28b4bc673e42",
        "2b81826a630ef507087a2dd74b17c19311e4ba602de1d6e0f434d1ce97bf455a",
    ),
    "HumanEval/26": (
        "26ba83e7625627259a18b7cde26e4b7e15d5fd5e31e7fcc8b5a8c4c629fd81eb",
        "b8bcc10553165b6e2d394f6ef568521247291703f1346e0e3e94f60004b004f0",
        "fb3b66538c5a5b19032389c75ad2f382e6a7381f6d59763184cccb8b7be33812",
    ),
    "HumanEval/35": (
        "3359850306a81fd2d73054223f3580e6c06cdf513a35334b85751daa0358412a",
        "e6adbc7ffb6bc20893a174d4f5d61280fc0ee67b999af2852e192a9aadd1975b",
        "e7263cd50f38f91d87f470cfc80f482cdac97bfa820e810cedc82a78f0f9839c",
    ),
    "HumanEval/37": (
        "caee0d9d1cfac6e0972e2aa733d8b7edcedb30bea650c3ccd3bd3c474a26b1d9",
        "6c843576c8b2c8247311342a0de47c4f3452d0c67f10b37178d36756b5047853",
        "23771523eed479716447142b064fbd5e0f316f5a0377f49cafd0a392fb69e40e",
    ),
    "HumanEval/72": (
        "416edc93fde9ae25ab4c525ba0f75635c105c45cbf6649d60f18295c3994615b",
        "2239b490a5538470f73d2de83f2fab216766384281dcbb892f4dda8f09724329",
        "e384993ee933f6d56109204c691be75990e564bb242dfd2dcbc8e6f8cb9dbe9b",
    ),
    "HumanEval/108": (
        "0a969b907cc70fc2bb26a4931de8952323d1424d1e75461fef24d7b6c065058b",
        "d58dfd1fd7a67a482e0f7587ca598afc5cfb04507fd4d92638fdcf20180f7ef4",
        "6246e5caf73c4d372333f6ab899c47a24f0d90b1ef0fd452e508e23325e8cd9f",
    ),
    "HumanEval/129": (
        "b01a887d98da0e8016fe3f214067cf361f11b5e4de361e114671a723262c4abb",
        "75f1a98a6b29ed836338750922826cafe854bc62c0f5a9ba2cfb856d41dd8bac",
        "89058d4555c1a7f78b5d14f6ebea9ac42bdc585a79d1d47a52c420d3bbaa8f83",
    ),
    "HumanEval/160": (
        "0272ca3f9adc6f37e881409febf14c4ce431a6eccd3ff99ddbd1e158f427bf89",
        "32dfdf2b1674f04447e110fbc4f0f987341123aa3d7802b837df2652d204cd0b",
        "54af93f734600cfffa772105ac3a818246e297a7954d1538a325e0081c4fb392",
    ),
}

#: tasks with a list argument whose order their references ignore or not, judged by cases or a check
LIST_TASKS = ("HumanEval/0", "HumanEval/20", "HumanEval/26", "HumanEval/35", "HumanEval/37", "HumanEval/108")


def _plans(task_id: str, seed: str) -> tuple[ProbePlan, ProbePlan]:
    new, old = _plan(_task(task_id), seed, P12), _plan(_task(task_id), seed, P11)
    assert new is not None and old is not None
    assert (new.version, old.version) in (("p12", "p11"), ("c12", "c11"))
    return new, old


def _reversible(plan: ProbePlan, text: str) -> bool:
    """Whether the input has a list argument of two elements or more that the plan's mirrors reverse (a
    list every case passes sorted stays so)."""
    mirrored = {
        i
        for a, b in plan.mirrors
        for i, (x, y) in enumerate(zip(_args(plan.inputs[a]), _args(plan.inputs[b]), strict=True))
        if x != y
    }
    return any(
        isinstance(v, list) and len(v) > 1 and v != v[::-1] and i in mirrored
        for i, v in enumerate(_args(text))
    )


def _paired(plan: ProbePlan, pairs: tuple[tuple[int, int], ...]) -> set[str]:
    return {plan.inputs[p] for pair in pairs for p in pair}


def test_runs_of_p11_and_c11_find_their_plans_byte_for_byte() -> None:
    assert_pinned_plans_found(P11_DIGESTS, P11_SEEDS, P11)
    # p11/c11 knew no sorted twins
    assert all(
        not recorded_plan(_task(t), seed, d).orders  # type: ignore[union-attr]
        for t, digests in P11_DIGESTS.items()
        for seed, d in zip(P11_SEEDS, digests, strict=True)
    )


@pytest.mark.parametrize("task_id", LIST_TASKS)
def test_every_input_p11_draws_stays_and_every_reversible_one_has_its_mirror(task_id: str) -> None:
    for seed in (MATRIX_SEED, *SEEDS[:3]):
        new, old = _plans(task_id, seed)
        assert set(old.inputs) <= set(new.inputs), seed
        assert new.lead == old.lead and new.seeds == old.seeds and new.ends >= old.ends
        # the extremes at the end are p11's (with the twins of those at the machine bounds)
        assert set(old.inputs[-old.ends :]) <= set(new.inputs[-new.ends :])
        # every input p11 draws (the mirrors and twins p12 adds are derived from them) has its mirror
        # where reversing changes it, and but for the long ones its sorted twins where sorting does
        mirrored, twinned = _paired(new, new.mirrors), _paired(new, new.orders)
        ends = set(new.inputs[-new.ends :])
        long = {t for t in ends if any(isinstance(v, list) and len(v) > 256 for v in _args(t))}
        # the inputs drawn (a mirror or a twin is derived from one, and has none of its own)
        laid = {new.inputs[a] for a, _ in new.mirrors}
        for text in set(old.inputs):
            if not _reversible(new, text):
                continue
            assert text in mirrored, (seed, text)
            if text in ends or text not in laid:
                continue
            for descending in (False, True):
                twin = repr(
                    tuple(sorted(v, reverse=descending) if isinstance(v, list) else v for v in _args(text))
                )  # type: ignore[type-var, call-overload]
                assert twin == text or twin in twinned, (seed, text, twin)
        assert not long & twinned, seed


def test_the_tied_inputs_p11_left_unmirrored_have_their_mirror_and_twins() -> None:
    tied = "([1.0, 2.0, 3.0, 1.0, 4.0, 5.0, 2.0],)"
    new, old = _plans("HumanEval/20", MATRIX_SEED)
    assert tied in old.inputs and tied not in _paired(old, old.mirrors)
    assert tied in _paired(new, new.mirrors)
    at = new.inputs.index(tied)
    twins = {new.inputs[b] for a, b in new.orders if a == at}
    assert twins == {"([1.0, 1.0, 2.0, 2.0, 3.0, 4.0, 5.0],)", "([5.0, 4.0, 3.0, 2.0, 2.0, 1.0, 1.0],)"}


def test_a_correct_program_taking_another_closest_pair_is_accepted() -> None:
    # rejected on every seed by p11 (judged against the reference's own tie-break, or its mirror's)
    task = _task("HumanEval/20")
    for seed in (MATRIX_SEED, *SEEDS):
        verdict, codes = simulated_verdict(
            task, CODE["a15_ok_tie_last_20"], seed=seed, version="v16", options=OPTS
        )
        assert verdict == "accept", (seed, codes)


@pytest.mark.parametrize("name", ["a15_tie_swapped_20", "a15_tie_garbage_20"])
def test_a_tie_answered_with_no_right_pair_is_still_rejected(name: str) -> None:
    task = _task("HumanEval/20")
    for seed in (MATRIX_SEED, *SEEDS[:3]):
        verdict, codes = simulated_verdict(task, CODE[name], seed=seed, version="v16", options=OPTS)
        assert verdict == "reject" and "wrong.disagrees_with_reference" in codes, (seed, codes)


def _links(task_id: str, seed: str) -> tuple[ProbePlan, set[tuple[int, int]]]:
    """The plan and the pairs filter v16 takes as showing an order the task ignores, from the reference's
    own answers on the plan."""
    task = _task(task_id)
    plan = _plan(task, seed, P12)
    assert plan is not None
    ns: dict[str, Any] = {}
    exec(task.reference or "", ns)
    answers = {pos: ns[task.entry_point](*_args(text)) for pos, text in enumerate(plan.inputs)}
    return plan, set(_tie_links(plan, answers, expected_cases(task), OPTS))


def test_sorted_twins_count_as_ties_only_where_the_reference_ignores_every_order() -> None:
    for seed in (MATRIX_SEED, *SEEDS[:3]):
        # HumanEval/20's reference answers every case as its mirror and as its sorted twins
        plan, links = _links("HumanEval/20", seed)
        assert plan.orders and links == {*plan.mirrors, *plan.orders}, seed
        # HumanEval/72's q must read the same reversed: its reference answers every case as its mirror,
        # but not as the case sorted ([3, 2, 3] -> [2, 3, 3]): no sorted twin is a tie there
        plan, links = _links("HumanEval/72", seed)
        assert plan.orders and links == set(plan.mirrors), seed
