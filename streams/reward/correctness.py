"""Functional correctness from the trusted channel: per-case results of one execution, compared on the
host against the task's expected values (visible and hidden), which never entered the sandbox."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from schemas.rollout import CaseResult, SandboxExecutedV1
from schemas.task import TaskPublished, TestCase
from streams.reward.literals import (
    CompareOptions,
    NotALiteral,
    differ_in_floats_only,
    parse_expected,
    parse_literal,
    values_match,
)

#: why a case did not pass; ``pass`` when it did
CaseOutcome = Literal[
    "pass", "wrong", "not_literal", "error", "timeout", "missing", "duplicate", "unexpected", "aborted"
]


#: no second expected value for a case
NO_SECOND_VALUE = object()


@dataclass(frozen=True)
class ExpectedCase:
    hidden: bool
    index: int
    case: TestCase


@dataclass(frozen=True)
class CaseGrade:
    hidden: bool
    index: int
    outcome: CaseOutcome

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"


@dataclass(frozen=True)
class Correctness:
    """The graded execution. ``all_passed`` is False for zero cases, any missing or forged record, a
    forced or abnormal exit, or an infra failure."""

    grades: tuple[CaseGrade, ...]
    passed: int
    total: int
    #: a whole-run reason that failed every case (forced exit, infra, count mismatch, ...); "" if none
    run_failure: str
    #: result reprs that were not plain literals (runtime evidence of a custom object being returned)
    non_literal_results: int

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total and not self.run_failure

    @property
    def fraction(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def pass_vector(self) -> tuple[bool, ...]:
        return tuple(g.passed for g in self.grades)


def expected_cases(task: TaskPublished) -> tuple[ExpectedCase, ...]:
    """Every case that judges the task: visible ones first, then hidden, each indexed within its list.
    The sandbox receives their inputs in this order."""
    return tuple(ExpectedCase(False, i, c) for i, c in enumerate(task.tests)) + tuple(
        ExpectedCase(True, i, c) for i, c in enumerate(task.hidden_tests)
    )


def prompt_cases(task: TaskPublished) -> tuple[TestCase, ...]:
    """The cases that may be shown to a model: the visible ones only, never ``hidden_tests``."""
    return task.tests


def render_prompt(task: TaskPublished, *, max_examples: int = 3) -> str:
    """The task's prompt, followed by up to ``max_examples`` visible examples (hidden cases never)."""
    lines = [task.prompt.rstrip("\n")]
    examples = prompt_cases(task)[:max_examples]
    if examples:
        lines.append("")
        lines.append("# Examples:")
        for c in examples:
            args = parse_literal(c.input)
            assert isinstance(args, tuple)  # a task's input is a tuple literal (checked when published)
            call = ", ".join(repr(a) for a in args)
            lines.append(f"# {task.entry_point}({call}) == {c.output}")
    return "\n".join(lines) + "\n"


def records_by_case(
    task: TaskPublished, execution: SandboxExecutedV1
) -> dict[tuple[bool, int], list[CaseResult]]:
    """The execution's result records by case, ``(hidden, index within its list)``; a case may have no
    record (missing) or several (duplicated)."""
    n_visible = len(task.tests)
    # the sandbox numbers cases either over visible + hidden together or within each list; both name
    # a case uniquely once the hidden flag is taken into account
    per_list = any(r.hidden and r.index < n_visible for r in execution.cases)
    by_key: dict[tuple[bool, int], list[CaseResult]] = {}
    for r in execution.cases:
        if per_list or not r.hidden:
            key = (
                (r.hidden, r.index)
                if per_list
                else (r.index >= n_visible, r.index - n_visible * (r.index >= n_visible))
            )
        else:
            key = (True, r.index - n_visible)
        by_key.setdefault(key, []).append(r)
    return by_key


def task_options(task: TaskPublished, options: CompareOptions) -> CompareOptions:
    """``options`` bounded by the float tolerance the task's check states (``TaskPublished.tolerance``):
    a number that matches by the function's rules must also lie within it (unchanged for a task that
    states none)."""
    tolerance = task.tolerance
    if tolerance is None:
        return options
    return replace(options, stated_tolerance=(tolerance.rel_tol, tolerance.abs_tol))


def grade(
    task: TaskPublished,
    execution: SandboxExecutedV1,
    options: CompareOptions,
    *,
    reference: SandboxExecutedV1 | None = None,
) -> Correctness:
    """Grade one execution of a program against the task's cases.

    Exactly one record per expected case is required; a missing, duplicated or unknown record fails
    the whole run (the program may have interfered with the harness). So does a forced or abnormal
    exit, an infra failure, a process-wide timeout or memory limit, and a task with no cases.

    ``reference`` is the task's reference run in the same backend: under ``options.reference_band`` a
    case also accepts its answer where it differs from the expected value in floats alone.
    """
    options = task_options(task, options)
    expected = expected_cases(task)
    if not expected and task.check:
        return _grade_check(execution)
    total = len(expected)
    run_failure = _run_failure(execution)
    by_key = records_by_case(task, execution)
    band = reference_band(task, execution, reference, options)
    known = {(e.hidden, e.index) for e in expected}
    unexpected = [k for k in by_key if k not in known]
    if unexpected and not run_failure:
        run_failure = f"{len(unexpected)} result record(s) for cases that do not exist"
    duplicated = [k for k, v in by_key.items() if len(v) > 1]
    if duplicated and not run_failure:
        run_failure = f"{len(duplicated)} case(s) reported more than once"

    grades: list[CaseGrade] = []
    non_literal = 0
    for e in expected:
        records = by_key.get((e.hidden, e.index), [])
        if not records:
            outcome: CaseOutcome = "missing"
        elif len(records) > 1:
            outcome = "duplicate"
        else:
            outcome = grade_record(
                e.case, records[0], options, band.get((e.hidden, e.index), NO_SECOND_VALUE)
            )
            if outcome == "not_literal":
                non_literal += 1
        grades.append(CaseGrade(e.hidden, e.index, outcome))

    if total == 0 and not run_failure:
        run_failure = "the task has no cases to judge"
    if any(g.outcome == "missing" for g in grades) and not run_failure:
        run_failure = "result records are missing (the program ended the run early)"
    if run_failure:
        # nothing of a run that was cut short or interfered with counts as passed
        grades = [CaseGrade(g.hidden, g.index, g.outcome if not g.passed else "aborted") for g in grades]
    passed = sum(g.passed for g in grades)
    return Correctness(tuple(grades), passed, total, run_failure, non_literal)


def _grade_check(x: SandboxExecutedV1) -> Correctness:
    """A task without cases is judged by its ``check(candidate)`` inside the sandbox (weaker: the
    program's objects meet the check's comparisons). One record, index 0, ``True`` when it passed."""
    run_failure = _run_failure(x, expected_mode="check")
    records = [r for r in x.cases if r.index == 0]
    if len(x.cases) != 1 or len(records) != 1:
        outcome: CaseOutcome = "missing" if not x.cases else "duplicate"
        run_failure = run_failure or f"{len(x.cases)} check records instead of 1"
    else:
        r = records[0]
        if r.status == "ok":
            outcome = "pass" if r.result_repr == "True" else "wrong"
        else:
            outcome = "timeout" if r.status == "timeout" else "missing" if r.status == "missing" else "error"
    if run_failure and outcome == "pass":
        outcome = "aborted"
    g = CaseGrade(False, 0, outcome)
    return Correctness((g,), int(g.passed), 1, run_failure, 0)


def _run_failure(x: SandboxExecutedV1, expected_mode: str = "cases") -> str:
    if x.infra_error:
        return f"infra: {x.infra_error}"
    if x.mode != expected_mode:
        return f"the task is judged in {expected_mode} mode, the run was in {x.mode} mode"
    if x.timed_out:
        return "the run hit its time limit"
    if x.memory_exceeded:
        return "the run hit its memory limit"
    if x.exit_code not in (None, 0):
        return f"the run exited with code {x.exit_code}"
    return ""


def reference_band(
    task: TaskPublished,
    execution: SandboxExecutedV1,
    reference: SandboxExecutedV1 | None,
    options: CompareOptions,
) -> dict[tuple[bool, int], object]:
    """Under ``options.reference_band``, the reference run's plain answer to each case it answered
    once, where it differs from the task's expected value in float values alone: a second expected
    value, for runs in the reference's own backend only (the other cases need none)."""
    if not options.reference_band or reference is None or reference.backend != execution.backend:
        return {}
    if _run_failure(reference) or reference.mode != "cases":
        return {}
    out: dict[tuple[bool, int], object] = {}
    expected = {(e.hidden, e.index): e.case for e in expected_cases(task)}
    for key, records in records_by_case(task, reference).items():
        case = expected.get(key)
        if case is None or len(records) != 1 or records[0].status != "ok" or records[0].result_repr is None:
            continue
        try:
            answer = parse_literal(records[0].result_repr)
            wanted = parse_expected(case.output)
        except NotALiteral:
            continue
        if differ_in_floats_only(wanted, answer):
            out[key] = answer
    return out


def grade_record(
    case: TestCase, r: CaseResult, options: CompareOptions, also: object = NO_SECOND_VALUE
) -> CaseOutcome:
    """One case's record against its expected value, or ``also`` (the reference's answer in the same
    backend, see :func:`reference_band`) where given (never raises)."""
    if r.status == "timeout":
        return "timeout"
    if r.status == "missing":
        return "missing"
    if r.status != "ok" or r.result_repr is None:
        return "error"
    try:
        got = parse_literal(r.result_repr, max_chars=options.max_repr_chars)
    except NotALiteral:
        return "not_literal"
    try:
        expected = parse_expected(case.output)
    except NotALiteral:  # a stored task older than today's validation: nothing can pass this case
        return "wrong"
    if values_match(expected, got, options):
        return "pass"
    return "pass" if also is not NO_SECOND_VALUE and values_match(also, got, options) else "wrong"
