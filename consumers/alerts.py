"""Alert history, folded from ``rl.alerts``: each firing of a rule for a run, from raised to resolved.

Pure: the caller feeds the events it reads in log order; :class:`AlertHistory` pairs each
``AlertResolved`` with the ``AlertRaised`` it ends (same rule, run and ``since_ms``), and keeps each
event once (by event id)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from schemas.alert import AlertRaised, AlertResolved
from schemas.base import Event


@dataclass
class AlertLife:
    raised: AlertRaised
    raised_at: datetime
    resolved: AlertResolved | None = None
    resolved_at: datetime | None = None

    @property
    def state(self) -> str:
        return "resolved" if self.resolved is not None else "firing"

    def as_dict(self) -> dict[str, Any]:
        r = self.raised
        return {
            "rule": r.rule,
            "severity": r.severity,
            "state": self.state,
            "run_id": r.run_id,
            "summary": r.summary,
            "signal": r.signal,
            "measure": r.measure,
            "window_s": r.window_s,
            "op": r.op,
            "threshold": r.threshold,
            "value": r.value,
            "for_s": r.for_s,
            "since": datetime.fromtimestamp(r.since_ms / 1000, UTC).isoformat(),
            "raised_at": self.raised_at.isoformat(),
            "resolved_at": self.resolved_at.isoformat() if self.resolved_at else None,
            "resolved_value": self.resolved.value if self.resolved else None,
            "fired_s": self.resolved.fired_s if self.resolved else None,
            "policy_version": r.policy_version,
            "rules_version": r.rules_version,
        }

    def line(self) -> str:
        r = self.raised
        what = f"{r.signal}{' change' if r.measure == 'change' else ''} {r.value:.3g} {r.op} {r.threshold:g}"
        run = r.run_id or "every run"
        head = f"{self.raised_at:%Y-%m-%d %H:%M:%S} {r.severity.upper():8} {r.rule:22} {run:24} {what}"
        head += f" over {r.window_s:g}s for {r.for_s:g}s"
        if self.resolved is None:
            return head + " | FIRING"
        return head + f" | resolved {self.resolved_at:%H:%M:%S} after {self.resolved.fired_s:.0f}s"


@dataclass
class AlertHistory:
    run_id: str | None = None
    lives: list[AlertLife] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)
    _open: dict[tuple[str, str | None, int], AlertLife] = field(default_factory=dict)

    def fold(self, event_id: str, at: datetime, event: Event) -> None:
        if event_id in self._seen or not isinstance(event, AlertRaised | AlertResolved):
            return
        self._seen.add(event_id)
        if self.run_id is not None and event.run_id not in (self.run_id, None):
            return
        key = (event.rule, event.run_id, event.since_ms)
        if isinstance(event, AlertRaised):
            life = AlertLife(event, at)
            self.lives.append(life)
            self._open[key] = life
        elif key in self._open:
            life = self._open.pop(key)
            life.resolved, life.resolved_at = event, at

    @property
    def firing(self) -> list[AlertLife]:
        return [life for life in self.lives if life.resolved is None]
