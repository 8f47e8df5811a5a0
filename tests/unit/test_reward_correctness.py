"""Grading an execution against visible and hidden cases from the trusted channel."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.rollout import CaseResult
from streams.reward.correctness import grade, render_prompt
from streams.reward.literals import CompareOptions
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
