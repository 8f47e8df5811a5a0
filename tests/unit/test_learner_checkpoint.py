"""Atomic checkpoint directories and the weight store, without an engine."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from learner.checkpoint import WEIGHTS, CheckpointDir
from learner.store import fetch_verified, path_of_file_uri, register_scheme, store_for
from schemas.errors import DependencyError, UsageError
from schemas.policy import ConsumedOffset


def fill(payload: bytes):
    def write(tmp: Path) -> None:
        (tmp / WEIGHTS).write_bytes(payload)
        (tmp / "state").mkdir()
        (tmp / "state" / "optimizer.pt").write_bytes(b"opt")

    return write


def manifest(step: int) -> dict[str, object]:
    return {
        "step": step,
        "policy_version": step // 2,
        "consumed": (ConsumedOffset(topic="rl.experiences", partition=0, offset=step * 10),),
        "backend": "torch",
        "zero_stage": 0,
    }


def test_newest_complete_checkpoint_wins(tmp_path: Path) -> None:
    ckpt = CheckpointDir(tmp_path, keep=5)
    ckpt.write(manifest(1), fill(b"one"))
    ckpt.write(manifest(2), fill(b"two"))
    found = ckpt.newest()
    assert found is not None
    path, m = found
    assert (path.name, m.step, m.policy_version) == ("step-00000002", 2, 1)
    assert m.consumed[0].offset == 20
    assert m.weights_sha256 == hashlib.sha256(b"two").hexdigest()


def test_crash_mid_write_leaves_previous_usable(tmp_path: Path) -> None:
    ckpt = CheckpointDir(tmp_path)
    ckpt.write(manifest(1), fill(b"one"))
    # a writer that dies after writing part of step 2 (before the rename)
    tmp = ckpt.begin(2)
    (tmp / WEIGHTS).write_bytes(b"half")

    found = ckpt.newest()
    assert found is not None
    assert found[1].step == 1
    # the next writer clears the leftover
    ckpt.write(manifest(3), fill(b"three"))
    assert not tmp.exists()


def test_corrupted_newest_falls_back_to_previous(tmp_path: Path) -> None:
    ckpt = CheckpointDir(tmp_path)
    ckpt.write(manifest(1), fill(b"one"))
    path, _ = ckpt.write(manifest(2), fill(b"two"))
    (path / WEIGHTS).write_bytes(b"bitrot")
    found = ckpt.newest()
    assert found is not None
    assert found[1].step == 1


def test_no_checkpoint_yet(tmp_path: Path) -> None:
    assert CheckpointDir(tmp_path / "none").newest() is None


def test_old_checkpoints_are_pruned(tmp_path: Path) -> None:
    ckpt = CheckpointDir(tmp_path, keep=2)
    for step in (1, 2, 3):
        ckpt.write(manifest(step), fill(str(step).encode()))
    assert [p.name for p in ckpt.complete()] == ["step-00000003", "step-00000002"]


def test_rewriting_the_same_step_replaces_it(tmp_path: Path) -> None:
    ckpt = CheckpointDir(tmp_path)
    ckpt.write(manifest(4), fill(b"first"))
    ckpt.write(manifest(4), fill(b"second"))
    found = ckpt.newest()
    assert found is not None
    assert (found[0] / WEIGHTS).read_bytes() == b"second"


def test_file_store_put_and_verified_fetch(tmp_path: Path) -> None:
    src = tmp_path / "w.safetensors"
    src.write_bytes(b"weights")
    store = store_for((tmp_path / "store").as_uri())
    uri = store.put(src, "run/v000001/model.safetensors")
    assert uri.startswith("file:///")
    assert path_of_file_uri(uri).read_bytes() == b"weights"
    sha = hashlib.sha256(b"weights").hexdigest()
    assert fetch_verified(uri, sha, tmp_path).read_bytes() == b"weights"
    with pytest.raises(DependencyError, match="does not match"):
        fetch_verified(uri, "0" * 64, tmp_path)


def test_store_key_cannot_escape(tmp_path: Path) -> None:
    src = tmp_path / "w"
    src.write_bytes(b"x")
    with pytest.raises(UsageError, match="leaves the store"):
        store_for((tmp_path / "store").as_uri()).put(src, "../../etc/x")


def test_unknown_scheme_names_the_fix_and_schemes_plug_in(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="register_scheme"):
        store_for("s3://bucket/policies")

    class MemoryStore:
        def __init__(self, base: str) -> None:
            self.base = base

        def put(self, local: Path, key: str) -> str:
            return f"{self.base}/{key}"

        def get(self, uri: str, cache_dir: Path) -> Path:
            return cache_dir

    register_scheme("mem", MemoryStore)
    assert store_for("mem://bucket").put(tmp_path, "k") == "mem://bucket/k"
