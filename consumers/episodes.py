"""Success by turn of multi-turn episodes: how many episodes had passed every case by each turn, per
policy version they started under, and how many turns they took. Pure; the report draws it from the
projections or from the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class TurnSuccess:
    """How episodes of several turns fared, for the episodes that started under one policy version."""

    policy_version: int
    episodes: int
    #: share of the episodes that had passed every case by each turn (index 0: the first turn)
    pass_by_turn: tuple[float, ...]
    #: turns an episode took, on average
    mean_turns: float

    @property
    def first_turn(self) -> float:
        return self.pass_by_turn[0]

    @property
    def final(self) -> float:
        return self.pass_by_turn[-1]


def turn_success(episodes: Sequence[tuple[int, int, int, bool]]) -> tuple[TurnSuccess, ...]:
    """Per policy version, from (version the episode started under, max turns, turns used, passed)."""
    by_version: dict[int, list[tuple[int, int, bool]]] = {}
    for version, max_turns, used, passed in episodes:
        by_version.setdefault(version, []).append((max_turns, used, passed))
    out = []
    for version, rows in sorted(by_version.items()):
        width = max(m for m, _, _ in rows)
        by_turn = tuple(
            sum(1 for _, used, ok in rows if ok and used <= t + 1) / len(rows) for t in range(width)
        )
        out.append(TurnSuccess(version, len(rows), by_turn, sum(u for _, u, _ in rows) / len(rows)))
    return tuple(out)
