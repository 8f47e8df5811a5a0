"""``rlstream reward tune``: reward weights chosen on the held-out split (and human reviews)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from rlstream.commands._common import echo_json, handle_errors
from rlstream.commands.broker import bootstrap_servers
from schemas.errors import UsageError


def _axis(text: str) -> tuple[str, list[Any]]:
    """``weights.quality=0,0.1,0.2`` -> (``weights.quality``, [0, 0.1, 0.2])."""
    from consumers.audit import parse_override

    key, raw = parse_override(text.split("=", 1)[0] + "=0")[0], text.partition("=")[2]
    if not raw:
        raise UsageError(f"--grid {text!r}: expected KEY=V1,V2,...", hint="e.g. --grid weights.quality=0,0.1")
    values = []
    for part in raw.split(","):
        try:
            values.append(json.loads(part))
        except json.JSONDecodeError:
            values.append(part.strip())
    return key, values


def _env_line(key: str, value: Any) -> str:
    return "RLSTREAM_REWARD__" + key.upper().replace(".", "__") + "=" + json.dumps(value).strip('"')


def _changes(current: dict[str, Any], overrides: dict[str, Any]) -> int:
    """How many of ``overrides`` differ from the configured values."""
    n = 0
    for path, value in overrides.items():
        node: Any = current
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        n += node != value
    return n


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Reward functions: weights chosen on held-out data.", no_args_is_help=True)
    app.add_typer(group, name="reward")

    @group.command("tune")
    @handle_errors
    def tune(
        run_id: str = typer.Argument(..., help="the run whose logged executions are re-scored"),
        axes: list[str] = typer.Option(
            ...,
            "--grid",
            help="KEY=V1,V2,... a reward setting and its candidates (repeatable: every combination)",
        ),
        against: str | None = typer.Option(
            None, "--against", help="score with this registered function (default: the recorded one)"
        ),
        write_env: Path | None = typer.Option(
            None, "--write-env", help="append the chosen setting to this .env file (settings read it)"
        ),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    ) -> None:
        """Re-score the run's held-out executions (and its reviewed samples) under every setting of the
        grid, print per setting the correlation of reward with held-out pass@1 and the agreement with
        human verdicts, and choose the best; a run with the chosen setting records its version
        (``v3+<hash>``). Exit 1 when the run has no held-out execution and no review to judge by."""
        from consumers.audit import Audit, Resolver, apply_overrides
        from consumers.tuning import best, evaluate_setting, grid
        from consumers.verify import fold_run
        from rlstream.settings import get_settings

        settings = get_settings()
        parsed = dict(_axis(a) for a in axes)
        settings_grid = grid(parsed)
        for overrides in settings_grid:  # refuse a bad candidate before reading the log
            apply_overrides(settings.reward, overrides)
        audit = Audit(Resolver(settings.reward), noise=settings.noise)
        log = fold_run(bootstrap_servers(), audit, run_id)
        if not log.executions:
            raise UsageError(f"no executions of run {run_id!r} on the log", hint="check the run id")
        results = [
            evaluate_setting(
                audit,
                overrides,
                spec=against,
                reviews=log.reviews,
                version_of=log.versions,
                selected=lambda x: x.event_id() in log.executions,
                changes=_changes(settings.reward.model_dump(mode="json"), overrides),
            )
            for overrides in settings_grid
        ]
        chosen = best([r for r in results if r.eval_samples or r.reviewed])
        if as_json:
            echo_json(
                {
                    "run_id": run_id,
                    "settings": [r.to_json() for r in results],
                    "chosen": chosen.to_json() if chosen else None,
                }
            )
        else:
            typer.echo(f"run {run_id}: {len(results)} setting(s) re-scored on the held-out split and reviews")
            header = [
                "setting",
                "version",
                "eval samples",
                "cells",
                "r(reward, pass@1)",
                "reward",
                "reviews",
                "agree",
            ]
            rows = [header] + [
                [
                    ", ".join(f"{k}={json.dumps(v)}" for k, v in r.overrides.items()),
                    r.version,
                    str(r.eval_samples),
                    str(r.cells),
                    _fmt(r.correlation),
                    _fmt(r.reward_mean),
                    str(r.reviewed),
                    _fmt(r.agreement),
                ]
                for r in results
            ]
            widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
            for row in rows:
                typer.echo("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
        if chosen is None:
            typer.echo("nothing to judge by: the run has no held-out execution and no review", err=True)
            raise typer.Exit(1)
        lines = [_env_line(k, v) for k, v in chosen.overrides.items()]
        if not as_json:
            typer.echo(f"chosen: {chosen.version}; to train with it set:")
            for line in lines:
                typer.echo(f"  {line}")
        if write_env is not None:
            with write_env.open("a", encoding="utf-8") as fh:
                fh.write(
                    f"# rlstream reward tune {run_id}: {chosen.version}\n" + "".join(f"{x}\n" for x in lines)
                )
