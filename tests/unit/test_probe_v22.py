"""Seeded probe plans p22/c22: inputs asked again at more distances, at longer inputs and in the run's
second half, and inputs past the cases' range held twice on the same objects (red-team round 22's rows
REPEAT_DRAWN_SHORT, GAP_BANDS and HELD_PAIRS_NEAR). Through p21/c21 the input that came back after 2 to
12 other calls was no longer than the median text, none came back after 13 to ~60 calls, none after
2 to 12 calls in the second half (where the stub hands each call the previous call's objects refilled
in place), and the lists held twice in a row were a case's and a cheap near input's. p22/c22 keep every
input p21/c21 draw (only repeats are added), and runs of p21/c21 find their plans byte for byte."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from streams.probe.plan import (
    MAX_REPEAT_GAP,
    MIN_REPEAT_GAP,
    REPEAT_GAP_BANDS,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
    ProbePlan,
)
from streams.sandbox.protocol import caller_reuse_from
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import against_previous, assert_pinned_plans_found
from tests.unit.plan_pins import task as _task
from tests.unit.test_probe_v19 import _judged
from tests.unit.test_probe_v21 import _caller_judged

MATRIX_SEED = "5eed" * 8
P21_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
SEEDS = (MATRIX_SEED, *(f"{k:08x}" * 4 for k in range(5)))
#: the generations of p21/c21 and p22/c22
P21 = 19
P22 = 20
CODE = {p.name: p.code for p in PROGRAMS}

#: digests of p21/c21 plans drawn before p22/c22 existed (seeds P21_SEEDS; HumanEval/61, /129 and /33
#: are check plans, c21)
P21_DIGESTS = {
    "HumanEval/70": (
        "1422e32297991d818c6ec483e76781a04404f4adb7d02ba237095593767015ad",
        "9d7fd27d7ee43573edd0c0d6c90b9de4b390fe87e369843514852bb063afd2d8",
        "885141655b318ceed1224b0accb631926601a19e9c125e5726975e68f65a6f00",
    ),
    "HumanEval/88": (
        "199963e3ca9a153ea16e012da117373eb17f7661b27a2116b9391454579eb1a4",
        "c8e6bd97330dfb124f3f0db0e73360e0e1ca212ab3ea5b3daab35bb2a6fc7cf5",
        "c88c9a83ba19175d51277b6b0be7da63b0b214864ed39a668929e7f36157b697",
    ),
    "HumanEval/35": (
        "b1098c407c8c19ff6dd8ca7ee748d1b81fae6c96bd97011f49edc2303786ccfe",
        "e6e5dfca1a4581e51c2b276c0eb1a26c98ea72c5c70256e9835dc9a38d1ad551",
        "47f25441dfcc6970234777314fcddbee7d5f4d80ca16b9958b635dfc9d1f1df5",
    ),
    "HumanEval/4": (
        "a0b0ca70483a65fab3117035914ffab76a08ab2fe5f42f88f9399e298f6a808f",
        "7fe3aaeedad80c7bdae3e9b0dad7595e563cb802275fd20c46a1546b71c9f93f",
        "260c1e3573ccb14489ddf7d5064617a7306b37d3d9fbf695fd4e7ff39f8b6489",
    ),
    "HumanEval/149": (
        "0a82ad32c679bd6d46cfe117b9cf3ea744098935ad157108b367b22e79ac3b8a",
        "5a4053d920d2b877d624f8f912bb4cb567dcb41b4f1c33848edcf51dcb73011b",
        "2efbf02fb2fc656cf5c0b8e2c2e3387114c38d87e0af21fadf11650f822de7d5",
    ),
    "HumanEval/61": (
        "a4fe1ee80ec6c7b4a1bd90e46f77a942777f20426cceb02075f6d31775220f27",
        "bedf998d93a4da9b84e094c462ab452169bd2d9293d3d2475a4ec422cdafe8d2",
        "a1ae350120b4f85ab7e5d7659cf216dbd8a2f2e082ce3f51bb710f7cf08d5690",
    ),
    "HumanEval/129": (
        "8474f8f08a8fda70348391c26b20ac4e12e7086f30725c08db98b6f5d7249953",
        "59bf987f757441aa36edd76dedb1be12cff4eaf196eb4956d3cdb965731d3f8b",
        "8db34ad57862f0193f82836e53b759b7497f95d6c1c51f1c77e26a88d2fe90fa",
    ),
    "HumanEval/13": (
        "2bc55c12db712bd1ca84e614f2e884ca417249beb8c2bc9b0f89920386a57e61",
        "ce05396c1f1dbcd3694cf54843524a7eb18e5dcbbccdcc72b456c2ad2f318735",
        "6417a94b4f0b186816ea5b23986e6f245286c97c3e57b43af436f8377e0b2a17",
    ),
    "HumanEval/33": (
        "898672c0c0f5662e163c0d636b677e1a8b685f9cd5f2e50dea78d06e5cbe6fab",
        "baaaae49c87a5de39427ae04cded5e42a9d0014290ea457782962ad00662fa1a",
        "a150f5f44ea8edca8057dbb04695121fae4fecf7699eade631b19b88483688a9",
    ),
}
#: the programs p21/c21 accepted on every seed tried, the task of each, and on how many of SEEDS p22
#: shows each wrong at least (a22_same_object_far_88 is wrong only where the held list's first and last
#: numbers sum to an even number: about half the lists; a22_gap_mid_88 likewise)
WRONG = {
    "a22_gap_big_input_70": ("HumanEval/70", 6),
    "a22_seen_object_gap_70": ("HumanEval/70", 6),
    "a22_gap_mid_88": ("HumanEval/88", 6),
    "a22_same_object_far_88": ("HumanEval/88", 4),
}
#: tasks whose cases hold a list argument (the stub refills lists, dicts and sets in place)
LIST_TASKS = ("HumanEval/70", "HumanEval/88", "HumanEval/35", "HumanEval/4", "HumanEval/149")


def _args(text: str) -> tuple[Any, ...]:
    value = ast.literal_eval(text)
    return value if isinstance(value, tuple) else (value,)


def _repeats(plan: ProbePlan, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """(position, other calls since the input's previous asking) of every asking again with both askings
    in ``plan.inputs[lo:hi]``."""
    last: dict[str, int] = {}
    out: list[tuple[int, int]] = []
    for pos, text in enumerate(plan.inputs[:hi]):
        if text in last and last[text] >= lo:
            out.append((pos, pos - last[text] - 1))
        last[text] = pos
    return out


def _first_half(plan: ProbePlan) -> tuple[int, int]:
    """The inputs near the cases, before those past the range (and before the run's second half)."""
    return 0, min(min(plan.far), caller_reuse_from(len(plan.inputs)))


def _second_half(plan: ProbePlan) -> tuple[int, int]:
    """The run's second half up to the long inputs at the end."""
    return caller_reuse_from(len(plan.inputs)), len(plan.inputs) - plan.ends


def test_runs_of_p21_and_c21_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P21] == ("p21", "c21") and SEEDED_VERSIONS[P22] == ("p22", "c22")
    assert SEEDED_VERSIONS.index((SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION)) >= P22
    assert_pinned_plans_found(P21_DIGESTS, P21_SEEDS, P21)


@pytest.mark.parametrize("task_id", sorted(P21_DIGESTS))
def test_every_p21_input_stays_and_only_repeats_are_added(task_id: str) -> None:
    for seed in SEEDS[:3]:
        new, old = against_previous(_task(task_id), seed, P22)
        assert set(new.inputs) == set(old.inputs), seed
        assert (new.lead, new.seeds, new.ends) == (old.lead, old.seeds, old.ends), seed
        assert new.inputs[: new.lead + new.seeds] == old.inputs[: old.lead + old.seeds], seed
        assert new.inputs[len(new.inputs) - new.ends :] == old.inputs[len(old.inputs) - old.ends :], seed
        # p21's drawn distances stay (a cycle's, p5's and p6's, move with what is laid before them), and
        # the plan grows by less than a tenth
        drawn = {d for _, d in _repeats(old, *_first_half(old)) if d <= MAX_REPEAT_GAP}
        assert drawn <= {d for _, d in _repeats(new)}, seed
        assert len(old.inputs) <= len(new.inputs) < 1.1 * len(old.inputs), seed
        # every repeat is an earlier input's: the sections past the range stay past it
        assert min(new.far) >= min(old.far) and new.far == frozenset(range(min(new.far), len(new.inputs)))


@pytest.mark.parametrize("task_id", LIST_TASKS)
def test_inputs_come_back_after_longer_distances_and_long_inputs_after_2_to_12(task_id: str) -> None:
    short = set(range(MIN_REPEAT_GAP, MAX_REPEAT_GAP + 1))
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P22)
        lo, hi = _first_half(new)
        texts = new.inputs[new.lead + new.seeds : hi]
        median = sorted(len(t) for t in texts)[len(texts) // 2]
        repeats = _repeats(new, lo, hi)
        # repeats at distances from 2 to 12 whose input is longer than the median text, and at distances
        # of the bands past 12, as far as the section's room goes (p21's own repeats take much of it:
        # measured 3 to 9 of the 11 distances and 0 to 4 of the 4 bands on these tasks)
        assert len(short & {d for pos, d in repeats if len(new.inputs[pos]) > median}) >= 3, seed
        distances = {d for _, d in repeats}
        bands = [a for a, b in REPEAT_GAP_BANDS if distances & set(range(a, b + 1))]
        if task_id in ("HumanEval/70", "HumanEval/88", "HumanEval/149"):
            assert len(bands) >= 2 and distances & set(range(14, 50)), seed
        if task_id in ("HumanEval/70", "HumanEval/88"):
            # p21: no input came back after 14 to 49 other calls, and on HumanEval/70 none of more than
            # 7 distinct elements after 2 to 12
            before = _repeats(old, *_first_half(old))
            assert not set(range(14, 50)) & {d for _, d in before}, seed
            if task_id == "HumanEval/70":
                assert not [p for p, d in before if d in short and len(set(_args(old.inputs[p])[0])) > 7]


@pytest.mark.parametrize("task_id", LIST_TASKS)
def test_inputs_come_back_after_2_to_12_calls_in_the_second_half(task_id: str) -> None:
    wanted = set(range(MIN_REPEAT_GAP, MAX_REPEAT_GAP + 1))
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P22)
        # both askings in the second half, where every call gets the previous call's objects
        assert wanted <= {d for _, d in _repeats(new, *_second_half(new))}, seed
        if task_id in ("HumanEval/70", "HumanEval/88"):
            assert not wanted & {d for _, d in _repeats(old, *_second_half(old))}, seed


def test_which_input_comes_back_where_is_the_seeds() -> None:
    t = _task("HumanEval/70")
    drawn = set()
    for seed in SEEDS:
        new, _ = against_previous(t, seed, P22)
        drawn.add(tuple((new.inputs[pos], d) for pos, d in _repeats(new, *_second_half(new))))
    assert len(drawn) == len(SEEDS)


@pytest.mark.parametrize("task_id", LIST_TASKS)
def test_an_input_past_the_range_is_held_twice_on_the_same_objects(task_id: str) -> None:
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P22)
        start, first_far = caller_reuse_from(len(new.inputs)), min(new.far)
        near = set(new.inputs[:first_far])

        def held(plan: ProbePlan, start: int = start) -> set[str]:
            return {
                plan.inputs[pos]
                for pos in range(max(1, start), len(plan.inputs))
                if plan.inputs[pos] == plan.inputs[pos - 1]
                and any(type(a) in (list, dict, set) for a in _args(plan.inputs[pos]))
            }

        # an input only the section past the range asks, twice in a row in the second half
        assert held(new) - near, seed
        assert not held(old) - set(old.inputs[: min(old.far)]), seed


@pytest.mark.parametrize("name", WRONG)
def test_a_program_wrong_only_at_those_repeats_is_shown_wrong(name: str) -> None:
    task_id, least = WRONG[name]
    t = _task(task_id)
    shown = 0
    for seed in SEEDS:
        new, old = against_previous(t, seed, P22)
        assert not _caller_judged(t, CODE[name], old), seed
        shown += bool(_caller_judged(t, CODE[name], new))
    assert shown >= least
    # the pinned seed of the red-team matrix shows each
    assert _caller_judged(t, CODE[name], against_previous(t, MATRIX_SEED, P22)[0])


#: the corpus' correct programs on HumanEval/70 and /88 (the tasks of the target programs)
CORRECT = tuple(
    p.name
    for p in PROGRAMS
    if p.task in ("HumanEval/70", "HumanEval/88")
    and p.kind == "correct"
    and p.mode == "score"
    and "wasm" in p.backends
)


@pytest.mark.parametrize("name", CORRECT)
def test_correct_programs_on_those_tasks_are_never_shown_wrong(name: str) -> None:
    program = next(p for p in PROGRAMS if p.name == name)
    try:
        compile(program.code, "<solution>", "exec")
    except SyntaxError:
        pytest.skip("newer syntax than the host's")
    t = _task(program.task)
    for seed in SEEDS[:3]:
        new, old = against_previous(t, seed, P22)
        judges = (_judged, _caller_judged)
        before = {old.inputs[pos] for judge in judges for pos in judge(t, program.code, old)}
        wrong = [*_judged(t, program.code, new), *_caller_judged(t, program.code, new)]
        assert all(new.inputs[pos] in before for pos in wrong), seed
