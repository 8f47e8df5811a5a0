"""Noise filter v6: what a correct program may do on a probe input that its task's cases do not admit.

Past the cases' range v5 counts an error where the reference answers with a value; v6 forgives an error
the reference itself raises on another input past the cases' range in the same plan (the task's own
refusal, whose exact boundary the cases do not pin). Inputs outside the domain the cases show (breaking
a relation between argument lengths every case keeps, or holding a symbol outside a vocabulary the
cases' string lists share) are not judged at all. A check that compares every answer through
``tuple()`` compares a list and a tuple of the same elements as one answer, and so does its probe."""

from __future__ import annotations

import pytest

from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.noise.probe import outside_cases
from streams.probe.plan import GENERATED, ProbePlan, check_compares_sequences, probe_due, probe_run_index
from streams.reward.correctness import expected_cases
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import execution, simulated_reference_probe, simulated_run
from tests.unit.test_noise_probe import cases_of, task_of
from tests.unit.test_probe_check_plan import check_task
from tests.unit.test_probe_wider import SEEDS

OPTS = CompareOptions()


def verdict(task: TaskPublished, code: str, seed: str, version: str, *, check: bool = False) -> str:
    first = execution(["True"], mode="check", task_id=task.task_id) if check else simulated_run(task, code)
    runs = [first]
    if probe_due(task, first):
        runs.append(simulated_run(task, code, run_index=probe_run_index(0), probe=True, seed=seed))
    d = decide(
        task=task,
        code=code,
        executions=runs,
        config=NoiseConfig(version=version),  # type: ignore[arg-type]
        options=OPTS,
        probe_reference=simulated_reference_probe(task, seed=seed),
    )
    return d.verdict


# ------------------------------------------------------------- an error the reference raises itself
XOR_REF = "def solve(data, key):\n    return bytes(b ^ key for b in data)\n"
XOR_TASK = task_of(
    XOR_REF,
    cases_of(
        XOR_REF, ["(b'abc', 1)", "(b'', 7)", "(b'\\x00\\xff', 255)", "(b'hello', 32)", "(b'\\x10\\x10', 16)"]
    ),
)
#: refuses every key past a byte, the reference only where there is a byte to xor: the same error
TRANSLATES = "def solve(data, key):\n    return data.translate(bytes(i ^ key for i in range(256)))\n"
#: refuses past a byte with an error of its own, which the reference never raises
OWN_REFUSAL = (
    "def solve(data, key):\n    if key > 255:\n        raise ValueError('key must be a byte')\n"
    "    return bytes(b ^ key for b in data)\n"
)


def test_an_error_the_reference_raises_itself_past_the_cases_is_forgiven() -> None:
    v5 = [verdict(XOR_TASK, TRANSLATES, seed, "v5") for seed in SEEDS]
    assert "reject" in v5  # the regression v6 fixes
    assert all(verdict(XOR_TASK, TRANSLATES, seed, "v6") == "accept" for seed in SEEDS)


def test_an_error_of_the_programs_own_past_the_cases_stays_a_wrong_answer() -> None:
    got = [(verdict(XOR_TASK, OWN_REFUSAL, s, "v5"), verdict(XOR_TASK, OWN_REFUSAL, s, "v6")) for s in SEEDS]
    assert all(v5 == v6 for v5, v6 in got)
    assert ("reject", "reject") in got


# -------------------------------------------------------------------------- outside the cases' domain
ALGEBRA_REF = (
    "def solve(ops, xs):\n    e = str(xs[0])\n    for o, x in zip(ops, xs[1:]):\n        e += o + str(x)\n"
    "    return eval(e)\n"
)
ALGEBRA_TASK = task_of(
    ALGEBRA_REF,
    cases_of(
        ALGEBRA_REF,
        ["(['*', '+'], [2, 3, 4])", "(['-'], [9, 5])", "(['*', '-', '+'], [1, 2, 3, 4])", "(['+'], [8, 1])"],
    ),
)


def plan_of(task: TaskPublished, generated: list[str]) -> ProbePlan:
    cases = [c.case.input for c in expected_cases(task)]
    return ProbePlan(
        "p5",
        (*cases, *generated),
        (*range(len(cases)), *[GENERATED] * len(generated)),
        "d",
        seeds=len(cases),
    )


def test_inputs_that_break_what_every_case_keeps_are_outside_the_domain() -> None:
    generated = [
        "(['+', '-'], [1, 2, 3])",  # one operator fewer than operands, as every case: judged
        "(['+', '-'], [1, 2])",  # as many operators as operands: no case is like it
        "(['+', '/'], [7, 2, 4])",  # an operator no case holds
        "(['--', '*'], [7, 2, 4])",  # another one, which the reference answers with an int
        "(['-', '*', '*', '+'], [7, 2, 4, 1, 9])",  # the cases' own operators, longer: judged
    ]
    plan = plan_of(ALGEBRA_TASK, generated)
    base = len(expected_cases(ALGEBRA_TASK))
    assert outside_cases(plan, expected_cases(ALGEBRA_TASK)) == {base + 1, base + 2, base + 3}


def test_words_that_do_not_recur_from_case_to_case_are_no_vocabulary() -> None:
    ref = "def solve(words, n):\n    return [w for w in words if len(w) > n]\n"
    words = task_of(ref, cases_of(ref, ["(['ab', 'c'], 1)", "(['xyz', 'q'], 0)", "(['hello'], 3)"]))
    plan = plan_of(words, ["(['ab', 'zz'], 1)"])
    assert outside_cases(plan, expected_cases(words)) == frozenset()


def test_a_relation_needs_three_cases_that_keep_it() -> None:
    two = task_of(ALGEBRA_REF, cases_of(ALGEBRA_REF, ["(['+', '*'], [2, 3, 4])", "(['-'], [9, 5])"]))
    plan = plan_of(two, ["(['+', '-'], [1, 2])"])
    assert outside_cases(plan, expected_cases(two)) == frozenset()


#: a correct program that relies on the relation the prompt states (it indexes instead of zipping)
INDEXES = (
    "def solve(ops, xs):\n    e = str(xs[0])\n    for i in range(len(ops)):\n"
    "        e += ops[i] + str(xs[i + 1])\n    return eval(e)\n"
)
#: wrong on inputs the cases admit, right on the cases (each multiplies first): evaluates left to right
LEFT_TO_RIGHT = (
    "def solve(ops, xs):\n    r = xs[0]\n    for o, x in zip(ops, xs[1:]):\n        r = eval(f'{r}{o}{x}')\n"
    "    return r\n"
)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_program_is_judged_inside_the_domain_its_cases_show(seed: str) -> None:
    assert verdict(ALGEBRA_TASK, INDEXES, seed, "v6") == "accept"
    assert verdict(ALGEBRA_TASK, LEFT_TO_RIGHT, seed, "v6") == "reject"


# ------------------------------------------------------------------- a check that compares through tuple()
TUPLE_CHECK = """
def check(candidate):
    assert tuple(candidate([1, 2, 3])) == tuple([1, 2, 3])
    assert tuple(candidate([5, 3, -5, 2, -3, 3, 9, 0, 123, 1])) == (-5, 3, -3, 2, 5, 3, 9, 0, 123, 1)
    assert tuple(candidate([4, 1, 3, 2])) == tuple(evens([4, 1, 3, 2]))
"""
EVENS_REF = "def evens(l):\n    out = list(l)\n    out[::2] = sorted(l[::2])\n    return out\n"
TUPLE_TASK = check_task("evens", EVENS_REF, TUPLE_CHECK)
AS_TUPLE = "def evens(l):\n    out = list(l)\n    out[::2] = sorted(l[::2])\n    return tuple(out)\n"
#: a tuple that is wrong (odd positions sorted too)
WRONG_TUPLE = "def evens(l):\n    return tuple(sorted(l))\n"


def test_which_checks_compare_only_the_elements() -> None:
    assert check_compares_sequences(TUPLE_CHECK, "evens")
    mixed = "def check(c):\n    assert tuple(c([1])) == (1,)\n    assert c([2]) == [2]\n"
    assert not check_compares_sequences(mixed, "evens")
    assert not check_compares_sequences("def check(c):\n    assert len(c([1])) == 1\n", "evens")
    assert not check_compares_sequences("not python (", "evens")


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_check_probe_compares_answers_as_the_check_does(seed: str) -> None:
    assert verdict(TUPLE_TASK, AS_TUPLE, seed, "v5", check=True) == "reject"
    assert verdict(TUPLE_TASK, AS_TUPLE, seed, "v6", check=True) == "accept"
    assert verdict(TUPLE_TASK, WRONG_TUPLE, seed, "v6", check=True) == "reject"
