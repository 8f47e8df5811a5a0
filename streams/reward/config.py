"""Configuration of the reward functions (composed into the one settings object by ``rlstream``).

A reward function's configuration is part of its identity: the same name, version and configuration
always give the same score for the same execution.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from streams.reward.literals import MAX_REPR_CHARS, CompareOptions


class CompareConfig(BaseModel):
    """How returned values are compared with expected ones (see ``streams/reward/literals.py``).

    The defaults are Python's own ``==`` made type-strict, with a rounding-level relative tolerance
    where the expected value is a float; an expected int is always exact."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    int_float: Literal["strict", "float_accepts_int", "numeric"] = Field(
        default="numeric",
        description="strict: int and float never match; float_accepts_int: an expected float accepts an "
        "int; numeric: both ways by exact value. bool never matches a number under any policy",
    )
    float_rel_tol: float = Field(
        default=1e-9, ge=0, le=1, description="relative tolerance where the expected value is a float"
    )
    float_abs_tol: float = Field(
        default=0.0, ge=0, le=1, description="absolute tolerance where the expected value is a float"
    )
    int_tolerance: bool = Field(
        default=False,
        description="the float tolerances also apply to an expected int meeting a float (code-v1's rule)",
    )
    nan_equal: bool = True
    float_ulps: int = Field(
        default=0,
        ge=0,
        le=1 << 20,
        description="an expected float also matches a float within this many units in its last place",
    )
    reference_band: bool = Field(
        default=False,
        description="a case also accepts the answer the task's reference gave in the same backend where "
        "it differs from the expected value in float values alone",
    )
    #: the sandbox reports no longer repr than ``MAX_RESULT_CHARS``: a larger value changes nothing
    max_repr_chars: int = Field(default=MAX_REPR_CHARS, ge=1)

    def options(self) -> CompareOptions:
        return CompareOptions(
            int_float=self.int_float,
            float_rel_tol=self.float_rel_tol,
            float_abs_tol=self.float_abs_tol,
            int_tolerance=self.int_tolerance,
            nan_equal=self.nan_equal,
            max_repr_chars=self.max_repr_chars,
            float_ulps=self.float_ulps,
            reference_band=self.reference_band,
        )


#: how code-v1 (and code-v2, which adds similarity to it) compared: a float within rel 1e-9 / abs 1e-6
#: of an expected int passed (kept so they re-score their history exactly; code-v3 compares ints exactly)
V1_COMPARE = CompareConfig(float_abs_tol=1e-6, int_tolerance=True)


class RewardWeights(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    correctness: float = Field(default=1.0, gt=0)
    quality: float = Field(default=0.1, ge=0)
    efficiency: float = Field(default=0.1, ge=0)
    security: float = Field(default=0.2, ge=0)
    #: code similarity to the task's reference (code-v2 on): measured and reported, not rewarded unless set
    similarity: float = Field(default=0.0, ge=0)
    #: cost of each turn an episode took beyond the first (code-v4 on; a passing episode only, and never
    #: more than half the margin by which a pass beats a failure)
    turns: float = Field(default=0.1, ge=0)


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
    #: how returned values are compared; None: the reward function's own rule (code-v1 and code-v2:
    #: ``V1_COMPARE``; code-v3: ``CompareConfig()``)
    compare: CompareConfig | None = None
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
    dumped = _as_before(config.model_dump(mode="json", exclude=exclude))
    if dumped == _as_before(default.model_dump(mode="json", exclude=exclude)):
        return ""
    body = json.dumps(dumped, sort_keys=True, separators=(",", ":"))
    return "+" + hashlib.sha256(body.encode()).hexdigest()[:8]


def legacy_fingerprint(config: RewardConfig, *, exclude: Any = None) -> str:
    """A configuration's fingerprint as code-v1 and code-v2 compute it: in the shape configurations had
    before ``compare`` could be left to the function and gained ``int_tolerance`` (the comparison
    spelled out, code-v1's rule where none is set), so their ``v1+<hash>`` and ``v2+<hash>`` labels on
    the log stay what they were. The ruff path says where the linter is, not how it scores."""

    def shaped(c: RewardConfig) -> dict[str, Any]:
        body: dict[str, Any] = c.model_copy(update={"ruff_path": None}).model_dump(
            mode="json", exclude=exclude
        )
        body["compare"] = _compare_as_before(
            (c.compare or V1_COMPARE).model_dump(mode="json", exclude={"int_tolerance"})
        )
        return body

    mine = shaped(config)
    if mine == shaped(RewardConfig()):
        return ""
    return (
        "+" + hashlib.sha256(json.dumps(mine, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:8]
    )


#: comparison settings added after configurations were first fingerprinted, with the value that means
#: what configurations meant before them: left out of a fingerprint at that value, so labels stay
_LATER_COMPARE_FIELDS = {"float_ulps": 0, "reference_band": False}


def _compare_as_before(compare: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in compare.items() if _LATER_COMPARE_FIELDS.get(k, object()) != v}


def _as_before(dumped: dict[str, Any]) -> dict[str, Any]:
    if isinstance(dumped.get("compare"), dict):
        return {**dumped, "compare": _compare_as_before(dumped["compare"])}
    if "float_ulps" in dumped:  # a CompareConfig itself
        return _compare_as_before(dumped)
    return dumped
