"""Recovery figures of a faulted run (:mod:`harness.faults` records them on its ``Run``): the throughput
back after a fault (:func:`throughput_back`), one table of every fault's figures (:func:`table`) and its
JSON (:func:`write`). Printed by the fault suite (``tests/reliability/test_faults.py``) and by
``python -m bench.recovery``, which injects the same faults outside pytest.

Throughput back: the committed output per second of the stage a fault hit (the pipeline's events; for the
learner, the samples it trained) in the ``before_s`` before the fault is the baseline; the figure is the
start of the first ``window_s`` after the fault in which at least ``share`` of that rate was committed
again (0 when nothing slowed down; a stop of ``d`` seconds at full speed after it reads about ``d``)."""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: the baseline's span before a fault, the span the rate is measured over after it, and the share of the
#: baseline that counts as "back"
BEFORE_S = 30.0
WINDOW_S = 10.0
SHARE = 0.9


def throughput_back(
    times: Iterable[float],
    t0: float,
    now: float,
    *,
    before_s: float = BEFORE_S,
    window_s: float = WINDOW_S,
    share: float = SHARE,
) -> float | None:
    """Seconds from the fault at ``t0`` until the output (commit ``times``, seconds) runs at ``share``
    of its rate in the ``before_s`` before it (from the first output, if that came later), measured
    over ``window_s``: the start of the first such window that lies after ``t0`` and ends by ``now``.
    None when there was no output before the fault or the rate has not come back by ``now``."""
    ordered = sorted(times)
    first = next((t for t in ordered if t < t0), None)
    if first is None:
        return None
    since = max(first, t0 - before_s)
    span = t0 - since
    if span < window_s:  # too little history for a baseline
        return None
    before = bisect.bisect_left(ordered, t0) - bisect.bisect_left(ordered, since)
    need = share * before / span * window_s
    # the count in [s, s + window) only rises when s moves onto an output: try t0 and each output after
    for start in [t0, *ordered[bisect.bisect_right(ordered, t0) :]]:
        if start + window_s > now:
            return None
        inside = bisect.bisect_left(ordered, start + window_s) - bisect.bisect_left(ordered, start)
        if inside >= need:
            return round(start - t0, 2)
    return None


def table(entries: Sequence[dict[str, Any]]) -> list[str]:
    """One row per fault, one column per measured figure (seconds from the fault; ``-``: not seen)."""
    columns: list[str] = []
    for entry in entries:
        columns.extend(k for k in entry if k not in ("test", "fault") and k not in columns)
    header = ["fault", *columns]
    rows = [[str(e["fault"]), *(cell(e.get(c)) for c in columns)] for e in entries]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [" | ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)) for row in [header, *rows]]


def cell(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if isinstance(value, float) else str(value)


def write(entries: Sequence[dict[str, Any]], path: Path) -> None:
    path.write_text(json.dumps(list(entries), indent=1) + "\n")
