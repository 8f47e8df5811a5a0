"""A reference too slow for the probe's inputs past the cases' range answers them memoised: which
references may be memoised, and how the memoised runs' answers are judged (runs simulated in-process)."""

from __future__ import annotations

import ast
import sys
from typing import TypeVar

from schemas.reference import ReferenceExecuted
from schemas.rollout import CaseResult, SandboxExecutedV3
from schemas.task import TaskPublished, TestCase
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.noise.probe import memoised_answers
from streams.probe.memo import memoised_reference
from streams.probe.plan import plan_for, probe_run_index
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import simulated_run

OPTS = CompareOptions()
SEED = "ab" * 16
Run = TypeVar("Run", bound=SandboxExecutedV3)

FIB = "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n"  # exponential
#: the plain reference's answers where it is fast enough (as FIB on every input, negatives included)
FAST_FIB = (
    "def fib(n):\n    if n < 2:\n        return n\n    a, b = 0, 1\n    for _ in range(n):\n"
    "        a, b = b, a + b\n    return a\n"
)
#: right below n=71 (and, as the reference, on negatives), wrong past it: floats run out of digits
BINET = (
    "def fib(n):\n    if n < 2:\n        return n\n    phi = (1 + 5 ** 0.5) / 2\n"
    "    return int(round(phi ** n / 5 ** 0.5))\n"
)
#: what the plain reference answers in the probe's time (fib(30) takes seconds by plain recursion)
TOO_SLOW = 25


def _huge(text: str) -> bool:
    """An input at a machine width (p8's extremes, past 2**31): no run answers fib there in its time."""
    return bool(abs(ast.literal_eval(text)[0]) >= 2**31 - 1)


def _namespace(code: str) -> dict[str, object]:
    ns: dict[str, object] = {}
    exec(code, ns)
    return ns


def _fib_task() -> TaskPublished:
    ns = _namespace(FAST_FIB)
    cases = [TestCase(input=f"({n},)", output=repr(ns["fib"](n))) for n in (10, 1, 8, 11, 12)]  # type: ignore[operator]
    return TaskPublished(
        task_id="t/fib",
        prompt="def fib(n):\n    '''The n-th Fibonacci number.'''\n",
        entry_point="fib",
        tests=cases[:2],
        hidden_tests=cases[2:],
        reference=FIB,
    )


def _slow(run: Run, plan_inputs: tuple[str, ...]) -> Run:
    """``run`` as a sandbox reports it when an input past ``TOO_SLOW`` takes the run's whole deadline."""
    stuck = next((i for i, text in enumerate(plan_inputs) if ast.literal_eval(text)[0] > TOO_SLOW), None)
    if stuck is None:
        return run
    cases = tuple(
        c
        if c.index < stuck
        else CaseResult(index=c.index, status="timeout" if c.index == stuck else "missing")
        for c in run.cases
    )
    return run.model_copy(update={"cases": cases, "timed_out": True})


def _reference(task: TaskPublished, *, memo_code: str | None) -> ReferenceExecuted:
    plan = plan_for(task, SEED)
    assert plan is not None
    plain = [
        _slow(
            simulated_run(
                task, FAST_FIB, sample_id="t/fib#reference", run_index=i, probe=True, seed=SEED, hangs=_huge
            ),
            plan.inputs,
        ).model_copy(update={"probe_seed": None})
        for i in range(2)
    ]
    # the plan's far inputs reach n=12000: the sandbox's guest recurses that deep, this process only
    # with a higher limit
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(100_000)
    try:
        memo = (
            [
                simulated_run(
                    task,
                    memo_code,
                    sample_id="t/fib#reference",
                    run_index=i,
                    probe=True,
                    seed=SEED,
                    hangs=_huge,
                ).model_copy(update={"probe_seed": None})
                for i in range(2)
            ]
            if memo_code is not None
            else []
        )
    finally:
        sys.setrecursionlimit(limit)
    return ReferenceExecuted(
        task_id=task.task_id,
        task_event_id=task.event_id(),
        backend="wasm",
        execution=plain[0],
        reruns=(plain[1],),
        memoised=tuple(memo),
    )


def _verdict(task: TaskPublished, code: str, reference: ReferenceExecuted, *, slow: bool = False):  # type: ignore[no-untyped-def]
    plan = plan_for(task, SEED)
    assert plan is not None
    first = simulated_run(task, code)
    # a slow program's answers are a fast one's, up to the input it hangs on
    probe = simulated_run(
        task, FAST_FIB if slow else code, run_index=probe_run_index(0), probe=True, seed=SEED, hangs=_huge
    )
    if slow:
        probe = _slow(probe, plan.inputs)
    return decide(
        task=task,
        code=code,
        executions=[first, probe],
        config=NoiseConfig(),
        options=OPTS,
        probe_reference=reference,
    )


def test_an_exponential_recursion_is_memoised_and_answers_far_inputs_at_once() -> None:
    code = memoised_reference(FIB, "fib")
    assert code is not None
    fib = _namespace(code)["fib"]
    assert fib(200) == _namespace(FAST_FIB)["fib"](200)  # type: ignore[operator]


def test_only_functions_whose_answer_can_depend_on_their_arguments_alone_are_memoised() -> None:
    assert memoised_reference(FAST_FIB, "fib") is None  # no recursion: nothing to gain
    assert (
        memoised_reference(
            "calls = 0\n\ndef fib(n):\n    global calls\n    calls += 1\n"
            "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n",
            "fib",
        )
        is None
    )
    decorated = "import functools\n\n@functools.wraps(print)\n" + FIB
    assert memoised_reference(decorated, "fib") is None
    mutable_default = "def f(n, seen=[]):\n    seen.append(n)\n    return len(seen) if n < 1 else f(n - 1)\n"
    assert memoised_reference(mutable_default, "f") is None
    assert memoised_reference(FIB + "\nfib = print\n", "fib") is None  # rebound: not the def's function
    # a recursive helper the entry point reaches is memoised with it
    helper = (
        "def go(n):\n    return n if n < 2 else go(n - 1) + go(n - 2)\n\n"
        "def solve(n):\n    return go(n) % 7\n"
    )
    code = memoised_reference(helper, "solve")
    assert code is not None and "go = _rlstream_memoised(go)" in code
    assert _namespace(code)["solve"](300) == _namespace(FAST_FIB)["fib"](300) % 7  # type: ignore[operator]


def test_memoised_calls_are_keyed_by_type_and_mutable_answers_are_never_served_twice() -> None:
    code = memoised_reference(
        "def f(x, depth=0):\n"
        "    if depth < 1:\n"
        "        return f(x, depth + 1)\n"
        "    return [type(x).__name__, repr(x)]\n",
        "f",
    )
    assert code is not None
    f = _namespace(code)["f"]
    assert f(1) == ["int", "1"] and f(True) == ["bool", "True"] and f(1.0) == ["float", "1.0"]  # type: ignore[operator]
    assert f(0.0) == ["float", "0.0"] and f(-0.0) == ["float", "-0.0"]  # type: ignore[operator]
    got = f((1, 2))  # type: ignore[operator]
    got.append("changed by the caller")
    assert f((1, 2)) == ["tuple", "(1, 2)"]  # type: ignore[operator]


def test_a_program_wrong_only_where_the_plain_reference_is_too_slow_is_caught_by_the_memoised_one() -> None:
    task = _fib_task()
    code = memoised_reference(FIB, "fib")
    assert code is not None
    plan = plan_for(task, SEED)
    assert plan is not None and any(ast.literal_eval(plan.inputs[p])[0] > 70 for p in plan.far)
    without = _reference(task, memo_code=None)
    assert "wrong.disagrees_with_reference" not in {r.code for r in _verdict(task, BINET, without).reasons}
    with_memo = _reference(task, memo_code=code)
    assert memoised_answers(plan, with_memo, OPTS)
    decision = _verdict(task, BINET, with_memo)
    assert decision.verdict == "reject" and "wrong.disagrees_with_reference" in {
        r.code for r in decision.reasons
    }
    # a correct program as slow as the reference hangs where the memoised one answers: not held against it
    assert _verdict(task, FIB, with_memo, slow=True).verdict == "accept"
    assert _verdict(task, FAST_FIB, with_memo).verdict == "accept"


def test_memoised_runs_count_only_where_they_answer_as_every_plain_run_did() -> None:
    task = _fib_task()
    stateful = "_calls = []\n\n" + FIB.replace(
        "    if n < 2", "    _calls.append(n)\n    if len(_calls) % 5 == 0:\n        return -1\n    if n < 2"
    )
    code = memoised_reference(stateful, "fib")
    assert code is not None
    plan = plan_for(task, SEED)
    assert plan is not None
    assert memoised_answers(plan, _reference(task, memo_code=code), OPTS) == {}
