"""Holding tasks out for evaluation, deterministically: the same task ids and the same request always
give the same held-out set, whatever order the tasks come in and on whichever machine.

Two ways, combinable:

* ``eval_fraction``: the ``round(fraction * n)`` tasks (at least one when the fraction is above 0)
  whose sha256 of ``seed:task_id`` is smallest. A task's rank depends on its own id only, so adding
  tasks to a set moves few of the others between splits. Graded tasks are held out per difficulty
  level (the fraction of each level, at least one), so every level a curriculum moves through has
  held-out tasks to measure it by.
* ``eval_tasks``: a named list (one task id per line; blank lines and ``#`` comments are skipped).
  A name that matches no task is an error naming its line, never silently ignored.

A task already published as ``eval`` stays held out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from schemas.errors import InputError, UsageError
from schemas.task import TaskPublished


@dataclass(frozen=True)
class HoldOut:
    """Which tasks to hold out: a fraction, chosen by hash, and/or named ids."""

    fraction: float = 0.0
    names: frozenset[str] = frozenset()
    seed: str = "rlstream-eval"

    def __post_init__(self) -> None:
        if not 0.0 <= self.fraction < 1.0:
            raise UsageError(
                f"--eval-fraction {self.fraction}: must be at least 0 and below 1",
                hint="e.g. --eval-fraction 0.2 holds out a fifth of the tasks",
            )

    @property
    def active(self) -> bool:
        return self.fraction > 0 or bool(self.names)

    def rank(self, task_id: str) -> str:
        return hashlib.sha256(f"{self.seed}:{task_id}".encode()).hexdigest()

    def held_out(self, task_ids: Sequence[str], strata: Sequence[object] | None = None) -> set[str]:
        """The ids held out; with ``strata`` (one label per id, e.g. its difficulty level) the fraction
        is taken of each stratum separately."""
        unknown = sorted(self.names - set(task_ids))
        if unknown:
            raise InputError(
                f"--eval-tasks names {len(unknown)} task(s) not among the {len(task_ids)} given, e.g. "
                + ", ".join(repr(t) for t in unknown[:3]),
                location="--eval-tasks",
            )
        chosen = set(self.names)
        if self.fraction > 0 and task_ids:
            groups: dict[object, list[str]] = {}
            for task_id, stratum in zip(task_ids, strata or [None] * len(task_ids), strict=True):
                groups.setdefault(stratum, []).append(task_id)
            for ids in groups.values():
                count = max(1, round(self.fraction * len(ids)))
                chosen |= set(sorted(ids, key=self.rank)[:count])
        return chosen

    def apply(self, tasks: Sequence[TaskPublished]) -> list[TaskPublished]:
        """``tasks`` in their order, the held-out ones with ``split="eval"``."""
        if not self.active:
            return list(tasks)
        held = self.held_out([t.task_id for t in tasks], [t.difficulty for t in tasks])
        if len(held) >= len({t.task_id for t in tasks}):
            raise UsageError(
                f"holding out {len(held)} of {len(tasks)} task(s) leaves none to train on",
                hint="hold out fewer tasks (--eval-fraction / --eval-tasks)",
            )
        return [t.model_copy(update={"split": "eval"}) if t.task_id in held else t for t in tasks]


def read_task_list(path: Path) -> frozenset[str]:
    """The task ids of an ``--eval-tasks`` file (one per line, ``#`` comments)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise InputError(f"no such file: {path}", location="--eval-tasks") from None
    except (UnicodeDecodeError, IsADirectoryError):
        raise InputError(f"{path} is not a UTF-8 text file of task ids", location="--eval-tasks") from None
    names: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        name = line.split("#", 1)[0].strip()
        if not name:
            continue
        if name in names:
            raise InputError(f"{path}: line {number}: {name!r} already on line {names[name]}")
        names[name] = number
    if not names:
        raise InputError(f"{path} names no task", location="--eval-tasks")
    return frozenset(names)


def hold_out(
    tasks: Sequence[TaskPublished], *, fraction: float | None, names_file: Path | None
) -> list[TaskPublished]:
    """The CLI's entry point: ``tasks`` with the requested ones marked ``eval``."""
    spec = HoldOut(fraction or 0.0, read_task_list(names_file) if names_file is not None else frozenset())
    return spec.apply(tasks)
