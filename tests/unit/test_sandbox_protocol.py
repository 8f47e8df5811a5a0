"""The sandbox's pure parts: the verdict channel's records, the router's decisions, cache keys and the
event built from a result."""

from __future__ import annotations

import json

import pytest

from schemas.rollout import CaseResult, SandboxExecuted
from streams.sandbox import ExecutionResult, Job, Limits, ResultCache, to_event
from streams.sandbox.limits import RawRun
from streams.sandbox.protocol import (
    MAGIC,
    case_results,
    decode_record,
    harness_source,
    new_nonce,
    read_verdicts,
    split_length_prefixed,
)
from streams.sandbox.result import interpret
from streams.sandbox.router import failure_reason, static_reason


def frame(nonce: str, record: dict[str, object]) -> bytes:
    return MAGIC + bytes.fromhex(nonce) + json.dumps(record).encode("ascii")


def test_records_without_the_nonce_are_not_believed() -> None:
    nonce, other = new_nonce(), new_nonce()
    frames = [
        frame(nonce, {"t": "load", "s": "ok"}),
        frame(other, {"t": "case", "i": 0, "s": "ok", "r": "42"}),  # a guess at the nonce
        b"RLS1" + b"garbage",
        frame(nonce, {"t": "case", "i": 1, "s": "ok", "r": "'x'"}),
        frame(nonce, {"t": "case", "i": 1, "s": "ok", "r": "'forged second record'"}),
    ]
    v = read_verdicts(frames, nonce)
    assert v.loaded is True
    assert sorted(v.cases) == [1]
    assert v.cases[1].result_repr == "'x'"
    assert v.forged == 3


def test_missing_and_timed_out_cases_are_never_passes() -> None:
    nonce = new_nonce()
    frames = [
        frame(nonce, {"t": "load", "s": "ok"}),
        frame(nonce, {"t": "start", "i": 0}),
        frame(nonce, {"t": "case", "i": 0, "s": "ok", "r": "1", "d": 0.01}),
        frame(nonce, {"t": "start", "i": 1}),
    ]
    v = read_verdicts(frames, nonce)
    statuses = [c.status for c in case_results(v, 3, timed_out=True)]
    assert statuses == ["ok", "timeout", "missing"]
    assert [c.status for c in case_results(v, 3, timed_out=False)] == ["ok", "missing", "missing"]


def test_length_prefixed_stream_drops_a_torn_tail() -> None:
    body = [b"abc", b"", b"hello"]
    data = b"".join(len(b).to_bytes(4, "big") + b for b in body) + (10).to_bytes(4, "big") + b"xy"
    assert split_length_prefixed(data) == body


def test_decode_rejects_oversized_and_non_json() -> None:
    nonce = new_nonce()
    head = MAGIC + bytes.fromhex(nonce)
    assert decode_record(head + b"not json", nonce) is None
    assert decode_record(head + b"[1, 2]", nonce) is None
    assert decode_record(head + b'{"t": "done"}', nonce) == {"t": "done"}


def test_harness_source_is_plain_python() -> None:
    compile(harness_source(), "<harness>", "exec")


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import subprocess\n", "subprocess"),
        ("from multiprocessing import Pool\n", "multiprocessing"),
        ("import os\nos.fork()\n", "os.fork"),
        ("from os import system\n", "os.system"),
        ("from concurrent.futures import ThreadPoolExecutor\n", "concurrent"),
    ],
)
def test_static_precheck_routes_process_and_thread_users(code: str, expected: str) -> None:
    reason = static_reason(code)
    assert reason is not None and expected in reason


@pytest.mark.parametrize("code", ["def f(x):\n    return x\n", "import math, re, json\n", "def broken(:\n"])
def test_static_precheck_leaves_plain_programs_to_wasm(code: str) -> None:
    assert static_reason(code) is None


def _result(**fields: object) -> ExecutionResult:
    base: dict[str, object] = {"backend": "wasm", "mode": "cases"}
    base.update(fields)
    return ExecutionResult(**base)  # type: ignore[arg-type]


def test_failure_signatures_fall_back_but_wrong_answers_and_timeouts_do_not() -> None:
    assert failure_reason(_result(violations=("thread",))) is not None
    assert (
        failure_reason(_result(load_error="OSError: [Errno 58] wasi does not support processes.")) is not None
    )
    wrong = CaseResult(index=0, status="ok", result_repr="41")
    assert failure_reason(_result(cases=(wrong,))) is None
    assert failure_reason(_result(timed_out=True, violations=("thread",))) is None
    assert failure_reason(_result(memory_exceeded=True)) is None


def test_cache_key_covers_everything_that_changes_a_result() -> None:
    job = Job(mode="cases", code="def f(x): return x", entry_point="f", inputs=("(1,)",))
    key = job.cache_key("wasm", "rt1")
    assert key == Job(mode="cases", code="def f(x): return x", entry_point="f", inputs=("(1,)",)).cache_key(
        "wasm", "rt1"
    )
    variants = [
        Job(mode="cases", code="def f(x): return x ", entry_point="f", inputs=("(1,)",)),
        Job(mode="cases", code="def f(x): return x", entry_point="f", inputs=("(2,)",)),
        Job(
            mode="cases",
            code="def f(x): return x",
            entry_point="f",
            inputs=("(1,)",),
            limits=Limits(timeout_s=1),
        ),
    ]
    assert all(v.cache_key("wasm", "rt1") != key for v in variants)
    assert job.cache_key("container", "rt1") != key
    assert job.cache_key("wasm", "rt2") != key


def test_result_cache_is_bounded_and_skips_infra_errors() -> None:
    cache = ResultCache(2)
    cache.put("a", _result())
    cache.put("b", _result())
    cache.put("c", _result())
    cache.put("d", _result(infra_error="sandbox: boom"))
    assert cache.get("a") is None and cache.get("c") is not None and cache.get("d") is None


def test_interpret_labels_limits_and_refusals() -> None:
    nonce = new_nonce()
    job = Job(mode="cases", code="x", entry_point="f", inputs=("(1,)", "(2,)"))
    raw = RawRun(
        backend="wasm",
        exit_code=None,
        stdout=b"",
        stderr=b"RuntimeError: can't start new thread\n",
        frames=[frame(nonce, {"t": "load", "s": "error", "e": "RuntimeError: can't start new thread"})],
        duration_s=0.1,
        limit_labels=["output_limit"],
    )
    r = interpret(job, raw, read_verdicts(raw.frames, nonce), runtime_hash="h", reason="requested")
    assert r.violation == "output_limit" and "thread" in r.violations
    assert [c.status for c in r.cases] == ["error", "error"]
    assert r.loaded is False


def test_to_event_builds_a_valid_sandbox_executed() -> None:
    cases = (CaseResult(index=0, status="ok", result_repr="3"), CaseResult(index=1, status="missing"))
    result = _result(cases=cases, backend_reason="auto: wasm first", runtime_hash="rt", duration_s=0.02)
    event = to_event(result, sample_id="s1", group_id="g1", task_id="t1", run_index=2, hidden=frozenset({1}))
    assert isinstance(event, SandboxExecuted)
    assert event.backend == "wasm" and event.run_index == 2 and event.mode == "cases"
    assert [c.hidden for c in event.cases] == [False, True]
    assert (
        event.event_id()
        == to_event(
            result, sample_id="s1", group_id="g1", task_id="t1", run_index=2, hidden=frozenset({1})
        ).event_id()
    )


def test_cli_json_has_exactly_the_contract_fields() -> None:
    assert set(_result().cli_json()) == {
        "exit_code",
        "stdout",
        "stderr",
        "timed_out",
        "memory_exceeded",
        "violation",
        "backend",
        "duration_s",
    }
