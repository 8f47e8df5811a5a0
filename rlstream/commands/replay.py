"""``rlstream replay``: stream a topic's events in order, by offset or by time window."""

from __future__ import annotations

from datetime import UTC, datetime

import typer
from confluent_kafka import Message

from infra.kafka.replay import replay as replay_events
from rlstream.commands._common import echo_json, handle_errors
from rlstream.commands.broker import bootstrap_servers
from schemas.errors import EventDecodeError, UsageError
from schemas.topics import CATALOG


def _parse_time(text: str | None, option: str) -> datetime | None:
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            f"{option}: not an ISO-8601 time: {text!r}", hint="e.g. 2026-11-30T12:00:00Z"
        ) from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def register(app: typer.Typer) -> None:
    @app.command("replay")
    @handle_errors
    def replay(
        topic: str = typer.Option(..., "--topic", help="e.g. rl.rewards"),
        from_offset: int | None = typer.Option(None, "--from-offset", min=0, help="on every partition"),
        from_time: str | None = typer.Option(None, "--from-time", help="ISO-8601, inclusive"),
        to_time: str | None = typer.Option(None, "--to-time", help="ISO-8601, exclusive"),
    ) -> None:
        """Print every event of TOPIC in the window as one JSON object per line (each partition in
        offset order); a summary goes to stderr."""
        if from_offset is not None and from_time is not None:
            raise UsageError("give --from-offset or --from-time, not both")
        if topic not in {t.name for t in CATALOG}:
            raise UsageError(
                f"--topic: {topic!r} is not a topic of the catalog",
                hint="one of: " + ", ".join(t.name for t in CATALOG),
            )
        start, end = _parse_time(from_time, "--from-time"), _parse_time(to_time, "--to-time")
        if start and end and end <= start:
            raise UsageError("--to-time must be after --from-time")
        count = 0
        undecodable = 0

        def skip(msg: Message, exc: EventDecodeError) -> None:
            nonlocal undecodable
            undecodable += 1
            typer.echo(f"skipped {topic}[{msg.partition()}]@{msg.offset()}: {exc.message}", err=True)

        for item in replay_events(
            bootstrap_servers(),
            topic,
            from_offset=from_offset,
            from_time=start,
            to_time=end,
            on_undecodable=skip,
        ):
            count += 1
            echo_json(
                {
                    "topic": item.topic,
                    "partition": item.partition,
                    "offset": item.offset,
                    "timestamp": item.timestamp.isoformat() if item.timestamp else None,
                    "id": item.envelope.id,
                    "type": item.envelope.type,
                    "subject": item.envelope.subject,
                    "event": item.event.model_dump(mode="json"),
                }
            )
        note = f", {undecodable} undecodable record(s) skipped" if undecodable else ""
        typer.echo(f"{count} event(s) from {topic}{note}", err=True)
