"""Probe plans p7/c7 and noise filter v7: inputs longer than the cases' where two arguments' lengths are
tied, and a reference's refusal forgiven only on the inputs it speaks for.

p7/c7 lengthen arguments whose lengths differ by one amount in every case together (the filter leaves
out every input that breaks such a relation, so lengthened one at a time none was judged), and hold,
beside each input past the range with an empty argument, the same input with that argument filled
from the cases. Filter v7 forgives a program's error where the reference answers with a value only on
an input whose filled twin the reference refuses (whatever the error's text), and nowhere else (v6
forgave every error of a refusal's text on every input past the range)."""

from __future__ import annotations

import ast
import random

import pytest

from schemas.task import TaskPublished
from streams.noise.probe import (
    _alike,
    examine,
    outside_cases,
    reference_answers,
    reference_refusals,
    reference_settled,
    refused_alike,
)
from streams.probe.plan import (
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    _filled,
    _length_offset,
    _plan,
    _Sizes,
    plan_for,
    probe_run_index,
    recorded_plan,
)
from streams.reward.correctness import expected_cases, grade
from tests.hacks.acceptance import humaneval
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.unit.test_noise_probe import cases_of, task_of
from tests.unit.test_probe_v6 import OPTS, OWN_REFUSAL, TRANSLATES, XOR_REF, XOR_TASK, verdict
from tests.unit.test_probe_wider import SEEDS

# -------------------------------------------------------------- lengths tied between two arguments


#: one operator fewer than operands in every case, and an operator repeated in one (the lists need not
#: be distinct, so they can grow past the cases' three operators from the cases' own three)
ALGEBRA_REF = (
    "def solve(ops, xs):\n    e = str(xs[0])\n    for o, x in zip(ops, xs[1:]):\n        e += o + str(x)\n"
    "    return eval(e)\n"
)
TIED_TASK = task_of(
    ALGEBRA_REF,
    cases_of(
        ALGEBRA_REF,
        [
            "(['*', '+'], [2, 3, 4])",
            "(['-', '-'], [9, 5, 1])",
            "(['*', '-', '+'], [1, 2, 3, 4])",
            "(['+'], [8, 1])",
        ],
    ),
)


def _longer_judged(task: TaskPublished, seed: str, generation: int) -> list[tuple[object, ...]]:
    """The inputs past the range longer than every case that the filter judges (keeps in the domain)."""
    plan = _plan(task, seed, generation)
    assert plan is not None
    outside = outside_cases(plan, expected_cases(task))
    longest = max(len(ast.literal_eval(c.case.input)[0]) for c in expected_cases(task))
    args = [(pos, ast.literal_eval(plan.inputs[pos])) for pos in sorted(plan.far)]
    return [a for pos, a in args if pos not in outside and len(a[0]) > longest]  # type: ignore[arg-type]


def test_tied_lengths_need_three_cases_that_keep_one_difference() -> None:
    three: list[tuple[object, ...]] = [
        (["+"], [1, 2]),
        (["*", "-"], [3, 4, 5]),
        (["+", "+", "*"], [1, 2, 3, 4]),
    ]
    assert _length_offset(three, 0, 1) == 1
    assert _length_offset(three[:2], 0, 1) is None  # two cases show no relation (the filter reads none)
    assert _length_offset([*three, (["+"], [1, 2, 3])], 0, 1) is None  # one case breaks it
    sizes = _Sizes(three, related=True)
    assert sizes.groups == [[0, 1]] and sizes.offsets == {0: 0, 1: 1} and sizes.related == {0}
    assert _Sizes(three).groups == [[0], [1]]  # p4 to p6: lengthened one at a time


@pytest.mark.parametrize("seed", SEEDS)
def test_arguments_whose_lengths_are_tied_grow_together_past_the_cases(seed: str) -> None:
    plan = plan_for(TIED_TASK, seed)
    assert plan is not None and plan.version == SEEDED_PLAN_VERSION
    longer = _longer_judged(TIED_TASK, seed, 5)
    assert len(longer) >= 4 and all(len(xs) == len(ops) + 1 for ops, xs in longer)  # type: ignore[arg-type]
    # the p6 plan drawn with the same seed lengthened one list at a time: the filter judged (nearly)
    # none of those, only where two independent draws happened to keep the relation
    assert len(_longer_judged(TIED_TASK, seed, 4)) < len(longer)


def test_a_group_that_cannot_grow_to_one_length_gives_no_input() -> None:
    # the operators are distinct in every case and only three exist: no list of four is distinct
    sizes = _Sizes([(["+"], [1, 2]), (["*", "-"], [3, 4, 5]), (["+", "-", "*"], [1, 2, 3, 4])], related=True)
    rng = random.Random(0)
    assert all(sizes.longer((["+", "-", "*"], [1, 2, 3, 4]), rng) is None for _ in range(20))


@pytest.mark.parametrize("seed", SEEDS)
def test_a_program_wrong_only_past_the_cases_length_is_seen(seed: str) -> None:
    # reads no further than three operators (as many as a case has): wrong on any longer input
    short_sighted = (
        "def solve(ops, xs):\n    e = str(xs[0])\n    for o, x in zip(ops[:3], xs[1:4]):\n"
        "        e += o + str(x)\n    return eval(e)\n"
    )
    assert verdict(TIED_TASK, ALGEBRA_REF, seed, "v7") == "accept"
    assert verdict(TIED_TASK, short_sighted, seed, "v7") == "reject"
    assert verdict(TIED_TASK, short_sighted, seed, "v6") == "reject"  # v6 judges a p7 plan's inputs too


def test_older_plans_still_draw_as_they_did() -> None:
    seed = SEEDS[0]
    p6 = _plan(TIED_TASK, seed, 4)
    assert p6 is not None and p6.version == "p6"
    assert recorded_plan(TIED_TASK, seed, p6.digest) == p6
    # a task with no tied lengths and no empty argument past the range: p7 holds p6's inputs
    ref = "def solve(xs, k):\n    return sorted(xs)[:k]\n"
    plain = task_of(ref, cases_of(ref, ["([3, 1, 2], 2)", "([5, 4], 1)", "([9, 8, 7, 6], 3)"]))
    a, b = _plan(plain, seed, 5), _plan(plain, seed, 4)
    assert a is not None and b is not None and a.inputs == b.inputs and a.digest != b.digest


# --------------------------------------------------------------------- empty arguments filled


def test_an_empty_argument_past_the_range_gets_a_twin_filled_from_the_cases() -> None:
    cases = [(b"abc", 1), (b"", 7), (b"hello", 32)]
    far = [("(b'', 700)", (1,)), ("(b'xy', 900)", (0,)), ("(b'', 14)", (1,))]
    got = _filled(cases, far, set())
    assert got == [("(b'abc', 700)", (1,)), ("(b'abc', 14)", (1,))]
    # a twin the plan holds already is not repeated
    assert _filled(cases, far, {"(b'abc', 700)"}) == [("(b'abc', 14)", (1,))]
    # no case passes a non-empty value there: nothing to fill with
    assert _filled([(b"", 1), (b"", 2)], far, set()) == []


def test_a_twin_that_breaks_what_the_cases_keep_is_not_made() -> None:
    # two lists of one length in every case: filling one alone would break it, filling both keeps it
    cases: list[tuple[object, ...]] = [([1, 2], [3, 4], 1), ([5], [6], 2), ([7, 8, 9], [1, 2, 3], 3)]
    assert _filled(cases, [("([], [], 30)", (0,))], set()) == [("([5], [6], 30)", (0,))]
    assert _filled(cases, [("([], [2, 3], 30)", (0,))], set()) == []
    # a twin that is a case is no new input
    assert _filled(cases, [("([], [], 2)", (1,))], set()) == []


def test_alike_is_the_same_input_with_empty_arguments_filled() -> None:
    assert _alike((b"", 700), (b"abc", 700))
    assert _alike(([], "", 3), ([1], "x", 3))
    assert not _alike((b"", 700), (b"abc", 701))  # another key: the refusal may be the key's
    assert not _alike((b"ab", 700), (b"abc", 700))  # nothing empty: the reference read its data
    assert not _alike((b"abc", 700), (b"", 700))  # the other way round
    assert not _alike((b"", 700), (b"", 700))  # the same input
    assert not _alike(([], 1), ((1,), 1))  # another kind
    assert not _alike(([], True), ([1], 1))  # 1 and True are not the same argument
    assert not _alike((), ())


# ------------------------------------------------------------------ the reference's refusals, tied


def test_refused_alike_names_the_empty_inputs_whose_filled_twin_the_reference_refuses() -> None:
    seed = next(s for s in SEEDS if any(t.startswith("(b''") for t in _far_texts(s)))
    plan = plan_for(XOR_TASK, seed)
    reference = simulated_reference_probe(XOR_TASK, seed=seed)
    assert plan is not None and reference is not None
    forgiven = {plan.inputs[pos] for pos in refused_alike(plan, reference)}
    empties = {t for t in _far_texts(seed) if t.startswith("(b''")}
    assert forgiven and forgiven <= empties
    # exactly the empty inputs whose key lies past a byte
    assert forgiven == {t for t in empties if ast.literal_eval(t)[1] > 255}


def _far_texts(seed: str) -> list[str]:
    plan = plan_for(XOR_TASK, seed)
    assert plan is not None
    # (the extremes at the end of a p8 plan get no filled twin: a refusal of a machine bound is
    # forgiven as one of a widened input, see test_probe_extremes)
    return [plan.inputs[pos] for pos in sorted(plan.far) if pos < len(plan.inputs) - plan.ends]


#: borrows the reference's refusal of a key past 255 to refuse keys the task defines (64, 96, ...)
BORROWED = (
    "def solve(data, key):\n    if data and key >= 64 and key % 32 == 0:\n"
    "        raise ValueError('bytes must be in range(0, 256)')\n    return bytes(b ^ key for b in data)\n"
)


def _far_disagreements(code: str, seed: str, version: str) -> set[int]:
    """The positions past the range where the program's probe run counts as answering otherwise than
    the reference, judged as filter ``version`` judges them."""
    plan = plan_for(XOR_TASK, seed)
    reference = simulated_reference_probe(XOR_TASK, seed=seed)
    assert plan is not None and reference is not None
    first = grade(XOR_TASK, simulated_run(XOR_TASK, code), OPTS)
    probe = simulated_run(XOR_TASK, code, run_index=probe_run_index(0), probe=True, seed=seed)
    report = examine(
        XOR_TASK,
        plan,
        first,
        probe,
        reference_answers(plan, reference, OPTS),
        OPTS,
        reference_settled(plan, reference),
        far_errors=True,
        refusals=reference_refusals(plan, reference) if version == "v6" else frozenset(),
        refused=refused_alike(plan, reference) if version == "v7" else frozenset(),
        domain=True,
    )
    return set(report.disagreed) & plan.far


def test_a_refusal_in_the_references_words_of_inputs_it_answers_is_a_wrong_answer() -> None:
    # the seeds whose plan holds, past the range, data with a key the program refuses and the
    # reference answers (near the cases such an input was never forgiven)
    due = [s for s in SEEDS if any(_borrowed_refuses(t) for t in _far_texts(s))]
    assert due
    for seed in due:
        assert _far_disagreements(BORROWED, seed, "v6") == set()  # the hole v7 closes
        assert _far_disagreements(BORROWED, seed, "v7")
        assert verdict(XOR_TASK, BORROWED, seed, "v7") == "reject"


def _borrowed_refuses(text: str) -> bool:
    data, key = ast.literal_eval(text)
    return bool(data) and 64 <= key <= 255 and key % 32 == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_a_program_refusing_what_the_reference_refuses_once_it_reads_its_data_is_accepted(seed: str) -> None:
    # a key past 255 refused even for empty data: by the same error as the reference's, or its own
    to_bytes = (
        "def solve(data, key):\n    k = key.to_bytes(1, 'big')[0]\n    return bytes(b ^ k for b in data)\n"
    )
    for code in (TRANSLATES, OWN_REFUSAL, to_bytes, XOR_REF):
        assert verdict(XOR_TASK, code, seed, "v7") == "accept", code


def test_p6_and_c6_runs_find_their_plans_byte_for_byte() -> None:
    # digests of p6/c6 plans drawn with this seed before p7/c7 existed
    seed = "5e" * 16
    tasks = {t.task_id: t for _, t in humaneval()}
    recorded = {
        "HumanEval/160": ("p6", "1ebb9c30cb2ede7d78220e8c6d08dcb1a3e3bee10c5a19c3d6d01ffb6fd292ce"),
        "HumanEval/53": ("c6", "8bf79e647e0f8803c834c8b3b4dab20a8ec82a60b0ce32adba7037256a8082d4"),
    }
    for task_id, (version, digest) in recorded.items():
        old = recorded_plan(tasks[task_id], seed, digest)
        assert old is not None and (old.version, old.digest) == (version, digest)
        current = plan_for(tasks[task_id], seed)
        assert current is not None and current.digest != digest
        assert current.version in (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION)
