"""Seeded probe plans p11/c11: far integers keep their significant digits. Before, an input past the cases'
range whose integers were multiplied by 10, 100 or 1000 turned a case's 100 into 1000, 10000, 100000,
whose answers carry as few significant digits (HumanEval/60: 100000 -> 5000050000), so a program
computing at six significant digits agreed with the reference on every input. p11/c11 multiply by a
whole factor drawn just above each (:data:`DIGITS_KEPT_FACTORS`: 11..13, 101..110, 1001..1100), so the
inputs lie as far past the cases or further, keep a common divisor, and their answers carry every digit.
Every other input is the one p10/c10 draw, and runs of p10/c10 still find their plans byte for byte."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from schemas.task import TaskPublished
from streams.noise.filter import Decision, decide
from streams.probe.plan import (
    DIGITS_KEPT_FACTORS,
    FAR_REACH,
    MACHINE_BOUNDS,
    ProbePlan,
    _plan,
    case_inputs,
    check_calls,
    probe_due,
    probe_run_index,
    recorded_plan,
)
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.hacks.redteam.corpus import PROGRAMS
from tests.hacks.redteam.tasks import all_tasks
from tests.unit.test_probe_wider import CFG, OPTS

SEEDS = [f"{k:02x}" * 16 for k in range(6)]
MATRIX_SEED = "5eed" * 8
P10_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the generation of p10/c10, and of p11/c11 (p12/c12 since: tests/unit/test_probe_v12.py, whose far
#: factors are p11's)
P10 = 8
P11 = 9
CODE = {p.name: p.code for p in PROGRAMS}
#: tasks whose arguments are integers or flat lists of them (HumanEval/33 and /52 are judged by their check)
INTEGER_TASKS = (
    "HumanEval/13",
    "HumanEval/24",
    "HumanEval/33",
    "HumanEval/52",
    "HumanEval/55",
    "HumanEval/60",
    "HumanEval/63",
    "HumanEval/106",
)

#: digests of p10/c10 plans drawn before p11/c11 existed (seeds P10_SEEDS)
P10_DIGESTS = {
    "HumanEval/0": (
        "bb020e7bd27b15985a1141a644a483e29a390182c0de6d029f9317524500159e",
        "0e44b2fd2b89756862a103048c6c6c34ed455ab961ec251e80f1e8353f5882c4",
        "4e9d961f65d26b8a86423202ba359d06525cc2b1921243bf1ea43318bb8054cb",
    ),
    "HumanEval/13": (
        "df3a3d2f8effb936e9daec86504f5a585c2fd4126b97592035efe5e27e609f7e",
        "1dbc64fb7b37a449811cc884783c65be4d9c6727a9c21bb280160eb1b1af5523",
        "2c6a8ff81a35d00fe0e3b7e4a767cf6bbb1e94b8a19e6d213c8961b2aa510ff0",
    ),
    "HumanEval/24": (
        "1ee958074266f78b2e77d02669310521c6f1ceca0f14335be50ae43163c552cf",
        "c0114f994baf6dd693c464e801e7f35309c522390b6500b9e29554d446fe63f1",
        "5093e15777b52f6925a7177352dd450d03c9fa979c61ac3c652c5f16dee6423c",
    ),
    "HumanEval/33": (
        "70ae9d133b535a9f06ec4278995ae237b9435b2ae3af91ad940e9512d6644101",
        "69557f833d55b9d350b6029fda1ea797bb052e5fd75ba2126262c114130b0cd4",
        "8f3d67da5520b6941a3c66633066a0321d7ff8af39c9adceb4102488dff94bd2",
    ),
    "HumanEval/52": (
        "5609e7429d03bccb55ad3e79af6259ebe429b92c06cbd3b970cc0d0226692142",
        "dde80d5aad6a22c24adaa496b156d438ba3c519a9760a98fa2dce5e92df88c45",
        "c526b063764b5f7cbd4b352455ff22cef8ed325dc1f7ac58664d6a1e68e95111",
    ),
    "HumanEval/55": (
        "00b66b7cdf9e671c3d4be276cd03b99cbb1d9b357681919b06b3917c60c86ee9",
        "b00b637b28c971a3fdfb28ad3a38ae6042c6a3bd11addd7cd87beb44ade49dbf",
        "bd792f90eb635f2daf3c27807d849e02e82701011b8b6355d577c3ca0ba84f3f",
    ),
    "HumanEval/60": (
        "84195c9f3dfb6df91dcf50c3c495a2528a373c923e058a57f8a68f4d236f0bf7",
        "96c9fc998d7221eda8b16a483f0dda91cb83ceae5a700942a0d9556c3fa3181f",
        "77ab97f0e84d672895ad479db8f72e3427f529132f0732abeb390248cd0b586e",
    ),
    "HumanEval/63": (
        "c5a34baf0ec7f0f506dfe351ff4959a7182bd80179f005c3e96af4e500d93ee8",
        "d3117c6c02f84bfa5a8b8a3f56790ead5d41c656377ce025f9ea11b73328a01b",
        "3a993741b3c51ddbd703edc5bc12bda0cbd929d7633984ca4f19a0293d9ca966",
    ),
    "HumanEval/106": (
        "f9ccbd380c76b5d6ccc6b7c20d82545a81506bac76387bbb0fbc0149be938536",
        "6a161d9968215ce1f339c13c7c4e7b20fe7e858abcbbcf2a5578a72b97bbed77",
        "bb31523202a28cce0f5d441eb67de8ad98ae771ccb5dca2313434a294bc00422",
    ),
    "HumanEval/129": (
        "a5e250814afa328b13188622d5be60e011e28b27eed91d3ded846a9b31517b86",
        "8f6a12a86d3c7d9497bf6e7e134fafaae55e326672c0010342ddc59b66b9ea7e",
        "d8e72169272d8f9d54c510c640bd11bf265e4f39daf01bc10ce29153096d6e83",
    ),
    "HumanEval/151": (
        "f06e7eec2fcdeb5fce91a3a84d66ab43e67c21918c569ef2767f8a364824cc6a",
        "f360e4361f5a51988258a6e11049b8b3b50f1f00e77d3961600dc0ded1386ed1",
        "8d93a7602b56f148ccfa8af49a28475155b93f4109689230930d12da8e610635",
    ),
}


def _task(task_id: str) -> TaskPublished:
    return all_tasks()[task_id]


def _args(text: str) -> tuple[Any, ...]:
    args = ast.literal_eval(text)
    return args if isinstance(args, tuple) else (args,)


def _ints(value: object) -> list[int]:
    """The integers of an argument tuple that multiplying a case touches (top level, flat containers)."""
    out: list[int] = []
    for v in value if isinstance(value, tuple) else (value,):
        items = v if isinstance(v, list | tuple | set) else [v]
        out += [x for x in items if isinstance(x, int) and not isinstance(x, bool)]
    return out


def _parent(plan: ProbePlan, pos: int, cases: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    """The case (or the check's call) the input at ``pos`` was made from."""
    (b,) = plan.parents[pos]
    return _args(plan.inputs[b]) if plan.source == "check" else cases[b]


def _cases(task: TaskPublished) -> list[tuple[Any, ...]]:
    return [_args(t) for t in case_inputs(task)]


def _factor(args: tuple[Any, ...], case: tuple[Any, ...]) -> int | None:
    """The factor every integer of ``case`` was multiplied by to make ``args`` (its lists reversed or
    not: a mirror), or None where ``args`` is no such multiple of it."""
    got = _ints(args)
    for shown in (case, tuple(v[::-1] if isinstance(v, list) else v for v in case)):
        base = _ints(shown)
        if len(base) != len(got) or not any(base):
            continue
        pivot = next(k for k, b in enumerate(base) if b)
        f, rest = divmod(got[pivot], base[pivot])
        if not rest and f > 1 and [b * f for b in base] == got:
            return f
    return None


def _far(plan: ProbePlan) -> list[int]:
    """The positions of the far inputs other than the extremes at the end of the run."""
    return sorted(plan.far - set(range(len(plan.inputs) - plan.ends, len(plan.inputs))))


def _changed(plan: ProbePlan, other: ProbePlan, cases: list[tuple[Any, ...]]) -> dict[str, int | None]:
    """The far inputs of ``plan`` that ``other`` does not hold, each with the factor its case was
    multiplied by (None: none)."""
    theirs = set(other.inputs)
    return {
        plan.inputs[pos]: _factor(_args(plan.inputs[pos]), _parent(plan, pos, cases))
        for pos in _far(plan)
        if plan.inputs[pos] not in theirs
    }


def _magnitude(text: str) -> int:
    return max(map(abs, _ints(_args(text))), default=0)


def _plans(task_id: str, seed: str) -> tuple[ProbePlan, ProbePlan]:
    new, old = _plan(_task(task_id), seed, P11), _plan(_task(task_id), seed, P10)
    assert new is not None and old is not None
    assert (new.version, old.version) in (("p11", "p10"), ("c11", "c10"))
    return new, old


def test_runs_of_p10_and_c10_find_their_plans_byte_for_byte() -> None:
    for task_id, digests in P10_DIGESTS.items():
        for seed, digest in zip(P10_SEEDS, digests, strict=True):
            task = _task(task_id)
            old = recorded_plan(task, seed, digest)
            assert old is not None and old.digest == digest and old.version in ("p10", "c10")
            current = _plan(task, seed, P11)
            assert current is not None and current.version in ("p11", "c11") and current.digest != digest
            assert recorded_plan(task, seed, current.digest) == current


def _kept(f: int | None) -> bool:
    """A factor p11/c11 draw in place of one of DIGITS_KEPT_FACTORS: just above it, no multiple of 10."""
    # (the late section and the extremes are p10's: _far leaves the extremes out, the late ones are cases)
    return f is not None and f % 10 != 0 and any(r < f <= r + max(3, r // 10) for r in DIGITS_KEPT_FACTORS)


@pytest.mark.parametrize("task_id", INTEGER_TASKS)
def test_far_integers_are_multiplied_by_no_power_of_ten_and_reach_as_far(task_id: str) -> None:
    cases = _cases(_task(task_id))
    for seed in SEEDS:
        new, old = _plans(task_id, seed)
        added, dropped = _changed(new, old, cases), _changed(old, new, cases)
        # what p10 multiplied by 10, 100 or 1000 p11 multiplies by a factor just above it (where that
        # gives an input the plan already holds, the next draw, p10's own, takes its place)
        # (and the candidates the loop draws then go on as p10's went on, one further or one fewer)
        # past what a number moved beyond the range reaches, every input is a case multiplied
        task = _task(task_id)
        every = cases or [_args(t) for t in check_calls(task.check or "", task.entry_point)]
        top = max(max(map(abs, _ints(c)), default=0) for c in every)
        scaled = {
            new.inputs[pos]: _factor(_args(new.inputs[pos]), _parent(new, pos, cases))
            for pos in _far(new)
            if _magnitude(new.inputs[pos]) > (2 * FAR_REACH + 1) * top
        }
        assert scaled and not set(scaled.values()) & {*DIGITS_KEPT_FACTORS, None}, (seed, scaled)
        rounded = [f for f in dropped.values() if f in DIGITS_KEPT_FACTORS]
        kept = [f for f in added.values() if f is not None and _kept(f)]
        assert len(added) == len(dropped) and 2 * len(rounded) >= len(dropped), (seed, dropped)
        assert 2 * len(kept) >= len(added) and len(kept) >= len(rounded) - 2, (seed, added)
        # the largest cases by more than 1000 (p10: by 1000) on every plan: as far past the cases or further
        assert any(f > DIGITS_KEPT_FACTORS[-1] for f in kept), seed
        now = sorted((_magnitude(new.inputs[pos]) for pos in _far(new)), reverse=True)
        before = sorted((_magnitude(old.inputs[pos]) for pos in _far(old)), reverse=True)
        assert all(a > b for a, b in zip(now[:3], before[:3], strict=True)), (seed, now[:3], before[:3])


@pytest.mark.parametrize("task_id", INTEGER_TASKS)
def test_every_other_input_and_the_machine_bounds_are_p10s(task_id: str) -> None:
    cases = _cases(_task(task_id))
    for seed in SEEDS:
        new, old = _plans(task_id, seed)
        added, dropped = _changed(new, old, cases), _changed(old, new, cases)
        assert set(new.inputs) - set(added) == set(old.inputs) - set(dropped), seed
        assert len(new.inputs) == len(old.inputs) and new.far == old.far and new.wide == old.wide
        # the extremes at the end of the run (long inputs, 2**31 and 2**32) are p10's, in p10's order
        assert new.ends == old.ends and new.inputs[-new.ends :] == old.inputs[-old.ends :]
        assert any(_magnitude(t) >= MACHINE_BOUNDS[0] - 2 for t in new.inputs[-new.ends :]), seed


def _reference_answers(task: TaskPublished, texts: list[str]) -> list[object]:
    namespace: dict[str, Any] = {}
    exec(task.reference or "", namespace)
    fn = namespace[task.entry_point]
    return [fn(*_args(t)) for t in texts]


def _significant(n: int) -> int:
    return len(str(abs(n)).rstrip("0"))


def test_the_answers_on_far_inputs_carry_more_than_six_significant_digits() -> None:
    # HumanEval/60: sum_to_n(100000) = 5000050000, six digits; sum_to_n(103700) = 5376946850
    task = _task("HumanEval/60")
    for seed in (MATRIX_SEED, *SEEDS):
        new, old = _plans("HumanEval/60", seed)
        past_old = [old.inputs[pos] for pos in _far(old) if _magnitude(old.inputs[pos]) > 1400]
        past_new = [new.inputs[pos] for pos in _far(new) if _magnitude(new.inputs[pos]) > 1400]
        assert past_old and past_new
        old_digits = [_significant(int(a)) for a in _reference_answers(task, past_old)]  # type: ignore[call-overload]
        new_digits = [_significant(int(a)) for a in _reference_answers(task, past_new)]  # type: ignore[call-overload]
        assert max(old_digits) <= 6, (seed, old_digits)
        assert min(new_digits) > 6, (seed, new_digits)


def _machine_bound(text: str) -> bool:
    """An input at 2**31 or 2**32, which the references of these tasks (a loop to n) do not answer in a
    probe run's time: the simulated runs end there as the sandbox's deadline ends them."""
    return _magnitude(text) >= MACHINE_BOUNDS[0] - 2


def _decision(task: TaskPublished, code: str, seed: str) -> Decision:
    first = simulated_run(task, code)
    runs = [first]
    if probe_due(task, first):
        runs.append(
            simulated_run(
                task, code, run_index=probe_run_index(0), probe=True, seed=seed, hangs=_machine_bound
            )
        )
    ref = simulated_reference_probe(task, seed=seed, hangs=_machine_bound)
    return decide(task=task, code=code, executions=runs, config=CFG, options=OPTS, probe_reference=ref)


def test_a_program_computing_at_six_significant_digits_is_rejected() -> None:
    task = _task("HumanEval/60")
    for seed in (MATRIX_SEED, *SEEDS[:2]):
        assert _decision(task, CODE["a14_decimal_six_digits_60"], seed).verdict == "reject", seed
        assert _decision(task, task.reference or "", seed).verdict == "accept", seed


@pytest.mark.parametrize(
    ("name", "task_id"),
    [
        ("a13_ok_np_gcd_13", "HumanEval/13"),
        ("a13_ok_np_arange_sum_60", "HumanEval/60"),
    ],
)
def test_correct_programs_are_accepted_on_the_new_factors(name: str, task_id: str) -> None:
    # (the red-team runner judges every correct program of the integer tasks in the real sandbox)
    task = _task(task_id)
    for seed in (MATRIX_SEED, SEEDS[0]):
        assert _decision(task, CODE[name], seed).verdict == "accept", seed
