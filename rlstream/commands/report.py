"""``rlstream report RUN_ID --out DIR``: a run's HTML page with PNG charts, from the projections (or
the log with ``--from-log``)."""

from __future__ import annotations

from pathlib import Path

import typer

from rlstream.commands._common import handle_errors
from rlstream.commands.broker import bootstrap_servers
from rlstream.settings import get_settings
from schemas.errors import UsageError


def _progress(message: str) -> None:
    typer.echo(f"report: {message}", err=True)


def register(app: typer.Typer) -> None:
    @app.command("report")
    @handle_errors
    def report(
        run_id: str = typer.Argument(..., help="the run to report on (its run id)"),
        out: Path = typer.Option(..., "--out", help="directory to write index.html and the PNG charts into"),
        db: str | None = typer.Option(
            None,
            "--db",
            help="projection database URL (default: setting projections.database_url, else "
            "<home>/projections.sqlite)",
        ),
        from_log: bool = typer.Option(False, "--from-log", help="fold the log instead of the projections"),
    ) -> None:
        """Reward per policy version and learner step, pass@k, verdict mix and reasons, staleness,
        sandbox backends and latency, agreement with human reviews. Written atomically: a failed report
        leaves nothing behind. Exit 2 for an unknown run id (the known ones are listed)."""
        if from_log and db is not None:
            raise UsageError("give --db URL or --from-log, not both")
        # imported here: SQLAlchemy and matplotlib cost every other command seconds of start-up
        from consumers.report.load import load_from_db, load_from_log
        from consumers.report.write import write_report

        if from_log:
            data = load_from_log(bootstrap_servers(), run_id, _progress)
        else:
            data = load_from_db(db or get_settings().projections_url, run_id, _progress)
        written = write_report(data, out, _progress)
        _progress(f"{len(written.charts)} charts, {len(written.no_data)} without data")
        typer.echo(str(written.index))
