"""Configuration of the monitor (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel


class MonitorConfig(BaseModel):
    model_config = {"frozen": True}

    #: the alert rule file (None: the rules shipped with rlstream, ``streams/monitor/rules.yaml``)
    rules: Path | None = None
