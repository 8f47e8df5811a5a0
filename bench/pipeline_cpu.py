"""CPU per sample of each processor of ``bench.pipeline``'s flood (the trivial program, split layout), for
this tree and an earlier revision's, run after run alternating, so a change's effect on the processes'
own CPU shows beside the machine's load.

Each processor's own CPU (user + system of its process, all its threads; not its children, the sandbox
pool's and the reference runner's guests) is read from ``/proc/<pid>/stat`` right before the timed samples are
published and right after their last verdict, over the timed samples only (the warm-up group first).
The earlier revision runs from a detached checkout of it (``git worktree add --detach``, made here under
``--trees`` and removed at the end): the processors are started with that tree first on ``PYTHONPATH``.
With ``--profile DIR`` each processor of this tree runs under the profiler (each thread's CPU) and writes
``DIR/<name>.prof`` (its main thread) and ``DIR/<name>.threads.prof`` (its other threads: the pools',
the reference runner's, the transactional calls'); the profiler inflates Python: the shares matter.
It inflates fine-grained code most (the filter's judging ~17x, a thread's start not at all), so its
shares mislead; ``--sample DIR`` instead looks at every thread's stack every 2 ms and charges it the CPU
that thread used since the last look (``DIR/<name>.stacks``: one line per stack, ``frame;frame... us``;
the look costs ~2 ms per sample of each process). A thread caught waiting is charged the CPU it used
just before: a wait's share is the work before it.

    .venv/bin/python -m bench.pipeline_cpu [--rev REV] [--samples N] [--rounds R]
        [--profile DIR | --sample DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from statistics import median
from typing import Any

from bench import pipeline as bp
from bench.bus import broker
from bench.revision import ROOT

NAMES = ("sandbox", "reward", "filter")


@contextmanager
def _tree(rev: str | None, folder: Path) -> Iterator[Path]:
    """This tree, or a detached checkout of ``rev`` (removed on exit)."""
    if rev is None:
        yield ROOT
        return
    path = folder / f"rev-{rev}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), rev], check=True)
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(path)], check=False)


def _cpu(pid: int) -> float:
    """User + system CPU seconds of the process (all its threads; not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _threads(pid: int) -> dict[str, float]:
    """CPU seconds of the process's live threads, by name with its digits left out (``rdk:broker1`` and
    ``rdk:broker2`` together); a thread that ended (each transactional call's) is in no entry."""
    out: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            name = "".join(c for c in (task / "comm").read_text().strip() if not c.isdigit())
        except OSError:  # ended meanwhile
            continue
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        out[name] = out.get(name, 0.0) + cpu
    return out


def profiled(out: str, argv: list[str]) -> None:
    """Run ``rlstream`` with ``argv`` under the profiler, each thread's CPU (``time.thread_time``)
    profiled: the main thread's into ``<out>.prof``, every other thread's (the pools' threads, the
    reference runner's, the transactional calls') into ``<out>.threads.prof``. The worker leaves by
    ``os._exit`` after running the exit handlers: the profiles are written by one."""
    import atexit
    import cProfile
    import pstats
    import runpy
    import threading
    import time

    main = cProfile.Profile(time.thread_time)
    others: list[cProfile.Profile] = []
    bootstrap = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]

    def inner(self: threading.Thread) -> None:
        prof = cProfile.Profile(time.thread_time)
        others.append(prof)
        prof.enable()
        try:
            bootstrap(self)
        finally:
            prof.disable()

    def dump() -> None:
        main.disable()
        main.dump_stats(f"{out}.prof")
        stats: pstats.Stats | None = None
        for prof in list(others):
            prof.create_stats()
            if getattr(prof, "stats", None):
                stats = pstats.Stats(prof) if stats is None else stats.add(prof)
        if stats is not None:
            stats.dump_stats(f"{out}.threads.prof")

    threading.Thread._bootstrap_inner = inner  # type: ignore[attr-defined]
    atexit.register(dump)
    sys.argv = ["rlstream", *argv]
    main.enable()
    runpy.run_module("rlstream.cli", run_name="__main__")


def sampled(out: str, argv: list[str], period_s: float = 0.002) -> None:
    """Run ``rlstream`` with ``argv``, a thread of its own charging each other thread's stack with the
    CPU that thread used since the last look (``time.pthread_getcpuclockid``), every ``period_s``;
    written to ``<out>.stacks`` by an exit handler."""
    import atexit
    import collections
    import runpy
    import threading
    import time

    used: dict[str, float] = collections.defaultdict(float)
    clocks: dict[int, float] = {}

    def look() -> None:
        me = threading.get_ident()
        main = threading.main_thread().ident
        while True:
            time.sleep(period_s)
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                try:
                    now = time.clock_gettime(time.pthread_getcpuclockid(ident))
                except OSError:  # ended meanwhile
                    continue
                before, clocks[ident] = clocks.get(ident), now
                if before is None or now <= before:
                    continue
                names = []
                at: Any = frame
                while at is not None:
                    code = at.f_code
                    names.append(f"{code.co_filename.rsplit('/', 2)[-1]}:{code.co_name}")
                    at = at.f_back
                names.append("main" if ident == main else "thread")
                used[";".join(reversed(names))] += now - before

    def dump() -> None:
        with open(f"{out}.stacks", "w") as f:
            f.writelines(f"{stack} {1e6 * s:.0f}\n" for stack, s in used.items())

    threading.Thread(target=look, name="stack-sampler", daemon=True).start()
    atexit.register(dump)
    sys.argv = ["rlstream", *argv]
    runpy.run_module("rlstream.cli", run_name="__main__")


def one_run(
    server: str, tree: Path, samples: int, workers: int, profile: Path | None, how: str = "profiled"
) -> dict[str, float]:
    """Own CPU (ms) per timed sample of each processor, and the samples/s of the run."""
    env = {"PYTHONPATH": str(tree)}
    popen = subprocess.Popen
    started: dict[str, int] = {}

    def spawn(cmd: list[str], **kw: Any) -> subprocess.Popen[bytes]:
        name = cmd[-1]
        if profile is not None:
            boot = f"from bench.pipeline_cpu import {how}; {how}({str(profile / name)!r}, {cmd[3:]!r})"
            cmd = [cmd[0], "-c", boot]
        # run from the tree: ``python -m`` puts the working directory first on the path, before
        # PYTHONPATH, so a processor started from this checkout imported this tree's modules whatever
        # revision PYTHONPATH named (the earlier revision's runs were this tree's)
        p = popen(cmd, cwd=str(tree), **kw)
        started[name] = p.pid
        return p

    subprocess.Popen = spawn  # type: ignore[assignment, misc]
    try:
        with bp._processors(server, workers, env, "split") as run_id:
            bp._publish_and_wait(server, run_id, "warm", 8, timeout_s=600)
            before = {n: _cpu(started[n]) for n in NAMES}
            threads_before = {n: _threads(started[n]) for n in NAMES}
            _, elapsed = bp._publish_and_wait(server, run_id, "timed", samples, timeout_s=1200)
            after = {n: _cpu(started[n]) for n in NAMES}
            threads_after = {n: _threads(started[n]) for n in NAMES}
    finally:
        subprocess.Popen = popen  # type: ignore[misc]
    out = {n: 1000 * (after[n] - before[n]) / samples for n in NAMES}
    # each process's own CPU by thread (ms per sample; "ended": threads gone by the end, e.g. the
    # bounded transactional calls'), the busiest first
    for n in NAMES:
        by_thread = {
            name: 1000 * (cpu - threads_before[n].get(name, 0.0)) / samples
            for name, cpu in threads_after[n].items()
        }
        by_thread["ended"] = out[n] - sum(by_thread.values())
        for name, ms in sorted(by_thread.items(), key=lambda kv: -kv[1])[:6]:
            out[f"{n}/{name}"] = ms
    out["own"] = sum(out[n] for n in NAMES)
    out["samples_per_s"] = samples / elapsed
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rev", default=None, help="an earlier revision to alternate with (none: this tree)")
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--profile", type=Path, default=None, help="profile this tree's processors into DIR")
    parser.add_argument(
        "--sample", type=Path, default=None, help="sample this tree's processors' stacks into DIR"
    )
    parser.add_argument("--bootstrap", default=None)
    parser.add_argument("--trees", type=Path, default=Path(tempfile.gettempdir()))
    args = parser.parse_args()
    how = "sampled" if args.sample is not None else "profiled"
    args.profile = args.sample if args.sample is not None else args.profile
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
    results: dict[str, list[dict[str, float]]] = {"after": [], "before": []}
    with broker(args.bootstrap, bp.CACHE / "kafka") as server, _tree(args.rev, args.trees) as base:
        for r in range(args.rounds):
            # the order alternates round by round, so a trend in the machine's load falls on both
            sides = [("after", ROOT), ("before", base)] if args.rev else [("after", ROOT)]
            for side, tree in sides if r % 2 == 0 else sides[::-1]:
                got = one_run(
                    server, tree, args.samples, args.workers, args.profile if side == "after" else None, how
                )
                got["load_1m"] = os.getloadavg()[0]
                results[side].append(got)
                print(side, json.dumps({k: round(v, 2) for k, v in got.items()}), file=sys.stderr, flush=True)
    summary = {
        side: {k: round(median(x.get(k, 0.0) for x in runs), 2) for k in runs[0]}
        for side, runs in results.items()
        if runs
    }
    print(json.dumps({"rounds": results, "median": summary}, indent=1))


if __name__ == "__main__":
    main()
