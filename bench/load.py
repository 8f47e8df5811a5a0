"""Load: a backlog of N trivial tasks through every processor at once (scheduler, tiny-model generator,
sandbox, reward, filter, experience, learner), each its own process on a real broker: the command line of
:func:`harness.load.run_load`, whose module says what is measured and how.

    .venv/bin/python -m bench.load --tasks 10000 [--group-size 2] [--max-seconds S] [--out FILE.json]

The JSON is rewritten every ``--report-every`` seconds while the run is under way (``"finished":
false``), so a run stopped early still leaves its figures.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from bench.bus import broker
from harness.load import CACHE, run_load, summary_table


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=10_000)
    parser.add_argument("--group-size", type=int, default=2)
    parser.add_argument("--max-seconds", type=float, default=None, help="stop (and report) after this long")
    parser.add_argument("--window", type=float, default=60.0, help="seconds per throughput window")
    parser.add_argument("--sample-every", type=float, default=5.0, help="seconds between RSS/lag samples")
    parser.add_argument("--report-every", type=float, default=60.0, help="seconds between JSON rewrites")
    parser.add_argument("--out", type=Path, default=None, help="JSON file (default: load-<time>.json here)")
    parser.add_argument("--home", type=Path, default=None, help="RLSTREAM_HOME of the workers")
    parser.add_argument("--bootstrap", default=None, help="an existing cluster (default: own broker)")
    parser.add_argument("--jar-dir", type=Path, default=CACHE / "kafka")
    args = parser.parse_args()
    out: Path = args.out or Path(f"load-{time.strftime('%Y%m%d-%H%M%S')}.json")

    def write(result: dict[str, Any]) -> None:
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        tmp.replace(out)

    with broker(args.bootstrap, args.jar_dir) as bootstrap:
        result = run_load(
            bootstrap,
            args.tasks,
            group_size=args.group_size,
            home=args.home,
            max_seconds=args.max_seconds,
            sample_every_s=args.sample_every,
            window_s=args.window,
            report_every_s=args.report_every,
            on_report=write,
        )
    print(summary_table(result))
    print(f"written to {out}")


if __name__ == "__main__":
    main()
