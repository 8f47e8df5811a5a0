"""The GPU checks in one run and one table. ``bash scripts/gpu-check.sh`` installs the GPU environment
(infra/gpu) and what a run needs, then runs this inside it::

    infra/gpu/.venv/bin/python -m bench.gpu_check [--out build/gpu-check] [--quick]

Steps, each in a fresh process with its log under ``--out``:

1. ``tests/gpu``: the vLLM backend on the GPU - behaviour log-probs vs a teacher-forced recomputation,
   a live weight update, seeded repeats - and its arguments against the pinned vLLM;
2. ``bench.gpu_generate``: our backend vs plain ``vllm.LLM.generate``, tokens/s;
3. ``bench.gpu_learner``: the learner per ZeRO stage vs a plain torch loop, tokens/s;
4. ``rlstream run`` with the vLLM generator and the DeepSpeed learner on the GPU (SmolLM2, HumanEval),
   until the learner has published step 3 (the table shows the newest version samples were generated
   with: the generators load each published version through the vLLM weight update).

Writes ``table.md`` (printed at the end) and ``results.json`` to ``--out``; exits 1 when a step failed.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
#: the end-to-end run: a few learner steps, the generators following the published versions
RUN_STEPS = 3
RUN_ARGS = ["--tasks", "humaneval", "--limit", "8", "--model", "smollm2", "--group-size", "4"]
RUN_ENV = {
    "RLSTREAM_GENERATOR__BACKEND": "vllm",
    "RLSTREAM_GENERATOR__DEVICE": "cuda",
    "RLSTREAM_GENERATOR__DTYPE": "bfloat16",
    "RLSTREAM_GENERATOR__GPU_MEMORY_UTILIZATION": "0.4",
    # every batch is generated with the newest published version
    "RLSTREAM_GENERATOR__MAX_STALENESS": "0",
    "RLSTREAM_LEARNER__BACKEND": "deepspeed",
    "RLSTREAM_LEARNER__ACCELERATOR": "cuda",
    "RLSTREAM_LEARNER__PRECISION": "bf16",
}


@dataclass
class Step:
    name: str
    ok: bool = False
    seconds: float = 0.0
    log: str = ""
    error: str = ""
    data: dict[str, Any] = field(default_factory=dict)


def _run(
    step: Step, command: list[str], out: Path, timeout_s: float, env: dict[str, str] | None = None
) -> int:
    log = out / f"{step.name}.log"
    step.log = str(log)
    print(f"[gpu-check] {step.name}: {' '.join(command)} (log {log})", flush=True)
    started = time.monotonic()
    with log.open("wb") as handle:
        # a session of its own: on a timeout the step's children (vLLM engines, workers) go with it
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
            stdout=handle,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            rc = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = 124
            step.error = f"timed out after {timeout_s:.0f} s"
    step.seconds = time.monotonic() - started
    if rc != 0 and not step.error:
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        step.error = f"exit {rc}: " + " | ".join(line.strip() for line in tail)
    return rc


def _versions() -> dict[str, str]:
    found = {}
    for package in ("torch", "vllm", "deepspeed", "transformers"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "missing"
    return found


def environment() -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {"versions": _versions(), "cuda": torch.cuda.is_available()}
    if info["cuda"]:
        props = torch.cuda.get_device_properties(0)
        info.update(
            gpu=props.name,
            memory_gib=round(props.total_memory / (1 << 30), 1),
            capability=f"{props.major}.{props.minor}",
            torch_cuda=torch.version.cuda,
        )
    try:
        info["driver"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.split("\n")[0]
    except (OSError, subprocess.SubprocessError):
        info["driver"] = "unknown"
    return info


def gpu_tests(out: Path) -> Step:
    step = Step("tests")
    report = out / "tests.xml"
    # the tests record their measured gaps as properties, which the legacy junit family keeps
    junit = [f"--junitxml={report}", "-o", "junit_family=legacy"]
    rc = _run(
        step,
        [sys.executable, "-m", "pytest", "tests/gpu", "-q", "-p", "no:cacheprovider", *junit],
        out,
        timeout_s=1800,
    )
    cases: dict[str, dict[str, Any]] = {}
    if report.exists():
        for case in ET.parse(report).getroot().iter("testcase"):
            outcome = "passed"
            for tag in ("failure", "error", "skipped"):
                if case.find(tag) is not None:
                    outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[tag]
            props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
            cases[case.get("name", "?")] = {"outcome": outcome, **props}
    step.data = {"cases": cases}
    outcomes = [c["outcome"] for c in cases.values()]
    # skipped GPU tests mean vLLM or the GPU was not usable: that is a failure of this check
    step.ok = rc == 0 and bool(outcomes) and all(o == "passed" for o in outcomes)
    if rc == 0 and not step.ok:
        step.error = f"{outcomes.count('skipped')} of {len(outcomes)} tests skipped (see the log)"
    return step


def bench(name: str, module: str, args: list[str], out: Path) -> Step:
    step = Step(name)
    target = out / f"{name}.json"
    rc = _run(step, [sys.executable, "-m", module, *args, "--json", str(target)], out, timeout_s=1500)
    if rc == 0 and target.exists():
        step.data = json.loads(target.read_text())
        step.ok = True
    elif rc == 0:
        step.error = f"no results in {target}"
    return step


def pipeline_run(out: Path) -> Step:
    step = Step("run")
    rlstream = str(Path(sys.executable).with_name("rlstream"))
    broker_was_up = subprocess.run([rlstream, "broker", "status"], capture_output=True).returncode == 0
    try:
        rc = _run(
            step,
            [rlstream, "run", *RUN_ARGS, "--steps", str(RUN_STEPS), "--timeout", "1500", "--json"],
            out,
            timeout_s=1800,
            env=RUN_ENV,
        )
    finally:
        if not broker_was_up:
            subprocess.run([rlstream, "broker", "down"], capture_output=True)
    summary = _last_json(Path(step.log))
    if rc != 0 or summary is None:
        step.error = step.error or "no run summary in the log"
        return step
    step.data = summary
    problems = []
    if summary["learner_step"] < RUN_STEPS:
        problems.append(f"learner reached step {summary['learner_step']} of {RUN_STEPS}")
    if summary["dead_letters"]:
        problems.append(f"{summary['dead_letters']} dead letters")
    step.ok = not problems
    step.error = "; ".join(problems)
    return step


def _last_json(log: Path) -> dict[str, Any] | None:
    """The last line of the log that is a JSON object (``rlstream run --json`` prints its summary last)."""
    for line in reversed(log.read_text(errors="replace").splitlines()):
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(found, dict):
                return found
    return None


def _fmt(value: Any, spec: str = ".2e") -> str:
    try:
        return format(float(value), spec)
    except (TypeError, ValueError):
        return "-"


def table(env: dict[str, Any], steps: list[Step]) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items())
    lines = [
        f"GPU check of {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {env.get('gpu', 'no GPU')} "
        f"({env.get('memory_gib', '?')} GiB, compute {env.get('capability', '?')}, "
        f"driver {env.get('driver')}, CUDA {env.get('torch_cuda', '?')}); {versions}",
        "",
        "| check | result | baseline (same run) | ratio | status |",
        "|---|---|---|---|---|",
    ]

    def row(check: str, result: str, baseline: str = "", ratio: str = "", ok: bool = True) -> None:
        lines.append(f"| {check} | {result} | {baseline} | {ratio} | {'ok' if ok else 'FAILED'} |")

    by_name = {s.name: s for s in steps}
    tests = by_name["tests"]
    api: list[tuple[str, bool]] = []
    for name, case in tests.data.get("cases", {}).items():
        ok = case["outcome"] == "passed"
        if "max_gap" in case:
            result = (
                f"max abs gap {_fmt(case['max_gap'])}, mean {_fmt(case['mean_gap'])} nats over "
                f"{case.get('tokens', '?')} tokens, {case.get('boundary', 0)} at the top-p boundary"
            )
            baseline = (
                f"raw log-probs: mean gap {_fmt(case['mean_gap_to_raw'])}"
                if "mean_gap_to_raw" in case
                else ""
            )
            row(f"log-probs vs teacher-forced, {name.split('[')[-1].rstrip(']')}", result, baseline, ok=ok)
        elif "update_max_gap" in case:
            result = f"next request from the new weights: max abs gap {_fmt(case['update_max_gap'])}"
            baseline = f"old weights: mean gap {_fmt(case['update_mean_gap_to_old_weights'])}"
            row("live weight update (vLLM)", result, baseline, ok=ok)
        elif "same_share" in case:
            row("seeded requests repeat", f"{float(case['same_share']):.0%} of samples identical", ok=ok)
        else:
            api.append((name, ok))
    if api:
        broken = [name for name, ok in api if not ok]
        result = f"{len(api) - len(broken)} of {len(api)} passed" + "".join(f"; {n} FAILED" for n in broken)
        row("vLLM API checks (tests/gpu/test_vllm_api.py)", result, ok=not broken)
    if tests.error:
        row("tests/gpu", tests.error, ok=False)

    gen = by_name["generate"]
    if gen.ok:
        d = gen.data
        row(
            f"generation tokens/s ({d['model']} {d['dtype']}, {d['prompts']} prompts x "
            f"{d['samples_per_prompt']}, <= {d['max_tokens']} tokens)",
            f"ours {d['ours']['tokens_per_s']:,.0f} tokens/s",
            f"plain vllm.LLM.generate {d['plain']['tokens_per_s']:,.0f} tokens/s",
            f"{d['ratio']:.2f}x",
        )
        row(
            "weight reload (collective_rpc + reload_weights + prefix-cache reset)",
            f"{d['weight_reload_s']:.2f} s",
        )
    else:
        row("generation tokens/s vs plain vllm.LLM.generate", gen.error, ok=False)

    learn = by_name["learner"]
    if learn.ok:
        d = learn.data
        plain = d["plain"]
        shape = f"{d['size']}-class, {d['params_b']:.2f}B params, {d['rows']}x{d['seq']} tokens"
        for stage in d["stages"]:
            row(
                f"learner DeepSpeed ZeRO-{stage['zero_stage']} bf16 ({shape})",
                f"{stage['tokens_per_s']:,.0f} tokens/s, peak {stage['peak_gib']:.1f} GiB",
                f"plain torch loop {plain['tokens_per_s']:,.0f} tokens/s, peak {plain['peak_gib']:.1f} GiB",
                f"{stage['ratio']:.2f}x",
            )
    else:
        row("learner tokens/s per ZeRO stage vs a plain torch loop", learn.error, ok=False)

    run = by_name["run"]
    d = run.data
    check = f"rlstream run, vLLM generator + DeepSpeed learner ({' '.join(RUN_ARGS)} --steps {RUN_STEPS})"
    if d:
        result = (
            f"learner step {d['learner_step']}, policy v{d['policy_version']}, samples generated up to "
            f"v{d['generated_version']}; {d['generations']} samples ({d['samples_judged']} judged, "
            f"reward mean {d['reward_mean']:.3f}) in {d['seconds']:.0f} s, {d['dead_letters']} dead letters"
        )
        if not d["generated_version"]:
            result += " (the run stopped before a sample was generated under a published version)"
        row(check, result + (f" - {run.error}" if run.error else ""), ok=run.ok)
    else:
        row(check, run.error, ok=False)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "gpu-check")
    parser.add_argument("--quick", action="store_true", help="smaller benchmark workloads")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    env = environment()
    if not env["cuda"]:
        print(
            f"[gpu-check] torch {env['versions']['torch']} sees no GPU (driver {env['driver']}): this torch "
            "is built for CUDA 13 and needs an NVIDIA driver >= 580",
            file=sys.stderr,
        )
        sys.exit(1)
    models_dir = subprocess.run(
        [str(Path(sys.executable).with_name("rlstream")), "models", "dir"], capture_output=True, text=True
    ).stdout.strip()
    generate_args = ["--models-dir", models_dir]
    learner_args: list[str] = []
    if args.quick:
        generate_args += ["--prompts", "16", "--n", "4", "--max-tokens", "128", "--repeat", "2"]
        learner_args += ["--size", "0.5b", "--seq", "512", "--steps", "4", "--warmup", "2"]
    started = time.monotonic()
    steps = [
        gpu_tests(args.out),
        bench("generate", "bench.gpu_generate", generate_args, args.out),
        bench("learner", "bench.gpu_learner", learner_args, args.out),
        pipeline_run(args.out),
    ]
    text = table(env, steps)
    (args.out / "table.md").write_text(text + "\n")
    (args.out / "results.json").write_text(
        json.dumps({"environment": env, "steps": [vars(s) for s in steps]}, indent=2, default=str)
    )
    failed = [s.name for s in steps if not s.ok]
    print("\n" + text + "\n")
    took = time.monotonic() - started
    print(
        f"[gpu-check] {len(steps) - len(failed)} of {len(steps)} steps ok in {took:.0f} s"
        + (f"; failed: {', '.join(failed)} (logs in {args.out})" if failed else f"; results in {args.out}")
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
