"""``rlstream review``: human validation of the automated verdicts.

``review next`` draws a review queue (every flagged, unreviewed sample plus a seeded random draw of
accepted ones) and shows each item's lineage; ``review record`` publishes a ReviewRecorded on
``rl.reviews``. The learner honours a review's mask/reject for any sample it has not trained on yet;
lineage and the replay of ``rl.reviews`` show who changed what, when.
"""

from __future__ import annotations

import getpass
import json
from datetime import UTC, datetime
from typing import Any

import typer

from consumers.lineage import Lineage, group_of
from consumers.review import (
    AlreadyRecorded,
    Recorded,
    Trained,
    agreement,
    new_review,
    review_outcome,
    reviews_in_force,
    select_queue,
)
from infra.kafka.producer import EventProducer
from infra.kafka.replay import replay, skip_undecodable
from rlstream.commands._common import echo_json, handle_errors, printable
from rlstream.commands.broker import bootstrap_servers
from rlstream.settings import get_settings
from schemas.errors import InputError, UsageError
from schemas.policy import PolicyPublished
from schemas.rollout import CodeGenerated, ExperienceReady, NoiseVerdict, ReviewRecorded
from schemas.topics import EVENT_TOPICS, EXPERIENCES, GENERATIONS, POLICY, REVIEWS, VERDICTS

VERDICT_CHOICES = ("accept", "mask", "reject")


def _read(bootstrap: str, topic: str, kind: type) -> list[Recorded]:
    return [
        Recorded(item.envelope.id, item.envelope.time, item.event)
        for item in replay(bootstrap, topic, on_undecodable=skip_undecodable)
        if isinstance(item.event, kind)
    ]


def _reviewer(given: str | None) -> str:
    name = given or get_settings().review.reviewer
    if name:
        return name
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        raise UsageError(
            "no reviewer name: give --reviewer NAME", hint="or set RLSTREAM_REVIEW__REVIEWER"
        ) from None


def _latest_verdicts(verdicts: list[Recorded]) -> dict[str, Recorded]:
    return {v.event.sample_id: v for v in verdicts}


def _lineages(bootstrap: str, sample_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Lineage of several samples in one pass over the log."""
    by_group: dict[str, list[Lineage]] = {}
    every: list[Lineage] = []
    for sid in sample_ids:
        lineage = Lineage(sid)
        by_group.setdefault(lineage.group_id, []).append(lineage)
        every.append(lineage)
    if not every:
        return {}
    for topic in EVENT_TOPICS:
        for item in replay(bootstrap, topic.name, on_undecodable=skip_undecodable):
            group = getattr(item.event, "group_id", None)
            targets = by_group.get(group, []) if group is not None else every
            for lineage in targets:
                lineage.fold(item.envelope, item.event)
    return {lineage.sample_id: lineage.result() for lineage in every}


def _show_item(n: int, item: dict[str, Any]) -> None:
    lin = item["lineage"]
    reasons = ", ".join(item["reasons"]) or "-"
    gen = lin.get("generation") or {}
    reward = lin.get("reward") or {}
    # ids, reasons and code come from the log (a model's text among them): shown, never obeyed
    lines = [
        f"[{n}] {item['sample_id']}  ({item['why']}: {item['verdict']}; reasons: {reasons})",
        f"    task: {item['task_id']}   policy version: {gen.get('policy_version')}",
    ]
    if reward:
        lines.append(
            f"    reward: {reward['total']:.4g} ({reward['reward_fn']}; passed {reward['passed']}/"
            f"{reward['total_cases']}) components: {json.dumps(reward['components'])}"
        )
    for execution in lin.get("executions") or []:
        statuses = "".join(
            {"ok": ".", "error": "E", "timeout": "T", "missing": "?"}.get(c["status"], "?")
            for c in execution["cases"]
        )
        lines.append(f"    run {execution['run_index']} on {execution['backend']}: cases [{statuses}]")
    experience = lin.get("experience")
    if experience is not None:
        lines.append(f"    in gradient: {experience['in_gradient']}  advantage: {experience['advantage']}")
    trained = ", ".join(f"v{t['policy_version']}" for t in lin.get("trained_into") or [])
    lines.append(f"    trained into: {trained or '-'}   trace: {lin.get('trace_id')}")
    lines.append("    code:")
    lines += [f"      | {line}" for line in str(gen.get("code", "")).splitlines() or [""]]
    for line in lines:
        typer.echo(printable(line))


def _next(run: str | None, accepted_sample: int | None, seed: int, as_json: bool) -> None:
    bootstrap = bootstrap_servers()
    count = get_settings().review.accepted_sample if accepted_sample is None else accepted_sample
    verdicts = _latest_verdicts(_read(bootstrap, VERDICTS.name, NoiseVerdict))
    in_force = reviews_in_force(_read(bootstrap, REVIEWS.name, ReviewRecorded))
    queue = select_queue(
        (v.event for v in verdicts.values()), in_force, accepted_sample=count, seed=seed, run_id=run
    )
    lineages = _lineages(bootstrap, [q.sample_id for q in queue])
    items = [
        {
            "sample_id": q.sample_id,
            "group_id": q.group_id,
            "task_id": q.task_id,
            "why": q.why,
            "verdict": q.verdict,
            "reasons": list(q.reasons),
            "lineage": lineages[q.sample_id],
        }
        for q in queue
    ]

    def of_run(sid: str) -> bool:
        return run is None or sid.startswith(f"{run}/")

    agreed = agreement(
        {s: v.event.verdict for s, v in verdicts.items() if of_run(s)},
        {s: r.event.verdict for s, r in in_force.items() if of_run(s)},
    )
    summary = {
        "run": run,
        "seed": seed,
        "flagged": sum(1 for q in queue if q.why == "flagged"),
        "accepted_sample": sum(1 for q in queue if q.why == "accepted sample"),
        "already_reviewed": agreed.reviewed + agreed.without_verdict,
        "agreement": agreed.as_dict(),
    }
    if as_json:
        echo_json({**summary, "items": items})
        return
    for n, item in enumerate(items, 1):
        _show_item(n, item)
    rate = f"{agreed.rate:.0%}" if agreed.rate is not None else "-"
    typer.echo(
        f"{len(items)} to review ({summary['flagged']} flagged, {summary['accepted_sample']} accepted "
        f"drawn with seed {seed}); {summary['already_reviewed']} reviewed so far, agreement {rate}"
    )
    if items:
        typer.echo(
            "record with: rlstream review record SAMPLE_ID --verdict accept|mask|reject --note TEXT",
            err=True,
        )


def _record(sample_id: str, verdict: str, note: str, reviewer: str | None, as_json: bool) -> None:
    if verdict not in VERDICT_CHOICES:
        raise UsageError(f"--verdict: {verdict!r} is not one of {', '.join(VERDICT_CHOICES)}")
    if not note.strip():
        raise UsageError("--note: say why (it is what an auditor reads)")
    try:
        group_id = group_of(sample_id)
    except ValueError as exc:
        raise InputError(str(exc), location="SAMPLE_ID") from None
    who = _reviewer(reviewer)
    bootstrap = bootstrap_servers()
    generation = next(
        (
            g.event
            for g in _read(bootstrap, GENERATIONS.name, CodeGenerated)
            if g.event.sample_id == sample_id
        ),
        None,
    )
    if generation is None:
        raise InputError(
            f"no sample {sample_id!r} on the log",
            location="SAMPLE_ID",
            hint="`rlstream review next` lists them",
        )
    automated = _latest_verdicts(_read(bootstrap, VERDICTS.name, NoiseVerdict)).get(sample_id)
    reviews = [r for r in _read(bootstrap, REVIEWS.name, ReviewRecorded) if r.event.group_id == group_id]
    in_force = reviews_in_force(reviews).get(sample_id)
    already = False
    try:
        event = new_review(
            sample_id=sample_id,
            group_id=group_id,
            task_id=generation.task_id,
            verdict=verdict,  # type: ignore[arg-type]
            note=note,
            reviewer=who,
            automated=automated,
            in_force=in_force,
            now=datetime.now(UTC),
        )
        with EventProducer(
            bootstrap, source="rlstream/review", run_id=group_id.split("/", 1)[0], client_id="rlstream-review"
        ) as producer:
            event_id = producer.publish(
                event, causation_id=automated.event_id if automated is not None else None
            )
        recorded = Recorded(event_id, datetime.now(UTC), event)
    except AlreadyRecorded as exc:
        already, recorded = True, exc.existing
    trained = [
        Trained(p.event.policy_version, p.time)
        for p in _read(bootstrap, POLICY.name, PolicyPublished)
        if sample_id in p.event.trained_sample_ids
    ]
    assembled = next(
        (e for e in _read(bootstrap, EXPERIENCES.name, ExperienceReady) if e.event.group_id == group_id), None
    )
    outcome = review_outcome(
        recorded,
        in_force=True,
        trained=trained,
        assembled_at=assembled.time if assembled is not None else None,
        in_gradient=(
            any(s.sample_id == sample_id for s in assembled.event.samples) if assembled is not None else None
        ),
    )
    if as_json:
        echo_json(
            {
                "event_id": recorded.event_id,
                "already_recorded": already,
                "outcome": outcome,
                "event": recorded.event.model_dump(mode="json"),
            }
        )
        return
    event = recorded.event
    before = event.automated_verdict or "no automated verdict"
    typer.echo(
        f"{'already recorded' if already else 'recorded'} {recorded.event_id}: {sample_id} "
        f"{before} -> {event.verdict} by {event.reviewer} ({outcome})"
    )


def register(app: typer.Typer) -> None:
    review_app = typer.Typer(
        help="Human validation: a review queue and verdict overrides.", no_args_is_help=True
    )
    app.add_typer(review_app, name="review")

    @review_app.command("next")
    @handle_errors
    def next_(
        run: str | None = typer.Option(None, "--run", help="only this run's samples (default: every run)"),
        accepted_sample: int | None = typer.Option(
            None, "--accepted-sample", min=0, help="unflagged accepted samples to draw (default: settings)"
        ),
        seed: int = typer.Option(0, "--seed", help="seed of the draw: the same log and seed, the same queue"),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    ) -> None:
        """The review queue: every flagged sample not reviewed yet (verdict mask or reject, or accept
        with a reason other than allowed.*) plus a random draw of accepted ones, each with its lineage."""
        _next(run, accepted_sample, seed, as_json)

    @review_app.command("record")
    @handle_errors
    def record(
        sample_id: str = typer.Argument(..., help="<group_id>/<index>"),
        verdict: str = typer.Option(..., "--verdict", help="accept | mask | reject"),
        note: str = typer.Option(..., "--note", help="why (what an auditor reads)"),
        reviewer: str | None = typer.Option(
            None, "--reviewer", help="default: RLSTREAM_REVIEW__REVIEWER, else the login name"
        ),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    ) -> None:
        """Publish a ReviewRecorded on rl.reviews. Exit 2 for a sample not on the log. Running the same
        command again publishes nothing new."""
        _record(sample_id, verdict, note, reviewer, as_json)
