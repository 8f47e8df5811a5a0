"""CPU of the probe plan's draw and of the noise filter's judging, before and after a change: the plan
module of an earlier revision (``bench.revision.load_at``) against this tree's, and the filter judging a
group of 4 samples against one object of the reference's runs with what it reads from them kept
(``streams/noise/probe.py: _per_reference``) or cleared before each sample, as before. Rounds alternate
which side goes first; each figure is the median of the rounds' CPU (``time.process_time``), so other
processes on the cores do not inflate it as they inflate wall time.

    .venv/bin/python -m bench.judging_ab --rev REV [--rounds R]
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import tempfile
import time
from pathlib import Path

from bench.revision import load_at
from harness.redteam_tasks import all_tasks
from harness.simulated import simulated_reference_probe, simulated_run
from harness.trivial import TASK, program
from schemas.task import TaskPublished
from streams.noise import probe as probing
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.probe import plan as new
from streams.reward.literals import CompareOptions

OPTS = CompareOptions()


def plans(old: object, task: TaskPublished, rounds: int) -> tuple[float, float]:
    """ms per draw (fresh seed each) of the earlier revision's plan module and of this tree's."""
    before: list[float] = []
    after: list[float] = []
    for r in range(rounds):
        for side in (1, 0) if r % 2 == 0 else (0, 1):
            plan_for = new.plan_for if side else old.plan_for  # type: ignore[attr-defined]
            t = time.process_time()
            plan_for(task, secrets.token_hex(16))
            (after if side else before).append(time.process_time() - t)
    return 1000 * statistics.median(before), 1000 * statistics.median(after)


def judging(task: TaskPublished, rounds: int) -> tuple[float, float]:
    """ms per sample of a group of 4 judged against one reference object: reads cleared, reads kept."""
    seed = secrets.token_hex(16)
    reference = simulated_reference_probe(task, seed=seed)
    codes = [program(i) if task is TASK else task.reference or "" for i in range(4)]
    firsts = [simulated_run(task, c) for c in codes]
    probes = [
        simulated_run(task, c, run_index=new.probe_run_index(0), probe=True, seed=seed, sample_id=f"s{i}")
        for i, c in enumerate(codes)
    ]
    cleared: list[float] = []
    kept: list[float] = []
    for r in range(rounds):
        for side in (1, 0) if r % 2 == 0 else (0, 1):
            probing._READS.clear()
            t = time.process_time()
            for i in range(4):
                if not side:
                    probing._READS.clear()
                decide(
                    task=task,
                    code=codes[i],
                    executions=[firsts[i], probes[i]],
                    config=NoiseConfig(),
                    options=OPTS,
                    probe_reference=reference,
                )
            (kept if side else cleared).append((time.process_time() - t) / 4)
    return 1000 * statistics.median(cleared), 1000 * statistics.median(kept)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rev", required=True, help="the earlier revision whose plan module is measured")
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    old = load_at("plan_at_rev", args.rev, "streams/probe/plan.py", Path(tempfile.mkdtemp()))
    for task in (TASK, all_tasks()["HumanEval/14"]):
        new.plan_for(task, secrets.token_hex(16))  # this tree's kept public inputs, as in a running process
        b, a = plans(old, task, args.rounds)
        print(f"{task.task_id}: plan draw {b:.2f} -> {a:.2f} ms")
        c, k = judging(task, args.rounds)
        print(f"{task.task_id}: judging per sample, reads cleared {c:.2f} -> kept {k:.2f} ms")


if __name__ == "__main__":
    main()
