"""Configuration of the learner (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from schemas.policy import POLICY_REF


class DistributedConfig(BaseModel):
    """How this process joins the training group.

    ``single``: one process, the engine sets up the rank environment itself from these fields.
    ``external``: a launcher (``deepspeed``, ``torchrun``) already set RANK, WORLD_SIZE, ... for every
    rank; the engine leaves them alone.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    launcher: Literal["single", "external"] = "single"
    master_addr: str = "127.0.0.1"
    master_port: int = Field(default=29500, ge=1, le=65535)
    #: CPU only: build DeepSpeed's shared-memory all-reduce op (a C++ compile of 1-3 minutes on first
    #: use). It only speeds up several CPU ranks on one machine; a single process never needs it.
    cpu_shm_comm: bool = False


class DPOConfig(BaseModel):
    """Direct preference optimisation (``learner/dpo.py``): pairs within a group, a frozen reference."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: β: how far the policy may move from the reference for a given preference (larger: less far)
    beta: float = Field(default=0.1, gt=0)
    #: two accepted samples pair only when their rewards differ by at least this much
    min_margin: float = Field(default=0.1, ge=0)
    #: pairs taken from one group, widest reward gap first (a group of n makes up to n(n-1)/2)
    max_pairs_per_group: int = Field(default=16, ge=1)


class LearnerConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    #: the objective trained on the experience stream: ``grpo`` (the clipped surrogate on
    #: group-relative advantages, ``learner/grpo.py``) or ``dpo`` (preference pairs within each group
    #: against the frozen starting policy, ``learner/dpo.py``)
    algorithm: Literal["grpo", "dpo"] = "grpo"
    dpo: DPOConfig = DPOConfig()
    #: ``deepspeed`` (the real engine) or ``torch`` (a plain single-process loop with the same
    #: interface: no ZeRO, for machines where DeepSpeed is unusable and as the benchmark baseline)
    backend: Literal["deepspeed", "torch"] = "deepspeed"
    #: ``auto``: cuda when torch sees a GPU, else cpu
    accelerator: Literal["auto", "cpu", "cuda"] = "auto"
    #: ``auto``: bf16 on a GPU that supports it, else fp32 (CPU bf16 matmuls are slower than fp32
    #: on most CPUs without AMX)
    precision: Literal["auto", "bf16", "fp32"] = "auto"
    #: ZeRO stage: 0 (plain data parallel), 1 (optimizer state partitioned), 2 (+ gradients), 3 (+ the
    #: parameters themselves, gathered layer by layer for each forward and backward)
    zero_stage: int = Field(default=2, ge=0, le=3)
    #: ``cpu``: the optimizer state and step live in host memory (ZeRO stage 1-3), freeing accelerator
    #: memory for a larger model at the price of host-device copies every step
    offload_optimizer: Literal["none", "cpu"] = "none"
    distributed: DistributedConfig = DistributedConfig()
    seed: int = 0

    # optimizer
    lr: float = Field(default=1e-6, gt=0)
    weight_decay: float = Field(default=0.0, ge=0)
    adam_betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = Field(default=1e-8, gt=0)
    max_grad_norm: float = Field(default=1.0, gt=0)

    # objective (see learner/grpo.py)
    clip_eps_low: float = Field(default=0.2, gt=0, lt=1)
    clip_eps_high: float = Field(default=0.2, gt=0)
    #: truncation cap C of the importance ratio against the behaviour policy
    is_cap: float = Field(default=2.0, ge=1.0)
    #: weight of k3 KL to the reference policy (the initial weights); 0 keeps no reference copy
    kl_coef: float = Field(default=0.0, ge=0)
    #: decoupled PPO: trust region against the learner's own pre-update weights, staleness corrected
    #: by a separate truncated importance weight
    decoupled: bool = False
    #: gradient steps taken on each batch (>1 makes the clip bite; 1 is the streaming default)
    updates_per_batch: int = Field(default=1, ge=1, le=64)
    #: must equal the generator's sampling temperature, or the recorded behaviour log-probs describe
    #: another distribution than the one the learner scores
    temperature: float = Field(default=1.0, gt=0)

    # data
    #: samples whose policy version lags the learner's by more than this are dropped (and counted)
    staleness_bound: int = Field(default=4, ge=0)
    #: padded tokens (rows x longest row) per batch; bounds activation memory of one step
    token_budget: int = Field(default=8192, ge=16)
    pad_token_id: int = Field(default=0, ge=0)
    #: group ids of the last N experiences trained or dropped, kept in every checkpoint: an experience
    #: written again (the Faust runtime delivers at least once) is recognised and never trained twice
    resent_window_groups: int = Field(default=4096, ge=0)

    # checkpoints and publication
    checkpoint_dir: Path = Path("checkpoints")
    #: complete checkpoints kept on disk (older ones are removed after a newer one is complete)
    keep_checkpoints: int = Field(default=3, ge=1)
    #: publish a new policy version (weights + PolicyPublished) every K optimizer steps
    publish_every: int = Field(default=1, ge=1)
    #: where published weights go (a registered URI scheme); ``None``: file://<checkpoint_dir>/published
    publish_uri: str | None = None
    #: the published version this run's training started from, as ``RUN_ID:vN`` (``rlstream run
    #: --from-policy`` sets it): every version the learner publishes names it, so the lineage of an RL
    #: version leads on to the SFT stage before it. None: the model's own weights.
    base_policy: str | None = Field(default=None, pattern=POLICY_REF)

    # availability
    #: a warm standby learner beside the active one in ``rlstream run`` (built, waiting on the run's
    #: lease, it takes over within a second of the active's death instead of a restart's start-up):
    #: ``auto`` where the machine's available memory holds a second learner, ``on``, ``off``
    standby: Literal["auto", "on", "off"] = "auto"

    @model_validator(mode="after")
    def _offload_needs_zero(self) -> LearnerConfig:
        if self.offload_optimizer != "none" and (self.backend != "deepspeed" or self.zero_stage == 0):
            raise ValueError(
                "offload_optimizer needs the deepspeed backend at zero_stage 1-3: stage 0 keeps no "
                "partitioned optimizer to move"
            )
        return self

    @model_validator(mode="after")
    def _cap_covers_clip(self) -> LearnerConfig:
        if self.is_cap < 1.0 + self.clip_eps_high:
            raise ValueError(
                f"is_cap ({self.is_cap}) must be >= 1 + clip_eps_high ({1.0 + self.clip_eps_high}): "
                "a cap inside the trust region would truncate ratios the clip still lets through"
            )
        return self


def default_checkpoint_dir(home: Path, run_id: str) -> Path:
    """A run's learner folder (checkpoints, training log, lease) when none is configured."""
    return home / "runs" / run_id / "learner"
