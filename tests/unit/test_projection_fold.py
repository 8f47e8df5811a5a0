"""The projector's pure core: events -> rows, idempotent by event id, offsets past every record."""

from __future__ import annotations

import json
from pathlib import Path

from consumers.projections.fold import Batch, Position, fold, skip
from consumers.projections.models import (
    CurriculumMove,
    Execution,
    Experience,
    ExperienceSample,
    Group,
    PolicyTrainedSample,
    PolicyVersion,
    Review,
    Reward,
    RewardComponent,
    Sample,
    SampleTurn,
    SkippedRecord,
    Task,
    TurnEnd,
    Verdict,
    VerdictReason,
)
from harness.projections import run_stream
from schemas import export
from schemas.codec import decode
from schemas.envelope import Envelope
from schemas.registry import EVENT_CLASSES

GOLDEN = Path(export.__file__).parent / "golden"


def golden_batch() -> Batch:
    batch = Batch()
    for offset, cls in enumerate(EVENT_CLASSES):
        doc = json.loads((GOLDEN / f"{cls.ce_type()}.json").read_text())
        decoded = decode(
            json.dumps(doc["body"]).encode(), [(k, v.encode()) for k, v in doc["headers"].items()]
        )
        fold(batch, decoded.envelope, decoded.event, Position("t", 0, offset))
    return batch


def test_golden_events_project_one_row_each_with_the_envelope_run_id() -> None:
    batch = golden_batch()
    sample = batch.rows[Sample][("local/demo/add/0/1",)]
    assert sample["run_id"] == "local"
    assert sample["policy_version"] == 2
    assert sample["completion_tokens"] == 3
    assert sample["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"
    # the sample row is the episode's first turn; the golden later turn is a row of sample_turns only
    assert sample["max_turns"] == 1
    assert list(batch.rows[SampleTurn]) == [("local/demo/add/0/1", 1)]
    assert batch.rows[SampleTurn][("local/demo/add/0/1", 1)]["feedback_event_id"] is not None
    (ended,) = batch.rows[TurnEnd].values()
    assert (ended["outcome"], ended["reason"], ended["feedback_version"]) == ("continue", "failed", "v1")
    assert ended["feedback"].startswith("1 of 2 visible cases failed")
    # the v1 to v5 publications of demo/add are one task row: the latest one, graded and tagged
    task = batch.rows[Task][("demo/add",)]
    assert task["schema_version"] == 5 and task["hidden_cases"] == 1
    assert (task["difficulty"], task["tags"]) == (2, ["arithmetic", "expression"])
    (move,) = batch.rows[CurriculumMove].values()
    assert (move["run_id"], move["from_level"], move["to_level"], move["reason"]) == ("run-1", 1, 2, "passed")
    assert (move["policy_version"], move["pass_at_1"], move["tasks"], move["samples"]) == (5, 0.625, 8, 64)
    assert len(batch.rows[Group]) == 1
    # the one-turn runs (v1: run 0; v3: the sample's probe run, run 1) and the golden episode's second
    # turn (v4) and its probe run drawn with a seed (v5, run 1) are four executions
    runs = sorted((x["turn"], x["run_index"]) for x in batch.rows[Execution].values())
    assert runs == [(0, 0), (0, 1), (1, 0), (1, 1)]
    for execution in batch.rows[Execution].values():
        assert (execution["cases_total"], execution["cases_ok"], execution["backend"]) == (3, 2, "wasm")
    # the v1 golden reward (upcast), the v2 one and the v3 (final turn 1) one are three facts
    assert sorted(r["turn"] for r in batch.rows[Reward].values()) == [0, 0, 1]
    reward = next(
        r for r in batch.rows[Reward].values() if r["reference_event_id"] is not None and r["turn"] == 0
    )
    assert reward["correct"] is False and reward["reward_version"] == "v1"
    components = {k[1]: v for k, v in batch.rows[RewardComponent].items() if k[0] == reward["event_id"]}
    assert components["quality"]["value"] == 0.9 and components["quality"]["weight"] == 0.1
    # the v1 golden verdict (upcast), the v2 one (another filter version) and the v3 one (final turn 1)
    assert [v["verdict"] for v in batch.rows[Verdict].values()] == ["reject"] * 3
    assert sorted(v["turn"] for v in batch.rows[Verdict].values()) == [0, 0, 1]
    assert {r["code"] for r in batch.rows[VerdictReason].values()} == {"hack.forced_exit"}
    assert batch.rows[Experience][("local/demo/add/0",)]["partial"] is True
    # the latest golden experience is an episode of two turns: 3 generated tokens in all
    assert batch.rows[ExperienceSample][("local/demo/add/0", "local/demo/add/0/1")]["completion_tokens"] == 3
    assert batch.rows[PolicyVersion][("local", 3)]["step"] == 30
    assert (
        batch.rows[PolicyTrainedSample][("local", 3, "local/demo/add/0/1")]["group_id"] == "local/demo/add/0"
    )
    (review,) = batch.rows[Review].values()
    assert (review["verdict"], review["automated_verdict"], review["reviewer"]) == ("mask", "accept", "alice")
    # pass@k: the generation names its key; the reward's is looked up from the samples table
    assert batch.passk_keys == {("local", "demo/add", 2)}
    assert batch.passk_samples == {"local/demo/add/0/1"}
    # the dead letter on its own topic is not projected, but its offset moves on
    assert batch.offsets == {("t", 0): len(EVENT_CLASSES)}


def test_folding_the_same_events_again_changes_nothing() -> None:
    events, _ = run_stream("r1", tasks=2, epochs=2)
    once, twice = Batch(), Batch()
    for i, planned in enumerate(events):
        env = Envelope.for_event(planned.event, source="test", run_id="r1", causation_id=planned.causation_id)
        fold(once, env, planned.event, Position("t", 0, i))
        fold(twice, env, planned.event, Position("t", 0, i))
        fold(twice, env, planned.event, Position("t", 0, i))  # re-delivered
    assert once.rows == twice.rows
    assert once.offsets == twice.offsets == {("t", 0): len(events)}


def test_rows_of_a_run_match_what_was_produced() -> None:
    events, expected = run_stream("r2", tasks=3, epochs=2, group_size=4)
    batch = Batch()
    for i, planned in enumerate(events):
        env = Envelope.for_event(planned.event, source="test", run_id="r2", causation_id=planned.causation_id)
        fold(batch, env, planned.event, Position("t", i % 3, i))
    assert len(batch.rows[Task]) == expected.tasks
    assert len(batch.rows[Sample]) == expected.samples
    assert len(batch.rows[Execution]) == expected.executions
    assert len(batch.rows[Reward]) == expected.rewards
    assert len(batch.rows[PolicyVersion]) == expected.policy_versions
    trained = {k[2] for k in batch.rows[PolicyTrainedSample]}
    assert trained == set(expected.trained)
    assert {k[1:] for k in batch.passk_keys} == set(expected.passk)
    assert all(row["run_id"] == "r2" for row in batch.rows[Sample].values())
    # offsets: one past the last record of each partition
    assert batch.offsets == {("t", p): max(i for i in range(len(events)) if i % 3 == p) + 1 for p in range(3)}


def test_an_undecodable_record_is_counted_and_its_offset_moves_on() -> None:
    batch = Batch()
    skip(batch, "projector", Position("rl.generations", 2, 41), "value: body is not JSON")
    assert batch.skipped == 1 and batch.events == 0
    assert batch.offsets == {("rl.generations", 2): 42}
    assert (
        batch.rows[SkippedRecord][("projector", "rl.generations", 2, 41)]["error"]
        == "value: body is not JSON"
    )
