"""``rlstream run``: the main job (a whole local run in one command)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer

from infra.telemetry.tracing import configure_tracing, shutdown_tracing
from producers.ingest.humaneval import humaneval_tasks
from producers.ingest.jsonl import parse_file
from producers.ingest.library import library_tasks
from producers.ingest.split import hold_out
from producers.ingest.synthetic import FEEDBACK_SOURCE, feedback_tasks, synthetic_tasks
from producers.ingest.synthetic import SAMPLING as SYNTHETIC_SAMPLING
from rlstream.commands._common import echo_json, handle_errors
from rlstream.commands.broker import _fetch, bootstrap_servers, local_cluster
from rlstream.runner import new_run_id, run_pipeline
from rlstream.settings import get_settings
from rlstream.workers import PIPELINE_WORKERS
from schemas.errors import BrokerError, InputError, RlstreamError, UsageError
from schemas.task import MAX_TURNS_LIMIT, TaskPublished

#: a --steps run issues groups until the learner is done, not a fixed number per task
_UNBOUNDED_EPOCHS = 1_000_000

#: how the synthetic family is sampled and trained unless the environment says otherwise: one token at
#: the family's temperature, and a learning rate for the tiny model (the default suits real models)
_SYNTHETIC_ENV = {
    "RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__MAX_TOKENS": str(SYNTHETIC_SAMPLING.max_tokens),
    "RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__TEMPERATURE": str(SYNTHETIC_SAMPLING.temperature),
    "RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__TOP_P": str(SYNTHETIC_SAMPLING.top_p),
    "RLSTREAM_LEARNER__LR": "0.005",
    "RLSTREAM_LEARNER__TOKEN_BUDGET": "4096",
    "RLSTREAM_PIPELINE__SCHEDULER__MAX_LEARNER_LAG": "24",
}

#: library runs on CPU unless the environment says otherwise: generation kept within a few groups of the
#: learner (a sample that waits longer is trained many versions stale, or dropped), a learning rate that
#: moves a 135M model within tens of steps, and no ZeRO partitioning for the one learner process
_LIBRARY_ENV = {
    "RLSTREAM_PIPELINE__SCHEDULER__MAX_LEARNER_LAG": "4",
    "RLSTREAM_PIPELINE__SCHEDULER__MAX_GROUPS_IN_FLIGHT": "4",
    "RLSTREAM_LEARNER__LR": "1e-5",
    "RLSTREAM_LEARNER__TOKEN_BUDGET": "4096",
    "RLSTREAM_LEARNER__ZERO_STAGE": "0",
}


def _load_tasks(source: str, limit: int | None) -> list[TaskPublished]:
    if source == "humaneval":
        return list(humaneval_tasks(limit))
    if source == "synthetic":
        return synthetic_tasks(limit)
    if source == FEEDBACK_SOURCE:
        # their max_turns is left to --max-turns (or the setting): the family needs at least 2
        return feedback_tasks(limit, max_turns=None)
    if source.startswith("library:") or source == "library":
        return library_tasks(source.partition(":")[2] or "all")[:limit]
    path = Path(source)
    parsed = parse_file(path)
    if parsed.errors:
        listing = "\n  ".join(str(e) for e in parsed.errors)
        raise InputError(f"{path}: {len(parsed.errors)} bad line(s):\n  {listing}")
    tasks = [t for _, t in parsed.tasks]
    return tasks[:limit] if limit else tasks


def _write_report(bootstrap: str, run_id: str, out: Path) -> Path:
    """The run's HTML report, folded from the log (exact whether or not the projector caught up)."""
    # imported here: matplotlib and SQLAlchemy cost every other command seconds of start-up
    from consumers.report.load import load_from_log
    from consumers.report.write import write_report

    def progress(message: str) -> None:
        if message.startswith("chart "):
            return  # one line per chart is more than a run's end needs
        typer.echo(f"[report] {message}", err=True)

    typer.echo(f"[report] writing {out}", err=True)
    return write_report(load_from_log(bootstrap, run_id, progress), out, progress).index


def _bootstrap() -> str:
    try:
        return bootstrap_servers()
    except BrokerError:
        pass
    typer.echo("[run] no broker running: starting the local one", err=True)
    _fetch()
    status = local_cluster().up(None)
    if not status.bootstrap:
        raise BrokerError("the local broker did not come up", hint="see `rlstream broker status`")
    return status.bootstrap


def register(app: typer.Typer) -> None:
    @app.command("run")
    @handle_errors
    def run(
        tasks: str = typer.Option(
            "humaneval",
            "--tasks",
            help="humaneval, synthetic, synthetic-feedback, library:easy|medium|all (the graded library) "
            "or a tasks .jsonl file",
        ),
        limit: int | None = typer.Option(None, "--limit", min=1, help="use the first N tasks"),
        model: str = typer.Option("tiny", "--model", help="tiny, smollm2 or a local HF folder"),
        from_policy: str | None = typer.Option(
            None,
            "--from-policy",
            help="start from a published version instead of --model: RUN_ID (its newest version, e.g. "
            "of an `rlstream sft` stage), RUN_ID:vN or a model folder",
        ),
        algorithm: str | None = typer.Option(
            None,
            "--algorithm",
            help="what the learner trains on the experience stream: grpo (group-relative advantages) or "
            "dpo (preference pairs within each group against the starting policy); default: the setting, "
            "RLSTREAM_LEARNER__ALGORITHM (grpo)",
        ),
        group_size: int = typer.Option(4, "--group-size", min=1, help="samples per GRPO group"),
        epochs: int = typer.Option(1, "--epochs", min=1, help="groups per task"),
        steps: int | None = typer.Option(
            None, "--steps", min=1, help="stop when the learner has published step N (tasks repeat)"
        ),
        run_id: str | None = typer.Option(None, "--run-id", help="resume this run (default: a new one)"),
        timeout: float | None = typer.Option(None, "--timeout", min=1, help="stop after this many seconds"),
        eval_fraction: float = typer.Option(
            0.0,
            "--eval-fraction",
            min=0.0,
            max=0.99,
            help="hold out this fraction of the tasks for evaluation",
        ),
        eval_tasks: Path | None = typer.Option(
            None, "--eval-tasks", help="hold out the task ids listed in this file (one per line)"
        ),
        eval_every: int | None = typer.Option(
            None, "--eval-every", min=0, help="evaluate every N policy versions (default: the setting, 5)"
        ),
        runtime: str | None = typer.Option(
            None,
            "--runtime",
            help="what hosts the stream processors: transactional (exactly-once, default) or faust "
            "(at-least-once, effectively-once results); default: RLSTREAM_RUNTIME",
        ),
        max_turns: int | None = typer.Option(
            None,
            "--max-turns",
            min=1,
            max=MAX_TURNS_LIMIT,
            help="turns an episode may take: the model revises its code from the feedback of the visible "
            "cases (default: the setting, 1); a task's own max_turns wins",
        ),
        level_curriculum: bool | None = typer.Option(
            None,
            "--level-curriculum/--no-level-curriculum",
            help="train graded tasks level by level, moving on as held-out pass@1 of the level rises "
            "(default: on for library runs with held-out tasks)",
        ),
        autoscale: bool = typer.Option(
            False,
            "--autoscale",
            help="run more sandbox and generator processes while their input lag grows and retire them "
            "when it drains, up to the input topic's partitions or the cores (RLSTREAM_SCALING__*)",
        ),
        report: Path | None = typer.Option(
            None, "--report", help="write the run's HTML report here (default: <home>/runs/RUN_ID/report)"
        ),
        no_report: bool = typer.Option(False, "--no-report", help="do not write the HTML report at the end"),
        as_json: bool = typer.Option(False, "--json", help="print the summary as JSON"),
    ) -> None:
        """Start the broker (if none is running), the topics and every worker; publish the tasks; show live
        progress until every group has its experience; stop cleanly (Ctrl-C too), print a summary and write
        the run's HTML report (its path is the last line printed).
        Held-out tasks (--eval-fraction, --eval-tasks) are never trained on: the evaluator samples them
        under version 0, every N versions and the final one (`rlstream eval RUN_ID`). With --max-turns N
        each sample is an episode: the model sees the failing visible cases and revises its code, up to
        N turns, and the learner trains the whole episode as one trajectory. Library runs with held-out
        tasks train level by level (--no-level-curriculum trains every level at once)."""
        settings = get_settings()
        if runtime not in (None, "transactional", "faust"):
            raise UsageError(
                f"unknown runtime {runtime!r}", hint="--runtime transactional or --runtime faust"
            )
        if algorithm not in (None, "grpo", "dpo"):
            raise UsageError(f"unknown algorithm {algorithm!r}", hint="--algorithm grpo or --algorithm dpo")
        task_list = _load_tasks(tasks, limit)
        if not task_list:
            raise InputError(f"no tasks in {tasks}")
        task_list = hold_out(task_list, fraction=eval_fraction, names_file=eval_tasks)
        held_out = sum(t.split == "eval" for t in task_list)
        bootstrap = _bootstrap()
        base: str | None = None
        if from_policy is not None:
            from rlstream.sft import starting_policy

            start = starting_policy(settings, bootstrap, from_policy)
            model, base = str(start.folder), start.ref
            typer.echo(f"[run] starting from {from_policy}: {model}", err=True)
        rid = run_id or new_run_id()
        overrides = {
            "RLSTREAM_GENERATOR__MODEL": model,
            "RLSTREAM_PIPELINE__SCHEDULER__GROUP_SIZE": str(group_size),
            "RLSTREAM_PIPELINE__SCHEDULER__EPOCHS": str(epochs),
            "RLSTREAM_PIPELINE__SCHEDULER__ONLY_OWN_RUN": "true",
        }
        if base is not None:  # every version of this run names the version it started from
            overrides["RLSTREAM_LEARNER__BASE_POLICY"] = base
        if runtime is not None:
            overrides["RLSTREAM_RUNTIME"] = runtime
        if algorithm is not None:
            overrides["RLSTREAM_LEARNER__ALGORITHM"] = algorithm
        if steps is not None:
            epochs = _UNBOUNDED_EPOCHS
            overrides["RLSTREAM_PIPELINE__SCHEDULER__EPOCHS"] = str(epochs)
            # the version published at the last step is evaluated too, and training stops there
            overrides["RLSTREAM_PIPELINE__SCHEDULER__EVALUATION__FINAL_STEP"] = str(steps)
        if eval_every is not None:
            overrides["RLSTREAM_PIPELINE__SCHEDULER__EVALUATION__EVERY"] = str(eval_every)
        graded = any(t.difficulty is not None for t in task_list)
        if level_curriculum is None and "RLSTREAM_PIPELINE__SCHEDULER__LEVELS__ENABLED" not in os.environ:
            level_curriculum = tasks.startswith("library") and graded and held_out > 0
            if tasks.startswith("library") and not held_out:
                typer.echo(
                    "[run] the level curriculum is off: it moves on by held-out pass@1, and no task is "
                    "held out (use --eval-fraction)",
                    err=True,
                )
        if level_curriculum:
            overrides["RLSTREAM_PIPELINE__SCHEDULER__LEVELS__ENABLED"] = "true"
        if max_turns is not None:
            overrides["RLSTREAM_EPISODES__MAX_TURNS"] = str(max_turns)
        turns = max(max_turns or settings.episodes.max_turns, *(t.max_turns or 1 for t in task_list))
        if tasks in ("synthetic", FEEDBACK_SOURCE):
            overrides.update({k: v for k, v in _SYNTHETIC_ENV.items() if k not in os.environ})
        if tasks.startswith("library"):
            overrides.update({k: v for k, v in _LIBRARY_ENV.items() if k not in os.environ})
        configure_tracing(settings.telemetry, service_name="rlstream-run")  # the tasks' spans
        try:
            summary = run_pipeline(
                settings.model_copy(
                    update={
                        "runtime": runtime or settings.runtime,
                        "learner": settings.learner.model_copy(
                            update={"algorithm": algorithm or settings.learner.algorithm}
                        ),
                        "generator": settings.generator.model_copy(update={"model": model}),
                        "pipeline": settings.pipeline.model_copy(
                            update={
                                "scheduler": settings.pipeline.scheduler.model_copy(
                                    update={"group_size": group_size, "epochs": epochs}
                                )
                            }
                        ),
                    }
                ),
                bootstrap,
                run_id=rid,
                tasks=task_list,
                # the evaluator only where there is something to evaluate, the episode step only where
                # an episode may take more than one turn
                workers=tuple(
                    w
                    for w in PIPELINE_WORKERS
                    if (w != "evaluator" or held_out) and (w != "episode" or turns > 1)
                ),
                env_overrides=overrides,
                echo=lambda line: typer.echo(line, err=True),
                timeout_s=timeout,
                target_steps=steps,
                resume=run_id is not None,
                autoscale=autoscale,
            )
        finally:
            shutdown_tracing()  # spans still buffered are sent before the command ends
        if not no_report and not summary["interrupted"]:
            out = report or settings.home / "runs" / rid / "report"
            try:
                summary["report"] = str(_write_report(bootstrap, rid, out))
            except RlstreamError as exc:
                # the run itself is done and kept: a report that could not be written is a warning
                retry = f"rlstream report {rid} --out {out} --from-log"
                typer.echo(f"[report] not written: {exc} (retry: {retry})", err=True)
        if as_json:
            echo_json(summary)
        else:
            typer.echo("summary:")
            for key, value in summary.items():
                typer.echo(f"  {key}: {value}")
            if "report" in summary:
                typer.echo(f"report: {summary['report']}")
        if summary["interrupted"]:
            sys.exit(130)
