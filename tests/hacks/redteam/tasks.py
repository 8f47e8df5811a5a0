"""The tasks the red-team corpus runs against: HumanEval (case and check mode), the synthetic family,
and a few JSONL tasks of our own (``tasks.jsonl``) that reach comparer edges HumanEval never does
(integers past a float's precision, NaN, sets, bytes, a 600 KB result, deep recursion)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from producers.ingest.humaneval import humaneval_tasks
from producers.ingest.jsonl import parse_line
from producers.ingest.synthetic import synthetic_tasks
from schemas.task import TaskPublished

HERE = Path(__file__).parent


@lru_cache(maxsize=1)
def all_tasks() -> dict[str, TaskPublished]:
    tasks: dict[str, TaskPublished] = {t.task_id: t for t in humaneval_tasks()}
    tasks.update({t.task_id: t for t in synthetic_tasks()})
    for line in (HERE / "tasks.jsonl").read_text("utf-8").splitlines():
        if line.strip():
            t = parse_line(line)
            tasks[t.task_id] = t
    return tasks


def task_file_name(task_id: str) -> str:
    return task_id.replace("/", "_") + ".json"


def write_tasks(folder: Path, task_ids: set[str]) -> dict[str, Path]:
    """One TASK.json per task (what ``rlstream score --task`` reads)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = {}
    for tid in sorted(task_ids):
        path = folder / task_file_name(tid)
        path.write_text(json.dumps(json.loads(all_tasks()[tid].model_dump_json())), "utf-8")
        out[tid] = path
    return out
