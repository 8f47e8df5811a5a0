"""Configuration of the Kafka adapters (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field


class KafkaConfig(BaseModel):
    """How clients reach the cluster and how topics are laid out."""

    model_config = {"frozen": True}

    #: an existing cluster; when unset the project's own local broker is used
    bootstrap_servers: str | None = None
    client_id: str = "rlstream"
    partitions: int = Field(default=3, ge=1, description="partitions per event topic")
    replication_factor: int = Field(default=1, ge=1)
    min_insync_replicas: int = Field(default=1, ge=1)
    request_timeout_s: float = Field(default=30.0, gt=0)


class BrokerConfig(BaseModel):
    """The local Apache Kafka cluster that ``rlstream broker up`` runs."""

    model_config = {"frozen": True}

    kafka_version: str = "4.1.1"
    scala_version: str = "2.13"
    #: where broker data (and the pid files) live; defaults to <home>/broker
    data_dir: Path | None = None
    host: str = "127.0.0.1"
    #: broker i listens on base_port + 2*i (clients) and base_port + 2*i + 1 (controller)
    base_port: int = Field(default=19092, ge=1024, le=65000)
    heap_mb: int = Field(default=512, ge=128)
    start_timeout_s: float = Field(default=90.0, gt=0)
