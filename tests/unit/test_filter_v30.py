"""Noise filter v30: an input the reference answers with a kind of value no case's answer shows is not
judged.

library/power (``def power(base: int, exponent: int) -> int``, every case an int) is answered by its
reference as ``base ** exponent``: a float at a negative exponent, which the probe draws beside the
cases' negative bases. A correct program that refuses a negative exponent (ValueError, as its ``-> int``
asks) was judged wrong there (``wrong.disagrees_with_reference``, false-rejection hunt f34); from v30
those inputs say nothing. A wrong program is still judged on every input whose reference answer is an
int. The runs are real runs on both backends, judged again under each version.
"""

from __future__ import annotations

from typing import Literal

import pytest

from producers.ingest.library import library_tasks
from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.probe import stated_distinct, unshown_kinds
from streams.probe.plan import GENERATED, ProbePlan
from streams.probe.statement import Distinct, outside_statement, stated_bounds
from streams.reward.correctness import expected_cases
from streams.reward.evaluate import Evaluation
from tests.unit import rejudge

SEED = "5eed" * 8
TASK = next(t for t in library_tasks("all") if t.task_id == "library/power")
#: correct: refuses what its annotation excludes
VALIDATES = """
def power(base: int, exponent: int) -> int:
    if exponent < 0:
        raise ValueError("a negative exponent has no integer power")
    result = 1
    for _ in range(exponent):
        result *= base
    return result
"""
#: passes every case and is wrong at exponents 2 and 3, which no case holds and whose answers are ints
WRONG = """
def power(base: int, exponent: int) -> int:
    if exponent < 0:
        raise ValueError("a negative exponent has no integer power")
    return base * exponent if exponent in (2, 3) else base ** exponent
"""
BACKENDS: tuple[Literal["wasm", "container"], ...] = ("wasm", "container")


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, str], Evaluation]:
    evaluator = rejudge.evaluator(SEED)
    return {
        (name, backend): evaluator.evaluate(TASK, code, backend=backend)
        for name, code in (("validates", VALIDATES), ("wrong", WRONG))
        for backend in BACKENDS
    }


def test_the_versions_run_past_v29_to_v30() -> None:
    assert VERSIONS[VERSIONS.index("v30") - 1 : VERSIONS.index("v30") + 1] == ("v29", "v30")
    assert VERSIONS.index("v30") < VERSIONS.index(NoiseConfig().version)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_refusing_what_its_annotation_excludes_is_accepted_from_v30(
    runs: dict[tuple[str, str], Evaluation], backend: str
) -> None:
    evaluation = runs[("validates", backend)]
    assert evaluation.reward.passed == evaluation.reward.total_cases
    verdicts = rejudge.verdicts(TASK, VALIDATES, evaluation, ("v29", "v30"))
    assert verdicts == {"v29": "reject", "v30": "accept"}, evaluation.verdict.reasons


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_wrong_program_is_still_judged_on_the_ints(
    runs: dict[tuple[str, str], Evaluation], backend: str
) -> None:
    evaluation = runs[("wrong", backend)]
    verdicts = rejudge.verdicts(TASK, WRONG, evaluation, ("v29", "v30"))
    assert verdicts == {"v29": "reject", "v30": "reject"}
    assert "wrong.disagrees_with_reference" in {r.code for r in evaluation.verdict.reasons}


def test_only_kinds_no_case_shows_are_left_out_and_only_where_the_cases_agree_on_one() -> None:
    cases = expected_cases(TASK)
    plan = ProbePlan(
        version="p1", inputs=tuple(f"({i}, 1)" for i in range(8)), origin=(0, 1, 2) + (GENERATED,) * 5
    )
    answers: dict[int, object] = {3: 4, 4: 0.25, 5: [1], 6: None, 7: True}
    assert unshown_kinds(plan, answers, cases) == frozenset({4, 5, 6, 7})
    half = TASK.tests[0].model_copy(update={"output": "0.5"})
    mixed = TASK.model_copy(update={"hidden_tests": (*TASK.hidden_tests, half)})
    assert unshown_kinds(plan, answers, expected_cases(mixed)) == frozenset()


def test_a_dashed_range_after_an_arguments_name_bounds_it_from_v30() -> None:
    doc = "The season of month 1-12 at an hour of the day (hour is 0-23); hours 5-11 are morning."
    prompt = f'def f(month: int, hour: int) -> str:\n    """{doc}"""\n'
    assert stated_bounds(prompt, "f", wider=True, abbreviated=True) == ()
    bounds = stated_bounds(prompt, "f", wider=True, abbreviated=True, ranged=True)
    assert not outside_statement(bounds, (1, 0)) and not outside_statement(bounds, (12, 23))
    assert all(outside_statement(bounds, args) for args in ((13, 4), (0, 4), (5, 24), (5, -1)))
    # "hours 5-11" names no argument; a falling range, or one after another word, says nothing
    for text in ("hours 5-11", "month 12-1", "the months 1-12"):
        other = f'def f(hour: int) -> str:\n    """{text}"""\n'
        assert stated_bounds(other, "f", wider=True, abbreviated=True, ranged=True) == (), text


def test_an_inline_example_is_cut_and_a_distinct_list_bounds_out_repeats_from_v30() -> None:
    doc = 'Write n in base 2 <= base <= 16, e.g. (255, 16) -> "ff".'
    prompt = f'def to_base(n: int, base: int) -> str:\n    """{doc}"""\n'
    assert stated_bounds(prompt, "to_base", wider=True, abbreviated=True) == ()
    bounds = stated_bounds(prompt, "to_base", wider=True, abbreviated=True, ranged=True)
    assert outside_statement(bounds, (2, 1850)) and not outside_statement(bounds, (2, 16))
    search = next(t for t in library_tasks("all") if t.task_id == "library/binary_search")
    distinct = stated_distinct(search)
    assert distinct == (Distinct(0),)
    assert outside_statement(distinct, ([1, 1, 2], 1)) and not outside_statement(distinct, ([1, 2], 1))
    # a statement calling nothing distinct bounds nothing
    assert stated_distinct(TASK) == ()
