"""How much the reward and the noise filter cost next to the sandbox run they judge.

Runs N HumanEval canonical solutions in the WASM sandbox (the baseline), then times, on the stored
executions: grading alone, the full code-v1 reward (ruff included) and the noise filter. Prints each
per sample and as a ratio of the sandbox time measured in the same run.

    .venv/bin/python -m bench.reward [N]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from producers.ingest.humaneval import load_rows, to_task
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.reward.correctness import grade
from streams.reward.evaluate import run_program
from streams.reward.function import get_reward_function
from streams.reward.lint import RuffLinter
from streams.sandbox.config import SandboxConfig
from streams.sandbox.service import Sandbox


def measure(n: int = 40) -> dict[str, Any]:
    """Per-sample seconds of the sandbox run (baseline), grading, reward and filter, with ratios."""
    rows = load_rows()[:n]
    tasks = [to_task(r) for r in rows]
    codes = [r.prompt + r.canonical_solution for r in rows]
    sandbox = Sandbox(SandboxConfig(backend="wasm"))
    run_program(sandbox, tasks[0], codes[0], sample_id="warm", group_id="warm")  # compile/load once

    t0 = time.perf_counter()
    runs = [
        run_program(sandbox, t, c, sample_id=f"s{i}", group_id="g")
        for i, (t, c) in enumerate(zip(tasks, codes, strict=True))
    ]
    sandbox_s = time.perf_counter() - t0

    fn = get_reward_function("code-v1")
    options = fn.compare_options()
    noise = NoiseConfig()

    t0 = time.perf_counter()
    for t, x in zip(tasks, runs, strict=True):
        grade(t, x, options)
    grade_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    passed = 0
    for t, c, x in zip(tasks, codes, runs, strict=True):
        passed += fn.score(t, c, x, x).passed
    reward_s = time.perf_counter() - t0

    # the same with the group's lint done in one ruff process, as a reward processor does per batch
    fn = get_reward_function("code-v1")
    t0 = time.perf_counter()
    linter = fn.linter  # type: ignore[attr-defined]
    if isinstance(linter, RuffLinter):
        linter.warm(codes)
    for t, c, x in zip(tasks, codes, runs, strict=True):
        fn.score(t, c, x, x)
    batched_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    for t, c, x in zip(tasks, codes, runs, strict=True):
        decide(task=t, code=c, executions=[x], config=noise, options=options)
    filter_s = time.perf_counter() - t0

    timings = {
        "sandbox (baseline)": sandbox_s,
        "grade": grade_s,
        "reward code-v1": reward_s,
        "reward, batched lint": batched_s,
        "noise filter": filter_s,
    }
    return {
        "samples": n,
        "passed": passed,
        "ms_per_sample": {k: 1000 * v / n for k, v in timings.items()},
        "ratio_to_sandbox": {k: v / sandbox_s for k, v in timings.items()},
    }


def main(n: int) -> None:
    r = measure(n)
    print(f"{n} HumanEval canonical solutions, {r['passed']} passing")
    for name, ms in r["ms_per_sample"].items():
        print(f"{name:>20}: {ms:8.2f} ms/sample   ratio to sandbox {r['ratio_to_sandbox'][name]:6.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("samples", nargs="?", type=int, default=40, help="HumanEval tasks to run")
    main(parser.parse_args().samples)
