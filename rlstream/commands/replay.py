"""``rlstream replay``: stream a topic's events in order, by offset or by time window; with ``--verify``,
re-score the executions in the window and report every decision that differs."""

from __future__ import annotations

from datetime import UTC, datetime

import typer
from confluent_kafka import Message

from infra.kafka.replay import replay as replay_events
from rlstream.commands._common import echo_json, handle_errors, printable
from rlstream.commands.broker import bootstrap_servers
from schemas.errors import EventDecodeError, UsageError
from schemas.topics import CATALOG, EXECUTIONS


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
        topic: str | None = typer.Option(
            None, "--topic", help="e.g. rl.rewards (with --verify: rl.executions, the default)"
        ),
        from_offset: int | None = typer.Option(None, "--from-offset", min=0, help="on every partition"),
        from_time: str | None = typer.Option(None, "--from-time", help="ISO-8601, inclusive"),
        to_time: str | None = typer.Option(None, "--to-time", help="ISO-8601, exclusive"),
        run_id: str | None = typer.Option(None, "--run-id", help="only events of this run"),
        verify: bool = typer.Option(
            False,
            "--verify",
            help="re-score every execution in the window with the reward version recorded on its reward; "
            "exit 1 when any decision differs",
        ),
        against: str | None = typer.Option(
            None,
            "--against",
            help="with --verify: also score with this registered reward function (NAME-VERSION, e.g. "
            "code-v1) and report the decisions that change",
        ),
        overrides: list[str] = typer.Option(
            [],
            "--set",
            help="with --verify: a counterfactual configuration, the recorded one with KEY=VALUE changed "
            "(e.g. weights.quality=0.5; repeatable)",
        ),
        as_json: bool = typer.Option(False, "--json", help="with --verify: one JSON report"),
    ) -> None:
        """Print every event of TOPIC in the window as one JSON object per line (each partition in
        offset order); a summary goes to stderr. With --verify, print the decisions that differ."""
        if from_offset is not None and from_time is not None:
            raise UsageError("give --from-offset or --from-time, not both")
        if not verify and (against or overrides or as_json):
            raise UsageError("--against, --set and --json go with --verify")
        if verify:
            if topic not in (None, EXECUTIONS.name):
                raise UsageError(
                    f"--verify re-scores executions: its window is on {EXECUTIONS.name}, not {topic}"
                )
            topic = EXECUTIONS.name
        if topic is None:
            raise UsageError("--topic is required", hint="one of: " + ", ".join(t.name for t in CATALOG))
        if topic not in {t.name for t in CATALOG}:
            raise UsageError(
                f"--topic: {topic!r} is not a topic of the catalog",
                hint="one of: " + ", ".join(t.name for t in CATALOG),
            )
        start, end = _parse_time(from_time, "--from-time"), _parse_time(to_time, "--to-time")
        if start and end and end <= start:
            raise UsageError("--to-time must be after --from-time")
        if verify:
            _verify(from_offset, start, end, run_id, against, overrides, as_json)
            return
        count = 0
        undecodable = 0

        def skip(msg: Message, exc: EventDecodeError) -> None:
            nonlocal undecodable
            undecodable += 1
            typer.echo(
                printable(f"skipped {topic}[{msg.partition()}]@{msg.offset()}: {exc.message}"), err=True
            )

        for item in replay_events(
            bootstrap_servers(),
            topic,
            from_offset=from_offset,
            from_time=start,
            to_time=end,
            on_undecodable=skip,
        ):
            if run_id is not None and item.envelope.run_id != run_id:
                continue
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


def _verify(
    from_offset: int | None,
    start: datetime | None,
    end: datetime | None,
    run_id: str | None,
    against: str | None,
    overrides: list[str],
    as_json: bool,
) -> None:
    from consumers.audit import Audit, Counterfactual, Resolver, apply_overrides, parse_override
    from consumers.verify import verify_log
    from rlstream.settings import get_settings
    from streams.reward.function import get_reward_function

    settings = get_settings()
    resolver = Resolver(settings.reward)
    cf = None
    if against is not None or overrides:
        cf = Counterfactual(spec=against, overrides=dict(parse_override(o) for o in overrides))
        # refuse a bad option now rather than at the first reward
        get_reward_function(
            against or settings.reward_function, apply_overrides(settings.reward, cf.overrides)
        )
    audit = Audit(resolver, counterfactual=cf, noise=settings.noise, feedback=settings.episodes.feedback)
    result = verify_log(
        bootstrap_servers(), audit, from_offset=from_offset, from_time=start, to_time=end, run_id=run_id
    )
    report, undecodable = result.report, result.undecodable
    if as_json:
        echo_json({**report.to_json(), "undecodable": undecodable})
    else:
        for d in (*report.differences, *report.counterfactual_differences):
            typer.echo(printable(d.line()))
        for t in report.turn_differences:
            typer.echo(printable(t.line()))
        for u in report.unverifiable:
            typer.echo(printable(f"{'unverifiable':<14} {u.sample_id}  {u.reason}"))
        note = f" ({undecodable} undecodable record(s) skipped)" if undecodable else ""
        typer.echo(report.summary() + note)
    if not report.ok:
        raise typer.Exit(1)
