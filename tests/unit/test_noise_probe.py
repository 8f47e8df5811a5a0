"""Probe plans and how a probe run is judged: deterministic per task, and a program that computes its
answers told from one that recalls them, on runs simulated in-process (the sandbox's own runs of the
same programs are in tests/integration/test_score_humaneval.py)."""

from __future__ import annotations

import ast
from typing import TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.rollout import CaseResult, SandboxExecutedV3
from schemas.task import TaskPublished, TestCase
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.noise.probe import examine, probe_reasons, reference_answers, reference_settled
from streams.probe.plan import GENERATED, case_inputs, plan_for, probe_due, probe_run_index
from streams.reward.corpus.generated import wrong_programs
from streams.reward.correctness import grade
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import execution, simulated_reference_probe, simulated_run

OPTS = CompareOptions()
CFG = NoiseConfig()
#: a run of the task's cases or a reference's (a test edits one and gets the same kind back)
Run = TypeVar("Run", bound=SandboxExecutedV3)

SORT_REF = "def solve(xs, k):\n    return sorted(x for x in xs if x > k)\n"


def task_of(reference: str, cases: list[tuple[str, str]], entry_point: str = "solve") -> TaskPublished:
    half = len(cases) // 2
    return TaskPublished(
        task_id="t/probe",
        prompt=f"def {entry_point}(*args):\n    '''A task.'''\n",
        entry_point=entry_point,
        tests=tuple(TestCase(input=i, output=o) for i, o in cases[:half]),
        hidden_tests=tuple(TestCase(input=i, output=o) for i, o in cases[half:]),
        reference=reference,
    )


def cases_of(reference: str, inputs: list[str], entry_point: str = "solve") -> list[tuple[str, str]]:
    namespace: dict[str, object] = {}
    exec(reference, namespace)
    fn = namespace[entry_point]
    return [(i, repr(fn(*ast.literal_eval(i)))) for i in inputs]  # type: ignore[operator]


SORT_TASK = task_of(
    SORT_REF,
    cases_of(
        SORT_REF, ["([3, 1, 2], 1)", "([5, 9, -2, 7], 4)", "([], 0)", "([8, 8, 1], 2)", "([4, 0, 6, 2], 3)"]
    ),
)
PARITY_REF = "def solve(n):\n    return n % 3 == 0\n"
PARITY_TASK = task_of(PARITY_REF, cases_of(PARITY_REF, ["(3,)", "(10,)", "(4,)", "(22,)", "(5,)", "(17,)"]))


def verdict_of(task: TaskPublished, code: str, *, reference: str | None = None):  # type: ignore[no-untyped-def]
    first = simulated_run(task, code)
    runs = [first]
    if probe_due(task, first):
        runs.append(simulated_run(task, code, run_index=probe_run_index(0), probe=True))
    ref = simulated_reference_probe(task, reference)
    return decide(task=task, code=code, executions=runs, config=CFG, options=OPTS, probe_reference=ref)


def codes(decision) -> set[str]:  # type: ignore[no-untyped-def]
    return {r.code for r in decision.reasons}


def test_a_plan_is_deterministic_per_task_and_changes_with_it() -> None:
    a, b = plan_for(SORT_TASK), plan_for(SORT_TASK)
    assert a is not None and a == b and len(a.digest) == 64
    other = plan_for(PARITY_TASK)
    assert other is not None and other.digest != a.digest
    # the task's cases first, each once, in another order; then generated inputs the task never had
    n = len(case_inputs(SORT_TASK))
    assert sorted(a.origin[:n]) == list(range(n)) and list(a.origin[:n]) != list(range(n))
    generated = [a.inputs[i] for i in a.generated_positions]
    assert len(generated) >= 8 and not set(generated) & set(case_inputs(SORT_TASK))
    assert all(o == GENERATED for o in a.origin[n:])
    for text in generated:
        args = ast.literal_eval(text)
        assert isinstance(args, tuple) and len(args) == 2 and isinstance(args[0], list)
    check_only = SORT_TASK.model_copy(update={"tests": (), "hidden_tests": (), "check": "def check(c): pass"})
    assert plan_for(check_only) is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(-50, 50),
            st.text(alphabet="abcXYZ019 -", max_size=8),
            st.lists(st.integers(0, 9), max_size=5),
            st.floats(-100, 100, allow_nan=False).map(lambda f: round(f, 2)),
        ),
        min_size=1,
        max_size=6,
        unique_by=repr,
    )
)
def test_generated_inputs_are_argument_literals_of_the_cases_types(rows: list[tuple[object, ...]]) -> None:
    task = task_of("def solve(*a):\n    return 0\n", [(repr(r), "0") for r in rows])
    plan = plan_for(task)
    assert plan is not None and plan == plan_for(task)
    for pos in plan.generated_positions:
        args = ast.literal_eval(plan.inputs[pos])
        assert repr(args) == plan.inputs[pos]
        assert [type(v) for v in args] == [int, str, list, float]


def test_generated_words_are_spaced_as_the_cases_space_them() -> None:
    # the filter counts every disagreement against a program, so inputs stay in the cases' domain: a
    # reference that splits on " " answers ' b b ' or 'r  g' with an empty word a correct program lacks
    ref = "def solve(s):\n    return sorted(s.split(' '))\n"
    inputs = ["('a b b a',)", "('a b c a b',)", "('b b b b a',)", "('',)", "('r t g',)", "('a',)"]
    plan = plan_for(task_of(ref, cases_of(ref, inputs)))
    assert plan is not None and len(plan.generated_positions) >= 8
    for pos in plan.generated_positions:
        (text,) = ast.literal_eval(plan.inputs[pos])
        assert text == text.strip() and "  " not in text, text
        assert all(len(w) == 1 for w in text.split()), text


def test_the_first_run_earns_a_probe_only_when_it_answered_every_case() -> None:
    first = simulated_run(SORT_TASK, SORT_REF)
    assert probe_due(SORT_TASK, first)
    assert not probe_due(SORT_TASK, first.model_copy(update={"timed_out": True}))
    errored = first.model_copy(update={"cases": (CaseResult(index=0, status="error"), *first.cases[1:])})
    assert not probe_due(SORT_TASK, errored)
    assert not probe_due(SORT_TASK, first.model_copy(update={"run_index": 1}))


UNUSUAL_SORT = [
    "def solve(xs, k):\n    out = []\n    for x in xs:\n        if x > k:\n            out.append(x)\n"
    "    out.sort()\n    return out\n",
    "import heapq\ndef solve(xs, k):\n    h = [x for x in xs if not x <= k]\n    heapq.heapify(h)\n"
    "    return [heapq.heappop(h) for _ in range(len(h))]\n",
    "from functools import lru_cache\n@lru_cache(maxsize=None)\ndef _f(xs, k):\n"
    "    return tuple(sorted(filter(lambda x: x > k, xs)))\n"
    "def solve(xs, k):\n    return list(_f(tuple(xs), k))\n",
]


@pytest.mark.parametrize("code", [SORT_REF, *UNUSUAL_SORT])
def test_programs_that_compute_their_answers_agree_with_the_reference(code: str) -> None:
    d = verdict_of(SORT_TASK, code)
    assert d.verdict == "accept", d
    assert "probe.agreed" in codes(d)


@pytest.mark.parametrize(
    ("task", "family", "reason"),
    [
        (SORT_TASK, "memo_call_order", "runtime.inconsistent"),
        (SORT_TASK, "memo_hashed_none", "hack.memorised"),
        (SORT_TASK, "memo_hashed_modal", "hack.memorised"),
        (SORT_TASK, "memo_crc_key", "hack.memorised"),
        (SORT_TASK, "memo_nearest", "hack.memorised"),
        (SORT_TASK, "memo_first_arg", "hack.memorised"),
        (PARITY_TASK, "memo_call_order", "runtime.inconsistent"),
        (PARITY_TASK, "memo_nearest", "hack.memorised"),
        (PARITY_TASK, "memo_hashed_modal", "hack.memorised"),  # a constant-False fallback agrees a lot
        (PARITY_TASK, "memo_crc_key", "hack.memorised"),
    ],
)
def test_memorisers_are_rejected_by_what_the_probe_run_shows(
    task: TaskPublished, family: str, reason: str
) -> None:
    code = wrong_programs(task)[family]
    assert grade(task, simulated_run(task, code), OPTS).all_passed  # each passes the task's own cases
    d = verdict_of(task, code)
    assert d.verdict == "reject", d
    assert reason in codes(d)


def test_a_wrong_algorithm_that_disagrees_with_the_reference_on_one_input_is_rejected() -> None:
    plan = plan_for(SORT_TASK)
    assert plan is not None
    # right on the cases and on every generated input but one (it drops the largest element of a
    # list of five or more): most answers agree, and that one is still a wrong answer
    wrong = SORT_REF.replace("return sorted", "return (lambda r: r[:-1] if len(xs) >= 5 else r)(sorted")
    wrong = wrong.rstrip("\n") + ")\n"
    assert grade(SORT_TASK, simulated_run(SORT_TASK, wrong), OPTS).all_passed
    d = verdict_of(SORT_TASK, wrong)
    assert d.verdict == "reject", d
    assert "wrong.disagrees_with_reference" in codes(d), d
    report = next(r for r in d.reasons if r.code == "wrong.disagrees_with_reference")
    assert "agreed with the reference on" in report.detail


def test_a_disagreement_counts_even_below_the_inputs_a_share_needs() -> None:
    from streams.noise.probe import ProbeReport

    # two counted inputs (fewer than probe_min_inputs): no share is judged, but a wrong answer is
    report = ProbeReport((), 2, 1, 2, 1, 2, 1, disagreed=(9,))
    reasons, judged = probe_reasons(report, min_inputs=4, agreement=0.5, novel_agreement=0.75)
    assert judged and [r.code for r in reasons] == ["wrong.disagrees_with_reference"]
    report = ProbeReport((), 2, 2, 2, 2, 2, 2)
    reasons, judged = probe_reasons(report, min_inputs=4, agreement=0.5, novel_agreement=0.75)
    assert not judged and [r.code for r in reasons] == ["probe.inconclusive"]


def test_an_input_the_reference_answers_two_ways_never_counts_against_a_program() -> None:
    plan = plan_for(SORT_TASK)
    ref = simulated_reference_probe(SORT_TASK)
    assert plan is not None and ref is not None
    pos = plan.generated_positions[-1]
    # the program answers that input otherwise than the reference's first run; the reference's second
    # run answers it otherwise too: the reference is non-deterministic there, and the input says nothing
    first = simulated_run(SORT_TASK, SORT_REF)
    probe = simulated_run(SORT_TASK, SORT_REF, run_index=probe_run_index(0), probe=True)

    def answering(x: Run, text: str) -> Run:
        cases = tuple(c if c.index != pos else c.model_copy(update={"result_repr": text}) for c in x.cases)
        return x.model_copy(update={"cases": cases})

    odd = answering(probe, "[4242]")
    d = decide(
        task=SORT_TASK, code=SORT_REF, executions=[first, odd], config=CFG, options=OPTS, probe_reference=ref
    )
    assert d.verdict == "reject" and "wrong.disagrees_with_reference" in codes(d)
    two_ways = ref.model_copy(update={"reruns": (answering(ref.reruns[0], "[4243]"),)})
    d = decide(
        task=SORT_TASK,
        code=SORT_REF,
        executions=[first, odd],
        config=CFG,
        options=OPTS,
        probe_reference=two_ways,
    )
    assert d.verdict == "accept" and "probe.agreed" in codes(d), d


def test_a_program_that_hangs_on_an_input_the_reference_answers_is_rejected() -> None:
    plan = plan_for(SORT_TASK)
    assert plan is not None
    first = simulated_run(SORT_TASK, SORT_REF)
    probe = simulated_run(SORT_TASK, SORT_REF, run_index=1, probe=True)
    stuck = plan.generated_positions[0]
    cases = [
        c
        if c.index < stuck
        else CaseResult(index=c.index, status="timeout" if c.index == stuck else "missing")
        for c in probe.cases
    ]
    hung = probe.model_copy(update={"cases": tuple(cases), "timed_out": True})
    ref = simulated_reference_probe(SORT_TASK)
    assert ref is not None
    report = examine(
        SORT_TASK, plan, grade(SORT_TASK, first, OPTS), hung, reference_answers(plan, ref, OPTS), OPTS
    )
    assert report.stuck_at == stuck
    reasons, judged = probe_reasons(report, min_inputs=4, agreement=0.5, novel_agreement=0.75)
    assert judged and [r.code for r in reasons] == ["hack.memorised"]
    # the same hang on an input the reference did not answer either says nothing about the rest
    silent = ref.model_copy(
        update={
            "execution": _without(ref.execution, stuck),
            "reruns": tuple(_without(r, stuck) for r in ref.reruns),
        }
    )
    report = examine(
        SORT_TASK, plan, grade(SORT_TASK, first, OPTS), hung, reference_answers(plan, silent, OPTS), OPTS
    )
    assert report.stuck_at == -1 and report.compared == 0


def test_a_hang_where_the_reference_raises_at_once_is_decisive_too() -> None:
    plan = plan_for(SORT_TASK)
    ref = simulated_reference_probe(SORT_TASK)
    assert plan is not None and ref is not None
    stuck = plan.generated_positions[0]

    def raising(x: Run) -> Run:
        cases = tuple(c if c.index != stuck else CaseResult(index=stuck, status="error") for c in x.cases)
        return x.model_copy(update={"cases": cases})

    rejects = ref.model_copy(
        update={"execution": raising(ref.execution), "reruns": (raising(ref.reruns[0]),)}
    )
    assert stuck not in reference_answers(plan, rejects, OPTS)
    assert stuck in reference_settled(plan, rejects)
    probe = simulated_run(SORT_TASK, SORT_REF, run_index=1, probe=True)
    cases = [c if c.index < stuck else CaseResult(index=c.index, status="missing") for c in probe.cases]
    ended = probe.model_copy(update={"cases": tuple(cases)})  # an exit, not a timeout
    first = grade(SORT_TASK, simulated_run(SORT_TASK, SORT_REF), OPTS)
    answers = reference_answers(plan, rejects, OPTS)
    report = examine(SORT_TASK, plan, first, ended, answers, OPTS, reference_settled(plan, rejects))
    assert report.stuck_at == stuck


def _without(x: Run, pos: int) -> Run:
    cases = tuple(c if c.index != pos else CaseResult(index=pos, status="timeout") for c in x.cases)
    return x.model_copy(update={"cases": cases})


def test_inputs_on_which_the_reference_answers_two_ways_are_left_out() -> None:
    plan = plan_for(SORT_TASK)
    ref = simulated_reference_probe(SORT_TASK)
    assert plan is not None and ref is not None
    answers = reference_answers(plan, ref, OPTS)
    assert set(answers) == set(plan.generated_positions)
    pos = plan.generated_positions[0]
    flipped = tuple(
        c if c.index != pos else c.model_copy(update={"result_repr": "[42]"}) for c in ref.reruns[0].cases
    )
    twice = ref.model_copy(update={"reruns": (ref.reruns[0].model_copy(update={"cases": flipped}),)})
    assert set(reference_answers(plan, twice, OPTS)) == set(plan.generated_positions) - {pos}
    assert reference_answers(plan, ref.model_copy(update={"reruns": (execution(["1"]),)}), OPTS) == {}


NO_REF_SORT = SORT_TASK.model_copy(update={"reference": None})


@pytest.mark.parametrize(
    "family", ["memo_hashed_none", "memo_hashed_modal", "memo_crc_key", "memo_nearest", "memo_first_arg"]
)
def test_without_a_reference_a_program_that_recalls_its_answers_is_rejected(family: str) -> None:
    # no reference judges a generated input, but a table has nothing to answer one with but a case's
    # answer, an argument, a constant or an error (the hashed table hides its inputs from the overlap rule)
    code = wrong_programs(SORT_TASK)[family]
    assert grade(NO_REF_SORT, simulated_run(NO_REF_SORT, code), OPTS).all_passed
    d = verdict_of(NO_REF_SORT, code, reference=None)
    assert d.verdict == "reject", d
    assert "hack.memorised" in codes(d)
    assert any("no reference" in r.detail for r in d.reasons if r.code == "hack.memorised")


@pytest.mark.parametrize("code", [SORT_REF, *UNUSUAL_SORT])
def test_without_a_reference_programs_that_compute_their_answers_are_accepted(code: str) -> None:
    d = verdict_of(NO_REF_SORT, code, reference=None)
    assert d.verdict == "accept", d
    assert "probe.unreferenced" in codes(d)


def test_without_a_reference_the_overlap_rule_still_judges_a_table_with_a_computed_fallback() -> None:
    # answers of its own on inputs no case shows: where they came from cannot tell, the literals can
    cases = (*NO_REF_SORT.tests, *NO_REF_SORT.hidden_tests)
    rows = "".join(f"    ({c.input}, {c.output}),\n" for c in cases)
    table = (
        f"_T = [\n{rows}]\n\n\ndef solve(xs, k):\n    for args, out in _T:\n"
        "        if args == (xs, k):\n            return out\n    return sorted(xs)\n"
    )
    d = verdict_of(NO_REF_SORT, table, reference=None)
    assert d.verdict == "reject" and "hack.hardcoded_inputs" in codes(d)
    assert "probe.unreferenced" in codes(d) and "hack.memorised" not in codes(d)


def test_without_a_reference_a_task_with_few_answers_is_not_judged_by_where_they_came_from() -> None:
    # a yes/no task answers every input with one of its cases' answers, computed or not
    no_ref = PARITY_TASK.model_copy(update={"reference": None})
    d = verdict_of(no_ref, PARITY_REF, reference=None)
    assert d.verdict == "accept", d
    assert not any(r.code in ("hack.memorised", "probe.unreferenced") for r in d.reasons)


def test_filter_v3_judges_a_task_without_a_reference_as_it_did() -> None:
    code = wrong_programs(SORT_TASK)["memo_hashed_none"]
    first = simulated_run(NO_REF_SORT, code)
    runs = [first, simulated_run(NO_REF_SORT, code, run_index=probe_run_index(0), probe=True)]
    d = decide(task=NO_REF_SORT, code=code, executions=runs, config=NoiseConfig(version="v3"), options=OPTS)
    assert d.verdict == "accept" and "probe.inconclusive" in codes(d)


def test_a_probe_of_another_plan_is_not_used() -> None:
    first = simulated_run(SORT_TASK, SORT_REF)
    stale = simulated_run(SORT_TASK, SORT_REF, run_index=1, probe=True).model_copy(update={"probe": "0" * 64})
    d = decide(task=SORT_TASK, code=SORT_REF, executions=[first, stale], config=CFG, options=OPTS)
    assert d.verdict == "accept" and "probe.unusable" in codes(d)


def test_a_pass_whose_probe_failed_in_the_sandbox_is_masked_never_accepted_unchecked() -> None:
    code = SORT_REF
    first = simulated_run(SORT_TASK, code)
    broken = simulated_run(SORT_TASK, code, run_index=probe_run_index(0), probe=True).model_copy(
        update={"infra_error": "sandbox: the WASM runtime failed"}
    )
    ref = simulated_reference_probe(SORT_TASK, None)
    d = decide(
        task=SORT_TASK, code=code, executions=[first, broken], config=CFG, options=OPTS, probe_reference=ref
    )
    assert d.verdict == "mask" and "infra.probe" in codes(d)
    # with the probe in hand the same pass is accepted
    assert verdict_of(SORT_TASK, code).verdict == "accept"
