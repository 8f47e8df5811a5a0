"""``rlstream lineage SAMPLE_ID``: everything the log knows about one sample, in order."""

from __future__ import annotations

import json

import typer

from consumers.lineage import Lineage, policy_lineage
from infra.kafka.replay import replay, skip_undecodable
from rlstream.commands._common import echo_json, handle_errors, printable
from rlstream.commands.broker import bootstrap_servers
from schemas.errors import InputError
from schemas.policy import PolicyPublished
from schemas.sft import SftExample
from schemas.topics import EVENT_TOPICS, POLICY, SFT_EXAMPLES


def register(app: typer.Typer) -> None:
    @app.command("lineage")
    @handle_errors
    def lineage(
        sample_id: str | None = typer.Argument(None, help="<group_id>/<index>, e.g. run-1/HumanEval/0/0/3"),
        policy: str | None = typer.Option(
            None,
            "--policy",
            help="instead of a sample: a policy version, RUN_ID:vN (its stage, what it was trained from "
            "and on)",
        ),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    ) -> None:
        """Task -> prompt -> raw completion -> executed code -> per-case results -> reward components ->
        verdict and reasons -> policy version that produced it -> versions it was trained into ->
        human reviews (who changed what, when, and whether it came before training).
        Exit 1 when a stage is missing, 2 when the log has no such sample.
        With --policy RUN_ID:vN: the version's stage (rl or sft), model, the input offsets it consumed
        and what it trained on (an SFT stage's examples with their sources)."""
        if (sample_id is None) == (policy is None):
            raise InputError("give a SAMPLE_ID or --policy RUN_ID:vN (one of them)", location="SAMPLE_ID")
        if policy is not None:
            _policy_lineage(policy, as_json)
            return
        assert sample_id is not None
        try:
            result = Lineage(sample_id)
        except ValueError as exc:
            raise InputError(str(exc), location="SAMPLE_ID") from None
        bootstrap = bootstrap_servers()
        for topic in EVENT_TOPICS:
            for item in replay(bootstrap, topic.name, on_undecodable=skip_undecodable):
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


def _policy_lineage(spec: str, as_json: bool) -> None:
    run_id, _, version = spec.partition(":v")
    if not run_id or not version.isdigit():
        raise InputError(f"--policy {spec!r} is not RUN_ID:vN", location="--policy")
    bootstrap = bootstrap_servers()
    versions = {
        (item.event.run_id, item.event.policy_version): item.event
        for item in replay(bootstrap, POLICY.name, on_undecodable=skip_undecodable)
        if isinstance(item.event, PolicyPublished)
    }
    found = versions.get((run_id, int(version)))
    if found is None:
        raise InputError(f"run {run_id} published no version {version}", location="--policy")
    # the examples of the SFT stages it names: its own, or those in its chain of bases
    chain_has_sft = found.stage == "sft" or found.base is not None
    examples = (
        [
            item.event
            for item in replay(bootstrap, SFT_EXAMPLES.name, on_undecodable=skip_undecodable)
            if isinstance(item.event, SftExample)
        ]
        if chain_has_sft
        else []
    )
    out = policy_lineage(found, examples, versions)
    if as_json:
        echo_json(out)
        return
    for key, value in out.items():
        shown = json.dumps(value, indent=2) if isinstance(value, dict | list) else value
        typer.echo(printable(f"{key}: {shown}"))
