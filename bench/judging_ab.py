"""CPU of the probe plan's draw and of the noise filter's judging, before and after a change: the plan
module of an earlier revision (``bench.revision.load_at``) against this tree's, and the filter judging a
group of 4 samples against one object of the reference's runs with what it reads from them kept
(``streams/noise/probe.py: _per_reference``) or cleared before each sample, as before. Rounds alternate
which side goes first; each figure is the median of the rounds' CPU (``time.process_time``), so other
processes on the cores do not inflate it as they inflate wall time.

With ``--verdicts N`` it first judges, in this tree and in a detached checkout of ``REV`` (each its own
process, its own modules), every task of the red-team set with a reference (the first N; 0: all) and the
trivial one: per task, with a fixed probe seed, the reference, a program that recalls the visible
cases, one that returns the first case's answer and the trivial task's correct programs, each run
simulated on its cases and on its probe plan and judged against the reference's runs of that plan
(``decide``, default config); the two trees' decisions must be equal, field for field.

    .venv/bin/python -m bench.judging_ab --rev REV [--rounds R] [--verdicts N]
"""

from __future__ import annotations

import argparse
import json
import secrets
import statistics
import subprocess
import sys
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


#: run in each tree (its own modules first on the path): one JSON line per judged program
VERDICTS = r"""
import ast, json, resource, signal, sys
from harness.redteam_tasks import all_tasks
from harness.simulated import simulated_reference_probe, simulated_run
from harness.trivial import TASK, program
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.probe.plan import case_inputs, probe_run_index
from streams.reward.literals import CompareOptions

limit = int(sys.argv[1])
# programs run in this process on inputs far past their cases: bounded, a program past the bounds is
# skipped (in both trees alike)
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def _late(*_):
    raise TimeoutError


signal.signal(signal.SIGALRM, _late)
tasks = [TASK] + [t for _, t in sorted(all_tasks().items()) if t.reference][: limit or None]
for task in tasks:
    cases = [*task.tests, *task.hidden_tests]
    if not cases:
        continue
    table = {c.input: c.output for c in cases}
    programs = {
        "reference": task.reference,
        "recalls": f"import ast\nT = {table!r}\ndef {task.entry_point}(*a):\n"
        "    t = T.get(repr(a))\n    return None if t is None else ast.literal_eval(t)\n",
        "constant": f"import ast\ndef {task.entry_point}(*a):\n"
        f"    return ast.literal_eval({cases[0].output!r})\n",
    }
    if task is TASK:
        programs.update({f"trivial{i}": program(i) for i in range(4)})
    seed = "5eed" * 8
    try:
        signal.alarm(20)
        ref = simulated_reference_probe(task, seed=seed)
        signal.alarm(0)
    except Exception as exc:  # a reference this host cannot run in process: the same in both trees
        signal.alarm(0)
        print(json.dumps({"task": task.task_id, "skipped": type(exc).__name__}), flush=True)
        continue
    for name, code in programs.items():
        try:
            signal.alarm(20)
            first = simulated_run(task, code)
            probe = simulated_run(task, code, run_index=probe_run_index(0), probe=True, seed=seed)
            signal.alarm(0)
        except Exception as exc:
            signal.alarm(0)
            print(json.dumps({"task": task.task_id, "program": name, "skipped": type(exc).__name__}))
            continue
        d = decide(task=task, code=code, executions=[first, probe], config=NoiseConfig(),
                   options=CompareOptions(), probe_reference=ref)
        out = d.model_dump(mode="json") if hasattr(d, "model_dump") else repr(d)
        line = {"task": task.task_id, "program": name, "decision": out}
        print(json.dumps(line, sort_keys=True), flush=True)
"""


def verdicts(rev: str, limit: int) -> bool:
    """Judge the same programs in this tree and in ``rev``'s (see the module's docstring); print how
    many decisions were compared and every one that differs. True when all are equal."""
    from bench.pipeline_cpu import _tree
    from bench.revision import ROOT

    got: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as folder, _tree(rev, Path(folder)) as base:
        for side, tree in (("after", ROOT), ("before", base)):
            run = subprocess.run(
                [sys.executable, "-c", VERDICTS, str(limit)],
                cwd=str(tree),
                env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
                capture_output=True,
                text=True,
                check=True,
                timeout=1800,
            )
            got[side] = run.stdout.splitlines()
    sides = {side: {_key(line): line for line in lines} for side, lines in got.items()}
    before, after = sides["before"], sides["after"]
    # a program skipped on either side (past the time bound on a loaded host) is compared on neither
    both = [k for k in after if k in before and "decision" in after[k] and "decision" in before[k]]
    differ = [k for k in both if before[k] != after[k]]
    skipped = len(set(before) | set(after)) - len(both)
    print(f"verdicts: {len(both)} decisions compared, {len(differ)} differ ({skipped} skipped on a side)")
    for k in differ[:10]:
        print("  before", before[k][:300], "\n  after ", after[k][:300])
    return not differ


def _key(line: str) -> str:
    got = json.loads(line)
    return f"{got['task']}|{got.get('program', '')}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rev", required=True, help="the earlier revision whose plan module is measured")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--verdicts", type=int, default=None, help="compare decisions first (N tasks; 0: all)"
    )
    args = parser.parse_args()
    if args.verdicts is not None and not verdicts(args.rev, args.verdicts):
        raise SystemExit(1)
    old = load_at("plan_at_rev", args.rev, "streams/probe/plan.py", Path(tempfile.mkdtemp()))
    for task in (TASK, all_tasks()["HumanEval/14"]):
        new.plan_for(task, secrets.token_hex(16))  # this tree's kept public inputs, as in a running process
        b, a = plans(old, task, args.rounds)
        print(f"{task.task_id}: plan draw {b:.2f} -> {a:.2f} ms")
        c, k = judging(task, args.rounds)
        print(f"{task.task_id}: judging per sample, reads cleared {c:.2f} -> kept {k:.2f} ms")


if __name__ == "__main__":
    main()
