"""Ports of the clusters tests start: outside the kernel's ephemeral range, so a broker restarted on the
same port never finds it taken by a client that connected to itself while the broker was away."""

from __future__ import annotations

from infra.kafka.local import ephemeral_port_range, find_free_base_port, port_free


def test_a_test_cluster_gets_consecutive_free_ports_below_the_ephemeral_range() -> None:
    low, high = ephemeral_port_range()
    assert 0 < low <= high
    for brokers in (1, 3):
        base = find_free_base_port("127.0.0.1", 2 * brokers)
        assert base >= 20000 and base + 2 * brokers <= low
        assert all(port_free("127.0.0.1", base + i) for i in range(2 * brokers))
