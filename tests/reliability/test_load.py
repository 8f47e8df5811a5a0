"""A backlog many times larger than the pipeline's bounds drains with bounded memory and without a
duplicate: the small variant of ``python -m bench.load`` (which reports the figures of a 10,000-task
backlog). Qualitative only: no assertion on speed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.load import run_load, summary_table
from infra.kafka.config import BrokerConfig
from tests.conftest import private_dir, start_test_cluster

TASKS = 100
IN_FLIGHT = 4
LEARNER_LAG = 8


@pytest.fixture
def own_broker(kafka_lib: Path, test_broker_config: BrokerConfig) -> Iterator[str]:
    """A broker of this test's own: the learner's lag is read for its consumer group on the whole
    topic, which other tests' runs would add to."""
    with private_dir("rlstream-test-load-") as data_dir:
        cluster = start_test_cluster(test_broker_config, kafka_lib, data_dir)
        try:
            yield cluster.running_bootstrap() or ""
        finally:
            cluster.down()


def test_a_backlog_drains_with_bounded_memory_and_the_scheduler_at_its_bounds(
    own_broker: str, tmp_path: Path
) -> None:
    result = run_load(
        own_broker,
        TASKS,
        group_size=2,
        home=tmp_path / "home",
        sample_every_s=3.0,
        window_s=20.0,
        report_every_s=60.0,
        max_seconds=1500,
        env={
            "RLSTREAM_PIPELINE__SCHEDULER__MAX_GROUPS_IN_FLIGHT": str(IN_FLIGHT),
            "RLSTREAM_PIPELINE__SCHEDULER__MAX_LEARNER_LAG": str(LEARNER_LAG),
        },
    )
    (tmp_path / "load.json").write_text(json.dumps(result, indent=1) + "\n")
    print("\n" + summary_table(result))
    assert result["finished"], f"{result['groups_done']}/{TASKS} groups done"
    assert result["groups_done"] == TASKS and result["samples_judged"] == 2 * TASKS
    assert not result["duplicate_event_ids"], result["duplicate_event_ids"]

    # the scheduler never let more than its bound into the pipeline, whatever the backlog
    assert result["groups_in_flight_max"] <= IN_FLIGHT, result["groups_in_flight_max"]
    # the learner's lag stays within its bound plus what was already in flight when it was reached
    assert result["learner_lag_max"] is not None
    assert result["learner_lag_max"] <= LEARNER_LAG + IN_FLIGHT, result["learner_lag_max"]

    # memory is bounded: no worker grows much in the second half of the drain over the first half
    # (the first half includes start-up; a generous factor, the bench reports the real figures)
    first, second = result["rss_max_first_half_mb"], result["rss_max_second_half_mb"]
    grown = {
        name: (first[name], second[name])
        for name in first
        if name != "broker" and second.get(name, 0.0) > 1.5 * first[name] + 64
    }
    assert not grown, f"RSS (first half, second half) MiB grew: {grown}"
