"""``rlstream eval RUN_ID``: did the policy get better on tasks it never trained on?

One row per policy version: the held-out tasks evaluated, the samples, pass@1 and pass@k (unbiased)
averaged over tasks with their 95% bootstrap intervals over tasks, the mean reward and the mean code
similarity to the references ("n/a" where no task has a reference). From the projections by default
(``--db``), or the log itself (``--from-log``).
"""

from __future__ import annotations

from typing import Any

import typer

from rlstream.commands._common import echo_json, handle_errors
from rlstream.commands.broker import bootstrap_servers
from rlstream.settings import get_settings
from schemas.errors import UsageError

SPLITS = ("eval", "train", "all")


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def _table(rows: list[Any], k: int | None, levels: list[int] | None = None) -> list[str]:
    header = [*(["level"] if levels is not None else []), "split", "version", "tasks", "samples"]
    header += ["pass@1", "95% CI"]
    if k is not None:
        header += [f"pass@{k}", "95% CI"]
    header += ["reward", "similarity"]
    lines = [header]
    for i, r in enumerate(rows):
        lo, hi = r.ci[1]
        line = [str(levels[i])] if levels is not None else []
        line += [r.split, f"v{r.policy_version}", str(r.tasks), str(r.samples), _fmt(r.pass_at[1])]
        line.append(f"[{lo:.3f}, {hi:.3f}]")
        if k is not None:
            if k in r.pass_at:
                klo, khi = r.ci[k]
                line += [_fmt(r.pass_at[k]), f"[{klo:.3f}, {khi:.3f}]"]
            else:
                line += ["n/a", ""]
        line += [_fmt(r.reward_mean), _fmt(r.similarity_mean)]
        lines.append(line)
    widths = [max(len(row[i]) for row in lines) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in lines]


def register(app: typer.Typer) -> None:
    @app.command("eval")
    @handle_errors
    def evaluate(
        run_id: str = typer.Argument(..., help="the run (its run id)"),
        split: str = typer.Option("eval", "--split", help="eval (held-out tasks), train, or all"),
        db: str | None = typer.Option(
            None, "--db", help="projection database URL (default: setting projections.database_url)"
        ),
        from_log: bool = typer.Option(False, "--from-log", help="fold the log instead of the projections"),
        per_level: bool = typer.Option(
            False, "--by-level", help="one table per difficulty level, over the graded tasks of each"
        ),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    ) -> None:
        """Held-out pass@1 / pass@k per policy version with 95% bootstrap intervals over tasks, mean
        reward and mean code similarity. Exit 2 for an unknown run id (the known ones are listed)."""
        if split not in SPLITS:
            raise UsageError(f"--split {split!r} is not one of {', '.join(SPLITS)}")
        if from_log and db is not None:
            raise UsageError("give --db URL or --from-log, not both")
        from consumers.report.load import load_from_db, load_from_log

        def progress(message: str) -> None:
            if not as_json:
                typer.echo(f"eval: {message}", err=True)

        if from_log:
            data = load_from_log(bootstrap_servers(), run_id, progress)
        else:
            data = load_from_db(db or get_settings().projections_url, run_id, progress)
        rows = [r for r in data.evaluation if split == "all" or r.split == split]
        graded = [(lv, r) for lv, r in data.evaluation_by_level if split == "all" or r.split == split]
        if as_json:
            out: dict[str, Any] = {"run_id": run_id, "split": split, "versions": [r.to_json() for r in rows]}
            if per_level:
                out["levels"] = [{"level": lv, **r.to_json()} for lv, r in graded]
            echo_json(out)
            return
        if not rows:
            what = "held-out tasks evaluated" if split == "eval" else f"scored samples in split {split}"
            typer.echo(f"run {run_id}: no {what} (hold tasks out with --eval-fraction / --eval-tasks)")
            return
        # the k > 1 estimated for every row, if any (means over different task sets do not compare)
        common = set.intersection(*({k for k in r.pass_at if k > 1} for r in rows))
        k = max(common) if common else None
        typer.echo(f"run {run_id}: pass@k per policy version, mean over tasks, 95% bootstrap CI over tasks")
        for line in _table(rows, k):
            typer.echo(line)
        if per_level:
            if not graded:
                typer.echo("no graded tasks among them (tasks without a difficulty level)")
                return
            typer.echo("by difficulty level, over the graded tasks of each:")
            for line in _table([r for _, r in graded], None, [lv for lv, _ in graded]):
                typer.echo(line)
