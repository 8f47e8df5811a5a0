"""The run's restart budget: a worker may die RESTARTS times per window, not per run."""

from pathlib import Path

from rlstream.runner import RESTART_WINDOW_S, RESTARTS, Child


def test_a_worker_that_keeps_dying_within_the_window_ends_the_run() -> None:
    child = Child("sandbox", Path("/nonexistent.log"))
    for i in range(RESTARTS):
        assert child.may_restart(100.0 + i)
        child.recent_restarts.append(100.0 + i)
    assert not child.may_restart(100.0 + RESTARTS)


def test_restarts_spread_over_a_long_run_never_exhaust_the_budget() -> None:
    # e.g. one restart per broker restart, several broker restarts over hours
    child = Child("sandbox", Path("/nonexistent.log"))
    now = 0.0
    for _ in range(5 * RESTARTS):
        assert child.may_restart(now)
        child.recent_restarts.append(now)
        now += RESTART_WINDOW_S / (RESTARTS - 1) + 1
