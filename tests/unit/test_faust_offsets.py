"""What the Faust runtime commits: only offsets of records the hosted processors handled.

Faust acknowledges records its streams skip (taken off the queue while a rebalance suspends the flow,
or fetched under the previous generation) as if they were handled, and its consumer would commit past
them; ``tests/contract/stress.py`` lost records that way. These tests drive the runtime's consumer the
way Faust's commit does (``_filter_committable_offsets``, no broker needed).
"""

from __future__ import annotations

from typing import Any

import pytest
from faust.types import TP

from infra.faust.runtime import App, Handled


def test_a_partition_moves_as_far_as_the_slowest_reader_handled() -> None:
    handled = Handled()
    handled.reads("sandbox", ["rl.generations"])
    handled.reads("experience", ["rl.generations", "rl.verdicts"])
    assert handled.committable("rl.generations", 0) is None
    handled.record("sandbox", [("rl.generations", 0, 7), ("rl.generations", 0, 9)])
    assert handled.committable("rl.generations", 0) is None, "experience has handled nothing yet"
    handled.record("experience", [("rl.generations", 0, 4), ("rl.verdicts", 0, 2)])
    assert handled.committable("rl.generations", 0) == 5
    assert handled.committable("rl.verdicts", 0) == 3
    # an older batch recorded late never moves a partition back
    handled.record("experience", [("rl.generations", 0, 12), ("rl.generations", 0, 3)])
    assert handled.committable("rl.generations", 0) == 10
    handled.forget([("rl.generations", 0)])
    assert handled.committable("rl.generations", 0) is None
    assert handled.committable("rl.verdicts", 0) == 3
    assert not handled.ours("rl.tasks") and handled.ours("rl.verdicts")


@pytest.fixture(scope="module")
def app() -> App:
    # no broker is contacted: the consumer is only built
    return App("rlstream.test.offsets", broker="kafka://127.0.0.1:1", store="memory://", web_enabled=False)


def test_records_faust_acknowledged_but_never_handled_are_not_committed(
    app: App, caplog: pytest.LogCaptureFixture
) -> None:
    app.handled.reads("relay", ["in"])
    consumer: Any = app.consumer  # (Faust's private bookkeeping, driven as its commit drives it)
    tp = TP("in", 0)

    def acknowledge(*offsets: int) -> None:
        consumer._acked[tp].extend(offsets)
        consumer._acked_index[tp].update(offsets)

    # records 0-2 handled; 3 and 4 skipped during a rebalance, acknowledged all the same
    app.handled.record("relay", [("in", 0, o) for o in (0, 1, 2)])
    acknowledge(0, 1, 2, 3, 4)
    assert consumer._filter_committable_offsets([tp]) == {tp: 3}
    assert "Faust would commit offset 5" in caplog.text
    # nothing more handled: nothing more to commit, whatever Faust was told
    consumer._committed_offset[tp] = 3
    acknowledge(5)
    assert consumer._filter_committable_offsets([tp]) == {}
    # the records handled again (after the rebalance's seek back to 3) move it on
    app.handled.record("relay", [("in", 0, o) for o in (3, 4, 5)])
    acknowledge(3, 4, 5)
    assert consumer._filter_committable_offsets([tp]) == {tp: 6}
    assert consumer._acked[tp] == [], "what Faust collected does not pile up"


def test_topics_no_processor_reads_keep_fausts_own_rule(app: App) -> None:
    consumer: Any = app.consumer
    tp = TP("elsewhere", 1)
    consumer._acked[tp].extend([0, 1, 2])
    consumer._acked_index[tp].update([0, 1, 2])
    assert consumer._filter_committable_offsets([tp]) == {tp: 3}
