"""Sandbox throughput on the 164 HumanEval canonical solutions (each with its own ``check``).

Runs, in one process and under the same parallelism: plain ``python3 -I`` subprocesses (the
baseline: no isolation at all), then the WASM backend, the container backend and the ``auto``
router through the worker pool (result cache off), and prints executions/second, the ratio to the
baseline, and how many solutions passed. Check mode runs two guests per execution (the program's
and the check's); each backend is then also measured in case mode (the tasks HumanEval converts to
cases, one guest each), which is how most tasks are judged. Finally the same WASM batch again with
the cache on.

    .venv/bin/python bench/sandbox.py [--workers N] [--repeat R] [--limit N] [--backends wasm,container,auto]
                                      [--cpu]
    .venv/bin/python -m bench.sandbox --profile          where one execution's CPU goes (step differences)
    .venv/bin/python -m bench.sandbox --breakdown [N]    where one WASM execution's wall time goes (marks)
    .venv/bin/python -m bench.sandbox --breakdown [N] --backends container
                                                         where one jail's CPU goes (its own clock's marks)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from producers.ingest.humaneval import humaneval_tasks, load_rows
from streams.sandbox import Job, Limits, SandboxConfig, SandboxPool
from streams.sandbox.config import BackendName
from streams.sandbox.spans import steps_of

#: a real interpreter binary (a version manager's shim script would make the baseline look slow)
BASELINE_PYTHON = "/usr/bin/python3" if Path("/usr/bin/python3").is_file() else sys.executable


def _baseline_one(source: str, timeout: float) -> bool:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
        path = f.name
    try:
        proc = subprocess.run([BASELINE_PYTHON, "-I", path], capture_output=True, timeout=timeout)
        return proc.returncode == 0
    except subprocess.TimeoutExpired:
        return False
    finally:
        os.unlink(path)


def humaneval_jobs(limit: int | None, repeat: int, limits: Limits) -> tuple[list[Job], list[Job]]:
    """HumanEval's canonical solutions (the first ``limit`` tasks, ``repeat`` times): with their checks
    (check mode), and on their cases for the tasks HumanEval converts to cases (case mode)."""
    rows = load_rows()[:limit]
    by_id = {r.task_id: r for r in rows}
    checks = [
        Job(
            mode="check",
            code=r.prompt + r.canonical_solution,
            check=r.test,
            prelude=r.prompt,
            entry_point=r.entry_point,
            limits=limits,
        )
        for r in rows
    ]
    cases = [
        Job(
            mode="cases",
            code=by_id[t.task_id].prompt + by_id[t.task_id].canonical_solution,
            entry_point=t.entry_point,
            inputs=tuple(c.input for c in (*t.tests, *t.hidden_tests)),
            limits=limits,
        )
        for t in humaneval_tasks()
        if (t.tests or t.hidden_tests) and t.task_id in by_id
    ]
    return checks * repeat, cases * repeat


def measure(
    workers: int = os.cpu_count() or 1,
    repeat: int = 1,
    limit: int | None = None,
    backends: str = "wasm,container,auto",
) -> dict[str, Any]:
    """Executions/s of plain subprocesses and of each backend (and the cached WASM batch), with ratios."""
    jobs, case_jobs = humaneval_jobs(limit, repeat, Limits(timeout_s=10.0, memory_mb=512))
    limits = jobs[0].limits
    n = len(jobs)
    print(
        f"{n} executions (HumanEval canonical solutions + check), {workers} workers, "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, baseline {BASELINE_PYTHON}"
    )
    out: dict[str, Any] = {"executions": n, "workers": workers, "backends": {}}

    sources = [f"{j.code}\n\n{j.check}\n\ncheck({j.entry_point})\n" for j in jobs]
    t0 = time.perf_counter()
    with ThreadPoolExecutor(workers) as ex:
        ok = sum(ex.map(lambda s: _baseline_one(s, limits.timeout_s), sources))
    base = n / (time.perf_counter() - t0)
    out["baseline_per_s"], out["baseline_passed"] = base, ok
    print(f"{'python3 -I subprocess':24s} {base:7.1f} exec/s   ratio 1.00   passed {ok}/{n}")

    # the container's two modes side by side: a jail each (named "container") and the fork server
    config = SandboxConfig(workers=workers, container_fork_server=False)
    names = _with_fork_server([b.strip() for b in backends.split(",") if b.strip()])
    forks = SandboxPool(config.model_copy(update={"container_fork_server": True}), workers=workers)
    with SandboxPool(config, workers=workers) as plain, forks:
        for name in names:
            pool = forks if name == FORK_SIDE else plain
            backend: BackendName = "container" if name == FORK_SIDE else name  # type: ignore[assignment]
            pool.warm_up(backend)
            t0 = time.perf_counter()
            results = pool.run_many(jobs, backend, use_cache=False)
            rate = n / (time.perf_counter() - t0)
            passed = sum(bool(r.check_passed) for r in results)
            where: dict[str, int] = {}
            for r in results:
                where[r.backend] = where.get(r.backend, 0) + 1
            infra = sum(r.infra_error is not None for r in results)
            out["backends"][name] = {
                "per_s": rate,
                "ratio": rate / base,
                "passed": passed,
                "ran_on": where,
                "infra_errors": infra,
            }
            print(
                f"{name + ' (pool)':24s} {rate:7.1f} exec/s   ratio {rate / base:4.2f}   passed {passed}/{n}"
                f"   ran on {where}" + (f"   infra errors {infra}" if infra else "")
            )
            t0 = time.perf_counter()
            case_results = pool.run_many(case_jobs, backend, use_cache=False)
            case_rate = len(case_jobs) / (time.perf_counter() - t0)
            loaded = sum(r.loaded is True and all(c.status == "ok" for c in r.cases) for r in case_results)
            out["backends"][name]["cases_per_s"] = case_rate
            print(
                f"{name + ', case mode':24s} {case_rate:7.1f} exec/s   ratio {case_rate / base:4.2f}   "
                f"every case answered {loaded}/{len(case_jobs)}"
            )
        if "wasm" in backends:
            plain.run_many(jobs, "wasm")
            t0 = time.perf_counter()
            plain.run_many(jobs, "wasm")
            rate = n / (time.perf_counter() - t0)
            out["cached_wasm"] = {"per_s": rate, "ratio": rate / base, "cache_hits": plain.cache.hits}
            print(
                f"{'wasm, cached results':24s} {rate:7.1f} exec/s   ratio {rate / base:4.2f}   "
                f"cache hits {plain.cache.hits}"
            )
    return out


#: the container's second mode, measured beside it whenever the container is: its executions forked
#: by one long-lived jail (SandboxConfig.container_fork_server)
FORK_SIDE = "container-fork"


def _with_fork_server(names: list[str]) -> list[str]:
    return [m for n in names for m in ((n, FORK_SIDE) if n == "container" else (n,))]


#: the issue's goals: WASM and the container against a plain ``python3 -I`` subprocess, and the
#: overhead of executing an empty program (ms of a core)
GOAL_WASM_RATIO = 3.0
GOAL_CONTAINER_RATIO = 0.7
GOAL_EMPTY_MS = 5.0
EMPTY_PROGRAM = "def f():\n    pass\n"


def _cpu() -> float:
    """CPU seconds of this process (all its threads) and of its reaped children (a subprocess's, a
    jail's), to the microsecond (``os.times`` counts in clock ticks of 10 ms)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def cpu_side_by_side(
    limit: int | None = None, repeat: int = 1, backends: str = "wasm,container,auto"
) -> dict[str, Any]:
    """CPU milliseconds per execution, one at a time, of the baseline and each backend on the same
    jobs, interleaved job by job so the machine's load falls on all of them alike: HumanEval's
    canonical solutions with their checks (check mode), the same programs on their cases (case mode),
    and an empty program (the fixed cost of an execution). Ratios are the baseline's CPU over a
    backend's: the throughput ratio on cores of their own."""
    from streams.sandbox import Sandbox

    limits = Limits(timeout_s=20.0, memory_mb=512)
    checks, cases = humaneval_jobs(limit, repeat, limits)
    empty = [Job(mode="cases", code=EMPTY_PROGRAM, entry_point="f", inputs=("()",), limits=limits)] * 100
    names = _with_fork_server([b.strip() for b in backends.split(",") if b.strip()])
    plain = Sandbox(SandboxConfig(container_fork_server=False))
    forks = Sandbox(SandboxConfig(container_fork_server=True))
    # the fork server's executions are not this process's children: their CPU is read from the
    # server's jail (its own and its reaped keepers', each holding its execution's)
    server = forks.container().server if FORK_SIDE in names else None

    def cpu(name: str) -> float:
        return _cpu() + (server.cpu() if name == FORK_SIDE and server is not None else 0.0)

    def run(job: Job, name: str) -> Any:
        return forks.execute(job, "container") if name == FORK_SIDE else plain.execute(job, name)  # type: ignore[arg-type]

    for name in names:
        if name != FORK_SIDE:
            plain.ensure(name)  # type: ignore[arg-type]
        run(empty[0], name)  # engine, module, stub and server loaded before anything is timed
    out: dict[str, Any] = {"load_average": os.getloadavg()[0], "modes": {}}
    print(
        f"CPU per execution, one at a time, interleaved job by job ({os.cpu_count()} cores, "
        f"load average {out['load_average']:.1f}):"
    )
    with tempfile.TemporaryDirectory(prefix="rlstream-bench-") as folder:
        for mode, jobs in (("check", checks), ("cases", cases), ("empty", empty)):
            spent = dict.fromkeys(["baseline", *names], 0.0)
            passed = dict.fromkeys(["baseline", *names], 0)
            for i, job in enumerate(jobs):
                source = _as_script(job)
                path = Path(folder) / f"job{i}.py"
                path.write_text(source)
                t0 = _cpu()
                proc = subprocess.run([BASELINE_PYTHON, "-I", str(path)], capture_output=True, timeout=60)
                spent["baseline"] += _cpu() - t0
                passed["baseline"] += proc.returncode == 0
                for name in names:
                    t0 = cpu(name)
                    r = run(job, name)
                    spent[name] += cpu(name) - t0
                    ok = r.check_passed if job.mode == "check" else all(c.status == "ok" for c in r.cases)
                    passed[name] += bool(ok) and r.infra_error is None
            base = spent["baseline"]
            result: dict[str, dict[str, float]] = {
                name: {
                    "ms": 1000 * spent[name] / len(jobs),
                    "ratio": base / spent[name] if spent[name] else 0.0,
                    "passed": passed[name],
                }
                for name in spent
            }
            out["modes"][mode] = {"executions": len(jobs), **result}
            label = {"check": "check mode", "cases": "case mode", "empty": "empty program"}[mode]
            for name, row in result.items():
                print(
                    f"  {label:14s} {name:14s} {row['ms']:7.2f} ms   ratio {row['ratio']:5.2f}   "
                    f"passed {row['passed']:.0f}/{len(jobs)}"
                )
    return out


def _as_script(job: Job) -> str:
    """The job as the plain program the baseline runs (no isolation at all)."""
    if job.mode == "check":
        return f"{job.code}\n\n{job.check}\n\ncheck({job.entry_point})\n"
    calls = "".join(f"{job.entry_point}(*_args({i}))\n" for i in job.inputs)
    return f"{job.code}\n\ndef _args(a):\n    return a if type(a) is tuple else (a,)\n\n{calls}"


def goals(cpu: dict[str, Any]) -> list[tuple[str, float, float, bool]]:
    """(goal, measured, wanted, met) for the issue's goals, from the CPU side-by-side run."""
    modes = cpu["modes"]
    out: list[tuple[str, float, float, bool]] = []
    for mode in ("check", "cases"):
        if "wasm" in modes[mode]:
            r = modes[mode]["wasm"]["ratio"]
            out.append((f"wasm vs python3 -I, {mode} mode (x)", r, GOAL_WASM_RATIO, r >= GOAL_WASM_RATIO))
        for side in ("container", FORK_SIDE):
            if side in modes[mode]:
                r = modes[mode][side]["ratio"]
                what = f"{side} vs python3 -I, {mode} mode (x)"
                out.append((what, r, GOAL_CONTAINER_RATIO, r >= GOAL_CONTAINER_RATIO))
    # the fixed cost of an execution is the WASM backend's goal; the container's is its ratio
    if "wasm" in modes["empty"]:
        ms = modes["empty"]["wasm"]["ms"]
        what = "wasm: an empty program's execution (ms of a core)"
        out.append((what, ms, GOAL_EMPTY_MS, ms <= GOAL_EMPTY_MS))
    for mode in ("check", "cases"):
        n = modes[mode]["executions"]
        for name, r in modes[mode].items():
            if name != "executions":
                out.append((f"{name}, {mode} mode: all executions pass", r["passed"], n, r["passed"] == n))
    print("goals (issue 22):")
    for what, got, want, met in out:
        print(f"  {'met ' if met else 'NOT '} {what:56s} {got:8.2f}   goal {want:g}")
    return out


def _per_call_ms(fns: dict[str, Callable[[], object]], n: int) -> dict[str, float]:
    """CPU ms of this process and its children per call of each function (after a few warm calls),
    the functions called in turn so a change of the machine's load falls on all of them alike."""
    for fn in fns.values():
        for _ in range(3):
            fn()
    spent = dict.fromkeys(fns, 0.0)
    for _ in range(n):
        for key, fn in fns.items():
            t0 = _cpu()
            fn()
            spent[key] += _cpu() - t0
    return {key: 1000 * cpu / n for key, cpu in spent.items()}


#: the steps of one WASM execution, as ``profile`` prints them
STEPS = {
    "host": "host: the job's JSON and its session; the results interpreted, the event built",
    "thread": "host: a guest thread's hand-over and join",
    "store": "store, WASI context, stdlib preopen, limits",
    "instance": "instantiation (copy-on-write image of the warm interpreter)",
    "start": "interpreter start: the reactor's turn (parse, compile) and exit",
    "stub": "stub: random reseeded, paused stub resumed, job fetched, audit hook, program compiled",
    "case": "one case: request, argument literal parsed, call, repr, result",
}


def profile(n: int = 200) -> dict[str, float]:
    """Where one execution's CPU goes, step by step, each step measured as the difference between two
    runs that differ by it alone (so the steps add up to the whole): WASM, then the container."""
    import wasmtime as wt

    from streams.sandbox import Sandbox
    from streams.sandbox.artifact import GUEST_ENV, STDLIB_GUEST_DIR
    from streams.sandbox.protocol import CaseInputs, Session, encode_job
    from streams.sandbox.result import Outcome, interpret, to_event

    # the container's steps are a jail's of its own (bubblewrap, setpriv, its interpreter's start)
    sandbox = Sandbox(SandboxConfig(container_fork_server=False))
    wasm = sandbox.wasm()
    limits = Limits(timeout_s=10.0, memory_mb=512)
    policy = wasm.policy()
    one = ("()",)
    job = Job(mode="cases", code=EMPTY_PROGRAM, entry_point="f", inputs=one, limits=limits)

    def session(inputs: tuple[str, ...]) -> Session:
        encoded = encode_job(
            role="candidate", mode="cases", code=EMPTY_PROGRAM, entry_point="f", block=policy.block,
            read_roots=policy.read_roots, route=policy.route,
        )  # fmt: skip
        return Session(encoded, source=CaseInputs(inputs))

    def store() -> Any:
        config = wt.WasiConfig()
        config.argv = ["python"]
        config.env = list(GUEST_ENV)
        config.stdout_custom = len
        config.stderr_custom = len
        config.preopen_dir(str(wasm.runtime.stdlib_dir), STDLIB_GUEST_DIR, False)
        st = wt.Store(wasm.engine)
        st.set_wasi(config)
        st.set_limits(memory_size=limits.memory_mb << 20)
        return st

    def instantiate() -> None:
        st = store()
        wasm.pre.instantiate(st).exports(st)
        st.close()

    raw = wasm.run(session(one), limits)
    ran = session(one)
    wasm.run(ran, limits)

    def host() -> None:
        session(one)
        result = interpret(job, Outcome(raw, ran.facts), runtime_hash="h", reason="")
        to_event(result, sample_id="s", group_id="g", task_id="t")

    took = _per_call_ms(
        {
            "host": host,
            "thread": lambda: wasm.threads.run(lambda: None),
            "store": lambda: store().close(),
            "instance": instantiate,
            "start": lambda: wasm.run(Session(b""), limits, source="import os\nos._exit(0)"),
            "stub": lambda: wasm.run(session(()), limits),
            "case": lambda: wasm.run(session(one), limits),
            "total": lambda: sandbox.execute(job, "wasm"),
        },
        n,
    )
    total = took["total"]
    # each run holds the one before it: the step is the difference
    steps = {
        "host": took["host"],
        "thread": took["thread"],
        "store": took["store"],
        "instance": took["instance"] - took["store"],
        "start": took["start"] - took["instance"] - took["thread"],
        "stub": took["stub"] - took["start"],
        "case": took["case"] - took["stub"],
    }
    print(f"WASM, one execution of an empty program with one case: {total:.2f} ms of CPU in all")
    for key, ms in steps.items():
        print(f"  {ms:6.2f} ms  {STEPS[key]}")
    print(f"  {total - sum(steps.values()):6.2f} ms  the rest (routing, cache key, measurement noise)")
    out = {f"wasm {k}": v for k, v in steps.items()} | {"wasm total": total}
    return out | _container_profile(sandbox, job, max(50, n // 4))


#: ``--breakdown``: what each stretch between two marks of a WASM run is (``WasmBackend.spans``),
#: by the mark that ends it; the guest's own stretches are named by the phase they end
SPAN_NAMES = {
    "encoded": "host: cache key, job encoded (JSON)",
    "run": "host: sessions made (check mode: the candidate's thread started)",
    "store": "store, WASI context (capped stdout/stderr), stdlib preopen, limits, clocks",
    "thread": "hand-over to a guest thread (reused, 64 MiB stack)",
    "instance": "instantiation of the warm snapshot (copy-on-write image), exports looked up",
    "turn": "bootstrap written into the guest's memory",
    "start": "guest: interpreter start (one-call bootstrap compiled, random reseeded) to the job request",
    "load": "guest: job read, audit hook made and installed, program compiled and run as `solution`",
    "calls": "guest: the program's calls (argument literal parsed, call, result normalised)",
    "door J": "channel: the job handed out (copy in, session, reply out)",
    "door P": "channel: the stub handed out (the warm module holds another version)",
    "door": "channel: requests handed out, results taken (check mode: waiting for the check's calls)",
    "door A": "channel: the check's `candidate(...)` calls, waiting for the candidate's guest",
    "exit": "guest: stub finish and interpreter exit after the last answer",
    "closed": "store closed (instance and its memory unmapped)",
    "joined": "hand-back from the guest thread to the caller",
    "thread joined": "check mode: the candidate's thread joined",
    "done": "host: results interpreted, execution result built",
}


def breakdown(n: int = 30) -> dict[str, Any]:
    """Where one WASM execution's wall time goes, step by step, from ``perf_counter`` marks the backend
    takes while ``WasmBackend.spans`` is set (median over ``n`` executions of each job, the jobs
    interleaved): an empty program with one case, HumanEval/0's canonical solution on its cases, and
    the same with its check (two guests). Also each execution's CPU and minor page faults."""
    import statistics

    from streams.sandbox import Sandbox

    sandbox = Sandbox(SandboxConfig())
    wasm = sandbox.wasm()
    limits = Limits(timeout_s=10.0, memory_mb=512)
    checks, cases = humaneval_jobs(1, 1, limits)
    jobs = {
        "empty program, one case": Job(
            mode="cases", code=EMPTY_PROGRAM, entry_point="f", inputs=("()",), limits=limits
        ),
        f"HumanEval/0 canonical, {len(cases[0].inputs)} cases": cases[0],
        "HumanEval/0 canonical with its check (2 guests)": checks[0],
    }
    for job in jobs.values():
        for _ in range(3):
            sandbox.execute(job, "wasm")
    seen: dict[str, list[dict[str, float]]] = {label: [] for label in jobs}
    for _ in range(n):
        for label, job in jobs.items():
            marks: list[tuple[str, str, float]] = []
            faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            cpu = _cpu()
            wasm.spans = marks
            start = time.perf_counter()
            r = sandbox.execute(job, "wasm")
            end = time.perf_counter()
            wasm.spans = None
            row = {"cpu": 1000 * (_cpu() - cpu), "wall": 1000 * (end - start)}
            row["faults"] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
            ok = r.check_passed if job.mode == "check" else all(c.status == "ok" for c in r.cases)
            if not ok or r.infra_error:
                raise SystemExit(f"{label}: the execution failed: {r}")
            for role, steps in steps_of(marks, start, end).items():
                row |= {f"{role}|{k}": v for k, v in steps.items()}
            seen[label].append(row)
    out: dict[str, Any] = {"executions_each": n, "load_average": os.getloadavg()[0], "jobs": {}}
    print(
        f"WASM: where one execution's wall time goes (median of {n} each, ms; {os.cpu_count()} cores, "
        f"load average {out['load_average']:.1f})"
    )
    for label, rows in seen.items():
        keys = list(dict.fromkeys(k for row in rows for k in row))
        med = {k: statistics.median(row.get(k, 0.0) for row in rows) for k in keys}
        out["jobs"][label] = med
        print(
            f"  {label}: wall {med['wall']:.2f} ms, CPU {med['cpu']:.2f} ms, {med['faults']:.0f} page faults"
        )
        for key in keys:
            if "|" in key:
                role, step = key.split("|", 1)
                print(f"    {med[key]:7.3f}  {role:9s} {SPAN_NAMES.get(step, step)}")
    return out


#: ``--breakdown`` of the container: where the jail's bootstrap marks its own CPU clock (anchor in
#: ``container.BOOTSTRAP`` -> the step that ends there). The marks are this bench's: the backend's
#: bootstrap carries none.
JAIL_MARKS = (
    ("import os,sys,marshal\n", "bubblewrap's child: namespaces joined, mounts; the interpreter's start"),
    ("import _ctypes", "import os (os, stat, posixpath, _collections_abc)"),
    ("_rls_sc=_rls_F", "import _ctypes, _socket, _struct; the C types for the calls"),
    ("_rls_f=_rls_Z", "rlimits set (prlimit64, four calls)"),
    ("_rls_o,_rls_i=int", "signal watch: filter installed, listener sent to the host, closed"),
    ("exec(marshal.loads(", "the stub asked for (its request written)"),
)


def _marked_bootstrap(bootstrap: str) -> str:
    """The jail's bootstrap with a mark of its process's CPU clock before each step of JAIL_MARKS and
    one as the stub exits (``os._exit`` wrapped); the marks go to stderr as its last line."""
    head = "import time as _rls_T\n_rls_M=[]\n"
    out = bootstrap
    for anchor, _ in JAIL_MARKS:
        if anchor not in out:
            raise SystemExit(f"the jail's bootstrap changed: no {anchor!r} to mark")
        out = out.replace(anchor, "_rls_M.append(_rls_T.clock_gettime(3))\n" + anchor, 1)
    tail = "exec(marshal.loads(_rls_r(int.from_bytes(_rls_r(4),'big'))))\n"
    if not out.endswith(tail):
        raise SystemExit("the jail's bootstrap changed: it no longer ends by running the stub")
    return (
        head
        + out[: -len(tail)]
        + (
            "_rls_c=_rls_r(int.from_bytes(_rls_r(4),'big'))\n"
            "_rls_M.append(_rls_T.clock_gettime(3))\n"
            "_rls_c=marshal.loads(_rls_c)\n"
            "_rls_M.append(_rls_T.clock_gettime(3))\n"
            "_rls_X=os._exit\n"
            "def _rls_E(rc):\n"
            " _rls_M.append(_rls_T.clock_gettime(3));os.write(2,b'\\n%r\\n'%(_rls_M,));_rls_X(rc)\n"
            "os._exit=_rls_E\n"
            "exec(_rls_c)\n"
        )
    )


JAIL_STEPS = (
    *(what for _, what in JAIL_MARKS),
    "the stub read from the message pipe",
    "the stub unmarshalled",
    "stub: job read, audit hook made and installed, the program compiled and run, its one case, exit",
)


def container_breakdown(n: int = 30) -> dict[str, Any]:
    """Where one container execution's CPU goes (an empty program with one case, median of ``n``): the
    host's own (this process: cgroup, pipes, the jail started, served and reaped, the signal watch's
    thread), the jail's process step by step from marks of its own CPU clock (which counts from its
    clone, so the first step holds bubblewrap's work in it before the interpreter's exec), and what is
    left of the reaped children's CPU: setpriv and bubblewrap's parent, and the jail's exit."""
    import statistics

    from streams.sandbox import Sandbox, cgroups, container

    # a jail each: the marks are the bootstrap's (a forked execution runs the fork server's code)
    sandbox = Sandbox(SandboxConfig(container_fork_server=False))
    backend = sandbox.container()
    limits = Limits(timeout_s=10.0, memory_mb=512)
    job = Job(mode="cases", code=EMPTY_PROGRAM, entry_point="f", inputs=("()",), limits=limits)
    plain = container.BOOTSTRAP
    marked = _marked_bootstrap(plain)
    rows: list[list[float]] = []
    try:
        container.BOOTSTRAP = marked
        for i in range(n + 3):
            me0 = resource.getrusage(resource.RUSAGE_SELF)
            kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            r = sandbox.execute(job, "container")
            me1 = resource.getrusage(resource.RUSAGE_SELF)
            kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if r.infra_error or not r.cases or r.cases[0].status != "ok":
                raise SystemExit(f"the execution failed: {r}")
            marks = [float(v) for v in r.stderr.strip().rsplit("\n", 1)[-1].strip("[]").split(",")]
            host = me1.ru_utime + me1.ru_stime - me0.ru_utime - me0.ru_stime
            kids = kids1.ru_utime + kids1.ru_stime - kids0.ru_utime - kids0.ru_stime
            steps = [b - a for a, b in zip([0.0, *marks], marks, strict=False)]
            # a cgroup made and removed alone, between executions (part of the host's share)
            me2 = resource.getrusage(resource.RUSAGE_SELF)
            if backend.require_cgroup:
                cgroups.create(limits.memory_mb << 20, limits.pids).remove()
            me3 = resource.getrusage(resource.RUSAGE_SELF)
            group = me3.ru_utime + me3.ru_stime - me2.ru_utime - me2.ru_stime
            if i >= 3:
                rows.append([host, group, *steps, kids - marks[-1], host + kids])
    finally:
        container.BOOTSTRAP = plain
    labels = [
        "host: cgroup made/joined/read/removed, pipes, the jail started, served, reaped; watch thread",
        "  of which a cgroup made and removed (measured alone, between the executions)",
        *JAIL_STEPS,
        "setpriv, bubblewrap's parent; the jail's exit and teardown (children's CPU less the marks)",
        "one execution (host + children)",
    ]
    med = {what: 1000 * statistics.median(row[k] for row in rows) for k, what in enumerate(labels)}
    # (the total is each run's host + children: the cgroup measured alone is not in it)
    print(
        f"container: where one execution's CPU goes (an empty program, one case; median of {n}, ms; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f})"
    )
    for what, ms in med.items():
        print(f"  {ms:7.3f}  {what}")
    return med


def _container_profile(sandbox: Any, job: Job, n: int) -> dict[str, float]:
    """The jail's steps: the processes it starts (each measured alone), its cgroup, the rest."""
    from streams.sandbox import cgroups
    from streams.sandbox.container import DEV_BINDS

    backend = sandbox.container()
    # the jail's own namespaces and mounts (no seccomp filter, no info/block pipes)
    size = str(16 << 20)
    bwrap = [
        backend.bwrap, "--unshare-user", "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
        "--unshare-cgroup-try", "--disable-userns", "--uid", "65534", "--gid", "65534", "--as-pid-1",
        "--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL", *backend.root_binds,
        *DEV_BINDS, "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
        "--size", size, "--tmpfs", "/tmp", "--remount-ro", "/", "--",
    ]  # fmt: skip
    fns: dict[str, Callable[[], object]] = {
        "cgroup made and removed": lambda: cgroups.create(512 << 20, 32).remove()
    }
    if os.geteuid() == 0:
        drop = [backend.setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", "/bin/true"]
        fns["setpriv (started as root: the jail drops to nobody)"] = lambda: subprocess.run(drop)
    fns["bubblewrap: namespaces, mounts"] = lambda: subprocess.run([*bwrap, "/usr/bin/true"])
    python = [backend.python, "-I", "-S", "-B", "-c", "pass"]
    fns["the jail's python3 -I -S -B starting"] = lambda: subprocess.run(python)
    fns["total"] = lambda: sandbox.execute(job, "container")
    steps = _per_call_ms(fns, n)
    total = steps.pop("total")
    print(f"container, the same execution: {total:.2f} ms of CPU in all")
    for what, ms in steps.items():
        print(f"  {ms:6.2f} ms  {what}")
    print(f"  {total - sum(steps.values()):6.2f} ms  the rest (bootstrap, stub, pipes, poll loop, waits)")
    return {f"container {k}": v for k, v in steps.items()} | {"container total": total}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=1, help="run the task list this many times")
    ap.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    ap.add_argument("--backends", default="wasm,container,auto")
    ap.add_argument(
        "--cpu", action="store_true", help="also CPU ms per job of each side, interleaved, and the goals"
    )
    ap.add_argument("--profile", action="store_true", help="only where one execution's CPU goes")
    ap.add_argument(
        "--breakdown", type=int, nargs="?", const=30, default=None, metavar="N",
        help="only where one execution's time goes, step by step (median of N, default 30): WASM's wall "
        "time, the container's CPU (as --backends names them)",
    )  # fmt: skip
    args = ap.parse_args()
    if args.profile:
        profile()
        return 0
    if args.breakdown is not None:
        if "wasm" in args.backends.split(","):
            breakdown(args.breakdown)
        if "container" in args.backends.split(","):
            container_breakdown(args.breakdown)
        return 0
    measure(args.workers, args.repeat, args.limit, args.backends)
    if args.cpu:
        goals(cpu_side_by_side(args.limit, args.repeat, args.backends))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
