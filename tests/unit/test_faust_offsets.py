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


def test_a_partition_moves_to_the_end_of_what_every_reader_handled_without_a_hole() -> None:
    gen, ver = "rl.generations", "rl.verdicts"
    handled = Handled()
    handled.reads("sandbox", [gen])
    handled.reads("experience", [gen, ver])
    handled.record("sandbox", [(gen, 0, 5), (gen, 0, 6)])
    assert handled.committable(gen, 0) is None, "where the assignment started is not known yet"
    handled.started(gen, 0, 5)
    handled.started(ver, 0, 2)
    assert handled.committable(gen, 0) == 5, "experience has handled nothing yet"
    assert (handled.since(gen, 0), handled.since(ver, 0)) == (5, 2)
    handled.record("experience", [(gen, 0, 5), (gen, 0, 6), (ver, 0, 2)])
    assert (handled.committable(gen, 0), handled.committable(ver, 0)) == (7, 3)
    # 7 and 8 never reached the sandbox (the fetcher counted them as read): the commit holds there
    handled.record("sandbox", [(gen, 0, 9), (gen, 0, 10)])
    handled.record("experience", [(gen, 0, o) for o in (7, 8, 9, 10)])
    assert handled.committable(gen, 0) == 7 and handled.hole(gen, 0) == (7, 8)
    handled.record("sandbox", [(gen, 0, 7), (gen, 0, 8)])
    assert handled.committable(gen, 0) == 11 and handled.hole(gen, 0) is None
    assert handled.since(gen, 0) == 5, "the run still starts where the assignment did"
    handled.forget([(gen, 0)])
    assert handled.committable(gen, 0) is None and handled.since(gen, 0) is None
    assert handled.committable(ver, 0) == 3
    assert not handled.ours("rl.tasks") and handled.ours(ver)


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

    # the assignment starts at 0; records 0-2 handled; 3 and 4 skipped during a rebalance, acknowledged
    # all the same
    app.handled.started("in", 0, 0)
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
