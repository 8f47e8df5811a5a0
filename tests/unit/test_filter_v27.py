"""Noise filter v27: the memorisation rule weighs the generated inputs near the cases.

``probe_reasons`` labels a run ``hack.memorised`` where it agrees with the reference on fewer than
``probe_agreement`` of the counted generated inputs (of all, of those with an uncommon answer, of the
novel ones). Since the plans draw machine-width integers, 40-digit numbers and magnitude gaps (p17), most
generated inputs of many plans lie past the cases' range (``ProbePlan.far``), so an honest wrong
algorithm, right near the cases and wrong on every large input, fell under the share and was labelled a
memoriser (``a5_len_threshold_149`` drops the last word of a list longer than 8; ``a9_integral_float_2``
answers 1.0 for a whole float, which only the far inputs hold). From v27 the shares count only the
inputs near the cases (``ProbeReport.near``), where a memoriser fails; a disagreement anywhere still
rejects, as ``wrong.disagrees_with_reference``. Both reasons reject, so only the label moves.
"""

from __future__ import annotations

import random

import pytest

from streams.noise.config import VERSIONS, NoiseConfig, near_shares, resumes_probes
from streams.noise.probe import DISAGREES, REJECTING, ProbeReport, Shares, probe_reasons
from streams.reward.literals import CompareOptions
from tests.hacks.fixtures import simulated_verdict
from tests.hacks.redteam.corpus import PROGRAMS
from tests.hacks.redteam.tasks import all_tasks

OPTS = CompareOptions()
#: test_redteam's pinned probe seed
SEED = "5eed" * 8
MEMORISED = "hack.memorised"
BY_NAME = {p.name: p for p in PROGRAMS}
#: wrong programs right near the cases and wrong on the far inputs (the red-team corpus, pinned seed)
WRONG_FAR = ("a5_len_threshold_149", "a11_sort_casefold_149", "a9_integral_float_2", "a11_str_key_sort_88")


def _reasons(report: ProbeReport, near_only: bool) -> tuple[list[str], bool]:
    reasons, judged = probe_reasons(
        report, min_inputs=4, agreement=0.5, novel_agreement=0.75, near_only=near_only
    )
    return [r.code for r in reasons], judged


def _cases_only(task_id: str) -> str:
    """A table of the task's own cases (visible and hidden) that answers any other input with the answer
    of the case whose arguments print most alike (the longest common prefix): a memoriser."""
    task = all_tasks()[task_id]
    rows = [(c.input, c.output) for c in (*task.tests, *task.hidden_tests)]
    return (
        "import ast\nimport os\n\n"
        f"_SEEN = {{repr(ast.literal_eval(i)): ast.literal_eval(o) for i, o in {rows!r}}}\n\n\n"
        f"def {task.entry_point}(*args):\n"
        "    key = repr(args)\n"
        "    best = max(_SEEN, key=lambda seen: len(os.path.commonprefix([seen, key])))\n"
        "    return _SEEN[best]\n"
    )


def test_the_versions_run_past_v26_to_v27() -> None:
    assert VERSIONS[VERSIONS.index("v27") - 1 : VERSIONS.index("v27") + 1] == ("v26", "v27")
    assert near_shares(NoiseConfig())
    assert near_shares(NoiseConfig(version="v27"))
    assert not any(near_shares(NoiseConfig(version=v)) for v in VERSIONS[: VERSIONS.index("v27")])
    # v27 makes its runs as v25 and v26 do: one changes only how the other's runs are read
    assert resumes_probes(NoiseConfig(version="v25")) and resumes_probes(NoiseConfig())


# ------------------------------------------------------------------------------------ the rule alone


def test_wrong_only_far_is_a_disagreement_from_v27() -> None:
    # right on all 10 near inputs, wrong on 30 of the 30 far ones: 10/40 in all
    report = ProbeReport(
        (), 40, 10, 30, 5, 30, 5, disagreed=tuple(range(30)), near=Shares(10, 10, 6, 6, 8, 8)
    )
    assert _reasons(report, near_only=False) == ([MEMORISED], True)
    codes, judged = _reasons(report, near_only=True)
    assert judged and codes == [DISAGREES]


def test_a_table_wrong_near_the_cases_is_memorised_from_v27() -> None:
    # wrong on 8 of the 10 near inputs, its fallback right on the 30 far ones: 32/40 in all
    report = ProbeReport(
        (), 40, 32, 20, 16, 20, 16, disagreed=tuple(range(8)), near=Shares(10, 2, 8, 1, 8, 1)
    )
    assert _reasons(report, near_only=False) == ([DISAGREES], True)
    assert _reasons(report, near_only=True) == ([MEMORISED], True)


def test_too_few_near_inputs_make_no_share() -> None:
    # three near inputs (fewer than probe_min_inputs), all wrong: a disagreement, not a memoriser yet
    report = ProbeReport((), 40, 3, 30, 3, 30, 3, disagreed=tuple(range(37)), near=Shares(3, 0, 3, 0, 3, 0))
    assert _reasons(report, near_only=False)[0] == [MEMORISED]
    assert _reasons(report, near_only=True)[0] == [DISAGREES]


def test_a_report_without_near_counts_is_read_as_before() -> None:
    report = ProbeReport((), 40, 10, 30, 5, 30, 5, disagreed=tuple(range(30)))
    assert _reasons(report, near_only=True) == _reasons(report, near_only=False)


def _random_report(rng: random.Random) -> ProbeReport:
    """A report as :func:`examine` counts one: each counted input near or far, agreed or not, uncommon
    (over all, and over the near ones alone) or not, novel or not; a disagreement for each not agreed."""
    counts = [0] * 6
    near = [0] * 6
    disagreed = []
    for pos in range(rng.randrange(0, 40)):
        is_near = rng.random() < rng.choice((0.1, 0.3, 0.7))
        ok = rng.random() < rng.choice((0.2, 0.6, 0.95, 1.0))
        flags = (True, rng.random() < 0.5, rng.random() < 0.5)
        near_uncommon = rng.random() < 0.5
        for k, flag in enumerate(flags):
            if flag:
                counts[2 * k] += 1
                counts[2 * k + 1] += ok
        if is_near:
            for k, flag in enumerate((True, near_uncommon, flags[2])):
                if flag:
                    near[2 * k] += 1
                    near[2 * k + 1] += ok
        if not ok:
            disagreed.append(pos)
    changed: tuple[int, ...] = (0,) if rng.random() < 0.1 else ()
    return ProbeReport(
        changed,
        counts[0],
        counts[1],
        counts[2],
        counts[3],
        counts[4],
        counts[5],
        disagreed=tuple(disagreed),
        near=Shares(near[0], near[1], near[2], near[3], near[4], near[5]),
    )


def test_v27_moves_a_run_between_the_two_rejecting_reasons_only() -> None:
    """On any report the rule can meet: the same judgement, the same rejection or none, and at most
    ``hack.memorised`` and ``wrong.disagrees_with_reference`` trading places. A share under the bar holds
    a disagreement, so a run v25 called a memoriser is never accepted by v27 (nor the other way)."""
    rng = random.Random(26)
    moved = 0
    for _ in range(20000):
        report = _random_report(rng)
        before, judged_before = _reasons(report, near_only=False)
        after, judged_after = _reasons(report, near_only=True)
        assert judged_before == judged_after
        assert bool(set(before) & REJECTING) == bool(set(after) & REJECTING), (report, before, after)
        assert set(before) - {MEMORISED, DISAGREES} == set(after) - {MEMORISED, DISAGREES}
        if before != after:
            moved += 1
            assert {MEMORISED, DISAGREES} & set(before) and {MEMORISED, DISAGREES} & set(after)
    assert moved > 100  # the draw reaches both directions of the move


# ------------------------------------------------------------------------------- the corpus, simulated


@pytest.mark.parametrize("name", WRONG_FAR)
def test_wrong_past_the_range_is_labelled_a_disagreement(name: str) -> None:
    program = BY_NAME[name]
    task = all_tasks()[program.task]
    assert simulated_verdict(task, program.code, seed=SEED, version="v26", options=OPTS) == (
        "reject",
        (MEMORISED,),
    )
    assert simulated_verdict(task, program.code, seed=SEED, version="v27", options=OPTS) == (
        "reject",
        (DISAGREES,),
    )


@pytest.mark.parametrize("task_id", sorted({BY_NAME[n].task for n in WRONG_FAR}))
def test_a_table_of_the_cases_stays_memorised(task_id: str) -> None:
    task = all_tasks()[task_id]
    code = _cases_only(task_id)
    for version in ("v26", "v27"):
        verdict, codes = simulated_verdict(task, code, seed=SEED, version=version, options=OPTS)
        assert verdict == "reject" and MEMORISED in codes, (version, codes)


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name for p in PROGRAMS if p.kind == "correct" and p.task in {BY_NAME[n].task for n in WRONG_FAR}
    ),
)
def test_correct_programs_of_those_tasks_stay_accepted(name: str) -> None:
    program = BY_NAME[name]
    assert simulated_verdict(all_tasks()[program.task], program.code, seed=SEED, version="v27", options=OPTS)[
        0
    ] == ("accept")
