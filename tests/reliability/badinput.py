"""Hypothesis strategies for hostile records, and a seeded draw of them for the broker suite.

Every bad record is a (key, value, headers) triple aimed at one topic, with the words its dead
letter's error must contain. The kinds: garbage bytes, oversized values (near the broker's 1 MiB
record limit), missing or malformed CloudEvents headers, unknown and future schema versions, fields of
the wrong JSON type, NaN/infinity, JSON nested thousands deep, and well-formed events of another
class than the topic carries.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from schemas import export
from schemas.codec import decode
from schemas.envelope import REQUIRED_HEADERS
from schemas.errors import EventDecodeError
from schemas.registry import BY_CE_TYPE, LATEST, split_ce_type
from schemas.topics import by_name

GOLDEN = Path(export.__file__).parent / "golden"
Headers = list[tuple[str, bytes]]


@dataclass(frozen=True)
class Bad:
    kind: str
    topic: str
    key: bytes
    value: bytes | None
    headers: Headers
    #: what the dead letter's error must say (each, case-insensitive)
    reason: tuple[str, ...]


def golden(ce_type: str) -> tuple[Headers, dict[str, Any]]:
    doc = json.loads((GOLDEN / f"{ce_type}.json").read_text())
    return [(k, str(v).encode()) for k, v in doc["headers"].items()], doc["body"]


def latest_ce_type(topic: str) -> str:
    """The ce_type of the newest version of the event class a catalog topic carries."""
    name = by_name(topic).event
    for cls in LATEST.values():
        if cls.__name__ == name:
            return cls.ce_type()
    raise KeyError(name)


def _with_header(headers: Headers, name: str, value: bytes | None) -> Headers:
    out = [(k, v) for k, v in headers if k != name]
    return out if value is None else [*out, (name, value)]


def _float_paths(body: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(body, float):
        return [path]
    if isinstance(body, dict):
        return [p for k, v in body.items() for p in _float_paths(v, (*path, k))]
    if isinstance(body, list):
        return [p for i, v in enumerate(body) for p in _float_paths(v, (*path, i))]
    return []


def _set(body: Any, path: tuple[Any, ...], value: Any) -> Any:
    body = json.loads(json.dumps(body))
    target = body
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return body


def _wrong_json_for(value: Any) -> st.SearchStrategy[Any]:
    """A JSON value of another type than ``value`` (so validation must fail on that field)."""
    choices: list[st.SearchStrategy[Any]] = [
        st.dictionaries(st.text(max_size=5), st.integers(), min_size=1, max_size=3),
        st.lists(st.integers(), min_size=1, max_size=3).map(lambda xs: [{"x": x} for x in xs]),
    ]
    if not isinstance(value, bool):
        choices.append(st.booleans())
    if not isinstance(value, str):
        # never a word a lax bool or number would accept ("y", "on", "1")
        choices.append(st.text(alphabet="xz", min_size=1, max_size=20))
    if isinstance(value, str | list | dict):
        choices.append(st.floats(allow_nan=False, allow_infinity=False, min_value=1.5, max_value=1e9))
    return st.one_of(choices)


def _decodes(value: bytes, headers: Headers) -> bool:
    try:
        decode(value, headers)
    except EventDecodeError:
        return False
    return True


def bad_records(topic: str, key: bytes) -> st.SearchStrategy[Bad]:
    """Any one hostile record for ``topic``."""
    return st.one_of(list(bad_kinds(topic, key).values()))


def bad_kinds(topic: str, key: bytes) -> dict[str, st.SearchStrategy[Bad]]:
    """One strategy per kind of hostile record for ``topic``, by kind."""
    ce_type = latest_ce_type(topic)
    headers, body = golden(ce_type)
    base, version = split_ce_type(ce_type)
    # fields with a value in the sample (a null may stand for an optional field any type could fill)
    required = [k for k, v in body.items() if k != "schema_version" and v is not None]
    others = sorted(t for t in BY_CE_TYPE if split_ce_type(t)[0] != base and (GOLDEN / f"{t}.json").exists())

    def as_bad(kind: str, reason: tuple[str, ...]) -> Callable[[tuple[bytes | None, Headers]], Bad]:
        return lambda vh: Bad(kind, topic, key, vh[0], vh[1], reason)

    body_bytes = json.dumps(body).encode()
    garbage = st.binary(min_size=0, max_size=300).map(lambda b: (b"\xff" + b, headers))
    oversized = st.integers(900_000, 980_000).map(lambda n: (b"\xfe" * n, headers))
    missing = st.sets(st.sampled_from(REQUIRED_HEADERS), min_size=1).map(
        lambda names: (body_bytes, [(k, v) for k, v in headers if k not in names])
    )
    not_utf8 = st.sampled_from(REQUIRED_HEADERS).map(
        lambda name: (body_bytes, _with_header(headers, name, b"\xc3\x28\xff"))
    )
    bad_time = st.text(alphabet="abc:-/ ", min_size=1, max_size=20).map(
        lambda t: (body_bytes, _with_header(headers, "ce_time", t.encode()))
    )
    future = st.integers(version + 1, 10_000).map(
        lambda v: (body_bytes, _with_header(headers, "ce_type", f"{base}.v{v}".encode()))
    )
    unknown = (
        st.from_regex(r"[a-z]{3,12}\.[a-z]{3,12}", fullmatch=True)
        .filter(lambda t: f"rlstream.{t}" not in LATEST)
        .map(lambda t: (body_bytes, _with_header(headers, "ce_type", f"rlstream.{t}.v1".encode())))
    )
    wrong_field = (
        st.sampled_from(required)
        .flatmap(
            lambda f: _wrong_json_for(body[f]).map(
                lambda v: (json.dumps({**body, f: v}).encode(), headers, f)
            )
        )
        .filter(lambda vhf: not _decodes(vhf[0], vhf[1]))  # e.g. a dict where any mapping is fine
    )
    deep = st.integers(3_000, 50_000).map(
        lambda n: (
            json.dumps({**body, "extra": "@DEEP@"}).replace('"@DEEP@"', "[" * n + "]" * n).encode(),
            headers,
        )
    )
    floats = _float_paths(body)
    nan = (
        st.tuples(st.sampled_from(floats), st.sampled_from([math.nan, math.inf, -math.inf])).map(
            lambda pv: (json.dumps(_set(body, pv[0], pv[1])).encode(), headers)
        )
        if floats
        else None
    )
    other = st.sampled_from(others).map(lambda t: (json.dumps(golden(t)[1]).encode(), golden(t)[0]))
    kinds: dict[str, st.SearchStrategy[Bad]] = {
        "garbage": garbage.map(as_bad("garbage", ("not JSON",))),
        "oversized": oversized.map(as_bad("oversized", ("not JSON", "first"))),
        "missing-headers": missing.map(as_bad("missing-headers", ("missing CloudEvents header",))),
        "header-not-utf8": not_utf8.map(as_bad("header-not-utf8", ("not UTF-8",))),
        "bad-ce_time": bad_time.map(as_bad("bad-ce_time", ("ce_time",))),
        "future-version": future.map(as_bad("future-version", ("newer than this build knows",))),
        "unknown-type": unknown.map(as_bad("unknown-type", ("unknown event type",))),
        "wrong-field-type": wrong_field.map(
            lambda vhf: Bad("wrong-field-type", topic, key, vhf[0], vhf[1], (f"field {vhf[2]}",))
        ),
        "deep-nesting": deep.map(as_bad("deep-nesting", ("nested too deeply",))),
        "other-event-class": other.map(as_bad("other-event-class", (f"{topic} carries",))),
    }
    if nan is not None:
        kinds["nan"] = nan.map(as_bad("nan", ("finite number",)))
    return kinds


def draw(strategy: st.SearchStrategy[Any], n: int, at: int = 0) -> list[Any]:
    """``n`` examples of ``strategy``, the same on every run (a seeded, derandomised generation)."""
    out: list[Any] = []

    @settings(
        max_examples=n,
        database=None,
        derandomize=True,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        deadline=None,
    )
    @seed(at)
    @given(strategy)
    def collect(example: Any) -> None:
        out.append(example)

    collect()
    return out[:n]
