"""How far a reward's efficiency moves with the machine's load: code-v5 (wall clock) against code-v7 (the
guest's own time), on the same runs.

    PYTHONPATH=$PWD .venv/bin/python -m tests.hacks.redteam.efficiency [--runs 10] [--busy 6]
        [--only NAME ...] [--out FILE.json]

Per program, ``--runs`` trials, each a fresh WASM run of the task's reference and of the program (the
reward processor times a task's reference once and each program at another moment, so both sides move),
scored by both versions. Then the same again beside ``--busy`` processes spinning ``while True: pass``
(started here, ended here by their pid). Prints, per program, phase and version, the efficiency's range
and spread (max - min), and the load average at each phase's end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from schemas.rollout import SandboxExecuted
from schemas.task import TaskPublished
from streams.reward.config import RewardConfig
from streams.reward.evaluate import run_program
from streams.reward.function import get_reward_function
from streams.sandbox import Sandbox, SandboxConfig
from tests.hacks.redteam.corpus import PROGRAMS
from tests.hacks.redteam.tasks import all_tasks

VERSIONS = ("code-v5", "code-v7")
#: correct programs of several efficiencies: the task's own reference (about 1), a naive recursion, work at
#: import (a loop, a table), a sleep at import
DEFAULT = (
    "reference:redteam/depth",
    "a15_ok_naive_fib_55",
    "a16_import_spin_depth",
    "a17_import_table_depth",
    "efficiency_sleep_in_import_35",
)


#: correct programs of middling efficiency (the corpus's are mostly as fast as the reference, or far
#: slower): the reference's loop with more work per step
SLOWER = {
    "twice:redteam/depth": (
        "def depth(n: int) -> int:\n"
        "    total = 0\n"
        "    for i in range(1, n + 1):\n"
        "        total += i\n"
        "        total = total + 0 * i\n"
        "    return total\n"
    ),
    "sorted:HumanEval/35": "def max_element(l):\n    return sorted(list(l) * 20)[-1]\n",
}


def program(name: str) -> tuple[TaskPublished, str]:
    tasks = all_tasks()
    if name in SLOWER:
        return tasks[name.split(":", 1)[1]], SLOWER[name]
    if name.startswith("reference:"):
        task = tasks[name.split(":", 1)[1]]
        assert task.reference is not None
        return task, task.reference
    p = next(p for p in PROGRAMS if p.name == name)
    return tasks[p.task], p.code


def trial(sandbox: Sandbox, task: TaskPublished, code: str, ref_first: bool = True) -> dict[str, Any]:
    assert task.reference is not None

    def one(source: str, sample: str) -> SandboxExecuted:
        return run_program(sandbox, task, source, sample_id=sample, group_id="g", backend="wasm")

    # the first of two runs of a task is the colder one (measured: ~0.3 ms more of ~3.5 ms): the order
    # alternates between trials so neither side always pays it
    if ref_first:
        ref, run = one(task.reference, "ref"), one(code, "s")
    else:
        run, ref = one(code, "s"), one(task.reference, "ref")
    row: dict[str, Any] = {
        "active_s": run.active_s,
        "active_cpu_s": run.active_cpu_s,
        "ref_active_s": ref.active_s,
        "ref_active_cpu_s": ref.active_cpu_s,
    }
    for spec in VERSIONS:
        score = get_reward_function(spec, RewardConfig()).score(task, code, run, ref)
        row[spec] = score.components["efficiency"]
        row[f"{spec}:clock"] = score.details.get("runtime_clock", "wall")
    return row


def phase(sandbox: Sandbox, names: list[str], runs: int) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    for i in range(runs):
        for name in names:  # interleaved, so a change of load lands on every program alike
            out[name].append(trial(sandbox, *program(name), ref_first=i % 2 == 0))
    return out


def summary(rows: list[dict[str, Any]], spec: str) -> dict[str, float]:
    xs = [r[spec] for r in rows]
    return {
        "min": min(xs),
        "max": max(xs),
        "spread": max(xs) - min(xs),
        "mean": statistics.fmean(xs),
        "stdev": statistics.pstdev(xs),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--busy", type=int, default=6)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    names = list(args.only or DEFAULT)
    sandbox = Sandbox(SandboxConfig())
    trial(sandbox, *program(names[0]))  # warm the runtime
    result: dict[str, Any] = {"phases": {}}
    for label, busy in (("idle", 0), ("busy", args.busy)):
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
        try:
            if spinners:
                time.sleep(2.0)  # the load average starts to show them
            t0 = time.monotonic()
            rows = phase(sandbox, names, args.runs)
            load = os.getloadavg()
        finally:
            for p in spinners:
                p.kill()
                p.wait()
        result["phases"][label] = {
            "busy": busy,
            "seconds": round(time.monotonic() - t0, 1),
            "loadavg": [round(x, 2) for x in load],
            "rows": rows,
        }
        sys.stdout.write(f"== {label}: {busy} busy processes, load average {load[0]:.2f}\n")
        for name in names:
            parts = []
            for spec in VERSIONS:
                s = summary(rows[name], spec)
                parts.append(f"{spec} {s['min']:.3f}..{s['max']:.3f} (spread {s['spread']:.3f})")
            sys.stdout.write(f"  {name:34s} " + "  ".join(parts) + "\n")
        sys.stdout.flush()
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
