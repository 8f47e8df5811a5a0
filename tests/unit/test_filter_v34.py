"""Noise filter v34: a generated input that breaks a precondition the task's statement gives is not judged.

A statement may give a relation between two arguments (library/clamp's "(low <= high)"), between the
named fields of one argument (HumanEval/127's "interval = (start, end)" ... "it is assumed that its start
is less or equal its end") or a property of an integer argument (/59's "Assume n > 1 and is not a
prime"). The probe's near inputs break them, where the reference answers by its own reading; through v33
a correct program refusing such an input, or reading it otherwise, was rejected on every run (red-team
f45c_ok_*). v34 reads them (``statement.stated_preconditions``), keeps those every case keeps
(``probe.stated_preconditions``) and leaves the inputs that break one unjudged; an input that keeps them,
at equality too (low == high), is judged as before (f45_*_wrong_*)."""

from __future__ import annotations

import pytest

from schemas.task import TaskPublished
from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.probe import stated_preconditions
from streams.probe.statement import Property, Relation, _is_prime, outside_statement
from streams.probe.statement import stated_preconditions as read
from streams.reward.evaluate import Evaluation
from tests.hacks.redteam.corpus import PROGRAMS
from tests.hacks.redteam.tasks import all_tasks
from tests.unit import rejudge

SEED = "5eed" * 8
CODE = {p.name: p.code for p in PROGRAMS}


def _prompt(signature: str, doc: str) -> str:
    return f'def {signature}:\n    """{doc}\n    """\n'


def _task(task_id: str) -> TaskPublished:
    return all_tasks()[task_id]


def test_v34_is_the_newest_filter() -> None:
    assert VERSIONS[VERSIONS.index("v34") - 1 : VERSIONS.index("v34") + 1] == ("v33", "v34")
    assert VERSIONS.index(NoiseConfig().version) >= VERSIONS.index("v34")


def test_a_relation_between_arguments_is_read_where_the_statement_gives_it() -> None:
    low_high = (Relation((1, None), "<=", (2, None)),)
    clamp = "clamp(x, low, high)"
    assert read(_prompt(clamp, "Return x limited to low..high (low <= high)."), "clamp") == low_high
    assert read(_prompt(clamp, "Clamp x. Assume low <= high."), "clamp") == low_high
    assert read(_prompt(clamp, "Clamp x, where low is at most high."), "clamp") == low_high
    assert read(_prompt(clamp, "Clamp x. It is guaranteed that high >= low."), "clamp") == (
        Relation((2, None), ">=", (1, None)),
    )
    assert read(_prompt(clamp, "Clamp x. You may assume low is less than high."), "clamp") == (
        Relation((1, None), "<", (2, None)),
    )
    assert read(_prompt(clamp, "Clamp x, given that high is not less than low."), "clamp") == (
        Relation((2, None), ">=", (1, None)),
    )


def test_a_relation_the_statement_tests_or_only_mentions_is_not_read() -> None:
    cmp = "cmp(a, b)"
    assert read(_prompt(cmp, "Return True if a < b, else False."), "cmp") == ()
    assert read(_prompt(cmp, "Return whether a <= b."), "cmp") == ()
    assert read(_prompt(cmp, "Assume the inputs are numbers. Return True if a is less than b."), "cmp") == ()
    assert read(_prompt(cmp, "Compare a and b: a <= b gives 1."), "cmp") == ()  # no given word, no aside
    assert read(_prompt(cmp, "Return (a < b) and a != 0."), "cmp") == ()  # a part of an expression
    # names that are not arguments, and a comparison with a number (a bound: stated_bounds reads those)
    assert read(_prompt(cmp, "Assume i < j for every pair (i, j)."), "cmp") == ()
    assert read(_prompt(cmp, "Assume a > 1."), "cmp") == ()
    # an example line is no statement
    assert read(_prompt(cmp, "Compare.\n    >>> cmp(3, 2)  # where a <= b fails\n    1"), "cmp") == ()


def test_a_relation_between_the_named_fields_of_each_argument_is_read() -> None:
    doc = (
        "You are given two intervals, where each interval is a pair of integers. For example, "
        "interval = (start, end) = (1, 2).\n    For each given interval, it is assumed that its start is "
        "less or equal its end."
    )
    assert read(_prompt("intersection(interval1, interval2)", doc), "intersection") == (
        Relation((0, 0), "<=", (0, 1)),
        Relation((1, 0), "<=", (1, 1)),
    )
    # the same in symbols
    doc = "Given a span (lo, hi). Assume lo <= hi."
    assert read(_prompt("width(span)", doc), "width") == (Relation((0, 0), "<=", (0, 1)),)
    # fields of a word no argument is named after name nothing
    doc = "A point (x, y) is given as p. Assume x <= y."
    assert read(_prompt("f(p)", doc), "f") == ()


def test_a_property_of_an_argument_is_read_where_the_statement_gives_it() -> None:
    assert read(
        _prompt("lpf(n: int)", "Return the largest prime factor of n. Assume n > 1 and is not a prime."),
        "lpf",
    ) == (Property(0, "prime", False),)
    assert read(_prompt("half(n)", "Halve n. You may assume n is even."), "half") == (
        Property(0, "even", True),
    )
    assert read(_prompt("f(k, m)", "Assume m is a positive integer."), "f") == (
        Property(1, "positive", True),
    )
    assert read(_prompt("f(n)", "It is guaranteed that n is composite."), "f") == (
        Property(0, "prime", False),
    )
    # a property the statement tests, or of something else
    assert read(_prompt("is_prime(n)", "Return true if n is a prime, and false otherwise."), "is_prime") == ()
    assert read(_prompt("f(n)", "Assume the answer is positive."), "f") == ()
    assert read(_prompt("f(n)", "Return n if n is even."), "f") == ()


def test_each_precondition_admits_what_it_states() -> None:
    rel = Relation((1, None), "<=", (2, None))
    assert rel.admits((0, 3, 3)) and rel.admits((0, 2, 3)) and not rel.admits((0, 4, 3))
    assert rel.admits((0, "a", 3)) and rel.admits((0, True, 0)) and rel.admits((0, 1))  # nothing to compare
    field = Relation((0, 0), "<=", (0, 1))
    assert field.admits(((2, 2), (5, 1))) and not field.admits(((3, 2), (1, 5)))
    assert field.admits(((3,), (1, 5))) and field.admits(("ab", 1))
    strict = Relation((0, None), "<", (1, None))
    assert strict.admits((1, 2)) and not strict.admits((2, 2))
    not_prime = Property(0, "prime", False)
    assert not_prime.admits((13195,)) and not_prime.admits((1,)) and not not_prime.admits((13,))
    assert not not_prime.admits((2**61 - 1,)) and not_prime.admits(((2**61 - 1) * 3,))
    assert not_prime.admits((13.0,)) and not_prime.admits((True,))
    assert Property(0, "even", True).admits((4,)) and not Property(0, "even", True).admits((-3,))
    assert Property(0, "odd", True).admits((-3,)) and not Property(0, "positive", True).admits((0,))
    assert outside_statement((rel, not_prime), (4, 5, 3)) and not outside_statement((rel,), (4, 3, 5))


def test_primality_is_exact_on_small_numbers() -> None:
    sieve = [n for n in range(2, 5000) if all(n % d for d in range(2, int(n**0.5) + 1))]
    assert [n for n in range(-5, 5000) if _is_prime(n)] == sieve
    assert not _is_prime(3215031751) and not _is_prime(341550071728321)  # strong pseudoprimes to small bases


def test_the_tasks_whose_statements_give_a_precondition() -> None:
    """Over every HumanEval and red-team task, the preconditions read: three tasks, each one stated, and
    library/signed_steps, whose 'counting up where start <= stop' is a branch the statement defines, misread
    as a precondition through 'where' (red-team round 50: test_redteam's NEW50_WHERE_BRANCH)."""
    found = {task_id: pre for task_id, t in all_tasks().items() if (pre := read(t.prompt, t.entry_point))}
    assert found == {
        "library/clamp": (Relation((1, None), "<=", (2, None)),),
        "HumanEval/127": (Relation((0, 0), "<=", (0, 1)), Relation((1, 0), "<=", (1, 1))),
        "HumanEval/59": (Property(0, "prime", False),),
        "library/signed_steps": (Relation((0, None), "<=", (1, None)),),  # misread: NEW50_WHERE_BRANCH
    }
    assert {task_id: stated_preconditions(all_tasks()[task_id]) for task_id in found} == found


def test_a_precondition_a_case_breaks_or_does_not_speak_of_bounds_nothing() -> None:
    clamp = _task("library/clamp")
    broken = clamp.tests[0].model_copy(update={"input": "(5, 10, 1)", "output": "10"})
    assert stated_preconditions(clamp.model_copy(update={"tests": (broken, *clamp.tests[1:])})) == ()
    texts = clamp.tests[0].model_copy(update={"input": "(5, 'a', 'z')", "output": "5"})
    assert stated_preconditions(clamp.model_copy(update={"tests": (texts, *clamp.tests[1:])})) == ()
    lpf = _task("HumanEval/59")
    prime = lpf.tests[0].model_copy(update={"input": "(13,)", "output": "13"})
    assert stated_preconditions(lpf.model_copy(update={"tests": (prime, *lpf.tests[1:])})) == ()


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[TaskPublished, str, Evaluation]]:
    evaluator = rejudge.evaluator(SEED)
    out = {}
    for name, task_id in (
        ("f45c_ok_min_max_clamp", "library/clamp"),
        ("f45_equal_bounds_wrong_clamp", "library/clamp"),
        ("f45c_ok_raise_intersection_127", "HumanEval/127"),
        ("f45c_ok_proper_factor_59", "HumanEval/59"),
        ("f45_prime_square_wrong_59", "HumanEval/59"),
    ):
        task = _task(task_id)
        out[name] = (task, CODE[name], evaluator.evaluate(task, CODE[name], backend="wasm"))
    return out


@pytest.mark.parametrize(
    "name", ["f45c_ok_min_max_clamp", "f45c_ok_raise_intersection_127", "f45c_ok_proper_factor_59"]
)
def test_a_correct_program_reading_outside_the_precondition_is_accepted_from_v34(
    runs: dict[str, tuple[TaskPublished, str, Evaluation]], name: str
) -> None:
    task, code, evaluation = runs[name]
    assert evaluation.reward.passed == evaluation.reward.total_cases
    assert rejudge.verdicts(task, code, evaluation, ("v33", "v34")) == {"v33": "reject", "v34": "accept"}


@pytest.mark.parametrize("name", ["f45_equal_bounds_wrong_clamp", "f45_prime_square_wrong_59"])
def test_a_wrong_program_is_still_judged_where_the_precondition_holds(
    runs: dict[str, tuple[TaskPublished, str, Evaluation]], name: str
) -> None:
    task, code, evaluation = runs[name]
    assert evaluation.reward.passed == evaluation.reward.total_cases
    assert rejudge.verdicts(task, code, evaluation, ("v33", "v34")) == {"v33": "reject", "v34": "reject"}
    assert "wrong.disagrees_with_reference" in {r.code for r in evaluation.verdict.reasons}
