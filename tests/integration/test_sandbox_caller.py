"""A probe run's calls are made as a caller makes them (``Job.caller``), on both backends: argument
objects are reused from call to call (refilled with each call's input). A pure function answers as with
fresh objects; a cache keyed by an argument object's identity shows; an answer object shared by every
caller (a memo cache) is left alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from streams.sandbox import Limits, Sandbox, SandboxConfig
from streams.sandbox.result import Job

BACKENDS = ["wasm", "container"]
LIMITS = Limits(timeout_s=30.0, memory_mb=512)
INPUTS = ("([3, 1, 2],)", "([5, 9, 4],)", "([3, 1, 2],)", "([],)")

PURE = "def f(xs):\n    return sorted(xs)\n"
IN_PLACE = "def f(xs):\n    xs.sort()\n    return xs\n"
IN_PLACE_MAX = "def f(xs):\n    xs.sort()\n    return xs[-1] if xs else None\n"
IDENTITY_CACHE = """
_memo = {}


def f(xs):
    hit = _memo.get(id(xs))
    if hit is not None and hit[0] is xs:
        return hit[1]
    _memo[id(xs)] = (xs, max(xs, default=None))
    return _memo[id(xs)][1]
"""
#: right only where its argument object was seen before (a probe run's refilled list), wrong on every
#: new list from the second on (a caller in real use hands a new one each time)
FRESH_WRONG = """
_seen = []


def f(xs):
    if any(xs is s for s in _seen):
        return max(xs, default=None)
    _seen.append(xs)
    return None if len(_seen) >= 2 else max(xs, default=None)
"""
SHARED_RESULT = """
_made = {}


def f(xs):
    key = tuple(xs)
    if key not in _made:
        _made[key] = {"sorted": sorted(xs)}
    return _made[key]
"""


@pytest.fixture(scope="module")
def sandbox(ready_sandbox: Callable[[SandboxConfig], Sandbox]) -> Sandbox:
    return ready_sandbox(SandboxConfig())


def _answers(
    sandbox: Sandbox, code: str, backend: str, *, caller: bool = False, keep_args: bool = False
) -> list[str | None]:
    job = Job(
        mode="cases",
        code=code,
        entry_point="f",
        inputs=INPUTS,
        limits=LIMITS,
        caller=caller,
        keep_args=keep_args,
    )
    r = sandbox.execute(job, backend)  # type: ignore[arg-type]
    assert r.infra_error is None, r.infra_error
    return [c.result_repr if c.status == "ok" else (c.error or "").split(":")[0] for c in r.cases]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pure_function_answers_a_caller_as_with_fresh_arguments(sandbox: Sandbox, backend: str) -> None:
    plain = _answers(sandbox, PURE, backend)
    assert plain == ["[1, 2, 3]", "[4, 5, 9]", "[1, 2, 3]", "[]"]
    assert _answers(sandbox, PURE, backend, caller=True) == plain
    # changing an argument in place is no failure unless the task forbids it
    assert _answers(sandbox, IN_PLACE, backend, caller=True) == plain
    assert _answers(sandbox, IN_PLACE_MAX, backend, caller=True) == ["3", "9", "3", "None"]
    assert _answers(sandbox, IN_PLACE, backend, caller=True, keep_args=True) == [
        "CallerStateError",
        "CallerStateError",
        "CallerStateError",
        "[]",
    ]
    assert _answers(sandbox, PURE, backend, caller=True, keep_args=True) == plain


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_identity_cache_shows_and_a_shared_answer_does_not(sandbox: Sandbox, backend: str) -> None:
    # fresh objects on every call hide the identity cache
    assert _answers(sandbox, IDENTITY_CACHE, backend) == ["3", "9", "3", "None"]
    assert _answers(sandbox, SHARED_RESULT, backend)[:3] == [
        "{'sorted': [1, 2, 3]}",
        "{'sorted': [4, 5, 9]}",
        "{'sorted': [1, 2, 3]}",
    ]
    # the first half of the calls get new objects, as a caller in real use hands them; from the second
    # half on the previous call's list object, refilled with the next input, gets that call's answer
    assert _answers(sandbox, IDENTITY_CACHE, backend, caller=True) == ["3", "9", "9", "9"]
    # one answer object handed to every caller with the same question (a memo cache of lists, common in
    # correct code) answers as with fresh objects: the caller never changes the answer it got
    assert _answers(sandbox, SHARED_RESULT, backend, caller=True) == _answers(sandbox, SHARED_RESULT, backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_wrong_on_new_argument_objects_shows(sandbox: Sandbox, backend: str) -> None:
    # a caller in real use hands a new list each time: wrong from the second call on
    assert _answers(sandbox, FRESH_WRONG, backend) == ["3", "None", "None", "None"]
    # a probe run hands new objects in its first half too, so the program's second call shows it; were
    # every call after the first handed the first call's list refilled, it would answer rightly throughout
    # (red-team a18b_caller_fresh_second_longest)
    assert _answers(sandbox, FRESH_WRONG, backend, caller=True) == ["3", "None", "3", "None"]


#: right only where equal values are one object: a caller computing 65300 and 65000 + 300 apart holds two
IDENTITY_EQUAL = """
def f(xs, x):
    return [i for i, v in enumerate(xs) if v is x]
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_equal_values_of_one_call_are_objects_of_their_own_in_a_probe_run(
    sandbox: Sandbox, backend: str
) -> None:
    inputs = (
        "([65300, 7, 65300], 65300)",
        "(['ab', 'c', 'ab'], 'ab')",
        "([2.5, 1.0], 2.5)",
        "([(100000, 'xy')], (100000, 'xy'))",
    )
    job = Job(mode="cases", code=IDENTITY_EQUAL, entry_point="f", inputs=inputs, limits=LIMITS)
    # one call's text is compiled once, and its equal constants are one object: a plain run's answers
    plain = sandbox.execute(job, backend)  # type: ignore[arg-type]
    assert [c.result_repr for c in plain.cases] == ["[0, 2]", "[0, 2]", "[0]", "[0]"]
    # a probe run hands each number past the shared small ones, and each text, as an object of its own
    probe = sandbox.execute(replace(job, caller=True), backend)  # type: ignore[arg-type]
    assert probe.infra_error is None, probe.infra_error
    assert [c.result_repr for c in probe.cases] == ["[]", "[]", "[]", "[]"]
    # small ints are one object wherever they are computed (-5..256; 3.15, WASM's, shares up to 1024):
    # left as they are
    small = replace(job, caller=True, inputs=("([5, 7, 5], 5)",))
    assert [c.result_repr for c in sandbox.execute(small, backend).cases] == ["[0, 2]"]  # type: ignore[arg-type]
