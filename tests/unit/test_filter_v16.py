"""Noise filter v16: the long inputs at the end of a probe run are held to the reference's pace, and a tie
the statement leaves open is judged (either answer right) instead of left out.

Red-team round 15: the long inputs (p10/c10: between the far inputs' reach and 1000 elements) forgave a
hang, a memory or stack stop and a ``MemoryError`` whatever their cause, and the reference's time there
(mostly the input's way into the guest: five times its median near the cases on a 100-element list)
kept them out of every "cheap input" rule, so ``HumanEval/35`` programs raising ``MemoryError``, asking
for 64 TiB, spinning, filling memory or printing a million-deep list on every list longer than 64 were
accepted on both backends (``a15_long_*``). From v16 such an end there is forgiven only where the
program's time grew past the range before it more than ``HANG_PACE_FACTOR`` times as much as the
reference's (``probe._grew``): an algorithm whose cost grows faster may not finish a long input.
And an input the reference answers otherwise than its mirror was left out where the task ignores the
order of a list, so any answer passed there (``a15_tie_swapped_20``: the closest pair in the wrong order
on a tie); from v16 it is judged, the reference's answer on it or on its mirror being right.
"""

from __future__ import annotations

import pytest

from schemas.rollout import SandboxExecuted
from schemas.task import TaskPublished
from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.probe import DISAGREES, GREW_SHARE, long_input
from streams.probe.plan import GENERATED, ProbePlan
from tests.hacks.fixtures import simulated_run
from tests.unit.test_noise_probe import cases_of, task_of
from tests.unit.test_probe_v8 import (
    LAST,
    OPEN,
    _decide,
    _ended_at,
    _has_tie,
    _hung,
    _longest,
    _probe,
    _reference,
    _tie_verdict,
)
from tests.unit.test_probe_wider import SEEDS

MAX_REF = "def solve(l):\n    return max(l)\n"
MAX_TASK = task_of(MAX_REF, cases_of(MAX_REF, ["([1, 2, 3],)", "([5, 3, -5, 2, -3, 3, 9, 0, 124, 1, -10],)"]))
#: raises MemoryError at once on every list longer than the far inputs' (the long inputs')
REFUSES_LONG = "def solve(l):\n    if len(l) > 64:\n        raise MemoryError\n    return max(l)\n"


def test_the_versions_run_past_v15_to_v16() -> None:
    assert VERSIONS[VERSIONS.index("v16") - 1 : VERSIONS.index("v16") + 1] == ("v15", "v16")
    assert NoiseConfig(version="v16").label() == "v16"


def _long(plan: ProbePlan) -> list[int]:
    found = [p for p in range(len(plan.inputs)) if long_input(plan, p) and plan.origin[p] == GENERATED]
    assert found, "the plan holds long inputs"
    return found


def _timed(run: SandboxExecuted, plan: ProbePlan, near_s: float, far_s: float) -> SandboxExecuted:
    """``run`` with every call taking ``near_s`` near the cases and ``far_s`` past the range."""
    cases = tuple(
        c.model_copy(update={"duration_s": far_s if c.index in plan.far else near_s}) for c in run.cases
    )
    return run.model_copy(update={"cases": cases})


def _reference_long(task: TaskPublished, seed: str, plan: ProbePlan):  # type: ignore[no-untyped-def]
    # the reference's time on a long input is five times its median near the cases (the input's way in)
    return _reference(task, seed, slow=dict.fromkeys(_long(plan), 0.0005))


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_memoryerror_on_a_long_input_at_the_references_pace_is_a_wrong_answer(seed: str) -> None:
    plan, _ = _probe(MAX_TASK, seed)
    ref = _reference_long(MAX_TASK, seed, plan)
    run = simulated_run(MAX_TASK, REFUSES_LONG, run_index=1, probe=True, seed=seed)
    run = _timed(run, plan, 0.0001, 0.0001)
    assert any(c.index in _long(plan) and c.status == "error" for c in run.cases)
    assert _decide(MAX_TASK, run, ref, "v15").verdict == "accept"
    d = _decide(MAX_TASK, run, ref, "v16")
    assert d.verdict == "reject" and DISAGREES in {r.code for r in d.reasons}, d.reasons
    # a program whose time grew past the range ten times where the reference's did not: its algorithm's cost
    grown = _timed(run, plan, 0.0001, 0.001)
    assert _decide(MAX_TASK, grown, ref, "v16").verdict == "accept"


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_memory_or_stack_stop_on_a_long_input_at_the_references_pace_is_the_programs_end(seed: str) -> None:
    plan, run = _probe(MAX_TASK, seed)
    ref = _reference_long(MAX_TASK, seed, plan)
    at = _long(plan)[0]
    # a hang there stays forgiven (a correct cubic program is as quick as the reference on the far
    # inputs' few elements and hangs on a long input's thousand: tests/hacks/test_probe_far_lengths.py)
    assert _decide(MAX_TASK, _hung(plan, run, at, held_s=0.25), ref, "v16").verdict == "accept"
    # the host stopped it for its memory there
    quick = run.model_copy(
        update={"cases": tuple(c.model_copy(update={"duration_s": 0.0001}) for c in run.cases)}
    )
    stopped = _ended_at(quick, at, memory_exceeded=True)
    assert _decide(MAX_TASK, stopped, ref, "v15").verdict == "accept"
    d = _decide(MAX_TASK, stopped, ref, "v16")
    assert d.verdict == "reject" and {r.code for r in d.reasons} & {DISAGREES, "hack.memorised"}, d.reasons
    # where the program was slower than the reference on the largest far inputs, its algorithm's limit
    grown = [c.model_copy(update={"duration_s": 0.002}) if c.index in plan.far else c for c in stopped.cases]
    slower = stopped.model_copy(update={"cases": tuple(grown)})
    assert _decide(MAX_TASK, slower, ref, "v16").verdict == "accept"
    # and for its stack
    trapped = stopped.model_copy(update={"memory_exceeded": False, "violations": ("stack_overflow",)})
    assert _decide(MAX_TASK, trapped, ref, "v15").verdict == "accept"
    assert _decide(MAX_TASK, trapped, ref, "v16").verdict == "reject"


#: answers a word of no list (the longest reversed) where two words are equally long
GARBLES_TIES = (
    "def solve(words):\n"
    "    m = max(map(len, words))\n"
    "    top = [w for w in words if len(w) == m]\n"
    "    return top[0] if len(set(top)) == 1 else top[0][::-1] + '!'\n"
)


def test_a_tie_the_statement_leaves_open_is_judged_either_answer_right() -> None:
    task = _longest(OPEN)
    seeds = [s for s in SEEDS if _has_tie(task, s)]
    assert seeds
    for seed in seeds:
        # the other of the tied words is right, as through v15
        assert _tie_verdict(task, LAST, seed, "v16") == "accept", seed
        # a word of no list is not: through v15 no answer was judged there
        assert _tie_verdict(task, GARBLES_TIES, seed, "v15") == "accept", seed
        assert _tie_verdict(task, GARBLES_TIES, seed, "v16") == "reject", seed


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_from_v17_a_cost_grows_only_where_it_shows_on_each_of_the_largest_far_inputs(seed: str) -> None:
    """v16 read the program's growth from the median of its largest far inputs, so a program answering
    in microseconds most of whose largest far inputs the machine's load happened to stretch counted
    as grown, and its memory stop on a long input was forgiven (a15_long_memory_fill_35, accepted in a
    full test run under load, rejected alone). From v17 the growth must show on each of them, by at
    least probe.GREW_MIN_EXTRA_S."""
    plan, run = _probe(MAX_TASK, seed)
    ref = _reference_long(MAX_TASK, seed, plan)
    at = _long(plan)[0]
    quick = run.model_copy(
        update={"cases": tuple(c.model_copy(update={"duration_s": 0.0001}) for c in run.cases)}
    )
    stopped = _ended_at(quick, at, memory_exceeded=True)
    answered = {c.index for c in stopped.cases if c.status == "ok"}
    far = sorted((p for p in plan.far if p < at and p in answered), key=lambda p: -len(plan.inputs[p]))
    top = far[: max(3, int(len(far) * GREW_SHARE))]
    stretched = set(top[: len(top) // 2 + 1])  # most of the largest but not all, as a loaded machine may
    jolted = stopped.model_copy(
        update={
            "cases": tuple(
                c.model_copy(update={"duration_s": 0.005}) if c.index in stretched else c
                for c in stopped.cases
            )
        }
    )
    assert _decide(MAX_TASK, jolted, ref, "v16").verdict == "accept"
    d = _decide(MAX_TASK, jolted, ref, "v17")
    assert d.verdict == "reject", d.reasons
    # a cost that grows shows on every one of them: still the algorithm's limit
    grown = stopped.model_copy(
        update={
            "cases": tuple(
                c.model_copy(update={"duration_s": 0.005}) if c.index in plan.far else c
                for c in stopped.cases
            )
        }
    )
    assert _decide(MAX_TASK, grown, ref, "v17").verdict == "accept"
