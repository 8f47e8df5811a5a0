"""Seeded probe plans p17/c17: integers at the widths machine and library integers wrap, saturate or hash
at (2**k - 1, 2**k, 2**k + 1 for k in 31, 32, 53, 61, 63, 64, and a 40-digit number), equal integer
arguments at large magnitudes, magnitudes between 1000 times the cases' and 2**31, a negative zero where a
case holds 0.0, and subnormal floats (red-team rows INT_REACH, EQUAL_ARGUMENTS, MAGNITUDE_GAP, SIGNED_ZERO,
SUBNORMAL). Through p16/c16 no generated integer reached 2**61 or 2**63, two integer arguments were equal
only among small values, nothing was drawn between 1000 times the cases' magnitude and 2**31, and no float
was -0.0 or subnormal. p17/c17 add them from a generator of their own; every input p16/c16 draw stays, and
runs of p16/c16 find their plans byte for byte."""

from __future__ import annotations

import math

import pytest

from schemas.task import TaskPublished
from streams.probe.plan import (
    INT_WIDTHS,
    LONG_DIGITS,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
)
from streams.reward.literals import CompareOptions, values_match
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import added_positions, against_previous, assert_pinned_plans_found
from tests.unit.plan_pins import answers as _answers
from tests.unit.plan_pins import args as _args
from tests.unit.plan_pins import task as _task

MATRIX_SEED = "5eed" * 8
P16_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the seeds the red-team runner's --probe-seeds 5 uses, and the matrix's
SEEDS = (MATRIX_SEED, *(f"{k:08x}" * 4 for k in range(5)))
#: the generations of p16/c16 and p17/c17
P16 = 14
P17 = 15
CODE = {p.name: p.code for p in PROGRAMS}

#: digests of p16/c16 plans drawn before p17/c17 existed (seeds P16_SEEDS)
P16_DIGESTS = {
    "redteam/mul": (
        "56a75971c5c75c319be63882fef65f0b35f3ffaf44e6e20f9e9ff799e53870f1",
        "e556a465325f75e9288c115f993a4b8312c02d9de2746649dcd0ad5a5d13801a",
        "8569e86e7332d64c9f44c2cbf2e5fe69a91178e21a52a0f9720a042d28ab6b2c",
    ),
    "synthetic/at_least": (
        "45edcb5f653fabd057b8640351e7a99137e41b6145301107899bb4e74cfcb78a",
        "8e3b72f692e4189a10580c19ffc7182cd009ccab75f01fdae75a4571bd725cdc",
        "9c7a4f527ab9f869a4b21bf816791293b79dd9515c00dc6f223cf90006a47ae2",
    ),
    "synthetic/below_bound": (
        "2a2a18c67a4e9ebae32f06007a311674ca4e4339359ebf66ea04aa827187a8f6",
        "ef6504b4340c0f076296bf82902f01ab8aed254ea7520ec3928a6c9ac285961a",
        "1749a659a98f4f80f201fa16b67792c5cd2400f5f3ceaec6ac10a3b28c358318",
    ),
    "synthetic/exceeds_floor": (
        "081277a0d6b2d1d3bc0ab92d618eceb2f99c7b6ff60791557d1186a1309d1b59",
        "00dbc12afd7bc74f6a46e75aafcde6b064ba089a78da0c61a372b27ca5555d19",
        "98ec636f1d81a64c81e29ba2cd4bedb2f76a410f6a1d9a77934fc43051ae14a7",
    ),
    "redteam/digits_set": (
        "fc2d9deee85d8b59e0d6788d2747dbcfe129eeaef6e83332ee9939a3aa9c9e47",
        "a9975cb3cd53785e1606cd79f6b16339e3d558d680e70d2f204e894e525e3ce7",
        "a1454bfd4a43ffead630191f2095dbcae1f5ea6973744c488185f8f596d66bb9",
    ),
    "redteam/safe_ratio": (
        "11e02f6cdefb35d95c4314fdd0ed83081b65b9fdc54fb42eddd142d5acbac344",
        "2aae879a0974b24d3258bf832dfe8322309c071f27969d4cf16bbb2f777513f8",
        "7ac018c1a2a6da680911638ae7d38657cc7407464ef951d65bba56557a8be59e",
    ),
    "HumanEval/138": (
        "d06df96ee843be1b53577022b2239fae8669f00afa4bb944199d59580c5a1df6",
        "20a6ee55ace81117a923614e307d69f2c86e919f0a95fc632f4c3344cab2f0d0",
        "774e56d7447de5288c5da4bcabb1e3bb0580bc2b220dca2d482136c73a744d80",
    ),
    "HumanEval/13": (
        "f5cfd1909c576c06cfb3984fa7c48534ac7954ecf52ebaf5ce52252fcb745805",
        "d615a6fc3e456b22871d4ef51c3333948b4a98f1e41408595885b88f2e498d79",
        "2f39803b3f447880f37d538d42004a914261c932ea7cd64b1082c1bae4a1a562",
    ),
    "HumanEval/2": (
        "be39dc79113d8db4a645117d3260a6b047c0ff05957fcdbbc1c155c712683c87",
        "121aecb02d3d5a64d75265258e890b4744036cc1a83fc4cb1d551b29cab8bc24",
        "1c6b5a778730d492631fb748a4f978b28f0a91b5d89704478444aa86660e62d1",
    ),
    "HumanEval/0": (
        "b087b2da111339f94b4bfe1ef1a85e31c950d078051a016f58ed859e95254f8a",
        "f3f11e99f1bae24299f239f8bf0ce8c655605650b57e531c4b2c26a7e6c3f256",
        "32ab893024173e9dae73ff1c071a1d8c2ac45b8b72efd8540a20c361e19d6f9a",
    ),
    "HumanEval/53": (
        "316fc686ea6dadd1dc79ab0e24a5043d3b48a8855908beb55720ffa21cffb4b7",
        "6890b37945f9919a8e37fb28053b9374f6913730ac44e7eef5b2c6a94518dace",
        "94c58bcdc32403907da00f1c1b0a68eaeb0b6926a65a5a0ed0f59c8c8bd13a78",
    ),
    "HumanEval/44": (
        "0cc56f60f81a0fba2251c921f17532f77ade161034b244106181bedbc61b95f4",
        "212b34c5f0f982998f9dad42320529dd0334f291fb4f1c89e0087a418eeb4524",
        "f8dc8db7d58e64f91a3093c623562e8591e1310cd8b490943121dc996b42ef0e",
    ),
}
#: the programs p16 accepted on every seed tried, and the task of each
WRONG = {
    "a18_mul_wrap_160": "redteam/mul",
    "a18_at_least_int64_wrap": "synthetic/at_least",
    "a18_below_bound_sign_bit63": "synthetic/below_bound",
    "a18_exceeds_floor_hash_sign": "synthetic/exceeds_floor",
    "a18_digits_first_39": "redteam/digits_set",
    "a18_ratio_negzero_text": "redteam/safe_ratio",
    "a18_ratio_reciprocal": "redteam/safe_ratio",
    "a18b_square_via_pow_mul": "redteam/mul",
    "a18b_sum_even_gap_138": "HumanEval/138",
}
#: the corpus' correct programs on those tasks (run in-process here)
CORRECT = tuple(
    p.name for p in PROGRAMS if p.task in WRONG.values() and p.kind == "correct" and p.mode == "score"
)


def test_runs_of_p16_and_c16_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P16] == ("p16", "c16") and SEEDED_VERSIONS[P17] == ("p17", "c17")
    assert (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION) not in SEEDED_VERSIONS[: P17 + 1]
    assert_pinned_plans_found(P16_DIGESTS, P16_SEEDS, P16)


@pytest.mark.parametrize("task_id", sorted(P16_DIGESTS))
def test_every_p16_input_stays_and_the_added_ones_judge_only_a_value(task_id: str) -> None:
    for seed in SEEDS[:3]:
        new, old = against_previous(_task(task_id), seed, P17)
        assert set(old.inputs) <= set(new.inputs), seed
        for pos in added_positions(new, old):
            # a negative zero is a value of the cases' own domain (-0.0 == 0.0): judged as near them
            near = any(
                isinstance(v, float) and v == 0.0 and math.copysign(1.0, v) < 0
                for v in _args(new.inputs[pos])
            )
            assert (pos not in new.far) if near else (pos in new.wide), (seed, new.inputs[pos])


def _added_values(task_id: str, seed: str) -> list[tuple[object, ...]]:
    new, old = against_previous(_task(task_id), seed, P17)
    return [_args(new.inputs[pos]) for pos in added_positions(new, old)]


@pytest.mark.parametrize(
    "task_id", ["redteam/mul", "synthetic/at_least", "HumanEval/138", "redteam/digits_set"]
)
def test_every_integer_width_on_every_seed(task_id: str) -> None:
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P17)
        values = {abs(v) for pos in new.wide for v in _args(new.inputs[pos]) if type(v) is int}
        for k in INT_WIDTHS:
            # (two integers meet on redteam/mul: no value a signed 32-bit integer holds, see below)
            assert 2**k + 1 in values and (2**k - 1 in values or (k, task_id) == (31, "redteam/mul")), (
                seed,
                k,
            )
        assert any(len(str(v)) == LONG_DIGITS for v in values), seed
        # p16 drew none of the hash modulus, the int64 bounds and the uint64 ones
        before = {abs(v) for text in old.inputs for v in _args(text) if type(v) is int}
        assert not before & {2**61 - 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64}, seed


def test_a_width_of_each_sign_where_the_cases_hold_both() -> None:
    for seed in SEEDS:
        values = {v for args in _added_values("synthetic/exceeds_floor", seed) for v in args}
        assert {2**61 - 1, -(2**61 - 1), 2**63, -(2**63)} <= values, seed


def test_equal_integer_arguments_past_a_doubles_precision() -> None:
    for seed in SEEDS:
        equal = [abs(a) for a, b in _added_values("redteam/mul", seed) if type(a) is int and a == b]
        assert any(a > 2**53 for a in equal), seed
        assert any(len(str(a)) == LONG_DIGITS for a in equal), seed


def test_magnitudes_between_the_far_reach_and_the_machine_bound() -> None:
    for seed in SEEDS:
        gap = [n for (n,) in _added_values("HumanEval/138", seed) if 16 * 1000 <= n < 2**31]  # type: ignore[operator]
        assert len(gap) >= 4 and any(10**5 < n < 10**9 for n in gap), seed  # type: ignore[operator]


def test_a_negative_zero_near_the_cases_and_subnormals_widening() -> None:
    for seed in SEEDS:
        new, old = against_previous(_task("redteam/safe_ratio"), seed, P17)
        added = added_positions(new, old)
        zeros = [p for p in added if new.inputs[p].endswith(", -0.0)")]
        assert zeros and not any(p in new.far for p in zeros), seed
        tiny = [
            p
            for p in added
            if any(
                isinstance(v, float) and 0 < abs(v) < 2.2250738585072014e-308 for v in _args(new.inputs[p])
            )
        ]
        assert tiny and all(p in new.wide for p in tiny), seed
        # both arguments subnormal: a reciprocal overflows where the quotient is 1
        assert any(all(0 < abs(v) < 2.2250738585072014e-308 for v in _args(new.inputs[p])) for p in tiny), (
            seed
        )  # type: ignore[arg-type]


def _judged(task: TaskPublished, code: str, seed: str) -> list[str]:
    """The inputs p17 adds where ``code`` answers otherwise than the reference, as the filter judges them:
    where they widen the domain a value other than the reference's (a refusal is no error), near the
    cases (a negative zero) an error too."""
    new, old = against_previous(task, seed, P17)
    positions = added_positions(new, old)
    texts = [new.inputs[pos] for pos in positions]
    assert task.reference is not None
    return [
        text
        for pos, text, (kind, value), (ref_kind, expected) in zip(
            positions,
            texts,
            _answers(code, task.entry_point, texts),
            _answers(task.reference, task.entry_point, texts),
            strict=True,
        )
        if ref_kind == "ok"
        and (kind == "ok" or pos not in new.wide)
        and not (kind == "ok" and _same(expected, value))
    ]


def _same(expected: object, value: object) -> bool:
    """Whether the comparer takes ``value`` for ``expected``: as Python's ``==`` does, or within its float
    tolerance."""
    try:
        if bool(expected == value):
            return True
    except Exception:  # an array's == is no truth value
        pass
    return values_match(expected, value, CompareOptions())


@pytest.mark.parametrize("name", WRONG)
def test_a_program_wrong_only_there_is_shown_wrong_on_every_seed(name: str) -> None:
    task = _task(WRONG[name])
    for seed in SEEDS:
        assert _judged(task, CODE[name], seed), seed


@pytest.mark.parametrize("name", CORRECT)
def test_correct_programs_on_those_tasks_are_never_shown_wrong(name: str) -> None:
    task = _task(next(p.task for p in PROGRAMS if p.name == name))
    for seed in SEEDS:
        assert not _judged(task, CODE[name], seed), seed


def test_no_width_past_a_doubles_integers_where_the_reference_reads_through_a_float() -> None:
    # HumanEval/123's reference halves with n / 2: past 2**53 its answers are a double's (3 * n + 1 leaves
    # the exact integers below 2**53 already), so an exact program would be held to them
    task = _task("HumanEval/123")
    for seed in SEEDS[:3]:
        new, old = against_previous(task, seed, P17)
        values = [
            abs(v) for pos in added_positions(new, old) for v in _args(new.inputs[pos]) if type(v) is int
        ]
        assert values and max(values) <= 2**32 + 1, seed


def test_two_small_integers_stay_within_the_machine_bounds() -> None:
    # HumanEval/103's and /53's cases are small: a program averaging through (n + m) / 2, adding through
    # floats or with numpy's int64 is right on every pair they admit, and no pair past 2**32 + 1 is drawn
    for task_id in ("HumanEval/103", "HumanEval/53"):
        for seed in SEEDS[:3]:
            values = [abs(v) for args in _added_values(task_id, seed) for v in args if type(v) is int]
            assert values and max(values) <= 2**32 + 1, (task_id, seed)
        equal = [a for a, b, *_ in _added_values(task_id, seed) if type(a) is int and a == b]
        assert equal, task_id


def test_no_int32_value_where_two_integers_meet() -> None:
    # numpy in WASM reads a pair of values a signed 32-bit integer holds as int32: a correct np.add(x, y)
    # wraps at (2**31 - 1, 5), so where two integer arguments meet p17 draws neither 2**31 - 1 nor -2**31
    for task_id in ("redteam/mul", "HumanEval/53"):
        for seed in SEEDS:
            for args in _added_values(task_id, seed):
                ints = [v for v in args if type(v) is int]
                assert not (all(-(2**31) <= v < 2**31 for v in ints) and not -(2**31) <= sum(ints) < 2**31), (
                    args
                )
