"""The learner step on a GPU with a 0.5B/1.5B-class model (Qwen2.5-shaped Llama, random weights):
tokens/s and peak GPU memory of the engine (DeepSpeed, bf16) per ZeRO stage next to a plain torch loop
(bf16 autocast, fp32 AdamW) on the same model and batch in the same run. Runs in a few minutes; nothing is
downloaded. ``bash scripts/gpu-check.sh`` runs it with the other GPU checks.

    infra/gpu/.venv/bin/python -m bench.gpu_learner [--size auto|1.5b|0.5b] [--rows 8] [--seq 1024]
                                                    [--steps 10] [--stages 0,1,2] [--checkpoint] [--json FILE]

``--size auto`` takes 1.5b on a GPU with 40 GiB or more, else 0.5b; ``--stages`` defaults to every ZeRO
stage the learner's settings accept.
"""

from __future__ import annotations

import argparse
import gc
import json
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

# named like the package it measures: keep this folder from shadowing ``learner`` on sys.path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import torch  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from learner.batch import Batch, TrainSample, collate  # noqa: E402
from learner.config import LearnerConfig  # noqa: E402
from learner.engine import LearnerEngine  # noqa: E402
from learner.grpo import grpo_loss, token_logprobs  # noqa: E402
from learner.models import random_llama  # noqa: E402

#: Qwen2.5 shapes (hidden, intermediate, layers, heads, kv heads); vocab 151936, tied embeddings
SIZES = {"0.5b": (896, 4864, 24, 14, 2), "1.5b": (1536, 8960, 28, 12, 2)}
VOCAB = 151936
GIB = 1 << 30
#: GPU memory from which the 1.5b-class model is the default (its plain loop peaks near 35 GiB)
LARGE_GPU_GIB = 40


def accepted_stages() -> list[int]:
    """Every ZeRO stage the learner's settings accept."""
    stages = []
    for stage in range(4):
        try:
            LearnerConfig(zero_stage=stage)
        except ValidationError:
            continue
        stages.append(stage)
    return stages


def make_batch(rows: int, seq: int) -> Batch:
    g = torch.Generator().manual_seed(0)
    prompt = seq // 4
    return collate(
        [
            TrainSample(
                sample_id=f"s{i}",
                group_id="g",
                policy_version=0,
                reward=float(i % 2),
                advantage=1.0 if i % 2 else -1.0,
                prompt_token_ids=tuple(torch.randint(3, VOCAB, (prompt,), generator=g).tolist()),
                completion_token_ids=tuple(torch.randint(3, VOCAB, (seq - prompt,), generator=g).tolist()),
                behaviour_logprobs=tuple(torch.full((seq - prompt,), -12.0).tolist()),
            )
            for i in range(rows)
        ]
    )


def build(size: str) -> torch.nn.Module:
    hidden, inter, layers, heads, kv = SIZES[size]
    return random_llama(  # type: ignore[no-any-return]
        vocab_size=VOCAB,
        hidden_size=hidden,
        intermediate_size=inter,
        num_layers=layers,
        num_heads=heads,
        num_kv_heads=kv,
        max_positions=4096,
        tie_word_embeddings=True,
        device="cuda",
    )


def plain_loop(size: str, batch: Batch, steps: int, warmup: int) -> tuple[float, float]:
    model = build(size)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-6, fused=True)
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(warmup + steps):
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
        out = grpo_loss(
            token_logprobs(logits, batch.targets), batch.behaviour_logprobs, batch.advantages, batch.loss_mask
        )
        opt.zero_grad(set_to_none=True)
        out.loss.backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    peak = torch.cuda.max_memory_allocated() / GIB
    del model, opt, logits, out
    return batch.num_tokens / statistics.median(times[warmup:]), peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", choices=["auto", *sorted(SIZES)], default="auto")
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--stages", default=",".join(str(s) for s in accepted_stages()))
    ap.add_argument("--checkpoint", action="store_true", help="also time one checkpoint + publication")
    ap.add_argument("--json", type=Path, help="also write the results here")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("no GPU visible to torch: this benchmark needs one (bench/learner.py runs on CPU)")
    if args.size == "auto":
        memory = torch.cuda.get_device_properties(0).total_memory / GIB
        args.size = "1.5b" if memory >= LARGE_GPU_GIB else "0.5b"
    started = time.perf_counter()
    batch = make_batch(args.rows, args.seq).to("cuda")
    params = sum(p.numel() for p in build(args.size).parameters())
    gc.collect()
    torch.cuda.empty_cache()
    print(
        f"{torch.cuda.get_device_name()}: {args.size}-class model, {params / 1e9:.2f}B params, "
        f"batch {args.rows}x{args.seq} = {batch.num_tokens} tokens, vocab {VOCAB}"
    )

    baseline, peak = plain_loop(args.size, batch, args.steps, args.warmup)
    gc.collect()
    torch.cuda.empty_cache()
    print(f"{'plain torch loop (autocast)':<30} {baseline:9.0f} tokens/s  peak {peak:6.1f} GiB  (ratio 1.00)")
    result: dict[str, object] = {
        "gpu": torch.cuda.get_device_name(),
        "size": args.size,
        "params_b": params / 1e9,
        "rows": args.rows,
        "seq": args.seq,
        "tokens_per_step": batch.num_tokens,
        "plain": {"tokens_per_s": baseline, "peak_gib": peak},
    }
    stages: list[dict[str, float]] = []

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    with tempfile.TemporaryDirectory() as tmp:
        for stage in (int(x) for x in args.stages.split(",")):
            config = LearnerConfig.model_validate(
                {
                    "accelerator": "cuda",
                    "precision": "bf16",
                    "zero_stage": stage,
                    "lr": 1e-6,
                    "checkpoint_dir": Path(tmp) / f"zero{stage}",
                    "distributed": {"master_port": port},
                }
            )
            engine = LearnerEngine(build(args.size), config)
            torch.cuda.reset_peak_memory_stats()
            rates = [engine.train_step(batch)["tokens_per_s"] for _ in range(args.warmup + args.steps)]
            rate = statistics.median(rates[args.warmup :])
            peak = torch.cuda.max_memory_allocated() / GIB
            label = f"engine DeepSpeed ZeRO-{stage} bf16"
            print(f"{label:<30} {rate:9.0f} tokens/s  peak {peak:6.1f} GiB  (ratio {rate / baseline:.2f})")
            stages.append(
                {"zero_stage": stage, "tokens_per_s": rate, "peak_gib": peak, "ratio": rate / baseline}
            )
            if args.checkpoint:
                t0 = time.perf_counter()
                event = engine.publish(run_id="bench")
                print(
                    f"  checkpoint + publication: {time.perf_counter() - t0:.1f} s -> {event.checkpoint_uri}"
                )
            del engine
            gc.collect()
            torch.cuda.empty_cache()
    result["stages"] = stages
    result["total_s"] = time.perf_counter() - started
    print(f"total {result['total_s']:.0f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
