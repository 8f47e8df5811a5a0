"""The tasks the red-team corpus runs against (``harness/redteam_tasks.py``: HumanEval, the synthetic
family and our own JSONL tasks), and the task files ``rlstream score`` reads for them."""

from __future__ import annotations

import json
from pathlib import Path

from harness.redteam_tasks import all_tasks as all_tasks


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
