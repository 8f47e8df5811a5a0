"""Dead letters: a record a processor could not handle, with the error, kept for inspection or retry."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from schemas.base import Event


class DeadLettered(Event):
    event_type: ClassVar[str] = "rlstream.dlq.lettered"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "original_topic"

    schema_version: Literal[1] = 1
    stage: str = Field(description="the processor that gave up, e.g. sandbox, consumer")
    error_type: str
    error: str
    attempt: int = Field(default=0, ge=0)
    original_topic: str
    original_partition: int = Field(ge=-1)
    original_offset: int = Field(ge=-1)
    original_event_id: str | None = None
    #: the original record, base64, so the bytes are kept exactly even when they are not text
    original_key_b64: str | None = None
    original_value_b64: str = ""
    original_headers: dict[str, str] = Field(default_factory=dict)
    disposition: Literal["dead", "retry"] = "dead"

    def identity(self) -> tuple[str, ...]:
        return (self.stage, self.original_topic, str(self.original_partition), str(self.original_offset))
