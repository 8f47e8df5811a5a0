"""The learner engine: one optimizer step per batch with DeepSpeed (ZeRO 0-2) on GPU or CPU, checkpoints
and weight export. The learning rules themselves live in ``learner/grpo.py``, ``learner/dpo.py`` and
``learner/sft.py``.

``backend="torch"`` runs the same interface as a plain single-process torch loop (no ZeRO): for
machines where DeepSpeed is unusable and as the benchmark's baseline.
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import logging
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file
from torch import Tensor, nn

from learner.batch import Batch
from learner.checkpoint import STATE_DIR, WEIGHTS, CheckpointDir, CheckpointManifest
from learner.config import LearnerConfig
from learner.dpo import dpo_loss, sequence_logprobs
from learner.grpo import grpo_loss, token_logprobs
from learner.sft import sft_loss
from learner.store import file_sha256, fsync_dir, fsync_file, store_for
from schemas.errors import DependencyError, UsageError
from schemas.policy import ConsumedOffset, PolicyPublished, Stage

log = logging.getLogger(__name__)

_DS_TAG = "ds"
#: DeepSpeed's Muon optimizer module (see :func:`_import_deepspeed`)
_DS_MUON = "deepspeed.runtime.zero.muon.muon_optimizer"


def resolve_accelerator(config: LearnerConfig) -> str:
    if config.accelerator == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if config.accelerator == "cuda" and not torch.cuda.is_available():
        raise UsageError(
            "learner accelerator is cuda but torch sees no GPU",
            hint="set RLSTREAM_LEARNER__ACCELERATOR=cpu (or auto)",
        )
    return config.accelerator


def resolve_bf16(config: LearnerConfig, accelerator: str) -> bool:
    if config.precision == "bf16":
        return True
    if config.precision == "fp32":
        return False
    return accelerator == "cuda" and torch.cuda.is_bf16_supported()


def prepare_process(config: LearnerConfig, accelerator: str) -> None:
    """Set the process environment DeepSpeed and torch.distributed read, from the config.

    DeepSpeed picks its accelerator from DS_ACCELERATOR when first asked, and ``init_distributed``
    needs the rank variables even for a single process (without them it looks for MPI).
    """
    os.environ["DS_ACCELERATOR"] = accelerator
    dist = config.distributed
    if dist.launcher == "single":
        os.environ.update(
            RANK="0",
            WORLD_SIZE="1",
            LOCAL_RANK="0",
            MASTER_ADDR=dist.master_addr,
            MASTER_PORT=str(dist.master_port),
        )


def _import_deepspeed(config: LearnerConfig, accelerator: str) -> Any:
    try:
        import deepspeed
        from deepspeed.accelerator import get_accelerator
    except ImportError as exc:  # pragma: no cover - deepspeed is a project dependency
        raise DependencyError(
            f"deepspeed cannot be imported: {exc}",
            hint="run `uv sync --frozen`, or set RLSTREAM_LEARNER__BACKEND=torch",
        ) from exc
    name = get_accelerator().device_name()
    if name != accelerator:
        raise DependencyError(
            f"DeepSpeed chose accelerator {name!r}, the learner is configured for {accelerator!r}",
            hint="start the learner in a fresh process (DeepSpeed fixes its accelerator on first use)",
        )
    if accelerator == "cpu" and not config.distributed.cpu_shm_comm:
        # The shared-memory all-reduce is a C++ op compiled on first use (minutes; a killed compile
        # leaves a lock that hangs later runs). It only helps several CPU ranks, so skip it by default.
        deepspeed.ops.__compatible_ops__["deepspeed_shm_comm"] = False
    _import_muon_eagerly()
    return deepspeed


def _import_muon_eagerly() -> None:
    """Import DeepSpeed's Muon optimizer with its kernels left uncompiled.

    DeepSpeed imports that module when it builds an engine (its ZeRO optimizer check) and in ZeRO
    steps, and the module decorates its kernels with ``torch.compile`` on import, which loads torch's
    inductor: 5-9 s on 2 cores, most of a restarted learner's start-up. The learner's optimizer is
    AdamW, so Muon never runs here; imported once with DeepSpeed's compile decorator standing in as a
    no-op, the module stays in ``sys.modules`` and every later import of it is free.
    """
    if _DS_MUON in sys.modules:
        return
    from deepspeed.runtime import compiler

    decorator = compiler.compile
    compiler.compile = lambda: compiler.dummy_decorator
    try:
        importlib.import_module(_DS_MUON)
    except ImportError:  # a DeepSpeed without Muon: nothing to import
        pass
    finally:
        compiler.compile = decorator


class LearnerEngine:
    """Wraps a causal LM (a ``transformers`` model or anything whose forward takes ``input_ids`` and
    ``attention_mask`` and returns ``.logits``) with the optimizer, the GRPO step and checkpoints.

    ``policy_version`` is the version of the weights as generators know it: it rises by one with every
    :meth:`publish`. ``step`` counts optimizer steps.
    """

    def __init__(self, model: nn.Module, config: LearnerConfig) -> None:
        self.config = config
        self.accelerator = resolve_accelerator(config)
        self.bf16 = resolve_bf16(config, self.accelerator)
        self.step = 0
        self.policy_version = 0
        self.checkpoints = CheckpointDir(config.checkpoint_dir, keep=config.keep_checkpoints)
        torch.manual_seed(config.seed)

        self._ref: nn.Module | None = None
        if config.kl_coef > 0 or config.algorithm == "dpo":
            # the reference policy is the starting point: a frozen copy taken before any update (a
            # restarted learner builds it from the same starting weights, not from its checkpoint)
            self._ref = copy.deepcopy(model).eval()
            for p in self._ref.parameters():
                p.requires_grad_(False)

        self._ds: Any = None
        if config.backend == "deepspeed":
            prepare_process(config, self.accelerator)
            deepspeed = _import_deepspeed(config, self.accelerator)
            if self.accelerator == "cuda":
                local_rank = int(os.environ.get("LOCAL_RANK", "0"))
                torch.cuda.set_device(local_rank)
            optimizer = self._make_optimizer(model)
            deepspeed.init_distributed(dist_backend="nccl" if self.accelerator == "cuda" else "gloo")
            self._ds, self._optimizer, _, _ = deepspeed.initialize(
                model=model, optimizer=optimizer, config=self.deepspeed_config()
            )
            self.device = torch.device(self._ds.device)
            self._module: nn.Module = self._ds.module
        else:
            self.device = torch.device("cuda", 0) if self.accelerator == "cuda" else torch.device("cpu")
            self._module = model.to(self.device)
            self._optimizer = self._make_optimizer(self._module)
        if self._ref is not None:
            self._ref.to(self.device, dtype=torch.bfloat16 if self.bf16 else torch.float32)
        self._module.train()

    # -- set-up -----------------------------------------------------------------------------------
    def _make_optimizer(self, model: nn.Module) -> torch.optim.Optimizer:
        # A client torch AdamW: DeepSpeed's own Adam is a C++ op compiled at first use.
        c = self.config
        return torch.optim.AdamW(
            [p for p in model.parameters() if p.requires_grad],
            lr=c.lr,
            betas=c.adam_betas,
            eps=c.adam_eps,
            weight_decay=c.weight_decay,
        )

    def deepspeed_config(self) -> dict[str, Any]:
        c = self.config
        zero: dict[str, Any] = {"stage": c.zero_stage}
        if c.offload_optimizer == "cpu":
            zero["offload_optimizer"] = {"device": "cpu", "pin_memory": self.accelerator == "cuda"}
        return {
            # batches are sized by the token budget, not by a row count: one micro-batch per step
            "train_micro_batch_size_per_gpu": 1,
            "gradient_accumulation_steps": 1,
            "gradient_clipping": c.max_grad_norm,
            "zero_optimization": zero,
            "bf16": {"enabled": self.bf16},
            "zero_allow_untested_optimizer": True,
            # the offloaded step runs the client torch AdamW on host memory: DeepSpeed's own CPU Adam is
            # a C++ op compiled at first use (minutes) for the same update
            "zero_force_ds_cpu_optimizer": False,
            "steps_per_print": 2**31 - 1,
            "wall_clock_breakdown": False,
        }

    @property
    def module(self) -> nn.Module:
        """The trained model itself (unwrapped)."""
        return self._module

    @property
    def vocab_size(self) -> int | None:
        """Rows of the input embedding: a token id at or above it (or below 0) cannot be trained on."""
        get = getattr(self._module, "get_input_embeddings", None)
        embedding = get() if callable(get) else None
        return int(embedding.num_embeddings) if isinstance(embedding, nn.Embedding) else None

    @property
    def rank(self) -> int:
        return int(self._ds.global_rank) if self._ds is not None else 0

    @property
    def world_size(self) -> int:
        return int(self._ds.world_size) if self._ds is not None else 1

    # -- the step ---------------------------------------------------------------------------------
    def _forward(self, model: Any, batch: Batch) -> Tensor:
        if self._ds is None and self.bf16:
            with torch.autocast(self.device.type, dtype=torch.bfloat16):
                out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask)
        else:
            out = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask)
        logits = out.logits[:, :-1, :]
        return token_logprobs(logits, batch.targets, temperature=self.config.temperature)

    @torch.no_grad()
    def logprobs(self, batch: Batch) -> Tensor:
        """The current policy's log-probs of the batch's target tokens (no gradient)."""
        model = self._ds if self._ds is not None else self._module
        return self._forward(model, batch.to(self.device))

    def _optimize(self, loss: Tensor) -> Any:
        """Back-propagate ``loss`` and take one optimizer step (gradients clipped); the gradient norm."""
        if self._ds is not None:
            self._ds.backward(loss)
            self._ds.step()
            grad_norm = self._ds.get_global_grad_norm()
        else:
            self._optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            grad_norm = torch.nn.utils.clip_grad_norm_(self._module.parameters(), self.config.max_grad_norm)
            self._optimizer.step()
        self.step += 1
        return grad_norm

    def train_step(
        self, batch: Batch, *, staleness_hist: Mapping[int, int] | None = None
    ) -> dict[str, float]:
        """``updates_per_batch`` optimizer steps on one batch; returns the metrics of the last one.

        Metric names are fixed (see ``grpo.METRIC_NAMES``); the staleness histogram, which belongs to
        batch assembly, is passed in and reported as ``staleness_hist.<lag>`` entries.
        """
        c = self.config
        started = time.perf_counter()
        batch = batch.to(self.device)
        model = self._ds if self._ds is not None else self._module
        ref_logprobs = None
        if self._ref is not None:
            with torch.no_grad():
                ref_logprobs = self._forward(self._ref, batch)
        proximal: Tensor | None = None
        metrics: dict[str, float] = {}
        for _ in range(c.updates_per_batch):
            logprobs = self._forward(model, batch)
            if c.decoupled and proximal is None:
                # the weights before this batch's first update are the proximal policy
                proximal = logprobs.detach()
            out = grpo_loss(
                logprobs,
                batch.behaviour_logprobs,
                batch.advantages,
                batch.loss_mask,
                clip_eps_low=c.clip_eps_low,
                clip_eps_high=c.clip_eps_high,
                is_cap=c.is_cap,
                proximal_logprobs=proximal,
                ref_logprobs=ref_logprobs,
                kl_coef=c.kl_coef,
            )
            grad_norm = self._optimize(out.loss)
            metrics = dict(out.metrics)
            if grad_norm is not None:
                metrics["grad_norm"] = float(grad_norm)
        return self._timed(metrics, batch, started, staleness_hist)

    def _timed(
        self,
        metrics: dict[str, float],
        batch: Batch,
        started: float,
        staleness_hist: Mapping[int, int] | None,
    ) -> dict[str, float]:
        """A training step's figures completed: throughput over its updates (once the device is done)
        and the staleness counts of the samples it trained."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        elapsed = time.perf_counter() - started
        metrics["tokens_per_s"] = batch.num_tokens * self.config.updates_per_batch / max(elapsed, 1e-9)
        for lag, count in sorted((staleness_hist or {}).items()):
            metrics[f"staleness_hist.{lag}"] = float(count)
        return metrics

    def sft_step(self, batch: Batch) -> dict[str, float]:
        """One optimizer step of the supervised loss (``learner/sft.py``) on ``batch``: cross-entropy on
        its completion tokens (``loss_mask``), through the same engine, optimizer and clipping as
        :meth:`train_step`. Returns ``sft_loss``, ``grad_norm`` and ``tokens_per_s``."""
        started = time.perf_counter()
        batch = batch.to(self.device)
        model = self._ds if self._ds is not None else self._module
        loss = sft_loss(self._forward(model, batch), batch.loss_mask)
        grad_norm = self._optimize(loss)
        metrics = {"sft_loss": float(loss.detach())}
        if grad_norm is not None:
            metrics["grad_norm"] = float(grad_norm)
        metrics["tokens_per_s"] = batch.num_tokens / max(time.perf_counter() - started, 1e-9)
        return metrics

    def dpo_step(
        self,
        batch: Batch,
        pairs: Sequence[tuple[int, int]],
        *,
        staleness_hist: Mapping[int, int] | None = None,
    ) -> dict[str, float]:
        """``updates_per_batch`` optimizer steps of the DPO loss (``learner/dpo.py``) on ``pairs`` of
        the batch's rows, (chosen row, rejected row) each: every row is scored once per update, the
        frozen reference once per call. Returns ``loss``, ``dpo_margin`` (mean implicit-reward margin),
        ``dpo_accuracy`` (pairs whose chosen side has the higher implicit reward), the mean implicit
        reward of each side, ``dpo_pairs``, ``grad_norm``, ``tokens_per_s`` and the staleness counts;
        the margin and accuracy are those of the weights before the last update."""
        if self._ref is None:
            raise UsageError("dpo_step needs the frozen reference policy", hint="set learner.algorithm=dpo")
        c = self.config
        started = time.perf_counter()
        batch = batch.to(self.device)
        model = self._ds if self._ds is not None else self._module
        chosen = torch.tensor([p[0] for p in pairs], dtype=torch.long, device=self.device)
        rejected = torch.tensor([p[1] for p in pairs], dtype=torch.long, device=self.device)
        with torch.no_grad():
            reference = sequence_logprobs(self._forward(self._ref, batch), batch.loss_mask)
        metrics: dict[str, float] = {}
        for _ in range(c.updates_per_batch):
            policy = sequence_logprobs(self._forward(model, batch), batch.loss_mask)
            out = dpo_loss(
                policy[chosen], policy[rejected], reference[chosen], reference[rejected], beta=c.dpo.beta
            )
            grad_norm = self._optimize(out.loss)
            metrics = {
                "loss": float(out.loss.detach()),
                "dpo_margin": out.margin,
                "dpo_accuracy": out.accuracy,
                "dpo_chosen_reward": float(out.chosen_reward.mean()),
                "dpo_rejected_reward": float(out.rejected_reward.mean()),
                "dpo_pairs": float(len(pairs)),
            }
            if grad_norm is not None:
                metrics["grad_norm"] = float(grad_norm)
        return self._timed(metrics, batch, started, staleness_hist)

    # -- weights and checkpoints ------------------------------------------------------------------
    @contextlib.contextmanager
    def whole_parameters(self) -> Iterator[None]:
        """Every parameter of :attr:`module` whole for the block's length. Under ZeRO-3 each rank holds
        a slice of every parameter, so this gathers them, collectively: every rank enters together.
        Otherwise there is nothing to do."""
        if self._ds is not None and self._ds.zero_optimization_stage() == 3:
            import deepspeed

            with deepspeed.zero.GatheredParameters(list(self._module.parameters()), modifier_rank=None):
                yield
        else:
            yield

    def full_state_dict(self) -> dict[str, Tensor]:
        """The whole model's weights, on the host, one tensor per state-dict key (tied weights twice;
        ZeRO keeps parameters as views into one flat buffer); collective under ZeRO-3
        (:meth:`whole_parameters`)."""
        with self.whole_parameters():
            return {
                name: t.detach().to("cpu", copy=True).contiguous()
                for name, t in self._module.state_dict().items()
            }

    def export_weights(self, path: Path, tensors: dict[str, Tensor] | None = None) -> str:
        """Write the full weights (``tensors``, else :meth:`full_state_dict`) as safetensors
        (atomically) and return their sha256: a reader needs nothing but
        ``model.load_state_dict(safetensors.torch.load_file(path))``.
        """
        tmp = path.with_name(f".{path.name}.tmp")
        if tensors is None:
            tensors = self.full_state_dict()
        save_file(
            tensors, str(tmp), metadata={"step": str(self.step), "policy_version": str(self.policy_version)}
        )
        del tensors
        fsync_file(tmp)
        os.replace(tmp, path)
        fsync_dir(path.parent)
        return file_sha256(path)

    def save_checkpoint(
        self, consumed: Sequence[ConsumedOffset] = (), *, extra: Mapping[str, Any] | None = None
    ) -> tuple[Path, CheckpointManifest]:
        """An atomic checkpoint of model, optimizer, config, step, policy version and offsets."""
        tmp = self.checkpoints.tmp_path(self.step)
        if self.rank == 0:
            tmp = self.checkpoints.begin(self.step)
        self._barrier()
        if self._ds is not None:
            # every rank writes its own ZeRO partition of the optimizer state
            self._ds.save_checkpoint(str(tmp / STATE_DIR), tag=_DS_TAG, save_latest=False)
        elif self.rank == 0:
            (tmp / STATE_DIR).mkdir()
            torch.save({"optimizer": self._optimizer.state_dict()}, tmp / STATE_DIR / "optimizer.pt")
        self._barrier()
        # every rank takes part in gathering ZeRO-3's slices; rank 0 writes them
        gathered = self.full_state_dict() if self._ds is not None and self.config.zero_stage == 3 else None
        result: tuple[Path, CheckpointManifest] | None = None
        if self.rank == 0:
            sha = self.export_weights(tmp / WEIGHTS, gathered)
            del gathered
            manifest = CheckpointManifest(
                step=self.step,
                policy_version=self.policy_version,
                consumed=tuple(consumed),
                config=self.config.model_dump(mode="json"),
                backend=self.config.backend,
                zero_stage=self.config.zero_stage if self._ds is not None else 0,
                world_size=self.world_size,
                weights_sha256=sha,
                created_at=datetime.now(UTC).isoformat(),
                extra=dict(extra or {}),
            )
            result = (self.checkpoints.commit(tmp, manifest), manifest)
        self._barrier()
        if result is None:
            found = self.checkpoints.newest()
            assert found is not None
            result = found
        return result

    def load_checkpoint(self, path: Path | None = None) -> CheckpointManifest | None:
        """Restore the newest complete checkpoint (or ``path``); None when there is none to load."""
        if path is None:
            found = self.checkpoints.newest()
            if found is None:
                return None
            path, manifest = found
        else:
            manifest = self.checkpoints.verify(path)
        if manifest.backend != self.config.backend or manifest.world_size != self.world_size:
            raise UsageError(
                f"checkpoint {path} was written by backend {manifest.backend} with "
                f"{manifest.world_size} rank(s); this learner runs {self.config.backend} with "
                f"{self.world_size}",
                hint="resume with the same backend and world size, or start from its model.safetensors",
            )
        if self._ds is not None:
            load_path, _ = self._ds.load_checkpoint(
                str(path / STATE_DIR),
                tag=_DS_TAG,
                load_optimizer_states=True,
                load_lr_scheduler_states=False,
                load_module_strict=True,
            )
            if load_path is None:
                raise UsageError(f"DeepSpeed found no state under {path / STATE_DIR}")
        else:
            self._module.load_state_dict(load_file(str(path / WEIGHTS), device=str(self.device)))
            state = torch.load(path / STATE_DIR / "optimizer.pt", map_location=self.device, weights_only=True)
            self._optimizer.load_state_dict(state["optimizer"])
        self.step = manifest.step
        self.policy_version = manifest.policy_version
        return manifest

    def publish(
        self,
        *,
        run_id: str,
        consumed: Sequence[ConsumedOffset] = (),
        trained_sample_ids: Sequence[str] = (),
        metrics: Mapping[str, float] | None = None,
        model_name: str = "",
        resume: Mapping[str, Any] | None = None,
        stage: Stage = "rl",
    ) -> PolicyPublished:
        """Bump the policy version, checkpoint (with the offsets), put the weights into the store and
        return the PolicyPublished event to emit.

        Everything the event says is written into the checkpoint first, so a learner that dies after
        the checkpoint but before the event reached the log rebuilds the very same event on restart
        (:meth:`republish`; same version, so the same event id) instead of losing or re-numbering it.
        ``resume``: what the caller needs back when it resumes from this checkpoint (kept in ``extra``).
        """
        self.policy_version += 1
        publication = {
            "run_id": run_id,
            "model": model_name,
            "trained_sample_ids": list(trained_sample_ids),
            "metrics": {k: float(v) for k, v in (metrics or {}).items()},
            "stage": stage,
            "base": self.config.base_policy,
            "algorithm": self.config.algorithm if stage == "rl" else None,
        }
        try:
            path, manifest = self.save_checkpoint(
                consumed, extra={**(resume or {}), "publication": publication}
            )
        except BaseException:
            self.policy_version -= 1
            raise
        event = self.republish(path, manifest)
        assert event is not None
        return event

    def republish(self, path: Path, manifest: CheckpointManifest) -> PolicyPublished | None:
        """The PolicyPublished event of a checkpoint written by :meth:`publish` (putting its weights
        into the store again is harmless); None for a checkpoint that was not a publication.
        In a multi-process learner every rank calls it."""
        publication = manifest.extra.get("publication")
        if not isinstance(publication, dict):
            return None
        run_id = str(publication["run_id"])
        base = self.config.publish_uri or (self.config.checkpoint_dir.resolve() / "published").as_uri()
        key = f"{run_id}/v{manifest.policy_version:06d}/{WEIGHTS}"
        # rank 0 writes; every rank gets the same URI (all ranks call this together)
        uri = store_for(base).put(path / WEIGHTS, key) if self.rank == 0 else ""
        if self._ds is not None and self.world_size > 1:
            shared = [uri]
            torch.distributed.broadcast_object_list(shared, src=0)
            uri = str(shared[0])
        return PolicyPublished(
            run_id=run_id,
            policy_version=manifest.policy_version,
            step=manifest.step,
            checkpoint_uri=uri,
            sha256=manifest.weights_sha256,
            model=str(publication.get("model", "")),
            consumed=manifest.consumed,
            trained_sample_ids=tuple(publication.get("trained_sample_ids", ())),
            metrics=dict(publication.get("metrics", {})),
            # a checkpoint written before stages existed was an RL step's
            stage="sft" if publication.get("stage") == "sft" else "rl",
            # a checkpoint written before bases were recorded names none
            base=publication.get("base"),
            # a checkpoint written before algorithms were recorded: what its stage implies (GRPO)
            **({"algorithm": publication["algorithm"]} if "algorithm" in publication else {}),
        )

    def _barrier(self) -> None:
        if self._ds is not None and self.world_size > 1:
            torch.distributed.barrier()
