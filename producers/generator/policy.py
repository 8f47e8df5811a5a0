"""Following the learner's policy versions: which weights to load, and when to pause instead of
generating samples the learner would discard as too stale.

Both pieces are pure and synchronous. The worker feeds :meth:`PolicyFollower.observe` with each
``PolicyPublished`` it reads from ``rl.policy`` and calls :meth:`PolicyFollower.sync` between batches
(never during one), then asks :meth:`PolicyFollower.check` before each request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from producers.generator.interface import GenerationBackend
from producers.generator.weights import verified_checkpoint
from schemas.errors import DependencyError, InputError
from schemas.policy import PolicyPublished


@dataclass(frozen=True)
class StalenessDecision:
    action: Literal["generate", "pause"]
    #: newest known version minus the version in use (never negative)
    lag: int
    reason: str

    @property
    def generate(self) -> bool:
        return self.action == "generate"


@dataclass(frozen=True)
class StalenessPolicy:
    """Generate only while the weights in use are at most ``max_staleness`` versions behind the newest
    version anyone has told us about (a ``PolicyPublished`` event, or a request whose scheduler already
    knew a newer version)."""

    max_staleness: int = 1

    def check(
        self, *, generating_version: int, newest_known: int, requested_version: int | None = None
    ) -> StalenessDecision:
        newest = max(newest_known, requested_version if requested_version is not None else 0)
        lag = max(0, newest - generating_version)
        if requested_version is not None and requested_version - generating_version > self.max_staleness:
            return StalenessDecision(
                "pause",
                lag,
                f"request expects policy v{requested_version}; generating with v{generating_version} would "
                f"be {requested_version - generating_version} versions stale (bound {self.max_staleness})",
            )
        if lag > self.max_staleness:
            return StalenessDecision(
                "pause",
                lag,
                f"newest policy is v{newest}; weights in use are v{generating_version}, "
                f"{lag} versions behind (bound {self.max_staleness})",
            )
        return StalenessDecision("generate", lag, "within bound")


@dataclass
class LoadResult:
    version: int
    loaded: bool
    error: str | None = None


class NotPublished(LookupError):
    """An exact version was asked for that no PolicyPublished of this run has named (yet)."""


class PolicyFollower:
    """Tracks published versions and loads the newest one into a backend between batches.

    Only the newest pending version is loaded (intermediate ones are skipped: they are already stale).
    A checkpoint that fails verification is remembered as bad and not retried, and the backend keeps its
    current weights; :meth:`check` then pauses once the lag exceeds the bound.

    Evaluation asks for an exact version instead (:meth:`exact`): any version this run published, or 0,
    the weights it started from (``base_weights``). Training requests keep using the newest version
    loaded for training; :meth:`sync` puts those weights back after an evaluation swapped them out.
    """

    def __init__(
        self,
        backend: GenerationBackend,
        policy: StalenessPolicy,
        *,
        run_id: str | None = None,
        base_weights: Callable[[], Path] | None = None,
    ) -> None:
        self.backend = backend
        self.policy = policy
        self.run_id = run_id
        self.newest_known = backend.policy_version
        self._pending: PolicyPublished | None = None
        #: versions whose checkpoint was refused, and why
        self.refused: dict[int, str] = {}
        self._published: dict[int, PolicyPublished] = {}
        #: the version training requests are generated with (the backend may hold another one while an
        #: evaluation runs)
        self.training_version = backend.policy_version
        self._base_weights = base_weights

    def observe(self, event: PolicyPublished) -> None:
        if self.run_id is not None and event.run_id != self.run_id:
            return
        self._published[event.policy_version] = event
        self.newest_known = max(self.newest_known, event.policy_version)
        if event.policy_version <= self.training_version or event.policy_version in self.refused:
            return
        if self._pending is None or event.policy_version > self._pending.policy_version:
            self._pending = event

    @property
    def pending_version(self) -> int | None:
        return self._pending.policy_version if self._pending is not None else None

    def sync(self) -> LoadResult | None:
        """Load the newest pending version for training, if any (or put the training weights back after
        an evaluation). Call between batches only."""
        event, self._pending = self._pending, None
        if event is None or event.policy_version <= self.training_version:
            if self.backend.policy_version != self.training_version:
                return self._load(self.training_version)
            return None
        result = self._load(event.policy_version)
        if result.loaded:
            self.training_version = event.policy_version
        elif self.backend.policy_version != self.training_version:
            self._load(self.training_version)
        return result

    def exact(self, version: int) -> LoadResult | None:
        """Make the backend hold exactly ``version`` (None: it does already). Raises
        :class:`NotPublished` for a version this follower has not seen published (yet)."""
        if self.backend.policy_version == version:
            return None
        if version != 0 and version not in self._published:
            raise NotPublished(f"policy v{version} has not been published (yet)")
        return self._load(version)

    def _load(self, version: int) -> LoadResult:
        try:
            if version == 0:
                if self._base_weights is None:
                    raise DependencyError("the weights of policy v0 (the base model) are not available here")
                path = self._base_weights()
            else:
                event = self._published[version]
                path = verified_checkpoint(event.checkpoint_uri, event.sha256)
            self.backend.load_weights_file(path, version)
        except (DependencyError, InputError) as exc:
            if version:
                self.refused[version] = str(exc)
            return LoadResult(version, loaded=False, error=str(exc))
        return LoadResult(version, loaded=True)

    def check(self, requested_version: int | None = None) -> StalenessDecision:
        if requested_version is not None:
            self.newest_known = max(self.newest_known, requested_version)
        return self.policy.check(
            generating_version=self.training_version,
            newest_known=self.newest_known,
            requested_version=requested_version,
        )
