"""Build the configured policy backend (``hf`` or ``vllm``) from a :class:`GeneratorConfig`."""

from __future__ import annotations

from pathlib import Path

from producers.generator.config import GeneratorConfig
from producers.generator.interface import GenerationBackend
from producers.generator.models import ensure_tiny, load_model, prepare_smollm2
from schemas.errors import DependencyError


def model_folder(config: GeneratorConfig, models_dir: Path) -> Path:
    """The HF folder of the configured model (built or converted on first use)."""
    if config.model == "tiny":
        return ensure_tiny(models_dir, config.seed)
    if config.model == "smollm2":
        return prepare_smollm2(models_dir)
    return Path(config.model).expanduser()


def base_weights(config: GeneratorConfig, models_dir: Path) -> Path:
    """The safetensors file of the configured model's own weights: policy version 0, which an
    evaluation of version 0 loads back after the generator moved on."""
    path = model_folder(config, models_dir) / "model.safetensors"
    if not path.is_file():
        raise DependencyError(
            f"{path} does not exist: version 0 of a model stored in shards cannot be loaded back",
            hint="save the model as one model.safetensors (save_pretrained(..., max_shard_size='100GB'))",
        )
    return path


def make_backend(config: GeneratorConfig, models_dir: Path, *, policy_version: int = 0) -> GenerationBackend:
    if config.backend == "vllm":
        from producers.generator.vllm_backend import VLLMBackend

        return VLLMBackend.start(
            model_folder(config, models_dir),
            name=config.model,
            seed=config.seed,
            dtype=config.dtype,
            gpu_memory_utilization=config.gpu_memory_utilization,
            policy_version=policy_version,
        )
    import torch

    from producers.generator.hf_backend import HFBackend

    if config.num_threads is not None:
        torch.set_num_threads(config.num_threads)
    policy = load_model(config.model, models_dir, device=config.device, dtype=config.dtype, seed=config.seed)
    return HFBackend(policy, batch_size=config.batch_size, seed=config.seed, policy_version=policy_version)
