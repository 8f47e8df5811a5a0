"""The fault suite's recovery account: every fault a test injected, with the times it measured
(``harness.faults.Run.record``), gathered from every pytest worker's reports, printed as one table at the
end of the session and written as JSON (``--recovery-json``, default ``<temp>/rlstream-recovery.json``;
the table and its figures: ``harness.recovery``)."""

from __future__ import annotations

from collections.abc import Iterable
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
