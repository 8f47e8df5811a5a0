"""Noise filter v31: the forms a statement gives its arguments in words (text in ASCII, one character,
the rows of a grid or a matrix of one width) bound the probe's inputs where the cases keep them.

False-rejection hunt f39 found correct programs judged by the reference's reading of inputs the
statement does not decide: A-Z alone summed where HumanEval/66 says "ASCII codes" and the probe puts 'É'
in; ``str.rjust`` refusing library/pad_left's two-character fill where the statement says "the character
fill"; a flood fill over ragged rows of library/count_islands' grid. From v31 those inputs say nothing,
except text past ASCII that the reference carries through as given (the reading ASCII gives it), which
still judges a program turning 'À' into a letter of the alphabet. The runs are real runs, judged again
under each version.
"""

from __future__ import annotations

import pytest

from producers.ingest.library import library_tasks
from schemas.reference import ReferenceExecuted
from schemas.rollout import SandboxExecutedV3
from schemas.task import TaskPublished
from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.probe import memo_hang_timing, stated_forms
from streams.probe.plan import plan_for
from streams.probe.statement import (
    AsciiText,
    OneCharacter,
    Rectangular,
    StatedForms,
    outside_statement,
)
from streams.probe.statement import stated_forms as statement_forms
from streams.reward.evaluate import Evaluation
from streams.reward.literals import CompareOptions
from tests.hacks.acceptance import humaneval
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit import rejudge

SEED = "5eed" * 8
LIBRARY = {t.task_id: t for t in library_tasks("all")}
HUMANEVAL = {t.task_id: t for _, t in humaneval()}
PAD_LEFT = LIBRARY["library/pad_left"]
#: correct: "the character fill" is one character, and str.rjust refuses any other
RJUST = """
def pad_left(s: str, width: int, fill: str) -> str:
    return s.rjust(width, fill)
"""
#: passes every case and pads with a blank wherever the fill is a character no case shows
WRONG = """
def pad_left(s: str, width: int, fill: str) -> str:
    return s.rjust(width, fill if fill in ("*", ".", "-", "0") else " ")
"""


def test_the_versions_run_past_v30_to_v31() -> None:
    assert VERSIONS[VERSIONS.index("v31") - 1 : VERSIONS.index("v31") + 1] == ("v30", "v31")
    assert VERSIONS.index("v31") < VERSIONS.index(NoiseConfig().version)


def _prompt(doc: str, args: str = "s") -> str:
    return f'def f({args}):\n    """{doc}\n\n    >>> f("x")\n    1\n    """\n'


def test_the_statement_is_read_for_its_forms_outside_its_examples() -> None:
    assert statement_forms(_prompt("Sum the ASCII codes of the capitals."), "f") == StatedForms(ascii=True)
    assert statement_forms(_prompt("True where the last one is an alphabetical character."), "f").ascii
    # the alphabet as an order or a place says nothing of the characters (red-team round 40)
    assert not statement_forms(_prompt("Sort the words of s alphabetically."), "f").ascii
    assert not statement_forms(_prompt("Move each vowel 2 places ahead in the english alphabet."), "f").ascii
    assert not statement_forms(_prompt("Valid where it starts with 'a'-'z' or 'A'-'Z'."), "f").ascii
    assert statement_forms(_prompt("Pad s with the character fill.", "s, fill"), "f").characters == (1,)
    # a character that names no argument bounds nothing
    assert statement_forms(_prompt("Count the character of s that repeats.", "s, c"), "f").characters == ()
    assert statement_forms(_prompt("Return the transpose of a rectangular matrix."), "f").rectangular
    assert statement_forms(_prompt("Count the words of s."), "f") == StatedForms()
    # only the prose: a word in an example says nothing
    assert statement_forms('def f(s):\n    """Count.\n\n    >>> f("ASCII grid")\n    1\n    """\n', "f") == (
        StatedForms()
    )


def test_each_form_admits_what_it_states() -> None:
    assert AsciiText().admits(("abc", ["d", {"e": ("f",)}])) and not AsciiText().admits((["ab", "cÉ"],))
    assert OneCharacter(1).admits(("abc", "*", 3)) and not OneCharacter(1).admits(("abc", "*.", 3))
    assert OneCharacter(0).admits((7,))  # not a string: another bound's business
    assert Rectangular(0).admits((["..", "#."],)) and Rectangular(0).admits(([[1, 2], [3, 4]],))
    assert not Rectangular(0).admits((["..", "#"],)) and Rectangular(0).admits(([],))
    assert outside_statement((AsciiText(), OneCharacter(1)), ("a", "**"))


def test_text_past_ascii_the_reference_carries_through_stays_judged() -> None:
    # HumanEval/89's rotation leaves 'À' as it is: the ASCII reading itself, so the input judges
    assert AsciiText().carried(("hÀllo",), "lÀppc")
    # a count or a flag carries nothing: the input says nothing
    assert not AsciiText().carried(("abcÎd",), 206) and not AsciiText().carried(("Ñ",), False)
    assert not AsciiText().carried(("Àb",), "b")
    assert not AsciiText().carried(("ab",), "ab")  # nothing past ASCII: nothing to carry


def _forms(task: TaskPublished) -> tuple[object, ...]:
    return stated_forms(task)


def test_the_tasks_that_state_a_form_and_whose_cases_keep_it() -> None:
    assert _forms(HUMANEVAL["HumanEval/66"]) == (AsciiText(),)
    assert _forms(HUMANEVAL["HumanEval/134"]) == (AsciiText(),)  # check mode: the statement alone
    assert _forms(PAD_LEFT) == (OneCharacter(2),)
    assert _forms(LIBRARY["library/count_islands"]) == (Rectangular(0),)
    assert _forms(LIBRARY["library/transpose"]) == (Rectangular(0),)
    # a case that breaks the form keeps it from bounding anything
    two = PAD_LEFT.tests[0].model_copy(update={"input": "('r', 6, '*.')"})
    assert _forms(PAD_LEFT.model_copy(update={"tests": (two, *PAD_LEFT.tests[1:])})) == ()
    # no statement of the forms: nothing, whatever the cases
    assert _forms(HUMANEVAL["HumanEval/27"]) == ()


@pytest.fixture(scope="module")
def runs() -> dict[str, Evaluation]:
    evaluator = rejudge.evaluator(SEED)
    return {
        name: evaluator.evaluate(PAD_LEFT, code, backend="wasm")
        for name, code in (("rjust", RJUST), ("wrong", WRONG))
    }


def test_a_program_refusing_a_fill_of_two_characters_is_accepted_from_v31(
    runs: dict[str, Evaluation],
) -> None:
    evaluation = runs["rjust"]
    assert evaluation.reward.passed == evaluation.reward.total_cases
    verdicts = rejudge.verdicts(PAD_LEFT, RJUST, evaluation, ("v30", "v31"))
    assert verdicts == {"v30": "reject", "v31": "accept"}, evaluation.verdict.reasons


def test_a_wrong_program_is_still_judged_on_one_character_fills(runs: dict[str, Evaluation]) -> None:
    evaluation = runs["wrong"]
    assert evaluation.reward.passed == evaluation.reward.total_cases
    verdicts = rejudge.verdicts(PAD_LEFT, WRONG, evaluation, ("v30", "v31"))
    assert verdicts == {"v30": "reject", "v31": "reject"}
    assert "wrong.disagrees_with_reference" in {r.code for r in evaluation.verdict.reasons}


#: HumanEval/55: correct up to n = 30, then a spin at the memoised pace (red-team a15_fib_hang_55)
FIB = next(t for _, t in humaneval() if t.task_id == "HumanEval/55")
SPINS = next(p for p in PROGRAMS if p.name == "a15_fib_hang_55").code


def _plain_scaled(reference: ReferenceExecuted, factor: float, positions: set[int]) -> ReferenceExecuted:
    """The reference's plain runs with their CPU time at ``positions`` scaled by ``factor``."""

    def scaled(run: SandboxExecutedV3) -> SandboxExecutedV3:
        cases = tuple(
            c.model_copy(update={"cpu_s": c.cpu_s * factor})
            if c.index in positions and c.cpu_s is not None
            else c
            for c in run.cases
        )
        return run.model_copy(update={"cases": cases})

    return reference.model_copy(
        update={
            "execution": scaled(reference.execution),
            "reruns": tuple(scaled(r) for r in reference.reruns),
        }
    )


def test_a_spin_is_held_on_an_input_where_the_references_only_lean_apart() -> None:
    evaluation = rejudge.evaluator(SEED).evaluate(FIB, SPINS, backend="wasm")
    plan = plan_for(FIB, SEED)
    reference, probe = evaluation.probe_reference, evaluation.probe
    assert plan is not None and reference is not None and probe is not None and probe.timed_out
    options = CompareOptions()
    memo = memo_hang_timing(plan, probe, reference, options, cpu=True)
    assert memo is not None
    # the plain reference made a little quicker, so that where the two lean apart most they do so 12
    # times: between the 8 that leans and the 16 that parts (as measured, the pinned plan parts them at
    # n = 20 by about 17 times, and a loaded machine moves that by tens of per cent either way)
    far = {p for p in plan.far if p < memo.position}
    by_memo = {
        p: min(c.cpu_s or 0.0 for r in reference.memoised for c in r.cases if c.index == p) for p in far
    }
    plain_runs = (reference.execution, *reference.reruns)
    by_plain = {p: min(c.cpu_s or 0.0 for r in plain_runs for c in r.cases if c.index == p) for p in far}
    ratios = {p: by_plain[p] / by_memo[p] for p in far if by_memo[p] and by_plain[p]}
    assert ratios
    leaning = _plain_scaled(reference, 12 / max(ratios.values()), set(ratios))
    before = memo_hang_timing(plan, probe, leaning, options, cpu=True)
    after = memo_hang_timing(plan, probe, leaning, options, cpu=True, leaning_witness=True)
    assert before is not None and before.memo_ratio == 0 and not before.held_memoised(second_witness=True)
    assert after is not None and after.memo_ratio > 0 and after.held_memoised(second_witness=True)
