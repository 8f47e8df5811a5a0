"""`rlstream tasks publish` and `rlstream replay` against the real broker."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from infra.kafka.replay import replay
from producers.ingest.humaneval import humaneval_tasks
from producers.ingest.library import library_tasks
from schemas.task import TaskPublished
from tests.cli_support import run_cli


def _skip(msg: object, exc: Exception) -> None:
    """Other tests put garbage on the shared rl.tasks (to test dead-lettering): not ours to judge."""


def cli(bootstrap: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, bootstrap=bootstrap)


def test_all_164_humaneval_tasks_publish_and_read_back(kafka_catalog: str):
    done = cli(kafka_catalog, "tasks", "publish", "--humaneval", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["published"] == 164
    expected = {t.task_id: t for t in humaneval_tasks()}
    seen = {
        e.event.task_id: e.event
        for e in replay(kafka_catalog, "rl.tasks", on_undecodable=_skip)
        if isinstance(e.event, TaskPublished)
    }
    for task_id, task in expected.items():
        assert seen[task_id] == task


def test_a_bad_line_is_named_and_strict_publishes_nothing(kafka_catalog: str, tmp_path: Path):
    good = {
        "task_id": "cli/good",
        "prompt": "def f(x):\n",
        "entry_point": "f",
        "tests": [{"input": "(1,)", "output": "1"}],
    }
    bad = {**good, "task_id": "cli/bad", "tests": [{"input": "(1,)", "output": "nonsense("}]}
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    before = sum(1 for _ in replay(kafka_catalog, "rl.tasks", on_undecodable=_skip))

    strict = cli(kafka_catalog, "tasks", "publish", str(path), "--strict")
    assert strict.returncode == 2
    assert "line 2: field tests.0.output" in strict.stderr
    assert sum(1 for _ in replay(kafka_catalog, "rl.tasks", on_undecodable=_skip)) == before

    lenient = cli(kafka_catalog, "tasks", "publish", str(path))
    assert lenient.returncode == 2
    assert "line 2: field tests.0.output" in lenient.stderr
    after = [e.event for e in replay(kafka_catalog, "rl.tasks", from_offset=0, on_undecodable=_skip)]
    assert len(after) == before + 1
    assert any(isinstance(e, TaskPublished) and e.task_id == "cli/good" for e in after)


def test_replay_cli_prints_one_json_line_per_event(kafka_catalog: str):
    done = cli(kafka_catalog, "replay", "--topic", "rl.tasks", "--from-offset", "0")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    # every decodable event of the topic, one line each: the tasks, and whatever else other tests put on
    # the shared rl.tasks (events of other types, to test dead-lettering)
    tasks = [line for line in lines if line["type"].startswith("rlstream.task.published")]
    assert {t["event"]["task_id"] for t in tasks} >= {t.task_id for t in humaneval_tasks()}
    assert f"{len(lines)} event(s) from rl.tasks" in done.stderr.strip().splitlines()[-1]
    bad = cli(kafka_catalog, "replay", "--topic", "rl.tasks", "--from-time", "yesterday")
    assert bad.returncode == 2
    assert "--from-time" in bad.stderr


def test_the_easy_library_publishes_graded_with_held_out_tasks_in_every_level(kafka_catalog: str):
    run_id = f"library-{os.getpid()}"
    os.environ["RLSTREAM_RUN_ID"] = run_id
    try:
        done = cli(kafka_catalog, "tasks", "publish", "--library", "easy", "--eval-fraction", "0.2", "--json")
    finally:
        del os.environ["RLSTREAM_RUN_ID"]
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.splitlines()[-1])
    expected = {t.task_id: t for t in library_tasks("easy")}
    assert summary["published"] == len(expected) and summary["source"] == "library:easy"
    seen = [
        (e.envelope.type, e.event)
        for e in replay(kafka_catalog, "rl.tasks", on_undecodable=_skip)
        if isinstance(e.event, TaskPublished) and e.envelope.run_id == run_id
    ]
    tasks = [task for _, task in seen if isinstance(task, TaskPublished)]
    assert {t.task_id for t in tasks} == set(expected)
    assert {ce_type for ce_type, _ in seen} == {"rlstream.task.published.v5"}
    for task in tasks:
        assert task == expected[task.task_id].model_copy(update={"split": task.split})
    for level in (1, 2):
        graded = [t for t in tasks if t.difficulty == level]
        held = sum(t.split == "eval" for t in graded)
        assert held == round(0.2 * len(graded))

    bad = cli(kafka_catalog, "tasks", "publish", "--library", "hard")
    assert bad.returncode == 2
    assert "unknown library selection 'hard'" in bad.stderr and "easy, medium, all" in bad.stderr
