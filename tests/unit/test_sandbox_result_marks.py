"""A run's cases marked hidden as its result is read, and kept whole without measuring each text, give
the execution event the case-by-case paths give: the same cases, marks and bytes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.rollout import CaseResult, SandboxExecuted
from streams.sandbox import ExecutionResult, Job
from streams.sandbox.protocol import CaseRecord, SessionFacts, case_results
from streams.sandbox.result import _bound_each, bound_cases, to_event
from streams.sandbox.resume import continuation

TEXT = st.text(st.characters(codec="utf-8"), max_size=12) | st.sampled_from(["\x01\x1f", '"\\', "😀é"])
CASE = st.builds(
    CaseResult,
    index=st.integers(0, 300),
    status=st.sampled_from(["ok", "error", "timeout", "missing"]),
    result_repr=st.none() | TEXT,
    error=st.none() | TEXT,
    hidden=st.booleans(),
    digest=st.none() | st.just("X:" + "0f" * 32 + ":3"),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(CASE, max_size=40).map(tuple), st.integers(0, 400))
def test_cases_kept_whole_are_what_measuring_each_gives(cases: tuple[CaseResult, ...], budget: int) -> None:
    assert bound_cases(cases, budget) == _bound_each(cases, budget)


def test_texts_at_six_bytes_a_character_fit_exactly_at_the_bound() -> None:
    # each control character is written \\u00XX: six bytes, the most a character takes
    cases = tuple(CaseResult(index=i, status="ok", result_repr="\x01" * 5) for i in range(4))
    assert bound_cases(cases, 120) == _bound_each(cases, 120) == cases
    assert bound_cases(cases, 119) == _bound_each(cases, 119) != cases


def _facts(n: int) -> SessionFacts:
    """``n`` requests: answered (every third with an error), the last one still out."""
    facts = SessionFacts()
    for i in range(n):
        answered = i < n - 1
        facts.cases.append(
            CaseRecord(
                index=i,
                handed_at=float(i),
                answered_at=i + 0.5 if answered else None,
                ok=i % 3 != 0,
                text=repr(i),
            )
        )
    return facts


def _event(cases: tuple[CaseResult, ...], hidden: frozenset[int]) -> SandboxExecuted:
    result = ExecutionResult(backend="wasm", mode="cases", cases=cases)
    return to_event(result, sample_id="g/0", group_id="g", task_id="t", run_index=1, hidden=hidden)


def test_a_result_read_with_its_hidden_cases_makes_the_event_marking_them_after() -> None:
    hidden = frozenset({0, 2, 3, 7})
    marked = case_results(_facts(9), 9, timed_out=True, hidden=hidden)
    plain = case_results(_facts(9), 9, timed_out=True)
    assert [c.status for c in plain] == ["error", "ok", "ok"] * 2 + ["error", "ok", "timeout"]
    assert [c.index for c in marked if c.hidden] == sorted(hidden)
    assert [c.model_copy(update={"hidden": False}) for c in marked] == list(plain)
    for cases in (marked, plain):
        event = _event(cases, hidden)
        expected = _event(plain, hidden)
        assert event == expected
        assert event.model_dump_json() == expected.model_dump_json()
    # a result whose marks are not the ones asked for is marked case by case still
    other = _event(marked, frozenset({1}))
    assert [c.index for c in other.cases if c.hidden] == [1]


def test_a_continuation_hides_the_same_inputs_at_their_new_positions() -> None:
    job = Job(mode="cases", code="", inputs=tuple(f"({i},)" for i in range(6)), hidden=frozenset({1, 4, 5}))
    assert continuation(job, 3).hidden == frozenset({1, 2})
