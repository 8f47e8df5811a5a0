"""Configuration of the rollout generator (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pydantic import BaseModel


class GeneratorConfig(BaseModel):
    model_config = {"frozen": True}
