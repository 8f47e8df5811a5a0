"""The vLLM policy backend (GPU), behind the same interface and sampling semantics as the HF backend.

vLLM pins its own torch, so it cannot live in the main lock: it has its own locked environment,
``infra/gpu`` (rlstream + vLLM + DeepSpeed resolved together; see ``infra/gpu/README.md``)::

    bash scripts/gpu-check.sh       # installs it (and what a run needs), checks this backend on the GPU
    RLSTREAM_GENERATOR__BACKEND=vllm infra/gpu/.venv/bin/rlstream worker generator

The model folder is the same HF folder the HF backend loads (``rlstream models prepare smollm2`` writes
it), and prompts are tokenized by our side with that folder's tokenizer and passed as token ids, so both
backends see identical prompt tokens.

Semantics (see :mod:`producers.generator.sampling`): vLLM applies temperature then top-p, like ours;
``logprobs=0`` with ``logprobs_mode="processed_logprobs"`` returns the sampled token's log-prob under the
processed distribution it was drawn from. For greedy requests top-p is not sent, so the log-prob is the
unprocessed one on both backends. Stop strings are cut from the text (not from the token ids); the
end-of-sequence token is kept in the token ids.

Weight updates: :meth:`VLLMBackend.load_weights_file` asks every worker (``collective_rpc``) to read the
verified safetensors file and reload it in place (vLLM's ``reload_weights``: the parameters keep their
storage, so captured CUDA graphs stay valid), then resets the prefix cache - cached KV blocks were
computed with the old weights, and a prompt shared with an earlier request would otherwise reuse them.

The bookkeeping (request parameters, reading vLLM's outputs into :class:`Completion`) is plain functions
over duck-typed vLLM objects, and the engine is a :class:`VLLMEngine`, so all of it is tested on CPU
against a fake engine (``tests/unit/test_gen_vllm_backend.py``); ``tests/gpu`` runs it on vLLM itself.
"""

from __future__ import annotations

import importlib.util
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol, cast

from producers.generator.interface import BatchStats, Completion, FinishReason, Prompt, TokenPrompt
from producers.generator.sampling import UntilRule, cut_at_end, derive_seed, is_greedy
from schemas.errors import DependencyError, InfraError
from schemas.rollout import SamplingParams

GPU_INSTALL_HINT = (
    "run the generator in the GPU environment (`bash scripts/gpu-check.sh` installs it into "
    "infra/gpu/.venv; see infra/gpu/README.md), or set RLSTREAM_GENERATOR__BACKEND=hf"
)
#: vLLM request seeds are kept below 2**31 (our derived seeds are 63-bit)
SEED_RANGE = 2**31
#: a weight reload that takes longer than this is reported instead of waited for forever
WEIGHT_LOAD_TIMEOUT_S = 600.0


def vllm_available() -> bool:
    return importlib.util.find_spec("vllm") is not None


class VLLMEngine(Protocol):
    """The part of ``vllm.LLM`` the backend uses."""

    def generate(self, prompts: Any, sampling_params: Any = None, *, use_tqdm: bool = True) -> list[Any]: ...

    def collective_rpc(
        self,
        method: str,
        timeout: float | None = None,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> list[Any]: ...

    def reset_prefix_cache(self) -> bool: ...


class _Worker(Protocol):
    """What the weight-update extension uses of the vLLM GPU worker it is mixed into."""

    def reload_weights(self, weights_iterator: Any = None) -> None: ...


class WeightUpdateExtension:
    """Mixed into vLLM's GPU worker class (``worker_extension_cls``); ``collective_rpc`` calls its methods
    inside each worker. vLLM refuses an extension with any attribute its worker already has: methods
    with names of our own only."""

    def load_weights_file(self, path: str) -> int:
        from safetensors.torch import load_file

        weights = load_file(path, device="cpu")
        cast(_Worker, self).reload_weights(weights_iterator=iter(weights.items()))
        return len(weights)


def engine_args(
    folder: Path, seed: int, dtype: str, gpu_memory_utilization: float, max_model_len: int
) -> dict[str, Any]:
    """Keyword arguments of ``vllm.LLM``: the sampled token's log-prob under the processed distribution,
    the prefix cache (one request per sample of a group shares the prompt) and our weight-update methods
    in every worker."""
    return {
        "model": str(folder),
        "tokenizer": str(folder),
        "seed": seed,
        "dtype": dtype,
        "gpu_memory_utilization": gpu_memory_utilization,
        "max_model_len": max_model_len,
        "enable_prefix_caching": True,
        "logprobs_mode": "processed_logprobs",
        "worker_extension_cls": f"{__name__}.{WeightUpdateExtension.__name__}",
    }


@contextmanager
def _engine_call(what: str) -> Iterator[None]:
    """vLLM's own exceptions (it has no single root) become an :class:`InfraError` naming the call."""
    try:
        yield
    except InfraError:
        raise
    except Exception as exc:
        raise InfraError(f"vLLM failed to {what}: {type(exc).__name__}: {exc}") from exc


def request_params(sampling: SamplingParams, seeds: Sequence[int]) -> list[dict[str, Any]]:
    """Keyword arguments of ``vllm.SamplingParams`` for each sample: one request per sample (its own
    seed), the sampled token's processed log-prob and nothing else (``logprobs=0``)."""
    greedy = is_greedy(sampling.temperature)
    return [
        {
            "temperature": 0.0 if greedy else sampling.temperature,
            "top_p": 1.0 if greedy else sampling.top_p,
            "max_tokens": sampling.max_tokens,
            "stop": list(sampling.stop) or None,
            "seed": seed % SEED_RANGE,
            "logprobs": 0,
            "skip_special_tokens": True,
        }
        for seed in seeds
    ]


def sampled_logprobs(steps: Sequence[Any] | None, token_ids: Sequence[int], where: str) -> tuple[float, ...]:
    """The log-prob of each sampled token from vLLM's per-position log-prob maps (token id -> Logprob;
    a map may hold other tokens too, ranked above or below the sampled one)."""
    if steps is None:
        raise InfraError(
            f"{where}: vLLM returned no log-probs",
            hint="the request asks for logprobs=0; is the engine built by VLLMBackend.start?",
        )
    if len(steps) != len(token_ids):
        raise InfraError(f"{where}: {len(steps)} log-prob positions for {len(token_ids)} tokens")
    values = []
    for position, (step, token) in enumerate(zip(steps, token_ids, strict=True)):
        entry = step.get(token) if step else None
        if entry is None:
            raise InfraError(f"{where}: no log-prob for the sampled token {token} at position {position}")
        value = float(entry.logprob)
        if not math.isfinite(value):
            raise InfraError(f"{where}: log-prob {value} of the sampled token {token} at position {position}")
        values.append(value)
    return tuple(values)


def completion_from_output(
    output: Any,
    *,
    prompt_text: str,
    prompt_token_ids: Sequence[int],
    seed: int,
    policy_version: int,
    duration_s: float,
) -> Completion:
    """One :class:`Completion` from a ``vllm.RequestOutput`` of a single-sample request."""
    where = f"vLLM request {getattr(output, 'request_id', '?')}"
    if len(output.outputs) != 1:
        raise InfraError(f"{where}: {len(output.outputs)} samples for a request of one")
    sample = output.outputs[0]
    token_ids = tuple(int(t) for t in sample.token_ids)
    if sample.finish_reason not in ("stop", "length"):
        raise InfraError(f"{where}: finished with {sample.finish_reason!r} after {len(token_ids)} tokens")
    finish: FinishReason = sample.finish_reason
    stop_reason: int | str | None = sample.stop_reason
    if finish == "stop" and stop_reason is None and token_ids:
        stop_reason = token_ids[-1]  # vLLM leaves it None when the end-of-sequence token ended it
    return Completion(
        prompt_text=prompt_text,
        prompt_token_ids=tuple(prompt_token_ids),
        token_ids=token_ids,
        logprobs=sampled_logprobs(sample.logprobs, token_ids, where),
        text=sample.text,
        finish_reason=finish,
        stop_reason=stop_reason,
        policy_version=policy_version,
        seed=seed,
        duration_s=duration_s,
    )


class VLLMBackend:
    """Generates with a vLLM engine in this process (``start`` builds the real one)."""

    def __init__(
        self,
        engine: VLLMEngine,
        tokenizer: Any,
        *,
        name: str,
        seed: int = 0,
        policy_version: int = 0,
        make_params: Callable[..., Any] | None = None,
    ) -> None:
        if make_params is None:
            from vllm import SamplingParams as VllmSamplingParams

            make_params = VllmSamplingParams
        self.engine = engine
        self._tokenizer = tokenizer
        self._make_params = make_params
        self._name = name
        self._seed = seed
        self._version = policy_version
        self._calls = 0
        self._last_stats: BatchStats | None = None

    @classmethod
    def start(
        cls,
        folder: Path,
        *,
        name: str,
        seed: int = 0,
        dtype: str = "bfloat16",
        gpu_memory_utilization: float = 0.5,
        policy_version: int = 0,
        max_model_len: int = 4096,
    ) -> VLLMBackend:
        """Load the HF model folder into a new vLLM engine on this machine's GPU."""
        if not vllm_available():
            raise DependencyError("the vllm backend needs the vllm package", hint=GPU_INSTALL_HINT)
        from transformers import AutoTokenizer
        from vllm import LLM

        tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
        with _engine_call(f"load {folder}"):
            engine = LLM(**engine_args(folder, seed, dtype, gpu_memory_utilization, max_model_len))
        return cls(engine, tokenizer, name=name, seed=seed, policy_version=policy_version)

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

    @property
    def eos_token_ids(self) -> tuple[int, ...]:
        eos = self._tokenizer.eos_token_id
        return () if eos is None else (int(eos),)

    def encode(self, text: str) -> list[int]:
        add_special = not getattr(self._tokenizer, "chat_template", None)
        return list(self._tokenizer.encode(text, add_special_tokens=add_special))

    def load_weights_file(self, path: Path, version: int) -> None:
        with _engine_call(f"load the weights of {path}"):
            loaded = self.engine.collective_rpc(
                WeightUpdateExtension.load_weights_file.__name__,
                timeout=WEIGHT_LOAD_TIMEOUT_S,
                args=(str(path),),
            )
            reset = self.engine.reset_prefix_cache()
        if not loaded or len(set(loaded)) != 1:
            raise InfraError(f"vLLM workers loaded {loaded} tensors from {path}: expected one count, equal")
        if not reset:
            # the weights changed but KV blocks of the old ones stay cached: generating now would mix both
            raise InfraError(
                f"vLLM did not reset its prefix cache after loading {path} (policy v{version})",
                hint="the generator restarts and loads the version from scratch",
            )
        self._version = version

    def generate(
        self,
        prompts: Sequence[Prompt],
        sampling: SamplingParams,
        seeds: Sequence[int] | None = None,
        until: UntilRule | None = None,
    ) -> list[Completion]:
        """``until``: vLLM cannot run it while sampling, so each completion is cut afterwards
        (:func:`~producers.generator.sampling.cut_at_end`): the same tokens the rule would have kept."""
        if seeds is not None and len(seeds) != len(prompts):
            raise ValueError(f"{len(seeds)} seeds for {len(prompts)} prompts")
        if seeds is None:
            base = (
                sampling.seed if sampling.seed is not None else derive_seed(self._seed, "call", self._calls)
            )
            seeds = [derive_seed(base, i) for i in range(len(prompts))]
        self._calls += 1
        params = [self._make_params(**kwargs) for kwargs in request_params(sampling, seeds)]
        encoded = [list(p.token_ids) if isinstance(p, TokenPrompt) else self.encode(p) for p in prompts]
        texts = [p.text if isinstance(p, TokenPrompt) else p for p in prompts]
        started = time.perf_counter()
        outputs: list[Any] = []
        if prompts:
            with _engine_call(f"generate {len(prompts)} samples"):
                outputs = self.engine.generate(
                    [{"prompt_token_ids": ids} for ids in encoded], sampling_params=params, use_tqdm=False
                )
        duration = time.perf_counter() - started
        if len(outputs) != len(prompts):
            raise InfraError(f"vLLM returned {len(outputs)} results for {len(prompts)} prompts")
        completions = [
            completion_from_output(
                output,
                prompt_text=text,
                prompt_token_ids=ids,
                seed=seed,
                policy_version=self._version,
                duration_s=duration,
            )
            for text, ids, seed, output in zip(texts, encoded, seeds, outputs, strict=True)
        ]
        if until is not None:
            completions = [cut_at_end(c, self.tokenizer, until) for c in completions]
        self._last_stats = BatchStats(
            prompts=len(prompts),
            prompt_tokens=sum(len(e) for e in encoded),
            completion_tokens=sum(len(c.token_ids) for c in completions),
            duration_s=duration,
        )
        return completions
