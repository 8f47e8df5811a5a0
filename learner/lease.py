"""Which learner process of a run trains: the one holding the run's lease
(:class:`~infra.runtime.lease.Lease`), a file in its checkpoint directory. A second learner of the run is a
warm standby: built, it waits on the lease and takes over when the kernel frees it on the holder's death,
then restores everything else from the log (checkpoint, training log, offsets) as any restarted learner."""

from __future__ import annotations

from pathlib import Path

from infra.runtime.lease import Lease, lease_holder

#: the learner's lease is the generic one (the name the learner's modules know it by)
LearnerLease = Lease

__all__ = ["LearnerLease", "lease_holder", "lease_path"]


def lease_path(checkpoint_dir: Path) -> Path:
    return checkpoint_dir / "learner.lease"
