"""Starting transactions on a fresh or failed-over cluster waits for the transaction coordinator rather
than failing the worker (every worker of the 3-broker fault test died once at start-up that way)."""

from __future__ import annotations

from confluent_kafka import KafkaError

from infra.kafka.transactional import _coordinator_busy


def test_a_coordinator_still_loading_or_moving_is_waited_for() -> None:
    for code in (
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.NOT_COORDINATOR,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError._TIMED_OUT,
    ):
        assert _coordinator_busy(KafkaError(code))


def test_a_fatal_or_permanent_error_still_fails_the_start() -> None:
    assert not _coordinator_busy(KafkaError(KafkaError.NOT_COORDINATOR, fatal=True))
    assert not _coordinator_busy(KafkaError(KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    assert not _coordinator_busy(None)
