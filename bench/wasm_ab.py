"""The WASM backend against an earlier revision of itself, job by job in one process.

Loads ``streams/sandbox/wasm.py`` as it is at a git revision beside this tree's (each with an engine
of its own; the revision's side with its own stub, and its own warm module where the way it is made
differs: ``rlstream sandbox prepare`` at that revision makes it), then runs each job on both
alternately: an empty program with one case,
HumanEval/0's canonical solution on its cases, and the same with its check (two guests). Prints the
CPU of this process per execution (mean and median) and the median wall time. Interleaving job by job
puts the machine's load on both sides alike; two runs minutes apart on shared cores differ by more
than a change of a few percent.

    .venv/bin/python -m bench.wasm_ab [--rev main] [--rounds 200] [--answers]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.revision import ROOT, load_at


def _show(rev: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{rev}:{path}"], capture_output=True, text=True, check=True
    ).stdout


def _answer_jobs(limits: Any) -> dict[str, Any]:
    """300 calls whose answers are containers, as a probe run makes them (the caller's view): each
    answer the stub keeps is read again after later calls and after the last."""
    from streams.sandbox import Job

    inputs = tuple(repr(([(i * 7919 + j * 104729) % 97 for j in range(1 + i % 19)],)) for i in range(300))
    programs = {
        "300 sorted-list answers": "def f(xs):\n    return sorted(xs)\n",
        "300 in-place sorts returned": "def f(xs):\n    xs.sort()\n    return xs\n",
        "300 dicts of lists": (
            "def f(xs):\n    return {str(k): sorted(xs)[:k] for k in range(1 + len(xs) % 5)}\n"
        ),
    }
    return {
        label: Job(mode="cases", code=code, entry_point="f", inputs=inputs, limits=limits, caller=True)
        for label, code in programs.items()
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", default="main", help="the revision to compare against")
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument(
        "--answers",
        action="store_true",
        help="also 300-call runs answering containers (what the stub keeps and reads again)",
    )
    args = ap.parse_args()

    from bench.sandbox import EMPTY_PROGRAM, _cpu, humaneval_jobs
    from streams.sandbox import Job, Limits, Sandbox, SandboxConfig, artifact

    sandbox = Sandbox(SandboxConfig())
    now = sandbox.wasm()
    with tempfile.TemporaryDirectory() as folder:
        old = load_at("rlstream_wasm_then", args.rev, "streams/sandbox/wasm.py", Path(folder))
        old_artifact = load_at(
            "rlstream_artifact_then", args.rev, "streams/sandbox/artifact.py", Path(folder)
        )
    # The revision's side runs its own stub from its own warm module (each holds the stub it was made
    # with: run beside this tree's, the revision's stub would come through the door, ~1 ms slower).
    stub = _show(args.rev, "streams/sandbox/guest_harness.pysrc")
    digest = hashlib.sha256(stub.encode()).hexdigest()[:16]
    # (the names its WasmBackend reads them by)
    vars(old).update(harness_source=lambda: stub, stub_digest=lambda: digest)
    runtime = now.runtime
    if old_artifact.warm_recipe() != artifact.warm_recipe():
        runtime = old_artifact.load(sandbox.cache_dir)
        held = runtime.warm.with_suffix(".stub")
        if not held.is_file() or held.read_text() != digest:
            print(
                f"{runtime.warm} does not hold {args.rev}'s stub: prepare it at {args.rev} first",
                file=sys.stderr,
            )
            return 1
    then = old.WasmBackend(runtime)
    limits = Limits(timeout_s=10.0, memory_mb=512)
    checks, cases = humaneval_jobs(1, 1, limits)
    jobs = {
        "empty program, one case": Job(
            mode="cases", code=EMPTY_PROGRAM, entry_point="f", inputs=("()",), limits=limits
        ),
        f"HumanEval/0, {len(cases[0].inputs)} cases": cases[0],
        "HumanEval/0 with its check": checks[0],
    }
    if args.answers:
        jobs.update(_answer_jobs(limits))
    sides: dict[str, Any] = {args.rev: then, "this tree": now}
    seen: dict[tuple[str, str], list[tuple[float, float]]] = {(j, s): [] for j in jobs for s in sides}
    for rnd in range(args.rounds + 3):
        for label, job in jobs.items():
            # each side goes first every other round: the one that follows finds the caches warmer
            for side, backend in list(sides.items())[:: 1 if rnd % 2 else -1]:
                sandbox._wasm = backend
                cpu0, wall0 = _cpu(), time.perf_counter()
                r = sandbox.execute(job, "wasm")
                wall1, cpu1 = time.perf_counter(), _cpu()
                ok = r.check_passed if job.mode == "check" else all(c.status == "ok" for c in r.cases)
                if r.infra_error or not ok:
                    print(f"{side}, {label}: the execution failed: {r}", file=sys.stderr)
                    return 1
                if rnd >= 3:  # the first rounds warm both sides up
                    seen[label, side].append((1000 * (cpu1 - cpu0), 1000 * (wall1 - wall0)))
    sandbox._wasm = now
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"WASM, {args.rounds} rounds job by job, load average {load}")
    for label in jobs:
        print(f"  {label}")
        for side in sides:
            rows = seen[label, side]
            cpu, wall = [c for c, _ in rows], [w for _, w in rows]
            mean, median = statistics.mean(cpu), statistics.median(cpu)
            print(
                f"    {side:>10}: CPU mean {mean:6.2f} ms  median {median:6.2f} ms"
                f"  wall median {statistics.median(wall):6.2f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
