"""The WASM guest's clocks: the judge's, not the world's.

A program whose answer depends on the date (wrong from 1 January 2100) or on how long its process has
lived (wrong after 30 s) would be right on every run the judge makes if the guest read the host's real
clocks: a run lasts seconds, today is today. So every WASM guest reads clocks of its own, drawn from its
job (:func:`clock_seed`: the same job sees the same clocks again, a program's first run, its re-runs
and its probe run each other ones):

- the realtime clock starts at an instant drawn between :data:`REALTIME_FROM` and :data:`REALTIME_TO`
  and advances at the real rate;
- the monotonic clock (``time.monotonic``, ``time.perf_counter``; ``time.process_time`` too, which
  CPython on WASI reads from it through the C library's ``clock()``) starts at a drawn origin; the WASI
  CPU-time clocks, which no guest was seen to read, at 0;
- all of them jump forward together by a drawn amount (:data:`JUMP_MIN_S` to :data:`JUMP_MAX_S`,
  log-uniform: a minute to months) as the first call begins and as one drawn call in each doubling run
  of calls after it begins (the 2nd; the 3rd or 4th; one of the 5th to 8th; ...), between two calls,
  as if the caller had called again later. Within a call (and while the program loads) they run at the
  real rate: a program's own deadline (a time budget read on ``time.monotonic`` or
  ``time.process_time``) measures its own work, as it would anywhere, where jumps at drawn reads ran its
  budget out mid-call and failed correct programs (red-team f34c_ok_deadline_guard_39,
  f34c_ok_cpu_budget_guard_46). "My process has lived N seconds" comes true by the first call
  (a36_late_first_call_stale_35: wrong once its first call came 30 s after its import). The jump as
  the second call begins is drawn from the longest half, :data:`JUMP_MAX_S` / 2 to :data:`JUMP_MAX_S`
  (a fixed 90 days was a tell: a39_day_gap_unless_exact_90d_30 took it for the judge's and ignored
  every gap after it): a run of two cases then holds a gap past any threshold up to 45 days a program
  may wait for between two calls (a36_idle_day_gap_35: wrong once two calls are 13 h apart, which a
  draw over the whole range missed in one run of two) — the case run, whose clocks these are, is all
  that judges such a program (a probe run's are a machine's, below). As it begins the realtime clock
  also steps further than the others (:data:`WALL_STEP_MIN_S` to :data:`WALL_STEP_MAX_S`), as a
  suspended machine's does. A schedule closes no window for good: a program wrong only after a pause
  of a few seconds, past 90 days, or on a task of one case (no second call) is accepted (red-team
  round 39, KNOWN).
  ``process_time`` jumps with the rest, which no idle process's CPU clock does, so a program can tell
  these clocks by it (a36_cpu_clock_jump_judged_30), as by the date. The clocks never go backwards. A
  script (no calls) reads them at the real rate throughout.

A program can still tell such clocks from a machine's: a date centuries away, the standard library's
file times (real: the day the runtime was unpacked) far from it, a minute passed before the first call
and again before the second, every time. A program wrong only where the clocks look real (today's
year: red-team a38_present_era_bomb_30; file times that fit the clock: a38_clock_vs_stdlib_mtime_30;
calls made in a tight loop: a38_tight_loop_wrong_30) was right on every judged run. So a job's clocks
are of one of two kinds (``Job.real_clocks``): a case run's (and its re-runs') are drawn as above, which
a program wrong in another century or after a long gap fails; a probe run's are the host's own
(:func:`machine_clocks`): the realtime clock reads the host's time and never jumps, the monotonic clock
starts at a drawn origin and runs at the real rate, as on any machine. The probe run is the run that
judges inputs no case shows, so a program that behaves otherwise where the clocks look drawn shows
its real behaviour there; what it does where they look drawn, the cases judge. Left: a program wrong
only where the clocks look drawn and only on inputs no case shows (it is right today).

Nothing the sandbox's own limits depend on is read from these clocks: deadlines, call caps and timings
are the host's ``perf_counter``; ``poll_oneoff`` (``time.sleep``) converts a guest's absolute time with
the guest's clock and waits on the host's.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import time

NS = 1_000_000_000
#: the realtime clock's start is drawn in [REALTIME_FROM, REALTIME_TO). Not later: CPython keeps time as
#: signed 64-bit nanoseconds since 1970 (``PyTime_t``), which end in April 2262, where ``time.time()``
#: would raise OverflowError in a correct program.
REALTIME_FROM = datetime.datetime(2000, 1, 1, tzinfo=datetime.UTC)
REALTIME_TO = datetime.datetime(2250, 1, 1, tzinfo=datetime.UTC)
#: the monotonic clock's origin: up to this long (a machine's uptime)
MONOTONIC_MAX_S = 30 * 24 * 3600
#: one jump, drawn log-uniformly between these (a minute to 90 days: a cap is a gap a program can wait
#: past, so it lies far beyond a run's; nine jumps of a long run add up to under three years, so
#: the realtime clock, drawn before 2250, stays short of CPython's end of time in 2262)
JUMP_MIN_S, JUMP_MAX_S = 60, 90 * 24 * 3600
#: as the second call begins the realtime clock steps this much further than the others (log-uniform), as
#: a machine's does when it was suspended between two calls (Linux's monotonic clock stops meanwhile) or
#: its time was set: a program wrong once they move apart is judged (red-team a39_wall_vs_monotonic_drift_35)
WALL_STEP_MIN_S, WALL_STEP_MAX_S = 1, 24 * 3600
_REALTIME_LOW, _REALTIME_HIGH = (int(t.timestamp()) * NS for t in (REALTIME_FROM, REALTIME_TO))
#: WASI clock ids
REALTIME, MONOTONIC, PROCESS_CPUTIME, THREAD_CPUTIME = 0, 1, 2, 3


def machine_clocks(seed: bytes, start_ns: int) -> GuestClocks:
    """A guest's clocks as a machine's: the realtime clock at the host's time (its ``time_ns`` now),
    never a jump (a probe run's, ``Job.real_clocks``)."""
    return GuestClocks(seed, start_ns, real_ns=time.time_ns())


def clock_seed(job_key: str, role: str = "candidate") -> bytes:
    """What a guest's clocks are drawn from: its job's cache key (``Job.cache_key``: the job's content,
    and the run's ``clock_draw`` when it is not 0) and the guest's role (a check guest draws others)."""
    return hashlib.sha256(f"clocks\0{role}\0{job_key}".encode()).digest()


def _draw(seed: bytes, what: str, n: int) -> int:
    """A number in [0, n) drawn from ``seed`` for ``what`` (a hash, not a generator: seeding one cost
    more than the rest of a guest's clocks)."""
    return int.from_bytes(hashlib.sha256(seed + what.encode()).digest(), "little") % n


class GuestClocks:
    """One guest's clocks, from ``seed``, started at the host's ``perf_counter_ns`` ``start_ns``; given
    ``real_ns`` (the host's ``time_ns`` then), a machine's like any other: see :func:`machine_clocks`."""

    def __init__(self, seed: bytes, start_ns: int, *, real_ns: int | None = None) -> None:
        self._seed = seed
        self._start = start_ns
        self._real = real_ns is not None
        self._realtime = (
            real_ns
            if real_ns is not None
            else _REALTIME_LOW + _draw(seed, "realtime", _REALTIME_HIGH - _REALTIME_LOW)
        )
        self._monotonic = _draw(seed, "monotonic", MONOTONIC_MAX_S * NS)
        self._skew = 0
        self._wall_step = 0  # the realtime clock's own step past the others (a suspended machine's)
        self._calls = 0
        self._span = 1  # the jump due is as a call in (span, 2 * span] begins
        self._next = 2

    def read(self, clock: int, now_ns: int) -> int | None:
        """The guest's ``clock`` at the host's ``perf_counter_ns`` ``now_ns``, as the guest reads it;
        None for a clock the guest has not."""
        return self.peek(clock, now_ns)

    def call_begins(self) -> None:
        """The host hands the guest a call's input: the clocks jump if this call is the one drawn in its
        doubling run (never on a machine's real clocks)."""
        if self._real:
            return
        self._calls += 1
        if self._calls == 1:
            self._skew += _log_uniform(self._seed, "jump first", JUMP_MIN_S, JUMP_MAX_S)
        while self._calls >= self._next:
            if self._span == 1:
                self._wall_step = _log_uniform(self._seed, "wall step", WALL_STEP_MIN_S, WALL_STEP_MAX_S)
            self._skew += self._jump()
            self._span *= 2
            self._next = self._span + 1 + _draw(self._seed, f"at {self._span}", self._span)

    def peek(self, clock: int, now_ns: int) -> int | None:
        """The guest's ``clock`` now (also a sleep's absolute deadline converted)."""
        elapsed = max(0, now_ns - self._start) + self._skew
        if clock == REALTIME:
            return self._realtime + elapsed + self._wall_step
        if clock == MONOTONIC:
            return self._monotonic + elapsed
        if clock in (PROCESS_CPUTIME, THREAD_CPUTIME):
            return elapsed
        return None

    def _jump(self) -> int:
        """The next jump: as the second call begins, log-uniform in the longest half,
        [JUMP_MAX_S / 2, JUMP_MAX_S]; later ones in [JUMP_MIN_S, JUMP_MAX_S]."""
        if self._span == 1:
            return _log_uniform(self._seed, "jump 1", JUMP_MAX_S / 2, JUMP_MAX_S)
        return _log_uniform(self._seed, f"jump {self._span}", JUMP_MIN_S, JUMP_MAX_S)


def _log_uniform(seed: bytes, what: str, low_s: float, high_s: float) -> int:
    """Nanoseconds drawn from ``seed`` for ``what``, log-uniform in [low_s, high_s] seconds."""
    u = _draw(seed, what, 1 << 53) / (1 << 53)
    return int(low_s * math.exp(u * math.log(high_s / low_s)) * NS)
