"""Seeded probe plans p21/c21: inputs asked again after every number of other calls from 2 to 12, and
an input holding a list asked twice in a row where the probe run hands the second call the very
argument objects of the first (red-team rows REPEAT_GAPS and SAME_OBJECT). Through p20/c20 an input
came back right after itself, after one other call or after a cycle of dozens, and every input asked
twice in a row lay in the run's first half, where the stub builds new argument objects for each call.
p21/c21 keep every input p20/c20 draw, and runs of p20/c20 find their plans byte for byte."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from streams.probe.plan import (
    MAX_REPEAT_GAP,
    MIN_REPEAT_GAP,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
    ProbePlan,
)
from streams.sandbox.protocol import caller_reuse_from
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import against_previous, assert_pinned_plans_found
from tests.unit.plan_pins import task as _task
from tests.unit.test_probe_v19 import _judged, _same

MATRIX_SEED = "5eed" * 8
P20_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
SEEDS = (MATRIX_SEED, *(f"{k:08x}" * 4 for k in range(5)))
#: the generations of p20/c20 and p21/c21
P20 = 18
P21 = 19
CODE = {p.name: p.code for p in PROGRAMS}

#: digests of p20/c20 plans drawn before p21/c21 existed (seeds P20_SEEDS)
P20_DIGESTS = {
    "HumanEval/70": (
        "1b3bd34d9eb6d115e55fa56c1dbe46b0b3864917d2ab2aecc3236160c8dab041",
        "48cdf3e0aea8faa3c13974c083a668069809bb8e4f8cbde5c90a22f90c314536",
        "deac7e062ec0c4064f64ec876133a6479f27de312f6760d24134ce2052386d39",
    ),
    "HumanEval/88": (
        "cc531632776e0e3c4873ddc2ad70e913cd5e4a787a634d626e9da2046523321f",
        "919e4acd6e02afef7ab3f63e3f04d044d467c8bb0aafc4eb8ccab756806c3a0f",
        "1684ac857873fde7754acac6aeb86cf583e8713500880ffb7ea46bcdbff9c54d",
    ),
    "HumanEval/35": (
        "f098e1b8ec74880019e571e1138c17d1ddef18d64a6989ffe0ad5c87ae388d94",
        "b89ad77f7dd750ba7e20bec8479defe91da5a15480e726b86e84f1b2dc5b01dc",
        "e9d3bd5bcd6f299279c22ccd5454d98035ffd830ac65440f0e03691259d21481",
    ),
    "HumanEval/4": (
        "b052f127cd6427c922412dba3cf75301a7f003ade594ff5dab26846e28a5e167",
        "5f3500dea5c72bdf2f5550cdc3003c891bb4d29ce48e01bf59057d29af2ec04f",
        "2ad40eeecef092f896b606b9ae8a70b0dc8c21ba486d5e78bc93ede63c9d90be",
    ),
    "HumanEval/149": (
        "9285aa77d632a94cdd411aca8865ae596ff9aeefa9d5de2f8abdc270770671e2",
        "4546a17d39267710d3b17c042fa0a35b138db22da23531e9133969f86cbd956b",
        "c35a8cfe7887a034bf0306a9db2f3609b674a26a7aed0eef4336aeab9ce08b08",
    ),
    "HumanEval/61": (
        "a2509fcbddec838fd2ef9cf673b81c9ab45db11d8081175c83e20c75f88961b9",
        "14a407051bd50de1319fb8d14c7c4993286f17c3f5a0ed3938e3736f74bed972",
        "fb9017ddc073cae68f0776c1e097eab770a1908a6f878b649993a9bdf49eee1e",
    ),
    "HumanEval/129": (
        "1fc1fe11f9659bdebb663d73b95662a820509abcfea9d2779f982a7b199969f4",
        "bd4556e36e04dca360e961f91b3e06297719075fa7bf32571490ec5bd1101471",
        "0e6deab6aabf18505d28d42cda74694cf0017ffccea5122cabd27c0e371a8f68",
    ),
    "HumanEval/13": (
        "e5978730b60cb47cece6b0b62e321722f1cb490e0e82d3101292317e75ec3a81",
        "a582bc786b3261d22b61dc6b1124971601e2bb01c727ac71259ffeacd3b1e175",
        "6889a8f411b473b31b2c52d5bf7145ddf0c30a7fa78ef1f6b6f671a18daf8757",
    ),
}
#: the programs p20/c20 accepted on every seed tried, and the task of each
WRONG = {"a21_gap_three_70": "HumanEval/70", "a21_same_object_70": "HumanEval/70"}
#: tasks whose cases hold a list argument (the stub refills lists, dicts and sets in place)
LIST_TASKS = ("HumanEval/70", "HumanEval/88", "HumanEval/35", "HumanEval/4", "HumanEval/149")


def _args(text: str) -> tuple[Any, ...]:
    value = ast.literal_eval(text)
    return value if isinstance(value, tuple) else (value,)


def _distances(plan: ProbePlan) -> set[int]:
    """How many other calls lie between an input's asking and its next, over the inputs before those
    past the cases' range."""
    last: dict[str, int] = {}
    out: set[int] = set()
    for pos, text in enumerate(plan.inputs[: min(plan.far)]):
        if text in last:
            out.add(pos - last[text] - 1)
        last[text] = pos
    return out


def _same_object(plan: ProbePlan) -> list[int]:
    """The positions whose call the stub hands the previous call's argument objects (the run's second
    half) with an input holding a list, dict or set equal to the previous call's."""
    start = max(1, caller_reuse_from(len(plan.inputs)))
    return [
        pos
        for pos in range(start, len(plan.inputs))
        if plan.inputs[pos] == plan.inputs[pos - 1]
        and any(type(a) in (list, dict, set) for a in _args(plan.inputs[pos]))
    ]


def _caller_judged(t: Any, code: str, plan: ProbePlan) -> list[int]:
    """The positions where ``code``, called as the probe run's stub calls it (from the run's second half
    on, each call's list, dict and set arguments are the previous call's objects refilled in place),
    answers otherwise than the reference called alike."""

    def run(source: str) -> list[tuple[str, object]]:
        namespace: dict[str, Any] = {}
        exec(compile(source, "<solution>", "exec"), namespace)
        fn = namespace[t.entry_point]
        reuse, kept = caller_reuse_from(len(plan.inputs)), None
        out: list[tuple[str, object]] = []
        for index, text in enumerate(plan.inputs):
            args: list[Any] = list(_args(text))
            if index >= reuse and kept is not None:
                for i, (k, a) in enumerate(zip(kept, args, strict=False)):
                    if type(k) is type(a) and type(a) in (list, dict, set):
                        k.clear()
                        k.update(a) if isinstance(k, dict | set) else k.extend(a)
                        args[i] = k
            kept = args
            try:
                out.append(("ok", fn(*args)))
            except Exception as exc:
                out.append(("error", type(exc).__name__))
        return out

    mine, theirs = run(code), run(t.reference)
    return [
        pos
        for pos, (m, r) in enumerate(zip(mine, theirs, strict=True))
        if r[0] == "ok" and (m[0] != "ok" or not _same(r[1], m[1]))
    ]


def test_runs_of_p20_and_c20_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P20] == ("p20", "c20") and SEEDED_VERSIONS[P21] == ("p21", "c21")
    assert (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION) not in SEEDED_VERSIONS[: P21 + 1]
    assert_pinned_plans_found(P20_DIGESTS, P20_SEEDS, P20)


@pytest.mark.parametrize("task_id", sorted(P20_DIGESTS))
def test_every_p20_input_stays_and_the_cases_keep_their_places(task_id: str) -> None:
    for seed in SEEDS[:3]:
        new, old = against_previous(_task(task_id), seed, P21)
        # no input is added: the same texts, asked again
        assert set(new.inputs) == set(old.inputs), seed
        assert (new.lead, new.seeds, new.ends) == (old.lead, old.seeds, old.ends), seed
        assert new.inputs[: new.lead + new.seeds] == old.inputs[: old.lead + old.seeds], seed
        assert new.inputs[len(new.inputs) - new.ends :] == old.inputs[len(old.inputs) - old.ends :], seed
        # p18's twice in a row and p20's one call between stay where they were drawn
        assert {0, 1} <= _distances(new), seed


@pytest.mark.parametrize("task_id", sorted(P20_DIGESTS))
def test_inputs_come_back_after_every_distance_from_2_to_12(task_id: str) -> None:
    wanted = set(range(MIN_REPEAT_GAP, MAX_REPEAT_GAP + 1))
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P21)
        assert wanted <= _distances(new), (seed, sorted(wanted - _distances(new)))
        if task_id in ("HumanEval/70", "HumanEval/88"):
            assert not wanted & _distances(old), seed


def test_which_input_comes_back_after_how_many_calls_is_the_seeds() -> None:
    def by_distance(plan: ProbePlan) -> dict[int, str]:
        last: dict[str, int] = {}
        out: dict[int, str] = {}
        for pos, text in enumerate(plan.inputs[: min(plan.far)]):
            if text in last and MIN_REPEAT_GAP <= pos - last[text] - 1 <= MAX_REPEAT_GAP:
                out[pos - last[text] - 1] = text
            last[text] = pos
        return out

    t = _task("HumanEval/70")
    drawn = [by_distance(against_previous(t, seed, P21)[0]) for seed in SEEDS]
    assert len({tuple(sorted(d.items())) for d in drawn}) == len(SEEDS)


@pytest.mark.parametrize("task_id", LIST_TASKS)
def test_a_list_input_is_asked_twice_on_the_same_objects_in_the_second_half(task_id: str) -> None:
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P21)
        same = _same_object(new)
        # a case and an input near the cases, each twice in a row at the end of the late section
        held = {new.inputs[pos] for pos in same}
        assert len(held) >= 2 and any(new.origin[pos] >= 0 for pos in same), seed
        # the late section only lengthens (it does not lengthen the run's deadline)
        assert len(new.inputs) - new.late >= len(old.inputs) - old.late, seed
        if task_id in ("HumanEval/70", "HumanEval/88"):
            assert not _same_object(old), seed


def test_no_plan_asks_a_scalar_input_twice_for_its_object() -> None:
    for seed in SEEDS[:2]:
        new, _ = against_previous(_task("HumanEval/13"), seed, P21)
        assert not _same_object(new), seed


@pytest.mark.parametrize("name", WRONG)
def test_a_program_wrong_only_at_a_gap_or_on_the_same_object_is_shown_wrong_on_every_seed(name: str) -> None:
    t = _task(WRONG[name])
    for seed in SEEDS:
        new, old = against_previous(t, seed, P21)
        assert not _caller_judged(t, CODE[name], old), seed
        assert _caller_judged(t, CODE[name], new), seed


#: the corpus' correct programs on HumanEval/70 and /88 (the tasks of the target programs)
CORRECT = tuple(
    p.name
    for p in PROGRAMS
    if p.task in ("HumanEval/70", "HumanEval/88")
    and p.kind == "correct"
    and p.mode == "score"
    and "wasm" in p.backends
)


@pytest.mark.parametrize("name", CORRECT)
def test_correct_programs_on_those_tasks_are_never_shown_wrong(name: str) -> None:
    program = next(p for p in PROGRAMS if p.name == name)
    try:
        compile(program.code, "<solution>", "exec")
    except SyntaxError:
        pytest.skip("newer syntax than the host's")
    t = _task(program.task)
    for seed in SEEDS[:3]:
        new, old = against_previous(t, seed, P21)
        # called as the stub calls it (the second half on reused objects) and with new objects alike
        judges = (_judged, _caller_judged)
        before = {old.inputs[pos] for judge in judges for pos in judge(t, program.code, old)}
        wrong = [*_judged(t, program.code, new), *_caller_judged(t, program.code, new)]
        assert all(new.inputs[pos] in before for pos in wrong), seed
