"""The sandbox API as the reward engineer and the CLI use it: the router, the harness's defences
against reward hacks, the result cache, and ``rlstream sandbox exec --json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schemas.errors import DependencyError
from streams.sandbox import Job, Limits, Sandbox, SandboxConfig, SandboxPool
from streams.sandbox.protocol import stub_digest
from streams.sandbox.spans import steps_of

LIMITS = Limits(timeout_s=5.0, memory_mb=256)
ADD = "def add(a, b):\n    return a + b\n"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    sb = Sandbox(SandboxConfig())
    try:
        sb.ensure("auto")
    except DependencyError as exc:
        pytest.fail(f"the sandbox is not set up: {exc}", pytrace=False)
    return sb


@pytest.mark.parametrize("backend", ["wasm", "container", "auto"])
def test_cases_come_back_as_reprs(sandbox: Sandbox, backend: str) -> None:
    r = sandbox.run_cases(
        ADD + "print('noise')\n",
        "add",
        ["(1, 2)", "('a', 'b')", "([1], [2])", "(1,)", "nope("],
        limits=LIMITS,
        backend=backend,
    )
    assert [c.status for c in r.cases] == ["ok", "ok", "ok", "error", "error"]
    assert [c.result_repr for c in r.cases[:3]] == ["3", "'ab'", "[1, 2]"]
    assert "missing 1 required positional argument" in (r.cases[3].error or "")
    assert r.stdout == "noise\n"
    assert r.backend == ("wasm" if backend == "auto" else backend)


@pytest.mark.parametrize("backend", ["wasm", "container"])
def test_objects_that_lie_in_eq_or_repr_are_not_results(sandbox: Sandbox, backend: str) -> None:
    code = (
        "class Yes:\n    def __eq__(self, other):\n        return True\n"
        "    def __repr__(self):\n        return '3'\n"
        "class Int(int):\n    pass\n"
        "def add(a, b):\n    return Yes() if a == 1 else Int(a + b)\n"
    )
    r = sandbox.run_cases(code, "add", ["(1, 2)", "(2, 2)"], limits=LIMITS, backend=backend)
    assert [c.status for c in r.cases] == ["error", "error"]
    assert all("not a plain literal" in (c.error or "") for c in r.cases)


@pytest.mark.parametrize("backend", ["wasm", "container"])
def test_exits_show_up_as_missing_results(sandbox: Sandbox, backend: str) -> None:
    for ending in ["import os\n    os._exit(0)", "import sys\n    sys.exit(0)", "raise SystemExit(0)"]:
        code = f"def add(a, b):\n    {ending}\n"
        r = sandbox.run_cases(code, "add", ["(1, 2)"], limits=LIMITS, backend=backend)
        assert r.cases[0].status != "ok", (ending, r.cases)


@pytest.mark.parametrize("backend", ["wasm", "container"])
def test_a_timeout_marks_the_running_case(sandbox: Sandbox, backend: str) -> None:
    code = "def f(x):\n    while x:\n        pass\n    return x\n"
    r = sandbox.run_cases(code, "f", ["(0,)", "(1,)", "(0,)"], limits=Limits(timeout_s=1.0), backend=backend)
    assert r.timed_out
    assert [c.status for c in r.cases] == ["ok", "timeout", "missing"]


def test_a_call_that_ran_out_of_memory_leaves_the_next_calls_theirs(sandbox: Sandbox) -> None:
    """WASM (the jail ends a run at its memory limit): a call that fills memory with small objects and
    raises MemoryError leaves them in its error's traceback; the stub drops that error as python drops
    a caught one, so the next inputs are read and the next calls run (HumanEval/147's reference failed
    every case after its one MemoryError, each input then 'bad input literal'). Where the memory limit
    falls decides how full the failed call left it, so three limits are tried (each one failed the
    inputs after it before). The interpreter itself may still fault on a later allocation after one
    that failed (a trap, read as the run ending at its memory limit, as the jail's does)."""
    code = (
        "def f(n):\n"
        "    acc = [[] for _ in range(4096)]\n"
        "    for i in range(n):\n"
        "        acc[i & 4095].append((i, i + 1))\n"
        "    return sum(map(len, acc))\n"
    )
    inputs = ["(3,)", "(1000000000,)", "(4,)", "(100000,)", "(1000000000,)", "(5,)"]
    expected = [("ok", "3"), ("error", None), ("ok", "4"), ("ok", "100000"), ("error", None), ("ok", "5")]
    answered_all = 0
    for memory_mb in (160, 224, 448):
        limits = Limits(timeout_s=30.0, memory_mb=memory_mb)
        r = sandbox.run_cases(code, "f", inputs, limits=limits, backend="wasm")
        got = [(c.status, c.result_repr) for c in r.cases]
        assert r.cases[1].error == "MemoryError", (memory_mb, r.cases[1])
        assert not any("bad input literal" in (c.error or "") for c in r.cases), (memory_mb, r.cases)
        # every case answered as it should, up to where the run ended at its memory limit (if it did)
        ended = next((i for i, (status, _) in enumerate(got) if status == "missing"), len(got))
        assert got[:ended] == expected[:ended], (memory_mb, [c.error for c in r.cases])
        assert ended == len(got) or r.memory_exceeded, (memory_mb, r.stderr[-300:])
        answered_all += ended == len(got)
    assert answered_all >= 2


def test_check_mode(sandbox: Sandbox) -> None:
    check = "def check(candidate):\n    assert candidate(1, 2) == 3\n"
    assert sandbox.run_check(ADD, check, "add", limits=LIMITS, backend="wasm").check_passed is True
    bad = sandbox.run_check(ADD.replace("+", "-"), check, "add", limits=LIMITS, backend="wasm")
    assert bad.check_passed is False and "AssertionError" in (bad.cases[0].error or "")


def test_auto_falls_back_for_threads_and_records_why(sandbox: Sandbox) -> None:
    code = (
        "import threading\n"
        "def add(a, b):\n    out = []\n    t = threading.Thread(target=lambda: out.append(a + b))\n"
        "    t.start()\n    t.join()\n    return out[0]\n"
    )
    r = sandbox.run_cases(code, "add", ["(1, 2)"], limits=LIMITS, backend="auto")
    assert r.backend == "container" and "thread" in r.backend_reason
    assert r.cases[0].result_repr == "3"
    static = sandbox.run_cases("import subprocess\n" + ADD, "add", ["(1, 2)"], limits=LIMITS, backend="auto")
    assert static.backend == "container" and static.backend_reason.startswith("static:")


def test_auto_never_reruns_wrong_answers_or_timeouts(sandbox: Sandbox) -> None:
    wrong = sandbox.run_cases(ADD.replace("+", "-"), "add", ["(1, 2)"], limits=LIMITS, backend="auto")
    assert wrong.backend == "wasm" and wrong.cases[0].result_repr == "-1"
    slow = sandbox.run_cases(
        "def add(a, b):\n    while True: pass\n",
        "add",
        ["(1, 2)"],
        limits=Limits(timeout_s=0.5),
        backend="auto",
    )
    assert slow.backend == "wasm" and slow.timed_out


@pytest.mark.parametrize("backend", ["wasm", "container"])
def test_every_run_is_a_fresh_interpreter_with_fresh_randomness(sandbox: Sandbox, backend: str) -> None:
    # the warm interpreter imported random (and the rest) before any guest: each guest reseeds it
    program = (
        "import builtins, random\nprint(random.random(), hasattr(builtins, 'leak'))\nbuiltins.leak = 1\n"
    )
    runs = [sandbox.run_script(program, limits=LIMITS, backend=backend) for _ in range(3)]
    assert all(r.exit_code == 0 for r in runs), [r.stderr for r in runs]
    assert len({r.stdout.split()[0] for r in runs}) == 3  # not one state shared by every guest
    assert all(r.stdout.split()[1] == "False" for r in runs)  # nothing of an earlier run survives


@pytest.mark.parametrize("backend", ["wasm", "container"])
@pytest.mark.parametrize(
    ("tail", "code", "stderr"),
    [
        ("", 0, ""),
        ("import sys\nsys.exit(3)\n", 3, ""),
        ("exit(4)\n", 4, ""),
        ("raise SystemExit('bye')\n", 1, "bye"),
        ("1 / 0\n", 1, "ZeroDivisionError"),
    ],
)
def test_a_scripts_exit_code_and_atexit_callbacks_are_pythons(
    sandbox: Sandbox, backend: str, tail: str, code: int, stderr: str
) -> None:
    # a WASM guest is never finalised (the reactor's turn returns): its atexit callbacks run anyway, once
    program = "import atexit\natexit.register(print, 'atexit ran')\nprint('body')\n" + tail
    r = sandbox.run_script(program, limits=LIMITS, backend=backend)
    assert r.exit_code == code, r.stderr
    assert stderr in r.stderr
    assert r.stdout == "body\natexit ran\n"


def test_a_stub_the_warm_interpreter_does_not_hold_comes_through_the_door(sandbox: Sandbox) -> None:
    # the warm module keeps the stub it was made with; a changed stub is asked for, not unprepared
    backend = sandbox.wasm()
    held = backend.bootstrap
    try:
        backend.bootstrap = held.replace(stub_digest(), "0" * 16)
        r = sandbox.run_cases(ADD, "add", ["(1, 2)", "('a', 'b')"], limits=LIMITS, backend="wasm")
    finally:
        backend.bootstrap = held
    assert [c.result_repr for c in r.cases] == ["3", "'ab'"] and not r.deviation


def test_the_stub_the_warm_module_holds_paused_is_each_guests_own(sandbox: Sandbox) -> None:
    # the warm module holds the stub run up to its job request: a guest that reaches it (its frames,
    # its globals, what it captured, _host) changes only its own copy, and _host keeps nothing of it
    tamper = (
        "import sys, _host\n"
        "seen = [hasattr(_host, n) for n in ('rls_boot', 'rls_stub', 'leak')]\n"
        "f, spaces = sys._getframe(), {}\n"
        "while f is not None:\n"
        "    spaces[id(f.f_globals)] = f.f_globals\n"
        "    f = f.f_back\n"
        "for g in spaces.values():\n"
        "    if '_rls_run' in g:\n"
        "        seen.append('_rls_leak' in g)\n"
        "        g['_rls_leak'] = 1\n"
        "        g['_rls_run'].__defaults__ = (None, None)\n"
        "_host.leak = 1\n"
        "print(seen)\n"
    )
    for _ in range(2):
        r = sandbox.run_script(tamper, limits=LIMITS, backend="wasm")
        assert r.exit_code == 0 and r.stdout == "[False, False, False, False]\n", r.stderr
        after = sandbox.run_cases(ADD, "add", ["(1, 2)"], limits=LIMITS, backend="wasm")
        assert [c.result_repr for c in after.cases] == ["3"] and not after.deviation


def test_pool_caches_by_content() -> None:
    with SandboxPool(SandboxConfig(), workers=1) as pool:
        job = Job(mode="cases", code=ADD, entry_point="add", inputs=("(1, 2)",), limits=LIMITS)
        first = pool.submit(job, "wasm").result()
        second = pool.submit(job, "wasm").result()
        fresh = pool.submit(job, "wasm", use_cache=False).result()
    assert not first.cache_hit and second.cache_hit and not fresh.cache_hit
    assert first.cache_key == second.cache_key != ""
    assert second.cases == first.cases


OWNER = """
import sys
from streams.sandbox import SandboxConfig, SandboxPool
pool = SandboxPool(SandboxConfig(), workers=2)
pool.warm_up("wasm")
print(" ".join(str(p) for p in pool._executor._processes), flush=True)
sys.stdin.read()
"""


def test_pool_workers_end_with_a_killed_owner() -> None:
    """A sandbox worker killed with SIGKILL takes its pool's processes with it (they used to stay
    behind for good, each holding a compiled engine's memory)."""
    owner = subprocess.Popen(
        [sys.executable, "-c", OWNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert owner.stdout is not None
        workers = [int(p) for p in owner.stdout.readline().split()]
        assert len(workers) == 2 and all(Path(f"/proc/{p}").exists() for p in workers)
        owner.kill()
        owner.wait(10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.1)
        assert not [p for p in workers if _alive(p)], "pool workers outlived their owner"
    finally:
        if owner.poll() is None:
            owner.kill()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


@pytest.mark.parametrize("backend", ["wasm", "container", "auto"])
def test_cli_exec_json(tmp_path: Path, backend: str) -> None:
    program = tmp_path / "p.py"
    program.write_text("import sys\nprint('hi')\nprint('err', file=sys.stderr)\nsys.exit(3)\n")
    cli = Path(sys.executable).parent / "rlstream"
    proc = subprocess.run(
        [
            str(cli),
            "sandbox",
            "exec",
            str(program),
            "--backend",
            backend,
            "--timeout",
            "5",
            "--memory",
            "128",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    out = json.loads(proc.stdout)
    assert list(out) == [
        "exit_code",
        "stdout",
        "stderr",
        "timed_out",
        "memory_exceeded",
        "violation",
        "backend",
        "duration_s",
    ]
    assert (out["exit_code"], out["stdout"], out["stderr"]) == (3, "hi\n", "err\n")
    assert out["backend"] == ("wasm" if backend == "auto" else backend)
    assert proc.returncode == 1  # the program failed: "the work found a problem"


def test_cli_exec_labels_a_timeout(tmp_path: Path) -> None:
    program = tmp_path / "loop.py"
    program.write_text("while True:\n    pass\n")
    cli = Path(sys.executable).parent / "rlstream"
    proc = subprocess.run(
        [str(cli), "sandbox", "exec", str(program), "--timeout", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = json.loads(proc.stdout)
    assert out["timed_out"] is True and out["backend"] == "wasm"


def test_cli_rejects_bad_usage(tmp_path: Path) -> None:
    cli = Path(sys.executable).parent / "rlstream"
    proc = subprocess.run(
        [str(cli), "sandbox", "exec", str(tmp_path / "absent.py"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "absent.py" in proc.stderr


#: answers small n at once; loops (busy, or asleep) on any n past 100, as an O(n) program does on 2**31
#: (a loop that calls nothing at all, ``while True: pass``, is stopped by WASM only at the run's deadline:
#: its frame keeps the epoch deadline it read on entry)
CAPPED = (
    "import time\n"
    "def f(n, how):\n"
    "    k = 0\n"
    "    while n > 100 and how == 'busy':\n"
    "        k += n\n"
    "    if n > 100:\n"
    "        time.sleep(3)\n"
    "    if n > 10:\n"
    "        time.sleep(0.6)\n"
    "    return n\n"
)


@pytest.mark.parametrize("backend", ["wasm", "container"])
@pytest.mark.parametrize("how", ["busy", "asleep"])
def test_a_call_past_its_own_cap_ends_the_run_as_its_deadline_would(
    sandbox: Sandbox, backend: str, how: str
) -> None:
    # calls from the third on must each be answered within 0.3 s (a probe's extremes): the second, as
    # slow as 0.6 s, is answered (no cap of its own), the fourth ends the run long before its deadline
    limits = Limits(timeout_s=20.0, memory_mb=256)
    inputs = tuple(f"({n}, {how!r})" for n in (1, 50, 2, 1000, 3))
    job = Job(mode="cases", code=CAPPED, entry_point="f", inputs=inputs, limits=limits, call_cap=(2, 0.3))
    r = sandbox.execute(job, backend=backend)
    assert [c.status for c in r.cases] == ["ok", "ok", "ok", "timeout", "missing"]
    assert r.timed_out and r.duration_s < limits.timeout_s
    if how == "asleep":
        # without the cap, the run answers the 3-second call within its deadline
        uncapped = sandbox.execute(
            Job(mode="cases", code=CAPPED, entry_point="f", inputs=inputs, limits=limits), backend=backend
        )
        assert [c.status for c in uncapped.cases] == ["ok"] * 5


def test_wasm_marks_each_step_of_a_run_only_while_asked(sandbox: Sandbox) -> None:
    # bench.sandbox --breakdown reads these marks: every step of a run, in order, on the host's clock
    wasm = sandbox.wasm()
    job = Job(mode="cases", code=ADD, entry_point="add", inputs=("(1, 2)", "(3, 4)"), limits=LIMITS)
    checked = "def check(c):\n    assert c(1, 2) == 3\n"
    check = Job(mode="check", code=ADD, entry_point="add", check=checked, limits=LIMITS)
    marks: list[tuple[str, str, float]] = []
    wasm.spans = marks
    try:
        start = time.perf_counter()
        r = sandbox.execute(job, "wasm")
        end = time.perf_counter()
    finally:
        wasm.spans = None
    assert [c.result_repr for c in r.cases] == ["3", "7"]
    assert [what for role, what, _ in marks if role == "candidate"] == [
        "run", "store", "thread", "instance", "turn", "guest J", "door J", "guest N", "door N",
        "guest R", "door R", "guest R", "door R", "exit", "closed", "joined",
    ]  # fmt: skip
    times = [t for _, _, t in marks]
    assert times == sorted(times) and start <= times[0] and times[-1] <= end
    steps = steps_of(marks, start, end)
    # the stretches of a one-guest run tile it: they add up to its wall time
    assert sum(sum(s.values()) for s in steps.values()) == pytest.approx(1000 * (end - start))
    assert steps["candidate"]["calls"] > 0 and steps["candidate"]["load"] > 0
    # both guests of a check are marked, each under its role; nothing is marked once the list is gone
    marks.clear()
    wasm.spans = marks
    try:
        assert sandbox.execute(check, "wasm").check_passed
    finally:
        wasm.spans = None
    assert {role for role, _, _ in marks} == {"host", "candidate", "check"}
    assert ("check", "door A") in {(role, what) for role, what, _ in marks}
    count = len(marks)
    sandbox.execute(job, "wasm")
    assert len(marks) == count
