"""The host half of the trusted verdict protocol: the job sent into the sandbox, and the records read
back over the channel the program cannot write to without the job's nonce.

A record is ``b"RLS1" + nonce + JSON``. Records without the nonce are ignored (and counted), so text a
program prints, or a record it makes up without the nonce, never becomes a result. A case with no
record is ``missing``; the case that was running when the wall clock ran out is ``timeout``. Nothing
here compares results with expected outputs: that belongs to the reward.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Literal

from schemas.rollout import CaseResult

Mode = Literal["cases", "check", "script"]
MAGIC = b"RLS1"
#: one record may not exceed this (a result's repr included); the channel as a whole is capped too
MAX_RECORD_BYTES = 1 << 20
MAX_REPR_CHARS = 64 * 1024


def harness_source() -> str:
    return resources.files("streams.sandbox").joinpath("guest_harness.pysrc").read_text("utf-8")


def new_nonce() -> str:
    return secrets.token_hex(16)


def encode_job(
    *,
    nonce: str,
    mode: Mode,
    code: str,
    channel: str,
    entry_point: str = "",
    inputs: tuple[str, ...] = (),
    check: str = "",
    block: tuple[str, ...] = (),
    read_roots: tuple[str, ...] = (),
) -> bytes:
    job = {
        "nonce": nonce,
        "mode": mode,
        "code": code,
        "channel": channel,
        "entry_point": entry_point,
        "inputs": list(inputs),
        "check": check,
        "policy": {"block": list(block), "read_roots": list(read_roots)},
    }
    return json.dumps(job).encode("utf-8")


@dataclass
class Verdicts:
    """What the channel said: per-case results, whether the program loaded, violations seen."""

    loaded: bool | None = None
    load_error: str | None = None
    load_duration_s: float = 0.0
    cases: dict[int, CaseResult] = field(default_factory=dict)
    started: list[int] = field(default_factory=list)
    done: bool = False
    memory_error: bool = False
    violations: list[str] = field(default_factory=list)
    forged: int = 0


def decode_record(frame: bytes, nonce: str) -> dict[str, Any] | None:
    """The record in ``frame`` when it carries this job's nonce, else None."""
    head = MAGIC + bytes.fromhex(nonce)
    if len(frame) > MAX_RECORD_BYTES or not frame.startswith(head):
        return None
    try:
        record = json.loads(frame[len(head) :].decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def split_length_prefixed(data: bytes) -> list[bytes]:
    """Frames of a ``4-byte big-endian length + body`` stream; a torn tail is dropped."""
    frames, pos = [], 0
    while pos + 4 <= len(data):
        n = int.from_bytes(data[pos : pos + 4], "big")
        if n > MAX_RECORD_BYTES or pos + 4 + n > len(data):
            break
        frames.append(data[pos + 4 : pos + 4 + n])
        pos += 4 + n
    return frames


def _clip(text: Any, limit: int) -> str | None:
    if text is None:
        return None
    s = str(text)
    return s if len(s) <= limit else s[:limit] + "…"


def read_verdicts(frames: list[bytes], nonce: str) -> Verdicts:
    v = Verdicts()
    for frame in frames:
        rec = decode_record(frame, nonce)
        if rec is None:
            v.forged += 1
            continue
        kind = rec.get("t")
        if kind == "load":
            v.loaded = rec.get("s") == "ok"
            v.load_error = _clip(rec.get("e"), 2000)
            v.load_duration_s = max(0.0, float(rec.get("d") or 0.0))
        elif kind == "start" and isinstance(rec.get("i"), int):
            v.started.append(rec["i"])
        elif kind == "case" and isinstance(rec.get("i"), int) and rec["i"] >= 0:
            i = rec["i"]
            if i in v.cases:  # a second record for one case is not believed
                v.forged += 1
                continue
            ok = rec.get("s") == "ok"
            v.cases[i] = CaseResult(
                index=i,
                status="ok" if ok else "error",
                result_repr=_clip(rec.get("r"), MAX_REPR_CHARS) if ok else None,
                error=None if ok else _clip(rec.get("e"), 2000),
                duration_s=max(0.0, float(rec.get("d") or 0.0)),
            )
        elif kind == "done":
            v.done = True
        elif kind == "memory":
            v.memory_error = True
        elif kind == "violation" and isinstance(rec.get("v"), str) and rec["v"] not in v.violations:
            v.violations.append(rec["v"])
    return v


def case_results(v: Verdicts, n_cases: int, *, timed_out: bool) -> tuple[CaseResult, ...]:
    """One result per case, in order: reported ones as reported; the case running when time ran
    out is ``timeout``; every other unreported case is ``missing`` (never a pass)."""
    running = next((i for i in reversed(v.started) if i not in v.cases), None)
    out = []
    for i in range(n_cases):
        if i in v.cases:
            out.append(v.cases[i])
        elif timed_out and i == running:
            out.append(CaseResult(index=i, status="timeout", error="wall-clock limit reached"))
        else:
            out.append(CaseResult(index=i, status="missing"))
    return tuple(out)
