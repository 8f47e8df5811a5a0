"""Configuration of the Faust runtime (composed into the one settings object by ``rlstream.settings``),
and the one place where a Faust app's client settings are made from it.

Every Kafka client a Faust worker opens (aiokafka's consumer and producer under Faust, and the
confluent-kafka readers of side inputs) takes its connection settings from :func:`app_settings` and
the shared :class:`~infra.kafka.config.KafkaConfig`: credentials (TLS, SASL) belong there, once.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from infra.kafka.config import KafkaConfig
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
) -> dict[str, Any]:
    """The keyword arguments of ``faust.App`` for ``app_id``: where the cluster is and how its clients
    behave (credentials go here too, from ``kafka``)."""
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
    if replication_factor is not None:
        settings["topic_replication_factor"] = replication_factor
    return settings
