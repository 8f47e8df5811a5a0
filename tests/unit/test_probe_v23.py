"""Seeded probe plans p23/c23 and filter v33: the ASCII twins of inputs holding text past ASCII.

Where a task's statement keeps its text to ASCII (HumanEval/66's "ASCII codes", /134's "an alphabetical
character", /118's "English letter"), the filter (v31) leaves an input holding a character past ASCII
unjudged, since a correct program may read that character either way. Through v32 it did so wherever the
character stood, and a program answering otherwise wherever one appears anywhere in its text was
accepted (red-team a44_ascii_part_wrong_134, a41_ascii_part_wrong_66). p23/c23 plans hold, beside each
such input, its letter twin (each such character an ASCII letter of its case) and its other twin (each
one ``#``); where the reference answers all three alike, no reading of the characters changes the answer
and v33 judges the input. p23/c23 also draw zero and negatives where a statement tests a sign, and the
decimals a statement writes. They draw every input p22/c22 draw, lengthen the run by what they add, on
other tasks hold the same inputs, and runs of p22/c22 find their plans byte for byte."""

from __future__ import annotations

import pytest

from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.probe import ascii_twins_agree
from streams.probe.plan import ASCII_OTHER, SEEDED_VERSIONS, ProbePlan, _plan, plan_for
from streams.probe.statement import AsciiText, stated_numbers, stated_signs
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import answers, args, assert_pinned_plans_found
from tests.unit.plan_pins import task as _task

SEEDS = ("00" * 16, "5eed" * 8)
P22 = 20
P23 = 21
ASCII_TASKS = ("HumanEval/66", "HumanEval/86", "HumanEval/118", "HumanEval/134")
CODE = {p.name: p.code for p in PROGRAMS}

#: digests of p22/c22 plans drawn before p23/c23 existed (seeds SEEDS)
P22_DIGESTS = {
    "HumanEval/134": (
        "b22b1c00c53d96ab6d8ff454863a3d9a3b875081ad54285d45354705bd734cd4",
        "74152dafc2fead205e23192d8f7e2831b8907b66186626acf30bcd552c2d1087",
    ),
    "HumanEval/66": (
        "6808e87fd160d780cdc4f43781a0a6339cba538913757cb0fc32106c7898214f",
        "b49eccd8aaf4e3c264ad58eec7bd7dea4d619ab79c91889bddd40bbaf00219ae",
    ),
    "HumanEval/118": (
        "1fd68a557f053a2d8eb2bf9e5089694a7ef83170373a5aa1dda3dbea03b088ce",
        "41f4ea02e82b72755663fea8daf42069182272ef2c08c9db56703e2a03d3a470",
    ),
    "HumanEval/70": (
        "7210a241206bd72fd75fc7fc8270d100966cc708d59f4121b8cf6e464673b24c",
        "f84e01ff3d8d3885c1a063fd5fd115da2abcbb5eaf41d98227726fab07e509c5",
    ),
}


def _plan_of(task_id: str, seed: str) -> ProbePlan:
    plan = plan_for(_task(task_id), seed)
    assert plan is not None
    return plan


def test_runs_of_p22_and_c22_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P22] == ("p22", "c22") and SEEDED_VERSIONS[P23] == ("p23", "c23")
    assert_pinned_plans_found(P22_DIGESTS, SEEDS, P22)


@pytest.mark.parametrize("task_id", ["HumanEval/70", "HumanEval/35", "HumanEval/17", "HumanEval/55"])
def test_a_task_whose_statement_keeps_no_ascii_gets_the_same_inputs(task_id: str) -> None:
    for seed in SEEDS:
        new, old = _plan(_task(task_id), seed, P23), _plan(_task(task_id), seed, P22)
        assert new is not None and old is not None
        assert new.inputs == old.inputs and new.far == old.far and new.wide == old.wide
        assert new.ascii_twins == () and new.digest != old.digest


@pytest.mark.parametrize("task_id", ASCII_TASKS)
def test_every_input_past_ascii_near_or_past_the_range_has_both_twins(task_id: str) -> None:
    for seed in SEEDS:
        plan = _plan_of(task_id, seed)
        previous = _plan(_task(task_id), seed, P22)
        before = set(previous.inputs) if previous is not None else set()
        twins = {pos: (letter, other) for pos, letter, other in plan.ascii_twins}
        tail = range(len(plan.inputs) - plan.ends, len(plan.inputs))
        past = [
            pos
            for pos in plan.generated_positions
            if pos not in tail and not AsciiText().admits(args(plan.inputs[pos]))
        ]
        assert past, (task_id, seed)
        for pos in past:
            text = plan.inputs[pos]
            # the first asking of an input is paired (a repeat asks the same text again)
            first = plan.inputs.index(text)
            assert first in twins, (task_id, seed, text)
            letter, other = (plan.inputs[t] for t in twins[first])
            assert AsciiText().admits(args(letter)) and AsciiText().admits(args(other))
            # the characters past ASCII, and only they, stand in: letters of their case, then '#'
            for was, let, oth in zip(text, letter, other, strict=True):
                if was.isascii():
                    assert was == let == oth
                else:
                    assert let.isalpha() and oth == ASCII_OTHER
                    assert not was.isupper() or let.isupper()
            # a twin the plan adds lies in its input's section (past the range where it is, widening
            # where it is); one already there (an input near the cases) is paired as it is
            for t in twins[first]:
                if plan.inputs[t] not in before:
                    assert (t in plan.far, t in plan.wide) == (first in plan.far, first in plan.wide)


def test_the_reference_answers_alike_where_the_character_cannot_matter() -> None:
    """HumanEval/134 reads the last character only: an input past ASCII whose last character is ASCII
    agrees with its twins; one whose last character stands alone past ASCII does not (a letter, or
    not: two readings, two answers)."""
    t = _task("HumanEval/134")
    assert t.reference is not None
    for seed in SEEDS:
        plan = _plan_of("HumanEval/134", seed)
        texts = list(plan.inputs)
        got = answers(t.reference, t.entry_point, texts)
        reference = {pos: value for pos, (status, value) in enumerate(got) if status == "ok"}
        alike = ascii_twins_agree(plan, reference)
        paired = {pos for pos, _, _ in plan.ascii_twins}
        assert alike and alike <= paired
        for pos in paired:
            (word,) = args(plan.inputs[pos])
            last = word.split(" ")[-1]
            if len(last) == 1 and not last.isascii():
                assert pos not in alike, word
            elif word[-1:].isascii():
                assert pos in alike, word


def test_an_unanswered_twin_agrees_with_nothing() -> None:
    plan = ProbePlan("p23", ("('é',)", "('e',)", "('#',)"), (-1, -1, -1), ascii_twins=((0, 1, 2),))
    assert ascii_twins_agree(plan, {0: False, 1: False, 2: False}) == {0}
    assert ascii_twins_agree(plan, {0: False, 1: False}) == frozenset()
    assert ascii_twins_agree(plan, {0: False, 1: 0, 2: False}) == frozenset()  # 0 == False, not alike
    assert ascii_twins_agree(plan, {0: [1], 1: [1], 2: [1.0]}) == frozenset()


def test_v33_is_the_newest_filter() -> None:
    assert VERSIONS.index(NoiseConfig().version) >= VERSIONS.index("v33")


@pytest.mark.parametrize(
    ("name", "task_id"),
    [("a44_ascii_part_wrong_134", "HumanEval/134"), ("a41_ascii_part_wrong_66", "HumanEval/66")],
)
def test_the_programs_wrong_wherever_text_past_ascii_appears_disagree_on_judged_inputs(
    name: str, task_id: str
) -> None:
    """The red-team rows v32 accepted answer otherwise than the reference on inputs v33 judges (run here;
    tests/hacks/test_redteam.py runs them in both sandboxes)."""
    t = _task(task_id)
    assert t.reference is not None
    plan = _plan_of(task_id, SEEDS[1])
    texts = list(plan.inputs)
    reference = {p: v for p, (s, v) in enumerate(answers(t.reference, t.entry_point, texts)) if s == "ok"}
    wrong = answers(CODE[name], t.entry_point, texts)
    judged = ascii_twins_agree(plan, reference)
    assert any(wrong[p] != ("ok", reference[p]) for p in judged)


# ------------------------------------------------------------------------- p23/c23: the tested signs


@pytest.mark.parametrize(
    ("task_id", "zero", "negative"),
    [
        # "Return True if every number is greater than zero": the sign is what the function tests
        ("library/all_positive", True, True),
        # 0 is divisible by every number and leaves remainder 0 under every convention
        ("library/fizzbuzz_word", True, False),
        ("library/remainder_by_seven", True, False),
        # "the largest number that divides n": a divisor of 0 is a convention (p16's reading stays)
        ("HumanEval/24", False, False),
    ],
)
def test_a_sign_the_statement_tests_or_a_convention_on_negatives_alone_admits_zero(
    task_id: str, zero: bool, negative: bool
) -> None:
    t = _task(task_id)
    (before,) = stated_signs(t.prompt, t.entry_point)
    (after,) = stated_signs(t.prompt, t.entry_point, tested=True)
    assert not before.zero and not before.negative
    assert (after.zero, after.negative) == (zero, negative)


@pytest.mark.parametrize(
    ("name", "task_id"),
    [
        ("a45_zero_greater_than_all_positive", "library/all_positive"),
        ("a45_zero_divisible_fizzbuzz", "library/fizzbuzz_word"),
        ("a45_zero_remainder_by_seven", "library/remainder_by_seven"),
    ],
)
def test_programs_wrong_only_at_zero_are_shown_a_zero(name: str, task_id: str) -> None:
    """p22 drew no zero on these tasks (every p22 input stays); p23 widens the cases' domain with one,
    where the red-team rows answer otherwise than the reference (run here; tests/hacks/test_redteam.py
    runs them in both sandboxes)."""
    t = _task(task_id)
    assert t.reference is not None
    for seed in SEEDS:
        new, old = _plan(t, seed, P23), _plan(t, seed, P22)
        assert new is not None and old is not None
        assert set(old.inputs) <= set(new.inputs)
        added = [pos for pos, text in enumerate(new.inputs) if text not in set(old.inputs)]
        assert added and all(pos in new.wide for pos in added)
        texts = [new.inputs[pos] for pos in added]
        assert all("0" in text for text in texts)
        reference = answers(t.reference, t.entry_point, texts)
        wrong = answers(CODE[name], t.entry_point, texts)
        assert wrong != reference, (seed, texts)


# ---------------------------------------------------------------- p23/c23: the statement's own numbers


def test_the_decimals_a_statement_writes_are_read_from_its_prose_not_its_examples() -> None:
    t = _task("HumanEval/81")
    numbers = stated_numbers(t.prompt, t.entry_point)
    assert {3.7, 3.3, 1.0, 0.7, 0.0, 4.0} <= set(numbers)
    assert stated_numbers(_task("HumanEval/70").prompt, "strange_sort_list") == ()


def test_every_bound_of_the_gpa_table_is_drawn_and_the_from_reading_is_shown_wrong() -> None:
    """HumanEval/81's cases hold no 3.7: '>= 3.7' answered 'A' where the table's '> 3.7' says 'A-' and
    was accepted on the pinned seed through p22 (red-team a45_gpa_threshold_81)."""
    t = _task("HumanEval/81")
    assert t.reference is not None
    for seed in SEEDS:
        new, old = _plan(t, seed, P23), _plan(t, seed, P22)
        assert new is not None and old is not None and set(old.inputs) <= set(new.inputs)
        drawn = {x for pos in new.wide for x in args(new.inputs[pos])[0] if isinstance(x, float)}
        assert {3.7, 3.3, 3.0, 2.7, 2.3, 2.0, 1.3, 1.0, 0.7, 0.0} <= drawn, seed
        texts = [new.inputs[pos] for pos in sorted(new.wide) if new.inputs[pos] not in set(old.inputs)]
        reference = answers(t.reference, t.entry_point, texts)
        assert answers(CODE["a45_gpa_threshold_81"], t.entry_point, texts) != reference


@pytest.mark.parametrize("task_id", [*ASCII_TASKS, "HumanEval/81", "library/all_positive"])
def test_what_p23_adds_lengthens_the_run_and_takes_no_late_repeat_away(task_id: str) -> None:
    """A first p23 laid its twins in the late section's place: HumanEval/134's late askings fell from 72
    to 28, its most asked text from 17 to 10 askings, and a program wrong from an input's 11th asking
    was accepted (red-team a47_eleventh_ask_wrong_134). The late section now fills the run up to its
    calls plus what p23 adds."""
    for seed in SEEDS:
        new, old = _plan(_task(task_id), seed, P23), _plan(_task(task_id), seed, P22)
        assert new is not None and old is not None
        assert len(new.inputs) > len(old.inputs)
        assert new.late >= 0.9 * old.late, (seed, new.late, old.late)
        most = max(new.inputs.count(text) for text in set(new.inputs))
        assert most >= max(old.inputs.count(text) for text in set(old.inputs)), seed
