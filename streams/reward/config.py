"""Configuration of the reward functions (composed into the one settings object by ``rlstream``).

A reward function's configuration is part of its identity: the same name, version and configuration
always give the same score for the same execution.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from schemas.rollout import MAX_RESULT_CHARS
from streams.reward.literals import CompareOptions


class CompareConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    int_float: Literal["strict", "float_accepts_int", "numeric"] = Field(
        default="numeric",
        description="strict: int and float never match; float_accepts_int: an expected float accepts an "
        "int; numeric: both ways by value. bool never matches a number under any policy",
    )
    float_rel_tol: float = Field(default=1e-9, ge=0, le=1)
    float_abs_tol: float = Field(default=1e-6, ge=0, le=1)
    nan_equal: bool = True
    #: the sandbox reports no longer repr than ``MAX_RESULT_CHARS``: a larger value changes nothing
    max_repr_chars: int = Field(default=MAX_RESULT_CHARS, ge=1)

    def options(self) -> CompareOptions:
        return CompareOptions(
            int_float=self.int_float,
            float_rel_tol=self.float_rel_tol,
            float_abs_tol=self.float_abs_tol,
            nan_equal=self.nan_equal,
            max_repr_chars=self.max_repr_chars,
        )


class RewardWeights(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    correctness: float = Field(default=1.0, gt=0)
    quality: float = Field(default=0.1, ge=0)
    efficiency: float = Field(default=0.1, ge=0)
    security: float = Field(default=0.2, ge=0)
    #: code similarity to the task's reference (code-v2 on): measured and reported, not rewarded unless set
    similarity: float = Field(default=0.0, ge=0)


class RewardConfig(BaseModel):
    """Weights and policies of the ``code`` reward function.

    total = w_c * correctness + passing * (w_q * quality + w_e * efficiency) - w_s * security, where
    correctness is 1 for a program that passes every case and ``partial_credit * pass_fraction``
    otherwise, and quality, efficiency and security are in [0, 1]. Quality and efficiency count only
    for passing programs, so they can never lift a failing one; the validator below keeps every
    passing program above every failing one even at the worst security finding.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    weights: RewardWeights = RewardWeights()
    #: share of the correctness weight a failing program can earn by its pass fraction (0: all-or-nothing)
    partial_credit: float = Field(default=0.0, ge=0.0, lt=1.0)
    compare: CompareConfig = CompareConfig()
    #: lint findings at which the lint part of quality reaches 0
    lint_findings_cap: int = Field(default=10, ge=1)
    #: McCabe complexity at or below which the complexity part of quality is full (or the reference's)
    complexity_budget: int = Field(default=10, ge=1)
    #: a program up to this many times the reference's size gets the full length part of quality
    length_ratio_budget: float = Field(default=2.0, ge=1.0)
    #: added to both runtimes before taking their ratio, so timer noise on tiny programs cancels out
    efficiency_floor_s: float = Field(default=0.001, ge=0.0)
    #: security findings at which the security penalty is full
    security_findings_cap: int = Field(default=3, ge=1)
    #: ruff rules selected for the lint part of quality
    lint_select: tuple[str, ...] = ("E9", "F", "B", "SIM", "C4", "PLR1714", "RET")
    ruff_path: str | None = Field(
        default=None, description="ruff binary; None: next to the interpreter, then PATH"
    )

    @model_validator(mode="after")
    def _passing_beats_failing(self) -> RewardConfig:
        w = self.weights
        if w.security >= w.correctness * (1.0 - self.partial_credit):
            raise ValueError(
                "weights.security must stay below weights.correctness * (1 - partial_credit): a passing "
                "program with security findings would otherwise score below a failing one"
            )
        return self


def config_fingerprint(config: BaseModel, default: BaseModel, *, exclude: Any = None) -> str:
    """ "" for the default configuration, else ``+`` and 8 hex digits of its content: appended to a
    version, it keeps events scored under different weights from sharing an event id. ``exclude``
    leaves out settings a version does not use (added after it, so its fingerprints stay as they were)."""
    dumped = config.model_dump(mode="json", exclude=exclude)
    if dumped == default.model_dump(mode="json", exclude=exclude):
        return ""
    body = json.dumps(dumped, sort_keys=True, separators=(",", ":"))
    return "+" + hashlib.sha256(body.encode()).hexdigest()[:8]
