"""What the seeded probe-plan generation tests (test_probe_v9 .. v16) share: the red-team library's tasks,
a plan input's arguments, and the promise each new generation keeps, that runs of the one before it find
their plans byte for byte (the digests each test pins were taken from the code before its generation
existed)."""

from __future__ import annotations

import ast
import decimal
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from schemas.task import TaskPublished
from streams.probe.plan import (
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
    ProbePlan,
    _plan,
    plan_for,
    recorded_plan,
)
from tests.hacks.redteam.tasks import all_tasks


def task(task_id: str) -> TaskPublished:
    return all_tasks()[task_id]


def args(text: str) -> tuple[Any, ...]:
    """A plan input's arguments (an input of one argument is written without the tuple)."""
    value = ast.literal_eval(text)
    return value if isinstance(value, tuple) else (value,)


def assert_pinned_plans_found(
    pinned: Mapping[str, Sequence[str]], seeds: Sequence[str], generation: int
) -> None:
    """Each pinned digest (per task, one per seed) names a plan of ``generation`` (an index into
    SEEDED_VERSIONS) that a run recorded before the next generation existed: it is still found by its
    digest, it is the plan that generation draws today, and the plans of the next generation and of the
    newest are other ones, each found by its own digest."""
    versions = SEEDED_VERSIONS[generation]
    for task_id, digests in pinned.items():
        t = task(task_id)
        for seed, digest in zip(seeds, digests, strict=True):
            old = recorded_plan(t, seed, digest)
            assert old is not None and old.digest == digest and old.version in versions, (task_id, seed)
            assert old == _plan(t, seed, generation), (task_id, seed)
            newest = plan_for(t, seed)
            assert newest is not None and newest.version in (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION)
            for later in (_plan(t, seed, generation + 1), newest):
                assert later is not None and later.digest != digest, (task_id, seed)
                assert recorded_plan(t, seed, later.digest) == later


def against_previous(t: TaskPublished, seed: str, generation: int) -> tuple[ProbePlan, ProbePlan]:
    """The plans ``generation`` and the one before it draw for ``t`` under ``seed`` (both of one kind:
    case plans or check plans)."""
    new, old = _plan(t, seed, generation), _plan(t, seed, generation - 1)
    assert new is not None and old is not None
    now, before = SEEDED_VERSIONS[generation], SEEDED_VERSIONS[generation - 1]
    assert (new.version, old.version) in ((now[0], before[0]), (now[1], before[1]))
    return new, old


def added_positions(new: ProbePlan, old: ProbePlan) -> list[int]:
    """The positions of ``new``'s inputs that ``old`` does not hold."""
    kept = set(old.inputs)
    return [pos for pos, text in enumerate(new.inputs) if text not in kept]


def answers(code: str, entry_point: str, texts: list[str]) -> list[tuple[str, object]]:
    """``code``'s answer to each input, run here: ('ok', value) or ('error', the exception's type).
    What the code sets for the whole process (the recursion limit, the integer-string conversion limit,
    the decimal context), as a sandbox would, ends with it: a corpus program raising the recursion limit
    or lifting the conversion limit changed what later tests in this process measured."""
    recursion, digits = sys.getrecursionlimit(), sys.get_int_max_str_digits()
    try:
        with decimal.localcontext():
            namespace: dict[str, object] = {}
            exec(compile(code, "<solution>", "exec"), namespace)
            fn = namespace[entry_point]
            out: list[tuple[str, object]] = []
            for text in texts:
                try:
                    out.append(("ok", fn(*args(text))))  # type: ignore[operator]
                except Exception as exc:
                    out.append(("error", type(exc).__name__))
            return out
    finally:
        sys.setrecursionlimit(recursion)
        sys.set_int_max_str_digits(digits)
