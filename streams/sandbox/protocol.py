"""The host half of the sandbox's call interface: what a guest may say, and what the host answers.

A guest holds only the program's trust domain and a small stub (``guest_harness.pysrc``). It never
sees a verdict, a deadline, an expected value or more than one case input at a time. Every exchange is
started by the guest and answered by the host, whose state machine decides what is allowed:

======  ==================================  ====================================================
guest   meaning                             host answer
======  ==================================  ====================================================
``P``   WASM: the stub, please (first)      the stub's compiled code (marshal), once
``J``   the job, please                     the run's key (:data:`KEY_BYTES` random bytes), then
                                            the job as JSON (:func:`encode_job`)
``N``   the first request, please           ``C`` + the argument tuple's literal, or ``E`` (end)
``R``   ``o`` + repr | ``e`` + error text   the result of the request out; answered like ``N``
        | ``t`` + error text                (``t``: an error, and a RecursionError was raised on
        | ``d`` + error text                one of the program's threads during the call; ``d``:
                                            a RecursionError raised on a deep stack of calls)
``L``   error text                          ``k``: the program failed while loading
``S``   a case's index                      ``k``: after a later call or the last, that case's
                                            answer (the object the call returned) reads as another
                                            value, or as equal values of other types: the case
                                            becomes an error (:data:`CHANGED_AFTER_RETURN`)
``V``   kind ``\\n`` detail                  ``k``: the audit hook refused something (append-only)
``U``   module name                         ``k``: the program imports what another backend runs
``A``   the argument tuple's literal        check guest only: ``o`` + repr | ``e`` + name ``\\n``
                                            message | ``x`` + why (the candidate's answer)
``D``   ``o`` | ``e`` + error text          check guest only: the check finished
======  ==================================  ====================================================

Every message the stub sends after the job (``N R L S A D``) carries the run's key between its kind
and its payload: a fresh random key per guest, handed out only as the answer to ``J`` (which the stub
reads before the program loads and keeps in its own frame, out of the program's reach). The channel
itself is within the program's reach (WASM: the ``_host`` module's import; the jail: the pipes' file
descriptors), so without the key a program could answer its requests itself, past every check the
stub makes on an answer; a message without it is a deviation. ``V`` and ``U`` come from the audit hook
and carry no key: they can only count against the program that sends them.

The host hands out exactly one request at a time and takes exactly one result for it. Anything else
(a message without the run's key, a result nobody asked for, a second ``N`` while a request is out, a
second ``J``, an unknown kind,
bytes that are not UTF-8, a message over :data:`MAX_MESSAGE_BYTES`) is a *protocol deviation*: the
host answers ``X``, stops the guest, fails every case not yet answered and labels the run
``harness_tamper``. What a candidate can make its channel say is only "the value it returned for this
case", which it could have returned anyway, so nothing in the guest is secret; the stub's own checks
(answers kept and read again, arguments kept) run where the program cannot reach them (the stub's
turns: guest_harness.pysrc, README *The stub's checks are out of the program's reach*).

Timings are the host's own clock: per case from handing out the request to receiving its result, the
load from the guest's start to its first request, and ``active_s`` from the start to the last result.
Where the guest runs on the thread its messages arrive on (WASM), the same moments are also read on
that thread's CPU clock (``Session.cpu_clock``): per case its CPU alone (``cpu_s``), for the load and
the active span its CPU plus the sleeps it asked for (``load_cpu_s``, ``active_cpu_s``: what the
program costs its caller, less the time the machine's load kept it off a core). A jailed guest is
another process: its cases alone are read on that process's CPU clock (``Session.case_clock``, set by
the backend once the process runs), and its load and active spans on the wall clock only.
Nothing here raises on what a guest sends, and nothing compares results with expected outputs: that
belongs to the reward.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import queue
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Literal, Protocol

from schemas.digest import _DIGEST_BITS, DIGEST, MAX_DIGEST_CHARS, MAX_DIGEST_DIGITS
from schemas.rollout import MAX_EXECUTION_RESULT_BYTES, MAX_RESULT_CHARS, CaseResult

Mode = Literal["cases", "check", "script"]
Role = Literal["candidate", "check"]

#: one message may not exceed this: a result of MAX_RESULT_CHARS characters, UTF-8, plus its header
MAX_MESSAGE_BYTES = 4 * MAX_RESULT_CHARS + 64
#: a result's digest follows its status where the stub reports one (``Rh``, ``Rz``): at most this long
MAX_DIGEST_TEXT = 80
#: the stub reports a digest with every result once the run's answers took more than this many bytes:
#: an event's JSON text takes at most 6 bytes a character (an escape), so no result the host leaves out
#: for :data:`~schemas.rollout.MAX_EXECUTION_RESULT_BYTES` comes without one
DIGEST_AFTER = MAX_EXECUTION_RESULT_BYTES // 6
#: error texts and violation details are kept up to these lengths
MAX_ERROR_CHARS = 2000
MAX_DETAIL_CHARS = 200
#: distinct (kind, detail) refusal records kept per guest; later ones are counted, not kept
MAX_RECORDS = 64
#: route hints kept per guest
MAX_HINTS = 8
#: what the audit hook of the stub may report; anything else is a deviation
GUEST_KINDS = frozenset(
    {
        "network",
        "filesystem",
        "ctypes",
        "signal",
        "introspection",
        "process",
        "thread",
        "harness_access",
    }
)
#: the label of a run whose guest broke the protocol
TAMPER = "harness_tamper"

END = b"E"
#: the length of the run's key (see the module docstring): 128 bits a guest cannot guess, and a wrong
#: guess ends its run
KEY_BYTES = 16
#: the messages that carry the key: every one the stub itself sends after the job
KEYED = frozenset((b"N", b"R", b"L", b"S", b"A", b"D"))
ACK = b"k"
STOP = b"X"

#: how every case's error starts when the program failed to load (no case ran)
LOAD_FAILED = "program failed: "
#: the error of a case whose answer the program changed after returning it (``S``): a caller holding
#: that answer reads another value than the one the call returned
CHANGED_AFTER_RETURN = (
    "CallerStateError: the answer changed after the call returned (a caller holding it reads another value)"
)


def harness_source() -> str:
    return resources.files("streams.sandbox").joinpath("guest_harness.pysrc").read_text("utf-8")


def stub_digest() -> str:
    """Names one version of the stub (its compiled forms are kept under it)."""
    return hashlib.sha256(harness_source().encode()).hexdigest()[:16]


def caller_reuse_from(calls: int) -> int:
    """Where a probe run (``Job.caller``) of ``calls`` calls starts reusing its argument objects: its
    first half is called with new objects, as a caller in real use calls, its second half with the
    previous call's objects refilled in place. Reuse shows a cache keyed by an argument's identity (one
    reused call after a new one suffices); the new objects first show a program that answers rightly
    only once it has seen its objects reused (a program cannot tell a probe run's new objects from a
    real caller's, and once reuse begins it is past half the run)."""
    return calls // 2


def encode_job(
    *,
    role: Role,
    mode: Mode,
    code: str = "",
    entry_point: str = "",
    prelude: str = "",
    check: str = "",
    block: tuple[str, ...] = (),
    read_roots: tuple[str, ...] = (),
    route: tuple[str, ...] = (),
    site: str = "",
    max_result_chars: int = MAX_RESULT_CHARS,
    caller: bool = False,
    keep_args: bool = False,
    reuse_from: int = 0,
    digest_after: int = DIGEST_AFTER,
) -> bytes:
    """The job a guest receives as the answer to ``J``: what to load and what the audit hook refuses.
    Case inputs are not in it: they are handed out one request at a time."""
    job = {
        "role": role,
        "mode": mode,
        "code": code,
        "entry_point": entry_point,
        "prelude": prelude,
        "check": check,
        "policy": {"block": list(block), "read_roots": list(read_roots), "route": list(route)},
        "site": site,
        "max_result_chars": max_result_chars,
        # a result past what may travel is reported with a digest of its canonical text (schemas.digest)
        "digest_after": digest_after,
        "digest_chars": MAX_DIGEST_CHARS,
        "digest_digits": MAX_DIGEST_DIGITS,
        "digest_bits": _DIGEST_BITS,
    }
    if caller:  # a probe run's calls are made as a caller makes them (the stub's case loop)
        job["caller"], job["keep_args"] = True, keep_args
        # the calls before this one get new argument objects, as a caller in real use hands them; from
        # it on the previous call's objects are refilled (a program that answers rightly only where its
        # argument objects are reused would otherwise never be handed a new one after the first call)
        job["reuse_from"] = reuse_from
    return json.dumps(job).encode("utf-8")


def _decode(payload: bytes) -> str | None:
    """``payload`` as text; None when it is not UTF-8."""
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _text(payload: bytes, limit: int) -> str | None:
    """``payload`` as text clipped to ``limit`` characters; None when it is not UTF-8."""
    text = _decode(payload)
    if text is None:
        return None
    return text if len(text) <= limit else text[:limit] + "…"


class Oversized(Exception):
    """A frame header announced more than the limit."""

    def __init__(self, length: int) -> None:
        super().__init__(f"a message of {length} bytes")
        self.length = length


class FrameReader:
    """Messages of a ``4-byte big-endian length + body`` stream (the jail's pipes), bounded: a header
    announcing more than ``limit`` bytes raises :class:`Oversized` at once, so nothing that large is
    ever buffered; a torn tail waits for more bytes."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        self.buf = bytearray()

    def feed(self, chunk: bytes) -> list[bytes]:
        self.buf += chunk
        out: list[bytes] = []
        while len(self.buf) >= 4:
            n = int.from_bytes(self.buf[:4], "big")
            if n > self.limit:
                raise Oversized(n)
            if len(self.buf) < 4 + n:
                break
            out.append(bytes(self.buf[4 : 4 + n]))
            del self.buf[: 4 + n]
        return out


def frame(msg: bytes) -> bytes:
    return len(msg).to_bytes(4, "big") + msg


class RequestSource(Protocol):
    """Where a candidate's requests come from: the task's case inputs, or a check guest's calls."""

    def next_request(self) -> str | None:
        """The next argument tuple's literal; None when there is nothing more (may block)."""

    def deliver(self, ok: bool, text: str) -> None:
        """The result of the request handed out last."""

    def candidate_gone(self, reason: str) -> None:
        """The candidate will answer nothing more."""


class CaseInputs:
    """Case mode: the task's inputs, in order."""

    def __init__(self, inputs: tuple[str, ...]) -> None:
        self.inputs = inputs
        self.position = 0

    def next_request(self) -> str | None:
        if self.position >= len(self.inputs):
            return None
        self.position += 1
        return self.inputs[self.position - 1]

    def deliver(self, ok: bool, text: str) -> None:
        pass

    def candidate_gone(self, reason: str) -> None:
        pass


@dataclass
class CaseRecord:
    """One request as the host saw it."""

    index: int
    handed_at: float
    answered_at: float | None = None
    #: the guest's CPU clock at the same two moments (``Session.case_clock``; None without one)
    handed_cpu: float | None = None
    answered_cpu: float | None = None
    ok: bool = False
    text: str = ""
    #: what the program wrote to stdout and stderr while this request was out (the host's count of
    #: its own pipes or WASI streams: the guest cannot change it)
    output_bytes: int = 0
    #: the stub saw a RecursionError end one of the program's threads during this request (``Rt``)
    thread_recursion: bool = False
    #: the call raised a RecursionError whose traceback is a chain of calls as deep as a recursion
    #: that ran out of stack (``Rd``; not on a shallow stack, where a program raises it itself)
    deep_recursion: bool = False
    #: the digest of the answer's canonical text (``Rh``: with its text; ``Rz``: with the error saying
    #: its text is too large), ``schemas.digest``
    digest: str | None = None
    #: (WASM) a call still out when the run's deadline or its cap stopped the guest: the bytes the
    #: guest's linear memory grew while it was out, and those the store's limit still allowed then (set
    #: by the backend once the guest is stopped: ``CaseResult.memory_grown``/``memory_left``)
    memory_grown: int | None = None
    memory_left: int | None = None
    #: the stub read this answer again after the last call and it had changed (``S``)
    changed: bool = False


@dataclass
class SessionFacts:
    """What the host observed of one guest (its stdout, exit and limits are the backend's)."""

    started_at: float = 0.0
    #: when the backend's run of the guest returned (None: not stamped); a call still out then was out
    #: until here, which is what a timed-out case's duration reports
    ended_at: float | None = None
    job_sent: bool = False
    first_request_at: float | None = None
    last_result_at: float | None = None
    #: the guest's own time (:meth:`Session.own_time`) at its start, its first request and its last
    #: result (None without a CPU clock, or where start() was not called on the guest's thread)
    started_cpu: float | None = None
    first_request_cpu: float | None = None
    last_result_cpu: float | None = None
    load_error: str | None = None
    cases: list[CaseRecord] = field(default_factory=list)
    #: refusals the guest's audit hook reported, first MAX_RECORDS distinct ones
    records: list[tuple[str, str]] = field(default_factory=list)
    records_dropped: int = 0
    hints: list[str] = field(default_factory=list)
    deviation: str | None = None
    messages: int = 0
    bytes_received: int = 0
    #: check guest only: the check's own outcome
    check_done: bool = False
    check_ok: bool = False
    check_error: str | None = None
    check_calls: int = 0
    #: the run was stopped for its output (:meth:`Session.output`): the request whose own output
    #: flooded (-1: none was out) and what it had written
    output_stop: tuple[int, int] | None = None
    #: what the guest wrote while no request was out
    output_outside: int = 0

    @property
    def outstanding(self) -> CaseRecord | None:
        last = self.cases[-1] if self.cases else None
        return last if last is not None and last.answered_at is None else None

    @property
    def kinds(self) -> list[str]:
        out: list[str] = []
        for kind, _ in self.records:
            if kind not in out:
                out.append(kind)
        return out


class Session:
    """The host's state machine for one guest. ``handle`` answers one message; it returns None when
    the guest must be stopped now (after a deviation). Thread-safe; never raises on guest bytes."""

    def __init__(
        self,
        job: bytes,
        *,
        role: Role = "candidate",
        source: RequestSource | None = None,
        caller: Callable[[str], tuple[str, str]] | None = None,
        clock: Callable[[], float] = time.perf_counter,
        cpu_clock: Callable[[], float] | None = None,
        max_bytes: int = 64 << 20,
        call_cap: tuple[int, float] | None = None,
    ) -> None:
        self.job = job
        #: (k, s): a request from the k-th on must be answered within s seconds (:meth:`cutoff`)
        self.call_cap = call_cap
        self.role = role
        self.source = source if source is not None else CaseInputs(())
        self.caller = caller
        self.clock = clock
        #: the CPU clock of the thread the guest's messages arrive on, where that thread is the one
        #: running the guest (WASM: ``time.thread_time``): each case's CPU time is read there
        #: (``CaseResult.cpu_s``), which the machine's load does not stretch as it stretches wall time
        self.cpu_clock = cpu_clock
        #: the clock each case's CPU time is read on at its hand-out and its result: ``cpu_clock``, or
        #: one the backend sets once its guest runs (the jail: the guest process's CPU clock, which
        #: counts every thread of that process; None where it cannot be read, as once the process is
        #: gone). The load and active spans stay on ``cpu_clock`` alone
        self.case_clock: Callable[[], float | None] | None = cpu_clock
        #: the sleeps the guest asked for so far, as long as it asked (capped at its deadline), which the
        #: backend serves on the host and reports here (:meth:`slept`): a wait the guest chose costs its
        #: caller time as surely as work does, and uses no CPU
        self.asleep_s = 0.0
        self.max_bytes = max_bytes
        self.facts = SessionFacts(started_at=clock())
        #: the run's key: the stub's messages carry it, the program cannot (see the module docstring)
        self.key = secrets.token_bytes(KEY_BYTES)
        self._lock = threading.Lock()
        self.over_budget = False
        #: WASM: the stub's compiled code, handed out once as the answer to ``P`` (the guest's very
        #: first message) instead of being read from a file
        self.stub_code: bytes | None = None

    def start(self) -> None:
        """The guest starts now (the load time counts from here). Called on the thread that runs the
        guest, where its own time is read too."""
        self.facts.started_at = self.clock()
        self.facts.started_cpu = self.own_time()

    @property
    def calls_handed(self) -> int:
        """How many calls the guest was handed so far. The backend reads it around :meth:`handle` to
        tell that a message handed one, never from the reply's bytes: the answer to ``J`` begins with
        the run's random key, which begins with ``C`` in one run of 256."""
        return len(self.facts.cases)

    def own_time(self) -> float | None:
        """The guest's own time so far: its thread's CPU clock plus the sleeps it asked for (None
        without a CPU clock). Unlike the wall clock, a wait for a core (the machine's load) is not in
        it; unlike the CPU clock alone, a ``time.sleep`` the program chose is."""
        return None if self.cpu_clock is None else self.cpu_clock() + self.asleep_s

    def slept(self, seconds: float) -> None:
        """The guest asked to sleep ``seconds`` (the backend serves it; counted as asked, so a late
        wake-up on a loaded machine adds nothing)."""
        self.asleep_s += max(0.0, seconds)

    def end(self) -> None:
        """The backend's run of the guest returned now: a request still out was out until here (the
        time the host gave it, read on the host's clock: the guest cannot change it)."""
        self.facts.ended_at = self.clock()

    def cutoff(self) -> float | None:
        """The time by which the request out must be answered (None: none is out, or it has no cap
        of its own and only the run's deadline bounds it). The backend ends the run there as at its
        deadline: the request is ``timeout``, every later one ``missing``."""
        if self.call_cap is None:
            return None
        rec = self.facts.outstanding
        first, seconds = self.call_cap
        return rec.handed_at + seconds if rec is not None and rec.index >= first else None

    def output(self, n: int, flood: int) -> bool:
        """The guest wrote ``n`` more bytes to stdout or stderr (the backends call this from what they
        read of the guest's streams, never from a guest message); whether the backend stops it now.

        The bytes count against the request out. A call whose own output passes ``flood`` floods: the
        run stops there, and ``output_stop`` names it (its end is its own doing). A run's chatter
        reaching the cap over many calls stops nothing (each call is bounded by ``flood`` already, the
        cap keeps what is stored, and stopping the run at whichever call was out when the total
        passed a bound would let a program's earlier chatter end the run where it likes); only output
        while no request is out (loading, after the last) is bounded as a whole, and stops the run
        with no call named."""
        with self._lock:
            f = self.facts
            if f.output_stop is not None:
                return True
            rec = f.outstanding
            if rec is not None:
                rec.output_bytes += n
                if rec.output_bytes > flood:
                    f.output_stop = (rec.index, rec.output_bytes)
            else:
                f.output_outside += n
                if f.output_outside > flood:
                    f.output_stop = (-1, f.output_outside)
            return f.output_stop is not None

    # -- the state machine --------------------------------------------------------------------------
    def oversized(self, length: int) -> bytes | None:
        """A message too long to be read at all (the backend never copies it)."""
        with self._lock:
            self.facts.messages += 1
            return self._deviate(f"a message of {length} bytes (limit {MAX_MESSAGE_BYTES})")

    def refuse(self, why: str) -> None:
        """A deviation the backend observed itself (e.g. a record on the wrong pipe)."""
        with self._lock:
            self._deviate(why)

    def handle(self, msg: bytes) -> bytes | None:
        try:
            with self._lock:
                return self._handle(msg)
        except Exception as exc:  # a bug here must not become a host crash
            return self._deviate(f"the host could not handle a message: {type(exc).__name__}")

    def _deviate(self, why: str) -> bytes | None:
        """Record the first deviation; the guest is stopped and answered nothing more (None)."""
        if self.facts.deviation is None:
            self.facts.deviation = why[:MAX_DETAIL_CHARS]
            self.source.candidate_gone("the candidate broke the protocol")
        return None

    def _handle(self, msg: bytes) -> bytes | None:
        f = self.facts
        if f.deviation is not None:
            return None
        f.messages += 1
        f.bytes_received += len(msg)
        if f.bytes_received > self.max_bytes:
            self.over_budget = True
            return self._deviate("the guest sent more than its byte budget")
        if not msg:
            return self._deviate("an empty message")
        if len(msg) > MAX_MESSAGE_BYTES:
            return self._deviate(f"a message of {len(msg)} bytes (limit {MAX_MESSAGE_BYTES})")
        kind, payload = msg[:1], msg[1:]
        if kind == b"P":
            if self.stub_code is None or f.messages != 1 or payload:
                return self._deviate("the stub's code was asked for out of turn")
            return self.stub_code
        if kind == b"J":
            if f.job_sent or payload:
                return self._deviate("the job was asked for twice")
            f.job_sent = True
            return self.key + self.job
        if not f.job_sent:
            return self._deviate(f"{kind!r} before the job")
        if kind in KEYED:
            if not hmac.compare_digest(payload[:KEY_BYTES], self.key):
                why = f"a {kind.decode('ascii')} message without the run's key (not the stub's)"
                return self._deviate(why)
            payload = payload[KEY_BYTES:]
        if kind == b"V":
            return self._record(payload)
        if self.role == "check":
            return self._handle_check(kind, payload)
        return self._handle_candidate(kind, payload)

    def _record(self, payload: bytes) -> bytes | None:
        f = self.facts
        text = _text(payload, MAX_DETAIL_CHARS + 64)
        if text is None:
            return self._deviate("a refusal record that is not UTF-8")
        kind, _, detail = text.partition("\n")
        if kind not in GUEST_KINDS or self.role != "candidate":
            return self._deviate(f"an unknown refusal record kind {kind[:40]!r}")
        entry = (kind, detail[:MAX_DETAIL_CHARS])
        if entry in f.records:
            return ACK
        # every kind is kept at least once (there are few), so a flood of one cannot hide another
        if len(f.records) >= MAX_RECORDS and kind in f.kinds:
            f.records_dropped += 1
            return ACK
        f.records.append(entry)
        return ACK

    def _handle_candidate(self, kind: bytes, payload: bytes) -> bytes | None:
        f = self.facts
        now = self.clock()
        if kind == b"N":
            if payload or f.outstanding is not None:
                return self._deviate("a second request while one was out")
            if f.load_error is not None:
                return self._deviate("a request after the program failed to load")
            if f.first_request_at is None:
                f.first_request_at = now
                f.first_request_cpu = self.own_time()
            return self._next_request()
        if kind == b"R":
            case = f.outstanding
            if case is None:
                return self._deviate("a result nobody asked for")
            status, body = payload[:1], payload[1:]
            if status not in (b"o", b"e", b"t", b"d", b"h", b"z"):
                return self._deviate("a result of unknown status")
            digest = None
            if status in (b"h", b"z"):
                head, newline, body = body.partition(b"\n")
                digest = _decode(head[: MAX_DIGEST_TEXT + 1])
                if not newline or digest is None or not DIGEST.fullmatch(digest):
                    return self._deviate("a result with a malformed digest")
                status = b"o" if status == b"h" else b"e"
            text = _decode(body)
            if text is None:
                return self._deviate("a result that is not UTF-8")
            if status == b"o" and len(text) > MAX_RESULT_CHARS:
                return self._deviate("a result over the size limit")
            if status != b"o" and len(text) > MAX_ERROR_CHARS:
                text = text[:MAX_ERROR_CHARS] + "…"
            case.answered_at, case.ok, case.text = now, status == b"o", text
            if self.case_clock is not None:
                case.answered_cpu = self.case_clock()
            # an error either way: the note only says which resource it may have been
            case.thread_recursion = status == b"t"
            case.deep_recursion = status == b"d"
            case.digest = digest
            f.last_result_at = now
            f.last_result_cpu = self.own_time()
            self.source.deliver(case.ok, case.text)
            return self._next_request()
        if kind == b"L":
            if f.first_request_at is not None or f.load_error is not None:
                return self._deviate("a load failure after the program had loaded")
            text = _text(payload, MAX_ERROR_CHARS)
            if text is None:
                return self._deviate("a load error that is not UTF-8")
            f.load_error = text or "the program failed to load"
            self.source.candidate_gone(f"the program failed to load: {f.load_error}")
            return ACK
        if kind == b"S":
            index = _decode(payload[:12])
            if index is None or not index.isascii() or not index.isdigit() or len(payload) > 10:
                return self._deviate("a malformed changed-answer note")
            i = int(index)
            rec = f.cases[i] if i < len(f.cases) else None
            if rec is None or rec.answered_at is None or not rec.ok:
                return self._deviate("a changed-answer note for no answer")
            rec.changed = True
            return ACK
        if kind == b"U":
            name = _text(payload, 64)
            if name is None or not name.isidentifier():
                return self._deviate("a malformed route hint")
            if name not in f.hints and len(f.hints) < MAX_HINTS:
                f.hints.append(name)
            return ACK
        return self._deviate(f"an unknown message kind {kind!r}")

    def _next_request(self) -> bytes:
        literal = self.source.next_request()
        if literal is None:
            return END
        self.facts.cases.append(
            CaseRecord(
                index=len(self.facts.cases),
                handed_at=self.clock(),
                handed_cpu=None if self.case_clock is None else self.case_clock(),
            )
        )
        return b"C" + literal.encode("utf-8")

    def _handle_check(self, kind: bytes, payload: bytes) -> bytes | None:
        f = self.facts
        if f.check_done:
            return self._deviate("a message after the check finished")
        if kind == b"A":
            literal = _decode(payload)
            if literal is None or self.caller is None:
                return self._deviate("a malformed call")
            f.check_calls += 1
            answer, text = self.caller(literal)
            return answer.encode("ascii") + text.encode("utf-8", "backslashreplace")
        if kind == b"D":
            status, body = payload[:1], payload[1:]
            error = _text(body, MAX_ERROR_CHARS)
            if status not in (b"o", b"e") or error is None:
                return self._deviate("a malformed check outcome")
            f.check_done, f.check_ok = True, status == b"o"
            f.check_error = None if f.check_ok else (error or "the check failed")
            self.source.candidate_gone("the check finished")
            return ACK
        return self._deviate(f"an unknown message kind {kind!r}")


class Bridge:
    """Check mode: the check guest's calls of ``candidate(...)`` become the candidate guest's
    requests, and its results the check guest's answers. Only literals cross; both sides wait at most
    until the deadline. (Two C queues: a hand-over costs a few microseconds, and a check may call the
    candidate hundreds of times.)"""

    def __init__(self, deadline: float, *, clock: Callable[[], float] = time.perf_counter) -> None:
        self.deadline = deadline
        self.clock = clock
        self._calls: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._answers: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._gone: str | None = None

    def _wait(self, q: queue.SimpleQueue[object]) -> object:
        while True:
            left = self.deadline - self.clock()
            if left <= 0:
                return _TIMEOUT
            try:
                return q.get(timeout=min(left, 60.0))
            except queue.Empty:
                continue

    # -- the check guest's side ---------------------------------------------------------------------
    def call(self, literal: str) -> tuple[str, str]:
        """``("o", repr)``, ``("e", "Name\\nmessage")`` or ``("x", why)``."""
        if self._gone is not None:
            return ("x", self._gone)
        self._calls.put(literal)
        answer = self._wait(self._answers)
        if answer is _TIMEOUT:
            return ("x", "the time limit was reached")
        if answer is _GONE:
            return ("x", self._gone or "the candidate ended")
        assert isinstance(answer, tuple)
        return answer

    def check_done(self) -> None:
        self._calls.put(_GONE)

    # -- the candidate guest's side (a RequestSource) -----------------------------------------------
    def next_request(self) -> str | None:
        item = self._wait(self._calls)
        if not isinstance(item, str) or self.clock() >= self.deadline:
            if item is _GONE:
                self._calls.put(_GONE)  # every later question gets the same answer
            return None  # a call nobody waits for any more is never handed out
        return item

    def deliver(self, ok: bool, text: str) -> None:
        if ok:
            self._answers.put(("o", text))
        else:
            name, _, message = text.partition(": ")
            self._answers.put(("e", f"{name}\n{message}" if message else f"{name}\n"))

    def candidate_gone(self, reason: str) -> None:
        if self._gone is None:
            self._gone = reason
        self._answers.put(_GONE)
        self._calls.put(_GONE)


#: what the bridge's queues carry besides literals and answers
_GONE, _TIMEOUT = object(), object()


def case_results(
    facts: SessionFacts,
    n_cases: int,
    *,
    timed_out: bool,
    ended: str | None = None,
    hidden: frozenset[int] = frozenset(),
) -> tuple[CaseResult, ...]:
    """One result per case, in order. Answered ones as answered (their duration the host's); the one
    out when time ran out is ``timeout`` (its duration: from its hand-out to the run's end, where the
    backend stamped it: ``Session.end``); after a load failure or a deviation every other case is an
    error saying so; any other unanswered case is ``missing`` (never a pass). The cases in ``hidden``
    are marked so."""
    return tuple(
        _case_result(facts, i, timed_out=timed_out, ended=ended, hidden=i in hidden) for i in range(n_cases)
    )


def _case_result(
    facts: SessionFacts, i: int, *, timed_out: bool, ended: str | None, hidden: bool
) -> CaseResult:
    rec = facts.cases[i] if i < len(facts.cases) else None
    if rec is not None and rec.answered_at is not None:
        duration_s = max(0.0, rec.answered_at - rec.handed_at)
        cpu_s = (
            None
            if rec.handed_cpu is None or rec.answered_cpu is None
            else max(0.0, rec.answered_cpu - rec.handed_cpu)
        )
        if rec.changed:
            # what the caller holds is not what was read when the call returned: the call's failure
            return CaseResult(
                index=i,
                hidden=hidden,
                status="error",
                error=CHANGED_AFTER_RETURN,
                duration_s=duration_s,
                cpu_s=cpu_s,
            )
        return CaseResult(
            index=i,
            hidden=hidden,
            status="ok" if rec.ok else "error",
            result_repr=rec.text if rec.ok else None,
            error=None if rec.ok else rec.text,
            duration_s=duration_s,
            digest=rec.digest,
            cpu_s=cpu_s,
        )
    if facts.deviation is not None:
        return CaseResult(
            index=i, hidden=hidden, status="error", error=f"protocol deviation: {facts.deviation}"
        )
    if facts.load_error is not None:
        return CaseResult(index=i, hidden=hidden, status="error", error=f"{LOAD_FAILED}{facts.load_error}")
    if rec is not None and timed_out:
        # how long the host waited for it before the deadline stopped the guest (0: not stamped)
        held = max(0.0, facts.ended_at - rec.handed_at) if facts.ended_at is not None else 0.0
        return CaseResult(
            index=i,
            hidden=hidden,
            status="timeout",
            error="wall-clock limit reached",
            duration_s=held,
            memory_grown=rec.memory_grown,
            memory_left=rec.memory_left,
        )
    if rec is not None and ended:
        return CaseResult(index=i, hidden=hidden, status="missing", error=ended)
    return CaseResult(index=i, hidden=hidden, status="missing")
