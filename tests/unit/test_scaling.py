"""The scaling rule of ``rlstream run --autoscale``: one instance per ``lag_per_instance`` records
waiting, within the partitions and cores, moved one step at a time once the wish has held."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rlstream.scaling import Scaler, ScalingConfig
from rlstream.settings import Settings

CONFIG = ScalingConfig(
    lag_per_instance={"sandbox": 10}, interval_s=1, up_after_s=5, down_after_s=30, settle_s=10
)


def _feed(scaler: Scaler, readings: list[tuple[float, int]]) -> list[tuple[float, int, int]]:
    changes = []
    for now, lag in readings:
        change = scaler.observe(lag, now)
        if change is not None:
            changes.append((now, change.before, change.after))
    return changes


def test_a_backlog_that_holds_adds_instances_one_at_a_time_up_to_the_maximum() -> None:
    scaler = Scaler("sandbox", CONFIG, maximum=3, now=0.0)
    changes = _feed(scaler, [(float(t), 500) for t in range(0, 60)])
    # wanted from t=0; the first after up_after_s, each next one settle_s after the last
    assert changes == [(5.0, 1, 2), (15.0, 2, 3)]
    assert scaler.count == 3  # 500 records would want 50: the partitions bound it


def test_a_short_spike_buys_no_instance() -> None:
    scaler = Scaler("sandbox", CONFIG, maximum=3, now=0.0)
    readings = [(float(t), 100 if t % 10 < 3 else 0) for t in range(0, 60)]
    assert _feed(scaler, readings) == []


def test_a_drained_backlog_retires_instances_only_after_the_quiet_window() -> None:
    scaler = Scaler("sandbox", CONFIG, maximum=2, now=0.0)
    assert _feed(scaler, [(float(t), 200) for t in range(0, 6)]) == [(5.0, 1, 2)]
    # drained at t=6; a blip at t=20 does not reset the wish to shrink (it still wants 1: 8 <= 10)
    quiet = [(float(t), 8 if t == 20 else 0) for t in range(6, 60)]
    assert _feed(scaler, quiet) == [(36.0, 2, 1)]
    assert scaler.count == 1
    assert _feed(scaler, [(float(t), 0) for t in range(60, 200)]) == []  # never below one


def test_the_change_names_the_lag_that_caused_it() -> None:
    scaler = Scaler("generator", ScalingConfig(up_after_s=0, settle_s=0), maximum=2, now=0.0)
    change = scaler.observe(9, 1.0)
    assert change is not None
    assert change.describe() == "autoscale generator: adding an instance (1 -> 2): lag 9, 2 wanted for 0s"


def test_a_configured_maximum_lowers_the_bound_and_unknown_kinds_are_refused() -> None:
    assert Scaler("sandbox", ScalingConfig(max_instances=1), maximum=3, now=0.0).maximum == 1
    with pytest.raises(ValueError, match="not scalable"):
        Scaler("learner", CONFIG, maximum=3, now=0.0)
    with pytest.raises(ValidationError, match="only sandbox, generator, evaluator scale"):
        ScalingConfig(kinds=("sandbox", "projector"))


def test_the_environment_configures_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RLSTREAM_SCALING__KINDS", '["sandbox"]')
    monkeypatch.setenv("RLSTREAM_SCALING__LAG_PER_INSTANCE", '{"sandbox": 4}')
    settings = Settings()
    assert settings.scaling.kinds == ("sandbox",)
    assert settings.scaling.lag_per_instance == {"sandbox": 4}
