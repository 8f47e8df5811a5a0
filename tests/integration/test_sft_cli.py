"""`rlstream sft` on the real broker: the examples on the log, a version of stage sft that names them,
the answers' NLL lowered, and `rlstream run --from-policy` resolving the version to its weights."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from infra.kafka.replay import replay
from producers.generator.weights import read_safetensors, resolve_checkpoint_uri
from rlstream.settings import Settings
from rlstream.sft import StartingPolicy, starting_policy
from schemas.policy import PolicyPublished
from schemas.sft import SftExample
from tests.cli_support import ROOT, run_cli


def _skip(msg: object, exc: Exception) -> None:
    """Other tests put garbage on shared topics (to test dead-lettering): not ours to judge."""


def _cli(bootstrap: str, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, bootstrap=bootstrap, home=home, timeout=600)


@pytest.fixture(scope="module")
def stage(kafka_catalog: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    home = tmp_path_factory.mktemp("sft-home")
    run_id = f"sft-{uuid.uuid4().hex[:8]}"
    args = ["sft", "--tasks", "synthetic", "--eval-fraction", "0.25", "--epochs", "4", "--run-id", run_id]
    done = _cli(kafka_catalog, home, *args, "--json")
    assert done.returncode == 0, done.stderr
    return {
        "summary": json.loads(done.stdout),
        "home": home,
        "bootstrap": kafka_catalog,
        "stderr": done.stderr,
    }


def _published(bootstrap: str, run_id: str) -> list[PolicyPublished]:
    return [
        e.event
        for e in replay(bootstrap, "rl.policy", on_undecodable=_skip)
        if isinstance(e.event, PolicyPublished) and e.event.run_id == run_id
    ]


def test_the_stage_trains_what_the_log_holds_and_its_version_names_it(stage: dict[str, Any]) -> None:
    summary = stage["summary"]
    run_id = summary["run_id"]
    examples = [
        e
        for e in replay(stage["bootstrap"], "rl.sft.examples", on_undecodable=_skip)
        if isinstance(e.event, SftExample) and e.event.run_id == run_id
    ]
    # 8 synthetic tasks, a quarter held out: held-out answers are never taught
    assert len(examples) == summary["examples"] == 6
    (version,) = _published(stage["bootstrap"], run_id)
    assert version.stage == "sft" and version.policy_version == summary["policy_version"] == 1
    assert version.trained_sample_ids == tuple(e.event.example_id for e in examples)  # type: ignore[attr-defined]
    (consumed,) = version.consumed
    assert (consumed.topic, consumed.offset) == ("rl.sft.examples", examples[-1].offset + 1)
    # the loss went down over the epochs and the answers became likelier
    curve = summary["loss_by_epoch"]
    assert len(curve) == 4 and curve[-1] < curve[0]
    assert summary["nll_after"] < summary["nll_before"] - 0.5
    assert version.metrics["sft_nll_after"] == pytest.approx(summary["nll_after"], abs=1e-4)
    # progress was shown while it trained
    assert "epoch 4/4" in stage["stderr"]
    # and the version's lineage names its stage and its examples
    shown = _cli(stage["bootstrap"], stage["home"], "lineage", "--policy", f"{run_id}:v1", "--json")
    assert shown.returncode == 0, shown.stderr
    lineage = json.loads(shown.stdout)
    assert lineage["stage"] == "sft" and lineage["consumed"][0]["topic"] == "rl.sft.examples"
    assert [e["example_id"] for e in lineage["examples"]] == list(version.trained_sample_ids)
    assert {e["source"] for e in lineage["examples"]} == {"reference"}


def test_rl_starts_from_the_stage_version_whether_or_not_its_folder_is_on_this_machine(
    stage: dict[str, Any],
) -> None:
    run_id = stage["summary"]["run_id"]
    settings = Settings(home=stage["home"])
    start = starting_policy(settings, stage["bootstrap"], f"{run_id}:v1")
    folder = start.folder
    assert folder == Path(stage["summary"]["folder"]) and start.ref == f"{run_id}:v1"
    saved = read_safetensors(folder / "model.safetensors")
    (version,) = _published(stage["bootstrap"], run_id)
    published = read_safetensors(resolve_checkpoint_uri(version.checkpoint_uri))
    # the folder holds the published weights (a tied copy saved once)
    assert all(published[name].equal(tensor) for name, tensor in saved.items())
    shutil.rmtree(folder)
    rebuilt = starting_policy(settings, stage["bootstrap"], run_id)  # its newest version
    assert rebuilt == StartingPolicy(folder, f"{run_id}:v1") and (folder / "config.json").exists()
    again = read_safetensors(folder / "model.safetensors")
    assert again.keys() == saved.keys()
    assert all(again[name].equal(tensor) for name, tensor in saved.items())
    with pytest.raises(Exception, match="has versions"):
        starting_policy(settings, stage["bootstrap"], f"{run_id}:v7")


def test_a_stage_killed_mid_training_and_started_again_teaches_every_example_once(
    kafka_catalog: str, tmp_path: Path
) -> None:
    """kill -9 while the stage trains, then the same command again: the stage trains anew on the
    examples the log holds (the first run's, written again under the same event ids) and publishes one
    version that names each example once; nothing the killed run did is published."""
    home = tmp_path / "home"
    run_id = f"sft-{uuid.uuid4().hex[:8]}"
    epochs = 40
    args = ["sft", "--tasks", "synthetic", "--epochs", str(epochs), "--run-id", run_id]
    env = {**os.environ, "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": kafka_catalog, "RLSTREAM_HOME": str(home)}
    log = tmp_path / "killed.log"
    with log.open("w") as err:
        first = subprocess.Popen(
            [sys.executable, "-m", "rlstream.cli", *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 300
        while f"epoch 3/{epochs}" not in log.read_text():
            assert first.poll() is None, f"the stage ended before its third epoch:\n{log.read_text()[-2000:]}"
            assert time.monotonic() < deadline, f"no third epoch in 300 s:\n{log.read_text()[-2000:]}"
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait(30)
    finally:
        if first.poll() is None:
            first.kill()
    assert f"epoch {epochs}/{epochs}" not in log.read_text(), "killed too late: the stage had finished"
    assert not _published(kafka_catalog, run_id), "the killed stage published a version"

    done = _cli(kafka_catalog, home, *args, "--json")
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    examples = [
        e.event
        for e in replay(kafka_catalog, "rl.sft.examples", on_undecodable=_skip)
        if isinstance(e.event, SftExample) and e.event.run_id == run_id
    ]
    # both runs wrote the family's 8 examples, under the same event ids: 8 examples on the log's account
    ids = {e.example_id for e in examples}
    assert len(ids) == 8 and {e.event_id() for e in examples} == {
        e.event_id() for e in examples[: len(examples) // 2]
    }
    (version,) = _published(kafka_catalog, run_id)
    assert version.policy_version == summary["policy_version"] == 1
    assert sorted(version.trained_sample_ids) == sorted(ids)  # each example once, none lost
    assert len(summary["loss_by_epoch"]) == epochs and summary["nll_after"] < summary["nll_before"] - 0.5
