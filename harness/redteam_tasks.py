"""The tasks the red-team corpus runs against: HumanEval (case and check mode), the synthetic family,
and a few JSONL tasks of our own (``redteam_tasks.jsonl``) that reach comparer edges HumanEval never does
(integers past a float's precision, NaN, sets, bytes, a 600 KB result, deep recursion). Here, not in
``tests``, because the benches measure on them too."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from producers.ingest.humaneval import humaneval_tasks
from producers.ingest.jsonl import parse_line
from producers.ingest.synthetic import synthetic_tasks
from schemas.task import TaskPublished

TASKS_JSONL = Path(__file__).parent / "redteam_tasks.jsonl"


@lru_cache(maxsize=1)
def all_tasks() -> dict[str, TaskPublished]:
    tasks: dict[str, TaskPublished] = {t.task_id: t for t in humaneval_tasks()}
    tasks.update({t.task_id: t for t in synthetic_tasks()})
    for line in TASKS_JSONL.read_text("utf-8").splitlines():
        if line.strip():
            t = parse_line(line)
            tasks[t.task_id] = t
    return tasks
