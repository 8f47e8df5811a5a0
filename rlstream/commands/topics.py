"""``rlstream topics``: create the topic catalog on the cluster (idempotent)."""

from __future__ import annotations

import typer

from infra.kafka.admin import ensure_topics
from rlstream.commands._common import echo_json, handle_errors
from rlstream.commands.broker import bootstrap_servers
from rlstream.settings import get_settings
from schemas.topics import CATALOG


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="The topics of the event log.", no_args_is_help=True)
    app.add_typer(group, name="topics")

    @group.command("create")
    @handle_errors
    def create(as_json: bool = typer.Option(False, "--json", help="print one JSON object per topic")) -> None:
        """Create every catalog topic that is missing (kept forever: retention.ms=-1).

        Existing topics are reported, not changed; one with fewer partitions than configured makes the
        command exit 1.
        """
        settings = get_settings()
        bootstrap = bootstrap_servers()
        results = ensure_topics(bootstrap, settings.kafka, CATALOG)
        for r in results:
            if as_json:
                echo_json(
                    {
                        "topic": r.name,
                        "status": r.status,
                        "partitions": r.partitions,
                        "wanted_partitions": r.wanted_partitions,
                        "message": r.message,
                    }
                )
            else:
                mark = "!" if not r.ok else ("+" if r.status == "created" else "=")
                typer.echo(f"{mark} {r.name}: {r.message}")
        if not as_json:
            created = sum(r.status == "created" for r in results)
            typer.echo(f"{created} created, {len(results) - created} already there ({bootstrap})", err=True)
        if not all(r.ok for r in results):
            raise typer.Exit(1)
