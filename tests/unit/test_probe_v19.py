"""Seeded probe plans p19/c19: bracket strings nesting far deeper than the cases, and lists whose cases
mix ints and floats grown past the cases' own numbers (red-team rows BALANCED_DEPTH and LIST_POOL).
Through p18/c18 a bracket string was a case's mutated a character at a time or cases' strings joined,
so none nested deeper than a case (HumanEval/61: 6 levels), and such a list grew with the cases' numbers
alone, so with distinct elements none was longer than the cases' distinct numbers (redteam/mean: 15).
p19/c19 keep every input p18/c18 draw, and runs of p18/c18 find their plans byte for byte."""

from __future__ import annotations

import pytest

from schemas.task import TaskPublished
from streams.noise.probe import _within_rounding
from streams.probe.plan import (
    DEEP_INPUTS,
    DEEP_NESTING,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
    ProbePlan,
    _balanced,
    _deep_positions,
)
from streams.reward.literals import CompareOptions, values_match
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import added_positions, against_previous, answers, assert_pinned_plans_found
from tests.unit.plan_pins import args as _args
from tests.unit.plan_pins import task as _task

MATRIX_SEED = "5eed" * 8
P18_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the seeds the red-team runner's --probe-seeds 5 uses, and the matrix's
SEEDS = (MATRIX_SEED, *(f"{k:08x}" * 4 for k in range(5)))
#: the generations of p18/c18 and p19/c19
P18 = 16
P19 = 17
CODE = {p.name: p.code for p in PROGRAMS}

#: digests of p18/c18 plans drawn before p19/c19 existed (seeds P18_SEEDS)
P18_DIGESTS = {
    "HumanEval/61": (
        "2d865fb20839d1b97c771d8b723345c9285e04d35a80a54dc7bbad06dd34b425",
        "1b99ea6aec4dd83f04c71349af71dfa72d35bb0db635998f142ba32b72ba9d86",
        "bdc05bc39c3c335ed7d24a4f57f963d8669bc43acf6d94685cf1ef81e2ee5026",
    ),
    "redteam/mean": (
        "2412e824e971bc5846739b23fe0f384b17f43715869ef4ad3334192633dc9d29",
        "c2c14d731067c0f17cb292388a47020936fb14efd8f893a91153e0c8c26a8b19",
        "f550177680153209cf26e3aa992dfc37510bc478bd8459da5d33faaac518a898",
    ),
    "HumanEval/6": (
        "61b4cf2a9fb879d86f31198a712d84cd578e5e9731b364fc561064fe54d8f288",
        "2498d7cb908065a8a6d2ea6b28b6ca50310238c9b5d04821847566de5c668b88",
        "44160b6a8e2ff33dd2e7c5fb4bbd18435f3781490a85335468116d34c9ed34a4",
    ),
    "HumanEval/1": (
        "6c4a39cf50e748258e4e52cf5f6240adc88f2b6f0b92fd6f979f1f48968a96c1",
        "46801cb6d283fb8a9aff650f0633a486e5f06ec1ad29f2b882665770a89a22f1",
        "dd20aa43a9bba364809eddab33ba9cae0e7f68d1ca50b4c8e812c8ec04209462",
    ),
    "HumanEval/56": (
        "592fced408f058ad4c677367c1d34dbb652a3a290ebcf9f35751c359698adff6",
        "0738987731bf4b2388ce9eb1aa8239dd9195bdc8ee8bd039afac7bade5f47e01",
        "be4935a8fb706b60d540ac3f93b7e9d75b0fe886696f2c5204cddd5cb1ba5469",
    ),
    "HumanEval/132": (
        "89e32e7c5cefcd2b55caf56e7f0dc1f7473fcb91f1b76ac77fb241f367052f30",
        "bb750d0c61df0e446fa0ad4d8943baf0f6c4b493934251476f8e0b7e1d4f88f4",
        "74f90bcf8918603ac6bee85d1b66b5ff1a996b18a399be5f041d73da4c274598",
    ),
    "HumanEval/159": (
        "ebf493b9e25072b19a6d9b876d8919ace397d836881f0af1e1fa3d8393acd17d",
        "e1ec5988566ad89a90f1f4b953c296e1734670ef3d165c4380a2a2c7e8937e08",
        "205b173b647d63d4fc2fa2e60d0cd382a00aaddaa3a87e7b90b4cc3d08011843",
    ),
    "redteam/safe_ratio": (
        "bf4a0d84d3bdc5dea4dc7bd4b7696d1fbd48e241e4b27152b11822ca371bcd80",
        "26ed48fa41d67f9dce9520e6d233245eb5fea5b464da3c07ff0e4a67237c1a98",
        "c8f99172151b5f7d660493e9ba4a7d7419b5493976318aaec3e1ad3c467eed79",
    ),
    "HumanEval/20": (
        "0f7ce33fb657ea74b85e761567cb243dbbfe428b388d54452b867929a452c4af",
        "fb5ead90e429d9ea0144e16f17709dd437a4d17f09f710e2f0e00833d9008ef0",
        "ebcf04b13648bbb1823d16b58ea120516624f66983790469292e170b0d3a7579",
    ),
}
#: the tasks whose plans p19/c19 change on the matrix's seed: bracket strings, lists mixing ints and floats
DEEP_TASKS = ("HumanEval/1", "HumanEval/6", "HumanEval/56", "HumanEval/61", "HumanEval/132")
GROWN_TASKS = ("redteam/mean", "HumanEval/81", "HumanEval/133", "HumanEval/151")
#: the programs p18/c18 accepted on every seed tried, and the task of each
WRONG = {"a19b_check_int8_depth_61": "HumanEval/61", "a18b_keyboardinterrupt_far_mean": "redteam/mean"}
#: correct programs of a reading their task's reference does not share, on inputs no case shows (a whole
#: float taken for an integer on HumanEval/151, a GPA past the table's 4.0 on /81, a-z alone ordered on
#: /125): any plan that draws
#: such an input shows them wrong, and the filter rejects them (red-team KNOWN, false-rejection hunt f39)
OTHER_READINGS = frozenset(
    {"f39c_ok_integral_float_151", "f39c_ok_at_least_four_gpa_81", "f39c_ok_alphabet_order_125"}
)
#: the corpus' correct programs on the tasks whose plans change
CORRECT = tuple(
    p.name
    for p in PROGRAMS
    if p.task in {*DEEP_TASKS, *GROWN_TASKS}
    and p.kind == "correct"
    and p.mode == "score"
    and "wasm" in p.backends
    and p.name not in OTHER_READINGS
)


def test_runs_of_p18_and_c18_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P18] == ("p18", "c18") and SEEDED_VERSIONS[P19] == ("p19", "c19")
    assert (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION) not in SEEDED_VERSIONS[: P19 + 1]
    assert_pinned_plans_found(P18_DIGESTS, P18_SEEDS, P18)


def _nesting(s: str, pair: str) -> int:
    depth = most = 0
    for ch in s:
        depth += (ch == pair[0]) - (ch == pair[1])
        most = max(most, depth)
    return most


def _cases(plan: ProbePlan) -> list[tuple[object, ...]]:
    return [_args(text) for text in plan.inputs[plan.lead : plan.lead + plan.seeds]]


def _grown(text: str, cases: list[tuple[object, ...]]) -> bool:
    """Whether an input's list of numbers is longer than the cases' longest and holds a number no case
    holds."""
    (value,) = _args(text)[:1]
    shown = {repr(e) for c in cases if isinstance(c[0], list) for e in c[0]}
    longest = max(len(c[0]) for c in cases if isinstance(c[0], list))
    return isinstance(value, list) and len(value) > longest and any(repr(e) not in shown for e in value)


@pytest.mark.parametrize("task_id", sorted(P18_DIGESTS))
def test_every_p18_input_stays_and_only_deep_strings_and_grown_lists_are_added(task_id: str) -> None:
    for seed in SEEDS[:3]:
        new, old = against_previous(_task(task_id), seed, P19)
        assert set(old.inputs) <= set(new.inputs), seed
        cases = _cases(old)
        pairs = _deep_positions(cases)
        for pos in added_positions(new, old):
            text = new.inputs[pos]
            # past the cases' range, not widening the domain: a value and an error are judged there
            assert pos in new.far and pos not in new.wide, (seed, text)
            deep = any(_nesting(str(_args(text)[i]), pair) >= DEEP_NESTING[0] for i, pair in pairs)
            assert deep or _grown(text, cases), (seed, text)


@pytest.mark.parametrize("task_id", DEEP_TASKS)
def test_bracket_strings_nest_far_deeper_and_keep_the_cases_balance(task_id: str) -> None:
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P19)
        cases = _cases(old)
        ((i, pair),) = _deep_positions(cases)
        balanced = all(_balanced(str(c[i]), pair) for c in cases)
        deep = [
            pos for pos in added_positions(new, old) if _nesting(str(_args(new.inputs[pos])[i]), pair) > 6
        ]
        assert len(deep) == DEEP_INPUTS, seed
        for pos in deep:
            s = str(_args(new.inputs[pos])[i])
            assert DEEP_NESTING[0] <= _nesting(s, pair) <= DEEP_NESTING[1] + 6, (seed, s[:40])
            assert not balanced or _balanced(s, pair), seed
            if task_id == "HumanEval/6":  # each group stays balanced (p18's rule)
                assert all(_balanced(w, pair) for w in s.split()), seed
        # most draws nest past a signed byte's 127
        assert max(_nesting(str(_args(new.inputs[pos])[i]), pair) for pos in deep) >= 128, seed


def test_only_strings_of_brackets_or_balanced_ones_nest_deeper() -> None:
    # HumanEval/61's calls: brackets alone, some unbalanced; HumanEval/1's: balanced, with spaces
    assert _deep_positions([(")(()",), ("(()())",)]) == [(0, "()")]
    assert _deep_positions([("( ) (( ))",), ("(())",)]) == [(0, "()")]
    # brackets among other characters: only where every case balances
    assert _deep_positions([("f(x)",), ("g(h(y))",)]) == [(0, "()")]
    assert _deep_positions([("f(x",), ("g(h(y))",)]) == []
    # no case holds the pair: nothing to nest
    assert _deep_positions([("abc",), ("de f",)]) == []


@pytest.mark.parametrize("task_id", GROWN_TASKS)
def test_lists_mixing_ints_and_floats_grow_past_the_cases_numbers(task_id: str) -> None:
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P19)
        cases = _cases(old)
        distinct = len({repr(e) for c in cases for e in c[0]})  # type: ignore[attr-defined]
        grown = [_args(new.inputs[pos])[0] for pos in added_positions(new, old)]
        lists = [v for v in grown if isinstance(v, list)]
        assert lists and all(all(type(e) in (int, float) for e in v) for v in lists), seed
        # longer than the cases' distinct numbers (some up to a thousand and more), of both kinds
        assert max(len(v) for v in lists) > max(distinct, 999), seed
        longest = max(lists, key=len)
        assert {type(e) for e in longest} == {int, float}, seed
        columns = [c[0] for c in cases if isinstance(c[0], list)]
        if all(len(set(map(repr, v))) == len(v) for v in columns):
            assert all(len(set(map(repr, v))) == len(v) for v in lists), seed


def _same(expected: object, value: object) -> bool:
    try:
        if bool(expected == value):
            return True
    except Exception:  # an array's == is no truth value
        pass
    return values_match(expected, value, CompareOptions())


def _answers(code: str, entry_point: str, texts: list[str]) -> list[tuple[str, object]]:
    """:func:`answers`, a KeyboardInterrupt the code raises on a call taken as that call's error (as the
    sandbox reports it), not as this process's."""
    wrapped = (
        f"{code}\n\n_wrapped_entry = {entry_point}\n\n\n"
        f"def {entry_point}(*args):\n"
        "    try:\n"
        "        return _wrapped_entry(*args)\n"
        "    except KeyboardInterrupt:\n"
        "        raise RuntimeError('KeyboardInterrupt') from None\n"
    )
    return answers(wrapped, entry_point, texts)


def _judged(task: TaskPublished, code: str, plan: ProbePlan) -> list[int]:
    """The positions where ``code`` answers otherwise than the reference, the whole plan called in turn:
    a value anywhere, an error where the reference answers (but for running out of stack or memory,
    and on an input that widens the domain: refusing it is the program's right). A float-only
    difference past the range is judged as the filter judges it, as rounding where some order of
    summing the input's numbers gives it (``streams.noise.probe._within_rounding``, v19 and v23)."""
    assert task.reference is not None
    mine = _answers(code, task.entry_point, list(plan.inputs))
    theirs = _answers(task.reference, task.entry_point, list(plan.inputs))
    out = []
    for pos, ((kind, value), (ref_kind, expected)) in enumerate(zip(mine, theirs, strict=True)):
        if ref_kind != "ok":
            continue
        if kind != "ok":
            if pos not in plan.wide and value not in ("RecursionError", "MemoryError"):
                out.append(pos)
            continue
        if _same(expected, value):
            continue
        if pos in plan.far and _within_rounding(plan.inputs[pos], expected, value, True, True):
            continue
        out.append(pos)
    return out


@pytest.mark.parametrize("name", WRONG)
def test_a_program_wrong_only_deeper_or_longer_is_shown_wrong_on_every_seed(name: str) -> None:
    task = _task(WRONG[name])
    for seed in SEEDS:
        new, old = against_previous(task, seed, P19)
        assert not _judged(task, CODE[name], old), seed
        wrong = _judged(task, CODE[name], new)
        assert wrong and all(new.inputs[pos] not in set(old.inputs) for pos in wrong), seed


@pytest.mark.parametrize("name", CORRECT)
def test_correct_programs_on_those_tasks_are_never_shown_wrong(name: str) -> None:
    task = _task(next(p.task for p in PROGRAMS if p.name == name))
    for seed in SEEDS:
        new, old = against_previous(task, seed, P19)
        wrong = _judged(task, CODE[name], new)
        # only where p18 showed it wrong already (the judge here is cruder than the filter)
        before = {old.inputs[pos] for pos in _judged(task, CODE[name], old)}
        assert all(new.inputs[pos] in before for pos in wrong), (seed, [new.inputs[p][:60] for p in wrong])
