"""``rlstream tasks``: publish tasks onto ``rl.tasks`` (the first upstream path)."""

from __future__ import annotations

from pathlib import Path

import typer

from infra.kafka.producer import EventProducer
from producers.ingest.humaneval import humaneval_tasks
from producers.ingest.publisher import TaskPublisher
from rlstream.commands._common import echo_json, handle_errors
from rlstream.commands.broker import bootstrap_servers
from rlstream.settings import get_settings
from schemas.errors import UsageError


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Publish coding tasks onto the log.", no_args_is_help=True)
    app.add_typer(group, name="tasks")

    @group.command("publish")
    @handle_errors
    def publish(
        file: Path | None = typer.Argument(None, help="a .jsonl file, one task per line"),
        humaneval: bool = typer.Option(False, "--humaneval", help="the 164 HumanEval tasks"),
        limit: int | None = typer.Option(None, "--limit", min=1, help="with --humaneval: the first N"),
        strict: bool = typer.Option(False, "--strict", help="publish nothing if any line is bad"),
        as_json: bool = typer.Option(False, "--json", help="print a JSON summary"),
    ) -> None:
        """Validate and publish tasks. Bad lines are reported with their line number and field; without
        --strict the valid lines are still published and the command exits 2."""
        if (file is None) == (not humaneval):
            raise UsageError("give either a FILE.jsonl or --humaneval (not both)")
        if limit is not None and not humaneval:
            raise UsageError("--limit applies to --humaneval only")
        settings = get_settings()
        with EventProducer(bootstrap_servers(), source="rlstream/tasks", run_id=settings.run_id) as producer:
            publisher = TaskPublisher(producer)
            if humaneval:
                ids = publisher.publish_many(humaneval_tasks(limit))
                errors: list[str] = []
                source = "humaneval"
            else:
                assert file is not None
                report = publisher.publish_file(file, strict=strict)
                ids, errors, source = report.published, [str(e) for e in report.errors], str(file)
        for err in errors:
            typer.echo(f"{source}: {err}", err=True)
        if as_json:
            echo_json({"published": len(ids), "errors": errors, "source": source})
        else:
            typer.echo(
                f"published {len(ids)} task(s) from {source} to rl.tasks"
                + (f", {len(errors)} bad line(s)" if errors else "")
            )
        if errors:
            raise typer.Exit(2)
