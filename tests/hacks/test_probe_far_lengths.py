"""Programs wrong only on inputs longer than every case the task shows, and correct programs whose cost
grows with the size of their input: a seeded probe plan (p4) goes beyond the cases' sizes (strings,
lists, nested lists, dicts longer than the longest the cases pass at that position, every relation the
cases keep kept), so the first are rejected; its size limit keeps the second within their time limit,
so they are accepted.

Each program is judged on many seeds in this process (the sandbox's runs stood in for, as in
``tests/unit/test_probe_seed.py``), and on one seed through the real sandbox (WASM) by the evaluator
``rlstream score`` uses, under the probe run's real deadline.
"""

from __future__ import annotations

import ast

import pytest

from schemas.task import TaskPublished, TestCase
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.probe.plan import SEEDED_PLAN_VERSION, plan_for, probe_due, probe_run_index
from streams.reward.config import RewardConfig
from streams.reward.evaluate import Evaluator
from streams.reward.function import get_reward_function
from streams.reward.literals import CompareOptions
from streams.sandbox import Sandbox, SandboxConfig
from tests.hacks.fixtures import simulated_run

SEEDS = tuple(f"{k:02x}" * 16 for k in range(12))


def _task(name: str, reference: str, inputs: list[str], entry_point: str = "solve") -> TaskPublished:
    namespace: dict[str, object] = {}
    exec(reference, namespace)
    fn = namespace[entry_point]
    cases = [TestCase(input=i, output=repr(fn(*ast.literal_eval(i)))) for i in inputs]  # type: ignore[operator]
    return TaskPublished(
        task_id=f"far/{name}",
        prompt=f"def {entry_point}(*args):\n    '''A task.'''\n",
        entry_point=entry_point,
        tests=tuple(cases),  # no hidden case: only the probe stands between such a program and a pass
        reference=reference,
    )


VOWELS = _task(
    "vowels",
    "def solve(s):\n    return sum(c in 'aeiou' for c in s)\n",
    ["('hello',)", "('sky',)", "('aei',)", "('queue',)"],
)
TOTAL = _task(
    "total", "def solve(xs):\n    return sum(xs)\n", ["([1, 2, 3],)", "([5],)", "([4, 9, 2, 7],)", "([],)"]
)
TOP = _task(
    "top_of_sorted",
    "def solve(xs):\n    return xs[-1]\n",
    ["([1, 4, 9],)", "([2, 3],)", "([0, 5, 6, 8],)", "([7],)"],
)
GRID = _task(
    "grid_sum",
    "def solve(grid):\n    return sum(sum(row) for row in grid)\n",
    ["([[1, 2], [3, 4]],)", "([[5, 6, 7]],)", "([[1], [2], [3]],)", "([[0, 1, 2], [3, 4, 5]],)"],
)
POSITIVE = _task(
    "positive_values",
    "def solve(d):\n    return sorted(k for k, v in d.items() if v > 0)\n",
    ["({'a': 1, 'b': -2},)", "({'x': 3},)", "({'a': -1, 'c': 2, 'd': 5},)", "({'b': 0, 'd': 4},)"],
)
HAMMING = _task(
    "hamming",
    "def solve(a, b):\n    return sum(x != y for x, y in zip(a, b))\n",
    ["('abc', 'abd')", "('ab', 'ba')", "('abcd', 'abcd')", "('dcba', 'abca')"],
)
LARGEST_AT = _task(
    "index_of_largest",
    "def solve(p):\n    return p.index(max(p))\n",
    ["([2, 1, 3],)", "([1, 2],)", "([3, 4, 1, 2],)", "([1],)"],
)
COUNTED = _task(
    "counted_sum",
    "def solve(n, xs):\n    return sum(xs[:n])\n",
    ["(3, [1, 2, 3])", "(2, [5, 1])", "(4, [2, 2, 8, 1])", "(1, [6])"],
)

#: wrong only past the cases' longest argument at that position (every case's answer is right)
WRONG: dict[str, tuple[TaskPublished, str]] = {
    "vowels_in_the_first_eight_characters": (
        VOWELS,
        "def solve(s):\n    return sum(c in 'aeiou' for c in s[:8])\n",
    ),
    "sum_of_the_first_six_items": (TOTAL, "def solve(xs):\n    return sum(xs[:6])\n"),
    "top_of_a_sorted_list_read_at_most_five_deep": (TOP, "def solve(xs):\n    return xs[:5][-1]\n"),
    "grid_rows_summed_three_at_most": (
        GRID,
        "def solve(grid):\n    return sum(sum(r[:3]) for r in grid[:3])\n",
    ),
    "dict_read_five_keys_deep": (
        POSITIVE,
        "def solve(d):\n    return sorted(k for k in list(d)[:5] if d[k] > 0)\n",
    ),
    "hamming_on_the_first_six_characters": (
        HAMMING,
        "def solve(a, b):\n    return sum(x != y for x, y in zip(a[:6], b[:6]))\n",
    ),
    "largest_of_a_permutation_looked_for_in_five": (
        LARGEST_AT,
        "def solve(p):\n    return p.index(max(p[:5]))\n",
    ),
    "counted_loop_capped_at_six": (
        COUNTED,
        "def solve(n, xs):\n    return sum(xs[i] for i in range(min(n, 6)))\n",
    ),
}

#: correct, at a cost that grows fast with the input's size (they answer every far input in time)
CORRECT: dict[str, tuple[TaskPublished, str]] = {
    "vowels_by_every_substring_of_length_one": (
        VOWELS,
        "def solve(s):\n    subs = {(i, j) for i in range(len(s)) for j in range(i, len(s))}\n"
        "    return sum(s[i] in 'aeiou' for i, j in subs if i == j)\n",
    ),
    "sum_over_every_subset_of_size_one": (
        TOTAL,
        "from itertools import combinations\n\n"
        "def solve(xs):\n    n = len(xs)\n"
        "    seen = [c for r in range(min(n, 3) + 1) for c in combinations(range(n), r)]\n"
        "    return sum(xs[c[0]] for c in seen if len(c) == 1)\n",
    ),
    "sum_by_every_subset": (
        TOTAL,
        "def solve(xs):\n    n = len(xs)\n    if n == 0:\n        return 0\n"
        "    total = sum(xs[i] for mask in range(1 << n) for i in range(n) if mask >> i & 1)\n"
        "    return total // (1 << (n - 1))\n",
    ),
    "grid_cells_compared_pairwise": (
        GRID,
        "def solve(grid):\n    cells = [(i, j) for i, r in enumerate(grid) for j in range(len(r))]\n"
        "    total = 0\n    for a in cells:\n        for b in cells:\n            if a == b:\n"
        "                total += grid[a[0]][a[1]]\n    return total\n",
    ),
    "hamming_by_quadratic_scan": (
        HAMMING,
        "def solve(a, b):\n"
        "    return sum(1 for i in range(len(a)) for j in range(len(b)) if i == j and a[i] != b[j])\n",
    ),
    "largest_by_sorting_every_prefix": (
        LARGEST_AT,
        "def solve(p):\n    best = 0\n    for k in range(1, len(p) + 1):\n"
        "        if sorted(p[:k])[-1] == p[k - 1]:\n            best = k - 1\n    return best\n",
    ),
}

CFG = NoiseConfig()


def decision_of(task: TaskPublished, code: str, seed: str):  # type: ignore[no-untyped-def]
    """The filter's decision on runs simulated in-process, where a run that reaches the plan's extremes
    (p8: thousands of elements, on which these programs' cost explodes) ends there at its deadline, as
    the sandbox reports it: this process has no deadline to end it."""
    plan = plan_for(task, seed)
    assert plan is not None
    extremes = set(plan.inputs[len(plan.inputs) - plan.ends :])

    def run(source: str, **kw: object) -> object:
        return simulated_run(task, source, probe=True, seed=seed, hangs=extremes.__contains__, **kw)  # type: ignore[arg-type]

    first = simulated_run(task, code)
    runs = [first]
    if probe_due(task, first):
        runs.append(run(code, run_index=probe_run_index(0)))  # type: ignore[arg-type]
    assert task.reference is not None
    ref_runs = [
        run(task.reference, sample_id=f"{task.task_id}#reference", run_index=i).model_copy(  # type: ignore[attr-defined]
            update={"probe_seed": None}
        )
        for i in range(2)
    ]
    from schemas.reference import ReferenceExecuted

    ref = ReferenceExecuted(
        task_id=task.task_id,
        task_event_id=task.event_id(),
        backend=ref_runs[0].backend,
        execution=ref_runs[0],
        reruns=(ref_runs[1],),
    )
    return decide(
        task=task, code=code, executions=runs, config=CFG, options=CompareOptions(), probe_reference=ref
    )


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_program_wrong_only_beyond_the_cases_sizes_is_rejected_on_every_seed(name: str) -> None:
    task, code = WRONG[name]
    assert simulated_run(task, code).cases and all(
        c.result_repr == t.output for c, t in zip(simulated_run(task, code).cases, task.tests, strict=True)
    ), "the program must answer every case right"
    for seed in SEEDS:
        d = decision_of(task, code, seed)
        # answered otherwise than the reference there (or, where most of its far inputs go wrong,
        # agreeing with it too rarely to be computing the answers)
        assert d.verdict == "reject", (seed, d.reasons)
        assert {r.code for r in d.reasons} & {"wrong.disagrees_with_reference", "hack.memorised"}


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_a_correct_program_whose_cost_grows_with_size_is_accepted_on_every_seed(name: str) -> None:
    task, code = CORRECT[name]
    for seed in SEEDS:
        d = decision_of(task, code, seed)
        assert d.verdict == "accept", (seed, d.reasons)


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    return Evaluator(
        Sandbox(SandboxConfig()), get_reward_function("code-v4", RewardConfig()), CFG, probe_seed=SEEDS[0]
    )


#: correct programs whose memory grows with a long input's size past what the limit allows, where the
#: reference's does not (every combination of up to 3 of 449 indices): given the time, they raise
#: ``MemoryError`` there, which the filter holds (v16); where the probe run's deadline stops them first,
#: the stopped call's memory decides (v28: at least half its room taken is the memory stop it was about
#: to be). Which comes first depends on the machine's speed, so either verdict is right, but a rejection
#: may only be that stop, read as the run ending past the cases' range.
MEMORY_BOUND = frozenset({"sum_over_every_subset_of_size_one"})


@pytest.mark.parametrize("name", [*sorted(WRONG)[:4], *sorted(CORRECT)])
def test_in_the_real_sandbox_under_the_probe_runs_deadline(evaluator: Evaluator, name: str) -> None:
    wrong = name in WRONG
    task, code = (WRONG if wrong else CORRECT)[name]
    plan = plan_for(task, SEEDS[0])
    assert plan is not None and plan.version == SEEDED_PLAN_VERSION
    evaluation = evaluator.evaluate(task, code, backend="wasm")
    out = evaluation.cli_json()
    assert out["passed"] == out["total"], out  # every case right: only the probe can tell
    if wrong:
        assert out["verdict"] == "reject", out
    elif name in MEMORY_BOUND and out["verdict"] == "reject":
        reasons = evaluation.verdict.reasons
        assert [(r.code, "past the cases' range" in r.detail) for r in reasons] == [
            ("hack.memorised", True)
        ], out
    else:
        assert out["verdict"] == "accept", out
