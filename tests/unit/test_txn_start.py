"""Starting transactions on a fresh or failed-over cluster waits for the transaction coordinator rather
than failing the worker (every worker of the 3-broker fault test died once at start-up that way)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import KafkaError

from infra.kafka.transactional import TransactionalProcessor, _coordinator_busy
from infra.runtime.port import Hosted
from schemas.errors import BrokerError

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
    """After a broker restart the client was seen waiting forever inside send_offsets_to_transaction:
    the watchdog ends the worker (exit 75) so that a supervisor restarts it; a cancelled one does not."""
    head = "import logging, time\nlogging.basicConfig()\n"
    head += "from infra.kafka import transactional as t\nx = t._exit_if_stuck\n"
    stuck = head + "x('t', 0.5); time.sleep(30)"
    done = subprocess.run([sys.executable, "-c", stuck], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 75, done.stderr[-2000:]
    assert "stuck" in done.stderr
    fine = head + "x('t', 1).cancel(); time.sleep(2)"
    done = subprocess.run([sys.executable, "-c", fine], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_worker_whose_partitions_were_lost_stops_for_a_restart() -> None:
    """A session that timed out (the broker restarted) leaves the client unable to send offsets to a
    transaction: the worker stops with a BrokerError at its next step instead of hanging there."""
    proc = TransactionalProcessor(Hosted("lost", ["t"], lambda batch, state: []), bootstrap="127.0.0.1:1")
    try:
        proc._on_lost(proc._consumer, [])
        with pytest.raises(BrokerError, match="partitions away"):
            proc.step()
    finally:
        proc._producer.flush(0)
