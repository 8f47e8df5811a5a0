"""Every bench side by side in one run: one table (markdown + JSON) of rlstream against its baselines.

Each bench module exposes ``measure(...) -> dict`` and measures its own baseline in the same run; this
entry point runs them one after another (each in a fresh process, so one bench's threads, CUDA or
process-group state cannot leak into the next), on one shared throwaway broker, and writes:

    OUT/bench.md     the table: what was measured, rlstream's figure, the baseline's, the ratio
    OUT/bench.json   the same rows plus every bench's full result

    .venv/bin/python -m bench.run_all [--quick] [--repeat N] [--out DIR] [--only bus,sandbox,...]
                                      [--bootstrap HOST:PORT]

``--only ...,recovery`` adds the recovery bench (``bench.recovery``: faults injected into a whole run
on brokers of its own, minutes per repetition), which a run leaves out unless it is named.

``--quick`` shrinks every workload (a few minutes on 2 cores); the full run takes much longer. A
bench that fails is reported in the table with its error and the command exits 1.

A ratio measured once on a shared 2-core machine moves by 2x between runs, so a full run measures
every bench ``--repeat`` times (3 by default, 1 with ``--quick``), in rounds (every bench once, then
every bench again), each bench measuring its baseline beside its own figure every time: the table
gives the median ratio and its spread (lowest-highest), and the figures of the median repetition.
"""

from __future__ import annotations

import argparse
import inspect
import json
import multiprocessing
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CACHE = Path.home() / ".rlstream"


@dataclass(frozen=True)
class Row:
    bench: str
    measure: str
    ours: str
    baseline: str
    #: rlstream's figure over the baseline's (higher is better unless the row says it is a cost)
    ratio: float | None
    #: over repetitions: the lowest and highest ratio, and how many repetitions measured this row
    spread: tuple[float, float] | None = None
    repeats: int = 1


def combine(repetitions: list[list[Row]]) -> list[Row]:
    """One row per measure from a bench's repetitions (aligned by position: a bench lists its rows in
    one order): the median ratio with its spread, the figures of the repetition that gave the median.
    A repetition whose rows do not line up with the first's (another shape) is left out."""
    if not repetitions:
        return []
    first = repetitions[0]
    aligned = [r for r in repetitions if len(r) == len(first)]
    out: list[Row] = []
    for i, row in enumerate(first):
        measured = [r[i] for r in aligned if r[i].ratio is not None]
        if not measured:
            out.append(row)
            continue
        ordered = sorted(measured, key=lambda r: r.ratio or 0.0)
        median = ordered[(len(ordered) - 1) // 2]
        ratios = [r.ratio or 0.0 for r in ordered]
        if len(ordered) % 2 == 0:  # the mean of the middle two; the lower one's figures are shown
            mid = len(ordered) // 2
            ratio: float | None = round((ratios[mid - 1] + ratios[mid]) / 2, 3)
        else:
            ratio = median.ratio
        spread = (min(ratios), max(ratios)) if len(ordered) > 1 else None
        out.append(Row(row.bench, median.measure, median.ours, median.baseline, ratio, spread, len(ordered)))
    return out


def _call(fn: Callable[..., dict[str, Any]], **candidates: Any) -> dict[str, Any]:
    """Call ``fn`` with the candidate keyword arguments it accepts (benches name their knobs freely)."""
    accepted = inspect.signature(fn).parameters
    return fn(**{k: v for k, v in candidates.items() if k in accepted})


def _bus(quick: bool, bootstrap: str) -> dict[str, Any]:
    from bench.bus import measure

    return measure(count=3000 if quick else 20000, bootstrap=bootstrap)


def _sandbox(quick: bool, bootstrap: str) -> dict[str, Any]:
    from bench.sandbox import cpu_side_by_side, goals, measure

    limit, repeat, backends = (40, 1, "wasm,container") if quick else (None, 2, "wasm,container,auto")
    out = measure(workers=os.cpu_count() or 1, repeat=repeat, limit=limit, backends=backends)
    out["cpu"] = cpu_side_by_side(limit, repeat, backends)
    out["goals"] = goals(out["cpu"])
    return out


def _pipeline(quick: bool, bootstrap: str) -> dict[str, Any]:
    from bench.pipeline import measure

    return measure(samples=100 if quick else 200, bootstrap=bootstrap, trickle_samples=30 if quick else 100)


def _learner(quick: bool, bootstrap: str) -> dict[str, Any]:
    from bench.learner import measure

    if quick:
        return measure(stages="0", steps=3, warmup=1, hidden=128, layers=2)
    return measure()


def _reward(quick: bool, bootstrap: str) -> dict[str, Any]:
    from bench.reward import measure

    return measure(12 if quick else 40)


def _episodes(quick: bool, bootstrap: str) -> dict[str, Any]:
    from bench.episodes import measure

    if quick:
        return measure(20, model="tiny", models_dir=CACHE / "models")
    return measure(80, model="smollm2", models_dir=CACHE / "models")


def _generate(quick: bool, bootstrap: str) -> dict[str, Any]:
    from bench.generate import measure

    if quick:
        return measure(model="tiny", models_dir=CACHE / "models", prompts_n=4, max_tokens=16)
    return measure(model="smollm2", models_dir=CACHE / "models")


def _evaluation(quick: bool, bootstrap: str) -> dict[str, Any]:
    from bench.evaluation import measure

    if quick:
        return measure(model="tiny", models_dir=CACHE / "models", tasks=8, samples=8, max_tokens=16)
    return measure(model="smollm2", models_dir=CACHE / "models", tasks=8, samples=8, max_tokens=64)


def _replay(quick: bool, bootstrap: str) -> dict[str, Any]:
    import importlib

    module = importlib.import_module("bench.replay")
    n = 2000
    return _call(module.measure, bootstrap=bootstrap, samples=n, count=n, quick=quick)


def _projections(quick: bool, bootstrap: str) -> dict[str, Any]:
    import importlib

    module = importlib.import_module("bench.projections")
    return _call(module.measure, bootstrap=bootstrap, tasks=10 if quick else 40, epochs=4 if quick else 8)


def _runtimes(quick: bool, bootstrap: str) -> dict[str, Any]:
    from bench.runtimes import measure

    return measure(records=3000 if quick else 20000, samples=60 if quick else 200, bootstrap=bootstrap)


def _recovery(quick: bool, bootstrap: str) -> dict[str, Any]:
    from bench.recovery import DEFAULT_FAULTS, measure

    # clusters of its own whatever ``bootstrap`` is: one of its faults kills the broker
    return measure(("generator", "learner") if quick else DEFAULT_FAULTS)


BENCHES: dict[str, tuple[str, Callable[[bool, str], dict[str, Any]]]] = {
    "bus": ("bus codec vs raw client", _bus),
    "sandbox": ("sandbox vs plain subprocess", _sandbox),
    "pipeline": ("pipeline vs sandbox alone", _pipeline),
    "learner": ("learner vs plain torch", _learner),
    "reward": ("reward + filter vs the sandbox run", _reward),
    "episodes": ("episode feedback hop vs the sandbox run", _episodes),
    "generate": ("generator vs model.generate", _generate),
    "evaluation": ("evaluation round vs training round", _evaluation),
    "replay": ("replay vs raw consume", _replay),
    "projections": ("projector vs raw consume", _projections),
    "runtimes": ("runtimes: Faust vs Kafka transactions", _runtimes),
    "recovery": ("recovery from faults vs issue 24's goals", _recovery),
}
#: benches that run only when named in ``--only`` (minutes each, and they start brokers of their own)
ON_REQUEST = ("recovery",)


def _run_one(name: str, quick: bool, bootstrap: str) -> dict[str, Any]:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    try:
        return BENCHES[name][1](quick, bootstrap)
    except BaseException as exc:  # client exceptions do not pickle: send the text back
        raise RuntimeError("".join(traceback.format_exception(exc))) from None


# -- the table ---------------------------------------------------------------------------------------
def _n(x: float, unit: str) -> str:
    return f"{x:,.0f} {unit}" if x >= 100 else f"{x:.3g} {unit}"


def _p50_p99(d: dict[str, Any], key: str) -> str:
    return f"{d[key + '_p50_s'] * 1000:.0f} ms / {d[key + '_p99_s'] * 1000:.0f} ms"


def rows_for(name: str, r: dict[str, Any]) -> list[Row]:
    title = BENCHES[name][0]
    out: list[Row] = []
    if name == "bus":
        for way in ("produce", "consume"):
            out.append(
                Row(
                    title,
                    f"{way}, events/s ({r['events']} events of {r['event_bytes']} B)",
                    _n(r[f"ours_{way}_per_s"], "/s"),
                    f"raw confluent-kafka bytes {_n(r[f'raw_{way}_per_s'], '/s')}",
                    r[f"ratio_{way}"],
                )
            )
    elif name == "sandbox":
        base = f"python3 -I subprocess {_n(r['baseline_per_s'], '/s')}"
        for backend, b in r["backends"].items():
            out.append(
                Row(
                    title,
                    f"{backend} executions/s ({b['passed']}/{r['executions']} passed)",
                    _n(b["per_s"], "/s"),
                    base,
                    b["ratio"],
                )
            )
        if "cached_wasm" in r:
            c = r["cached_wasm"]
            out.append(Row(title, "wasm, result cache hits", _n(c["per_s"], "/s"), base, c["ratio"]))
        for mode, m in r.get("cpu", {}).get("modes", {}).items():
            cpu_base = f"python3 -I {m['baseline']['ms']:.1f} ms"
            for backend, b in m.items():
                if backend in ("executions", "baseline"):
                    continue
                what = {"check": "check mode", "cases": "case mode", "empty": "an empty program"}[mode]
                label = f"{backend}, CPU per execution, {what}"
                out.append(Row(title, label, f"{b['ms']:.1f} ms", cpu_base, b["ratio"]))
        for what, got, want, met in r.get("goals", []):
            verdict = f"{got:.2f} ({'met' if met else 'not met'})"
            out.append(Row(title, f"goal: {what}", verdict, f"{want:g}", None))
    elif name == "pipeline":
        out.append(
            Row(
                title,
                f"samples/s, generation -> verdict ({r['samples']} samples, {r.get('layout', 'split')})",
                _n(r["pipeline_samples_per_s"], "/s"),
                f"sandbox pool alone {_n(r['sandbox_only_per_s'], '/s')}",
                r["ratio_pipeline_to_sandbox"],
            )
        )
        if "ratio_pipeline_to_same_work" in r:
            out.append(
                Row(
                    title,
                    "samples/s, against the sandbox alone doing the same sandbox work (probe runs included)",
                    _n(r["pipeline_samples_per_s"], "/s"),
                    f"sandbox pool alone {_n(r['sandbox_same_work_per_s'], '/s')}",
                    r["ratio_pipeline_to_same_work"],
                )
            )
        for layout in ("split", "shared"):
            if layout in r and layout != r.get("layout"):
                out.append(
                    Row(
                        title,
                        f"samples/s, {layout} layout",
                        _n(r[layout]["samples_per_s"], "/s"),
                        f"sandbox pool alone {_n(r['sandbox_only_per_s'], '/s')}",
                        r[layout]["ratio_to_sandbox"],
                    )
                )
        out.append(
            Row(
                title,
                "latency generation -> verdict p50 / p99",
                f"{r['latency_p50_s']:.2f} s / {r['latency_p99_s']:.2f} s",
                "",
                None,
            )
        )
        low = r.get("low_load")
        if low:
            got, goal = low[low["layout"]], low["goal"]

            out.append(
                Row(
                    title,
                    f"low load ({low['samples']} samples one at a time): generation -> verdict p50 / p99, "
                    "p99 (cost)",
                    _p50_p99(got, "latency"),
                    f"sandbox alone {_p50_p99(low, 'sandbox')}",
                    round(got["latency_p99_s"] / low["sandbox_p99_s"], 2),
                )
            )
            verdict = f"{goal['got_s'] * 1000:.0f} ms ({'met' if goal['met'] else 'not met'})"
            out.append(Row(title, f"goal: {goal['what']}", verdict, f"{goal['limit_s'] * 1000:.0f} ms", None))
    elif name == "learner":
        base = f"plain torch loop {_n(r['plain_torch_tokens_per_s'], 'tok/s')}"
        for label, e in r["engines"].items():
            out.append(Row(title, f"{label}, tokens/s", _n(e["tokens_per_s"], "tok/s"), base, e["ratio"]))
    elif name == "reward":
        ms, ratio = r["ms_per_sample"], r["ratio_to_sandbox"]
        base = f"sandbox run {ms['sandbox (baseline)']:.1f} ms"
        for step in ("probe run", "reward code-v3", "reward, batched lint", "noise filter"):
            out.append(Row(title, f"{step}, ms per sample (cost)", f"{ms[step]:.2f} ms", base, ratio[step]))
        out.append(
            Row(
                title,
                f"hack recall / false-reject rate ({r['tasks']} tasks, adversarial corpus)",
                f"{100 * r['hack_recall']:.1f}% / {100 * r['false_reject_rate']:.1f}%",
                f"{r['wrong_programs']} wrong, {r['correct_programs']} correct programs",
                None,
            )
        )
    elif name == "episodes":
        ms, ratio = r["ms_per_turn"], r["ratio_to_sandbox"]
        base = f"sandbox run {ms['sandbox (baseline)']:.1f} ms"
        for step in (
            "end of turn + feedback",
            "TurnEnded through the codec",
            "feedback into the next prompt",
            "feedback hop in all",
        ):
            out.append(Row(title, f"{step}, ms per turn (cost)", f"{ms[step]:.2f} ms", base, ratio[step]))
    elif name == "generate":
        out.append(
            Row(
                title,
                f"tokens/s with behaviour log-probs ({r['model']})",
                _n(r["ours_tokens_per_s"], "tok/s"),
                f"model.generate {_n(r['plain_generate_tokens_per_s'], 'tok/s')}",
                r["ratio"],
            )
        )
    elif name == "evaluation":
        out.append(
            Row(
                title,
                f"seconds per round of {r['tasks']} tasks x {r['samples']} samples ({r['model']}, cost)",
                f"{r['eval_round_s']:.2f} s",
                f"training round {r['train_round_s']:.2f} s",
                r["ratio"],
            )
        )
    elif name == "replay" and "ratio_replay" in r:
        base = f"raw consume {_n(r['raw_consume_per_s'], '/s')}"
        out.append(
            Row(
                title,
                f"replay, events/s ({r['samples']} samples)",
                _n(r["replay_per_s"], "/s"),
                base,
                r["ratio_replay"],
            )
        )
        out.append(
            Row(
                title,
                "replay --verify (re-score + re-judge), executions/s",
                _n(r["verify_per_s"], "/s"),
                base,
                r["ratio_verify"],
            )
        )
    elif name == "projections" and "ratio_sqlite" in r:
        base = f"raw read_committed consume + decode {_n(r['raw_per_s'], '/s')}"
        for db, label in (("sqlite", "SQLite"), ("postgresql", "PostgreSQL")):
            out.append(
                Row(
                    title,
                    f"projector into {label}, events/s ({r['events']} events)",
                    _n(r[f"{db}_per_s"], "/s"),
                    base,
                    r[f"ratio_{db}"],
                )
            )
    elif name == "runtimes":
        out.extend(_runtime_rows(title, r))
    elif name == "recovery":
        for goal in r["goals"]:
            got = goal["seconds"]
            out.append(
                Row(
                    title,
                    f"{goal['fault']}: {goal['figure']}",
                    "not seen" if got is None else f"{got:.1f} s",
                    f"goal <= {goal['limit_s']:g} s ({'met' if goal['met'] else 'not met'})",
                    None,
                )
            )
    else:  # benches whose result shape this table does not know: every ratio they report
        for key, value in r.items():
            if "ratio" in key and isinstance(value, int | float):
                out.append(Row(title, key, "", "", float(value)))
    return out


def _runtime_rows(title: str, r: dict[str, Any]) -> list[Row]:
    """Per runtime: pass-through records/s (against the transactional runtime), duplicates and losses a
    read_committed reader sees after two SIGKILLs, and pipeline samples/s."""
    out: list[Row] = []
    runtimes = r["runtimes"]
    base = runtimes.get("transactional", {})

    def figure(f: dict[str, Any], key: str, unit: str) -> str:
        value = f.get(key)
        return _n(value, unit) if isinstance(value, int | float) else f"FAILED: {f.get('error', '?')}"

    base_rate = figure(base.get("passthrough", {}), "records_per_s", "/s")
    base_pipe = base.get("pipeline", {})
    for label, f in runtimes.items():
        thru, kills, pipe = f.get("passthrough", {}), f.get("after_sigkill", {}), f.get("pipeline", {})
        out.append(
            Row(
                title,
                f"{label}: pass-through records/s ({r['records']} records, batches of 500)",
                figure(thru, "records_per_s", "/s"),
                f"transactional {base_rate}",
                f.get("ratio_to_transactional"),
            )
        )
        lost = kills.get("lost")
        out.append(
            Row(
                title,
                f"{label}: after 2x SIGKILL, duplicates / lost seen read_committed",
                f"{kills['duplicates']} / {lost}"
                if "duplicates" in kills
                else f"FAILED: {kills.get('error')}",
                "",
                None,
            )
        )
        rate, base_rate_pipe = pipe.get("samples_per_s"), base_pipe.get("samples_per_s")
        out.append(
            Row(
                title,
                f"{label}: pipeline samples/s, generation -> verdict ({r['samples']} samples)",
                figure(pipe, "samples_per_s", "/s"),
                f"transactional {figure(base_pipe, 'samples_per_s', '/s')}",
                round(rate / base_rate_pipe, 3) if rate and base_rate_pipe else None,
            )
        )
    return out


def markdown(rows: list[Row], failures: dict[str, str], header: str) -> str:
    lines = [header, "", "| bench | measure | rlstream | baseline (same run) | ratio |"]
    lines.append("|---|---|---|---|---|")
    for row in rows:
        ratio = "" if row.ratio is None else f"{row.ratio:.2f}×"
        if row.spread is not None:
            ratio += f" ({row.spread[0]:.2f}–{row.spread[1]:.2f}, {row.repeats} runs)"
        lines.append(f"| {row.bench} | {row.measure} | {row.ours} | {row.baseline} | {ratio} |")
    for name, error in failures.items():
        lines.append(f"| {BENCHES[name][0]} | FAILED: {error.splitlines()[-1][:200]} | | | |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small workloads (a few minutes)")
    ap.add_argument("--out", type=Path, default=Path("build") / "bench", help="where the table goes")
    ap.add_argument(
        "--only",
        default=",".join(n for n in BENCHES if n not in ON_REQUEST),
        help="subset of: "
        + ", ".join(BENCHES)
        + f" (default: all but {', '.join(ON_REQUEST)}, which run only when named)",
    )
    ap.add_argument(
        "--repeat", type=int, default=None, help="measurements per bench (default 3; 1 with --quick)"
    )
    ap.add_argument("--bootstrap", default=None, help="an existing cluster (default: a local broker)")
    ap.add_argument("--jar-dir", type=Path, default=CACHE / "kafka")
    args = ap.parse_args()
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        ap.error(f"unknown bench(es) {', '.join(unknown)}; known: {', '.join(BENCHES)}")
    repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    if repeat < 1:
        ap.error(f"--repeat must be at least 1, not {repeat}")

    from bench.bus import broker

    started = datetime.now(UTC)
    results: dict[str, dict[str, Any]] = {}
    failures: dict[str, str] = {}
    measured: dict[str, list[list[Row]]] = {name: [] for name in names}
    spawn = multiprocessing.get_context("spawn")
    with broker(args.bootstrap, args.jar_dir) as bootstrap:
        for round_ in range(1, repeat + 1):
            for name in names:
                if name in failures:
                    continue  # a bench that failed once is reported failed, not measured again
                what = f" (round {round_} of {repeat})" if repeat > 1 else ""
                print(f"== {name}: {BENCHES[name][0]}{what}", flush=True)
                t0 = time.perf_counter()
                entry = results.setdefault(name, {"repetitions": []})
                try:
                    with ProcessPoolExecutor(1, mp_context=spawn) as pool:
                        result = pool.submit(_run_one, name, args.quick, bootstrap).result()
                    measured[name].append(rows_for(name, result))
                    entry["repetitions"].append(
                        {"result": result, "seconds": round(time.perf_counter() - t0, 1)}
                    )
                except Exception as exc:  # one failing bench must not cost the others' figures
                    failures[name] = str(exc).strip() or type(exc).__name__
                    entry["error"] = failures[name]
                    print(f"   {name} FAILED: {failures[name]}", flush=True)
    rows = [row for name in names if name not in failures for row in combine(measured[name])]

    load = os.getloadavg()[0]
    header = (
        f"rlstream benchmarks, {'quick' if args.quick else 'full'} run of {started:%Y-%m-%d %H:%M} UTC on "
        f"{os.cpu_count()} CPUs (load average {load:.1f}), Python {platform.python_version()}, each bench "
        f"measured {repeat} time(s). Reproduce: `python -m bench.run_all{' --quick' if args.quick else ''}"
        f"{f' --repeat {repeat}' if args.repeat is not None else ''}`"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    table = markdown(rows, failures, header)
    (args.out / "bench.md").write_text(table)
    (args.out / "bench.json").write_text(
        json.dumps(
            {
                "started": started.isoformat(),
                "quick": args.quick,
                "repeat": repeat,
                "cpus": os.cpu_count(),
                "load_average": load,
                "command": " ".join([Path(sys.executable).name, "-m", "bench.run_all", *sys.argv[1:]]),
                "rows": [asdict(r) for r in rows],
                "benches": results,
            },
            indent=2,
            default=str,
        )
    )
    print(table)
    print(f"written: {args.out / 'bench.md'}, {args.out / 'bench.json'}")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
