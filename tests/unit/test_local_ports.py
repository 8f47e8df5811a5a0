"""Ports of the clusters tests start: outside the kernel's ephemeral range, so a broker restarted on the
same port never finds it taken by a client that connected to itself while the broker was away."""

from __future__ import annotations

import socket
import threading

import pytest

from infra.kafka import local
from infra.kafka.local import ephemeral_port_range, find_free_base_port, port_free


def test_a_test_cluster_gets_consecutive_free_ports_below_the_ephemeral_range() -> None:
    low, high = ephemeral_port_range()
    assert 0 < low <= high
    for brokers in (1, 3):
        base = find_free_base_port("127.0.0.1", 2 * brokers)
        assert base >= 20000 and base + 2 * brokers <= low
        assert all(port_free("127.0.0.1", base + i) for i in range(2 * brokers))


def test_a_port_no_live_process_owns_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """A broker killed a moment ago: its listener is still open while its threads exit, and no process
    shows it among its files. Starting the broker again waits for the port instead of failing."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    monkeypatch.setattr(local, "port_holder", lambda p: "another process")
    closer = threading.Timer(1.0, listener.close)
    closer.start()
    try:
        local.ensure_port_free("127.0.0.1", port, exiting_grace_s=60)
        assert local.port_free("127.0.0.1", port)
    finally:
        closer.cancel()
        listener.close()
