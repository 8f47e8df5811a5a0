"""The alert aggregate: a monitoring rule that started and stopped firing, with its evidence.

Alerts are events like every other fact of a run (``rl.alerts``), so they can be replayed and audited:
each names the rule (and the version of the rule file it came from), the window and the value it saw,
the threshold it compared it with, the run and the newest policy version of that run at the time.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from schemas.base import Event

Severity = Literal["warning", "critical"]


class AlertRaised(Event):
    """A rule's condition held for its whole ``for_s``: the alert fires."""

    event_type: ClassVar[str] = "rlstream.alert.raised"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "rule"

    schema_version: Literal[1] = 1
    rule: str = Field(min_length=1)
    #: the version of the rule file the rule came from
    rules_version: int = Field(ge=1)
    severity: Severity
    summary: str
    #: the run the evidence is about (None: every run, e.g. dead letters)
    run_id: str | None = None
    #: the signal measured, over the last ``window_s`` seconds
    signal: str
    window_s: float = Field(gt=0)
    #: "value": the signal itself; "change": its change since the window before
    measure: Literal["value", "change"] = "value"
    op: Literal[">", ">=", "<", "<="]
    threshold: float
    value: float
    for_s: float = Field(ge=0)
    #: when the condition first held (stream time, epoch milliseconds)
    since_ms: int = Field(ge=0)
    policy_version: int | None = Field(default=None, ge=0)

    def identity(self) -> tuple[str, ...]:
        # one firing of one rule for one run: a replay or a re-evaluation writes the same id
        return (self.rule, self.run_id or "*", str(self.since_ms))


class AlertResolved(Event):
    """A firing alert's condition no longer holds."""

    event_type: ClassVar[str] = "rlstream.alert.resolved"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "rule"

    schema_version: Literal[1] = 1
    rule: str = Field(min_length=1)
    rules_version: int = Field(ge=1)
    run_id: str | None = None
    signal: str
    #: the value that no longer met the threshold (None: no data in the window any more)
    value: float | None = None
    threshold: float
    #: the ``since_ms`` of the firing it ends, and how long it fired
    since_ms: int = Field(ge=0)
    fired_s: float = Field(ge=0)
    policy_version: int | None = Field(default=None, ge=0)

    def identity(self) -> tuple[str, ...]:
        return (self.rule, self.run_id or "*", str(self.since_ms), "resolved")
