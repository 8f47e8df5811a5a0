"""Seeded probe plans p10/c10: the long inputs at the end of the run are drawn in bands. Before, the far
inputs stopped at 4 times the cases' longest argument (256 elements at most) and the long ones started
at 1000, two of them: no list or string of some 300 to 999 elements was ever drawn, and past the far
reach only two lengths were judged. p10/c10 draw :data:`MID_BAND_INPUTS` long inputs of a length
log-uniform from just past the far reach up to 999 and one of 1000 to 3000, laid shortest first (a
deadline then cuts the longest). Every other input is the one p9/c9 draw, and runs of p9/c9 still find
their plans byte for byte."""

from __future__ import annotations

import pytest

from streams.noise.probe import long_input
from streams.probe.plan import (
    LONG_BANDED_INPUTS,
    LONG_LENGTHS,
    MID_BAND_INPUTS,
    MID_BAND_TOP,
    ProbePlan,
    _plan,
    _Sizes,
)
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import args as _args
from tests.unit.plan_pins import assert_pinned_plans_found
from tests.unit.plan_pins import task as _task
from tests.unit.test_probe_wider import decision_of

SEEDS = [f"{k:02x}" * 16 for k in range(6)]
#: the red-team matrix's seed (tests/hacks/test_redteam.py)
MATRIX_SEED = "5eed" * 8
CODE = {p.name: p.code for p in PROGRAMS}
#: tasks whose one sized argument is a list (HumanEval/35, /47) or a string (/27, /82)
SIZED = ("HumanEval/27", "HumanEval/35", "HumanEval/47", "HumanEval/82")

#: digests of p9/c9 plans drawn before p10/c10 existed (seeds "00" * 16, MATRIX_SEED, "a7" * 16)
P9 = {
    "HumanEval/0": (
        "c9da938fc96459c1df4bb5b642b0333c5d79db346f88940e00f80e414f0ffa2c",
        "aacc1f77de821d9b6f13cdd50ad8f313a27a1ae52dbb1635469eb6b40351f52e",
        "514bd70562114b02619192e0bd63beb908f5746aae9ee0b102393cf970b49707",
    ),
    "HumanEval/27": (
        "ee4f54b1072f92b9e14b248dbfe6365344878a85da60070d4cf7dd2a08724948",
        "5f1698ec89e8df04211111d20f1cdc6ebff774b61df6c7cf9719d2bb4f5d7bf2",
        "ab301f8e53a7b5adbde53d925a2a81aed55948de6a03cf6d4ee467c4ed4444ae",
    ),
    "HumanEval/35": (
        "ed9f925f97d9ae424b3a1821661189b4df6c3ef8116f5aa331d59f6348fa8259",
        "c8b426f7fab016f0fefb0a121313090808c4f511f3022c20d34562576cd6c58a",
        "afd0d65abe3173a84ae5ea01f72ea1cbf9eb5cbf340badf06571937e2d3daf1f",
    ),
    "HumanEval/47": (
        "8335327729e03166e28a0e6abf82aea23d9fe94d34cf51f01bd194c9e374c5ff",
        "6bc1125b60960ad6df35708d0824932e29922558e07c1422669cbbc24dfb4d58",
        "d79735adc96695212a938962444207c890311062578e467f64456b094734743e",
    ),
    "HumanEval/53": (
        "342c20a0d47aeeceeaf7d50abe39d14c3b8f504fc720ec82a126cf79a547bca3",
        "ace4ed47441da269be8d90ae3a01660b7061baaa43bbda6041109c163307b486",
        "d55c686047b7a1beead8a8cd435c4592c85f9c3ba99e9ea851e7169a68f41ee9",
    ),
    "HumanEval/82": (
        "d7cd62f0af9a91ba543e45a6f3abcf245b4cf8e5421a41e2f90ee6dec66cb047",
        "892d2a951b946076f94baa09df5afe56579c2a2954866dbbe97c91cc2a192c50",
        "b0a1ac3062929543d42206c1106fecd8c8d5b9181120da5f44689545d57e7824",
    ),
    "HumanEval/151": (
        "bc789a43f696d643cc1cc8c1d82f2e8bb71427b057fe167689840ab6a26f9e83",
        "5fad24e8f1cacc3ec026feead9c1d27f8713b94f73d03708d491d4a117afc733",
        "6205205d19b6c4dffe5925c2ae2b973d71501db7aaa8f33d6dd510eff21c6b67",
    ),
}
P9_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the generation of p10/c10 (p11/c11 since: tests/unit/test_probe_v11.py, whose long inputs are p10's)
P10 = 8


def _length(text: str) -> int:
    return max(len(a) for a in _args(text) if isinstance(a, (str, list, dict, set)))


def _ends(plan: ProbePlan) -> list[str]:
    return list(plan.inputs[len(plan.inputs) - plan.ends :])


def _long(task_id: str, seed: str) -> tuple[list[str], list[str]]:
    """The long inputs of the p10 plan and of the p9 plan of the same seed, in plan order (the inputs at
    the end of the run that are not in the other plan's ends: the bounds are the same in both)."""
    new, old = _plan(_task(task_id), seed, P10), _plan(_task(task_id), seed, 7)
    assert new is not None and old is not None and (new.version, old.version) == ("p10", "p9")
    new_ends, old_ends = _ends(new), _ends(old)
    return [t for t in new_ends if t not in old_ends], [t for t in old_ends if t not in new_ends]


def _reach(task_id: str) -> int:
    return _Sizes([_args(c.input) for c in (*_task(task_id).tests, *_task(task_id).hidden_tests)]).far_reach()


def test_runs_of_p9_and_c9_find_their_plans_byte_for_byte() -> None:
    assert_pinned_plans_found(P9, P9_SEEDS, 7)


@pytest.mark.parametrize("task_id", SIZED)
def test_two_long_inputs_lie_between_the_far_reach_and_1000_and_one_past_1000(task_id: str) -> None:
    reach = _reach(task_id)
    assert 8 <= reach <= 256
    for seed in SEEDS:
        new, old = _long(task_id, seed)
        # each with its mirror (its lists reversed: of the same length)
        lengths = sorted({_length(t) for t in new})
        assert len(lengths) == LONG_BANDED_INPUTS, (seed, lengths)
        mid, far = lengths[:MID_BAND_INPUTS], lengths[MID_BAND_INPUTS:]
        # a string made of words ends within a word of the length drawn
        assert all(reach < n <= MID_BAND_TOP + 16 for n in mid), (seed, mid)
        assert all(LONG_LENGTHS[0] <= n <= LONG_LENGTHS[1] + 16 for n in far), (seed, far)
        # p9's long inputs were all past 1000: none of them is in the p10 plan
        assert old and all(_length(t) >= LONG_LENGTHS[0] for t in old)


@pytest.mark.parametrize("task_id", SIZED)
def test_the_long_inputs_are_laid_shortest_first_and_every_other_input_is_p9s(task_id: str) -> None:
    for seed in SEEDS:
        new_plan, old_plan = _plan(_task(task_id), seed, P10), _plan(_task(task_id), seed, 7)
        assert new_plan is not None and old_plan is not None
        new, old = _long(task_id, seed)
        # the first of each mirrored pair is laid in the order drawn: shortest first
        first = new[:LONG_BANDED_INPUTS]
        assert [_length(t) for t in first] == sorted(_length(t) for t in first)
        assert set(new_plan.inputs) - set(new) == set(old_plan.inputs) - set(old)
        assert all(new_plan.inputs.index(t) in new_plan.far for t in new)


@pytest.mark.parametrize("task_id", ["HumanEval/33", "HumanEval/52", "HumanEval/56", "HumanEval/90"])
def test_a_check_plan_draws_its_long_inputs_in_bands_as_well(task_id: str) -> None:
    # tasks judged by their check: the long inputs keep what the check's calls admit
    task = _task(task_id)
    mid = []
    for seed in SEEDS[:3]:
        new, old = _plan(task, seed, P10), _plan(task, seed, 7)
        assert new is not None and old is not None and (new.version, old.version) == ("c10", "c9")
        new_ends, old_ends = _ends(new), _ends(old)
        added = [t for t in new_ends if t not in old_ends]
        dropped = [t for t in old_ends if t not in new_ends]
        assert set(new.inputs) - set(added) == set(old.inputs) - set(dropped)
        mid += [t for t in added if _length(t) < LONG_LENGTHS[0]]
    # a check's calls may refuse a long input on some seeds (their domain): not on all
    assert mid


def test_a_median_wrong_only_between_300_and_999_elements_is_caught_where_such_a_length_is_drawn() -> None:
    # which seeds draw a length there is the seed's: of these, at least one does
    drawn = [
        s for s in (MATRIX_SEED, *SEEDS) if any(300 <= _length(t) < 1000 for t in _long("HumanEval/47", s)[0])
    ]
    assert drawn
    task = _task("HumanEval/47")
    for seed in drawn[:2]:
        assert decision_of(task, CODE["a11_mid_band_47"], seed).verdict == "reject", seed
        assert decision_of(task, task.reference or "", seed).verdict == "accept", seed


@pytest.mark.parametrize(
    ("name", "task_id"), [("a5_ok_numpy_unique_34", "HumanEval/34"), ("a5_ok_unicode_27", "HumanEval/27")]
)
def test_a_correct_program_is_accepted_on_the_banded_lengths(name: str, task_id: str) -> None:
    task = _task(task_id)
    for seed in (MATRIX_SEED, *SEEDS[:2]):
        assert decision_of(task, CODE[name], seed).verdict == "accept", seed


@pytest.mark.parametrize("task_id", [*SIZED, "HumanEval/52"])
def test_the_filter_reads_only_the_banded_long_inputs_as_long(task_id: str) -> None:
    # a hang there is no evidence: past the far reach a correct program's cost may explode with size
    # (tests/hacks/test_probe_far_lengths.py: every subset summed, in the real sandbox); the machine
    # bounds stay judged as before, and so does every position of a p9/c9 plan
    for seed in SEEDS[:3]:
        new, old = _plan(_task(task_id), seed, P10), _plan(_task(task_id), seed, 7)
        assert new is not None and old is not None
        added, _ = _long(task_id, seed) if new.version == "p10" else ([], [])
        marked = [new.inputs[pos] for pos in range(len(new.inputs)) if long_input(new, pos)]
        assert all(_length(t) > _reach(task_id) for t in marked) if new.version == "p10" else True
        assert set(added) <= set(marked)
        assert not any(pos in new.wide for pos in range(len(new.inputs)) if long_input(new, pos))
        assert not any(long_input(old, pos) for pos in range(len(old.inputs)))
