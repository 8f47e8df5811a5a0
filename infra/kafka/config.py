"""Configuration of the Kafka adapters (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from infra.kafka.security import KafkaSecurity

#: Apache Kafka release the local broker runs (from Maven Central, org.apache.kafka:kafka_2.13).
#: 4.4.0 is the newest release; measured against it on this project's clients: confluent-kafka 2.16
#: (idempotent produce, consumer groups, commits, offsets_for_times) and aiokafka 0.14 (idempotent and
#: transactional produce, group consume, commit) both work, and so does a Faust 0.15 agent with a table
#: (at-least-once and exactly_once). 4.x dropped the old protocol versions of KIP-896, but every client
#: in the lock file already speaks the newer ones, so there is no reason to stay on 3.9.
DEFAULT_KAFKA_VERSION = "4.4.0"


class KafkaConfig(BaseModel):
    """How clients reach the cluster and how topics are laid out."""

    model_config = {"frozen": True}

    #: an existing cluster; when unset the project's own local broker is used
    bootstrap_servers: str | None = None
    client_id: str = "rlstream"
    partitions: int = Field(default=3, ge=1, description="partitions per event topic")
    #: None = the cluster's own default (1 on a single local broker, 3 on the 3-broker cluster)
    replication_factor: int | None = Field(default=None, ge=1)
    #: None = the cluster's own default (1 on a single local broker, 2 on the 3-broker cluster)
    min_insync_replicas: int | None = Field(default=None, ge=1)
    request_timeout_s: float = Field(default=30.0, gt=0)
    #: TLS and SASL (``RLSTREAM_KAFKA__SECURITY__*``); plaintext without credentials by default
    security: KafkaSecurity = KafkaSecurity()


class BrokerConfig(BaseModel):
    """The local Apache Kafka cluster that ``rlstream broker up`` runs."""

    model_config = {"frozen": True}

    kafka_version: str = DEFAULT_KAFKA_VERSION
    scala_version: str = "2.13"
    #: where broker data (and the pid files) live; defaults to <home>/broker
    data_dir: Path | None = None
    #: where the broker jars are cached (<jar_dir>/<version>/lib); defaults to <home>/kafka
    jar_dir: Path | None = None
    #: number of combined broker+controller nodes of a fresh cluster (an existing one keeps its own)
    brokers: int = Field(default=1, ge=1, le=9)
    host: str = "127.0.0.1"
    #: node i listens on base_port + 2*i (clients) and base_port + 2*i + 1 (controller)
    base_port: int = Field(default=19092, ge=1024, le=65000)
    heap_mb: int = Field(default=512, ge=128)
    #: the JVM compiles with its quick compiler only (C1): a restart after a kill costs the broker about
    #: half the CPU seconds (4.2 s against 7.9 s, measured on 2 shared cores), so on a busy small machine
    #: it answers again sooner; off for the optimising compiler too (a long-lived broker under heavy load)
    quick_jit: bool = True
    start_timeout_s: float = Field(default=90.0, gt=0)
    stop_timeout_s: float = Field(default=30.0, gt=0)
    java: str = "java"
    maven: str = "mvn"
