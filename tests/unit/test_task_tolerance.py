"""The float tolerance a task's check states: read from the check at ingest, carried on the task, and
the comparison its cases and its probe make (in place of the reward function's own)."""

from __future__ import annotations

import pytest

from producers.ingest.humaneval import humaneval_tasks
from producers.ingest.jsonl import parse_line
from producers.ingest.tolerance import stated_tolerance
from schemas.task import FloatTolerance, TaskPublished, TestCase
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.probe.plan import probe_due, probe_run_index
from streams.reward.code_v5 import V5_COMPARE
from streams.reward.correctness import grade
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import simulated_reference_probe, simulated_run


def check_of(*asserts: str) -> str:
    return "import math\n\n\ndef check(candidate):\n" + "".join(f"    assert {a}\n" for a in asserts)


@pytest.mark.parametrize(
    ("assertion", "rel", "abs_"),
    [
        ("abs(candidate(1.5) - 0.5) < 1e-6", 0.0, 1e-6),
        ("abs(0.5 - candidate(1.5)) <= 1e-6", 0.0, 1e-6),
        ("math.fabs(candidate(1.5) - 0.5) < 0.001", 0.0, 1e-3),
        ("1e-6 > abs(candidate(1.5) - 0.5)", 0.0, 1e-6),
        ("abs(candidate(1.5) - 0.5) < 10 ** -6", 0.0, 1e-6),
        ("math.isclose(candidate(1.5), 0.5, rel_tol=1e-4)", 1e-4, 0.0),
        ("math.isclose(0.5, candidate(1.5), abs_tol=1e-8)", 1e-9, 1e-8),
        ("isclose(candidate(1.5), 0.5, rel_tol=0.01, abs_tol=0.1)", 0.01, 0.1),
        ("math.isclose(candidate(1.5), 0.5)", 1e-9, 0.0),
    ],
)
def test_each_way_a_check_states_its_tolerance_is_read(assertion: str, rel: float, abs_: float) -> None:
    check = check_of(assertion, assertion.replace("1.5", "2.5"))
    assert stated_tolerance(check) == FloatTolerance(rel_tol=rel, abs_tol=abs_)


@pytest.mark.parametrize(
    "asserts",
    [
        ("candidate(1.5) == 0.5",),
        ("abs(candidate(1.5) - 0.5) < 1e-6", "abs(candidate(2.5) - 0.5) < 1e-3"),  # two that differ
        ("abs(poly(candidate(1.5))) < 1e-4",),  # a residual, not a distance to an expected value
        ("abs(candidate(1.5) - 0.5) < TOL",),  # not a plain number
        ("abs(other(1.5) - 0.5) < 1e-6",),  # not the candidate's answer
    ],
)
def test_a_check_that_states_no_single_tolerance_carries_none(asserts: tuple[str, ...]) -> None:
    assert stated_tolerance(check_of(*asserts)) is None


def test_humaneval_tasks_carry_the_tolerance_their_check_states() -> None:
    tasks = {t.task_id: t for t in humaneval_tasks()}
    assert tasks["HumanEval/2"].tolerance == FloatTolerance(abs_tol=1e-6)
    assert tasks["HumanEval/2"].as_written().ce_type() == "rlstream.task.published.v6"
    # a task whose check states none is written as it always was
    assert tasks["HumanEval/0"].tolerance is None
    assert tasks["HumanEval/0"].as_written().ce_type() != "rlstream.task.published.v6"


def test_a_jsonl_task_with_a_check_carries_its_tolerance_unless_it_gives_one() -> None:
    import json

    body = {"task_id": "t/x", "prompt": "def f(x):\n", "entry_point": "f"}
    check = check_of("math.isclose(candidate(2.0), 1.0, rel_tol=1e-6)")
    assert parse_line(json.dumps({**body, "check": check})).tolerance == FloatTolerance(rel_tol=1e-6)
    given = parse_line(json.dumps({**body, "check": check, "tolerance": {"abs_tol": 0.5}}))
    assert given.tolerance == FloatTolerance(abs_tol=0.5)


HALF_REF = "def half(x):\n    return x / 2\n"


def half_task(tolerance: FloatTolerance | None) -> TaskPublished:
    inputs = ["(1000.0,)", "(3.0,)", "(-7.0,)", "(2.5,)", "(10.0,)", "(123.0,)"]
    cases = [TestCase(input=i, output=repr(float(i[1:-2]) / 2)) for i in inputs]
    return TaskPublished(
        task_id="t/half",
        prompt="def half(x: float) -> float:\n    '''x / 2.'''\n",
        entry_point="half",
        tests=tuple(cases[:3]),
        hidden_tests=tuple(cases[3:]),
        reference=HALF_REF,
        tolerance=tolerance,
    )


#: off by 1e-8 absolute: within a relative 1e-9 on the largest case (500.0), and within a stated 1e-6
OFF_BY = "def half(x):\n    return x / 2 + (1e-8 if x == 1000.0 else 0.0)\n"


def test_a_wrong_answer_within_the_default_but_not_the_stated_tolerance_fails() -> None:
    # 1000.0 / 2 answered 1e-8 off is within the default relative 1e-9; the check states 1e-12
    options = CompareOptions()
    strict, none = half_task(FloatTolerance(abs_tol=1e-12)), half_task(None)
    assert grade(none, simulated_run(none, OFF_BY), options).all_passed
    assert not grade(strict, simulated_run(strict, OFF_BY), options).all_passed
    # isclose's own relative 1e-9 with no absolute part: 1e-8 off 500.0 is within it
    stated = half_task(FloatTolerance(rel_tol=1e-9))
    assert grade(stated, simulated_run(stated, OFF_BY), options).all_passed
    stated = half_task(FloatTolerance(rel_tol=1e-12))
    assert not grade(stated, simulated_run(stated, OFF_BY), options).all_passed


def test_a_looser_stated_tolerance_does_not_loosen_the_functions_comparison() -> None:
    # an answer 1e-5 off, in float32, is within a stated 1e-3 but not what the task asks: the
    # function's own rules still judge it
    float32 = (
        "import struct\n\n\ndef half(x):\n    return struct.unpack('f', struct.pack('f', x / 2 + 1e-5))[0]\n"
    )
    v5 = V5_COMPARE.options()
    loose = half_task(FloatTolerance(abs_tol=1e-3))
    assert not grade(loose, simulated_run(loose, float32), v5).all_passed
    assert grade(loose, simulated_run(loose, HALF_REF), v5).all_passed


def test_the_probe_compares_generated_inputs_within_the_stated_tolerance() -> None:
    # right on every case (the cases' largest value answered exactly), off by 1e-8 on generated
    # inputs past 400: the function's relative 1e-9 accepts that on values near the cases, the check's
    # stated 1e-12 does not
    code = "def half(x):\n    return x / 2 + (1e-8 if abs(x) > 400 and x != 1000.0 else 0.0)\n"
    options = CompareOptions()

    def verdict(task: TaskPublished) -> tuple[str, set[str]]:
        first = simulated_run(task, code)
        runs = [first]
        if probe_due(task, first):
            runs.append(simulated_run(task, code, run_index=probe_run_index(0), probe=True))
        ref = simulated_reference_probe(task)
        d = decide(
            task=task, code=code, executions=runs, config=NoiseConfig(), options=options, probe_reference=ref
        )
        return d.verdict, {r.code for r in d.reasons}

    verdict_none, codes_none = verdict(half_task(None))
    assert verdict_none == "accept" and "probe.agreed" in codes_none
    verdict_strict, codes_strict = verdict(half_task(FloatTolerance(abs_tol=1e-12)))
    assert verdict_strict == "reject" and "wrong.disagrees_with_reference" in codes_strict
