"""How many of a probe plan's generated inputs the task's reference answers, per task and backend.

    PYTHONPATH=$PWD .venv/bin/python -m bench.slowref --backend wasm [--seed HEX] [--only TASK ...]
        [--out FILE.jsonl] [--below 0.6]

Per task with a reference and a probe plan (HumanEval, the synthetic family, the red-team tasks), the
reference's probe runs under one fixed seed (through the evaluator ``rlstream score`` uses, so its
deadlines and its memoised runs are the pipeline's): how many generated inputs the plan holds, how many
a plain run answered (a value or an error, not a hang or a call never made), how many a memoised run
adds, how long the runs took and under which deadline. Prints the tasks where fewer than ``--below`` of
the generated inputs were answered.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from schemas.rollout import SandboxExecutedV3


def answered(run: SandboxExecutedV3 | None, positions: list[int]) -> set[int]:
    if run is None:
        return set()
    by_index = {c.index: c for c in run.cases}
    return {i for i in positions if i in by_index and by_index[i].status in ("ok", "error")}


def main(argv: list[str] | None = None) -> int:
    from harness.redteam_tasks import all_tasks
    from streams.noise.config import NoiseConfig
    from streams.probe.plan import GENERATED, plan_for
    from streams.reward.config import RewardConfig
    from streams.reward.evaluate import Evaluator
    from streams.reward.function import get_reward_function
    from streams.sandbox import Sandbox, SandboxConfig
    from streams.sandbox.jobs import probe_job_for

    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="wasm")
    ap.add_argument("--seed", default="5e" * 16)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--below", type=float, default=0.6)
    ap.add_argument("--filter", default=NoiseConfig().version, help="the filter version (v25 resumes runs)")
    args = ap.parse_args(argv)
    sandbox = Sandbox(SandboxConfig())
    evaluator = Evaluator(
        sandbox,
        get_reward_function("code-v5", RewardConfig()),
        NoiseConfig(version=args.filter),
        probe_seed=args.seed,
    )
    tasks = all_tasks()
    rows: list[dict[str, Any]] = []
    t0 = time.time()
    for task_id, task in tasks.items():
        if args.only and task_id not in args.only:
            continue
        if not task.reference:
            continue
        plan = plan_for(task, args.seed)
        if plan is None or plan.check is not None:
            continue
        first = evaluator.reference(task, args.backend)
        if first is None or first.infra_error:
            print(f"{task_id}: no reference run ({first.infra_error if first else None})", flush=True)
            continue
        limits = sandbox.limits(timeout_s=task.limits.timeout_s, memory_mb=task.limits.memory_mb)
        found = probe_job_for(task, task.reference, limits, seed=args.seed, first_run_s=first.duration_s)
        assert found is not None
        job, _ = found
        ref = evaluator.reference_probe(task, first.backend, args.seed)
        if ref is None:
            continue
        gen = [i for i, o in enumerate(plan.inputs) if plan.origin[i] == GENERATED]
        plain = [answered(r, gen) for r in (ref.execution, *ref.reruns)]
        memo = [answered(r, gen) for r in ref.memoised]
        both = set.intersection(*plain) if plain else set()
        any_plain = set.union(*plain) if plain else set()
        with_memo = any_plain | (set.union(*memo) if memo else set())
        unanswered = [i for i in gen if i not in any_plain]
        row = {
            "task": task_id,
            "backend": ref.backend,
            "generated": len(gen),
            "inputs": len(plan.inputs),
            "answered_both": len(both),
            "answered_plain": len(any_plain),
            "answered_memo": len(with_memo),
            "memoised_runs": len(ref.memoised),
            "deadline_s": round(job.limits.timeout_s, 3),
            "call_cap": job.call_cap,
            "cases_run_s": round(first.duration_s, 3),
            "probe_s": [round(r.duration_s, 3) for r in (ref.execution, *ref.reruns, *ref.memoised)],
            "timed_out": [r.timed_out for r in (ref.execution, *ref.reruns, *ref.memoised)],
            "first_unanswered": unanswered[0] if unanswered else None,
            "unanswered_far": sum(1 for i in unanswered if i in plan.far),
            "unanswered_ends": sum(1 for i in unanswered if i >= len(plan.inputs) - plan.ends),
        }
        rows.append(row)
        share = len(with_memo) / max(1, len(gen))
        mark = "SLOW" if share < args.below else "    "
        print(
            f"[{time.time() - t0:5.0f}s] {mark} {task_id} [{ref.backend}] judged {len(with_memo)}/{len(gen)} "
            f"(plain {len(any_plain)}, both {len(both)}) deadline {job.limits.timeout_s:.2f}s "
            f"cases {first.duration_s:.3f}s "
            f"probe {row['probe_s']} timed_out {row['timed_out']}",
            flush=True,
        )
        if args.out:
            with args.out.open("a") as f:
                f.write(json.dumps(row) + "\n")
    slow = [r for r in rows if r["answered_memo"] / max(1, r["generated"]) < args.below]
    print(f"\n{len(rows)} tasks, {len(slow)} with fewer than {args.below:.0%} of generated inputs answered:")
    for r in slow:
        print(
            f"  {r['task']}: {r['answered_memo']}/{r['generated']} deadline {r['deadline_s']}s {r['probe_s']}"
        )
    evaluator.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
