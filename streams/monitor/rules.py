"""Alert rules: a versioned YAML file (``rules.yaml`` beside this module by default) read into typed
rules, with errors that name the rule and field at fault."""

from __future__ import annotations

import operator
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field, ValidationError

from schemas.alert import Severity
from schemas.base import FrozenModel
from schemas.errors import InputError

DEFAULT_RULES = Path(__file__).with_name("rules.yaml")

Signal = Literal[
    "reward_mean",
    "mask_rate",
    "flaky_tasks",
    "sandbox_infra_error_rate",
    "sandbox_p95_s",
    "dead_letters",
    "learner_stall_s",
    "generator_lag",
]
Op = Literal[">", ">=", "<", "<="]
OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
}


class Rule(FrozenModel):
    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    summary: str = ""
    severity: Severity = "warning"
    signal: Signal
    #: the signal itself, or its change since the window before
    measure: Literal["value", "change"] = "value"
    window_s: float = Field(gt=0)
    op: Op
    threshold: float
    #: how long the condition must hold before the alert fires
    for_s: float = Field(default=0.0, ge=0)

    def holds(self, value: float) -> bool:
        return OPS[self.op](value, self.threshold)


class RuleSet(FrozenModel):
    version: int = Field(ge=1)
    rules: tuple[Rule, ...]


def load_rules(path: Path = DEFAULT_RULES) -> RuleSet:
    """Read and check a rule file; raises :class:`InputError` naming the rule and field at fault."""
    try:
        doc = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"cannot read the alert rules {path}: {exc}") from exc
    try:
        rules = RuleSet.model_validate(doc)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = list(first["loc"])
        where = ".".join(str(p) for p in loc)
        if len(loc) >= 2 and loc[0] == "rules" and isinstance(loc[1], int) and isinstance(doc, dict):
            entries = doc.get("rules") or []
            entry = entries[loc[1]] if loc[1] < len(entries) else None
            name = entry.get("name") if isinstance(entry, dict) else None
            where = f"rule {name or loc[1]!r}, field {'.'.join(str(p) for p in loc[2:]) or '(the rule)'}"
        raise InputError(f"alert rules {path}: {where}: {first['msg']}") from exc
    names = [r.name for r in rules.rules]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"alert rules {path}: rule names must be unique: {', '.join(twice)} appear twice")
    return rules
