"""Processor state: typed records, writes kept only when the handler returned, markers that expire after
their grace in stream time (tombstoned, so the changelog compacts), and records written before the
state was typed still read back."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from infra.runtime.port import MAX_KEPT_BYTES, dead_letter
from infra.runtime.state import Cached, Kind, Marker, State, event_from_state
from schemas import export
from schemas.base import Event
from schemas.registry import LATEST
from schemas.rollout import SandboxExecuted
from tests.hacks.fixtures import make_task, passing

EXEC = Kind("exec", SandboxExecuted)
COUNT = Kind("count", int)
DONE = Marker("done")


def state(grace_s: float = 100.0) -> State:
    s = State((EXEC, COUNT, DONE), grace_s=grace_s)
    s.restored([0, 1])
    return s


def test_records_are_typed_and_read_back_through_their_json() -> None:
    s = state()
    x = passing(make_task())
    s.put(0, EXEC, "s-1", x)
    assert s.get(0, EXEC, "s-1") == x
    writes = s.take_writes()
    assert writes == {(0, "exec", "s-1"): x.model_dump(mode="json")}
    assert s.get(0, EXEC, "s-1") == x  # now from the store
    assert s.get(1, EXEC, "s-1") is None  # partitions are apart
    assert s.keys(0, EXEC) == ["s-1"] and s.count(0, EXEC) == 1


def test_a_failed_call_loses_its_writes_and_a_returned_one_keeps_them() -> None:
    s = state()
    s.put(0, COUNT, "", 1)
    s.savepoint()  # the first call returned
    s.put(0, COUNT, "", 2)
    s.delete(0, COUNT)
    assert s.get(0, COUNT) is None  # a call reads its own writes
    s.rollback()  # the second call failed
    assert s.get(0, COUNT) == 1
    assert s.take_writes() == {(0, "count", ""): 1}
    s.put(0, COUNT, "", 5)
    s.discard()  # the whole batch given up (deferred)
    assert s.get(0, COUNT) == 1 and not s.dirty


def test_markers_expire_after_their_grace_in_stream_time_and_are_tombstoned() -> None:
    s = state(grace_s=100.0)
    s.advance(0, 1000.0)
    s.mark(0, DONE, "g1")
    s.advance(0, 1050.0)
    s.mark(0, DONE, "g2")
    s.take_writes()
    s.advance(0, 1099.0)
    assert s.expire() == 0 and s.marked(0, DONE, "g1")
    s.advance(0, 1100.0)  # g1's grace has passed, g2's has not
    assert s.expire() == 1
    assert s.take_writes() == {(0, "done", "g1"): None}
    assert not s.marked(0, DONE, "g1") and s.marked(0, DONE, "g2")
    # stream time is per partition: nothing on partition 1 moved it
    s.advance(1, 5.0)
    s.mark(1, DONE, "h")
    s.take_writes()
    s.advance(0, 10_000.0)
    s.expire()
    assert s.marked(1, DONE, "h") and not s.marked(0, DONE, "g2")


def test_a_marker_set_again_lives_from_then_and_a_deleted_one_is_left_alone() -> None:
    s = state(grace_s=10.0)
    s.advance(0, 0.0)
    s.mark(0, DONE, "a")
    s.mark(0, DONE, "b")
    s.take_writes()
    s.advance(0, 8.0)
    s.mark(0, DONE, "a")
    s.delete(0, DONE, "b")
    s.take_writes()
    s.advance(0, 12.0)
    assert s.expire() == 0 and s.marked(0, DONE, "a")


def test_restored_markers_keep_their_time_and_old_true_markers_expire_at_once() -> None:
    s = State((DONE, COUNT), grace_s=10.0)
    s.load(0, "done:new", 95.0)
    s.load(0, "done:old", True)  # written before markers had a lifetime
    s.load(0, "count", 3)
    s.restored([0])
    assert s.get(0, COUNT) == 3 and s.marked(0, DONE, "old")
    s.advance(0, 100.0)
    assert s.expire() == 1
    assert s.take_writes() == {(0, "done", "old"): None}
    assert s.marked(0, DONE, "new")


def test_disowning_a_partition_forgets_it_and_changes_the_generation() -> None:
    s = state()
    s.put(0, COUNT, "", 1)
    s.take_writes()
    before = s.generation
    s.disown(0)
    assert s.generation != before and s.owned_partitions() == [1]
    assert s.get(0, COUNT) is None


def test_a_kind_name_cannot_hold_the_key_separator() -> None:
    with pytest.raises(ValueError, match="without ':'"):
        Kind("a:b", int)


def test_a_dead_letter_keeps_at_most_256_kib_and_says_so() -> None:
    big = b"x" * (MAX_KEPT_BYTES + 10)
    letter = dead_letter(
        "sandbox",
        ValueError("bad"),
        topic="rl.generations",
        partition=1,
        offset=7,
        key=b"k",
        value=big,
        headers={"ce_id": "e1"},
    )
    assert letter.error.startswith("bad [original of 262154 bytes: first 262144 kept]")
    assert letter.original_event_id == "e1" and letter.error_type == "ValueError"
    assert base64.b64decode(letter.original_value_b64) == big[:MAX_KEPT_BYTES]


def test_events_kept_in_state_before_an_upgrade_read_back_as_the_newest_version() -> None:
    """A sample waiting in a processor's state across an upgrade that added an event version: its
    records were written as the old version and are lifted when read (never a dead letter)."""
    import json
    from pathlib import Path

    from schemas import export
    from schemas.rollout import CodeGenerated
    from streams.experience.agent import GROUP
    from streams.noise.agent import SAMPLE

    golden = Path(export.__file__).parent / "golden"
    old_execution = json.loads((golden / "rlstream.rollout.executed.v1.json").read_text())["body"]
    old_generation = json.loads((golden / "rlstream.rollout.generated.v1.json").read_text())["body"]
    s = State((EXEC, SAMPLE, GROUP))
    s.load(0, "exec:a", old_execution)
    s.load(0, "sample:a", {"code": "c", "runs": {"0": old_execution}, "reward": None})
    group = {
        "group_id": "g",
        "task_id": "t",
        "group_size": 2,
        "deadline": 1.0,
        "emitted": False,
        "trace": None,
    }
    group["samples"] = {
        "g/0": {"generation": old_generation, "verdict": None, "reward": 0.0, "verdict_event_id": None}
    }
    s.load(0, "group:g", group)
    s.restored([0])
    x = s.get(0, EXEC, "a")
    assert isinstance(x, SandboxExecuted) and x.schema_version == SandboxExecuted.version
    waiting = s.get(0, SAMPLE, "a")
    assert waiting is not None and waiting.runs["0"] == x
    kept = s.get(0, GROUP, "g")
    assert kept is not None
    generation = kept.samples["g/0"].generation
    assert isinstance(generation, CodeGenerated) and generation.schema_version == CodeGenerated.version


REF = Cached("ref", SandboxExecuted)


def test_cached_records_keep_the_most_recently_used_and_expire_unused_after_their_grace() -> None:
    s = State((REF,), grace_s=100.0)
    s.restored([0])
    runs = {k: passing(make_task(), sample_id=k) for k in "abcd"}
    for t, k in enumerate("abc"):
        s.advance(0, 10.0 + t)
        s.keep(0, REF, k, runs[k], limit=3)
    s.advance(0, 20.0)
    assert s.use(0, REF, "a") == runs["a"]  # "a" is now the most recently used, "b" the least
    s.keep(0, REF, "d", runs["d"], limit=3)
    assert s.keys(0, REF) == ["a", "c", "d"]
    s.take_writes()
    # 100 s of stream time after its last use a record goes; the ones used later stay
    s.advance(0, 111.5)
    assert s.expire() == 0
    s.advance(0, 112.0)  # "c" was last used at 12
    assert s.expire() == 1
    s.take_writes()
    assert s.keys(0, REF) == ["a", "d"]
    # a use soon after the last one (within a hundredth of the grace) writes nothing to the changelog
    s.advance(0, 112.5)
    assert s.use(0, REF, "a") == runs["a"] and s.dirty
    s.take_writes()
    s.advance(0, 113.0)
    assert s.use(0, REF, "a") == runs["a"] and not s.dirty


def test_cached_records_restore_with_their_time_and_old_plain_records_read_back() -> None:
    x = passing(make_task())
    s = State((REF,), grace_s=100.0)
    s.load(0, "ref:new", {"used_s": 50.0, "value": x.model_dump(mode="json")})
    s.load(0, "ref:old", x.model_dump(mode="json"))  # written before the kind was a cache
    s.restored([0])
    assert s.get(0, REF, "new") == s.get(0, REF, "old") == x
    s.advance(0, 120.0)
    assert s.expire() == 1  # the old one has no time of use: it goes first
    s.advance(0, 150.0)
    assert s.expire() == 1


def test_a_stored_event_read_again_is_the_same_value_and_a_new_write_or_restore_reads_anew() -> None:
    """An event read from the state again (a group's samples reading the same reference runs) is the
    value decoded the first time, with the id it derived then; an event written reads back as itself
    (what decoding its record gives: equal, with the same id); what is restored is decoded anew, and
    values that are not events are decoded anew on every read."""
    s = State((REF, COUNT), grace_s=100.0)
    s.restored([0])
    first, second = passing(make_task(), sample_id="a"), passing(make_task(), sample_id="b")
    s.keep(0, REF, "k", first, limit=4)
    s.take_writes()
    read = s.use(0, REF, "k")
    assert read is first
    assert REF.decode({"used_s": 0.0, "value": REF.encode(first)}) is first
    decoded = event_from_state(SandboxExecuted, json.loads(json.dumps(REF.encode(first))))
    assert decoded == first and decoded.event_id() == first.event_id()
    # read again, restamped as used in between: the same value
    s.advance(0, 50.0)
    assert s.use(0, REF, "k") is read and s.get(0, REF, "k") is read
    # written anew: the new value
    s.keep(0, REF, "k", second, limit=4)
    assert s.use(0, REF, "k") is second and s.get(0, REF, "k") is not read
    # restored from the changelog: decoded from the restored record
    s.disown(0)
    s.load(0, "ref:k", {"used_s": 1.0, "value": first.model_dump(mode="json")})
    s.restored([0])
    again = s.get(0, REF, "k")
    assert again == first and again is not read
    assert s.get(0, REF, "k") is again
    # more records than a kind keeps decoded: each still reads back as itself
    runs = [passing(make_task(), sample_id=f"s{i}") for i in range(40)]
    for i, run in enumerate(runs):
        s.keep(0, REF, f"r{i}", run, limit=100)
    s.take_writes()
    assert [s.get(0, REF, f"r{i}") for i in range(40)] == runs
    assert [s.get(0, REF, f"r{i}") for i in range(40)] == runs
    s.put(0, COUNT, "n", 3)
    assert s.get(0, COUNT, "n") == 3


@pytest.mark.parametrize("cls", [LATEST[name] for name in sorted(LATEST)], ids=sorted(LATEST))
def test_an_event_kept_reads_back_as_what_its_record_decodes_to(cls: type[Event]) -> None:
    """An event written to the state reads back as itself: what its record, through the changelog's
    JSON text, decodes to is equal to it and has its ids (the golden sample of every newest version)."""
    golden = Path(export.__file__).parent / "golden" / f"{cls.ce_type()}.json"
    event = cls.model_validate(json.loads(golden.read_text())["body"])
    kind = Cached("k", cls)
    s = State((kind,), grace_s=100.0)
    s.restored([0])
    s.keep(0, kind, "e", event, limit=4)
    (written,) = s.take_writes().values()
    assert s.use(0, kind, "e") is event
    decoded = event_from_state(cls, json.loads(json.dumps(written))["value"])
    assert decoded == event
    assert decoded.model_dump_json() == event.model_dump_json()
    assert decoded.event_id() == event.event_id() and decoded.event_id(2) == event.event_id(2)


def test_a_waiting_sample_is_stored_as_its_model_dumps_and_its_runs_read_back_as_they_were() -> None:
    """The filter's waiting sample is written as pydantic's dump of it (the changelog's bytes unchanged),
    each run encoded once; read back, its runs are the events that were written (equal to what their
    records decode to), and a record restored from the changelog is decoded anew."""
    from pydantic import TypeAdapter

    from streams.noise.agent import SAMPLE, Waiting

    first = passing(make_task(), sample_id="a")
    probe = first.model_copy(update={"run_index": 1, "probe": "ab" * 8, "probe_seed": "cd" * 8})
    s = State((SAMPLE,))
    s.restored([0])
    for runs in ({"0": first}, {"0": first, "1": probe}):
        entry = Waiting(code="c", runs=runs)
        s.put(0, SAMPLE, "a", entry)
        (written,) = s.take_writes().values()
        assert json.dumps(written) == json.dumps(TypeAdapter(Waiting).dump_python(entry, mode="json"))
        read = s.get(0, SAMPLE, "a")
        assert read is not None and read == entry and read is not entry
        assert all(read.runs[k] is run for k, run in runs.items())
    s.disown(0)
    s.load(0, "sample:a", json.loads(json.dumps(written)))
    s.restored([0])
    again = s.get(0, SAMPLE, "a")
    assert again == entry and again is not None and again.runs["1"] is not probe
