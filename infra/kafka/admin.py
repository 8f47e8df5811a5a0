"""Cluster administration: is the cluster answering, and create the topic catalog idempotently."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._config import AlterConfigOpType, ConfigEntry, ConfigResource
from confluent_kafka.admin._metadata import ClusterMetadata
from confluent_kafka.cimpl import NewTopic

from infra.kafka import security
from infra.kafka.config import KafkaConfig
from schemas.errors import BrokerError
from schemas.topics import Topic

# librdkafka's own log lines (connection refused while a broker starts, ...) go through this logger
# instead of straight to stderr, so a waiting CLI stays quiet.
_client_log = logging.getLogger("rlstream.kafka.client")


#: a client backs off reconnecting to a broker that refused it up to this long (librdkafka: 10 s), so a
#: restarted broker is used again within a second of answering
RECONNECT_BACKOFF_MAX_MS = 1_000


def client_config(bootstrap: str, **extra: Any) -> dict[str, Any]:
    """What every client of the project is built with (``extra`` overrides it): the process's
    credentials (:mod:`infra.kafka.security`) included."""
    return {
        "bootstrap.servers": bootstrap,
        "logger": _client_log,
        "reconnect.backoff.max.ms": RECONNECT_BACKOFF_MAX_MS,
        **security.current().librdkafka(),
        **extra,
    }


def admin_client(bootstrap: str, *, client_id: str = "rlstream") -> AdminClient:
    return AdminClient(client_config(bootstrap, **{"client.id": client_id}))


def first_reachable(bootstrap: str, timeout_s: float = 1.0) -> bool:
    """Whether any bootstrap server accepts a TCP connection (cheap pre-check before a client)."""
    for server in bootstrap.split(","):
        host, _, port = server.strip().rpartition(":")
        try:
            with socket.create_connection((host.strip("[]") or "127.0.0.1", int(port)), timeout=timeout_s):
                return True
        except (OSError, ValueError):
            continue
    return False


def metadata(bootstrap: str, timeout_s: float = 5.0) -> ClusterMetadata:
    """The cluster's metadata, or a BrokerError naming the servers that did not answer."""
    try:
        return admin_client(bootstrap).list_topics(timeout=timeout_s)
    except KafkaException as exc:
        raise BrokerError(
            f"Kafka at {bootstrap} did not answer within {timeout_s:.0f}s: {_reason(exc)}",
            hint="start it with `rlstream broker up`, or correct RLSTREAM_KAFKA__BOOTSTRAP_SERVERS",
        ) from None


def wait_until_answering(bootstrap: str, *, brokers: int, timeout_s: float) -> ClusterMetadata:
    """Poll until the cluster's metadata lists ``brokers`` brokers; BrokerError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    last: str = "no answer yet"
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise BrokerError(f"Kafka at {bootstrap} did not become ready within {timeout_s:.0f}s ({last})")
        if first_reachable(bootstrap, timeout_s=min(1.0, remaining)):
            try:
                md = admin_client(bootstrap).list_topics(timeout=min(3.0, max(remaining, 0.1)))
                if len(md.brokers) >= brokers:
                    return md
                last = f"{len(md.brokers)} of {brokers} brokers registered"
            except KafkaException as exc:
                last = _reason(exc)
        else:
            last = "port not accepting connections"
        time.sleep(0.25)


TopicStatus = Literal["created", "exists", "fewer_partitions"]


@dataclass(frozen=True)
class TopicResult:
    name: str
    status: TopicStatus
    partitions: int
    wanted_partitions: int
    message: str

    @property
    def ok(self) -> bool:
        return self.status != "fewer_partitions"


def wanted_partitions(topic: Topic, kafka: KafkaConfig) -> int:
    return topic.partitions if topic.partitions is not None else kafka.partitions


def ensure_topics(bootstrap: str, kafka: KafkaConfig, topics: Sequence[Topic]) -> list[TopicResult]:
    """Create the topics that are missing; report the ones that exist (with fewer partitions: clearly).

    Idempotent. Of an existing topic only a ``max.message.bytes`` below the catalog's is raised (a
    cluster made before the limit existed would refuse the records the catalog promises to carry).
    Adding partitions to an existing topic would move keys to other partitions and break
    per-aggregate ordering, so that is left to the operator.
    """
    admin = admin_client(bootstrap, client_id=kafka.client_id)
    timeout = kafka.request_timeout_s
    existing = _partition_counts(admin, timeout)
    missing = [t for t in topics if t.name not in existing]
    created: set[str] = set()
    if missing:
        new = [
            NewTopic(
                t.name,
                num_partitions=wanted_partitions(t, kafka),
                replication_factor=kafka.replication_factor or -1,
                config=_topic_configs(t, kafka),
            )
            for t in missing
        ]
        futures = admin.create_topics(new, request_timeout=timeout, operation_timeout=timeout)
        for name, future in futures.items():
            try:
                future.result()
                created.add(name)
            except KafkaException as exc:
                err = exc.args[0]
                if isinstance(err, KafkaError) and err.code() == KafkaError.TOPIC_ALREADY_EXISTS:
                    continue  # created concurrently by someone else: report it as existing
                hint = None
                if isinstance(err, KafkaError) and err.code() == KafkaError.INVALID_REPLICATION_FACTOR:
                    hint = (
                        "lower RLSTREAM_KAFKA__REPLICATION_FACTOR to at most the number of brokers "
                        "(or unset it to use the cluster default)"
                    )
                raise BrokerError(f"could not create topic {name}: {_reason(exc)}", hint=hint) from None
        existing = _partition_counts(admin, timeout, wait_for=created)
    raised = raise_message_limits(
        admin,
        {
            t.name: int(t.configs["max.message.bytes"])
            for t in topics
            if t.name in existing and t.name not in created and "max.message.bytes" in t.configs
        },
        timeout,
    )
    results = []
    for t in topics:
        want = wanted_partitions(t, kafka)
        have = existing.get(t.name, want)
        if t.name in created:
            results.append(TopicResult(t.name, "created", have, want, f"created with {have} partition(s)"))
        elif have < want:
            results.append(
                TopicResult(
                    t.name,
                    "fewer_partitions",
                    have,
                    want,
                    f"exists with {have} partition(s), fewer than the {want} configured: processors "
                    f"reading it cannot spread over more than {have} worker(s); recreate it on a fresh "
                    "cluster, or lower RLSTREAM_KAFKA__PARTITIONS to match",
                )
            )
        else:
            note = ""
            if t.name in raised:
                note = f"; max.message.bytes raised to {t.configs['max.message.bytes']}"
            text = f"exists with {have} partition(s){note}"
            results.append(TopicResult(t.name, "exists", have, want, text))
    return results


def raise_message_limits(admin: AdminClient, wanted: dict[str, int], timeout: float) -> set[str]:
    """Raise ``max.message.bytes`` of existing topics to at least ``wanted[name]``; the names raised.
    A limit already as large (set by the operator, or the broker's own) is left alone."""
    if not wanted:
        return set()
    raised: set[str] = set()
    try:
        described = admin.describe_configs(
            [ConfigResource("topic", name) for name in wanted], request_timeout=timeout
        )
        low: list[str] = []
        for resource, future in described.items():
            entry = future.result(timeout).get("max.message.bytes")
            if entry is None or entry.value is None or int(entry.value) < wanted[resource.name]:
                low.append(resource.name)
        if not low:
            return raised
        changes = [
            ConfigResource(
                "topic",
                name,
                incremental_configs=[
                    ConfigEntry(
                        "max.message.bytes",
                        str(wanted[name]),
                        incremental_operation=AlterConfigOpType.SET,
                    )
                ],
            )
            for name in low
        ]
        for resource, future in admin.incremental_alter_configs(changes, request_timeout=timeout).items():
            future.result(timeout)
            raised.add(resource.name)
    except KafkaException as exc:
        raise BrokerError(
            f"could not raise max.message.bytes of {', '.join(sorted(wanted))}: {_reason(exc)}",
            hint="raise it by hand (kafka-configs.sh --alter --add-config max.message.bytes=...)",
        ) from None
    return raised


def _topic_configs(topic: Topic, kafka: KafkaConfig) -> dict[str, str]:
    configs = dict(topic.configs)
    if kafka.min_insync_replicas is not None:
        configs.setdefault("min.insync.replicas", str(kafka.min_insync_replicas))
    return configs


def _partition_counts(admin: AdminClient, timeout: float, wait_for: set[str] | None = None) -> dict[str, int]:
    # metadata of freshly created topics can lag the create call by a moment
    deadline = time.monotonic() + timeout
    while True:
        try:
            md = admin.list_topics(timeout=timeout)
        except KafkaException as exc:
            raise BrokerError(f"could not list topics: {_reason(exc)}") from None
        counts = {name: len(t.partitions) for name, t in md.topics.items() if t.error is None}
        if not wait_for or wait_for <= counts.keys() or time.monotonic() > deadline:
            return counts
        time.sleep(0.1)


def _reason(exc: KafkaException) -> str:
    err = exc.args[0] if exc.args else None
    reason = err.str() if isinstance(err, KafkaError) else str(exc)
    if isinstance(err, KafkaError) and err.code() in (KafkaError._TRANSPORT, KafkaError._AUTHENTICATION):
        creds = security.current()
        if creds.protocol == "PLAINTEXT":
            reason += (
                " (connecting in plaintext: a cluster that requires TLS or SASL drops the connection; "
                "set RLSTREAM_KAFKA__SECURITY__*)"
            )
        else:
            who = creds.username or "a certificate"
            reason += f" (connecting with {creds.protocol} as {who}: check the credentials and the CA)"
    return reason


#: the broker's codes for "this principal may not"
AUTHORIZATION_CODES = frozenset(
    {
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.GROUP_AUTHORIZATION_FAILED,
        KafkaError.CLUSTER_AUTHORIZATION_FAILED,
        KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    }
)


def refusal(err: object, action: str) -> BrokerError | None:
    """A clear error when ``err`` is the broker refusing this process's principal ``action`` (e.g.
    "write rl.rewards"); None for any other error."""
    if not isinstance(err, KafkaError) or err.code() not in AUTHORIZATION_CODES:
        return None
    who = security.current().username or "this client"
    return BrokerError(
        f"not authorized: {who} may not {action} ({err.name()})",
        hint="`rlstream acls plan` lists what each processor's principal is granted; connect as the "
        "principal that should do this, or grant it with `rlstream acls plan --apply`",
    )
