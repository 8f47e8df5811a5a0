"""What one execution may report: its results within a total (the cases past it fail, none is lost),
its output within a cap, and so an event that every topic carrying it accepts."""

from __future__ import annotations

import base64
import json

from schemas.codec import MAX_BODY_BYTES, encode
from schemas.dlq import DeadLettered
from schemas.envelope import Envelope
from schemas.rollout import MAX_EVENT_OUTPUT_BYTES, MAX_EXECUTION_RESULT_BYTES, RESULT_NOT_KEPT, CaseResult
from schemas.topics import (
    CATALOG,
    DLQ,
    EXECUTION_MESSAGE_BYTES,
    EXECUTIONS,
    MAX_RECORD_BYTES,
    REFERENCES,
    STATE_MESSAGE_BYTES,
    retry_topic,
)
from streams.sandbox.result import (
    ERROR_NOT_KEPT,
    ExecutionResult,
    bound_cases,
    clip_output,
    json_size,
    to_event,
)


def _ok(i: int, text: str) -> CaseResult:
    return CaseResult(index=i, status="ok", result_repr=text)


def test_json_size_counts_escapes_and_utf8() -> None:
    for text in ("abc", 'a"b', "a\\b", "é", "😀", "\n\t\x01", ""):
        assert json_size(text) == len(json.dumps(text, ensure_ascii=False).encode()) - 2


def test_results_are_kept_in_case_order_within_the_total_and_the_rest_fail() -> None:
    big = "'" + "x" * 999_998 + "'"  # a million characters: the largest result there is
    cases = tuple(_ok(i, big if i < 6 else "1") for i in range(8))
    bounded = bound_cases(cases)
    assert [c.index for c in bounded] == list(range(8))  # every case is still there
    kept = MAX_EXECUTION_RESULT_BYTES // len(big)
    assert [c.status for c in bounded] == ["ok"] * kept + ["error"] * (6 - kept) + ["ok", "ok"]
    assert all(c.error == RESULT_NOT_KEPT and c.result_repr is None for c in bounded[kept:6])
    assert bounded[6].result_repr == "1"  # a small result after them still fits
    assert bound_cases(bounded) == bounded  # bounding twice changes nothing


def test_error_texts_count_too_and_are_cut_not_dropped() -> None:
    errors = tuple(CaseResult(index=i, status="error", error="E" * 2000) for i in range(3000))
    bounded = bound_cases(errors)
    assert sum(json_size(c.error or "") for c in bounded) <= MAX_EXECUTION_RESULT_BYTES + 100 * len(bounded)
    assert bounded[0].error == "E" * 2000
    assert bounded[-1].error == ERROR_NOT_KEPT
    assert all(c.status == "error" for c in bounded)


def test_output_is_clipped_by_its_json_size_and_says_so() -> None:
    assert clip_output("hello") == "hello"
    flood = "\x01" * (10 << 20)  # 6 bytes of JSON each
    clipped = clip_output(flood)
    assert json_size(clipped) <= MAX_EVENT_OUTPUT_BYTES
    assert clipped.endswith(f"[output cut: an execution event keeps {MAX_EVENT_OUTPUT_BYTES} bytes of it]")


def test_the_largest_execution_event_fits_its_topics_and_a_dead_letter_of_it_decodes() -> None:
    # results that cost the most bytes of JSON per character, output floods, many cases
    nasty = ['"' * 999_999, "\\" * 999_999, "😀" * 999_999]
    cases = tuple(_ok(i, nasty[i % 3]) for i in range(20)) + tuple(
        CaseResult(index=20 + i, status="error", error="\x02" * 2000) for i in range(2000)
    )
    result = ExecutionResult(
        backend="wasm", mode="cases", cases=cases, stdout="\x01" * (1 << 24), stderr="😀" * (1 << 22)
    )
    event = to_event(result, sample_id="s", group_id="g", task_id="t")
    record = encode(event, Envelope.for_event(event, source="test"))
    assert len(record.value) <= EXECUTION_MESSAGE_BYTES - 64 * 1024
    letter = DeadLettered(
        stage="reward",
        error_type="X",
        error="boom",
        original_topic=EXECUTIONS.name,
        original_partition=0,
        original_offset=0,
        original_value_b64=base64.b64encode(record.value).decode(),
    )
    assert len(encode(letter, Envelope.for_event(letter, source="test")).value) <= MAX_BODY_BYTES


def test_topics_that_carry_executions_or_dead_letters_take_them_and_producers_can_send_them() -> None:
    for topic in (EXECUTIONS, REFERENCES, DLQ, *(retry_topic(s) for s in ("sandbox", "reward", "filter"))):
        assert int(topic.configs["max.message.bytes"]) == EXECUTION_MESSAGE_BYTES
    assert MAX_BODY_BYTES < EXECUTION_MESSAGE_BYTES < STATE_MESSAGE_BYTES < MAX_RECORD_BYTES
    assert all(int(t.configs.get("max.message.bytes", 0)) <= MAX_RECORD_BYTES for t in CATALOG)
