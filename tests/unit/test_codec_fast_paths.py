"""The bus's per-record shortcuts give exactly what the general paths give: the same body bytes, event
ids, headers, envelopes and errors (golden samples of every event version), and a consumed event that
is still a frozen value."""

from __future__ import annotations

import dataclasses
import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import context as otel_context
from opentelemetry.trace import get_current_span, set_span_in_context

import infra.kafka.producer as producer_module
from infra.kafka.consumer import _UNTRACED, ConsumedEvent, decode_message
from infra.kafka.producer import EventProducer
from infra.telemetry.messaging import remote_span
from infra.telemetry.tracing import recording
from schemas import export
from schemas.base import Event
from schemas.codec import body_bytes, decode, decode_envelope, encode, encode_written, headers_dict
from schemas.envelope import Envelope
from schemas.errors import EventDecodeError
from schemas.registry import EVENT_CLASSES
from schemas.task import TaskPublished

GOLDEN = Path(export.__file__).parent / "golden"


def golden(cls: type[Event]) -> tuple[Event, bytes, list[tuple[str, bytes]]]:
    doc = json.loads((GOLDEN / f"{cls.ce_type()}.json").read_text())
    headers = [(name, value.encode()) for name, value in doc["headers"].items()]
    return cls.model_validate(doc["body"]), json.dumps(doc["body"]).encode(), headers


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.ce_type())
def test_body_bytes_are_the_model_dump_json_bytes(cls: type[Event]) -> None:
    event, _, _ = golden(cls)
    assert body_bytes(event) == event.model_dump_json().encode()
    written = event.as_written()
    assert body_bytes(written) == written.model_dump_json().encode()


@pytest.mark.parametrize(
    "headers",
    [
        [("a", b"1"), ("b", b"2")],
        [("a", b"1"), ("a", b"2")],  # the last value wins
        [("a", b"1"), ("a", None)],  # None skipped: the earlier value stays
        [("a", "text"), ("b", b"x")],
        [("a", b"1"), ("b", "t"), ("a", None), ("c", b"\xc3\xa9")],
        [],
        None,
    ],
)
def test_headers_dict_reads_as_the_loop_did(headers: Any) -> None:
    want: dict[str, str] = {}
    for name, raw in headers or ():
        if raw is not None:
            want[name] = raw.decode() if isinstance(raw, bytes) else str(raw)
    assert headers_dict(headers) == want


def test_an_undecodable_header_is_named_on_either_path() -> None:
    for headers in ([("ok", b"1"), ("bad", b"\xff")], [("ok", None), ("bad", b"\xff")]):
        with pytest.raises(EventDecodeError) as err:
            headers_dict(headers)
        assert err.value.location == "header bad"


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.ce_type())
def test_decoded_envelope_is_the_model_validated_one(cls: type[Event]) -> None:
    _, _, headers = golden(cls)
    h = {name: value.decode() for name, value in headers}
    want = Envelope.model_validate(
        {
            "id": h["ce_id"],
            "source": h["ce_source"],
            "type": h["ce_type"],
            "time": datetime.fromisoformat(h["ce_time"]),
            "subject": h.get("ce_subject"),
            "run_id": h.get("rlstream_run_id"),
            "causation_id": h.get("rlstream_causation_id"),
            "traceparent": h.get("traceparent"),
            "tracestate": h.get("tracestate"),
        }
    )
    assert decode_envelope(headers) == want


@pytest.mark.parametrize(
    ("change", "location"),
    [
        ({"ce_id": b""}, "headers"),
        ({"ce_specversion": b"0.3"}, "header ce_specversion"),
        ({"content-type": b"text/plain"}, "header content-type"),
        ({"ce_time": b"yesterday"}, "header ce_time"),
        ({"traceparent": b"00-xyz"}, "headers"),
    ],
)
def test_a_bad_envelope_is_still_refused(change: dict[str, bytes], location: str) -> None:
    from schemas.rollout import CodeGenerated

    _, _, headers = golden(CodeGenerated)
    bad = [(name, change.get(name, value)) for name, value in headers]
    with pytest.raises(EventDecodeError) as err:
        decode_envelope(bad)
    assert err.value.location == location


class _FakeClient:
    """What EventProducer asks of confluent_kafka.Producer, recording each record."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.records: list[dict[str, Any]] = []

    def produce(self, topic: str, **record: Any) -> None:
        self.records.append({"topic": topic, **record})

    def poll(self, timeout: float) -> int:
        return 0

    def flush(self, timeout: float) -> int:
        return 0


PARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.ce_type())
@pytest.mark.parametrize("attempt", [0, 2])
@pytest.mark.parametrize("parent", [None, PARENT], ids=["untraced", "traced"])
def test_a_published_record_is_the_encoded_one(
    cls: type[Event], attempt: int, parent: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(producer_module, "Producer", _FakeClient)
    event, _, _ = golden(cls)
    # the publish runs in a context of its own: untraced, or continuing a trace (as a processor handling
    # a traced record does), whatever an earlier test in this process left current
    context = set_span_in_context(remote_span(parent)) if parent else otel_context.Context()
    token = otel_context.attach(context)
    try:
        with EventProducer("unused:9092", source="src", run_id="run") as producer:
            event_id = producer.publish(event, topic="t", causation_id="cause", attempt=attempt)
            record = producer._producer.records[0]  # type: ignore[attr-defined]
    finally:
        otel_context.detach(token)
    # the id the event names itself (classes with ids of their own included)
    assert event_id == event.event_id(attempt)
    written = {name: value.decode() for name, value in record["headers"]}
    traceparent = written.get("traceparent")
    if parent is None:
        # nothing to continue: without a tracing SDK nothing travels; with one (an earlier test in this
        # process may have installed it) the send span starts a trace of its own
        if recording():
            assert traceparent is not None and traceparent.split("-")[1] != PARENT.split("-")[1]
        else:
            assert traceparent is None
    else:
        # the parent itself without a tracing SDK, its send span's child with one: the same trace
        assert traceparent is not None and traceparent.split("-")[1] == parent.split("-")[1]
    envelope = Envelope.for_event(
        event,
        source="src",
        run_id="run",
        causation_id="cause",
        attempt=attempt,
        time=datetime.fromisoformat(written["ce_time"]),
        traceparent=traceparent,
        tracestate=written.get("tracestate"),
    )
    want = encode(event, envelope)
    assert (record["key"], record["value"], tuple(record["headers"])) == (want.key, want.value, want.headers)
    assert encode_written(event.as_written(), envelope) == want


class _FakeMessage:
    def __init__(self, value: bytes, headers: list[tuple[str, bytes]]) -> None:
        self._value, self._headers = value, headers

    def headers(self) -> list[tuple[str, bytes]]:
        return self._headers

    def value(self) -> bytes:
        return self._value

    def key(self) -> bytes:
        return b"k"

    def topic(self) -> str:
        return "t"

    def partition(self) -> int:
        return 2

    def offset(self) -> int:
        return 7

    def timestamp(self) -> tuple[int, int]:
        return (1, 1_700_000_000_000)


@pytest.mark.parametrize("cls", EVENT_CLASSES, ids=lambda c: c.ce_type())
def test_a_consumed_event_is_what_decode_gives_and_stays_frozen(cls: type[Event]) -> None:
    event, _, _ = golden(cls)
    record = encode(event, Envelope.for_event(event, source="src", run_id="run"))
    item = decode_message(_FakeMessage(record.value, list(record.headers)))  # type: ignore[arg-type]
    decoded = decode(record.value, list(record.headers))
    want = ConsumedEvent(
        envelope=decoded.envelope,
        event=decoded.event,
        topic="t",
        partition=2,
        offset=7,
        timestamp=datetime.fromtimestamp(1_700_000_000, tz=UTC),
        key=b"k",
    )
    assert item == want
    assert dataclasses.asdict(item).keys() == {f.name for f in dataclasses.fields(ConsumedEvent)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.offset = 8  # type: ignore[misc]
    assert dataclasses.replace(item, offset=8).offset == 8
    assert ConsumedEvent(decoded.envelope, decoded.event, "t", 2, 7, None).key is None


def test_an_untraced_record_is_handled_in_the_context_remote_span_names() -> None:
    assert set_span_in_context(remote_span(None, None)) == _UNTRACED
    assert get_current_span(_UNTRACED).get_span_context() == remote_span(None).get_span_context()


def test_headers_given_as_an_iterator_are_read_whole_when_the_fast_path_gives_up() -> None:
    from schemas.codec import headers_dict

    pairs: list[tuple[str, bytes | str | None]] = [
        ("ce_id", b"1"),
        ("ce_source", "text"),
        ("ce_empty", None),
        ("ce_type", b"t"),
    ]
    assert (
        headers_dict(iter(pairs))
        == headers_dict(pairs)
        == {"ce_id": "1", "ce_source": "text", "ce_type": "t"}
    )


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "ns",
    [
        1_796_435_442_000_000_000,  # a whole second: no fraction, as isoformat writes it
        1_796_435_442_000_001_000,
        1_796_435_442_123_456_789,  # floored to the microsecond, as datetime.now floors
        1_796_435_442_999_999_999,  # the last microsecond of a second, then the next second
        1_796_435_443_000_000_999,
        1_796_435_443_500_000_000,
    ],
)
def test_the_record_time_is_datetime_now_isoformat(ns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import schemas.codec as codec

    # one call at the previous second first: the date and time of day are made anew at a new second
    monkeypatch.setattr(time, "time_ns", lambda: ns - 1_000_000_000)
    codec.now_iso()
    monkeypatch.setattr(time, "time_ns", lambda: ns)
    want = (_EPOCH + timedelta(microseconds=ns // 1000)).isoformat()
    assert codec.now_iso() == want
    assert codec.now_iso() == want  # the same second again, from what was kept of it
    assert datetime.fromisoformat(want) == _EPOCH + timedelta(microseconds=ns // 1000)


def test_the_record_time_is_now() -> None:
    from schemas.codec import now_iso

    before = datetime.now(UTC)
    written = datetime.fromisoformat(now_iso())
    assert before <= written <= datetime.now(UTC)


@pytest.mark.parametrize("run_id", [None, "run"])
def test_a_producer_whose_source_or_run_is_set_anew_writes_them(
    run_id: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The headers shared by a producer's records are encoded once: setting its source or run id after
    the first record still puts the new ones on the next record, and a run id of None puts none."""
    monkeypatch.setattr(producer_module, "Producer", _FakeClient)
    event, _, _ = golden(TaskPublished)
    with EventProducer("unused:9092", source="src", run_id=run_id) as producer:
        producer.publish(event, topic="t")
        producer.source, producer.run_id = "other", ("next" if run_id is None else None)
        producer.publish(event, topic="t", causation_id="cause")
        records = producer._producer.records  # type: ignore[attr-defined]
    for record, source, run, cause in zip(
        records, ["src", "other"], [run_id, producer.run_id], [None, "cause"], strict=True
    ):
        written = {name: value.decode() for name, value in record["headers"]}
        envelope = Envelope.for_event(
            event,
            source=source,
            run_id=run,
            causation_id=cause,
            time=datetime.fromisoformat(written["ce_time"]),
            traceparent=written.get("traceparent"),
            tracestate=written.get("tracestate"),
        )
        assert tuple(record["headers"]) == encode(event, envelope).headers


def test_a_record_timestamp_is_its_millisecond_in_utc_whatever_came_before() -> None:
    from infra.kafka.consumer import message_timestamp

    class Stamped(_FakeMessage):
        def __init__(self, kind: int, ms: int) -> None:
            super().__init__(b"", [])
            self._stamp = (kind, ms)

        def timestamp(self) -> tuple[int, int]:
            return self._stamp

    # repeated, changed, repeated again, absent in between: each the datetime of its own millisecond
    for kind, ms in [
        (1, 1_700_000_000_123),
        (1, 1_700_000_000_123),
        (0, 0),
        (1, 1_700_000_000_124),
        (2, 1_700_000_000_124),
        (1, -1),
        (1, 1_700_000_000_123),
        (1, 0),
    ]:
        got = message_timestamp(Stamped(kind, ms))  # type: ignore[arg-type]
        if kind == 0 or ms < 0:
            assert got is None
        else:
            assert got == datetime.fromtimestamp(ms / 1000, tz=UTC) and got.tzinfo is UTC
