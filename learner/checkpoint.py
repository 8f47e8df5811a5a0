"""Atomic checkpoint directories and the newest-complete-checkpoint lookup.

Layout under the checkpoint root::

    step-00000012/           a complete checkpoint (only ever created by a rename)
        learner.json         the manifest: step, policy version, consumed offsets, config, file hashes
        model.safetensors    the full weights (also what gets published)
        state/ ...           engine state: optimizer (and with DeepSpeed, its per-rank files)
    .tmp-step-00000013/      one being written; ignored by readers, removed by the next writer

A checkpoint is written into a temporary directory, every file and directory is fsynced, and only then
is it renamed to its final name (and the root fsynced). A crash at any moment therefore leaves either
the previous checkpoints or the new complete one - never a half-written one under a final name. The
loader still verifies the manifest and the weights' sha256, and falls back to the next older checkpoint
if anything does not match.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError

from learner.store import file_sha256, fsync_dir, fsync_tree
from schemas.base import FrozenModel
from schemas.errors import InputError
from schemas.policy import ConsumedOffset

log = logging.getLogger(__name__)

MANIFEST = "learner.json"
WEIGHTS = "model.safetensors"
STATE_DIR = "state"
_FINAL = re.compile(r"^step-(\d{8,})$")


class CheckpointManifest(FrozenModel):
    format: Literal["rlstream.learner.checkpoint.v1"] = "rlstream.learner.checkpoint.v1"
    step: int = Field(ge=0)
    policy_version: int = Field(ge=0)
    #: the next offset to read on every partition the learner consumed: resume = load + seek here
    consumed: tuple[ConsumedOffset, ...] = ()
    #: the learner's configuration when it was written (LearnerConfig as JSON)
    config: dict[str, Any] = Field(default_factory=dict)
    backend: str
    zero_stage: int = Field(ge=0)
    world_size: int = Field(default=1, ge=1)
    weights_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    created_at: str = ""
    #: anything the caller wants back on resume (e.g. the last published version's URI)
    extra: dict[str, Any] = Field(default_factory=dict)


def step_dir_name(step: int) -> str:
    return f"step-{step:08d}"


class CheckpointDir:
    def __init__(self, root: Path, *, keep: int = 3) -> None:
        self.root = root
        self.keep = keep

    def tmp_path(self, step: int) -> Path:
        # deterministic, so every rank of a multi-process learner writes into the same directory
        return self.root / f".tmp-{step_dir_name(step)}"

    def begin(self, step: int) -> Path:
        """A fresh, empty temporary directory for ``step`` (rank 0 only in a multi-process learner)."""
        self.root.mkdir(parents=True, exist_ok=True)
        for stale in self.root.glob(".tmp-step-*"):
            shutil.rmtree(stale, ignore_errors=True)
        tmp = self.tmp_path(step)
        tmp.mkdir()
        return tmp

    def commit(self, tmp: Path, manifest: CheckpointManifest) -> Path:
        """Write the manifest, fsync everything, rename into place, prune old checkpoints."""
        weights = tmp / WEIGHTS
        if not weights.is_file():
            raise InputError(f"{weights} is missing", location="checkpoint")
        (tmp / MANIFEST).write_text(manifest.model_dump_json(indent=2))
        fsync_tree(tmp)
        final = self.root / step_dir_name(manifest.step)
        if final.exists():
            # re-checkpointing a step (after a restart): move the old one aside first, because a
            # rename cannot replace a non-empty directory
            aside = self.root / f".old-{final.name}"
            shutil.rmtree(aside, ignore_errors=True)
            os.rename(final, aside)
            os.rename(tmp, final)
            fsync_dir(self.root)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            os.rename(tmp, final)
            fsync_dir(self.root)
        self.prune()
        return final

    def write(
        self, manifest_without_hash: dict[str, Any], fill: Callable[[Path], None]
    ) -> tuple[Path, CheckpointManifest]:
        """Single-process convenience: ``fill(tmp)`` writes ``model.safetensors`` and the state."""
        tmp = self.begin(int(manifest_without_hash["step"]))
        fill(tmp)
        manifest = CheckpointManifest(
            **manifest_without_hash,
            weights_sha256=file_sha256(tmp / WEIGHTS),
            created_at=datetime.now(UTC).isoformat(),
        )
        return self.commit(tmp, manifest), manifest

    def complete(self) -> list[Path]:
        """Final-named checkpoint directories, newest first (not yet verified)."""
        if not self.root.is_dir():
            return []
        found = [p for p in self.root.iterdir() if p.is_dir() and _FINAL.match(p.name)]
        return sorted(found, key=lambda p: int(_FINAL.match(p.name).group(1)), reverse=True)  # type: ignore[union-attr]

    def verify(self, path: Path) -> CheckpointManifest:
        """The manifest of a checkpoint whose files are all there and match; raises InputError if not."""
        try:
            manifest = CheckpointManifest.model_validate(json.loads((path / MANIFEST).read_text()))
        except (OSError, ValueError, ValidationError) as exc:
            raise InputError(f"unreadable manifest: {exc}", location=str(path / MANIFEST)) from exc
        weights = path / WEIGHTS
        if not weights.is_file() or file_sha256(weights) != manifest.weights_sha256:
            raise InputError("weights missing or sha256 mismatch", location=str(weights))
        return manifest

    def newest(self) -> tuple[Path, CheckpointManifest] | None:
        """The newest checkpoint that verifies, or None when there is none."""
        for path in self.complete():
            try:
                return path, self.verify(path)
            except InputError as exc:
                log.warning("skipping checkpoint %s: %s", path, exc)
        return None

    def prune(self) -> None:
        for old in self.complete()[self.keep :]:
            shutil.rmtree(old, ignore_errors=True)
