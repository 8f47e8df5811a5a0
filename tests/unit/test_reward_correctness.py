"""Grading an execution against visible and hidden cases from the trusted channel."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.rollout import CaseResult
from streams.reward.code_v5 import V5_COMPARE
from streams.reward.correctness import grade, render_prompt
from streams.reward.literals import CompareOptions, differ_in_floats_only, values_match
from tests.hacks.fixtures import execution, make_task, passing

OPTS = CompareOptions()


def test_all_cases_passing() -> None:
    task = make_task()
    g = grade(task, passing(task), OPTS)
    assert g.all_passed
    assert (g.passed, g.total) == (4, 4)


def test_hidden_case_failure_fails_a_lookup_table() -> None:
    task = make_task()
    g = grade(task, execution(["3", "4", "None", "None"]), OPTS)
    assert not g.all_passed
    assert g.passed == 2
    assert [x.outcome for x in g.grades] == ["pass", "pass", "wrong", "wrong"]


def test_cases_numbered_within_each_list_grade_the_same() -> None:
    task = make_task()
    cases = (
        CaseResult(index=0, status="ok", result_repr="3"),
        CaseResult(index=1, status="ok", result_repr="4"),
        CaseResult(index=0, hidden=True, status="ok", result_repr="15"),
        CaseResult(index=1, hidden=True, status="ok", result_repr="0"),
    )
    assert grade(task, execution([], cases=cases), OPTS).all_passed


def test_missing_record_fails_every_case() -> None:
    task = make_task()
    g = grade(task, execution(["3", "4", "15"]), OPTS)
    assert g.passed == 0
    assert "missing" in g.run_failure


def test_extra_or_duplicate_records_fail_every_case() -> None:
    task = make_task()
    extra = execution(["3", "4", "15", "0", "0"])
    assert grade(task, extra, OPTS).passed == 0
    dup = passing(task).model_copy(
        update={"cases": (*passing(task).cases, CaseResult(index=1, status="ok", result_repr="4"))}
    )
    assert grade(task, dup, OPTS).passed == 0


def test_forced_exit_and_limits_fail_every_case() -> None:
    task = make_task()
    for fields in ({"exit_code": 3}, {"timed_out": True}, {"memory_exceeded": True}, {"infra_error": "boom"}):
        g = grade(task, passing(task, **fields), OPTS)  # type: ignore[arg-type]
        assert g.passed == 0 and not g.all_passed, fields


def test_non_literal_result_is_a_failure_not_compared() -> None:
    task = make_task()
    g = grade(task, execution(["<__main__.Always object at 0x1>", "4", "15", "0"]), OPTS)
    assert g.grades[0].outcome == "not_literal"
    assert g.non_literal_results == 1
    assert not g.all_passed


def test_errors_and_timeouts_fail_their_case() -> None:
    task = make_task()
    g = grade(task, execution(["3", None, "15", "0"], statuses=["ok", "timeout", "ok", "ok"]), OPTS)
    assert [x.outcome for x in g.grades] == ["pass", "timeout", "pass", "pass"]
    g = grade(task, execution(["3", None, "15", "0"]), OPTS)
    assert g.grades[1].outcome == "error"


def test_zero_cases_is_a_failure() -> None:
    task = make_task(visible=(), hidden=(), check="def check(candidate):\n    pass\n")
    g = grade(task, execution([], mode="cases"), OPTS)
    assert not g.all_passed


def test_check_mode_passes_only_on_one_true_record() -> None:
    task = make_task(visible=(), hidden=(), check="def check(candidate):\n    assert candidate(1, 2) == 3\n")
    assert grade(task, execution(["True"], mode="check"), OPTS).all_passed
    assert not grade(task, execution([None], mode="check"), OPTS).all_passed
    assert not grade(task, execution(["True", "True"], mode="check"), OPTS).all_passed
    assert not grade(task, execution(["True"], mode="cases"), OPTS).all_passed
    assert not grade(task, execution(["True"], mode="check", exit_code=1), OPTS).all_passed


def test_rendered_prompt_never_contains_hidden_cases() -> None:
    task = make_task(visible=(("(1, 2)", "3"),), hidden=(("(123456, 654321)", "777777"),))
    text = render_prompt(task)
    assert "add(1, 2) == 3" in text
    assert "123456" not in text and "777777" not in text


statuses = st.sampled_from(["ok", "error", "timeout", "missing"])
records = st.lists(
    st.tuples(st.integers(0, 6), st.booleans(), statuses, st.one_of(st.none(), st.text(max_size=30))),
    max_size=8,
)


@settings(max_examples=300, deadline=None)
@given(records)
def test_any_record_sequence_grades_without_crashing_and_passes_only_when_complete(recs) -> None:  # type: ignore[no-untyped-def]
    task = make_task()
    cases = tuple(
        CaseResult(index=i, hidden=h, status=s, result_repr=r if s == "ok" else None) for i, h, s, r in recs
    )
    g = grade(task, execution([], cases=cases), OPTS)
    assert 0 <= g.passed <= g.total == 4
    if g.all_passed:
        # exactly one record per case, every one a plain literal equal to the expected value
        assert len(cases) == 4
        assert all(c.status == "ok" for c in cases)


# ------------------------------------------------------------------ code-v5: float tolerance of the task
V5 = V5_COMPARE.options()
MEAN = make_task(
    visible=(("([1, 2, 3, 4],)", "2.5"), ("([0.1, 0.2, 0.3],)", "0.20000000000000004")),
    hidden=(("([1e+16, 1, -1e+16, 3],)", "0.75"), ("([7, 8],)", "7.5")),
    entry_point="mean",
    reference="def mean(xs):\n    return sum(xs) / len(xs)\n",
)


def test_an_expected_float_tolerates_a_few_units_in_its_last_place_not_a_relative_constant() -> None:
    def ok(expected: float, got: float) -> bool:
        return values_match(expected, got, V5)

    assert ok(0.3, 0.1 + 0.2) and ok(0.2, 0.6 / 3)  # another order of a few operations
    assert ok(1.5, 1.5 + 4 * math.ulp(1.5)) and not ok(1.5, 1.5 + 5 * math.ulp(1.5))
    assert not ok(2.5, 2.5 * (1 + 5e-10))  # inside code-v3's 1e-9, two million units away
    assert not ok(1e-300, 0.0)  # a tiny expected value is a value: its units are tiny too
    assert values_match(10**20, 1e20, V5) and not values_match(10**20 + 1, 1e20, V5)  # an int is exact
    # an expected float accepts an int within its units (1e20's last place is 16384)
    assert values_match(1e20, 10**20 + 4 * 16384, V5) and not values_match(1e20, 10**20 + 5 * 16384, V5)


def test_a_case_accepts_the_references_answer_in_the_same_backend_where_floats_alone_differ() -> None:
    # the task's values were computed by a Python whose sum() adds left to right; the backend's
    # sum() is compensated, so its reference answers the third case 1.0
    reference = execution(["2.5", "0.20000000000000004", "1.0", "7.5"], task_id="t/mean")
    naive = execution(["2.5", "0.20000000000000004", "0.75", "7.5"])
    compensated = execution(["2.5", "0.20000000000000004", "1.0", "7.5"])
    between = execution(["2.5", "0.20000000000000004", "0.875", "7.5"])
    for run in (naive, compensated):
        assert grade(MEAN, run, V5, reference=reference).all_passed
    assert not grade(MEAN, between, V5, reference=reference).all_passed
    assert not grade(MEAN, compensated, V5).all_passed  # without the reference: the task's values only
    assert not grade(MEAN, compensated, CompareOptions(), reference=reference).all_passed  # code-v3
    elsewhere = reference.model_copy(update={"backend": "container"})
    assert not grade(MEAN, compensated, V5, reference=elsewhere).all_passed  # another backend's says nothing
    # a reference that answers otherwise than in floats (a type, a value of another kind) is no band
    wrong_kind = execution(["2.5", "0.20000000000000004", "1", "7.5"])
    assert not grade(MEAN, wrong_kind, V5, reference=wrong_kind).all_passed
    assert differ_in_floats_only([0.75, "a"], [1.0, "a"]) and not differ_in_floats_only(
        [0.75, "a"], [1.0, "b"]
    )
    assert not differ_in_floats_only((0.75,), [0.75]) and not differ_in_floats_only(0.75, 1)
