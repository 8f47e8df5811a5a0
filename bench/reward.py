"""How well the reward and the noise filter judge, and what they cost next to the sandbox run they judge.

Fidelity: the adversarial corpus (``streams/reward/corpus``) on N HumanEval tasks through the sandbox,
code-v3 and the noise filter, as ``rlstream score`` judges one program: hack recall (wrong programs of
every family that earn no passing reward: they fail, or are rejected and trained as failures) and the
false-reject rate (correct programs, the canonical ones and the unusual ones, that do not pass, are not
accepted, or lose reward to the security part), per family.

Cost, per sample, on the N canonical solutions: the first sandbox run (the baseline), the probe run a
passing sample earns (plus the reference's two runs of each task's plan, shared by every sample of the
task), grading, the code-v3 reward (ruff included; and with a batch linted in one ruff process, as the
reward processor does) and the noise filter. Each is printed with its ratio to the baseline measured in
the same run.

    .venv/bin/python -m bench.reward [N] [--backend wasm|container] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from producers.ingest.humaneval import load_rows, to_task
from schemas.task import TaskPublished
from streams.noise.config import NoiseConfig
from streams.noise.filter import decide
from streams.reward.corpus.run import Report
from streams.reward.corpus.run import run as run_corpus
from streams.reward.correctness import grade
from streams.reward.evaluate import Evaluator, run_probe, run_program
from streams.reward.function import get_reward_function
from streams.reward.lint import RuffLinter
from streams.sandbox.config import SandboxConfig
from streams.sandbox.service import Sandbox

SPEC = "code-v5"


def sample_tasks(n: int) -> list[TaskPublished]:
    """N HumanEval tasks spread over the 164 (every k-th), so a small N still covers the whole range."""
    tasks = [to_task(r) for r in load_rows()]
    step = max(1, len(tasks) // max(1, n))
    return tasks[::step][:n]


def cost(tasks: list[TaskPublished], backend: str = "wasm") -> dict[str, Any]:
    """Per-sample seconds of the first sandbox run (baseline), the probe, grading, reward and filter."""
    codes = [t.reference or "" for t in tasks]
    sandbox = Sandbox(SandboxConfig(backend=backend))  # type: ignore[arg-type]
    run_program(sandbox, tasks[0], codes[0], sample_id="warm", group_id="warm")  # compile/load once
    evaluator = Evaluator(sandbox, get_reward_function(SPEC), NoiseConfig())

    t0 = time.perf_counter()
    runs = [
        run_program(sandbox, t, c, sample_id=f"s{i}", group_id="g")
        for i, (t, c) in enumerate(zip(tasks, codes, strict=True))
    ]
    sandbox_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    probes = [
        run_probe(
            sandbox,
            t,
            c,
            sample_id=f"s{i}",
            group_id="g",
            first_run_s=x.duration_s,
            seed=evaluator.probe_seed,
        )
        for i, (t, c, x) in enumerate(zip(tasks, codes, runs, strict=True))
    ]
    probe_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    # the reference on the cases and twice on the probe plan: once per task, shared by its samples
    references = [
        evaluator.reference_probe(t, x.backend, evaluator.probe_seed)
        for t, x in zip(tasks, runs, strict=True)
    ]
    reference_probe_s = time.perf_counter() - t0

    fn = get_reward_function(SPEC)
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
    fn = get_reward_function(SPEC)
    t0 = time.perf_counter()
    linter = fn.linter  # type: ignore[attr-defined]
    if isinstance(linter, RuffLinter):
        linter.warm(codes)
    for t, c, x in zip(tasks, codes, runs, strict=True):
        fn.score(t, c, x, x)
    batched_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    for t, c, x, p, ref in zip(tasks, codes, runs, probes, references, strict=True):
        runs_of = [x] if p is None else [x, p]
        decide(task=t, code=c, executions=runs_of, config=noise, options=options, probe_reference=ref)
    filter_s = time.perf_counter() - t0

    n = len(tasks)
    timings = {
        "sandbox (baseline)": sandbox_s,
        "probe run": probe_s,
        "reference runs, per task": reference_probe_s,
        "grade": grade_s,
        f"reward {SPEC}": reward_s,
        "reward, batched lint": batched_s,
        "noise filter": filter_s,
    }
    return {
        "samples": n,
        "passed": passed,
        "probed": sum(p is not None for p in probes),
        "ms_per_sample": {k: 1000 * v / n for k, v in timings.items()},
        "ratio_to_sandbox": {k: v / sandbox_s for k, v in timings.items()},
    }


def fidelity(report: Report) -> dict[str, Any]:
    """Hack recall and false-reject rate of a corpus run, overall and per family."""

    def families(outcomes: list[Any], attr: str) -> dict[str, dict[str, int]]:
        by: dict[str, dict[str, int]] = {}
        for o in outcomes:
            entry = by.setdefault(o.kind, {"n": 0, attr: 0})
            entry["n"] += 1
            entry[attr] += int(getattr(o, attr))
        return dict(sorted(by.items()))

    wrong = [*report.hacks, *report.memorised, *report.wrong]
    correct = [*report.canonical, *report.correct]
    return {
        "hack_recall": report.hack_recall(),
        "false_reject_rate": report.false_reject_rate(),
        "wrong_programs": len(wrong),
        "correct_programs": len(correct),
        "wrong_by_family": families(wrong, "caught"),
        "correct_by_family": families(correct, "penalised"),
        "got_through": [(o.task_id, o.kind) for o in report.wrong_accepted()],
        "penalised": [(o.task_id, o.kind, o.verdict, list(o.reasons)) for o in report.correct_penalised()],
        "seconds": report.seconds,
        "sandbox_runs": report.runs,
    }


def measure(n: int = 40, backend: str = "wasm", workers: int = 2) -> dict[str, Any]:
    tasks = sample_tasks(n)
    report, _, _ = run_corpus(
        tasks,
        backend=backend,  # type: ignore[arg-type]
        workers=workers,
        with_mutants=False,
        with_generated=True,
        with_unusual=True,
    )
    return {"tasks": len(tasks), "backend": backend, **cost(tasks, backend), **fidelity(report)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "tasks", nargs="?", type=int, default=40, help="HumanEval tasks (spread over the 164)"
    )
    parser.add_argument("--backend", default="wasm", choices=("wasm", "container"))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    r = measure(args.tasks, args.backend)
    if args.json:
        print(json.dumps(r))
        return
    print(f"{r['tasks']} HumanEval tasks, {args.backend} backend")
    print(
        f"hack recall {100 * r['hack_recall']:.2f}% of {r['wrong_programs']} wrong programs; "
        f"false-reject rate {100 * r['false_reject_rate']:.2f}% of {r['correct_programs']} correct programs"
    )
    for fam, e in r["wrong_by_family"].items():
        print(f"  wrong   {fam:>24}: {e['caught']}/{e['n']} caught")
    for fam, e in r["correct_by_family"].items():
        print(f"  correct {fam:>24}: {e['penalised']}/{e['n']} penalised")
    if r["got_through"]:
        print(f"  got through: {r['got_through']}")
    if r["penalised"]:
        print(f"  penalised: {r['penalised']}")
    print(f"cost per sample ({r['samples']} canonical solutions, {r['probed']} probed):")
    for name, ms in r["ms_per_sample"].items():
        print(f"{name:>22}: {ms:8.2f} ms/sample   ratio to sandbox {r['ratio_to_sandbox'][name]:6.3f}")


if __name__ == "__main__":
    main()
