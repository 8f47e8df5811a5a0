"""The vLLM policy backend (GPU), behind the same interface and sampling semantics as the HF backend.

Install (a GPU machine; vLLM pins its own torch, so it lives in its own environment, not in uv.lock)::

    python3.11 -m venv .venv-gpu
    .venv-gpu/bin/pip install 'vllm>=0.11'            # brings its own torch and transformers
    uv export --frozen --no-dev --no-hashes --no-emit-project \
        | grep -v -E '^(torch|triton|nvidia-|transformers|tokenizers)' > /tmp/rest.txt
    .venv-gpu/bin/pip install -r /tmp/rest.txt && .venv-gpu/bin/pip install --no-deps -e .
    RLSTREAM_GENERATOR__BACKEND=vllm RLSTREAM_GENERATOR__DEVICE=cuda .venv-gpu/bin/rlstream worker generator

The model folder is the same HF folder the HF backend loads (``rlstream models prepare smollm2`` writes
it), and prompts are tokenized by our side with that folder's tokenizer and passed as token ids, so both
backends see identical prompt tokens.

Semantics (see :mod:`producers.generator.sampling`): vLLM applies temperature then top-p, like ours;
``logprobs=0`` with ``logprobs_mode="processed_logprobs"`` returns the sampled token's log-prob under the
processed distribution it was drawn from. For greedy requests top-p is not sent, so the log-prob is the
unprocessed one on both backends. Stop strings are cut from the text (not from the token ids); the
end-of-sequence token is kept in the token ids.

Weight updates: :meth:`VLLMBackend.load_weights_file` asks every worker (``collective_rpc``) to read the
verified safetensors file and ``load_weights`` it into the running model, then resets the prefix cache
(cached KV blocks were computed with the old weights).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from producers.generator.interface import BatchStats, Completion, FinishReason
from producers.generator.sampling import derive_seed, is_greedy
from schemas.errors import DependencyError
from schemas.rollout import SamplingParams

GPU_INSTALL_HINT = (
    "install vLLM in a GPU environment (see producers/generator/vllm_backend.py), "
    "or set RLSTREAM_GENERATOR__BACKEND=hf"
)


def vllm_available() -> bool:
    return importlib.util.find_spec("vllm") is not None


class WeightUpdateExtension:
    """Mixed into vLLM's GPU workers (``worker_extension_cls``): methods callable by ``collective_rpc``."""

    model_runner: Any

    def load_weights_file(self, path: str) -> int:
        from safetensors.torch import load_file

        weights = load_file(path, device="cpu")
        self.model_runner.model.load_weights(weights=weights.items())
        return len(weights)


class VLLMBackend:
    """Generates with vLLM's offline engine in this process."""

    def __init__(
        self,
        folder: Path,
        *,
        name: str,
        seed: int = 0,
        dtype: str = "bfloat16",
        gpu_memory_utilization: float = 0.5,
        policy_version: int = 0,
        max_model_len: int = 4096,
    ) -> None:
        if not vllm_available():
            raise DependencyError("the vllm backend needs the vllm package", hint=GPU_INSTALL_HINT)
        from transformers import AutoTokenizer
        from vllm import LLM

        self._name = name
        self._tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        self._llm = LLM(
            model=str(folder),
            tokenizer=str(folder),
            seed=seed,
            dtype=dtype,
            gpu_memory_utilization=gpu_memory_utilization,
            max_model_len=max_model_len,
            enable_prefix_caching=True,
            logprobs_mode="processed_logprobs",
            worker_extension_cls=f"{__name__}.WeightUpdateExtension",
        )
        self._seed = seed
        self._version = policy_version
        self._calls = 0
        self._last_stats: BatchStats | None = None

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def policy_version(self) -> int:
        return self._version

    @property
    def last_stats(self) -> BatchStats | None:
        return self._last_stats

    @property
    def tokenizer(self) -> Any:
        return self._tokenizer

    def encode(self, text: str) -> list[int]:
        add_special = not getattr(self._tokenizer, "chat_template", None)
        return list(self._tokenizer.encode(text, add_special_tokens=add_special))

    def load_weights_file(self, path: Path, version: int) -> None:
        self._llm.collective_rpc("load_weights_file", args=(str(path),))
        self._llm.reset_prefix_cache()
        self._version = version

    def generate(
        self,
        prompts: Sequence[str],
        sampling: SamplingParams,
        seeds: Sequence[int] | None = None,
    ) -> list[Completion]:
        from vllm import SamplingParams as VllmSamplingParams

        if seeds is not None and len(seeds) != len(prompts):
            raise ValueError(f"{len(seeds)} seeds for {len(prompts)} prompts")
        if seeds is None:
            base = (
                sampling.seed if sampling.seed is not None else derive_seed(self._seed, "call", self._calls)
            )
            seeds = [derive_seed(base, i) for i in range(len(prompts))]
        self._calls += 1
        greedy = is_greedy(sampling.temperature)
        params = [
            VllmSamplingParams(
                temperature=0.0 if greedy else sampling.temperature,
                top_p=1.0 if greedy else sampling.top_p,
                max_tokens=sampling.max_tokens,
                stop=list(sampling.stop) or None,
                seed=seed % (2**31),
                logprobs=0,
                skip_special_tokens=True,
            )
            for seed in seeds
        ]
        encoded = [self.encode(p) for p in prompts]
        started = time.perf_counter()
        outputs = self._llm.generate(
            [{"prompt_token_ids": ids} for ids in encoded], sampling_params=params, use_tqdm=False
        )
        duration = time.perf_counter() - started
        completions = []
        for text, ids, seed, output in zip(prompts, encoded, seeds, outputs, strict=True):
            sample = output.outputs[0]
            token_ids = tuple(int(t) for t in sample.token_ids)
            logprobs = tuple(
                float(step[tok].logprob) for step, tok in zip(sample.logprobs, token_ids, strict=True)
            )
            finish: FinishReason = "length" if sample.finish_reason == "length" else "stop"
            stop_reason: int | str | None = sample.stop_reason
            if finish == "stop" and stop_reason is None and token_ids:
                stop_reason = token_ids[-1]  # vLLM leaves it None when the end-of-sequence token ended it
            completions.append(
                Completion(
                    prompt_text=text,
                    prompt_token_ids=tuple(ids),
                    token_ids=token_ids,
                    logprobs=logprobs,
                    text=sample.text,
                    finish_reason=finish,
                    stop_reason=stop_reason,
                    policy_version=self._version,
                    seed=seed,
                    duration_s=duration,
                )
            )
        self._last_stats = BatchStats(
            prompts=len(prompts),
            prompt_tokens=sum(len(e) for e in encoded),
            completion_tokens=sum(len(c.token_ids) for c in completions),
            duration_s=duration,
        )
        return completions
