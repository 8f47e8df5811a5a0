"""The WASM guest's clocks through the real sandbox: a drawn instant, the same for the same job and
another for another job or another run of it, never backwards, jumping between calls within a run and
never within a call (a program's own deadline measures its own work); the sandbox's own limits stay on
the host's clock."""

from __future__ import annotations

import datetime
import itertools
import secrets
import time

import pytest

from schemas.errors import DependencyError
from streams.sandbox import Job, Limits, Sandbox, SandboxConfig

LIMITS = Limits(timeout_s=5.0, memory_mb=256)
#: what the program reads: the realtime clock three ways, then the monotonic clock (a call per case)
CLOCKS = """\
import datetime, time

FIRST = (time.time(), datetime.datetime.now().timestamp(), datetime.date.today().toordinal())
BORN = time.monotonic()


def read(_):
    return (FIRST, time.monotonic() - BORN, [time.perf_counter() for _ in range(40)])
"""
INPUTS = [f"({i},)" for i in range(12)]


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    sb = Sandbox(SandboxConfig())
    try:
        sb.ensure("wasm")
    except DependencyError as exc:
        pytest.fail(f"the sandbox is not set up: {exc}", pytrace=False)
    return sb


def _reads(sandbox: Sandbox, code: str = CLOCKS, *, draw: int = 0) -> list[tuple]:  # type: ignore[type-arg]
    r = sandbox.run_cases(code, "read", INPUTS, limits=LIMITS, backend="wasm", clock_draw=draw)
    assert [c.status for c in r.cases] == ["ok"] * len(INPUTS), r.cases
    return [eval(c.result_repr or "") for c in r.cases]  # our own program's tuples of floats


def test_the_guest_reads_a_drawn_instant_the_same_for_the_same_job(sandbox: Sandbox) -> None:
    first = _reads(sandbox)
    again = _reads(sandbox)
    rerun = _reads(sandbox, draw=1)
    other = _reads(sandbox, CLOCKS + "# another program\n")
    (t, now, today), *_ = first[0]
    # three reads at load: never a jump between them, never backwards
    assert (
        t <= now <= t + 60
        and datetime.date.fromordinal(today) >= datetime.datetime.fromtimestamp(t, datetime.UTC).date()
    )
    assert abs(t - time.time()) > 86_400  # not the host's day (a draw within a day of it: 1 in 90,000)
    assert 2000 <= time.gmtime(t).tm_year < 2250
    assert abs(again[0][0][0] - t) < 60  # the same job: the same instant, moved on at the real rate
    for run in (rerun, other):
        assert abs(run[0][0][0] - t) > 86_400  # another run or another job: another instant


def test_a_run_whose_key_begins_with_C_reads_the_same_instant_at_load(
    sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the answer to the guest's J begins with the run's random key: where that began with C (1 run in
    # 256) the clocks took it for a call handed and jumped before the program loaded (a CI failure)
    plain = _reads(sandbox)[0][0][0]
    draw = secrets.token_bytes
    monkeypatch.setattr(secrets, "token_bytes", lambda n: b"C" + draw(n - 1))
    assert abs(_reads(sandbox)[0][0][0] - plain) < 60


def test_a_probe_run_reads_the_hosts_time_and_calls_as_quick_as_they_come(sandbox: Sandbox) -> None:
    # the run that judges inputs no case shows looks like any machine: today's date, no gap between
    # calls the caller did not leave
    job = Job(
        mode="cases", code=CLOCKS, entry_point="read", inputs=tuple(INPUTS), limits=LIMITS, real_clocks=True
    )
    r = sandbox.execute(job, "wasm")
    assert [c.status for c in r.cases] == ["ok"] * len(INPUTS), r.cases
    reads = [eval(c.result_repr or "") for c in r.cases]  # our own program's tuples of floats
    (t, now, _), *_ = reads[0]
    assert abs(t - time.time()) < 60 and t <= now <= t + 60
    assert reads[-1][1] < 30, [age for _, age, _ in reads]  # twelve quick calls: seconds, not a jump


def test_the_monotonic_clock_never_goes_backwards_and_jumps_between_calls(sandbox: Sandbox) -> None:
    results = _reads(sandbox)
    ages = [age for _, age, _ in results]
    counters = [x for _, _, xs in results for x in xs]
    assert all(a <= b for a, b in itertools.pairwise(ages))
    assert all(a <= b for a, b in itertools.pairwise(counters))
    # "my process has lived N seconds" comes true within a run of a dozen calls
    assert ages[-1] > 60, ages
    # forty reads within one call: the real rate, no jump
    assert all(xs[-1] - xs[0] < 5 for _, _, xs in results), [xs[-1] - xs[0] for _, _, xs in results]


def test_a_calls_own_deadline_measures_its_own_work(sandbox: Sandbox) -> None:
    # a time budget per call on the monotonic and the CPU clock, read many times within the call: a
    # correct program with such a guard answers every call (it failed where the clocks jumped mid-call)
    code = (
        "import time\n"
        "def count(n):\n"
        "    start, cpu = time.monotonic(), time.process_time()\n"
        "    total = 0\n"
        "    for i in range(n):\n"
        "        if time.monotonic() - start > 10 or time.process_time() - cpu > 10:\n"
        "            raise TimeoutError('budget spent')\n"
        "        total += i\n"
        "    return total\n"
    )
    r = sandbox.run_cases(
        code, "count", [f"({n},)" for n in range(0, 400, 20)], limits=LIMITS, backend="wasm"
    )
    assert [c.result_repr for c in r.cases] == [repr(n * (n - 1) // 2) for n in range(0, 400, 20)], r.cases


def test_the_sandboxs_limits_stay_on_the_hosts_clock(sandbox: Sandbox) -> None:
    # a program waiting for its clocks to pass an hour (a script: no calls, no jumps), reading them in a
    # loop forever, or sleeping, is stopped at the host's deadline
    wait = "import time\nt = time.monotonic()\nwhile time.monotonic() - t < 3600:\n    pass\nprint('done')\n"
    for spin in (wait, "import time\nwhile True:\n    time.time()\n", "import time\ntime.sleep(30)\n"):
        t0 = time.perf_counter()
        r = sandbox.run_script(spin, limits=Limits(timeout_s=1.0), backend="wasm")
        assert r.timed_out and time.perf_counter() - t0 < 10, r
    short = "import time\nt = time.perf_counter()\ntime.sleep(0.2)\nprint(time.perf_counter() - t)\n"
    slept = sandbox.run_script(short, limits=Limits(timeout_s=5.0), backend="wasm")
    assert slept.exit_code == 0 and float(slept.stdout) >= 0.19, slept


def test_check_mode_candidates_read_the_jobs_clocks(sandbox: Sandbox) -> None:
    code = "import datetime\n\ndef year():\n    return datetime.date.today().year\n"
    check = "def check(candidate):\n    assert candidate() != datetime.date.today().year\n"
    # the check guest has clocks of its own: the candidate's year is not the check's
    r = sandbox.run_check(code, check, "year", prelude="import datetime\n", limits=LIMITS, backend="wasm")
    assert r.check_passed, (r.stdout, r.stderr, r.cases)
