"""The sandbox's pure parts: the host's state machine for the call interface (on arbitrary bytes too),
the bridge of check mode, the router's decisions, cache keys, the seccomp program and the event
built from a result."""

from __future__ import annotations

import json
import struct
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.rollout import MAX_RESULT_CHARS, CaseResult, SandboxExecuted
from streams.sandbox import ExecutionResult, Job, Limits, ResultCache, seccomp, to_event
from streams.sandbox.limits import RawRun
from streams.sandbox.pool import result_size
from streams.sandbox.protocol import (
    CHANGED_AFTER_RETURN,
    KEY_BYTES,
    KEYED,
    MAX_MESSAGE_BYTES,
    MAX_RECORDS,
    Bridge,
    CaseInputs,
    FrameReader,
    Oversized,
    Session,
    case_results,
    encode_job,
    frame,
    harness_source,
)
from streams.sandbox.result import Outcome, interpret
from streams.sandbox.router import failure_reason, static_reason

JOB = encode_job(role="candidate", mode="cases", code="def f(x): return x", entry_point="f")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def session(inputs: tuple[str, ...] = ("(1,)", "(2,)"), clock: Clock | None = None) -> Session:
    return Session(JOB, source=CaseInputs(inputs), clock=clock or Clock())


def from_stub(s: Session, msg: bytes) -> bytes | None:
    """``msg`` as the stub sends it (its kind, the run's key where that kind carries it, its payload);
    the host's answer, the job's without the key it starts with."""
    if msg[:1] in KEYED:
        msg = msg[:1] + s.key + msg[1:]
    answer = s.handle(msg)
    return answer[KEY_BYTES:] if msg == b"J" and answer is not None else answer


def test_the_host_hands_out_one_request_at_a_time_and_times_it() -> None:
    clock = Clock()
    s = session(clock=clock)
    s.start()
    assert json.loads(from_stub(s, b"J") or b"")["entry_point"] == "f"
    clock.now += 0.5  # loading the program
    assert from_stub(s, b"N") == b"C(1,)"
    clock.now += 0.25
    assert from_stub(s, b"Ro1") == b"C(2,)"  # a result comes with the question for the next request
    clock.now += 0.125
    assert from_stub(s, b"ReValueError: no") == b"E"
    f = s.facts
    assert f.deviation is None
    assert f.first_request_at is not None and f.first_request_at - f.started_at == 0.5
    assert f.last_result_at is not None and f.last_result_at - f.started_at == 0.875
    out = case_results(f, 2, timed_out=False)
    assert [(c.status, c.result_repr, c.error) for c in out] == [
        ("ok", "1", None),
        ("error", None, "ValueError: no"),
    ]
    assert out[0].duration_s == 0.25


def test_an_answer_changed_after_its_call_is_that_cases_error() -> None:
    s = session(("(1,)", "(2,)", "(3,)"))
    from_stub(s, b"J")
    assert from_stub(s, b"N") == b"C(1,)"
    assert from_stub(s, b"Ro[1]") == b"C(2,)"
    assert from_stub(s, b"Ro[2]") == b"C(3,)"
    assert from_stub(s, b"Ro[3]") == b"E"
    # after the last call the stub read answers 0 and 1 again, and they had changed (a note twice is one)
    assert from_stub(s, b"S0") == b"k" and from_stub(s, b"S1") == b"k" and from_stub(s, b"S0") == b"k"
    assert s.facts.deviation is None
    out = case_results(s.facts, 3, timed_out=False)
    assert [(c.status, c.result_repr, c.error) for c in out] == [
        ("error", None, CHANGED_AFTER_RETURN),
        ("error", None, CHANGED_AFTER_RETURN),
        ("ok", "[3]", None),
    ]
    assert CHANGED_AFTER_RETURN.startswith("CallerStateError: ")


def test_the_stubs_code_is_handed_out_once_and_only_first() -> None:
    s = session()
    s.stub_code = b"code"
    assert from_stub(s, b"P") == b"code"
    assert json.loads(from_stub(s, b"J") or b"")["role"] == "candidate"
    assert from_stub(s, b"P") is None and "out of turn" in (s.facts.deviation or "")
    late = session()
    late.stub_code = b"code"
    from_stub(late, b"J")
    assert from_stub(late, b"P") is None


@pytest.mark.parametrize(
    ("messages", "why"),
    [
        ([b"P"], "out of turn"),
        ([b"N"], "before the job"),
        ([b"J", b"J"], "twice"),
        ([b"J", b"Ro1"], "nobody asked"),
        ([b"J", b"N", b"N"], "while one was out"),
        ([b"J", b"N", b"Rx1"], "unknown status"),
        ([b"J", b"N", b"Ro\xff"], "not UTF-8"),
        ([b"J", b"Q"], "unknown message kind"),
        ([b"J", b""], "empty"),
        ([b"J", b"Voutput_limit\nfake"], "unknown refusal record kind"),
        ([b"J", b"Lboom", b"N"], "after the program failed"),
        ([b"J", b"N", b"Ro1", b"N"], "while one was out"),
        ([b"J", b"N", b"Ro1", b"Lboom"], "after the program had loaded"),
        ([b"J", b"U../x"], "route hint"),
        ([b"J", b"A(1,)"], "unknown message kind"),
        ([b"J", b"N", b"Ro" + b"1" * (MAX_RESULT_CHARS + 1)], "size limit"),
        ([b"J", b"N", b"Ro1", b"S"], "malformed changed-answer"),
        ([b"J", b"N", b"Ro1", b"S-0"], "malformed changed-answer"),
        ([b"J", b"N", b"Ro1", b"S1"], "for no answer"),  # case 1 is out, not answered
        ([b"J", b"N", b"ReValueError", b"S0"], "for no answer"),  # an error is no answer a caller holds
    ],
)
def test_every_deviation_stops_the_guest_and_fails_the_rest(messages: list[bytes], why: str) -> None:
    s = session()
    replies = [from_stub(s, m) for m in messages]
    assert replies[-1] is None  # the backend stops the guest on None
    assert s.facts.deviation is not None and why in s.facts.deviation
    assert from_stub(s, b"N") is None  # nothing more is answered
    statuses = [c.status for c in case_results(s.facts, 2, timed_out=False)]
    assert all(st != "ok" for st in statuses[len([c for c in s.facts.cases if c.answered_at]) :])
    assert all("protocol deviation" in (c.error or "") for c in case_results(s.facts, 2, timed_out=False)[1:])


def test_an_oversized_message_is_refused_without_reading_it() -> None:
    s = session()
    from_stub(s, b"J")
    assert s.oversized(MAX_MESSAGE_BYTES + 1) is None
    assert s.facts.deviation is not None and "bytes" in s.facts.deviation


def test_refusal_records_are_append_only_bounded_and_keep_every_kind() -> None:
    s = session()
    from_stub(s, b"J")
    for i in range(500):
        assert from_stub(s, b"Vnetwork\nsocket.connect " + str(i).encode()) == b"k"
    from_stub(s, b"Vfilesystem\nopen /etc/passwd")
    from_stub(s, b"Vnetwork\nsocket.connect 1")  # a repeat changes nothing
    assert len(s.facts.records) <= MAX_RECORDS + len(s.facts.kinds)
    assert s.facts.kinds == ["network", "filesystem"]
    assert s.facts.records_dropped > 0


def test_a_timed_out_call_reports_how_long_the_host_waited_for_it() -> None:
    clock = Clock()
    s = session(clock=clock)
    from_stub(s, b"J")
    assert from_stub(s, b"N") == b"C(1,)"
    clock.now += 0.25
    assert from_stub(s, b"Ro1") == b"C(2,)"  # the second request handed out, then never answered
    assert case_results(s.facts, 2, timed_out=True)[1].duration_s == 0.0  # the run's end not stamped
    clock.now += 1.5
    s.end()  # the backend's run returned: the deadline stopped the guest
    first, second = case_results(s.facts, 2, timed_out=True)
    assert (first.status, first.duration_s) == ("ok", 0.25)
    assert (second.status, second.duration_s) == ("timeout", 1.5)


def test_timeouts_missing_and_load_failures_are_never_passes() -> None:
    s = session(("(1,)", "(2,)", "(3,)"))
    for m in (b"J", b"N", b"Ro1"):
        from_stub(s, m)
    assert [c.status for c in case_results(s.facts, 3, timed_out=True)] == ["ok", "timeout", "missing"]
    assert [c.status for c in case_results(s.facts, 3, timed_out=False)] == ["ok", "missing", "missing"]
    loaded_badly = session()
    from_stub(loaded_badly, b"J")
    from_stub(loaded_badly, b"LImportError: nope")
    assert [c.error for c in case_results(loaded_badly.facts, 2, timed_out=False)] == [
        "program failed: ImportError: nope"
    ] * 2


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=64), max_size=30))
def test_no_sequence_of_guest_messages_crashes_the_host(messages: list[bytes]) -> None:
    s = session()
    for m in messages:
        reply = from_stub(s, m)
        assert reply is None or isinstance(reply, bytes)
    f = s.facts
    assert len(f.cases) <= 2
    assert sum(c.answered_at is not None for c in f.cases) <= len(f.cases)
    results = case_results(f, 2, timed_out=False)
    assert len(results) == 2
    for c in results:
        CaseResult.model_validate(c.model_dump())


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(st.binary(max_size=40), st.sampled_from([b"J", b"N", b"Ro1", b"Ree", b"V"])), max_size=20
    )
)
def test_a_byte_stream_on_the_jails_pipe_is_framed_bounded_and_never_crashes(chunks: list[bytes]) -> None:
    s = session()
    reader = FrameReader(limit=64)
    oversized: list[int] = []
    try:
        for chunk in chunks:
            for msg in reader.feed(frame(chunk) if len(chunk) % 3 else chunk):
                assert len(msg) <= 64
                from_stub(s, msg)
    except Oversized as exc:
        oversized.append(exc.length)
        s.oversized(exc.length)
    assert all(n > 64 for n in oversized)
    assert not oversized or s.facts.deviation is not None
    assert len(reader.buf) <= 64 + 4 + 40


def test_frames_split_anywhere_reassemble() -> None:
    data = b"".join(frame(m) for m in (b"J", b"", b"Ro123"))
    reader = FrameReader()
    got = [m for i in range(len(data)) for m in reader.feed(data[i : i + 1])]
    assert got == [b"J", b"", b"Ro123"]
    with pytest.raises(Oversized):
        FrameReader(limit=10).feed(struct.pack(">I", 11))


def test_the_bridge_carries_literals_between_the_check_and_the_candidate() -> None:
    bridge = Bridge(deadline=float("inf"))
    answers: list[tuple[str, str]] = []

    def check() -> None:
        answers.append(bridge.call("(1, 2)"))
        answers.append(bridge.call("(0, 0)"))
        bridge.check_done()
        bridge.candidate_gone("the check finished")

    t = threading.Thread(target=check)
    t.start()
    assert bridge.next_request() == "(1, 2)"
    bridge.deliver(True, "3")
    assert bridge.next_request() == "(0, 0)"
    bridge.deliver(False, "ZeroDivisionError: division by zero")
    assert bridge.next_request() is None
    t.join()
    assert answers == [("o", "3"), ("e", "ZeroDivisionError\ndivision by zero")]


def test_a_gone_candidate_or_the_deadline_ends_the_checks_calls() -> None:
    bridge = Bridge(deadline=float("inf"))
    bridge.candidate_gone("the program's guest ended")
    assert bridge.call("(1,)") == ("x", "the program's guest ended")
    late = Bridge(deadline=0.0)
    assert late.call("(1,)")[0] == "x"
    assert late.next_request() is None


def test_harness_source_is_plain_python() -> None:
    compile(harness_source(), "<harness>", "exec")


def test_the_seccomp_program_checks_the_architecture_first_and_resolves_every_jump() -> None:
    for arch in (seccomp.X86_64, seccomp.AARCH64):
        prog = seccomp.program(arch)
        assert len(prog) % 8 == 0 and len(prog) // 8 < 256
        insns = [struct.unpack("=HBBI", prog[i : i + 8]) for i in range(0, len(prog), 8)]
        assert insns[0] == (seccomp.LD_W_ABS, 0, 0, seccomp.OFFSET_ARCH)
        assert insns[1][0] == seccomp.JEQ_K and insns[1][3] == arch.audit
        assert insns[-1] == (seccomp.RET_K, 0, 0, seccomp.RET_KILL_PROCESS)
        for i, (op, jt, jf, _) in enumerate(insns):
            if op in (seccomp.JEQ_K, seccomp.JGE_K, seccomp.JSET_K):
                assert i + 1 + max(jt, jf) < len(insns)
        refused = {k for op, _, _, k in insns if op == seccomp.JEQ_K}
        for name in ("ptrace", "process_vm_readv", "unshare", "setns", "inotify_init1", "bpf"):
            assert arch.numbers[name] in refused


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("import subprocess\n", "subprocess"),
        ("from multiprocessing import Pool\n", "multiprocessing"),
        ("import os\nos.fork()\n", "os.fork"),
        ("from os import system\n", "os.system"),
        ("from concurrent.futures import ThreadPoolExecutor\n", "concurrent"),
        ("import asyncio\n", "socket pair"),  # WASI has none for an event loop's wake-up channel
    ],
)
def test_static_precheck_routes_process_and_thread_users(code: str, expected: str) -> None:
    reason = static_reason(code)
    assert reason is not None and expected in reason


@pytest.mark.parametrize(
    "code",
    [
        "import sys\n\ndef f(xs):\n    best = sys.maxsize\n    for x in xs:\n"
        "        best = min(best, x)\n    return best\n",
        "from sys import maxsize as INF\n",
    ],
)
def test_static_precheck_routes_sys_maxsize_readers(code: str) -> None:
    # sys.maxsize is 2**31 - 1 on wasm32: a minimum started there answers 2147483647 for 2**32 in WASM,
    # 2**32 in the jail (the red-team corpus' a13_ok_maxsize_sentinel_114 on HumanEval/114)
    reason = static_reason(code)
    assert reason is not None and "sys.maxsize" in reason


@pytest.mark.parametrize("code", ["def f(x):\n    return x\n", "import math, re, json\n", "def broken(:\n"])
def test_static_precheck_leaves_plain_programs_to_wasm(code: str) -> None:
    assert static_reason(code) is None


def test_numpy_programs_go_to_the_container_only_when_it_has_numpy() -> None:
    assert static_reason("import numpy as np\n") is None
    reason = static_reason("import numpy as np\n", numpy_in_container=True)
    assert reason is not None and "64-bit" in reason
    hinted = _result(route_hints=("numpy",), timed_out=True)
    assert failure_reason(hinted) is None
    assert "numpy" in (failure_reason(hinted, numpy_in_container=True) or "")


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
    # the WASM guest's small C stack: a long elif chain the compiler cannot take there goes to the jail
    overflow = CaseResult(
        index=0,
        status="error",
        error="program failed: RecursionError: Stack overflow (used 112 kB) during compilation",
    )
    assert failure_reason(_result(cases=(overflow,))) is not None
    # ...and a recursion through a C function (lru_cache) that any other interpreter takes deeper
    deep = CaseResult(index=1, status="error", error="RecursionError: Stack overflow (used 112 kB)")
    assert failure_reason(_result(cases=(deep,))) is not None
    # the recursion limit itself is the program's own result, the same on every backend
    limit = CaseResult(index=1, status="error", error="RecursionError: maximum recursion depth exceeded")
    assert failure_reason(_result(cases=(limit,))) is None


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
        Job(mode="cases", code="def f(x): return x", entry_point="f", inputs=("(1,)",), prelude="X = 1"),
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


def _cases(n: int, text: str = "[1, 2, 3]") -> ExecutionResult:
    return _result(cases=tuple(CaseResult(index=i, status="ok", result_repr=text) for i in range(n)))


def test_result_cache_is_bounded_by_the_memory_its_results_hold() -> None:
    # a probe run's result holds hundreds of cases: bounded by count alone, a pipeline's sandbox worker
    # grew by ~200 KiB a sample
    big, small = _cases(300), _cases(1)
    assert result_size(big) > 300 * 1000 > result_size(small)
    cache = ResultCache(1000, max_bytes=3 * result_size(big))
    for k in range(5):
        cache.put(f"big{k}", big)
    assert len(cache) == 3 and cache.bytes == 3 * result_size(big)
    assert cache.get("big0") is None and cache.get("big4") is not None
    # the least recently used go first: big2 was read, so big3 leaves
    assert cache.get("big2") is not None
    cache.put("small", small)
    assert cache.get("big3") is None and cache.get("big2") is not None and cache.get("small") is not None
    assert cache.bytes <= cache.max_bytes  # type: ignore[operator]
    # the same key put again is counted once
    cache.put("small", small)
    assert cache.bytes == 2 * result_size(big) + result_size(small)
    # a result larger than the whole budget is not kept (and evicts nothing)
    cache.put("huge", _cases(1000))
    assert cache.get("huge") is None and len(cache) == 3


def test_a_results_size_counts_its_texts() -> None:
    short, long = _cases(10), _cases(10, "x" * 10_000)
    assert result_size(long) - result_size(short) == 10 * (10_000 - len("[1, 2, 3]"))
    assert result_size(_result(stdout="y" * 5000)) - result_size(_result()) == 5000


def _raw(**fields: object) -> RawRun:
    base: dict[str, object] = {
        "backend": "wasm",
        "exit_code": 0,
        "stdout": b"",
        "stderr": b"",
        "duration_s": 0.1,
    }
    base.update(fields)
    return RawRun(**base)  # type: ignore[arg-type]


def test_labels_come_from_the_host_and_the_hook_never_from_printed_text() -> None:
    job = Job(mode="cases", code="x", entry_point="f", inputs=("(1,)", "(2,)"))
    s = session()
    for m in (b"J", b"Vnetwork\nsocket.connect", b"N", b"ReMemoryError", b"Q"):
        from_stub(s, m)
    raw = _raw(
        stderr=b"MemoryError\n[Errno 27] File too large\nRuntimeError: can't start new thread\n",
        limit_labels=["output_limit"],
    )
    r = interpret(job, Outcome(raw, s.facts), runtime_hash="h", reason="requested")
    assert r.violations == ("output_limit", "harness_tamper", "network")
    assert r.violation == "output_limit"
    assert not r.memory_exceeded  # a printed or raised MemoryError is not the limit
    assert [c.status for c in r.cases] == ["error", "error"]
    assert r.deviation is not None and r.loaded is True


def test_memory_exceeded_is_what_the_backend_saw_refused_never_inferred() -> None:
    # WASM: the store's limit refused a memory.grow (counted by the module's rewritten grow); the
    # container: the cgroup's OOM counter. Nothing about the exit or the stderr text adds or removes it.
    job = Job(mode="script", code="x")
    refused = _raw(exit_code=0, memory_exceeded=True)
    assert interpret(job, Outcome(refused, session().facts), runtime_hash="h", reason="").memory_exceeded
    said = _raw(exit_code=1, stderr=b"Traceback (most recent call last):\nMemoryError\n")
    assert not interpret(job, Outcome(said, session().facts), runtime_hash="h", reason="").memory_exceeded


def test_to_event_builds_a_valid_sandbox_executed() -> None:
    cases = (CaseResult(index=0, status="ok", result_repr="3"), CaseResult(index=1, status="missing"))
    result = _result(
        cases=cases,
        backend_reason="auto: wasm first",
        runtime_hash="rt",
        duration_s=0.02,
        violation="output_limit",
        violations=("output_limit", "network"),
        load_s=0.004,
        active_s=0.015,
    )
    event = to_event(result, sample_id="s1", group_id="g1", task_id="t1", run_index=2, hidden=frozenset({1}))
    assert isinstance(event, SandboxExecuted)
    assert event.backend == "wasm" and event.run_index == 2 and event.mode == "cases"
    assert [c.hidden for c in event.cases] == [False, True]
    assert event.violations == ("output_limit", "network") and event.active_s == 0.015
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


@pytest.mark.parametrize("kind", sorted(KEYED))
def test_a_message_of_the_stubs_without_the_runs_key_stops_the_run(kind: bytes) -> None:
    """The channel is the program's to reach; the run's key is not: a result, a request, a load
    failure, a changed-answer note or a check's message sent without it is no message of the stub's."""
    s = session()
    from_stub(s, b"J")
    assert from_stub(s, b"N") == b"C(1,)"
    other = session().key  # another run's key is no better than none
    for forged in (kind + b"o[1]", kind + other + b"o[1]", kind + s.key[:-1] + b"o[1]"):
        t = session()
        t.handle(b"J")
        assert t.handle(forged) is None
        assert "without the run's key" in (t.facts.deviation or "")
    assert s.handle(b"Ro1") is None  # the first request's result, forged in the run it belongs to
    assert "without the run's key" in (s.facts.deviation or "")
    assert case_results(s.facts, 2, timed_out=False)[0].status != "ok"


def test_each_run_has_its_own_key_handed_out_before_the_job() -> None:
    a, b = session(), session()
    assert a.key != b.key and len(a.key) == KEY_BYTES
    answer = a.handle(b"J") or b""
    assert answer[:KEY_BYTES] == a.key
    assert json.loads(answer[KEY_BYTES:])["entry_point"] == "f"
    assert a.handle(b"V" + b"thread\nstarted") == b"k"  # the audit hook's records carry none
