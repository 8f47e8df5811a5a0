"""Configuration of the rollout generator (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field


class GeneratorConfig(BaseModel):
    model_config = {"frozen": True}

    #: ``tiny`` (random test fixture), ``smollm2`` (SmolLM2-135M-Instruct), or a local HF model folder
    model: str = "tiny"
    #: ``hf`` runs everywhere (CPU or GPU); ``vllm`` needs a GPU and the GPU environment (infra/gpu)
    backend: Literal["hf", "vllm"] = "hf"
    device: str = "cpu"
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    #: where converted models are cached; ``None`` means ``<settings.home>/models``
    models_dir: Path | None = None
    #: at most this many sequences decode together in one forward pass
    batch_size: int = Field(default=8, ge=1, le=1024)
    #: end each sample where the program it writes ends (a closing fence, a top-level script line after
    #: the function): the tokens after it are what code extraction drops anyway
    stop_at_function_end: bool = True
    #: seeds the random tiny model and every sample whose request carries no seed
    seed: int = 0
    #: how many policy versions the weights in use may lag behind the newest known one
    max_staleness: int = Field(default=1, ge=0)
    #: torch intra-op threads for the HF backend; ``None`` leaves torch's default
    num_threads: int | None = Field(default=None, ge=1)
    #: vLLM only: fraction of GPU memory it may take
    gpu_memory_utilization: float = Field(default=0.5, gt=0.0, le=1.0)
    #: a warm standby generator beside the run's first one in ``rlstream run`` (built, its model and
    #: policy loaded, waiting on the instance's lease, it takes the instance over when it dies instead of
    #: a restart's start-up): ``auto`` on a CPU (hf backend) where the available memory holds it
    #: comfortably, ``on``, ``off``
    standby: Literal["auto", "on", "off"] = "auto"
