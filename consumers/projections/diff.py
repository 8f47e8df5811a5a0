"""Row-for-row comparison of two projection databases (e.g. the live one and a rebuild from offset 0).

Every projected table is compared by primary key; values are normalised so that the same fact reads
the same on SQLite and PostgreSQL (times as UTC, JSON with sorted keys). The stored offsets are not
compared: a live projector may simply have read further.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, inspect, select

from consumers.projections.fold import primary_key
from consumers.projections.models import PROJECTED, Base, table_of


@dataclass(frozen=True)
class Difference:
    table: str
    key: tuple[Any, ...]
    #: "only in A", "only in B" or "column X: A=... B=..."
    what: str

    def __str__(self) -> str:
        key = ", ".join(f"{k}" for k in self.key)
        return f"{self.table} [{key}]: {self.what}"


@dataclass(frozen=True)
class TableCount:
    table: str
    rows_a: int
    rows_b: int
    differences: int


def _norm(value: Any) -> Any:
    if isinstance(value, datetime):
        t = value.astimezone(UTC) if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return t.isoformat()
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return value


def _rows(engine: Engine, model: type[Base]) -> dict[tuple[Any, ...], dict[str, Any]]:
    if model.__tablename__ not in inspect(engine).get_table_names():
        return {}
    pk = primary_key(model)
    columns = list(table_of(model).columns)
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    with engine.connect() as conn:
        for row in conn.execute(select(*columns)).mappings():
            values = {c.name: _norm(row[c.name]) for c in columns}
            out[tuple(values[k] for k in pk)] = values
    return out


def compare_table(
    engine_a: Engine, engine_b: Engine, model: type[Base]
) -> tuple[TableCount, list[Difference]]:
    a, b = _rows(engine_a, model), _rows(engine_b, model)
    name = model.__tablename__
    diffs: list[Difference] = []
    for key in sorted(a.keys() | b.keys(), key=repr):
        ra, rb = a.get(key), b.get(key)
        if rb is None:
            diffs.append(Difference(name, key, "only in A"))
        elif ra is None:
            diffs.append(Difference(name, key, "only in B"))
        else:
            for col, va in ra.items():
                if va != rb[col]:
                    diffs.append(Difference(name, key, f"column {col}: A={_short(va)} B={_short(rb[col])}"))
    return TableCount(name, len(a), len(b), len(diffs)), diffs


def compare(engine_a: Engine, engine_b: Engine) -> Iterator[tuple[TableCount, list[Difference]]]:
    """Each projected table's row counts and differences, table by table."""
    for model in PROJECTED:
        yield compare_table(engine_a, engine_b, model)


def _short(value: Any, width: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."
