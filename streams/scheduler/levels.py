"""The level-aware curriculum: which difficulty levels a run trains on, moved up as it learns them.

Pure and clock-free. Graded tasks (``difficulty`` set) of levels above the run's current level wait;
tasks of the current and easier levels are scheduled (a level once reached stays in the mix, so what
was learned keeps being practised; the zero-advantage curriculum still skips tasks the policy always
passes). Ungraded tasks are never held back.

The current level moves on when it has been learned, measured on tasks the run never trains on:
each evaluation round (every held-out task under one policy version, ``samples`` each) is tallied per
task as its samples are scored; once every held-out task of the current level has its tally for a
version, its pass@1 (the mean over those tasks of correct / n) is compared with ``advance_at``. At or
above it, training moves to the next level present among the run's training tasks, and the same
version's tallies of that level are judged in turn (a policy that already solves several levels skips
them at version 0). A level with no held-out task cannot be measured and is passed through; a level
whose training tasks have all had their groups (a run with a fixed number of epochs) is left when
nothing else of it is in flight. Every move is a :class:`~schemas.curriculum.CurriculumLevelChanged`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from schemas.curriculum import CurriculumLevelChanged
from streams.config import LevelConfig


@dataclass
class RoundTally:
    """The scored samples of one held-out task in one evaluation round (a state record)."""

    run: str
    task_id: str
    version: int
    level: int
    n: int
    #: sample id -> every case passed
    correct: dict[str, bool] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return len(self.correct) >= self.n

    @property
    def pass_at_1(self) -> float:
        return sum(self.correct.values()) / len(self.correct) if self.correct else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "task_id": self.task_id,
            "version": self.version,
            "level": self.level,
            "n": self.n,
            "correct": dict(sorted(self.correct.items())),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RoundTally:
        return cls(**{**data, "correct": dict(data["correct"])})


@dataclass(frozen=True)
class LevelPlan:
    """The curriculum's rules over the facts the scheduler keeps (levels, tallies, what is queued)."""

    config: LevelConfig

    def eligible(self, level: int | None, current: int | None) -> bool:
        """Whether a task of ``level`` may be scheduled while the run is at ``current``."""
        return level is None or current is None or level <= current

    def start(self, run: str, train_levels: Iterable[int]) -> CurriculumLevelChanged | None:
        """The run's first level (its easiest graded training level), or None without graded tasks."""
        levels = sorted(set(train_levels))
        if not levels:
            return None
        return CurriculumLevelChanged(run_id=run, to_level=levels[0], reason="start")

    def after_round(
        self,
        run: str,
        current: int,
        version: int,
        tallies: Iterable[RoundTally],
        held_out_levels: Iterable[int],
        train_levels: Iterable[int],
    ) -> list[CurriculumLevelChanged]:
        """The moves ``version``'s evaluation round earns, in order (none while the current level's
        round is incomplete or below the bar). ``held_out_levels``: levels that have held-out tasks;
        ``tallies``: this run's tallies of ``version``."""
        by_level: dict[int, list[RoundTally]] = {}
        for tally in tallies:
            by_level.setdefault(tally.level, []).append(tally)
        measured = set(held_out_levels)
        moves: list[CurriculumLevelChanged] = []
        while (nxt := self._next(current, train_levels)) is not None:
            if current not in measured:
                moves.append(
                    CurriculumLevelChanged(run_id=run, from_level=current, to_level=nxt, reason="unmeasured")
                )
                current = nxt
                continue
            level_tallies = by_level.get(current, [])
            if not level_tallies or not all(t.complete for t in level_tallies):
                break
            pass_at_1 = sum(t.pass_at_1 for t in level_tallies) / len(level_tallies)
            if pass_at_1 < self.config.advance_at:
                break
            moves.append(
                CurriculumLevelChanged(
                    run_id=run,
                    from_level=current,
                    to_level=nxt,
                    reason="passed",
                    policy_version=version,
                    pass_at_1=round(pass_at_1, 6),
                    threshold=self.config.advance_at,
                    tasks=len(level_tallies),
                    samples=sum(len(t.correct) for t in level_tallies),
                )
            )
            current = nxt
        return moves

    def exhausted(self, run: str, current: int, train_levels: Iterable[int]) -> CurriculumLevelChanged | None:
        """The move when nothing of the levels reached is left to schedule or in flight."""
        nxt = self._next(current, train_levels)
        if nxt is None:
            return None
        return CurriculumLevelChanged(run_id=run, from_level=current, to_level=nxt, reason="exhausted")

    @staticmethod
    def _next(current: int, train_levels: Iterable[int]) -> int | None:
        above = [lv for lv in set(train_levels) if lv > current]
        return min(above) if above else None
