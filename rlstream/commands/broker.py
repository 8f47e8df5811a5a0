"""``rlstream broker``: run the local Apache Kafka cluster (KRaft) from jars fetched with Maven."""

from __future__ import annotations

from pathlib import Path

import typer

from infra.kafka import security
from infra.kafka.acls import create_acls
from infra.kafka.admin import metadata
from infra.kafka.jars import fetch_jars, lib_dir
from infra.kafka.local import ClusterStatus, LocalCluster, resolve_bootstrap
from infra.kafka.security import CLI_PROCESSOR
from rlstream.access import plan, principals
from rlstream.commands._common import echo_json, handle_errors
from rlstream.settings import get_settings


def jar_root() -> Path:
    settings = get_settings()
    return settings.broker.jar_dir or settings.home / "kafka"


def local_cluster(data_dir: Path | None = None) -> LocalCluster:
    settings = get_settings()
    config = settings.broker
    return LocalCluster(
        config,
        data_dir=data_dir or settings.broker_data_dir,
        lib_dir=lib_dir(jar_root(), config.kafka_version),
    )


def bootstrap_servers(processor: str = CLI_PROCESSOR) -> str:
    """The Kafka cluster every command talks to (configured, else the running local broker). From here
    on this process's Kafka clients authenticate as ``processor``'s principal (the worker kind, or
    ``cli``; see ``RLSTREAM_KAFKA__SECURITY__*``)."""
    settings = get_settings()
    security.use(settings.kafka.security.resolve(processor))
    return resolve_bootstrap(settings.kafka, settings.broker_data_dir)


def _fetch(quiet: bool = False) -> Path:
    config = get_settings().broker
    root = jar_root()
    if not quiet:
        typer.echo(
            f"[broker] Apache Kafka {config.kafka_version} jars: {lib_dir(root, config.kafka_version)}",
            err=True,
        )
    return fetch_jars(root, config.kafka_version, scala_version=config.scala_version, maven=config.maven)


def _print_status(status: ClusterStatus, as_json: bool) -> None:
    if as_json:
        echo_json(status.as_dict())
        return
    if status.layout is None:
        typer.echo(f"no local cluster in {status.data_dir}")
        return
    layout = status.layout
    state = (
        "running"
        if status.running
        else ("partly running" if any(n.running for n in status.nodes) else "stopped")
    )
    typer.echo(
        f"Kafka {layout.kafka_version}, {layout.brokers} node(s), {state}"
        f"{', answering' if status.answering else ''} — data in {status.data_dir}"
    )
    for n in status.nodes:
        pid = f"pid {n.pid}" if n.pid else "not running"
        typer.echo(f"  node {n.node_id}: {layout.host}:{n.client_port} ({pid}) log {n.log_file}")
    typer.echo(f"bootstrap servers: {layout.bootstrap}")


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Run the local Apache Kafka cluster (KRaft, loopback).", no_args_is_help=True)
    app.add_typer(group, name="broker")

    @group.command("up")
    @handle_errors
    def up(
        brokers: int = typer.Option(
            None, "--brokers", min=1, max=9, help="nodes of a new cluster (default 1)"
        ),
        data_dir: Path = typer.Option(None, "--data-dir", help="where the cluster keeps its data"),
        auth: str = typer.Option(
            None,
            "--auth",
            help="a new cluster's security: none (plaintext, the default) or scram (SASL_SSL, a SCRAM "
            "user per processor, ACLs enforced)",
        ),
    ) -> None:
        """Fetch the jars (cached), format storage on first use, start the nodes, wait until they answer.

        With --auth scram the cluster gets a TLS listener with a throwaway CA, a SCRAM user per processor
        kind (rlstream-<processor>, passwords in <data-dir>/credentials, mode 0600) and the least-privilege
        ACLs of `rlstream acls plan`; the client settings to export are printed."""
        if auth not in (None, "none", "scram"):
            raise typer.BadParameter(f"{auth!r} is not one of: none, scram", param_hint="--auth")
        settings = get_settings()
        if settings.kafka.bootstrap_servers:
            md = metadata(settings.kafka.bootstrap_servers, timeout_s=settings.kafka.request_timeout_s)
            typer.echo(
                f"RLSTREAM_KAFKA__BOOTSTRAP_SERVERS is set: using that cluster ({len(md.brokers)} broker(s) "
                "answering); no local broker started",
                err=True,
            )
            typer.echo(settings.kafka.bootstrap_servers)
            return
        _fetch()
        cluster = local_cluster(data_dir)
        before = cluster.status(probe=False)
        if before.running:
            typer.echo(f"[broker] already running from {cluster.data_dir}", err=True)
        else:
            typer.echo(f"[broker] starting from {cluster.data_dir} ...", err=True)
        users = principals() if auth == "scram" else ()
        status = cluster.up(brokers, auth=auth, users=users)  # type: ignore[arg-type]
        typer.echo(f"[broker] up: {status.layout.brokers if status.layout else '?'} node(s)", err=True)
        client = cluster.client_settings()
        if client:
            with security.using(cluster.admin_credentials()):
                create_acls(status.bootstrap or "", plan())
            typer.echo(
                "[broker] SASL_SSL with SCRAM users and ACLs; clients connect with:\n"
                + "\n".join(f"  export {k}='{v}'" for k, v in client.items()),
                err=True,
            )
        typer.echo(status.bootstrap)

    @group.command("down")
    @handle_errors
    def down(data_dir: Path = typer.Option(None, "--data-dir", help="the cluster's data directory")) -> None:
        """Stop the local cluster (its data stays for the next `up`)."""
        cluster = local_cluster(data_dir)
        stopped = cluster.down()
        if stopped:
            typer.echo(f"stopped node(s) {', '.join(map(str, stopped))}; data kept in {cluster.data_dir}")
        else:
            typer.echo(f"no broker running from {cluster.data_dir}")

    @group.command("status")
    @handle_errors
    def status(
        data_dir: Path = typer.Option(None, "--data-dir", help="the cluster's data directory"),
        as_json: bool = typer.Option(False, "--json", help="print one JSON object"),
    ) -> None:
        """Show the nodes, their pids and ports, and whether the cluster answers (exit 1 if not running)."""
        settings = get_settings()
        if settings.kafka.bootstrap_servers:
            md = metadata(settings.kafka.bootstrap_servers, timeout_s=settings.kafka.request_timeout_s)
            info = {
                "bootstrap_servers": settings.kafka.bootstrap_servers,
                "configured": True,
                "answering": True,
                "brokers": len(md.brokers),
            }
            if as_json:
                echo_json(info)
            else:
                typer.echo(
                    f"configured cluster {settings.kafka.bootstrap_servers}: "
                    f"{len(md.brokers)} broker(s) answering"
                )
            return
        st = local_cluster(data_dir).status()
        _print_status(st, as_json)
        if not (st.running and st.answering):
            raise typer.Exit(1)

    @group.command("fetch")
    @handle_errors
    def fetch() -> None:
        """Fetch the Apache Kafka jars with Maven into the cache (nothing to do when cached)."""
        path = _fetch()
        typer.echo(str(path))
