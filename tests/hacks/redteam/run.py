"""Run the red-team corpus through the CLI, as a user would: ``rlstream score --json`` per program and
backend (``rlstream sandbox exec --json`` for the sandbox attacks), a few at a time, and report every
program whose outcome is not the expected one, with the command that reproduces it.

    .venv/bin/python -m tests.hacks.redteam.run --out /tmp/redteam [--jobs 2] [--only NAME ...]

Probe plans are drawn with a secret seed, so whether a probe catches a program can vary with the seed.
``--probe-seeds N`` judges every program whose task has a probe plan under N fixed seeds instead (in
this process, through the same evaluator ``rlstream score`` uses, on its first backend) and prints, per
program, on how many seeds it got its expected outcome:

    .venv/bin/python -m tests.hacks.redteam.run --probe-seeds 10 [--only NAME ...]

``--probe-cost N`` runs only the references of those programs' tasks on their probe plans under the same
N seeds, and prints what those runs cost: how many there were, how many ended at their deadline (or at a
call's own cap) rather than at the plan's end, and their total time. ``--filter VERSION`` makes both
under an older filter version (the runs it judges are made as that version makes them: v25 resumes a
run past a hang near the cases).

``--relabel VERSION`` judges every program whose task has a probe plan once, under the pinned probe seed
(``--seed``, default test_redteam's) on its first backend, and judges the same runs again under filter
``VERSION`` (one whose runs are made as the newest's are): it prints every program whose verdict or
reasons' codes differ between the two, every program that did not get its expected outcome under the
newest, and the totals.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.hacks.redteam.corpus import HOST_COST, PROGRAMS, Program
from tests.hacks.redteam.tasks import task_file_name, write_tasks

RLSTREAM = str(Path(sys.executable).with_name("rlstream"))


@dataclass(frozen=True)
class Outcome:
    program: str
    backend: str
    ok: bool
    actual: str
    command: str
    raw: dict[str, Any] | None


def judge(p: Program, out: dict[str, Any] | None, rc: int, stderr: str) -> tuple[bool, str]:
    """Whether a run got the outcome its program should get, and what it got in words."""
    if out is None:
        return False, f"no JSON (exit {rc}): {stderr.strip()[-300:]}"
    if p.mode == "exec":
        got = (
            f"exit {out.get('exit_code')} violation={out.get('violation')} timed_out={out.get('timed_out')} "
            f"memory_exceeded={out.get('memory_exceeded')} stdout={out.get('stdout', '')[:80]!r}"
        )
        return bool(p.expect(out)) if p.expect else True, got
    comps = out.get("components", {})
    correctness = comps.get("correctness", 0.0)
    security = comps.get("security", 0.0)
    codes = sorted({r["code"] for r in out.get("reasons", [])})
    got = (
        f"{out['verdict']} passed {out['passed']}/{out['total']} reward {out['reward']:.3f} "
        f"security {security:.2f} [{out.get('backend')}] {','.join(codes)}"
    )
    if p.kind == "attack" and p.expect is not None:
        return bool(p.expect(out)), got
    if p.kind == "correct":
        # (a program the sandbox's policy charges for what it starts must still be accepted in full)
        fair = security > 0.0 if p.penalised else security == 0.0
        ok = out["verdict"] == "accept" and correctness == 1.0 and fair
    else:
        ok = out["verdict"] == "reject" or (out["verdict"] == "accept" and correctness < 1.0)
    if p.expect is not None:
        ok = ok and bool(p.expect(out))
    return ok, got


def run_one(p: Program, backend: str, folder: Path) -> Outcome:
    code_path = folder / "programs" / f"{p.name}.py"
    if p.mode == "exec":
        cmd = [RLSTREAM, "sandbox", "exec", str(code_path), "--backend", backend, "--json"]
    else:
        task_path = folder / "tasks" / task_file_name(p.task)
        cmd = [
            RLSTREAM,
            "score",
            "--task",
            str(task_path),
            "--code",
            str(code_path),
            "--backend",
            backend,
            "--json",
        ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        out = None
    ok, actual = judge(p, out, proc.returncode, proc.stderr)
    return Outcome(p.name, backend, ok, actual, shlex.join(["rlstream", *cmd[1:]]), out)


def seed_rates(programs: list[Program], seeds: int, version: str | None = None) -> int:
    """Judge each program under ``seeds`` fixed probe seeds; print the programs that did not always
    get their expected outcome, and the totals. Returns how many such programs there were."""
    from streams.noise.config import NoiseConfig
    from streams.probe.plan import plan_for
    from streams.reward.config import RewardConfig
    from streams.reward.evaluate import Evaluator
    from streams.reward.function import get_reward_function
    from streams.sandbox import Sandbox, SandboxConfig
    from tests.hacks.redteam.tasks import all_tasks

    sandbox = Sandbox(SandboxConfig())
    probed = [
        p for p in programs if p.mode == "score" and plan_for(all_tasks()[p.task], "0" * 32) is not None
    ]
    good: dict[str, int] = dict.fromkeys((p.name for p in probed), 0)
    t0 = time.time()
    for k in range(seeds):
        seed = f"{k:08x}" * 4
        fn = get_reward_function("code-v5", RewardConfig())
        noise = NoiseConfig() if version is None else NoiseConfig(version=version)  # type: ignore[arg-type]
        evaluator = Evaluator(sandbox, fn, noise, probe_seed=seed)
        for p in probed:
            out = evaluator.evaluate(all_tasks()[p.task], p.code, backend=p.backends[0]).cli_json()  # type: ignore[arg-type]
            ok, actual = judge(p, out, 0, "")
            good[p.name] += ok
            if not ok:
                print(f"seed {seed} FAIL {p.name} ({p.kind}) {actual}", flush=True)
        print(f"[seed {k + 1}/{seeds} {time.time() - t0:5.0f}s]", flush=True)
    uneven = {name: n for name, n in good.items() if n < seeds}
    for p in probed:
        if p.name in uneven:
            print(f"{p.name} ({p.kind}, {p.family}): expected outcome on {good[p.name]}/{seeds} seeds")
    wrong = [p for p in probed if p.kind == "wrong"]
    correct = [p for p in probed if p.kind == "correct"]
    caught = sum(good[p.name] for p in wrong)
    kept = sum(good[p.name] for p in correct)
    print(
        f"\n{len(probed)} programs with a probe plan, {seeds} seeds: wrong programs caught "
        f"{caught}/{len(wrong) * seeds}, correct programs accepted {kept}/{len(correct) * seeds}"
    )
    return len(uneven)


def probe_cost(programs: list[Program], seeds: int, version: str | None = None) -> None:
    """The reference runs the probe makes for the tasks of ``programs`` under ``seeds`` fixed seeds (the
    seeds ``--probe-seeds`` uses), on each program's first backend: their number, how many timed out,
    and their total time."""
    from streams.noise.config import NoiseConfig
    from streams.probe.plan import plan_for
    from streams.reward.config import RewardConfig
    from streams.reward.evaluate import Evaluator
    from streams.reward.function import get_reward_function
    from streams.sandbox import Sandbox, SandboxConfig
    from tests.hacks.redteam.tasks import all_tasks

    sandbox = Sandbox(SandboxConfig())
    tasks = all_tasks()
    pairs = sorted(
        {
            (p.task, p.backends[0])
            for p in programs
            if p.mode == "score" and p.task and plan_for(tasks[p.task], "0" * 32) is not None
        }
    )
    runs = timed_out = 0
    seconds = 0.0
    for k in range(seeds):
        seed = f"{k:08x}" * 4
        fn = get_reward_function("code-v5", RewardConfig())
        noise = NoiseConfig() if version is None else NoiseConfig(version=version)  # type: ignore[arg-type]
        evaluator = Evaluator(sandbox, fn, noise, probe_seed=seed)
        for task_id, backend in pairs:
            task = tasks[task_id]
            first = evaluator.reference(task, backend)
            if first is None or first.infra_error:
                continue
            ref = evaluator.reference_probe(task, first.backend, seed)
            if ref is None:
                continue
            for run in (ref.execution, *ref.reruns, *ref.memoised):
                runs += 1
                timed_out += bool(run.timed_out)
                seconds += run.duration_s or 0.0
                if run.timed_out:
                    print(f"seed {seed} {task_id} timed out: {run.duration_s:.2f}s", flush=True)
    print(
        f"\n{len(pairs)} tasks, {seeds} seeds: {runs} reference probe runs, {timed_out} timed out, "
        f"{seconds:.1f}s in all"
    )


#: test_redteam's pinned probe seed
PINNED_SEED = "5eed" * 8


def relabel(programs: list[Program], old: str, seed: str = PINNED_SEED) -> int:
    """Judge each program with a probe plan under the newest filter and, on the very same runs, under
    ``old``; print those whose verdict or reasons' codes differ, and those the newest judges otherwise
    than their kind expects (``FAIL``). Returns how many verdicts differ."""
    from streams.noise.config import NoiseConfig, resumes_probes, retries_cut_calls
    from streams.noise.filter import decide
    from streams.probe.plan import plan_for
    from streams.reward.config import RewardConfig
    from streams.reward.evaluate import Evaluator
    from streams.reward.function import get_reward_function
    from streams.sandbox import Sandbox, SandboxConfig
    from tests.hacks.redteam.tasks import all_tasks

    newest, before = NoiseConfig(), NoiseConfig(version=old)  # type: ignore[arg-type]
    # the same runs judged twice: only where both versions make their runs alike
    made = (resumes_probes, retries_cut_calls)
    if any(how(newest) != how(before) for how in made):
        raise SystemExit(f"filter {old} makes its probe runs otherwise than {newest.version}")
    sandbox = Sandbox(SandboxConfig())
    fn = get_reward_function("code-v5", RewardConfig())
    evaluator = Evaluator(sandbox, fn, newest, probe_seed=seed)
    tasks = all_tasks()
    probed = [p for p in programs if p.mode == "score" and plan_for(tasks[p.task], "0" * 32) is not None]
    moved = relabelled = missed = 0
    t0 = time.time()
    for i, p in enumerate(probed):
        ev = evaluator.evaluate(tasks[p.task], p.code, backend=p.backends[0])  # type: ignore[arg-type]
        ok, actual = judge(p, ev.cli_json(), 0, "")
        if not ok:
            missed += 1
            print(f"FAIL {p.name} ({p.kind}) {actual}", flush=True)
        d = decide(
            task=tasks[p.task],
            code=p.code,
            executions=(ev.execution, *ev.reruns, *((ev.probe,) if ev.probe is not None else ())),
            config=before,
            options=fn.compare_options(),
            task_quality=ev.task_quality,
            probe_reference=ev.probe_reference,
        )
        was = sorted({r.code for r in d.reasons})
        now = sorted({r.code for r in ev.decision.reasons})
        if d.verdict != ev.decision.verdict:
            moved += 1
        if d.verdict != ev.decision.verdict or was != now:
            relabelled += 1
            print(
                f"CHANGED {p.name} ({p.kind}, {p.task}) {old} {d.verdict} {','.join(was)} -> "
                f"{newest.version} {ev.decision.verdict} {','.join(now)}",
                flush=True,
            )
        if (i + 1) % 50 == 0:
            print(f"[{i + 1}/{len(probed)} {time.time() - t0:5.0f}s]", flush=True)
    print(
        f"\n{len(probed)} programs with a probe plan, seed {seed}: {relabelled} judged otherwise under "
        f"{old} than {newest.version}, {moved} of them with another verdict; {missed} without their expected "
        f"outcome under {newest.version}"
    )
    return moved


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=Path("/tmp/redteam"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--family", nargs="*")
    ap.add_argument("--probe-seeds", type=int, default=0, help="judge under N fixed probe seeds (see above)")
    ap.add_argument("--probe-cost", type=int, default=0, help="the references' probe runs under N seeds")
    ap.add_argument(
        "--filter", help="with --probe-seeds or --probe-cost: this filter version (default: newest)"
    )
    ap.add_argument("--relabel", help="judge the same runs under this older filter version too (see above)")
    ap.add_argument("--seed", default=PINNED_SEED, help="with --relabel: the probe seed")
    args = ap.parse_args(argv)
    chosen = [
        p for p in [*PROGRAMS, HOST_COST] if p is not HOST_COST or (args.only and HOST_COST.name in args.only)
    ]
    chosen = [
        p
        for p in chosen
        if (not args.only or p.name in args.only) and (not args.family or p.family in args.family)
    ]
    if args.relabel:
        return 1 if relabel(chosen, args.relabel, args.seed) else 0
    if args.probe_cost > 0:
        probe_cost(chosen, args.probe_cost, args.filter)
        return 0
    if args.probe_seeds > 0:
        return 1 if seed_rates(chosen, args.probe_seeds, args.filter) else 0
    folder: Path = args.out
    (folder / "programs").mkdir(parents=True, exist_ok=True)
    write_tasks(folder / "tasks", {p.task for p in chosen if p.task})
    for p in chosen:
        (folder / "programs" / f"{p.name}.py").write_text(p.code, "utf-8")
    work = [(p, b) for p in chosen for b in p.backends]
    print(f"{len(chosen)} programs, {len(work)} runs", flush=True)
    t0 = time.time()
    results: list[Outcome] = []
    with ThreadPoolExecutor(args.jobs) as pool, (folder / "results.jsonl").open("a") as log:
        for i, o in enumerate(pool.map(lambda w: run_one(w[0], w[1], folder), work)):
            results.append(o)
            log.write(json.dumps(o.__dict__) + "\n")
            log.flush()
            mark = "ok  " if o.ok else "FAIL"
            print(
                f"[{i + 1}/{len(work)} {time.time() - t0:5.0f}s] {mark} {o.program} [{o.backend}] {o.actual}",
                flush=True,
            )
    failed = [o for o in results if not o.ok]
    print(f"\n{len(failed)} of {len(results)} runs got through")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
