"""Property tests of the two doors bad input comes through, no broker needed: the record codec (any
bytes and headers -> a valid event or EventDecodeError, never another exception) and the task file
reader behind ``rlstream tasks publish`` (a bad line is named by number and field; nothing is published
from a file with a bad line under --strict)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infra.runtime.port import check_topic
from producers.ingest.jsonl import parse_line
from producers.ingest.publisher import TaskPublisher
from schemas.base import Event
from schemas.codec import MAX_BODY_BYTES, decode, encode
from schemas.envelope import REQUIRED_HEADERS
from schemas.errors import EventDecodeError, InputError
from schemas.task import TaskPublished
from tests.reliability.badinput import bad_records, golden, latest_ce_type

#: the input topics of the pipeline's processors and the learner
INPUT_TOPICS = (
    "rl.tasks",
    "rl.rollouts.requested",
    "rl.policy",
    "rl.generations",
    "rl.retry.sandbox",
    "rl.executions",
    "rl.rewards",
    "rl.verdicts",
    "rl.experiences",
)
HEADER_NAMES = st.sampled_from(
    [*REQUIRED_HEADERS, "content-type", "traceparent", "rlstream_run_id"]
) | st.text(max_size=12)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _decode_or_error(value: bytes | None, headers: list[tuple[str, Any]]) -> Event | EventDecodeError:
    try:
        return decode(value, headers).event
    except EventDecodeError as exc:
        error = exc
    assert error.message, "an EventDecodeError must say what is wrong"
    return error


@FAST
@given(
    value=st.none() | st.binary(max_size=2000),
    headers=st.lists(st.tuples(HEADER_NAMES, st.none() | st.binary(max_size=60) | st.text(max_size=60))),
)
def test_any_bytes_and_headers_decode_to_an_event_or_an_event_decode_error(
    value: bytes | None, headers: list[tuple[str, Any]]
) -> None:
    _decode_or_error(value, headers)


@FAST
@given(data=st.data(), topic=st.sampled_from(INPUT_TOPICS))
def test_golden_bodies_with_any_field_replaced_decode_or_name_the_field(
    data: st.DataObject, topic: str
) -> None:
    headers, body = golden(latest_ce_type(topic))
    field = data.draw(st.sampled_from(sorted(body)))
    mutated = {**body, field: data.draw(JSON)}
    result = _decode_or_error(json.dumps(mutated).encode(), headers)
    if isinstance(result, Event):  # whatever decodes re-encodes to itself
        from schemas.envelope import Envelope

        record = encode(result, Envelope.for_event(result, source="test"))
        assert decode(record.value, list(record.headers)).event == result
    else:
        assert field in result.message or "schema_version" in result.message or "(root)" in result.message


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), topic=st.sampled_from(INPUT_TOPICS))
def test_every_kind_of_hostile_record_is_rejected_with_its_reason(data: st.DataObject, topic: str) -> None:
    bad = data.draw(bad_records(topic, b"key"))
    with pytest.raises(EventDecodeError) as caught:
        check_topic(topic, decode(bad.value, bad.headers).event)
    for words in bad.reason:
        if words == "first":  # what the dead letter adds about a cut original, not the codec
            continue
        assert words.lower() in str(caught.value).lower(), f"{bad.kind}: {caught.value}"


def test_a_body_over_the_size_limit_is_rejected_before_parsing() -> None:
    headers, _ = golden(latest_ce_type("rl.tasks"))
    with pytest.raises(EventDecodeError, match="exceeds"):
        decode(b"{" + b" " * MAX_BODY_BYTES + b"}", headers)


# -- rlstream tasks publish ---------------------------------------------------------------------------
TASK = {
    "task_id": "demo/add",
    "prompt": 'def add(a, b):\n    """Return a + b."""\n',
    "entry_point": "add",
    "tests": [{"input": "(1, 2)", "output": "3"}],
}
WRONG = {
    "task_id": st.sampled_from(["", " bad id", "a" * 300]) | st.integers() | st.none(),
    "prompt": st.sampled_from([""]) | st.integers() | st.lists(st.text(max_size=3), min_size=1),
    "entry_point": st.sampled_from(["1x", "a b", ""]) | st.booleans(),
    "tests": st.sampled_from(
        [
            [{"input": "1", "output": "1"}],  # not a tuple
            [{"input": "(1,)", "output": "import os"}],  # not a literal
            [{"input": "(1,)"}],
            "[]",
            [{"input": "(" * 300 + ")" * 300, "output": "1"}],
        ]
    ),
    "priority": st.sampled_from([101, -101, "high", 1.5]),
    "limits": st.sampled_from([{"timeout_s": 0}, {"memory_mb": 10**9}, {"timeout_s": "NaN"}, []]),
    "tenant": st.sampled_from(["", "x" * 101]),
}


class Sink:
    """Records what would reach the broker (pure unit test: the real producer is tested elsewhere)."""

    def __init__(self) -> None:
        self.published: list[Event] = []

    def publish(self, event: Event, *, topic: str | None = None) -> str:
        self.published.append(event)
        return event.event_id()

    def flush(self) -> None:
        pass


@FAST
@given(st.text(max_size=500) | st.binary(max_size=500).map(lambda b: b.decode("latin-1")))
def test_any_line_is_a_task_or_an_input_error(line: str) -> None:
    try:
        task = parse_line(line)
    except InputError as exc:
        task, message = None, exc.message
    assert isinstance(task, TaskPublished) or message


@FAST
@given(data=st.data())
def test_a_line_with_a_wrong_field_is_rejected_naming_that_field(data: st.DataObject) -> None:
    field = data.draw(st.sampled_from(sorted(WRONG)))
    line = json.dumps({**TASK, field: data.draw(WRONG[field])})
    with pytest.raises(InputError) as caught:
        parse_line(line)
    assert f"field {field}" in caught.value.message


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    data=st.data(),
    good=st.integers(1, 6),
    strict=st.booleans(),
)
def test_a_file_with_a_bad_line_publishes_nothing_under_strict_and_only_the_good_lines_otherwise(
    data: st.DataObject, good: int, strict: bool, tmp_path_factory: pytest.TempPathFactory
) -> None:
    field = data.draw(st.sampled_from(sorted(WRONG)))
    bad_line = json.dumps({**TASK, "task_id": "demo/bad", field: data.draw(WRONG[field])})
    lines = [json.dumps({**TASK, "task_id": f"demo/t{i}"}) for i in range(good)]
    at = data.draw(st.integers(0, good))
    lines.insert(at, bad_line)
    path: Path = tmp_path_factory.mktemp("tasks") / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    sink = Sink()
    publisher = TaskPublisher(sink)
    if strict:
        with pytest.raises(InputError) as caught:
            publisher.publish_file(path, strict=True)
        assert f"line {at + 1}: field {field}" in caught.value.message
        assert sink.published == []
    else:
        report = publisher.publish_file(path)
        assert [str(e) for e in report.errors] and str(report.errors[0]).startswith(
            f"line {at + 1}: field {field}"
        )
        assert [t.task_id for t in sink.published if isinstance(t, TaskPublished)] == [
            f"demo/t{i}" for i in range(good)
        ]
