"""The event contract: golden samples keep decoding, schemas are current, ids are deterministic."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from schemas import codec, export
from schemas.base import make_event_id
from schemas.envelope import Envelope
from schemas.episode import TurnEnded
from schemas.errors import EventDecodeError
from schemas.registry import BY_CE_TYPE, EVENT_CLASSES, LATEST, split_ce_type
from schemas.rollout import CodeGenerated
from schemas.task import TaskPublished, TaskPublishedV1
from schemas.topics import CATALOG, EVENT_TOPICS, topic_for

GOLDEN = Path(export.__file__).parent / "golden"


def load_golden(ce_type: str) -> tuple[bytes, list[tuple[str, bytes]], dict[str, Any]]:
    doc = json.loads((GOLDEN / f"{ce_type}.json").read_text())
    headers = [(k, v.encode()) for k, v in doc["headers"].items()]
    return json.dumps(doc["body"]).encode(), headers, doc


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.ce_type())
def test_every_event_version_has_a_golden_sample_that_still_decodes(cls):
    value, headers, doc = load_golden(cls.ce_type())
    decoded = codec.decode(value, headers)
    latest = LATEST[cls.event_type]
    assert type(decoded.event) is latest
    assert decoded.envelope.id == doc["headers"]["ce_id"]
    assert decoded.envelope.type == cls.ce_type()
    assert decoded.event.key == doc["key"]


@pytest.mark.parametrize(
    "cls", [c for c in EVENT_CLASSES if LATEST[c.event_type] is c], ids=lambda c: c.ce_type()
)
def test_latest_versions_reencode_to_the_golden_bytes(cls):
    # a renamed, retyped or reordered field changes the body bytes: that needs a new version, not an edit
    value, headers, doc = load_golden(cls.ce_type())
    decoded = codec.decode(value, headers)
    record = codec.encode(decoded.event, decoded.envelope)
    assert json.loads(record.value) == doc["body"]
    assert dict((k, v.decode()) for k, v in record.headers) == doc["headers"]
    assert record.key == str(doc["key"]).encode()


def test_v1_execution_is_upcast_with_its_label_as_a_list_and_its_id_kept():
    from schemas.reference import ReferenceExecuted, ReferenceExecutedV1
    from schemas.rollout import SandboxExecuted, SandboxExecutedV1

    value, headers, doc = load_golden(SandboxExecutedV1.ce_type())
    body = {**json.loads(value), "violation": "network"}
    event = codec.decode_body(SandboxExecutedV1.ce_type(), json.dumps(body).encode())
    assert isinstance(event, SandboxExecuted)
    assert event.violations == ("network",) and event.violation == "network"
    assert event.load_s is None and event.active_s is None
    # rewards name executions by id: reading an old body back must not change it
    assert event.event_id() == SandboxExecutedV1.model_validate(body).event_id() == doc["headers"]["ce_id"]
    value, headers, doc = load_golden(ReferenceExecutedV1.ce_type())
    reference = codec.decode(value, headers).event
    assert isinstance(reference, ReferenceExecuted)
    assert reference.event_id() == ReferenceExecutedV1.model_validate(json.loads(value)).event_id()


def test_a_v3_reference_run_read_back_has_no_memoised_runs_and_keeps_its_id():
    from schemas.reference import ReferenceExecuted, ReferenceExecutedV3

    value, headers, _ = load_golden(ReferenceExecutedV3.ce_type())
    reference = codec.decode(value, headers).event
    assert isinstance(reference, ReferenceExecuted) and reference.memoised == ()
    assert reference.event_id() == ReferenceExecutedV3.model_validate(json.loads(value)).event_id()
    memoised = reference.model_copy(update={"memoised": (reference.execution,)})
    assert memoised.event_id() != reference.event_id()
    # written again, it is the v3 record it was read from
    record = codec.encode(reference, codec.decode(value, headers).envelope)
    assert json.loads(record.value) == json.loads(value)
    assert dict((k, v.decode()) for k, v in record.headers)["ce_type"] == ReferenceExecutedV3.ce_type()


def test_v1_task_is_upcast_to_the_newest_with_v2_defaults_and_the_train_split():
    value, headers, _ = load_golden(TaskPublishedV1.ce_type())
    event = codec.decode(value, headers).event
    assert isinstance(event, TaskPublished)
    assert event.schema_version == 6
    assert event.split == "train"
    assert event.max_turns is None
    assert event.difficulty is None
    assert event.tags == ()
    assert event.tolerance is None
    assert event.hidden_tests == ()
    assert event.tenant == "default"
    assert event.limits.timeout_s == 10.0
    assert [c.input for c in event.tests] == ["(1, 2)", "(-1, 1)"]


@pytest.mark.parametrize(
    "ce_type",
    ["rlstream.task.published.v2", "rlstream.rollout.requested.v1", "rlstream.rollout.generated.v1"],
)
def test_events_written_before_splits_read_as_train(ce_type):
    value, headers, _ = load_golden(ce_type)
    event = codec.decode(value, headers).event
    assert event.split == "train"  # type: ignore[attr-defined]
    value, headers, _ = load_golden(type(event).ce_type())
    assert codec.decode(value, headers).event.split == "eval"  # type: ignore[attr-defined]


def test_tasks_written_before_the_gradient_read_as_ungraded():
    value, headers, _ = load_golden("rlstream.task.published.v3")
    event = codec.decode(value, headers).event
    assert isinstance(event, TaskPublished)
    assert (event.difficulty, event.tags, event.split) == (None, (), "eval")
    value, headers, _ = load_golden("rlstream.task.published.v5")
    event = codec.decode(value, headers).event
    assert (event.difficulty, event.tags) == (2, ("arithmetic", "expression"))  # type: ignore[attr-defined]


def test_tasks_written_before_tolerances_compare_as_their_reward_function_does():
    value, headers, _ = load_golden("rlstream.task.published.v5")
    event = codec.decode(value, headers).event
    assert isinstance(event, TaskPublished) and event.tolerance is None
    value, headers, _ = load_golden(TaskPublished.ce_type())
    event = codec.decode(value, headers).event
    assert isinstance(event, TaskPublished)
    assert event.tolerance is not None and (event.tolerance.rel_tol, event.tolerance.abs_tol) == (0.0, 1e-6)


@pytest.mark.parametrize("tolerance", [{"abs_tol": -1e-6}, {"rel_tol": 2.0}, {"abs_tol": float("inf")}])
def test_a_bad_tolerance_is_refused(tolerance):
    body = {
        "task_id": "t",
        "prompt": "def f():\n",
        "entry_point": "f",
        "check": "pass",
        "tolerance": tolerance,
    }
    with pytest.raises(ValueError, match="tolerance"):
        TaskPublished.model_validate(body)


@pytest.mark.parametrize(
    ("field", "value"), [("difficulty", 0), ("difficulty", 101), ("tags", ["Bad Tag"]), ("tags", ["x"] * 17)]
)
def test_a_bad_level_or_tag_is_refused_naming_the_field(field, value):
    body = {"task_id": "t", "prompt": "def f():\n", "entry_point": "f", "check": "pass", field: value}
    with pytest.raises(ValueError, match=field):
        TaskPublished.model_validate(body)


def test_exported_json_schemas_are_current():
    expected = export.event_schemas()
    on_disk = {p.name for p in export.JSON_DIR.glob("*.json")}
    assert on_disk == set(expected), "run: .venv/bin/python -m schemas.export"
    for name, schema in expected.items():
        assert (export.JSON_DIR / name).read_text() == export.render(schema), (
            f"schemas/json/{name} is stale; run: .venv/bin/python -m schemas.export"
        )


def test_event_ids_are_deterministic_and_distinguish_causes():
    a = make_event_id("rlstream.rollout.scored.v1", "s1", "exec1")
    assert a == make_event_id("rlstream.rollout.scored.v1", "s1", "exec1")
    assert a != make_event_id("rlstream.rollout.scored.v1", "s1", "exec2")
    assert a != make_event_id("rlstream.rollout.scored.v1", "s1", "exec1", attempt=1)
    value, headers, _ = load_golden(CodeGenerated.ce_type())
    event = codec.decode(value, headers).event
    assert event.event_id() == CodeGenerated.model_validate(event.model_dump()).event_id()


def test_republishing_the_same_task_gives_the_same_id_and_changed_content_a_new_one():
    t1 = TaskPublished(task_id="t", prompt="p", entry_point="f", check="def check(c): pass")
    t2 = TaskPublished(task_id="t", prompt="p", entry_point="f", check="def check(c): pass")
    t3 = TaskPublished(task_id="t", prompt="p2", entry_point="f", check="def check(c): pass")
    assert t1.event_id() == t2.event_id() != t3.event_id()


def _headers(**over: str) -> list[tuple[str, bytes]]:
    _, headers, _ = load_golden(TaskPublished.ce_type())
    h = dict(headers)
    for k, v in over.items():
        h[k] = v.encode()
    return list(h.items())


def test_decode_errors_name_what_is_wrong():
    value, headers, _ = load_golden(TaskPublished.ce_type())
    with pytest.raises(EventDecodeError, match="missing CloudEvents header.*ce_type"):
        codec.decode(value, [(k, v) for k, v in headers if k != "ce_type"])
    with pytest.raises(EventDecodeError, match="body is not JSON"):
        codec.decode(b"{not json", headers)
    with pytest.raises(EventDecodeError, match="newer than this build"):
        codec.decode(value, _headers(ce_type="rlstream.task.published.v9"))
    with pytest.raises(EventDecodeError, match="unknown event type"):
        codec.decode(value, _headers(ce_type="rlstream.nothing.v1"))
    with pytest.raises(EventDecodeError, match="ce_time"):
        codec.decode(value, _headers(ce_time="yesterday"))
    body = json.loads(value)
    body["tests"][0]["input"] = "(1, 2"
    with pytest.raises(EventDecodeError, match=r"field tests\.0\.input"):
        codec.decode(json.dumps(body).encode(), headers)
    body = json.loads(value)
    del body["entry_point"]
    with pytest.raises(EventDecodeError, match="field entry_point"):
        codec.decode(json.dumps(body).encode(), headers)


def test_decode_as_rejects_the_wrong_event_type():
    value, headers, _ = load_golden(TaskPublished.ce_type())
    with pytest.raises(EventDecodeError, match="expected rlstream.rollout.generated.v3"):
        codec.decode_as(CodeGenerated, value, headers)


def test_envelope_type_must_match_the_event():
    task = TaskPublished(task_id="t", prompt="p", entry_point="f", check="x")
    envl = Envelope(id="x", source="s", type="rlstream.other.v1", time=datetime.now(UTC))
    with pytest.raises(ValueError, match="does not match"):
        codec.encode(task, envl)


def test_task_without_any_judge_is_invalid():
    with pytest.raises(ValueError, match="nothing could judge it"):
        TaskPublished(task_id="t", prompt="p", entry_point="f")


def test_catalog_covers_every_latest_event_and_keeps_event_topics_forever():
    carried = {e for t in CATALOG for e in t.events}
    for cls in LATEST.values():
        assert cls.__name__ in carried
        assert topic_for(cls.__name__).name.startswith("rl.")
    for topic in EVENT_TOPICS:
        assert topic.configs["retention.ms"] == "-1"
    assert len({t.name for t in CATALOG}) == len(CATALOG)
    assert split_ce_type("rlstream.task.published.v2") == ("rlstream.task.published", 2)
    assert set(BY_CE_TYPE) == {c.ce_type() for c in EVENT_CLASSES}


#: versions written by this build for facts their successor's new fields leave at the implied value
_ONE_TURN_VERSIONS = (
    "rlstream.task.published.v3",
    "rlstream.task.published.v4",
    "rlstream.task.published.v5",
    "rlstream.rollout.requested.v2",
    "rlstream.rollout.generated.v2",
    "rlstream.rollout.executed.v3",
    "rlstream.rollout.executed.v4",
    "rlstream.rollout.scored.v2",
    "rlstream.rollout.filtered.v2",
    "rlstream.rollout.assembled.v2",
)


@pytest.mark.parametrize("ce_type", _ONE_TURN_VERSIONS)
def test_a_one_turn_fact_is_written_in_its_old_version_byte_for_byte(ce_type):
    # a one-turn episode leaves the log of a one-shot run exactly as it was: same type, bytes and id
    value, headers, doc = load_golden(ce_type)
    decoded = codec.decode(value, headers)
    assert type(decoded.event) is LATEST[split_ce_type(ce_type)[0]]
    assert decoded.event.as_written().ce_type() == ce_type
    written = decoded.event.as_written()
    assert type(written).__name__ != type(decoded.event).__name__
    # the old class computes the id it always computed; the newest class computes the same one
    assert decoded.event.event_id() == type(written).event_id(written)
    record = codec.encode(decoded.event, decoded.envelope)
    assert json.loads(record.value) == doc["body"]
    assert record.value == json.dumps(doc["body"], separators=(",", ":")).encode()


def test_turns_of_one_episode_are_distinct_facts_and_the_first_keeps_the_one_turn_id():
    value, headers, _ = load_golden("rlstream.rollout.generated.v2")
    one_turn = codec.decode(value, headers).event
    assert isinstance(one_turn, CodeGenerated)
    first = one_turn.model_copy(update={"max_turns": 3})
    second = first.model_copy(update={"turn": 1, "feedback_event_id": "f"})
    ids = {one_turn.event_id(), first.event_id(), second.event_id()}
    assert len(ids) == 3
    assert first.as_written().ce_type() == second.as_written().ce_type() == "rlstream.rollout.generated.v3"
    with pytest.raises(ValueError, match="turn 3 of an episode of 3"):
        CodeGenerated.model_validate({**first.model_dump(), "turn": 3, "feedback_event_id": "f"})
    with pytest.raises(ValueError, match="answers a feedback"):
        CodeGenerated.model_validate({**first.model_dump(), "turn": 1})


def test_a_turn_that_continues_carries_feedback_and_a_final_one_none():
    value, headers, _ = load_golden("rlstream.episode.turn_ended.v1")
    turn = codec.decode(value, headers).event
    assert isinstance(turn, TurnEnded) and turn.outcome == "continue" and turn.feedback is not None
    with pytest.raises(ValueError, match="carries feedback"):
        TurnEnded.model_validate({**turn.model_dump(), "outcome": "final", "reason": "passed"})
    with pytest.raises(ValueError, match="cannot continue"):
        TurnEnded.model_validate({**turn.model_dump(), "turn": 2})
