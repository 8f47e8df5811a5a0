"""Seeded probe plans p20/c20: lists of floats alone and lists of words grown past the cases' own
elements, and inputs near the cases asked again after exactly one other call, one of them five times
(red-team rows ELEMENT_POOL, REPEAT_DISTANCE and REPEAT_COUNT). Through p19/c19 such a list grew with
the cases' elements alone, repeating none more often than a case does (HumanEval/28: at most 7
elements, /149: 20, no word longer than the cases' longest), and an input was asked again right after
itself or after a cycle of others, never with one call between, and at most three times in a run.
p20/c20 keep every input p19/c19 draw, and runs of p19/c19 find their plans byte for byte."""

from __future__ import annotations

import pytest

from streams.probe.plan import (
    HOT_ASKS,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
    SPACED_INPUTS,
    ProbePlan,
    _element_kind,
    _variety,
)
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import added_positions, against_previous, assert_pinned_plans_found
from tests.unit.plan_pins import args as _args
from tests.unit.plan_pins import task as _task
from tests.unit.test_probe_v19 import _judged

MATRIX_SEED = "5eed" * 8
P19_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the seeds the red-team runner's --probe-seeds 5 uses, and the matrix's
SEEDS = (MATRIX_SEED, *(f"{k:08x}" * 4 for k in range(5)))
#: the generations of p19/c19 and p20/c20
P19 = 17
P20 = 18
CODE = {p.name: p.code for p in PROGRAMS}

#: digests of p19/c19 plans drawn before p20/c20 existed (seeds P19_SEEDS)
P19_DIGESTS = {
    "HumanEval/4": (
        "d763205ba2bb2ed978102d875279e532bfb795ac06843ea46d2c08a76fa3d596",
        "b31b60bde67771156cf583ad8304b55946df2c1213369a1900194f032d57a59b",
        "e94a7fcf2fadc87dfb4a180987d473179cab48082a1583b5aa3afac92aad0009",
    ),
    "HumanEval/20": (
        "40fa63fb1df09e111de47127325e348a70c49acfac6b92aadf9ac343b2dd1e57",
        "bc0f1f29cd275641b734bc51518bdc321abf4f6a786e628d8d4048032d11cc45",
        "33a0476f5f203aa3b9ce18b1661d1ffb3931982577b99305b628347f197b8846",
    ),
    "HumanEval/21": (
        "981d18d8ea20236299c885f7606597bfa34d053a785d07a6453884b20f4971b1",
        "41ceedfd1511529e0ecd14ff258403e51611bd74b97405036ca46db3cbc44a65",
        "ccd43df7aeba7186a4aa684141c04d3b908a830640677a8141bc78f83b7e82e4",
    ),
    "HumanEval/28": (
        "0799d7e0f5a2ce739b6c4732c3f74fca59018b6e4ac17c264c5306c23a86a5db",
        "c20b073978910281c36033f36adf91b5e913dcddea03da383613e56b6b4b2279",
        "638d62d027ebfb891d384f4031cfc38d2d0301a54a4f294d0d1b631b814b59d9",
    ),
    "HumanEval/29": (
        "d6552d4bd2f07b03dd7366d92fd5ac6f6060a41daaa666628fe8eb62e68130de",
        "1997f320ca3ccca5e62d1180d387fd90510848a52796e95f719b506bfb55d196",
        "fac6fab22907a41035a926be95977b3abe01444695aa65a16b1b218301dc2c96",
    ),
    "HumanEval/149": (
        "4f24a6d5697b540080b1d8b3be0c73842f77d5f399b1bacd3e39fa1c078e7baa",
        "62649d61c5936b1db1a44676e44f6709ab31573478024cee6a3ddb001bebc4d4",
        "c099de6058ff0bc377839f5ce8ddfb77407cc70873105a9a4acc29aaa5768f27",
    ),
    "HumanEval/70": (
        "b81d4082a86a98f7b382a59b7d851d0ad0d765fe320b8e010898f48bc2496c4f",
        "0ee84b3418e6a7c8902ca69cfffd76f38c5f95d53c32319fd25ecf4d45127205",
        "e4364907b656290b4f8c250f20d73363a3e0b1c067b1f56c934381f6912d937f",
    ),
    "HumanEval/88": (
        "ffefbd830bb20373cd5eed10faa7ceac2a82b06103f046ef7f5e6f32b7bc973e",
        "bd946a3b2bdf23d1685d1d0e3346b895d89fe07919eecb9948582f35b04b10c1",
        "a6a8eab4c5dd782f88ca031b045656c676af01ec93390ea4af0e96e797b9a160",
    ),
    "HumanEval/61": (
        "bc3d491f722a75be5d11463408c327bc940e97b4f090ee2f6d6a5ea9477d5591",
        "3505bf90735c876982666da7be9ca76842228b6ebf6519efc70ce6d502c1dfc1",
        "933bbc4676c65a9eec93d7a5441565c5ee3488d313d9f977f306f0b50e96e70e",
    ),
}
#: the tasks whose lists p20/c20 grow with new elements: floats alone, words
GROWN_TASKS = ("HumanEval/4", "HumanEval/20", "HumanEval/21", "HumanEval/28", "HumanEval/29", "HumanEval/149")
#: the programs p19/c19 accepted on every seed tried, and the task of each
WRONG = {
    "a20_vocab_bucket_149": "HumanEval/149",
    "a20_fourth_ask_70": "HumanEval/70",
    "a20_aba_order_88": "HumanEval/88",
}


def _loads(code: str) -> bool:
    """Whether the host's Python parses ``code`` (a program in newer syntax runs in the sandbox only)."""
    try:
        compile(code, "<solution>", "exec")
    except SyntaxError:
        return False
    return True


#: the corpus' correct programs on the tasks whose lists grow and those of the targets
CORRECT = tuple(
    p.name
    for p in PROGRAMS
    if p.task in {*GROWN_TASKS, *WRONG.values()}
    and p.kind == "correct"
    and p.mode == "score"
    and "wasm" in p.backends
    and _loads(p.code)
)


def test_runs_of_p19_and_c19_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P19] == ("p19", "c19") and SEEDED_VERSIONS[P20] == ("p20", "c20")
    assert (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION) not in SEEDED_VERSIONS[: P20 + 1]
    assert_pinned_plans_found(P19_DIGESTS, P19_SEEDS, P19)


def _cases(plan: ProbePlan) -> list[tuple[object, ...]]:
    return [_args(text) for text in plan.inputs[plan.lead : plan.lead + plan.seeds]]


def _grown(text: str, cases: list[tuple[object, ...]]) -> bool:
    """Whether an input's first argument, a list of floats or of words, is longer than the cases'
    longest and holds an element no case holds."""
    value = _args(text)[0]
    shown = {repr(e) for c in cases if isinstance(c[0], list) for e in c[0]}
    longest = max(len(c[0]) for c in cases if isinstance(c[0], list))
    return (
        isinstance(value, list)
        and _element_kind([value]) is not None
        and len(value) > longest
        and any(repr(e) not in shown for e in value)
    )


def _aba(plan: ProbePlan) -> set[tuple[int, str, str]]:
    """The positions whose input (A) is the one asked two calls before and not the one just before (B),
    each with A and B, among the inputs before those past the cases' range."""
    inputs = plan.inputs[: min(plan.far)]
    return {
        (k, inputs[k], inputs[k - 1])
        for k in range(2, len(inputs))
        if inputs[k] == inputs[k - 2] != inputs[k - 1]
    }


def _hot(plan: ProbePlan) -> list[str]:
    """The inputs asked :data:`HOT_ASKS` times, each after exactly one other call, in a row, among the
    inputs before those past the cases' range."""
    inputs, span = plan.inputs[: min(plan.far)], 2 * (HOT_ASKS - 1)
    return [
        inputs[k]
        for k in range(len(inputs) - span)
        if all(inputs[k + j] == inputs[k] for j in range(0, span + 1, 2))
        and all(inputs[k + j] != inputs[k] for j in range(1, span, 2))
    ]


@pytest.mark.parametrize("task_id", sorted(P19_DIGESTS))
def test_every_p19_input_stays_and_only_grown_lists_are_added(task_id: str) -> None:
    for seed in SEEDS[:3]:
        new, old = against_previous(_task(task_id), seed, P20)
        assert set(old.inputs) <= set(new.inputs), seed
        cases = _cases(old)
        for pos in added_positions(new, old):
            # past the cases' range, not widening the domain: a value and an error are judged there
            assert pos in new.far and pos not in new.wide, (seed, new.inputs[pos][:60])
            assert _grown(new.inputs[pos], cases), (seed, new.inputs[pos][:60])


@pytest.mark.parametrize("task_id", sorted(P19_DIGESTS))
def test_near_inputs_are_asked_again_after_one_other_call_one_of_them_five_times(task_id: str) -> None:
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P20)
        # no input is added by it: the same texts, asked again
        assert set(new.inputs[: min(new.far)]) <= set(old.inputs), seed
        # one input asked five times, each after one other call (H, B1, H, B2, ..., H); under p19 only
        # where p5's section cycles over two inputs (HumanEval/4, /28)
        assert _hot(new), seed
        if task_id in ("HumanEval/70", "HumanEval/88"):
            assert not _hot(old) and not _aba(old), seed
        # and SPACED_INPUTS others asked again after one other call (A, B, A), besides what p5's section
        # asking the cheaper near inputs again, round and round, lays so where it cycles over few
        added = {(a, b) for _, a, b in _aba(new)} - {(a, b) for _, a, b in _aba(old)}
        assert len({a for a, _ in added}) >= 1 + SPACED_INPUTS, seed
        # an input asked in between (B) is not asked twice in a row there
        for k, a, b in _aba(new):
            if (a, b) in added:
                assert new.inputs[k - 3] != b and new.inputs[k + 1] != b, seed


@pytest.mark.parametrize("task_id", GROWN_TASKS)
def test_lists_of_floats_or_words_grow_past_the_cases_elements(task_id: str) -> None:
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P20)
        cases = _cases(old)
        columns = [c[0] for c in cases if isinstance(c[0], list)]
        distinct = len({repr(e) for v in columns for e in v})  # type: ignore[attr-defined]
        kind = _element_kind(columns)
        lists = [v for pos in added_positions(new, old) if isinstance(v := _args(new.inputs[pos])[0], list)]
        assert lists and all(_element_kind([v]) == kind for v in lists), seed
        # longer than the cases' distinct elements (some a thousand and more)
        assert max(len(v) for v in lists) > max(distinct, 999), seed
        if all(len(set(map(repr, v))) == len(v) for v in columns):
            assert all(len(set(map(repr, v))) == len(v) for v in lists), seed
        if all(v == sorted(v) for v in columns):  # type: ignore[type-var]
            assert all(v == sorted(v) for v in lists), seed
        if kind == "word":
            # words past the cases' longest, of the cases' characters
            chars = {ch for v in columns for w in v for ch in w}  # type: ignore[attr-defined]
            longest = max(len(w) for v in columns for w in v)  # type: ignore[attr-defined]
            assert any(len(w) > longest for v in lists for w in v), seed
            assert all(set(w) <= chars for v in lists for w in v), seed


def test_only_floats_alone_or_words_grow_so() -> None:
    assert _element_kind([[1.0, 2.5], [3.0]]) == "float"
    assert _element_kind([["abc", "john doe"], []]) == "word"
    assert _element_kind([["x", ""], ["y"]]) == "word"
    # lists mixing ints and floats grow by p19's rule, ints by the sized lists' own
    assert _element_kind([[1, 2.5]]) is None
    assert _element_kind([[1, 2]]) is None
    # tokens of a closed set (HumanEval/160's operators) are no words of an alphabet
    assert _element_kind([["+", "*", "-"]]) is None
    assert _element_kind([["1/5", "5/1"]]) is None
    assert _element_kind([[]]) is None


@pytest.mark.parametrize("name", WRONG)
def test_a_program_wrong_only_on_longer_lists_or_repeated_calls_is_shown_wrong_on_every_seed(
    name: str,
) -> None:
    task = _task(WRONG[name])
    for seed in SEEDS:
        new, old = against_previous(task, seed, P20)
        assert not _judged(task, CODE[name], old), seed
        assert _judged(task, CODE[name], new), seed


@pytest.mark.parametrize("name", CORRECT)
def test_correct_programs_on_those_tasks_are_never_shown_wrong(name: str) -> None:
    task = _task(next(p.task for p in PROGRAMS if p.name == name))
    for seed in SEEDS:
        new, old = against_previous(task, seed, P20)
        judged = _judged(task, CODE[name], old)
        if any(pos in old.head_positions for pos in judged):
            # wrong on the task's own cases: the judge here cannot compare its answers (a numpy array)
            pytest.skip("answers this judge cannot compare")
        wrong = _judged(task, CODE[name], new)
        # only where p19 showed it wrong already (the judge here is cruder than the filter)
        before = {old.inputs[pos] for pos in judged}
        assert all(new.inputs[pos] in before for pos in wrong), (seed, [new.inputs[p][:60] for p in wrong])


#: seeds 0..23 as the red-team runner's --probe-seeds writes them: drawn at random among the cheaper half,
#: the input asked five times on HumanEval/70 was one a sort answers alike ([31022], [5, 111111],
#: [5, 5, 5], [5, 5, 2, 5]) on five of them (5, 6, 16, 17, 19)
REPEAT_SEEDS = tuple(f"{k:08x}" * 4 for k in range(24))


def test_variety_counts_distinct_parts() -> None:
    assert _variety("([111110],)") == 1
    assert _variety("([7, 111111],)") == 2
    assert _variety("([5, 5, 2, 5],)") == 2
    assert _variety("([1, 2, 3, 7, 4, 5],)") == 6
    # a string is a part, and so is each of its characters; numbers by kind and value
    assert _variety("('abca', 2)") == 5
    assert _variety("({'a': [1, 1.0]},)") == 4


@pytest.mark.parametrize("task_id", ["HumanEval/70", "HumanEval/88"])
def test_the_input_asked_five_times_is_one_reorderings_answer_apart(task_id: str) -> None:
    for seed in REPEAT_SEEDS:
        new, _ = against_previous(_task(task_id), seed, P20)
        (hot,) = _hot(new)
        # three distinct elements at least: ascending, descending and strange order all differ
        assert len(set(_args(hot)[0])) >= 3, (seed, hot)


@pytest.mark.parametrize("name", ["a20_fourth_ask_70", "a20_aba_order_88"])
def test_a_program_wrong_only_on_repeated_calls_is_shown_wrong_on_more_seeds(name: str) -> None:
    task = _task(WRONG[name])
    for seed in REPEAT_SEEDS:
        assert _judged(task, CODE[name], against_previous(task, seed, P20)[0]), seed
