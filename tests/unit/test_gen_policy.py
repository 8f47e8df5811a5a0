"""Policy following: newest weights between batches, sha256-verified, and the staleness bound."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from producers.generator.interface import BatchStats, Completion, Prompt
from producers.generator.policy import NotPublished, PolicyFollower, StalenessPolicy
from producers.generator.weights import sha256_of
from schemas.policy import PolicyPublished
from schemas.rollout import SamplingParams


class RecordingBackend:
    """Stands in for a model: remembers which checkpoints it was asked to load."""

    def __init__(self) -> None:
        self.loaded: list[tuple[Path, int]] = []
        self._version = 0

    model_name = "fake"
    tokenizer: Any = None
    last_stats: BatchStats | None = None

    @property
    def policy_version(self) -> int:
        return self._version

    def encode(self, text: str) -> list[int]:
        return []

    eos_token_ids: tuple[int, ...] = ()

    def generate(
        self,
        prompts: Sequence[Prompt],
        sampling: SamplingParams,
        seeds: Sequence[int] | None = None,
        until: Callable[[str], int | None] | None = None,
    ) -> list[Completion]:
        return []

    def load_weights_file(self, path: Path, version: int) -> None:
        self.loaded.append((path, version))
        self._version = version


def _publish(tmp_path: Path, version: int, *, corrupt: bool = False, run_id: str = "run") -> PolicyPublished:
    path = tmp_path / f"v{version}.safetensors"
    path.write_bytes(f"weights {version}".encode())
    digest = sha256_of(path)
    if corrupt:
        path.write_bytes(b"changed after publication")
    return PolicyPublished(
        run_id=run_id, policy_version=version, step=version, checkpoint_uri=path.as_uri(), sha256=digest
    )


def test_staleness_bound() -> None:
    policy = StalenessPolicy(max_staleness=1)
    assert policy.check(generating_version=3, newest_known=4).generate
    paused = policy.check(generating_version=3, newest_known=5)
    assert not paused.generate and paused.lag == 2 and "bound 1" in paused.reason
    asked = policy.check(generating_version=3, newest_known=3, requested_version=5)
    assert not asked.generate and "request expects policy v5" in asked.reason
    assert policy.check(generating_version=5, newest_known=5, requested_version=2).generate
    assert not StalenessPolicy(max_staleness=0).check(generating_version=0, newest_known=1).generate


def test_follower_loads_only_the_newest_pending_version_between_batches(tmp_path: Path) -> None:
    backend = RecordingBackend()
    follower = PolicyFollower(backend, StalenessPolicy(max_staleness=1), run_id="run")
    for version in (1, 3, 2):
        follower.observe(_publish(tmp_path, version))
    follower.observe(_publish(tmp_path, 9, run_id="another-run"))
    assert backend.loaded == []  # nothing is swapped until the worker is between batches
    assert not follower.check().generate  # v0 in use, v3 known
    result = follower.sync()
    assert result is not None and result.loaded and result.version == 3
    assert backend.loaded == [(tmp_path / "v3.safetensors", 3)]
    assert follower.check().generate
    assert follower.sync() is None
    follower.observe(_publish(tmp_path, 2))  # older than what is loaded: ignored
    assert follower.sync() is None


def test_a_corrupt_checkpoint_is_skipped_and_the_worker_pauses_when_too_stale(tmp_path: Path) -> None:
    backend = RecordingBackend()
    follower = PolicyFollower(backend, StalenessPolicy(max_staleness=1))
    follower.observe(_publish(tmp_path, 2, corrupt=True))
    result = follower.sync()
    assert result is not None and not result.loaded and "sha256" in (result.error or "")
    assert backend.policy_version == 0 and backend.loaded == []
    decision = follower.check()
    assert not decision.generate and decision.lag == 2
    follower.observe(_publish(tmp_path, 2, corrupt=True))  # the same bad version is not retried
    assert follower.sync() is None


@pytest.mark.parametrize("requested", [0, 1])
def test_requests_within_the_bound_generate(tmp_path: Path, requested: int) -> None:
    follower = PolicyFollower(RecordingBackend(), StalenessPolicy(max_staleness=1))
    assert follower.check(requested_version=requested).generate
    assert not follower.check(requested_version=2).generate


def test_an_evaluation_loads_exactly_its_version_and_training_gets_its_weights_back(tmp_path: Path) -> None:
    backend = RecordingBackend()
    base = tmp_path / "base.safetensors"
    follower = PolicyFollower(
        backend, StalenessPolicy(max_staleness=1), run_id="run", base_weights=lambda: base
    )
    for version in (1, 2):
        follower.observe(_publish(tmp_path, version))
    loaded = follower.sync()
    assert loaded is not None and loaded.version == 2 and follower.training_version == 2
    exact = follower.exact(1)  # an older version, exactly: not the newest
    assert exact is not None and exact.loaded and backend.policy_version == 1
    assert follower.exact(1) is None  # already held: no second load
    assert follower.exact(0) is not None and backend.loaded[-1] == (base, 0)  # v0 = the base weights
    with pytest.raises(NotPublished):
        follower.exact(7)
    assert follower.check().generate  # training's staleness is judged by its own version
    restored = follower.sync()  # a training batch puts the training weights back first
    assert restored is not None and restored.version == 2 and backend.policy_version == 2
