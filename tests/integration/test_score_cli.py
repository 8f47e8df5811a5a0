"""``rlstream score`` end to end: a real sandbox run, the reward and the verdict as JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from producers.ingest.humaneval import load_rows, to_task
from rlstream.cli import app

FIELDS = {"reward", "components", "verdict", "reasons", "passed", "total", "backend"}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("score")
    row = load_rows()[0]
    task = d / "task.json"
    task.write_text(to_task(row).model_dump_json())
    out = {"task": task}
    programs = {
        "canonical": row.prompt + row.canonical_solution,
        "wrong": row.prompt + "    return False\n",
        "exit": row.prompt + "    import os\n    os._exit(0)\n",
        "flaky": "import random\n\n" + row.prompt + "    return random.random() < 0.5\n",
        "eq": "class A:\n    def __eq__(self, o):\n        return True\n\n" + row.prompt + "    return A()\n",
        "huge": row.prompt + "    return 10 ** 400 if numbers else 7 ** 5000\n",
        "deep": row.prompt + "    v = []\n    for _ in range(300):\n        v = [v]\n    return v\n",
    }
    for name, code in programs.items():
        path = d / f"{name}.py"
        path.write_text(code)
        out[name] = path
    half = d / "half.json"
    half.write_text(
        json.dumps(
            {
                "task_id": "demo/half",
                "prompt": "def half(x):\n",
                "entry_point": "half",
                "tests": [{"input": "(3,)", "output": "1.5"}, {"input": "(5,)", "output": "2.5"}],
                "hidden_tests": [{"input": "(1e300,)", "output": "5e+299"}],
                "reference": "def half(x):\n    return x / 2\n",
            }
        )
    )
    out["half"] = half
    bom = d / "bom.py"
    bom.write_bytes(b"\xef\xbb\xbf" + programs["canonical"].encode())
    out["bom"] = bom
    past_float = d / "past_float.py"
    past_float.write_text("def half(x):\n    return 10 ** 400\n")
    out["past_float"] = past_float
    bad = d / "bad.json"
    bad.write_text(json.dumps({"task_id": "x", "prompt": "p", "entry_point": "has space", "tests": []}))
    out["bad"] = bad
    return out


def score(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(app, ["score", *args])
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize("backend", ["wasm", "container"])
def test_canonical_passes_and_is_accepted(files: dict[str, Path], backend: str) -> None:
    rc, out, err = score(
        "--task", str(files["task"]), "--code", str(files["canonical"]), "--backend", backend, "--json"
    )
    assert rc == 0, err
    body = json.loads(out)
    assert set(body) == FIELDS
    assert body["verdict"] == "accept"
    assert body["passed"] == body["total"] > 0
    assert body["reward"] >= 1.0
    assert body["backend"] == backend
    assert set(body["components"]) >= {"correctness", "quality", "efficiency", "security"}


def test_wrong_program_scores_zero_and_is_accepted(files: dict[str, Path]) -> None:
    rc, out, _ = score("--task", str(files["task"]), "--code", str(files["wrong"]), "--json")
    body = json.loads(out)
    assert rc == 0
    assert body["reward"] <= 0.0
    assert body["passed"] < body["total"]
    assert body["verdict"] == "accept"


@pytest.mark.parametrize(
    ("program", "code"), [("exit", "runtime.ended_early"), ("eq", "hack.custom_equality")]
)
def test_hacks_are_rejected_with_reasons(files: dict[str, Path], program: str, code: str) -> None:
    rc, out, _ = score("--task", str(files["task"]), "--code", str(files[program]), "--json")
    body = json.loads(out)
    assert rc == 0
    assert body["verdict"] == "reject"
    assert body["passed"] == 0
    assert code in {r["code"] for r in body["reasons"]}


def test_bad_task_file_exits_2_naming_the_field(files: dict[str, Path]) -> None:
    rc, _, err = score("--task", str(files["bad"]), "--code", str(files["canonical"]), "--json")
    assert rc == 2
    assert "entry_point" in err


def test_missing_files_and_bad_options_exit_2(files: dict[str, Path], tmp_path: Path) -> None:
    assert score("--task", str(tmp_path / "nope.json"), "--code", str(files["canonical"]))[0] == 2
    assert score("--task", str(files["task"]), "--code", str(tmp_path / "nope.py"))[0] == 2
    assert score("--task", str(files["task"]), "--code", str(files["canonical"]), "--backend", "vm")[0] == 2
    assert (
        score("--task", str(files["task"]), "--code", str(files["canonical"]), "--reward", "code-v0")[0] == 2
    )


def test_induced_flakiness_never_spares_a_failure(files: dict[str, Path]) -> None:
    args = ("--task", str(files["task"]), "--code", str(files["flaky"]), "--json")
    rc, out, _ = score(*args, "--reruns", "3")
    body = json.loads(out)
    assert rc == 0
    # a random answer passes all 7 cases once in 128 runs: a pass its re-runs fail is rejected, a
    # failure stays one (it is never masked out of the gradient)
    assert body["verdict"] == ("reject" if body["passed"] == body["total"] else "accept")
    assert {"noise.flaky", "runtime.nondeterministic"} & {r["code"] for r in body["reasons"]}
    # without re-runs the same program is just scored
    body = json.loads(score(*args)[1])
    assert body["verdict"] in ("accept", "reject")


@pytest.mark.parametrize(("task", "program"), [("task", "huge"), ("task", "deep"), ("half", "past_float")])
def test_hostile_values_are_failed_cases_never_a_traceback(
    files: dict[str, Path], task: str, program: str
) -> None:
    args = ["--task", str(files[task]), "--code", str(files[program])]
    for extra in (["--json"], []):
        r = CliRunner().invoke(app, ["score", *args, *extra])
        assert r.exit_code == 0, r.output
        assert r.exception is None and "Traceback" not in r.output
    body = json.loads(score(*args, "--json")[1])
    assert body["passed"] == 0 and body["reward"] <= 0
    assert body["verdict"] in ("accept", "reject")


def test_a_byte_order_mark_is_not_part_of_the_program(files: dict[str, Path]) -> None:
    code, out, _ = score("--task", str(files["task"]), "--code", str(files["bom"]), "--json")
    assert code == 0
    body = json.loads(out)
    assert body["passed"] == body["total"] and body["verdict"] == "accept"
