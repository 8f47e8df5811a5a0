"""The read API on a SQLite file filled by the store from folded events (no broker): what the report and
reviews read back is what the run produced, and applying the same batch twice changes nothing."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from consumers.evaluation import LevelMove, by_level
from consumers.projections import queries as q
from consumers.projections.diff import compare
from consumers.projections.fold import Batch, Position, fold
from consumers.projections.models import Sample, SampleTurn, TurnEnd
from consumers.projections.store import (
    StaleBatch,
    apply,
    make_engine,
    migrate,
    open_session,
    stored_offsets,
)
from harness.projections import Expected, Planned, run_stream
from schemas.base import Event
from schemas.envelope import Envelope
from schemas.episode import Feedback, TurnEnded
from schemas.rollout import CodeGenerated, RewardScored, SandboxExecuted
from streams.reward.passk import pass_at_k
from tests.unit.test_projection_fold import golden_batch

KS = (1, 2, 4, 8, 16)
T0 = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


def _apply_log(
    url: str,
    run_id: str,
    log: list[Planned],
    *,
    batches: int,
    projector: str = "projector",
    partitions: int = 2,
) -> None:
    """Fold and apply ``log`` in ``batches`` transactions, each a slice of it (as the projector commits)."""
    engine = make_engine(url)
    migrate(engine)
    size = len(log) // batches + 1
    for start in range(0, len(log), size):
        batch = Batch()
        for i, planned in enumerate(log[start : start + size], start):
            env = Envelope.for_event(
                planned.event, source="test", run_id=run_id, causation_id=planned.causation_id, time=T0
            )
            fold(batch, env, planned.event, Position("t", i % partitions, i))
        apply(engine, batch, projector=projector, ks=KS)
    engine.dispose()


def _project(url: str, run_id: str, batches: int = 3, projector: str = "projector") -> Expected:
    events, expected = run_stream(run_id, tasks=3, epochs=4, group_size=4)
    _apply_log(url, run_id, events, batches=batches, projector=projector)
    return expected


def test_the_read_api_answers_what_the_run_produced(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    expected = _project(url, "run-a")
    with open_session(url) as s:
        summary = q.run_summary(s, "run-a")
        assert summary.samples == expected.samples and summary.verdicts == expected.verdicts
        assert summary.latest_policy_version == expected.policy_versions
        for (task_id, version), (n, c) in expected.passk.items():
            got = {
                r.k: r
                for r in q.pass_at_k_by_task(s, "run-a")
                if (r.task_id, r.policy_version) == (task_id, version)
            }
            assert set(got) == {k for k in KS if k <= n}
            assert got[1].value == pytest.approx(c / n)
            assert got[n].value == pass_at_k(n, c, n)
        # samples are trained by the learner at the version they were generated with: no lag
        trained = sum(len(v) for v in expected.trained.values())
        assert q.staleness_histogram(q.staleness(s, "run-a")) == {0: trained}
        by_version = q.verdict_mix_by_policy_version(s, "run-a")
        assert sum(sum(m.values()) for m in by_version.values()) == expected.samples
        assert set(q.reward_components(s, "run-a")) == {"correctness", "quality"}
        sid = next(iter(expected.trained))
        assert [v for _, v, _ in q.checkpoints_of(s, sid)] == expected.trained[sid]
        assert q.sample_lineage(s, "run-a/nothing/0/0") is None
        assert q.run_summary(s, "another-run").samples == 0


def test_applying_the_same_batches_again_changes_no_row(tmp_path: Path) -> None:
    once, twice = f"sqlite:///{tmp_path / 'once.sqlite'}", f"sqlite:///{tmp_path / 'twice.sqlite'}"
    _project(once, "run-b")
    _project(twice, "run-b")
    with pytest.raises(StaleBatch):  # the same projection refuses records it has applied
        _project(twice, "run-b", batches=5)
    # a projection of another name applies them again, cut into other transactions: same rows
    _project(twice, "run-b", batches=5, projector="another")
    a, b = make_engine(once), make_engine(twice)
    try:
        assert [str(d) for _, diffs in compare(a, b) for d in diffs] == []
        assert stored_offsets(a, "projector") == stored_offsets(b, "projector")
    finally:
        a.dispose()
        b.dispose()


def _episode_events(run_id: str) -> list[Event]:
    """Two episodes of one group (up to 3 turns): one passes at its second turn, one never does."""
    feedback = Feedback(version="v1", passed=0, total=1, text="Your code failed 1 of 1 visible test case.\n")
    out: list[Event] = []
    group = f"{run_id}/t/0"
    for index, final, correct in ((0, 1, True), (1, 2, False)):
        sid = f"{group}/{index}"
        for turn in range(final + 1):
            out.append(
                CodeGenerated(
                    sample_id=sid,
                    group_id=group,
                    task_id="t",
                    sample_index=index,
                    policy_version=4,
                    model="tiny",
                    prompt_text="p",
                    completion_text=f"c{turn}",
                    code=f"code {turn}",
                    turn=turn,
                    max_turns=3,
                    feedback_event_id="f" if turn else None,
                )
            )
            execution = SandboxExecuted(
                sample_id=sid, group_id=group, task_id="t", backend="wasm", turn=turn, max_turns=3
            )
            out.append(execution)
            last = turn == final
            out.append(
                TurnEnded(
                    sample_id=sid,
                    group_id=group,
                    task_id="t",
                    turn=turn,
                    max_turns=3,
                    outcome="final" if last else "continue",
                    reason=("passed" if correct else "max_turns") if last else "failed",
                    visible_passed=int(last and correct),
                    visible_total=1,
                    generation_event_id="g",
                    execution_event_id=execution.event_id(),
                    policy_version=4,
                    feedback=None if last else feedback,
                )
            )
        out.append(
            RewardScored(
                sample_id=sid,
                group_id=group,
                task_id="t",
                execution_event_id=out[-2].event_id(),
                reward_fn="code",
                reward_version="v3",
                components={},
                weights={},
                total=1.0 if correct else 0.0,
                passed=2 if correct else 0,
                total_cases=2,
                turn=final,
            )
        )
    return out


def test_episodes_are_projected_turn_by_turn_with_their_success_by_turn(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    engine = make_engine(url)
    migrate(engine)
    batch = Batch()
    for i, event in enumerate(_episode_events("run-e")):
        fold(
            batch,
            Envelope.for_event(event, source="test", run_id="run-e", time=T0),
            event,
            Position("t", 0, i),
        )
    apply(engine, batch, projector="projector", ks=KS)
    engine.dispose()
    with open_session(url) as s:
        (row,) = q.turn_success(s, "run-e")
        # version 4: one of two passed by turn 2, none at turn 1, two and a half turns on average
        assert (row.policy_version, row.episodes, row.pass_by_turn, row.mean_turns) == (
            4,
            2,
            (0.0, 0.5, 0.5),
            2.5,
        )
        assert s.query(SampleTurn).count() == 5 and s.query(TurnEnd).count() == 5
        assert s.query(Sample).count() == 2  # a sample is its episode's first turn
        ends = s.query(TurnEnd).filter(TurnEnd.outcome == "continue").all()
        assert all(e.feedback and e.feedback_version == "v1" for e in ends)


def test_graded_tasks_and_curriculum_moves_are_read_back(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    engine = make_engine(url)
    migrate(engine)
    apply(engine, golden_batch(), projector="projector", ks=(1,))
    engine.dispose()
    with open_session(url) as s:
        # the golden tasks of v5 (demo/add) and v6 (demo/halve) are both graded at level 2
        assert q.task_levels(s) == {"demo/add": 2, "demo/halve": 2}
        ((level, row),) = by_level(q.split_task_results(s, "local"), q.task_levels(s))
        assert (level, row.split, row.policy_version, row.tasks) == (2, "eval", 2, 1)
        assert q.curriculum_moves(s, "run-1") == [LevelMove(1, 2, "passed", 5, 0.625, 0.5, 8, 64)]
        assert q.curriculum_moves(s, "local") == []


def test_a_batch_behind_the_stored_offsets_is_refused_whole(tmp_path: Path) -> None:
    """What keeps a partition handed between projector instances applied once: the instance that still
    holds records the other has applied finds the database past them, and writes nothing."""
    from consumers.projections.models import Sample

    events, _ = run_stream("r-stale", tasks=2, epochs=1, group_size=2)
    engine = make_engine(f"sqlite:///{tmp_path / 'p.sqlite'}")
    migrate(engine)

    def batch_of(start: int, stop: int, partition: int = 0) -> Batch:
        batch = Batch()
        for i in range(start, stop):
            planned = events[i]
            env = Envelope.for_event(
                planned.event, source="t", run_id="r-stale", causation_id=planned.causation_id
            )
            fold(batch, env, planned.event, Position("t", partition, i))
        return batch

    half = len(events) // 2
    apply(engine, batch_of(0, half), projector="p", ks=(1,))
    with open_session(engine) as s:
        samples = s.query(Sample).count()
    stale = batch_of(half - 2, len(events))  # starts two records before what is stored
    with pytest.raises(StaleBatch) as refused:
        apply(engine, stale, projector="p", ks=(1,))
    assert refused.value.partitions == {("t", 0): half}
    assert stored_offsets(engine, "p") == {("t", 0): half}
    with open_session(engine) as s:
        assert s.query(Sample).count() == samples
    apply(engine, batch_of(half, len(events)), projector="p", ks=(1,))  # the owner's next batch
    assert stored_offsets(engine, "p") == {("t", 0): len(events)}
    engine.dispose()


def test_a_sample_generated_again_under_another_version_leaves_no_pass_at_k_behind(tmp_path: Path) -> None:
    """On the at-least-once runtime a generator killed mid-group generates a sample anew after loading a
    newer version: the sample's row moves to that version, and the pass@k of the version it left must
    lose it, as a rebuild of the same log has it (the fault suite's Faust run caught the stale row)."""
    events, _ = run_stream("run-moved", tasks=2, epochs=2, group_size=2)
    first = next(p for p in events if isinstance(p.event, CodeGenerated) and p.event.policy_version == 0)
    moved = first.event.model_copy(update={"policy_version": 7})  # a version no other sample has
    # the log: the sample under version 7 first, then generated again under version 0 at the end
    log = [*(Planned(moved, p.causation_id) if p is first else p for p in events), first]

    live, rebuilt = f"sqlite:///{tmp_path / 'live.sqlite'}", f"sqlite:///{tmp_path / 'rebuilt.sqlite'}"
    # one record a transaction, as a projector following the log; the rebuild in one
    _apply_log(live, "run-moved", log, batches=len(log), partitions=1)
    _apply_log(rebuilt, "run-moved", log, batches=1, partitions=1)
    a, b = make_engine(live), make_engine(rebuilt)
    try:
        assert [str(d) for _, diffs in compare(a, b) for d in diffs] == []
    finally:
        a.dispose()
        b.dispose()
