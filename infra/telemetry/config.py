"""Configuration of tracing (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pydantic import BaseModel


class TelemetryConfig(BaseModel):
    model_config = {"frozen": True}

    #: OTLP/HTTP endpoint, e.g. http://127.0.0.1:4318; unset = spans are created but not exported
    otlp_endpoint: str | None = None
    service_namespace: str = "rlstream"
    #: also print finished spans to stderr (debugging)
    console: bool = False
