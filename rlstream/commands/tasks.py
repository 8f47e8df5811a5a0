"""``rlstream tasks``: publish tasks onto ``rl.tasks`` (the first upstream path)."""

from __future__ import annotations

from pathlib import Path

import typer

from infra.kafka.producer import EventProducer
from producers.ingest.humaneval import humaneval_tasks
from producers.ingest.library import SELECTIONS, library_tasks
from producers.ingest.publisher import TaskPublisher
from producers.ingest.split import HoldOut, read_task_list
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
        library: str | None = typer.Option(
            None,
            "--library",
            help=f"the graded task library: {'|'.join(SELECTIONS)} (easy: levels 1-2, medium: 1-4, all: 1-5)",
        ),
        limit: int | None = typer.Option(
            None, "--limit", min=1, help="with --humaneval or --library: the first N (easiest first)"
        ),
        strict: bool = typer.Option(False, "--strict", help="publish nothing if any line is bad"),
        eval_fraction: float = typer.Option(
            0.0, "--eval-fraction", min=0.0, max=0.99, help="hold out this fraction of the tasks (by hash)"
        ),
        eval_tasks: Path | None = typer.Option(
            None, "--eval-tasks", help="hold out the task ids listed in this file (one per line)"
        ),
        as_json: bool = typer.Option(False, "--json", help="print a JSON summary"),
    ) -> None:
        """Validate and publish tasks. Bad lines are reported with their line number and field; without
        --strict the valid lines are still published and the command exits 2. Held-out tasks
        (--eval-fraction, --eval-tasks) are published with split "eval": never trained on, only
        evaluated."""
        if sum((file is not None, humaneval, library is not None)) != 1:
            raise UsageError("give exactly one of FILE.jsonl, --humaneval or --library easy|medium|all")
        if limit is not None and file is not None:
            raise UsageError("--limit applies to --humaneval and --library only")
        named = read_task_list(eval_tasks) if eval_tasks is not None else frozenset()
        hold_out = HoldOut(eval_fraction, named)
        settings = get_settings()
        with EventProducer(bootstrap_servers(), source="rlstream/tasks", run_id=settings.run_id) as producer:
            publisher = TaskPublisher(producer)
            if humaneval or library is not None:
                chosen = list(humaneval_tasks(limit)) if humaneval else library_tasks(library or "")[:limit]
                tasks = hold_out.apply(chosen)
                ids = publisher.publish_many(tasks)
                errors: list[str] = []
                source = "humaneval" if humaneval else f"library:{library}"
                held = sum(t.split == "eval" for t in tasks)
            else:
                assert file is not None
                report = publisher.publish_file(file, strict=strict, hold_out=hold_out)
                ids, errors, source = report.published, [str(e) for e in report.errors], str(file)
                held = report.held_out
        for err in errors:
            typer.echo(f"{source}: {err}", err=True)
        if as_json:
            echo_json({"published": len(ids), "held_out": held, "errors": errors, "source": source})
        else:
            typer.echo(
                f"published {len(ids)} task(s) from {source} to rl.tasks"
                + (f" ({held} held out for evaluation)" if held else "")
                + (f", {len(errors)} bad line(s)" if errors else "")
            )
        if errors:
            raise typer.Exit(2)
