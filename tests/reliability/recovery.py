"""The fault suite's recovery account: every fault a test injected, with the times it measured
(``Run.record``), gathered from every pytest worker's reports, printed as one table at the end of the
session and written as JSON (``--recovery-json``, default ``<temp>/rlstream-recovery.json``)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: the name under which a test hands its recoveries to the session (pytest ``user_properties``)
PROPERTY = "recovery"


def gathered(reports: Iterable[Any]) -> list[dict[str, Any]]:
    """The entries every test report carries, in the order the tests ran (each test's once)."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for report in reports:
        for name, value in getattr(report, "user_properties", ()):
            if name != PROPERTY or report.nodeid in seen:
                continue
            seen.add(report.nodeid)
            out.extend({"test": report.nodeid.rpartition("::")[2], **entry} for entry in value)
    return out


def table(entries: Sequence[dict[str, Any]]) -> list[str]:
    """One row per fault, one column per measured figure (seconds from the fault; ``-``: not seen)."""
    columns: list[str] = []
    for entry in entries:
        columns.extend(k for k in entry if k not in ("test", "fault") and k not in columns)
    header = ["fault", *columns]
    rows = [[str(e["fault"]), *(_cell(e.get(c)) for c in columns)] for e in entries]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in [header, *rows]]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def write(entries: Sequence[dict[str, Any]], path: Path) -> None:
    path.write_text(json.dumps(list(entries), indent=1) + "\n")
