"""Noise filter v17: an input past the cases' range that only the memoised reference answered is judged
as the inputs the plain reference answers cheaply are.

Red-team round 15 (the KNOWN rows ``MEMO_COSTLY`` and ``MEMO_HANG`` of ``tests/hacks/test_redteam.py``
until v17): ``HumanEval/55``'s reference is the naive Fibonacci recursion, which answers nothing past n
of about 30 in a probe run's time; the probe then asks a memoised run of it (``streams/probe/memo.py``),
which answers n = 33, 43, 84 at once. But the filter's cheapness test (``probe.cheap_far``) read only the
plain reference's runs, so a ``MemoryError`` or the int/str conversion limit a program raised there was
forgiven as on a costly input, and a hang there was never judged at all. From v17 such an input counts
as cheap unless the program's time grew past the range before it (``probe._grew``), and a hang
there is held where the memoised run answered the input at once and the program had kept the memoised
pace on the inputs where the plain recursion was slow (``probe.Hang.held_memoised``); the naive
recursion itself, correct and as slow as the plain reference, hangs exactly there and stays accepted.

Every run is simulated here (``tests/hacks/fixtures.simulated_run``) with the host's durations written
in, as the sandbox measures them; an input a run does not answer in time is named by its ``hangs`` rule
and never called (an iterative Fibonacci on the plan's machine bound, n = 2**31, would not end).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TypeVar

import pytest

from schemas.reference import ReferenceExecuted
from schemas.rollout import SandboxExecuted, SandboxExecutedV3
from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.filter import Decision, decide
from streams.noise.probe import DISAGREES, memo_hang_timing
from streams.probe.memo import memoised_reference
from streams.probe.plan import GENERATED, ProbePlan, plan_for, probe_due, probe_run_index
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import simulated_reference_probe, simulated_run
from tests.hacks.redteam.tasks import all_tasks
from tests.unit.test_probe_wider import SEEDS

OPTS = CompareOptions()
FIB = all_tasks()["HumanEval/55"]
#: the naive recursion (the task's reference) answers nothing past this n in a probe run's time
PLAIN_BOUND = 30
#: the same answers as the naive recursion, at once (the plain reference's values up to its bound)
ITERATIVE = "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n"
#: a correct program at the reference's pace: the naive recursion itself
NAIVE = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
#: raises MemoryError at once past n = 30 (red-team a15_fib_memoryerror_55)
REFUSES = "def fib(n):\n    if n > 30:\n        raise MemoryError\n" + ITERATIVE.split(":\n", 1)[1]
#: trips the int/str conversion limit on a number of its own past n = 30 (a15_fib_conversion_55)
CONVERTS = "def fib(n):\n    if n > 30:\n        int('9' * 5000)\n" + ITERATIVE.split(":\n", 1)[1]
#: spins forever past n = 30 (a15_fib_hang_55): its runs end there at their deadline
SPINS = "def fib(n):\n    while n > 30:\n        pass\n" + ITERATIVE.split(":\n", 1)[1]
#: the run's time a spinning program had left on the input it hung on
HELD_S = 0.9


Run = TypeVar("Run", bound=SandboxExecutedV3)


def _n(text: str) -> int:
    return int(ast.literal_eval(text)[0])


def _past(bound: int) -> Callable[[str], bool]:
    return lambda text: _n(text) > bound


#: the inputs an iterative program does not answer in a run's time: the plan's machine bounds (2**31 on)
MACHINE_BOUND = _past(10**6)


def _naive_calls(n: int) -> int:
    a, b = 1, 1  # calls for n = 0 and n = 1
    for _ in range(max(0, n - 1)):
        a, b = b, a + b + 1
    return b if n >= 1 else a


# the host's time for one call (its per-call cost, 50 us, and the work): the naive recursion's calls,
# the memoised run's one frame pair per step, an iterative program's additions
def plain_s(n: int) -> float:
    return 5e-5 + 1e-7 * _naive_calls(min(n, 40))


def memo_s(n: int) -> float:
    return 5e-5 + 1e-6 * min(n, 10**4)


def quick_s(n: int) -> float:
    return 5e-5 + 1e-8 * min(n, 10**4)


def _timed(run: Run, plan: ProbePlan, cost: Callable[[int], float], held_s: float = 0.0) -> Run:
    """``run`` with each answered call taking ``cost(n)`` on the host's clock and a timed-out one the
    ``held_s`` its run had left."""
    cases = tuple(
        c.model_copy(update={"duration_s": cost(_n(plan.inputs[c.index]))})
        if c.status in ("ok", "error")
        else c.model_copy(update={"duration_s": held_s})
        if c.status == "timeout"
        else c
        for c in run.cases
    )
    return run.model_copy(update={"cases": cases})


def _reference(seed: str, plain_bound: int = PLAIN_BOUND) -> tuple[ProbePlan, ReferenceExecuted]:
    """The reference's runs of the plan as the sandbox makes them: two plain runs that end at their
    deadline on the first n past ``plain_bound`` (the naive recursion's answers below it, at its cost)
    and two runs of the memoised reference, which answer up to a few hundred and raise RecursionError
    past the stack's depth."""
    plan = plan_for(FIB, seed)
    assert plan is not None and FIB.reference is not None
    plain = simulated_reference_probe(FIB, ITERATIVE, seed=seed, hangs=_past(plain_bound))
    assert plain is not None
    code = memoised_reference(FIB.reference, FIB.entry_point)
    assert code is not None
    memo = tuple(
        _timed(
            simulated_run(FIB, code, sample_id="reference", run_index=i, probe=True, seed=seed),
            plan,
            memo_s,
        ).model_copy(update={"probe_seed": None})
        for i in range(2)
    )
    return plan, plain.model_copy(
        update={
            "execution": _timed(plain.execution, plan, plain_s, held_s=0.6),
            "reruns": tuple(_timed(r, plan, plain_s, held_s=0.6) for r in plain.reruns),
            "memoised": memo,
        }
    )


def _probe(code: str, plan: ProbePlan, seed: str, cost: Callable[[int], float], **kw) -> SandboxExecuted:  # type: ignore[no-untyped-def]
    hangs = kw.pop("hangs", MACHINE_BOUND)
    run = simulated_run(FIB, code, run_index=probe_run_index(0), probe=True, seed=seed, hangs=hangs)
    return _timed(run, plan, cost, **kw)


def _decide(code: str, probe: SandboxExecuted, reference: ReferenceExecuted, version: str) -> Decision:
    first = simulated_run(FIB, code)
    assert probe_due(FIB, first)
    return decide(
        task=FIB,
        code=code,
        executions=[first, probe],
        config=NoiseConfig(version=version),  # type: ignore[arg-type]
        options=OPTS,
        probe_reference=reference,
    )


def _memo_only(plan: ProbePlan, reference: ReferenceExecuted) -> list[int]:
    """The generated positions past the range only the memoised runs answered (an input the plain run
    answered elsewhere is not among them: p22 asks earlier inputs again after the far ones, where the
    plain run may have stopped)."""
    plain = {c.index for c in reference.execution.cases if c.status == "ok"}
    plain_texts = {plan.inputs[pos] for pos in plain}
    memo = [{c.index for c in m.cases if c.status == "ok"} for m in reference.memoised]
    return [
        pos
        for pos in sorted(plan.far)
        if plan.origin[pos] == GENERATED
        and plan.inputs[pos] not in plain_texts
        and all(pos in m for m in memo)
    ]


def test_the_versions_run_past_v16_to_v17() -> None:
    assert VERSIONS[VERSIONS.index("v17") - 1 : VERSIONS.index("v17") + 1] == ("v16", "v17")
    assert NoiseConfig(version="v17").label() == "v17"
    assert NoiseConfig(version="v16").label() == "v16"


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_an_error_where_only_the_memoised_reference_answers_is_a_wrong_answer(seed: str) -> None:
    plan, ref = _reference(seed)
    memo_only = _memo_only(plan, ref)
    assert memo_only, "the plan holds inputs past the naive recursion's reach that the memoised run answers"
    for code in (REFUSES, CONVERTS):
        run = _probe(code, plan, seed, quick_s)
        assert all(c.status == "error" for c in run.cases if c.index in memo_only)
        # through v16 the plain reference's runs alone said which inputs are costly: these were
        assert _decide(code, run, ref, "v16").verdict == "accept"
        d = _decide(code, run, ref, "v17")
        assert d.verdict == "reject" and DISAGREES in {r.code for r in d.reasons}, d.reasons
        # a program whose time grew past the range far more than the plain reference's did: its
        # algorithm's cost, which a larger input may exhaust
        grown = _probe(code, plan, seed, lambda n: 10 * plain_s(n) if n > 14 else quick_s(n))
        assert _decide(code, grown, ref, "v17").verdict == "accept"


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_hang_where_the_memoised_reference_answers_at_once_is_held_at_the_memoised_pace(seed: str) -> None:
    plan, ref = _reference(seed)
    spin = _probe(SPINS, plan, seed, quick_s, hangs=_past(PLAIN_BOUND), held_s=HELD_S)
    at = next(c.index for c in spin.cases if c.status == "timeout")
    assert at in _memo_only(plan, ref)
    assert _decide(SPINS, spin, ref, "v16").verdict == "accept"
    d = _decide(SPINS, spin, ref, "v17")
    assert d.verdict == "reject" and DISAGREES in {r.code for r in d.reasons}, d.reasons
    assert any(f"hung on probe input {at}" in r.detail and "memoised" in r.detail for r in d.reasons)
    # the naive recursion, correct, hangs on the same input after answering the inputs below it at the
    # plain reference's cost: nothing tells it from a slow correct program there
    naive = _probe(NAIVE, plan, seed, plain_s, hangs=_past(PLAIN_BOUND), held_s=HELD_S)
    timing = memo_hang_timing(plan, naive, ref, OPTS)
    assert timing is not None and timing.position == at and not timing.held_memoised()
    assert _decide(NAIVE, naive, ref, "v17").verdict == "accept"
    # a correct program that answers every input up to the machine bounds is accepted as before
    quick = _probe(ITERATIVE, plan, seed, quick_s)
    assert _decide(ITERATIVE, quick, ref, "v17").verdict == "accept"
    # a run starved there (its earlier inputs took its time) says nothing
    starved = _probe(SPINS, plan, seed, quick_s, hangs=_past(PLAIN_BOUND), held_s=0.2)
    assert _decide(SPINS, starved, ref, "v17").verdict == "accept"


#: correct: the naive recursion below a table of the first ten Fibonacci numbers, exponential still but
#: 76 times quicker than the reference (its calls for n are the reference's for n - 9)
TABLED = (
    "_T = [0, 1, 1, 2, 3, 5, 8, 13, 21, 34]\n\n\n"
    "def fib(n):\n    return _T[n] if n < 10 else fib(n - 1) + fib(n - 2)\n"
)


def tabled_s(n: int) -> float:
    return 5e-5 + 1e-7 * _naive_calls(max(0, min(n, 60) - 9))


def test_a_hang_after_a_costly_answer_stays_forgiven() -> None:
    # the tabled recursion keeps the memoised pace on the first inputs where the plain one is slow
    # (n = 22: 0.14 ms), answers n = 33 in 15 ms, and runs out of its second at n = 43: its pace is read
    # on the input before the hang the plain reference found costliest (n = 34, which it did not answer)
    seed = SEEDS[0]
    plan, ref = _reference(seed)
    run = _probe(TABLED, plan, seed, tabled_s, hangs=lambda text: tabled_s(_n(text)) > 1.0, held_s=HELD_S)
    at = next(c.index for c in run.cases if c.status == "timeout")
    assert at in _memo_only(plan, ref) and _n(plan.inputs[at]) > 40
    timing = memo_hang_timing(plan, run, ref, OPTS)
    assert timing is not None and timing.memo_ratio > 100 and not timing.held_memoised()
    assert _decide(TABLED, run, ref, "v17").verdict == "accept"


def test_a_hang_where_the_plain_reference_answered_slowly_is_read_against_the_memoised_run() -> None:
    # a faster machine (the jail): the naive recursion answers n = 33 and 34 in a second or so each
    seed = SEEDS[0]
    plan, ref = _reference(seed, plain_bound=34)
    spin = _probe(SPINS, plan, seed, quick_s, hangs=_past(PLAIN_BOUND), held_s=HELD_S)
    at = next(c.index for c in spin.cases if c.status == "timeout")
    assert any(c.index == at and c.status == "ok" for c in ref.execution.cases)
    assert _decide(SPINS, spin, ref, "v16").verdict == "accept"
    assert _decide(SPINS, spin, ref, "v17").verdict == "reject"


def test_a_hang_with_no_input_where_the_references_part_before_it_stays_forgiven() -> None:
    # the plain recursion too slow from the first input past the range on: a program hanging there has
    # answered nothing that tells its pace from the naive recursion's
    seed = SEEDS[0]
    plan, ref = _reference(seed, plain_bound=14)
    first_far = min(pos for pos in plan.far if plan.origin[pos] == GENERATED)
    spin = _probe(SPINS, plan, seed, quick_s, hangs=_past(14), held_s=HELD_S)
    assert next(c.index for c in spin.cases if c.status == "timeout") == first_far
    timing = memo_hang_timing(plan, spin, ref, OPTS)
    assert timing is not None and timing.memo_ratio == 0.0 and not timing.held_memoised()
    assert _decide(SPINS, spin, ref, "v17").verdict == "accept"
