"""Write a run report to a directory, atomically: everything is rendered into a temporary sibling
directory which is renamed into place only once complete, so a failed report leaves nothing
half-written (and a previous report in that place stays intact until the new one is whole)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from consumers.report.charts import all_charts, save
from consumers.report.data import RunReportData
from consumers.report.page import render_page
from schemas.errors import UsageError

#: files a directory must hold (nothing else but PNGs) for the report to replace it
_OURS_MARKER = '<meta name="generator" content="rlstream report">'


@dataclass(frozen=True)
class ReportWritten:
    index: Path
    charts: tuple[str, ...]
    no_data: tuple[str, ...]


def _replaceable(out: Path) -> bool:
    """An empty directory, or a previous report (index.html of ours plus PNGs only)."""
    entries = list(out.iterdir())
    if not entries:
        return True
    index = out / "index.html"
    if not index.is_file() or _OURS_MARKER not in index.read_text(errors="replace")[:2000]:
        return False
    return all(e.name == "index.html" or (e.is_file() and e.suffix == ".png") for e in entries)


def _swap_in(new: Path, out: Path) -> None:
    """Put ``new`` at ``out``; a previous report there is moved aside first and put back on failure."""
    if not out.exists():
        new.rename(out)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    old.rmdir()
    out.rename(old)
    try:
        new.rename(out)
    except BaseException:
        old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)


def write_report(
    data: RunReportData, out: Path, progress: Callable[[str], None] = lambda _: None
) -> ReportWritten:
    out = out.absolute()
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} exists and is not a directory")
    if out.is_dir() and not _replaceable(out):
        raise UsageError(
            f"--out {out} already holds files that are not an rlstream report",
            hint="choose an empty or new directory",
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        drawn: dict[str, bool] = {}
        for chart in all_charts():
            fig = chart.draw(data)
            drawn[chart.key] = fig is not None
            if fig is None:
                progress(f"chart {chart.key}: no data")
                continue
            save(fig, tmp / chart.filename)
            progress(f"chart {chart.key}: {chart.filename}")
        (tmp / "index.html").write_text(render_page(data, drawn), encoding="utf-8")
        tmp.chmod(0o755)
        _swap_in(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return ReportWritten(
        index=out / "index.html",
        charts=tuple(k for k, v in drawn.items() if v),
        no_data=tuple(k for k, v in drawn.items() if not v),
    )
