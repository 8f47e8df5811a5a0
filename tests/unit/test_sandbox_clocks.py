"""The WASM guest's clocks (``streams.sandbox.clocks``), pure: drawn from the job, never backwards,
jumping within a run however many reads come first."""

from __future__ import annotations

import datetime
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
    GuestClocks,
    clock_seed,
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
        assert clocks.peek(REALTIME, 1_000 + 5 * NS) == first + 5 * NS  # no read, no jump
    assert all(REALTIME_FROM <= s < REALTIME_TO for s in starts)
    assert sum(s.year >= 2100 for s in starts) > 100  # a date bomb of 2100 goes off in most runs
    assert sum(s.year < 2030 for s in starts) > 5


def test_the_same_seed_reads_the_same_clocks() -> None:
    a, b = GuestClocks(b"s" * 32, 0), GuestClocks(b"s" * 32, 0)
    reads = [(REALTIME if i % 3 == 0 else MONOTONIC, i * 1000) for i in range(300)]
    assert [a.read(c, t) for c, t in reads] == [b.read(c, t) for c, t in reads]


@given(st.binary(min_size=32, max_size=32), st.lists(st.integers(0, 3), min_size=2, max_size=400))
def test_clocks_never_go_backwards_and_jump_in_every_doubling(seed: bytes, ids: list[int]) -> None:
    clocks = GuestClocks(seed, 0)
    seen: dict[int, int] = {}
    jumps = 0
    last_skewless = None
    for i, clock in enumerate(ids):
        now = i * 1000  # a microsecond of real time between reads
        value = clocks.read(clock, now)
        assert value is not None
        assert value >= seen.get(clock, 0)
        seen[clock] = value
        monotonic = clocks.peek(MONOTONIC, now)
        assert monotonic is not None
        if last_skewless is not None and monotonic - last_skewless > JUMP_MIN_S * NS // 2:
            jumps += 1
            assert monotonic - last_skewless <= JUMP_MAX_S * NS + 1000
        last_skewless = monotonic
    # one jump at the 2nd read, then one in each doubling run of reads: (2, 4], (4, 8], (8, 16], ...
    assert len(ids).bit_length() - 1 <= jumps <= len(ids).bit_length()
    assert (clocks.peek(PROCESS_CPUTIME, 0) or 0) >= JUMP_MIN_S * NS  # "lived a minute" within the run


def test_spending_reads_first_does_not_outrun_the_jumps() -> None:
    clocks = GuestClocks(b"x" * 32, 0)
    for _ in range(10_000):
        clocks.read(MONOTONIC, 0)
    born = clocks.read(MONOTONIC, 0)
    later = [clocks.read(MONOTONIC, 0) for _ in range(10_000)]
    assert born is not None and later[-1] is not None
    assert later[-1] - born >= JUMP_MIN_S * NS


def test_clocks_the_guest_has_not_are_refused() -> None:
    clocks = GuestClocks(b"x" * 32, 0)
    assert clocks.read(4, 0) is None and clocks.read(2**32 - 1, 0) is None
