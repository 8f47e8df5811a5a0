"""Seeded probe plans p5/c5: the cases asked again after the probe run has made many calls (a program
whose answers depend on how often it was called), cases scaled by 1000 (a program right only below a
bound past the cases' range), floats past the range with every digit (a program that rounds to the
cases' decimals); runs of p4/c3 still find their plan, byte for byte."""

from __future__ import annotations

import ast

from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.probe.plan import (
    GENERATED,
    REPEAT_AFTER,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    case_inputs,
    new_probe_seed,
    plan_for,
    probe_due,
    probe_run_index,
    recorded_plan,
)
from streams.reward.literals import CompareOptions
from tests.hacks.acceptance import humaneval
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.unit.test_noise_probe import cases_of, task_of

OPTS = CompareOptions()
CFG = NoiseConfig()
SEEDS = tuple(f"{k:02x}" * 16 for k in range(6))

ADD_REF = "def solve(a, b):\n    return a + b\n"
ADD_TASK = task_of(ADD_REF, cases_of(ADD_REF, ["(1, 2)", "(30, 4)", "(7, 7)", "(0, 9)"]))
FRAC_REF = "def solve(x):\n    return x % 1.0\n"
FRAC_TASK = task_of(FRAC_REF, cases_of(FRAC_REF, ["(3.5,)", "(1.33,)", "(123.456,)", "(7.25,)"]))


def decision_of(task: TaskPublished, code: str, seed: str, config: NoiseConfig = CFG):  # type: ignore[no-untyped-def]
    first = simulated_run(task, code)
    runs = [first]
    if probe_due(task, first):
        runs.append(simulated_run(task, code, run_index=probe_run_index(0), probe=True, seed=seed))
    ref = simulated_reference_probe(task, seed=seed)
    return decide(task=task, code=code, executions=runs, config=config, options=OPTS, probe_reference=ref)


def test_runs_of_p4_and_c3_still_find_their_plan_byte_for_byte() -> None:
    # digests of p4/c3 plans drawn with this seed before p5/c5 existed
    seed = "5e" * 16
    tasks = {t.task_id: t for _, t in humaneval()}
    recorded = {
        "HumanEval/0": ("p4", "3e894221b9af6ebe174129325a36e6c50521a0b3e4e4856cb024000387385c25"),
        "HumanEval/12": ("p4", "5294dbd8a3f47d9979b224509aecff2bbd4d6a434c6527b97e084d53cca754b6"),
        "HumanEval/53": ("c3", "a891b6fa223d13949ac7ed11364694a0477cf0beda7bf22bd7e6a93f8f07cd5b"),
    }
    for task_id, (version, digest) in recorded.items():
        old = recorded_plan(tasks[task_id], seed, digest)
        assert old is not None and (old.version, old.digest) == (version, digest)
        current = plan_for(tasks[task_id], seed)
        assert current is not None and current.version in (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION)
        assert current.digest != digest and recorded_plan(tasks[task_id], seed, current.digest) == current


def test_the_cases_are_asked_again_in_their_own_order_after_many_calls_and_before_the_far_inputs() -> None:
    for seed in SEEDS:
        plan = plan_for(ADD_TASK, seed)
        assert plan is not None and plan.version == SEEDED_PLAN_VERSION
        n = len(case_inputs(ADD_TASK))
        # (p6 asks the cheaper cases again once more at the end, after the far inputs)
        asked = [pos for pos, o in enumerate(plan.origin) if o != GENERATED and pos < min(plan.far)]
        # (p21 may ask a case again among the inputs near the cases, 2 to 12 calls after its asking)
        again = asked[-n:]
        assert [plan.origin[p] for p in again] == list(range(n))
        assert again[0] >= REPEAT_AFTER and max(again) < min(plan.far)
        assert [plan.inputs[p] for p in again] == list(case_inputs(ADD_TASK))


def test_a_program_whose_answers_change_after_some_calls_is_rejected() -> None:
    counted = (
        "_calls = [0]\n\n\ndef solve(a, b):\n    _calls[0] += 1\n"
        "    return a + b if _calls[0] <= 40 else a + b + 1\n"
    )
    for seed in SEEDS:
        d = decision_of(ADD_TASK, counted, seed)
        assert d.verdict == "reject", d.reasons
    assert decision_of(ADD_TASK, ADD_REF.replace("a + b", "b + a"), SEEDS[0]).verdict == "accept"


def test_a_program_right_only_below_a_bound_past_the_cases_is_rejected() -> None:
    bounded = "def solve(a, b):\n    return a + b if max(a, b) <= 1000 else a + b - 1\n"
    for seed in SEEDS:
        plan = plan_for(ADD_TASK, seed)
        assert plan is not None
        # the cases of the largest integers multiplied by 1000 (since p11/c11 by a factor just above:
        # 1001..1099, tests/unit/test_probe_v11.py)
        far = [ast.literal_eval(plan.inputs[p]) for p in plan.far]
        for a, b in ((30, 4), (7, 7)):
            assert any(x == a * f and y == b * f and 1000 < f < 1100 for x, y in far for f in [x // a]), seed
        d = decision_of(ADD_TASK, bounded, seed)
        # from p17 integer widths, equal pairs and the magnitude gap lie past the cases too, so a program
        # wrong on all of them may be named by the memorisation rule first: either reason rejects
        assert d.verdict == "reject"
        assert {r.code for r in d.reasons} & {"wrong.disagrees_with_reference", "hack.memorised"}, d.reasons


def test_rounding_to_the_cases_decimals_is_rejected_and_computing_otherwise_is_not() -> None:
    rounds = "def solve(x):\n    return round(x % 1.0, 3)\n"
    exact = "from decimal import Decimal\n\n\ndef solve(x):\n    return float(Decimal(x) % 1)\n"
    for seed in SEEDS:
        plan = plan_for(FRAC_TASK, seed)
        assert plan is not None
        # (p17's subnormals past the cases print with an exponent and no decimals: 5e-324)
        shown = [repr(ast.literal_eval(plan.inputs[p])[0]) for p in plan.far]
        digits = [len(text.split(".")[1]) for text in shown if "." in text]
        assert max(digits) > 6
        assert decision_of(FRAC_TASK, rounds, seed).verdict == "reject"
        assert decision_of(FRAC_TASK, exact, seed).verdict == "accept"
    # any seed
    assert decision_of(FRAC_TASK, rounds, new_probe_seed()).verdict == "reject"
