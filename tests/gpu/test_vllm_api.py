"""The vLLM backend against the vLLM version the GPU environment pins, without a GPU: every argument
the backend passes is one vLLM accepts with the meaning we rely on, and the weight-update extension
can be mixed into vLLM's GPU worker. Runs wherever vLLM imports (``infra/gpu/.venv/bin/pytest
tests/gpu``; ``bash scripts/gpu-check.sh``); the main environment has no vLLM and skips it."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed here: it lives in the GPU environment (infra/gpu)")

from vllm import SamplingParams as VllmSamplingParams
from vllm.engine.arg_utils import EngineArgs
from vllm.utils.import_utils import resolve_obj_by_qualname
from vllm.v1.worker.gpu.model_runner import GPUModelRunner as RunnerV2
from vllm.v1.worker.gpu_model_runner import GPUModelRunner as RunnerV1
from vllm.v1.worker.gpu_worker import Worker

from producers.generator.vllm_backend import WeightUpdateExtension, engine_args, request_params
from schemas.rollout import SamplingParams


def test_the_engine_arguments_are_vllms_with_processed_logprobs(tmp_path: Path) -> None:
    args = EngineArgs(**engine_args(tmp_path, 3, "float32", 0.4, 2048))
    assert args.logprobs_mode == "processed_logprobs"
    assert args.enable_prefix_caching is True
    assert resolve_obj_by_qualname(args.worker_extension_cls) is WeightUpdateExtension


@pytest.mark.parametrize(
    "sampling",
    [
        SamplingParams(temperature=0.8, top_p=0.95, max_tokens=9, stop=("\n\n",)),
        SamplingParams(temperature=0.0),
    ],
    ids=["sampled", "greedy"],
)
def test_each_request_asks_for_the_sampled_tokens_logprob_only(sampling: SamplingParams) -> None:
    (kwargs,) = request_params(sampling, [2**40 + 7])
    params = VllmSamplingParams(**kwargs)
    assert (params.n, params.logprobs, params.prompt_logprobs) == (1, 0, None)
    assert (params.temperature, params.top_p, params.top_k) == (kwargs["temperature"], kwargs["top_p"], 0)
    assert params.seed == kwargs["seed"] and params.max_tokens == sampling.max_tokens
    assert params.stop == list(sampling.stop)
    assert not params.include_stop_str_in_output  # the text is cut before a stop string, as on the HF backend


def test_the_weight_update_extension_fits_vllms_gpu_worker() -> None:
    # vLLM's own rule when it mixes the extension in: no attribute the worker already has
    ours = [a for a in dir(WeightUpdateExtension) if not a.startswith("__")]
    assert ours == ["load_weights_file"]
    assert not [a for a in ours if hasattr(Worker, a)]
    # the worker passes reload_weights' arguments on to its model runner (V2 by default, V1 the fallback)
    for runner in (RunnerV2, RunnerV1):
        parameters = inspect.signature(runner.reload_weights).parameters
        assert "weights_iterator" in parameters, runner
        assert parameters["is_checkpoint_format"].default is True, runner
