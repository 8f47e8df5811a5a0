"""The noise filter's individual rules, each a pure function returning machine-readable reasons."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from schemas.rollout import Reason, SandboxExecuted, SandboxExecutedV2
from schemas.task import TaskPublished
from streams.reward.correctness import Correctness, expected_cases, grade
from streams.reward.literals import CompareOptions, NotALiteral, canonical_key, parse_expected, values_match
from streams.reward.static import analyse, judged_literals

# ----------------------------------------------------------------------------------------------- tasks


@dataclass(frozen=True)
class TaskQuality:
    """Whether a task can judge programs at all; a flagged task's samples are masked."""

    task_id: str
    reasons: tuple[Reason, ...]
    #: the reference's run in the backend it was assessed for, which the runs of that backend are graded
    #: with (a comparison with ``reference_band`` also accepts its answers that differ in floats alone)
    reference_execution: SandboxExecutedV2 | None = None

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)


def assess_task(
    task: TaskPublished,
    options: CompareOptions,
    *,
    min_cases: int,
    reference_execution: SandboxExecutedV2 | None = None,
    flag_constant: bool = True,
    flag_identity: bool = True,
) -> TaskQuality:
    """Flag a task whose cases cannot tell good programs from bad ones.

    The constant and identity probes need no execution: a constant answer passes exactly when every
    expected value is the same, an identity answer when every expected value equals the first
    argument. ``reference_execution`` (the reference solution run like a sample) shows whether the
    task's own solution passes.
    """
    reasons: list[Reason] = []
    cases = expected_cases(task)
    if task.check and not cases:
        # judged by its check harness: the case-based probes do not apply
        pass
    elif len(cases) < min_cases:
        reasons.append(
            Reason(code="task.too_few_cases", detail=f"{len(cases)} case(s), at least {min_cases} needed")
        )
    if cases:
        outputs = [parse_expected(c.case.output) for c in cases]
        if flag_constant and all(values_match(outputs[0], o, options) for o in outputs):
            reasons.append(
                Reason(
                    code="task.constant_answer_passes",
                    detail=f"returning {cases[0].case.output[:80]} passes every case",
                )
            )
        inputs = [parse_expected(c.case.input) for c in cases]
        if flag_identity and all(
            isinstance(i, tuple) and len(i) >= 1 and values_match(o, i[0], options)
            for i, o in zip(inputs, outputs, strict=True)
        ):
            reasons.append(
                Reason(
                    code="task.identity_answer_passes",
                    detail="returning the first argument passes every case",
                )
            )
    if reference_execution is not None:
        if reference_execution.infra_error:
            pass  # says nothing about the task; assess again when the reference has run
        else:
            ref = grade(task, reference_execution, options, reference=reference_execution)
            if not ref.all_passed:
                why = ref.run_failure or f"{ref.passed}/{ref.total} cases"
                reasons.append(Reason(code="task.reference_fails", detail=why[:200]))
    return TaskQuality(task.task_id, tuple(reasons), reference_execution)


# ---------------------------------------------------------------------------------------- hard-coding


def _trivial(value: object) -> bool:
    """Values any honest program may contain: small numbers, booleans, empty and one-char values."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, int):
        return -10 <= value <= 10
    if isinstance(value, float):
        return value.is_integer() and -10 <= value <= 10
    if isinstance(value, str | bytes | list | tuple | dict | set | frozenset):
        return (
            len(value) <= 1 and all(_trivial(v) for v in value)
            if not isinstance(value, str | bytes)
            else len(value) <= 1
        )
    return False


def _key(value: object) -> object | None:
    try:
        return canonical_key(value)
    except NotALiteral:
        return None


@lru_cache(maxsize=1024)
def _literal_keys(code: str, entry_point: str) -> frozenset[object]:
    """The canonical keys of the literals a call of ``entry_point`` can reach in ``code`` (cached: a
    task's reference is looked at for every sample)."""
    found = judged_literals(analyse(code), entry_point)
    return frozenset(k for k in (_key(v) for v in found) if k is not None)


def _case_in(args: tuple[object, ...], present: frozenset[object]) -> bool:
    """Whether a case's input is written out in a program: the whole argument tuple as a literal (a
    lookup table's key), or every non-trivial argument (an if-chain over the inputs)."""
    if _key(args) in present:
        return True
    interesting = [a for a in args if not _trivial(a)]
    return bool(interesting) and all(_key(a) in present for a in interesting)


def hardcoding(
    task: TaskPublished,
    code: str,
    *,
    threshold: float,
    min_inputs: int,
    reference: str | None = None,
) -> Reason | None:
    """Test-input hard-coding: at least ``threshold`` of the task's case inputs appear verbatim as
    literals in the code a call of the entry point can run (a lookup table, an if-chain over the test
    inputs; not a ``main()`` or a self-test under ``__main__``, which the judge never runs).

    Inputs the task's own reference solution (``reference``, its source) also contains (a table of
    planet names, the numerals of a roman-number converter) are no evidence and are left out of the
    count altogether.
    """
    if analyse(code).tree is None:
        return None
    present = _literal_keys(code, task.entry_point)
    needed = _literal_keys(reference, task.entry_point) if reference else frozenset()
    total = hits = 0
    for c in expected_cases(task):
        args = parse_expected(c.case.input)
        assert isinstance(args, tuple)  # the task model refuses any other input
        if needed and _case_in(args, needed):
            continue
        total += 1
        hits += _case_in(args, present)
    if total < min_inputs or hits < min_inputs or hits / total < threshold:
        return None
    return Reason(
        code="hack.hardcoded_inputs", detail=f"{hits}/{total} case inputs appear verbatim in the code"
    )


# -------------------------------------------------------------------------------------------- runtime


NON_LITERAL_MARK = "result is not a plain literal"


def non_literal_results(executions: Sequence[SandboxExecuted], graded: Sequence[Correctness]) -> int:
    """How many case results were objects other than plain literals (the harness refuses to repr them,
    or the host refused to parse the repr)."""
    refused = sum(1 for x in executions for c in x.cases if c.error and NON_LITERAL_MARK in c.error)
    return refused + sum(g.non_literal_results for g in graded)


def flaky(graded: Sequence[Correctness]) -> Reason | None:
    """Re-runs of the same program that disagree on any case."""
    vectors = {g.pass_vector() for g in graded}
    if len(vectors) <= 1:
        return None
    passes = [g.passed for g in graded]
    return Reason(code="noise.flaky", detail=f"{len(graded)} runs disagree (passed per run: {passes})")
