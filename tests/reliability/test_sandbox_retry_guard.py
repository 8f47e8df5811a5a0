"""A hostile retry record cannot stall the sandbox processor: its backoff is bounded whatever attempt
number it claims, and a retry that holds no generation is refused (dead-lettered by the runtime)."""

from __future__ import annotations

import base64
import time
from types import SimpleNamespace
from typing import Any

import pytest

from infra.runtime.port import Incoming, PoisonRecord
from schemas.dlq import DeadLettered
from schemas.envelope import Envelope
from schemas.errors import EventDecodeError
from streams.sandbox.agent import SandboxAgent
from streams.sandbox.config import SandboxConfig


def _retry(attempt: int, value: bytes, ce_type: str) -> Incoming:
    letter = DeadLettered(
        stage="sandbox",
        error_type="SandboxError",
        error="boom",
        attempt=attempt,
        original_topic="rl.generations",
        original_partition=0,
        original_offset=0,
        original_value_b64=base64.b64encode(value).decode(),
        original_headers={"ce_type": ce_type},
        disposition="retry",
    )
    envelope = Envelope.for_event(letter, source="test")
    # written an hour ago: whatever the backoff, it is due
    return Incoming(envelope, letter, "rl.retry.sandbox", 0, 0, int((time.time() - 3600) * 1000))


@pytest.mark.parametrize("attempt", [0, 1, 40, 2**62])
@pytest.mark.parametrize(
    ("value", "ce_type", "error"),
    [
        (b"\xff not json", "rlstream.rollout.generated.v1", EventDecodeError),
        (b'{"schema_version": 1, "task_id": "t"}', "rlstream.task.published.v1", EventDecodeError),
    ],
)
def test_a_hostile_retry_record_is_refused_at_once(
    attempt: int, value: bytes, ce_type: str, error: Any
) -> None:
    agent = SandboxAgent(SimpleNamespace(config=SandboxConfig()), tasks=None, backoff_s=1.0)  # type: ignore[arg-type]
    started = time.monotonic()
    with pytest.raises((error, PoisonRecord)):
        agent._generation(_retry(attempt, value, ce_type))
    assert time.monotonic() - started < 5
