"""``rlstream acls``: the least-privilege access plan of every processor's principal."""

from __future__ import annotations

import typer

from rlstream.access import plan
from rlstream.commands._common import echo_json, handle_errors
from rlstream.commands.broker import bootstrap_servers


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Access control: one principal per processor kind.", no_args_is_help=True)
    app.add_typer(group, name="acls")

    @group.command("plan")
    @handle_errors
    def plan_cmd(
        principal: str = typer.Option(None, "--principal", help="only this principal's grants"),
        apply: bool = typer.Option(
            False, "--apply", help="create them on the cluster (the caller must be allowed to)"
        ),
        as_json: bool = typer.Option(False, "--json", help="one JSON object per grant"),
    ) -> None:
        """Print the ACLs each processor's principal needs (rlstream-<processor>): the topics and
        consumer groups it reads, the topics it writes, its changelog and its transactional ids;
        nothing else. With --apply, create them."""
        grants = [g for g in plan() if principal is None or g.principal == principal]
        if not grants:
            raise typer.BadParameter(f"no grants for principal {principal!r}", param_hint="--principal")
        for g in grants:
            if as_json:
                echo_json(
                    {
                        "principal": f"User:{g.principal}",
                        "operation": g.operation,
                        "resource": g.resource,
                        "pattern": g.pattern,
                        "name": g.name,
                    }
                )
            else:
                typer.echo(g.line())
        if apply:
            from infra.kafka.acls import create_acls

            created = create_acls(bootstrap_servers(), grants)
            typer.echo(f"[acls] {created} ACLs in place", err=True)
