"""Seeded probe plans p18/c18: a few cheap inputs near the cases asked twice in a row, a string's groups
kept balanced where every case's groups balance, and runs of blanks longer than the cases' (red-team rows
REPEATED_CALL and BLANK_RUN; HumanEval/6's correct programs). Through p17/c17 no plan asked one input
twice in a row (the generated inputs are distinct, the inputs asked again come round a cycle after
others), so a program answering otherwise when a call repeats the previous call's arguments was never
seen; HumanEval/6's strings were kept balanced as a whole only, so a bracket moved across a space made
groups whose depth the task leaves undefined, where the reference's answer rejected correct programs; and
no run of blanks longer than the cases' longest was drawn. p18/c18 keep every other input p17/c17 draw,
and runs of p17/c17 find their plans byte for byte."""

from __future__ import annotations

import pytest

from schemas.task import TaskPublished
from streams.probe.plan import (
    GENERATED,
    SEEDED_CHECK_PLAN_VERSION,
    SEEDED_PLAN_VERSION,
    SEEDED_VERSIONS,
    TWICE_INPUTS,
    ProbePlan,
    _balanced,
    _balanced_groups,
    _blank_runs,
    _plan,
)
from streams.reward.literals import CompareOptions, values_match
from tests.hacks.redteam.corpus import PROGRAMS
from tests.unit.plan_pins import against_previous, assert_pinned_plans_found
from tests.unit.plan_pins import args as _args
from tests.unit.plan_pins import task as _task

MATRIX_SEED = "5eed" * 8
P17_SEEDS = ("00" * 16, MATRIX_SEED, "a7" * 16)
#: the seeds the red-team runner's --probe-seeds 5 uses, and the matrix's
SEEDS = (MATRIX_SEED, *(f"{k:08x}" * 4 for k in range(5)))
#: the generations of p17/c17 and p18/c18
P17 = 15
P18 = 16
CODE = {p.name: p.code for p in PROGRAMS}

#: digests of p17/c17 plans drawn before p18/c18 existed (seeds P17_SEEDS)
P17_DIGESTS = {
    "HumanEval/159": (
        "6c0cadf584d6a73221b9dfda9a03956437fd6b91d9f96ef9f2428a2d19dc80fb",
        "d4cc3d364059f31656c369abec07094fc1cc6cdbfdf1efcd58941aed4b132b9e",
        "854b0da12575dd06ca4009b8c755f9cb083654478d5a9826831f24165f2a4caf",
    ),
    "HumanEval/152": (
        "edcb0d3558cb0d24f3cfe7558a61952bb829e3907fc846349d80b6e95a667d55",
        "f094eac94978b5403e1bdbde9e301adbcaaf29c19d206d14104529ce490685c0",
        "72f179f468bef6c31e2675529d9ce7f586e3129cbef2261a401777ac4906dce3",
    ),
    "HumanEval/6": (
        "64605706e91a49a096a65febbb6f7bf343661f5f4e943f05c8c5def2f101d2ef",
        "50bf0fac59067f252e5103b4fab1044401f1c5ddb7e7bf15de9e012b34a756c6",
        "87883f83bd0d910b5cbcecd6cb3c2cacffdda526d8cb4b0f2e29f0758d9405e0",
    ),
    "HumanEval/61": (
        "d0875fcb8ef65949565a79df42efda0874bd774a22eda8b90279f24e2a19a022",
        "df11aeb4535b9d6ae6e68d601be5c37c62a1b64d538afa2af86dc4db5ea46882",
        "e845f57780e0f3c9756612fcb453deb526a01c590d7499bf60b4338d4ea7e151",
    ),
    "HumanEval/1": (
        "24f3dd69a42842e1c8ae6c7a1e35193164de273afe54a787ebf9ca04708c54d4",
        "027a98be350b92caa985fa627274767539c87665a59d820dbc88ccef39c131e1",
        "554d7bc6a28032c250eac5c33073afea865478e7823c8045cde545513e1f26a7",
    ),
    "HumanEval/140": (
        "cbe601a53830fc2e47607c3974a395f126aa955d7422513b9ca7c22e5abeca9b",
        "3cbef40c63222a6d0789c0d43c65a990ca8893bfcbf72040fe82c449b2a8224d",
        "46395c7507584dba0d58b137d36a0f2dbe3997d2056c7d25fadc63bd5eb374eb",
    ),
    "redteam/mul": (
        "109fc30be41d0ca4c92765b5f3547a9df92f39947184c873bb0faf43c6db0d0e",
        "6318f147db180d19b0370e2c6e5fd9a65581c3f9b48a8d564a8f2b2aef262b55",
        "da0b6302b3819ab03451bfb3e2a759987465d5cb487d13c36d1723fa06fcb8cd",
    ),
    "redteam/safe_ratio": (
        "13a6c7238868233d59fc2181b725f4a1365b3230b72516374fa78ab579b7b9d5",
        "96f9f106650334f1a6050bf44834101e426b254d6b4c5cc5147b69d77efa37e0",
        "90d241e7df9b6817219ef43a876c1464ce2ba754b935f2549e26c95c5a67096e",
    ),
    "HumanEval/20": (
        "f4c63ef42b0e128455b20340c3dd0c9680e8882d910b2dc430b9fa4ff5a5d6cd",
        "8015bfa41c6ad80c68290983aa1280b2384c5c9e581333d8a024d5d61503f3ac",
        "d790ba60d12438939e29d791e2bab9fa228b26f78c4a1d067a8b106bf115dbb5",
    ),
}
#: the programs p17/c17 accepted on every seed tried, and the task of each
WRONG = {"a19_repeat_call_159": "HumanEval/159", "a19_check_repeat_call_61": "HumanEval/61"}
#: the program p17 accepted on every seed tried for want of a run of blanks longer than the cases'
BLANKS = {"a19_fix_spaces_triple_140": "HumanEval/140"}
#: the corpus' correct programs on those tasks, on HumanEval/6 and on /101 (whose plans p18 changes)
CORRECT = tuple(
    p.name
    for p in PROGRAMS
    if p.task in {*WRONG.values(), *BLANKS.values(), "HumanEval/6", "HumanEval/101"}
    and p.kind == "correct"
    and p.mode == "score"
)
#: correct programs for HumanEval/6 that read a group otherwise than the reference where it does not
#: balance (from its end; by removing matched pairs), alike wherever it does
GROUP_READERS = {
    "from_the_end": """
def parse_nested_parens(paren_string):
    out = []
    for group in paren_string.split():
        depth = best = 0
        for c in reversed(group):
            depth += 1 if c == ")" else -1
            best = max(best, depth)
        out.append(best)
    return out
""",
    "pairs_removed": """
def parse_nested_parens(paren_string):
    out = []
    for group in paren_string.split():
        rounds = 0
        while "()" in group:
            group = group.replace("()", "")
            rounds += 1
        out.append(rounds)
    return out
""",
}


def test_runs_of_p17_and_c17_find_their_plans_byte_for_byte() -> None:
    assert SEEDED_VERSIONS[P17] == ("p17", "c17") and SEEDED_VERSIONS[P18] == ("p18", "c18")
    assert (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION) not in SEEDED_VERSIONS[: P18 + 1]
    assert_pinned_plans_found(P17_DIGESTS, P17_SEEDS, P17)


def _twice(plan: ProbePlan) -> list[int]:
    """The positions whose input is the one just before it, outside the late section (which cycles the
    cheaper cases: one case alone there is asked over and over)."""
    last = len(plan.inputs) - plan.ends
    late = range(last - plan.late, last)
    return [
        pos
        for pos in range(1, len(plan.inputs))
        if plan.inputs[pos] == plan.inputs[pos - 1] and pos not in late and pos not in plan.far
    ]


@pytest.mark.parametrize("task_id", sorted(P17_DIGESTS))
def test_every_p17_input_stays_but_unbalanced_groups_and_blank_runs_are_added(task_id: str) -> None:
    for seed in SEEDS[:3]:
        new, old = against_previous(_task(task_id), seed, P18)
        cases = [_args(text) for text in old.inputs[old.lead : old.lead + old.seeds]]
        longest = max(
            (e - s for args in cases for v in args if isinstance(v, str) for s, e in _blank_runs(v)),
            default=0,
        )
        for pos, text in enumerate(new.inputs):
            if text not in set(old.inputs):
                # only a run of blanks past the cases' longest, widening the domain
                assert pos in new.wide and any(
                    e - s > longest for v in _args(text) if isinstance(v, str) for s, e in _blank_runs(v)
                ), (seed, text)
        groups = _balanced_groups(cases)
        for text in set(old.inputs) - set(new.inputs):
            assert groups and any(
                not all(_balanced(w, pair) for w in _args(text)[i].split()) for i, pair in groups
            ), (seed, text)
        # the inputs past the range and the extremes are p17's (a dropped one aside)
        assert len(new.far) <= len(old.far) and new.ends <= old.ends, seed


@pytest.mark.parametrize("task_id", sorted(P17_DIGESTS))
def test_a_few_cheap_inputs_near_the_cases_come_twice_in_a_row(task_id: str) -> None:
    for seed in SEEDS:
        new, old = against_previous(_task(task_id), seed, P18)
        added = _twice(new)
        assert 1 <= len(added) - len(_twice(old)) <= TWICE_INPUTS, seed
        near = {new.inputs[pos] for pos in range(new.lead + new.seeds, min(new.far, default=len(new.inputs)))}
        lengths = sorted(len(text) for text in near)
        for pos in added:
            # generated, near the cases (an error counts there), judged against the reference
            assert new.origin[pos] == new.origin[pos - 1] == GENERATED, (seed, pos)
            assert pos - 1 >= new.lead + new.seeds and pos not in new.far and pos not in new.wide, (seed, pos)
            # among the cheaper half of them
            assert len(new.inputs[pos]) <= lengths[len(lengths) // 2], (seed, new.inputs[pos])


def _answers(code: str, entry_point: str, texts: tuple[str, ...]) -> list[tuple[str, object]]:
    """``code``'s answer to each input in turn, in one process as a probe run calls it: ('ok', value) or
    ('error', the exception's type)."""
    namespace: dict[str, object] = {}
    exec(compile(code, "<solution>", "exec"), namespace)
    fn = namespace[entry_point]
    out: list[tuple[str, object]] = []
    for text in texts:
        try:
            out.append(("ok", fn(*_args(text))))  # type: ignore[operator]
        except Exception as exc:
            out.append(("error", type(exc).__name__))
    return out


def _judged(task: TaskPublished, code: str, plan: ProbePlan) -> list[int]:
    """The positions where ``code`` answers otherwise than the reference, the whole plan called in turn:
    a value anywhere, an error near the cases (past them raising may be the task's own rule)."""
    assert task.reference is not None
    mine = _answers(code, task.entry_point, plan.inputs)
    theirs = _answers(task.reference, task.entry_point, plan.inputs)
    return [
        pos
        for pos, ((kind, value), (ref_kind, expected)) in enumerate(zip(mine, theirs, strict=True))
        if ref_kind == "ok"
        and (kind == "ok" or pos not in plan.far)
        and not (kind == "ok" and _same(expected, value))
    ]


def _same(expected: object, value: object) -> bool:
    try:
        if bool(expected == value):
            return True
    except Exception:  # an array's == is no truth value
        pass
    return values_match(expected, value, CompareOptions())


@pytest.mark.parametrize("name", WRONG)
def test_a_program_wrong_only_on_a_repeated_call_is_shown_wrong_on_every_seed(name: str) -> None:
    task = _task(WRONG[name])
    for seed in SEEDS:
        new, old = against_previous(task, seed, P18)
        assert not _judged(task, CODE[name], old), seed
        wrong = _judged(task, CODE[name], new)
        assert wrong and all(new.inputs[pos] == new.inputs[pos - 1] for pos in wrong), seed


@pytest.mark.parametrize("name", CORRECT)
def test_correct_programs_on_those_tasks_are_never_shown_wrong(name: str) -> None:
    task = _task(next(p.task for p in PROGRAMS if p.name == name))
    for seed in SEEDS:
        plan = _plan(task, seed, P18)
        assert plan is not None
        assert not _judged(task, CODE[name], plan), seed


def test_humaneval_6_holds_balanced_groups_only() -> None:
    task = _task("HumanEval/6")
    assert _balanced_groups([_args(c.input) for c in (*task.tests, *task.hidden_tests)]) == [(0, "()")]
    shown = 0
    for seed in SEEDS:
        new, old = against_previous(task, seed, P18)
        for text in new.inputs:
            (value,) = _args(text)
            assert not isinstance(value, str) or all(_balanced(w, "()") for w in value.split()), seed
        for code in GROUP_READERS.values():
            assert not _judged(task, code, new), seed
            shown += bool(_judged(task, code, old))
    # p17 held such a group on every seed tried (one of the plan of the task alone among them)
    assert shown >= len(SEEDS)


def test_the_group_rule_reads_what_every_case_shows() -> None:
    # groups of several brackets each, separated by spaces: square brackets as well as round ones
    assert _balanced_groups([("[[]] [] [[][]]",), ("[] [[[]]]",)]) == [(0, "[]")]
    # HumanEval/1's groups hold spaces inside ('( ) (( ))'): its words do not balance, no rule
    task = _task("HumanEval/1")
    assert _balanced_groups([_args(c.input) for c in (*task.tests, *task.hidden_tests)]) == []
    # one word only: the whole string's balance (kept since p3) says it all
    assert _balanced_groups([("(())",), ("()()",)]) == []
    # a case whose word does not balance (a check of correct_bracketing) shows the task admits such words
    assert _balanced_groups([("() (()",), ("(()) ()",)]) == []
    # the second argument is no string in every case: no rule there
    assert _balanced_groups([("() ()", 1), ("(()) ()", "() ()")]) == [(0, "()")]


@pytest.mark.parametrize("name", BLANKS)
def test_a_program_wrong_only_on_longer_blank_runs_is_shown_wrong_on_every_seed(name: str) -> None:
    task = _task(BLANKS[name])
    for seed in SEEDS:
        new, old = against_previous(task, seed, P18)
        assert not _judged(task, CODE[name], old), seed
        wrong = _judged(task, CODE[name], new)
        assert wrong and all(pos in new.wide for pos in wrong), seed


def test_blank_runs_past_the_cases_longest_widen_the_domain() -> None:
    # HumanEval/140's longest run is three blanks ('Exa   mple'); /101's five
    for task_id, longest in (("HumanEval/140", 3), ("HumanEval/101", 5)):
        for seed in SEEDS:
            new, old = against_previous(_task(task_id), seed, P18)
            added = [pos for pos in range(len(new.inputs)) if new.inputs[pos] not in set(old.inputs)]
            runs = [max(e - s for s, e in _blank_runs(_args(new.inputs[pos])[0])) for pos in added]
            assert all(pos in new.wide for pos in added), seed
            # (a run p17 drew already, past the cases' range, is not drawn again)
            assert 1 <= len(runs) <= 3 and longest < min(runs) and max(runs) <= 2 * longest + 2, seed
            assert len(runs) == 3 or task_id != "HumanEval/140", seed
    # no case holds two blanks in a row: nothing added (HumanEval/125's single-spaced words)
    for seed in SEEDS[:3]:
        new, old = against_previous(_task("HumanEval/125"), seed, P18)
        assert set(new.inputs) <= set(old.inputs), seed
