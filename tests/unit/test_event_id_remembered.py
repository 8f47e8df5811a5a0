"""An event's id is derived once per event object and attempt and remembered while the object lives:
the same ids as deriving them afresh (golden samples of every version, the classes that keep an older
version's id included), per attempt, per object, and nothing kept once the object is gone."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

import schemas.base as base
from schemas import export
from schemas.base import Event, make_event_id
from schemas.reference import ReferenceExecuted
from schemas.registry import EVENT_CLASSES
from schemas.task import TaskPublished, TestCase

GOLDEN = Path(export.__file__).parent / "golden"


def golden(cls: type[Event]) -> Event:
    return cls.model_validate(json.loads((GOLDEN / f"{cls.ce_type()}.json").read_text())["body"])


def derived(event: Event, attempt: int) -> str:
    """The id derived afresh, past every remembered layer (a class's own derivation may ask its base's)."""
    written = event.as_written()
    own = type(event).event_id
    if own is Event.event_id:
        return make_event_id(written.ce_type(), *written.identity(), attempt=attempt)
    return own.__wrapped__(event, attempt)  # type: ignore[attr-defined, no-any-return]


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.ce_type())
def test_a_remembered_id_is_the_derived_one(cls: type[Event]) -> None:
    event = golden(cls)
    for attempt in (0, 2, 0, 2):
        assert event.event_id(attempt) == derived(event, attempt)
    assert event.event_id() == event.event_id(0) != event.event_id(1)
    # an equal object made anew gets the same id, a changed one its own
    assert cls.model_validate(event.model_dump()).event_id() == event.event_id()


def task(i: int) -> TaskPublished:
    return TaskPublished(
        task_id=f"t{i}", prompt="p", entry_point="f", tests=(TestCase(input="(1,)", output=str(i)),)
    )


def test_each_object_keeps_its_own_id_and_nothing_stays_once_it_is_gone() -> None:
    tasks = [task(i) for i in range(50)]
    ids = [t.event_id() for t in tasks]
    assert len(set(ids)) == 50 and all(id(t) in base._IDS for t in tasks)
    keys = [id(t) for t in tasks]
    del tasks
    gc.collect()
    assert not any(k in base._IDS for k in keys)
    # objects made later, perhaps at the same addresses, derive their own ids
    again = [task(i + 100) for i in range(50)]
    assert [t.event_id() for t in again] == [derived(t, 0) for t in again]
    assert not set(ids) & {t.event_id() for t in again}


def test_a_reference_keeping_an_older_versions_id_remembers_that_one() -> None:
    ref = golden(ReferenceExecuted)
    assert isinstance(ref, ReferenceExecuted)
    first = ref.event_id()
    assert ref.event_id() == first == derived(ref, 0)


def test_a_references_written_form_is_derived_once_per_object_and_is_the_derived_one() -> None:
    """A reference's v3 form (its written version, and what its id is derived from) is made once per
    object: the same object each time it is asked for, equal to the form made afresh, with its bytes."""
    sample = golden(ReferenceExecuted)
    assert isinstance(sample, ReferenceExecuted)
    reference = sample.model_copy(update={"memoised": ()})  # written as v3
    written = reference.as_written()
    assert reference.previous_version() is written and reference.as_written() is written
    fresh = ReferenceExecuted._as_v3.__wrapped__(reference)  # type: ignore[attr-defined]
    assert written == fresh and written.model_dump_json() == fresh.model_dump_json()
    assert reference.event_id() == written.event_id() == derived(reference, 0)
    other = reference.model_copy()
    assert other.as_written() is not written and other.as_written() == written
    key = id(reference)
    del reference, written
    gc.collect()
    assert key not in base._IDS  # nothing kept once the object is gone
