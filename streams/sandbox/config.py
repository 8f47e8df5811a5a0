"""Configuration of the sandbox (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pydantic import BaseModel


class SandboxConfig(BaseModel):
    model_config = {"frozen": True}
