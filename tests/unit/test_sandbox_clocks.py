"""The WASM guest's clocks (``streams.sandbox.clocks``), pure: drawn from the job, never backwards,
jumping between calls within a run and never within a call, however many reads it makes."""

from __future__ import annotations

import datetime
import time
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from streams.sandbox.clocks import (
    JUMP_MAX_S,
    JUMP_MIN_S,
    MONOTONIC,
    NS,
    PROCESS_CPUTIME,
    REALTIME,
    REALTIME_FROM,
    REALTIME_TO,
    WALL_STEP_MIN_S,
    GuestClocks,
    clock_seed,
    machine_clocks,
)
from streams.sandbox.result import Job

JOB = Job(mode="cases", code="def f(x):\n    return x\n", entry_point="f", inputs=("(1,)",))


def test_the_draw_is_the_jobs_and_each_run_its_own() -> None:
    assert clock_seed(JOB.cache_key("wasm", "h")) == clock_seed(replace(JOB).cache_key("wasm", "h"))
    others = {
        clock_seed(replace(JOB, clock_draw=1).cache_key("wasm", "h")),
        clock_seed(replace(JOB, clock_draw=2).cache_key("wasm", "h")),
        clock_seed(replace(JOB, inputs=("(2,)",)).cache_key("wasm", "h")),
        clock_seed(JOB.cache_key("wasm", "h"), "check"),
    }
    assert clock_seed(JOB.cache_key("wasm", "h")) not in others and len(others) == 4
    # a job with no draw keeps the cache key it always had; a re-run's names its draw
    assert replace(JOB, clock_draw=1).cache_key("wasm", "h") != JOB.cache_key("wasm", "h")


def test_realtime_starts_in_the_drawn_range_and_advances_at_the_real_rate() -> None:
    starts = []
    for i in range(200):
        clocks = GuestClocks(bytes([i]) * 32, start_ns=1_000)
        first = clocks.peek(REALTIME, 1_000)
        assert first is not None
        starts.append(datetime.datetime.fromtimestamp(first / NS, datetime.UTC))
        assert clocks.peek(REALTIME, 1_000 + 5 * NS) == first + 5 * NS  # no call, no jump
    assert all(REALTIME_FROM <= s < REALTIME_TO for s in starts)
    assert sum(s.year >= 2100 for s in starts) > 100  # a date bomb of 2100 goes off in most runs
    assert sum(s.year < 2030 for s in starts) > 5


def test_the_same_seed_reads_the_same_clocks() -> None:
    a, b = GuestClocks(b"s" * 32, 0), GuestClocks(b"s" * 32, 0)
    got: list[list[int | None]] = [[], []]
    for i in range(300):
        for clocks, out in ((a, got[0]), (b, got[1])):
            if i % 7 == 0:
                clocks.call_begins()
            out.append(clocks.read(REALTIME if i % 3 == 0 else MONOTONIC, i * 1000))
    assert got[0] == got[1]


@given(
    st.binary(min_size=32, max_size=32),
    st.lists(st.lists(st.integers(0, 3), max_size=30), min_size=1, max_size=300),
)
def test_clocks_never_go_backwards_and_jump_between_calls_in_every_doubling(
    seed: bytes, calls: list[list[int]]
) -> None:
    clocks = GuestClocks(seed, 0)
    seen: dict[int, int] = {}
    jumps = 0
    now = 0
    for reads in calls:
        before = clocks.peek(MONOTONIC, now)
        clocks.call_begins()
        after = clocks.peek(MONOTONIC, now)
        assert before is not None and after is not None
        if after - before:
            jumps += 1
            assert JUMP_MIN_S * NS <= after - before <= JUMP_MAX_S * NS + 1000
        start = after
        for clock in reads:
            now += 1000  # a microsecond of real time between reads
            value = clocks.read(clock, now)
            assert value is not None
            assert value >= seen.get(clock, 0)
            seen[clock] = value
        # within a call the clocks run at the real rate, however many reads it makes
        assert clocks.peek(MONOTONIC, now) == start + 1000 * len(reads)
    # one jump as the 1st call begins and one as the 2nd does, then one in each doubling run of calls:
    # (2, 4], (4, 8], ...
    assert len(calls).bit_length() <= jumps <= len(calls).bit_length() + 1
    assert (clocks.peek(PROCESS_CPUTIME, now) or 0) >= JUMP_MIN_S * NS  # "lived a minute" by the 1st call


def test_reads_at_load_and_within_one_call_never_jump() -> None:
    clocks = GuestClocks(b"x" * 32, 0)
    born, wall_at_load = clocks.read(MONOTONIC, 0), clocks.read(REALTIME, 0)
    assert born is not None and wall_at_load is not None
    assert [clocks.read(MONOTONIC, 0) for _ in range(10_000)][-1] == born  # a program's load
    clocks.call_begins()
    first = clocks.read(MONOTONIC, 0)
    # the first call: as if the caller called a while after the import
    assert first is not None and first - born >= JUMP_MIN_S * NS
    assert clocks.read(MONOTONIC, 5 * NS) == first + 5 * NS  # within the call: the real rate
    clocks.call_begins()
    later = clocks.read(MONOTONIC, 5 * NS)
    # the second: as if the caller came back a long while later (a gap bomb of any threshold up to
    # half the longest jump goes off in a run of two cases), and the wall clock stepped further
    assert later is not None and JUMP_MAX_S * NS // 2 <= later - first - 5 * NS <= JUMP_MAX_S * NS
    wall = clocks.read(REALTIME, 5 * NS)
    assert wall is not None and wall - wall_at_load - (later - born) >= WALL_STEP_MIN_S * NS


def test_clocks_the_guest_has_not_are_refused() -> None:
    clocks = GuestClocks(b"x" * 32, 0)
    assert clocks.read(4, 0) is None and clocks.read(2**32 - 1, 0) is None


def test_a_machines_clocks_read_the_hosts_time_and_never_jump() -> None:
    # a probe run's: what a program reads anywhere (today, calls as quick as the caller's)
    before = time.time_ns()
    clocks = machine_clocks(b"x" * 32, 0)
    now = clocks.read(REALTIME, 0)
    assert now is not None and before <= now <= time.time_ns()
    born = clocks.read(MONOTONIC, 0)
    for i in range(1, 100):
        clocks.call_begins()
        assert clocks.read(MONOTONIC, i * 1000) == (born or 0) + i * 1000
    assert clocks.read(REALTIME, 99_000) == now + 99_000
    # the monotonic origin is still the job's draw
    assert born == GuestClocks(b"x" * 32, 0).read(MONOTONIC, 0)


def test_a_probe_runs_job_names_the_machines_clocks_in_its_key() -> None:
    real = replace(JOB, real_clocks=True)
    assert real.cache_key("wasm", "h") != JOB.cache_key("wasm", "h")
