"""``rlstream project``: the SQL projections of the log (run, migrate, rebuild, diff)."""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType
from typing import TYPE_CHECKING

import typer

from rlstream.commands._common import echo_json, handle_errors
from rlstream.commands.broker import bootstrap_servers
from rlstream.settings import get_settings
from schemas.errors import UsageError

if TYPE_CHECKING:
    from consumers.projections.projector import CatchUp

# SQLAlchemy and Alembic are imported by the commands that use them, not by every rlstream command

URL_HELP = "database URL (default: setting projections.database_url, else <home>/projections.sqlite)"


def _stop_on_signals() -> threading.Event:
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


def _progress(c: CatchUp) -> None:
    typer.echo(f"[project] applied {c.applied} record(s) ({c.rate:.0f}/s), {c.remaining} left", err=True)


def _catch_up(url: str, stop: threading.Event) -> int:
    from consumers.projections.projector import Projector
    from consumers.projections.store import describe, make_engine

    settings = get_settings()
    engine = make_engine(url)
    try:
        projector = Projector(bootstrap_servers(), engine, settings.projections)
        stats = projector.catch_up(stop, progress=_progress)
    finally:
        engine.dispose()
    typer.echo(
        f"[project] {describe(engine)}: caught up, {stats.consumed} record(s) applied in "
        f"{stats.transactions} transaction(s), {stats.dead_lettered} undecodable skipped",
        err=True,
    )
    return stats.consumed


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="SQL projections of the event log (SQLite by default, PostgreSQL by URL).", no_args_is_help=True
    )
    app.add_typer(group, name="project")

    @group.command("run")
    @handle_errors
    def run(
        follow: bool = typer.Option(
            True, "--follow/--once", help="keep following the log, or catch up to its current end and exit"
        ),
        url: str | None = typer.Option(None, "--url", help=URL_HELP),
    ) -> None:
        """Project every event topic into the database, exactly once (offsets stored with the rows)."""
        from consumers.projections.projector import Projector
        from consumers.projections.store import describe, make_engine

        logging.basicConfig(level=logging.INFO, format="%(asctime)s projector %(levelname)s %(message)s")
        settings = get_settings()
        target = url or settings.projections_url
        stop = _stop_on_signals()
        if not follow:
            _catch_up(target, stop)
            return
        engine = make_engine(target)
        try:
            typer.echo(f"[project] following the log into {describe(engine)} (Ctrl-C stops)", err=True)
            stats = Projector(bootstrap_servers(), engine, settings.projections).run(stop)
        finally:
            engine.dispose()
        typer.echo(f"[project] stopped: {stats.consumed} record(s) applied", err=True)

    @group.command("migrate")
    @handle_errors
    def migrate_cmd(url: str | None = typer.Option(None, "--url", help=URL_HELP)) -> None:
        """Create or upgrade the projection tables (Alembic, upgrade head)."""
        from consumers.projections.store import describe, make_engine, migrate

        engine = make_engine(url or get_settings().projections_url)
        try:
            revision = migrate(engine)
        finally:
            engine.dispose()
        typer.echo(f"{describe(engine)}: at revision {revision}")

    @group.command("rebuild")
    @handle_errors
    def rebuild(
        url: str = typer.Option(..., "--url", help="the database to build (must be empty, or --replace)"),
        replace: bool = typer.Option(False, "--replace", help="drop the projection tables there first"),
    ) -> None:
        """Build a fresh projection from offset 0 of every event topic up to the current end."""
        from consumers.projections.store import describe, drop_all, is_empty, make_engine

        engine = make_engine(url)
        try:
            if not is_empty(engine):
                if not replace:
                    raise UsageError(
                        f"{describe(engine)} already holds a projection",
                        hint="give the URL of a new database, or --replace to drop its tables first",
                    )
                drop_all(engine)
        finally:
            engine.dispose()
        _catch_up(url, _stop_on_signals())

    @group.command("diff")
    @handle_errors
    def diff(
        url_a: str = typer.Argument(..., help="database A"),
        url_b: str = typer.Argument(..., help="database B"),
        limit: int = typer.Option(20, "--limit", help="differences printed per table"),
        as_json: bool = typer.Option(False, "--json", help="one JSON object"),
    ) -> None:
        """Compare every projected table row for row; exit 1 on any difference (naming table and key)."""
        from consumers.projections.diff import compare
        from consumers.projections.store import make_engine

        a, b = make_engine(url_a), make_engine(url_b)
        tables = []
        found = 0
        try:
            for count, diffs in compare(a, b):
                found += len(diffs)
                tables.append(
                    {
                        "table": count.table,
                        "rows_a": count.rows_a,
                        "rows_b": count.rows_b,
                        "differences": [{"key": list(d.key), "what": d.what} for d in diffs[: max(limit, 0)]],
                        "total_differences": count.differences,
                    }
                )
                if not as_json:
                    state = "same" if not diffs else f"{count.differences} difference(s)"
                    typer.echo(f"{count.table}: A {count.rows_a} row(s), B {count.rows_b} row(s): {state}")
                    for d in diffs[: max(limit, 0)]:
                        typer.echo(f"  {d}")
        finally:
            a.dispose()
            b.dispose()
        if as_json:
            echo_json({"identical": found == 0, "tables": tables})
        elif found == 0:
            typer.echo("identical")
        if found:
            raise typer.Exit(1)
