"""Seeded probe plans p15/c15: the empty string, machine-bound integers inside every case's list of ints,
and integer arguments of digit counts the cases leave out (red-team round 17/17b). Through p14/c14 a
string was shortened by dropping its letters and digits only, so a string of brackets was never emptied
(``a17b_first_char_empty_61``: ``brackets[0]`` unguarded, accepted on every seed); a bound of
``MACHINE_BOUNDS`` landed in a list only where one draw chose that argument and one case, so
HumanEval/90's list of two met ``2**31`` on one seed of five (``a17b_intmax_sentinel_90``: C-style
``INT_MAX`` sentinels); and near inputs kept each argument's digit count while far ones scaled it up, so
two eight-digit factors never met where redteam/mul's cases pass nine digits (``a17_mul_float_below_1e8``:
floats below ``10**8``). p15/c15 add them from a generator of their own; every input p14/c14 draw stays,
and runs of p14/c14 find their plans byte for byte."""

from __future__ import annotations

import pytest

from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.noise.probe import empty_refusals_held
from streams.probe.plan import (
    MACHINE_BOUNDS,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
)
from tests.hacks.fixtures import simulated_verdict
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import added_positions, against_previous, assert_pinned_plans_found
from tests.unit.plan_pins import answers as _answers
from tests.unit.plan_pins import args as _args
from tests.unit.plan_pins import task as _task
from tests.unit.test_probe_wider import OPTS, SEEDS

MATRIX_SEED = "5eed" * 8
P14_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the generations of p14/c14 and p15/c15
P14 = 12
P15 = 13
CODE = {p.name: p.code for p in PROGRAMS}
FILTER = NoiseConfig().version
#: the three programs p14 accepted (on 0, 4 and 5 of five seeds caught: 1, 0, 0), and the task of each
WRONG = {
    "a17b_first_char_empty_61": "HumanEval/61",
    "a17b_intmax_sentinel_90": "HumanEval/90",
    "a17_mul_float_below_1e8": "redteam/mul",
}
#: the corpus' correct programs on those tasks and on HumanEval/151 (run in-process here)
CORRECT = tuple(
    p.name
    for p in PROGRAMS
    if p.task in (*WRONG.values(), "HumanEval/151") and p.kind == "correct" and "_ok_" in p.name
)

#: digests of p14/c14 plans drawn before p15/c15 existed (seeds P14_SEEDS)
P14_DIGESTS = {
    "HumanEval/0": (
        "db4c95bc083eff8e864e325037b9462dce1218f3e58e7dd3a6db79bdc7958019",
        "276a255f84e2373591c53f4f3e9319202e13cb6a2650c8af65ed25fdfd0f7678",
        "b2745099c1d3dc5d5c63aa6bb8646c3264d6e2432e37817e9c4cbc5e6dbbb11b",
    ),
    "HumanEval/23": (
        "4ec4ce28c503cd968278eba51c429d12486d224ceeaa1bcc72dc8d49f3f26651",
        "fdbe216b0ed6e78c48da00a4fdb2a054b05db60665f894760075c05189aa0cdb",
        "747f893949c3d6708dcb41fd7de6cc13adb22e1bda011220aa2b313645719bf3",
    ),
    "HumanEval/44": (
        "2f856aeb5018c63932f6adb6e515f3cbdf96570d9f7082297852c9f1405b0a76",
        "70b544dd79ba9007c193a77bebea09c94483ec4bc250d1e10ef2ea2b938d98e6",
        "560ce61c27674998b9d53bfe7395f5578b5836e26c5241c30f559cbaad4817e1",
    ),
    "HumanEval/61": (
        "5277216d083ae76e290898511a271b4b191defaadd56d0e59bae638d4bcbc7f7",
        "5164f8395936bf26c955a0b2a54079de405fac5874329799a3212b5e51892904",
        "d7abe1ef919c6ed784ce3677fe3963601312744076499a703fad7933c7c3ea6f",
    ),
    "HumanEval/90": (
        "2d63cd617aa88c02d59157cf34e73f321c72262bac5f748dcff3a864b6e7c02c",
        "5d0903511224c79ba3f33d8ecbcfb7650ba29e3c0b5652ed3a5dbc8a9f98e35c",
        "29400546ec986c11479c62fc4898f3308e8f84036e5758901c8d81665ad6e307",
    ),
    "HumanEval/151": (
        "e0cdc453bb7e7bb8c71cf39a13c1b6bb4ad2176959a4cea684b675724aac720a",
        "1120a975d8df1c9cbcaf81d3585b7094a3d1242f8ae02e78cd638b07c0e8ff17",
        "94190d03c005276daa87d7b2b6b26fd1248fb2908561b6c11121a1fc0776f302",
    ),
    "redteam/mul": (
        "65fb1be7ed800619abeb695980fc45760d9b22b5f66edb9b4bece2f20679d839",
        "9e6dc8672924d0e54e34b3d7a6441b5bd76c54cca49e7659be8245326fc801aa",
        "23c1784709ef91dd50eecc6f6033a1c20c239823c0d3aa82e7b37747c97b8a2f",
    ),
    "redteam/xor_bytes": (
        "d642b806c6a2144285e1326f34152eb790c94b9d634102294acaef1547146d27",
        "acb69fcc6bdf310e61a7f6060312ac8ec4b4a855f62ccfe58c3b17012a6bfc6a",
        "4c338029fe7c5acc13fe420205266dca509a07efd87bb32f0b27862a0f492c10",
    ),
}
#: tasks without a string argument, a list of ints or integers of several digit counts (HumanEval/151's
#: lists mix floats and ints; the synthetic thresholds' integers all have 3 or 4 digits): p15 draws p14's
UNCHANGED = (
    "HumanEval/0",
    "HumanEval/23",
    "HumanEval/44",
    "HumanEval/151",
    "redteam/xor_bytes",
    "synthetic/is_large",
)
CHANGED = ("HumanEval/61", "HumanEval/90", "redteam/mul")


def test_runs_of_p14_and_c14_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P14] == ("p14", "c14") and SEEDED_VERSIONS[P15] == ("p15", "c15")
    assert (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION) not in SEEDED_VERSIONS[: P15 + 1]
    assert_pinned_plans_found(P14_DIGESTS, P14_SEEDS, P14)


@pytest.mark.parametrize("task_id", UNCHANGED)
def test_a_task_without_those_edges_draws_p14s_inputs(task_id: str) -> None:
    for seed in (MATRIX_SEED, *SEEDS[:2]):
        new, old = against_previous(_task(task_id), seed, P15)
        assert new.inputs == old.inputs and new.far == old.far and new.wide == old.wide, seed


@pytest.mark.parametrize("task_id", CHANGED)
def test_every_p14_input_stays_and_the_added_ones_judge_only_a_value(task_id: str) -> None:
    for seed in (MATRIX_SEED, *SEEDS[:3]):
        new, old = against_previous(_task(task_id), seed, P15)
        assert set(old.inputs) <= set(new.inputs), seed
        added = added_positions(new, old)
        assert added and all(pos in new.wide for pos in added), seed


def test_a_string_of_brackets_is_emptied_and_an_error_there_is_judged() -> None:
    task = _task("HumanEval/61")
    for seed in (MATRIX_SEED, *SEEDS):
        new, old = against_previous(task, seed, P15)
        assert "('',)" not in old.inputs, seed  # p14 dropped letters and digits only
        pos = new.inputs.index("('',)")
        assert pos in new.wide and pos in empty_refusals_held(task, new), seed


def test_a_bound_lands_in_every_case_list_of_two() -> None:
    task = _task("HumanEval/90")
    for seed in (MATRIX_SEED, *SEEDS):
        new, old = against_previous(task, seed, P15)
        pairs = [
            (pos, values)
            for pos in added_positions(new, old)
            if len(values := _args(new.inputs[pos])[0]) == 2 and 1 in values
        ]
        for bound in MACHINE_BOUNDS:
            # the check's [1, 1] with one element near the bound, of its sign and parity: the second smallest
            near = [v for _, values in pairs for v in values if abs(v - bound) < 1000]
            assert near and all(v > 0 and v % 2 == 1 for v in near), (seed, bound)
        assert all(pos in new.wide for pos, _ in pairs), seed


def test_two_odd_factors_of_eight_digits_meet_where_the_cases_pass_nine() -> None:
    task = _task("redteam/mul")
    shown = {len(str(abs(v))) for c in (*task.tests, *task.hidden_tests) for v in _args(c.input)}
    assert 9 in shown and 8 not in shown
    for seed in (MATRIX_SEED, *SEEDS):
        new, old = against_previous(task, seed, P15)
        factors = [_args(new.inputs[pos]) for pos in added_positions(new, old)]
        eight = [(a, b) for a, b in factors if len(str(abs(a))) == len(str(abs(b))) == 8]
        assert any(abs(a * b) > 2**53 and a % 2 == b % 2 == 1 for a, b in eight), seed
        assert not any(len(str(abs(a))) == 8 for a, _ in (_args(t) for t in old.inputs)), seed


def _judged(task: TaskPublished, code: str, seed: str) -> list[str]:
    """The inputs p15 adds where ``code`` gets what the filter counts as wrong against the reference: a
    value other than its value, or an error where an error is judged (an empty argument the task admits)."""
    new, old = against_previous(task, seed, P15)
    added = added_positions(new, old)
    texts = [new.inputs[pos] for pos in added]
    assert task.reference is not None
    held = empty_refusals_held(task, new)
    wrong = []
    for pos, text, (kind, value), (ref_kind, expected) in zip(
        added,
        texts,
        _answers(code, task.entry_point, texts),
        _answers(task.reference, task.entry_point, texts),
        strict=True,
    ):
        if ref_kind == "ok" and ((kind == "ok" and value != expected) or (kind == "error" and pos in held)):
            wrong.append(text)
    return wrong


@pytest.mark.parametrize("name", WRONG)
def test_a_program_wrong_only_on_those_edges_is_shown_wrong_on_every_seed(name: str) -> None:
    task = _task(WRONG[name])
    for seed in (MATRIX_SEED, *SEEDS):
        assert _judged(task, CODE[name], seed), seed


@pytest.mark.parametrize("name", CORRECT)
def test_correct_programs_on_those_tasks_are_never_shown_wrong(name: str) -> None:
    task = _task(next(p.task for p in PROGRAMS if p.name == name))  # type: ignore[arg-type]
    for seed in (MATRIX_SEED, *SEEDS):
        assert not _judged(task, CODE[name], seed), seed


def test_the_case_task_program_is_rejected_by_the_filter() -> None:
    # redteam/mul is judged by its cases: the filter's own verdict, its probe run simulated here
    task = _task("redteam/mul")
    for seed in (MATRIX_SEED, *SEEDS[:4]):
        verdict, codes = simulated_verdict(
            task, CODE["a17_mul_float_below_1e8"], seed=seed, version=FILTER, options=OPTS
        )
        assert verdict == "reject" and "wrong.disagrees_with_reference" in codes, (seed, codes)
