"""The container jail against an earlier revision of itself, job by job in one process.

Loads ``streams/sandbox/container.py`` and ``cgroups.py`` as they are at a git revision beside this
tree's, then runs the empty program (one case) on each alternately and prints the CPU per execution
of this process (the host side) and of the reaped jails, and the wall time. Interleaving job by job
puts the machine's load on both sides alike; two separate runs minutes apart on shared cores differ
by more than the change being measured.

    .venv/bin/python -m bench.jail_ab [--rev main] [--rounds 250]
    .venv/bin/python -m bench.jail_ab --fork-server [--rounds 250]

``--fork-server`` compares this tree's two container modes instead: a jail per execution against the
fork server (``SandboxConfig.container_fork_server``), whose executions are not this process's
children: their CPU is read from the server's jail (its own and its reaped keepers', ``/proc``).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.revision import ROOT, load_at


def _usage() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", default="main", help="the revision to compare against")
    ap.add_argument("--rounds", type=int, default=250)
    ap.add_argument("--fork-server", action="store_true", help="a jail each vs the fork server")
    args = ap.parse_args()

    from bench.sandbox import EMPTY_PROGRAM
    from streams.sandbox import Job, Limits, Sandbox, SandboxConfig

    # this tree's jail each (the fork server, the default, is the --fork-server side)
    sandbox = Sandbox(SandboxConfig(container_fork_server=False))
    now = sandbox.container()
    sides: dict[str, Any]
    if args.fork_server:
        from streams.sandbox.container import ContainerBackend

        forks = ContainerBackend(
            python=now.python, require_cgroup=now.require_cgroup, site=now.site, fork_server=True
        )
        sides = {"a jail each": now, "fork server": forks}
    else:
        with tempfile.TemporaryDirectory() as folder:
            here = Path(folder)
            old = load_at("rlstream_jail_then", args.rev, "streams/sandbox/container.py", here)
            old.cgroups = load_at(  # type: ignore[attr-defined]
                "rlstream_cgroups_then", args.rev, "streams/sandbox/cgroups.py", here
            )
        then = old.ContainerBackend(python=now.python, require_cgroup=now.require_cgroup, site=now.site)
        sides = {args.rev: then, "this tree": now}
    limits = Limits(timeout_s=10.0, memory_mb=512)
    job = Job(mode="cases", code=EMPTY_PROGRAM, entry_point="f", inputs=("()",), limits=limits)
    spent = {side: [0.0, 0.0, 0.0] for side in sides}

    def server_cpu(backend: Any) -> float:
        server = getattr(backend, "server", None)
        return server.cpu() if server is not None else 0.0

    for rnd in range(args.rounds + 3):
        for side, backend in sides.items():
            sandbox._container = backend
            host0, jail0 = _usage()
            jail0 += server_cpu(backend)
            wall0 = time.perf_counter()
            result = sandbox.execute(job, "container")
            wall1 = time.perf_counter()
            host1, jail1 = _usage()
            jail1 += server_cpu(backend)
            if result.infra_error or not result.cases or result.cases[0].status != "ok":
                print(f"{side}: the execution failed: {result}", file=sys.stderr)
                return 1
            if rnd >= 3:  # the first rounds warm both sides up
                acc = spent[side]
                acc[0] += host1 - host0
                acc[1] += jail1 - jail0
                acc[2] += wall1 - wall0
    load = " ".join(Path("/proc/loadavg").read_text().split()[:3])
    print(f"the empty program on the container, {args.rounds} rounds job by job, load average {load}")
    if args.fork_server:
        print("  (fork server: jail = the server's own CPU and its reaped keepers'; its start is in round 1)")
    for side, (host, jail, wall) in spent.items():
        n = args.rounds
        print(
            f"  {side:>10}: host {1000 * host / n:6.2f} ms  jail {1000 * jail / n:6.2f} ms  "
            f"CPU {1000 * (host + jail) / n:6.2f} ms  wall {1000 * wall / n:6.2f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
