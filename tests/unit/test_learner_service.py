"""The learner's training log and the account taken from it (what the kill -9 acceptance checks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from learner.service import TrainingLog, read_training_log, training_account


def test_account_dedupes_by_version_and_keeps_only_committed_drops(tmp_path: Path) -> None:
    path = tmp_path / "training.jsonl"
    first = TrainingLog(path, "a")
    first.write("step", step=1, policy_version=0, sample_ids=["s1", "s2"])
    first.write("drop", policy_version=0, sample_ids=["s0"])
    first.write("publish", policy_version=1, step=1, sample_ids=["s1", "s2"], consumed=[])
    first.write("step", step=2, policy_version=1, sample_ids=["s3"])  # lost in the kill
    first.write("drop", policy_version=1, sample_ids=["s4"])  # never committed: decided again
    first.close()
    with path.open("a") as fh:
        fh.write('{"kind": "step", "incarn')  # the line the kill cut off
    second = TrainingLog(path, "b")
    second.write("publish", policy_version=1, step=1, sample_ids=["s1", "s2"], consumed=[], republished=True)
    second.write("step", step=2, policy_version=1, sample_ids=["s3", "s4"])
    second.write("publish", policy_version=2, step=2, sample_ids=["s3", "s4"], consumed=[])
    second.close()

    entries = read_training_log(path)
    assert [e["incarnation"] for e in entries] == ["a"] * 5 + ["b"] * 3
    versions, dropped = training_account(entries)
    assert versions == {1: ["s1", "s2"], 2: ["s3", "s4"]}
    assert dropped == ["s0"]


def test_a_version_published_twice_with_other_samples_is_an_error(tmp_path: Path) -> None:
    log = TrainingLog(tmp_path / "t.jsonl", "a")
    log.write("publish", policy_version=1, step=1, sample_ids=["s1"], consumed=[])
    log.write("publish", policy_version=1, step=1, sample_ids=["s2"], consumed=[])
    log.close()
    with pytest.raises(ValueError, match="version 1"):
        training_account(read_training_log(tmp_path / "t.jsonl"))


def test_drops_committed_without_a_publication_count(tmp_path: Path) -> None:
    log = TrainingLog(tmp_path / "t.jsonl", "a")
    log.write("publish", policy_version=1, step=1, sample_ids=["s1"], consumed=[])
    log.write("drop", policy_version=1, sample_ids=["s2", "s3"])  # the run's last group, stale
    log.write("decided", step=1, policy_version=1, base=[], consumed=[], groups=["g"])
    log.write("drop", policy_version=1, sample_ids=["s4"])  # not committed yet: decided again later
    log.close()
    versions, dropped = training_account(read_training_log(tmp_path / "t.jsonl"))
    assert versions == {1: ["s1"]}
    assert dropped == ["s2", "s3"]


def test_a_standbys_training_log_starts_on_a_line_of_its_own(tmp_path: Path) -> None:
    """Built while the active learner still writes, a standby's first line comes after whatever the
    active's kill left: a line it cut is ended, not joined."""
    path = tmp_path / "training.jsonl"
    active = TrainingLog(path, "a")
    active.write("step", step=1, policy_version=0, sample_ids=["s1"])
    standby = TrainingLog(path, "b")  # built now, writes only once it holds the lease
    active.write("publish", policy_version=1, step=1, sample_ids=["s1"], consumed=[])
    active.close()
    with path.open("a") as fh:
        fh.write('{"kind": "step", "incarn')  # the line the active's kill cut off
    standby.write("start", step=1, policy_version=1)
    standby.close()
    assert [(e["incarnation"], e["kind"]) for e in read_training_log(path)] == [
        ("a", "step"),
        ("a", "publish"),
        ("b", "start"),
    ]
