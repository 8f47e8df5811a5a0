"""``rlstream sft``: the supervised stage (curated examples -> a policy version RL can start from)."""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

import typer

from producers.ingest.split import hold_out
from producers.ingest.synthetic import FEEDBACK_SOURCE
from rlstream.commands._common import echo_json, handle_errors
from rlstream.commands.run import _SYNTHETIC_ENV, _bootstrap, _load_tasks
from rlstream.runner import new_run_id
from rlstream.settings import get_settings
from schemas.errors import InputError


def register(app: typer.Typer) -> None:
    @app.command("sft")
    @handle_errors
    def sft(
        tasks: str | None = typer.Option(
            None,
            "--tasks",
            help="teach these tasks' reference solutions: humaneval, synthetic, library:easy|medium|all "
            "or a tasks .jsonl file",
        ),
        limit: int | None = typer.Option(None, "--limit", min=1, help="use the first N tasks"),
        from_reviews: str | None = typer.Option(
            None, "--from-reviews", help="also teach the samples of this run that human reviewers accepted"
        ),
        epochs: int = typer.Option(3, "--epochs", min=1, help="passes over the examples"),
        lr: float | None = typer.Option(
            None,
            "--lr",
            min=0.0,
            help="learning rate (default: RLSTREAM_LEARNER__LR, or 5e-3 for the synthetic families, whose "
            "tiny model moves at that rate as `rlstream run` trains it)",
        ),
        model: str = typer.Option("tiny", "--model", help="tiny, smollm2 or a local HF folder"),
        run_id: str | None = typer.Option(None, "--run-id", help="the stage's run id (default: a new one)"),
        eval_fraction: float = typer.Option(
            0.0,
            "--eval-fraction",
            min=0.0,
            max=0.99,
            help="hold out this fraction of the tasks, as `rlstream run` does with the same value: a "
            "held-out task's reference is never taught",
        ),
        eval_tasks: Path | None = typer.Option(
            None, "--eval-tasks", help="hold out the task ids listed in this file (one per line)"
        ),
        as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
    ) -> None:
        """Write curated examples to rl.sft.examples (tasks' reference solutions, samples reviewers
        accepted), train the model on them as read back from the log (loss on the answer tokens only)
        and publish the result as a policy version of the stage's run on rl.policy (stage "sft", naming
        its examples). Its weights are saved as a model folder: `rlstream run --from-policy RUN_ID`
        starts RL from it."""
        from rlstream.sft import publish_examples, reference_examples, review_examples, train_stage

        if tasks is None and from_reviews is None:
            raise InputError("nothing to teach: give --tasks, --from-reviews or both", location="--tasks")
        settings = get_settings()
        learner = settings.learner
        if lr is not None:
            learner = learner.model_copy(update={"lr": lr})
        elif tasks in ("synthetic", FEEDBACK_SOURCE) and "RLSTREAM_LEARNER__LR" not in os.environ:
            learner = learner.model_copy(update={"lr": float(_SYNTHETIC_ENV["RLSTREAM_LEARNER__LR"])})
        settings = settings.model_copy(
            update={"generator": settings.generator.model_copy(update={"model": model}), "learner": learner}
        )
        rid = run_id or new_run_id()

        def progress(message: str) -> None:
            typer.echo(f"[sft] {message}", err=True)

        bootstrap = _bootstrap()
        examples = []
        if tasks is not None:
            task_list = hold_out(_load_tasks(tasks, limit), fraction=eval_fraction, names_file=eval_tasks)
            examples += reference_examples(rid, task_list)
            progress(f"{len(examples)} reference solution(s) of {len(task_list)} task(s) from {tasks}")
        if from_reviews is not None:
            examples += review_examples(bootstrap, rid, from_reviews, progress)
        if not examples:
            raise InputError(
                "no example to teach: no training task has a reference, no review accepts a sample"
            )
        publish_examples(bootstrap, settings, examples)
        progress(f"stage {rid}: {len(examples)} example(s) on rl.sft.examples; training {epochs} epoch(s)")
        # the training libraries log to stdout (a handler bound at their import, which happens here):
        # stdout is the summary's alone, so `--json` prints one JSON document
        with contextlib.redirect_stdout(sys.stderr):
            result = train_stage(settings, bootstrap, rid, epochs=epochs, progress=progress)
        summary = {
            "run_id": rid,
            "policy_version": result.published.policy_version,
            "examples": result.examples,
            "tokens": result.curve.tokens,
            "steps": len(result.curve.steps),
            "loss_by_epoch": [round(v, 5) for v in result.curve.epochs],
            "nll_before": round(result.nll_before, 5),
            "nll_after": round(result.nll_after, 5),
            "checkpoint_uri": result.published.checkpoint_uri,
            "folder": str(result.folder),
        }
        if as_json:
            echo_json(summary)
            return
        for key, value in summary.items():
            typer.echo(f"{key}: {value}")
        typer.echo(f"start RL from it: rlstream run --from-policy {rid} ...")
