"""Seeded probe plans (p4, c3) go beyond the cases' sizes as well as their numbers: strings, lists,
nested lists, dicts and sets longer than the longest the cases pass at that position, built from what
the cases hold there and keeping every relation they keep; runs of the older seeded versions (p3, c2)
still find their plan, byte for byte."""

from __future__ import annotations

import ast

from schemas.task import TaskPublished
from streams.probe.plan import (
    _FAR_MAX_CHARS,
    FAR_REACH,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
    case_inputs,
    plan_for,
    recorded_plan,
)
from tests.hacks.acceptance import humaneval
from tests.unit.test_noise_probe import cases_of, task_of

SEEDS = tuple(f"{k:02x}" * 16 for k in range(8))


def far_args(task: TaskPublished, seed: str) -> list[tuple[object, ...]]:
    plan = plan_for(task, seed)
    assert plan is not None and plan.version == SEEDED_PLAN_VERSION
    # (the extremes at the end of a p8 plan are tested in test_probe_extremes; the late section before
    # them asks inputs of the earlier sections again: p21's held pair is an input near the cases)
    last = len(plan.inputs) - plan.ends - plan.late
    return [ast.literal_eval(plan.inputs[i]) for i in sorted(plan.far) if i < last]


def case_args(task: TaskPublished) -> list[tuple[object, ...]]:
    return [ast.literal_eval(t) for t in case_inputs(task)]


def test_older_seeded_plans_are_derived_again_byte_for_byte_from_the_digest_a_run_records() -> None:
    # digests of p3/c2 plans drawn with this seed before p4/c3 existed
    seed = "5e" * 16
    tasks = {t.task_id: t for _, t in humaneval()}
    recorded = {
        "HumanEval/0": ("p3", "b99e80678486f8b1d5d0dfaadc45f16ac444b7aec5a6cf4cca4fdcf0d18b7492"),
        "HumanEval/12": ("p3", "ab73e5b45150f76fe1f13cdf5576d9f9767f7972b2231204d5ac681aeaf829f6"),
        "HumanEval/53": ("c2", "8c5e73f53d5424afe1c338dbfbaf2c834b36167934d6917db44e0067ab92cf75"),
    }
    for task_id, (version, digest) in recorded.items():
        old = recorded_plan(tasks[task_id], seed, digest)
        assert old is not None and (old.version, old.digest) == (version, digest)
        current = plan_for(tasks[task_id], seed)
        assert current is not None and current.digest != digest
        assert current.version in (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION) == SEEDED_VERSIONS[-1]
        assert recorded_plan(tasks[task_id], seed, current.digest) == current
    assert recorded_plan(tasks["HumanEval/0"], seed, "0" * 64) is None
    unseeded = plan_for(tasks["HumanEval/0"])
    assert unseeded is not None and recorded_plan(tasks["HumanEval/0"], None, unseeded.digest) == unseeded


def test_a_string_argument_grows_past_the_longest_case_from_the_cases_characters() -> None:
    ref = "def solve(s):\n    return s[::-1]\n"
    task = task_of(ref, cases_of(ref, ["('abc',)", "('xy',)", "('ba',)"]))
    chars = set("abcxy")
    for seed in SEEDS:
        longer = [a[0] for a in far_args(task, seed) if isinstance(a[0], str) and len(a[0]) > 3]
        assert len(longer) >= 4
        assert max(map(len, longer)) >= 8  # a few times the longest case
        assert all(len(s) <= FAR_REACH * 3 + 8 and set(s) <= chars for s in longer)


def test_longer_lists_keep_what_every_case_keeps() -> None:
    ref = "def solve(xs, ys, n):\n    return sum(xs) + sum(ys) + n\n"
    # xs sorted and distinct, ys as long as xs, n their length
    task = task_of(
        ref,
        cases_of(
            ref, ["([1, 4, 9], [2, 2, 0], 3)", "([2, 3], [5, 1], 2)", "([0, 5, 6, 8], [1, 1, 1, 7], 4)"]
        ),
    )
    for seed in SEEDS:
        longer = [a for a in far_args(task, seed) if len(a[0]) > 4]  # type: ignore[arg-type]
        assert longer
        for xs, ys, n in longer:
            assert isinstance(xs, list) and isinstance(ys, list)
            assert xs == sorted(set(xs)) and len(ys) == len(xs) == n


def test_a_permutation_of_1_to_n_stays_one_and_rows_stay_of_one_length() -> None:
    ref = "def solve(p, grid):\n    return p.index(max(p)) + len(grid)\n"
    task = task_of(
        ref,
        cases_of(
            ref, ["([2, 1, 3], [[1, 2], [3, 4]])", "([1, 2], [[5, 6, 7]])", "([3, 4, 1, 2], [[0], [1]])"]
        ),
    )
    seen_rows = False
    for seed in SEEDS:
        for p, grid in far_args(task, seed):
            assert isinstance(p, list) and isinstance(grid, list)
            assert sorted(p) == list(range(1, len(p) + 1))
            # (p8 also draws lists shorter than the cases', an empty grid included: no rows to differ)
            assert len({len(r) for r in grid}) == (1 if grid else 0)
            seen_rows |= len(grid) > 2 or (bool(grid) and len(grid[0]) > 3)
    assert seen_rows


def test_longer_dicts_take_the_cases_keys_and_values_and_then_keys_like_theirs() -> None:
    ref = "def solve(d):\n    return sorted(k for k, v in d.items() if v > 0)\n"
    task = task_of(ref, cases_of(ref, ["({'a': 1, 'b': -2},)", "({'x': 3},)", "({'a': -1, 'c': 2},)"]))
    values = {1, -2, 3, -1, 2}
    longest = 0
    for seed in SEEDS:
        for (d,) in far_args(task, seed):
            assert isinstance(d, dict) and all(isinstance(k, str) and 1 <= len(k) <= 2 for k in d)
            if len(d) > 2:
                assert set(d.values()) <= values
            longest = max(longest, len(d))
    assert longest > 4


def test_the_size_limit_holds_on_every_humaneval_plan() -> None:
    for _, task in humaneval():
        plan = plan_for(task, SEEDS[0])
        if plan is None or not plan.far:
            continue
        cases = case_inputs(task) or [plan.inputs[p] for p in plan.head_positions]
        cap = min(_FAR_MAX_CHARS, FAR_REACH * max(map(len, cases)) + 64)
        near_range = [i for i in plan.far if i < len(plan.inputs) - plan.ends]
        assert all(len(plan.inputs[i]) <= max(cap, 2 * max(map(len, cases)) + 64) for i in near_range), (
            task.task_id
        )
