"""Learner configuration: what a user can get wrong is refused with the reason."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from learner.config import LearnerConfig
from learner.engine import resolve_accelerator, resolve_bf16


def test_defaults_are_consistent() -> None:
    c = LearnerConfig()
    assert (c.backend, c.zero_stage, c.is_cap, c.staleness_bound, c.publish_every) == (
        "deepspeed",
        2,
        2.0,
        4,
        1,
    )


def test_cap_inside_the_clip_range_is_refused() -> None:
    with pytest.raises(ValidationError, match="is_cap"):
        LearnerConfig(is_cap=1.1, clip_eps_high=0.2)


def test_zero_3_and_offload_are_accepted_and_offload_without_zero_is_refused() -> None:
    assert LearnerConfig(zero_stage=3, offload_optimizer="cpu").zero_stage == 3
    with pytest.raises(ValidationError, match="zero_stage"):
        LearnerConfig(zero_stage=4)
    with pytest.raises(ValidationError, match="offload_optimizer"):
        LearnerConfig(zero_stage=0, offload_optimizer="cpu")
    with pytest.raises(ValidationError, match="offload_optimizer"):
        LearnerConfig(backend="torch", offload_optimizer="cpu")


def test_auto_precision_on_cpu_is_fp32() -> None:
    c = LearnerConfig(accelerator="cpu")
    assert resolve_accelerator(c) == "cpu"
    assert resolve_bf16(c, "cpu") is False
    assert resolve_bf16(LearnerConfig(accelerator="cpu", precision="bf16"), "cpu") is True
