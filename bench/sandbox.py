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
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from producers.ingest.humaneval import humaneval_tasks, load_rows
from streams.sandbox import Job, Limits, SandboxConfig, SandboxPool
from streams.sandbox.config import BackendName

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


def measure(
    workers: int = os.cpu_count() or 1,
    repeat: int = 1,
    limit: int | None = None,
    backends: str = "wasm,container,auto",
) -> dict[str, Any]:
    """Executions/s of plain subprocesses and of each backend (and the cached WASM batch), with ratios."""
    rows = load_rows()[:limit] * repeat
    limits = Limits(timeout_s=10.0, memory_mb=512)
    jobs = [
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

    by_id = {r.task_id: r for r in rows}
    case_jobs = [
        Job(
            mode="cases",
            code=by_id[t.task_id].prompt + by_id[t.task_id].canonical_solution,
            entry_point=t.entry_point,
            inputs=tuple(c.input for c in (*t.tests, *t.hidden_tests)),
            limits=limits,
        )
        for t in humaneval_tasks()
        if (t.tests or t.hidden_tests) and t.task_id in by_id
    ] * repeat
    config = SandboxConfig(workers=workers)
    with SandboxPool(config, workers=workers) as pool:
        for name in [b.strip() for b in backends.split(",") if b.strip()]:
            backend: BackendName = name  # type: ignore[assignment]
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
            pool.run_many(jobs, "wasm")
            t0 = time.perf_counter()
            pool.run_many(jobs, "wasm")
            rate = n / (time.perf_counter() - t0)
            out["cached_wasm"] = {"per_s": rate, "ratio": rate / base, "cache_hits": pool.cache.hits}
            print(
                f"{'wasm, cached results':24s} {rate:7.1f} exec/s   ratio {rate / base:4.2f}   "
                f"cache hits {pool.cache.hits}"
            )
    return out


def cpu_per_job(limit: int | None = None, backend: str = "wasm") -> dict[str, float]:
    """CPU milliseconds per job, one job at a time in this process (steadier than wall-clock rates
    on a shared machine): check mode and case mode on the same HumanEval solutions."""
    from streams.sandbox import Sandbox

    rows = load_rows()[:limit]
    by_id = {r.task_id: r for r in rows}
    limits = Limits(timeout_s=20.0, memory_mb=512)
    batches = {
        "check": [
            Job(mode="check", code=r.prompt + r.canonical_solution, check=r.test, prelude=r.prompt,
                entry_point=r.entry_point, limits=limits)
            for r in rows
        ],
        "cases": [
            Job(mode="cases", code=by_id[t.task_id].prompt + by_id[t.task_id].canonical_solution,
                entry_point=t.entry_point, inputs=tuple(c.input for c in (*t.tests, *t.hidden_tests)),
                limits=limits)
            for t in humaneval_tasks()
            if (t.tests or t.hidden_tests) and t.task_id in by_id
        ],
    }  # fmt: skip
    sandbox = Sandbox(SandboxConfig())
    sandbox.ensure(backend)
    out: dict[str, float] = {}
    for mode, jobs in batches.items():
        for job in jobs[:3]:
            sandbox.execute(job, backend)  # warm
        before = os.times()
        for job in jobs:
            sandbox.execute(job, backend)
        after = os.times()
        spent = sum(after[:4]) - sum(before[:4])
        out[mode] = 1000 * spent / len(jobs)
        print(f"{backend + ', ' + mode + ' mode':24s} {out[mode]:7.1f} ms CPU per job (one at a time)")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=1, help="run the task list this many times")
    ap.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    ap.add_argument("--backends", default="wasm,container,auto")
    ap.add_argument("--cpu", action="store_true", help="also CPU ms per job, sequential, on WASM")
    args = ap.parse_args()
    measure(args.workers, args.repeat, args.limit, args.backends)
    if args.cpu:
        cpu_per_job(args.limit)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())
