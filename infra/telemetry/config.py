"""Configuration of tracing (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field


class TelemetryConfig(BaseModel):
    model_config = {"frozen": True}

    #: OTLP/HTTP endpoint, e.g. http://127.0.0.1:4318; unset = spans are created but not exported
    otlp_endpoint: str | None = None
    service_namespace: str = "rlstream"
    #: also print finished spans to stderr (debugging)
    console: bool = False
    #: headers sent with every export, one ``name=value`` per line, from a file (a mounted secret:
    #: e.g. ``authorization=Bearer <token>``), so a token is never in the environment or a log
    otlp_headers_file: Path | None = None
    #: the CA bundle that signed an https endpoint's certificate (default: the system's)
    otlp_certificate_file: Path | None = None


class MetricsConfig(BaseModel):
    """Each worker's ``/metrics`` endpoint (Prometheus text format)."""

    model_config = {"frozen": True}

    enabled: bool = True
    #: the address to listen on: loopback by default; ``0.0.0.0`` where Prometheus scrapes from elsewhere
    host: str = "127.0.0.1"
    #: the port of ``rlstream worker`` (0: any free port, logged); ``rlstream run`` gives its workers this
    #: port and the ones after it, in the order it starts them (free ports if 0)
    port: int = Field(default=9464, ge=0, le=65535)
