"""Starting transactions on a fresh or failed-over cluster waits for the transaction coordinator rather
than failing the worker (every worker of the 3-broker fault test died once at start-up that way), and a
transactional call that does not return is left behind after a bounded time."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import KafkaError, KafkaException

from infra.kafka.transactional import TransactionStuck, _coordinator_busy, bounded

ROOT = Path(__file__).resolve().parents[2]


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


def test_a_transaction_stuck_in_the_client_ends_the_process_for_a_restart() -> None:
    """The last resort for a transaction that never ends: the watchdog ends the worker (exit 75) so
    that a supervisor restarts it; a cancelled one does not."""
    head = "import logging, time\nlogging.basicConfig()\n"
    head += "from infra.kafka import transactional as t\nx = t._exit_if_stuck\n"
    stuck = head + "x('t', 0.5); time.sleep(30)"
    done = subprocess.run([sys.executable, "-c", stuck], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 75, done.stderr[-2000:]
    assert "stuck" in done.stderr
    fine = head + "x('t', 1).cancel(); time.sleep(2)"
    done = subprocess.run([sys.executable, "-c", fine], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_bounded_call_returns_its_value_or_raises_its_error() -> None:
    assert bounded(lambda: 42, 5, "answer") == 42
    with pytest.raises(KafkaException):
        bounded(lambda: (_ for _ in ()).throw(KafkaException(KafkaError(KafkaError._FENCED))), 5, "fenced")


def test_a_call_that_does_not_return_is_left_behind_after_its_limit() -> None:
    """librdkafka can wait forever inside send_offsets_to_transaction past its own timeout: the caller
    gets TransactionStuck after the limit and goes on while the call stays blocked on its thread."""
    release = threading.Event()
    t0 = time.monotonic()
    with pytest.raises(TransactionStuck, match="send_offsets_to_transaction did not return within 1s"):
        bounded(lambda: release.wait(60), 1.0, "send_offsets_to_transaction")
    assert time.monotonic() - t0 < 5
    release.set()
