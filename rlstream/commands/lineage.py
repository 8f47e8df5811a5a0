"""``rlstream lineage SAMPLE_ID``: everything the log knows about one sample, in order."""

from __future__ import annotations

import json

import typer
from confluent_kafka import Message

from consumers.lineage import Lineage
from infra.kafka.replay import replay
from rlstream.commands._common import echo_json, handle_errors, printable
from rlstream.commands.broker import bootstrap_servers
from schemas.errors import EventDecodeError, InputError
from schemas.topics import EVENT_TOPICS


def _skip(msg: Message, exc: EventDecodeError) -> None:
    """Undecodable records are the dead-letter queue's business, not this sample's."""


def register(app: typer.Typer) -> None:
    @app.command("lineage")
    @handle_errors
    def lineage(
        sample_id: str = typer.Argument(..., help="<group_id>/<index>, e.g. run-1/HumanEval/0/0/3"),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    ) -> None:
        """Task -> prompt -> raw completion -> executed code -> per-case results -> reward components ->
        verdict and reasons -> policy version that produced it -> versions it was trained into ->
        human reviews (who changed what, when, and whether it came before training).
        Exit 1 when a stage is missing, 2 when the log has no such sample."""
        try:
            result = Lineage(sample_id)
        except ValueError as exc:
            raise InputError(str(exc), location="SAMPLE_ID") from None
        bootstrap = bootstrap_servers()
        for topic in EVENT_TOPICS:
            for item in replay(bootstrap, topic.name, on_undecodable=_skip):
                result.fold(item.envelope, item.event)
        out = result.result()
        if out["generation"] is None:
            raise InputError(f"no sample {sample_id!r} on the log", location="SAMPLE_ID")
        if as_json:
            echo_json(out)
        else:
            for key, value in out.items():
                shown = json.dumps(value, indent=2) if isinstance(value, dict | list) else value
                typer.echo(printable(f"{key}: {shown}"))
        if out["missing"]:
            raise typer.Exit(1)
