"""``rlstream alerts``: the monitor's alerts on ``rl.alerts``, each from raised to resolved."""

from __future__ import annotations

import typer
import yaml

from consumers.alerts import AlertHistory
from infra.kafka.replay import replay, skip_undecodable
from rlstream.commands._common import echo_json, handle_errors, printable
from rlstream.commands.broker import bootstrap_servers
from rlstream.settings import get_settings
from schemas.topics import ALERTS
from streams.monitor.promrules import prometheus_rules as promrules
from streams.monitor.rules import DEFAULT_RULES, load_rules


def register(app: typer.Typer) -> None:
    @app.command("alerts")
    @handle_errors
    def alerts(
        run: str | None = typer.Option(None, "--run", help="only this run's alerts (and those of every run)"),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
        prometheus_rules: bool = typer.Option(
            False,
            "--prometheus-rules",
            help="print the alert rules (RLSTREAM_MONITOR__RULES) as a Prometheus rule file instead",
        ),
    ) -> None:
        """Every alert the monitor raised (AlertRaised / AlertResolved on rl.alerts), oldest first, with
        its evidence: the signal, its window, value and threshold, how long it held, the run and policy
        version; FIRING for those not resolved yet. With --prometheus-rules, the same rules as a
        Prometheus rule file over the workers' /metrics (no broker needed)."""
        if prometheus_rules:
            settings = get_settings()
            rules = load_rules(settings.monitor.rules or DEFAULT_RULES)
            typer.echo(yaml.safe_dump(promrules(rules), sort_keys=False, width=200), nl=False)
            return
        history = AlertHistory(run)
        for item in replay(bootstrap_servers(), ALERTS.name, on_undecodable=skip_undecodable):
            history.fold(item.envelope.id, item.envelope.time, item.event)
        if as_json:
            echo_json(
                {
                    "run_id": run,
                    "firing": len(history.firing),
                    "alerts": [life.as_dict() for life in history.lives],
                }
            )
            return
        if not history.lives:
            typer.echo("no alerts" + (f" for run {run}" if run else ""))
            return
        for life in history.lives:
            typer.echo(printable(life.line()))
        typer.echo(f"{len(history.lives)} alert(s), {len(history.firing)} firing")
