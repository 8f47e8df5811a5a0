"""``rlstream monitor``: the monitor worker (alert rules over the run's events, ``rl.alerts``) in this
process, its /metrics on ``--port``."""

from __future__ import annotations

import typer

from rlstream.commands._common import handle_errors
from rlstream.commands.worker import run_worker


def register(app: typer.Typer) -> None:
    @app.command("monitor")
    @handle_errors
    def monitor(
        port: int | None = typer.Option(
            None, "--port", min=0, max=65535, help="its /metrics port (default RLSTREAM_METRICS__PORT, 9464)"
        ),
        instance: str = typer.Option("0", "--instance", help="distinct per replica"),
    ) -> None:
        """Evaluate the alert rules (RLSTREAM_MONITOR__RULES, default the shipped streams/monitor/rules.yaml)
        over the run's events and write AlertRaised / AlertResolved on rl.alerts, until SIGTERM/Ctrl-C.
        The same as `rlstream worker monitor`, which `rlstream run` starts. List alerts: `rlstream alerts`."""
        run_worker("monitor", instance=instance, metrics_port=port)
