"""The task library: the committed file is what the build script gives, every level is populated, the
cases are the reference's own and can judge a program, hidden cases never show in a prompt."""

from __future__ import annotations

import ast
from collections import Counter

import pytest

from producers.ingest.library import PATH, SELECTIONS, levels_of, library_tasks
from producers.ingest.library.build import SPECS, build, render
from producers.ingest.library.spec import LEVELS, Spec, SpecError, build_task, ints
from schemas.errors import UsageError
from streams.noise.rules import assess_task
from streams.reward.literals import CompareOptions


@pytest.fixture(scope="module")
def built():
    return build()


def test_the_committed_file_is_what_the_build_gives(built):
    tasks, _ = built
    assert PATH.read_text(encoding="utf-8") == render(tasks), (
        "stale: run python -m producers.ingest.library.build"
    )


def test_a_few_hundred_tasks_over_five_levels(built):
    tasks, skipped = built
    per_level = Counter(t.difficulty for t in tasks)
    assert len(tasks) >= 300
    assert set(per_level) == set(LEVELS)
    assert all(n >= 40 for n in per_level.values()), per_level
    assert len({t.task_id for t in tasks}) == len(tasks)
    assert len({t.entry_point for t in tasks if t.difficulty != 5}) == len(SPECS)
    # HumanEval tasks are only left out for a stated reason
    assert all("case" in reason for reason in skipped), skipped


def test_every_task_is_graded_tagged_and_has_a_reference(built):
    tasks, _ = built
    for t in tasks:
        assert t.difficulty in LEVELS
        assert t.tags[0] == LEVELS[t.difficulty], t.task_id
        assert t.reference and t.entry_point in t.reference
        assert t.hidden_tests, t.task_id
        assert t.source == "library-v1"


def test_cases_are_the_references_own_outputs(built):
    tasks, _ = built
    for t in tasks:
        scope: dict[str, object] = {}
        exec(compile(t.reference or "", t.task_id, "exec"), scope)
        fn = scope[t.entry_point]
        for case in (*t.tests, *t.hidden_tests):
            got = fn(*ast.literal_eval(case.input))  # type: ignore[operator]
            want = ast.literal_eval(case.output)
            if isinstance(want, float):
                assert got == pytest.approx(want), (t.task_id, case)
            else:
                assert repr(got) == case.output, (t.task_id, case)


def test_visible_cases_are_the_prompts_examples_and_hidden_ones_never_show(built):
    tasks, _ = built
    for t in [t for t in tasks if t.difficulty != 5]:
        for case in t.tests[:2]:
            assert f">>> {t.entry_point}({case.input[1:-1].rstrip(',')})\n    {case.output}\n" in t.prompt
        for case in t.hidden_tests:
            assert f"{t.entry_point}({case.input[1:-1].rstrip(',')})" not in t.prompt, (t.task_id, case)
    for t in [t for t in tasks if t.difficulty == 5]:
        squeezed = "".join(t.prompt.split()).replace("'", '"')
        for case in t.hidden_tests:
            call = "".join(f"{t.entry_point}({case.input[1:-1].rstrip(',')})".split()).replace("'", '"')
            assert call not in squeezed, (t.task_id, case)


def test_no_task_is_flagged_by_the_noise_filters_task_checks(built):
    tasks, _ = built
    flagged = {}
    for t in tasks:
        quality = assess_task(t, CompareOptions(), min_cases=2)
        if quality.flagged:
            flagged[t.task_id] = [r.code for r in quality.reasons]
    assert flagged == {}


def test_selections_are_levels_easiest_first():
    assert levels_of("easy") == (1, 2)
    easy = library_tasks("easy")
    assert {t.difficulty for t in easy} == {1, 2}
    assert [t.difficulty for t in easy] == sorted(t.difficulty or 0 for t in easy)
    everything = library_tasks("all")
    assert len(everything) == len(PATH.read_text().splitlines())
    assert set(SELECTIONS) == {"easy", "medium", "all"}
    with pytest.raises(UsageError, match="hard") as info:
        library_tasks("hard")
    assert "easy" in (info.value.hint or "")


def _spec(body: str, gen=(ints(-5, 5),), edge=()) -> Spec:
    return Spec("f", 1, "x: int", "int", "Doc.", body, gen, ("arithmetic",), edge=edge)


def test_a_spec_that_cannot_judge_is_refused_with_the_reason():
    with pytest.raises(SpecError, match="raised"):
        build_task(_spec("return 10 // x", edge=((0,),)), source="t")
    with pytest.raises(SpecError, match="constant answer"):
        build_task(_spec("return 7"), source="t")
    with pytest.raises(SpecError, match="first argument"):
        build_task(_spec("return x"), source="t")
    with pytest.raises(SpecError, match="distinct inputs"):
        build_task(_spec("return x + 1", (ints(0, 1),)), source="t")


def test_building_is_deterministic():
    spec = _spec("return x * 3")
    assert build_task(spec, source="t") == build_task(spec, source="t")
