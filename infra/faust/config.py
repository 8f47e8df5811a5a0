"""Configuration of the Faust runtime (composed into the one settings object by ``rlstream.settings``),
and the one place where a Faust app's client settings are made from it.

Every Kafka client a Faust worker opens (aiokafka's consumer and producer under Faust, and the
confluent-kafka readers of side inputs) takes its connection settings from :func:`app_settings` and
the shared :class:`~infra.kafka.config.KafkaConfig`: credentials (TLS, SASL) belong there, once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from infra.kafka import security
from infra.kafka.config import KafkaConfig
from infra.kafka.security import Credentials
from schemas.topics import MAX_RECORD_BYTES

#: the stream processors a Faust app hosts unless told otherwise (``faust -A rlstream.faust_app worker``)
DEFAULT_PROCESSORS = (
    "scheduler",
    "generator",
    "evaluator",
    "sandbox",
    "episode",
    "reward",
    "filter",
    "experience",
)


class FaustConfig(BaseModel):
    model_config = {"frozen": True}

    #: ``at_least_once`` is what the pipeline runs on (every consumer is idempotent by event id);
    #: ``exactly_once`` is Faust's own transactional mode, kept for measuring it (bench/runtimes.py): on
    #: Kafka 4.4 it leaks duplicates after a SIGKILL and crashes when a worker joins or leaves
    processing_guarantee: Literal["at_least_once", "exactly_once"] = "at_least_once"
    #: how often acknowledged offsets are committed: what a crashed worker's successor handles again
    commit_interval_s: float = Field(default=1.0, gt=0)
    #: a killed worker's partitions move to a live one after this long
    session_timeout_s: float = Field(default=10.0, gt=0)
    #: the most seconds a partial batch waits for more records before it is handled
    batch_wait_s: float = Field(default=0.2, gt=0)
    #: Faust's web server (``/``, ``/graph/``, table views): off unless a port is given
    web_port: int | None = Field(default=None, ge=1, le=65535)
    #: the processors ``faust -A rlstream.faust_app worker`` hosts (one consumer group for all of them)
    processors: tuple[str, ...] = DEFAULT_PROCESSORS
    #: app ids (consumer groups, changelog topic prefixes): ``<prefix>.<processor>`` per processor worker
    app_prefix: str = "rlstream.faust"


def app_settings(
    app_id: str,
    bootstrap: str,
    kafka: KafkaConfig,
    faust: FaustConfig,
    *,
    replication_factor: int | None,
    partitions: int,
    instance: str | None = None,
    datadir: Path | None = None,
) -> dict[str, Any]:
    """The keyword arguments of ``faust.App`` for ``app_id``: where the cluster is and how its clients
    behave (credentials go here too, from ``kafka``). ``datadir`` is the folder Faust keeps its app
    folder in (its own default is the working directory, which a worker started from anywhere would
    litter with ``<app id>-data`` folders).

    An ``instance`` (the worker's replica, distinct per replica of one processor) makes the worker a
    static member of its group: restarted after a crash, it takes its own place back at once, with its
    partitions, instead of waiting for its dead predecessor's session to time out and for a rebalance.
    A static member does not leave the group when it stops: its partitions move to the other replicas
    once its session has timed out."""
    brokers = ";".join(f"kafka://{server.strip()}" for server in bootstrap.split(",") if server.strip())
    settings: dict[str, Any] = {
        "broker": brokers,
        "broker_client_id": f"{kafka.client_id}.{app_id}",
        "processing_guarantee": faust.processing_guarantee,
        "broker_commit_interval": faust.commit_interval_s,
        "broker_session_timeout": faust.session_timeout_s,
        "broker_heartbeat_interval": min(2.0, faust.session_timeout_s / 3),
        "broker_request_timeout": kafka.request_timeout_s * 3,
        "consumer_auto_offset_reset": "earliest",
        # state lives in memory and is restored from its changelog on start, as on the other runtimes
        "store": "memory://",
        "topic_partitions": partitions,
        "topic_allow_declare": True,
        "producer_acks": -1,
        # execution events, dead letters and state values may be megabytes (schemas.topics)
        "producer_max_request_size": MAX_RECORD_BYTES,
        "web_enabled": faust.web_port is not None,
        "web_port": faust.web_port or 6066,
        "web_in_thread": False,
    }
    if datadir is not None:
        settings["datadir"] = str(datadir / "{conf.name}-data")
    if instance is not None:
        settings["consumer_group_instance_id"] = f"{app_id}.{instance}"
    if replication_factor is not None:
        settings["topic_replication_factor"] = replication_factor
    credentials = broker_credentials(security.current())
    if credentials is not None:
        settings["broker_credentials"] = credentials
    return settings


def broker_credentials(creds: Credentials) -> Any:
    """Faust's ``broker_credentials`` for the process's principal (None: plaintext)."""
    if creds.protocol == "PLAINTEXT":
        return None
    import faust

    context = creds.ssl_context()
    if creds.mechanism is None:
        return faust.SSLCredentials(context)
    if creds.mechanism == "OAUTHBEARER":
        return faust.OAuthCredentials(oauth_cb=_client_credentials_token(creds), ssl_context=context)
    assert creds.password is not None
    return faust.SASLCredentials(
        username=creds.username,
        password=creds.password.get_secret_value(),
        ssl_context=context,
        mechanism=creds.mechanism,
    )


def _client_credentials_token(creds: Credentials) -> Any:
    """An aiokafka token provider fetching OAuth client-credentials tokens from the OIDC endpoint (the
    flow librdkafka's ``sasl.oauthbearer.method=oidc`` runs for the confluent-kafka clients)."""
    import asyncio
    import json
    import urllib.parse
    import urllib.request

    from aiokafka.abc import AbstractTokenProvider

    from schemas.errors import DependencyError

    assert creds.oauth_client_secret is not None
    form = {
        "grant_type": "client_credentials",
        "client_id": creds.oauth_client_id or "",
        "client_secret": creds.oauth_client_secret.get_secret_value(),
    }
    if creds.oauth_scope:
        form["scope"] = creds.oauth_scope
    body = urllib.parse.urlencode(form).encode()
    endpoint = str(creds.oauth_token_endpoint)

    def fetch() -> str:
        try:
            with urllib.request.urlopen(endpoint, data=body, timeout=30) as reply:
                token = json.loads(reply.read())["access_token"]
        except (OSError, ValueError, KeyError) as exc:
            # the exception names the endpoint, never the form that holds the secret
            raise DependencyError(
                f"OAuth token endpoint {endpoint}: no access token ({type(exc).__name__})",
                hint="check RLSTREAM_KAFKA__SECURITY__OAUTH_* and that the endpoint is reachable",
            ) from None
        return str(token)

    class ClientCredentialsToken(AbstractTokenProvider):  # type: ignore[misc]
        async def token(self) -> str:
            return await asyncio.get_running_loop().run_in_executor(None, fetch)

    return ClientCredentialsToken()
