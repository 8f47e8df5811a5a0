"""Tokens/s of the learner's step (the engine: DeepSpeed ZeRO on this machine's accelerator) against a
plain torch loop (forward, the same GRPO loss, backward, grad clip, AdamW) on the same model and the same
batch, measured in the same run, one plain step and one engine step in turn. The ratio (the median of
the pairs', with their range) is the engine's overhead (or gain).

    .venv/bin/python bench/learner.py [--stages 0,2] [--steps 8] [--rows 8] [--seq 128]
                                      [--hidden 256] [--layers 4] [--vocab 2048] [--threads 2]

``--stages`` lists ZeRO stages 0-3; a stage written with ``+offload`` (``2+offload``) keeps the optimizer
state and step in host memory (``learner.offload_optimizer = cpu``).
"""

from __future__ import annotations

import argparse
import copy
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# This file is named like the package it measures: when run as a script its own folder comes first on
# sys.path and would shadow the ``learner`` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import torch  # noqa: E402

from learner.batch import Batch, TrainSample, collate  # noqa: E402
from learner.config import LearnerConfig  # noqa: E402
from learner.engine import LearnerEngine  # noqa: E402
from learner.grpo import grpo_loss, token_logprobs  # noqa: E402
from learner.models import random_llama  # noqa: E402


def make_batch(rows: int, seq: int, vocab: int, device: torch.device) -> Batch:
    g = torch.Generator().manual_seed(0)
    prompt = seq // 4
    samples = [
        TrainSample(
            sample_id=f"s{i}",
            group_id="g",
            policy_version=0,
            reward=float(i % 2),
            advantage=1.0 if i % 2 else -1.0,
            prompt_token_ids=tuple(torch.randint(3, vocab, (prompt,), generator=g).tolist()),
            completion_token_ids=tuple(torch.randint(3, vocab, (seq - prompt,), generator=g).tolist()),
            behaviour_logprobs=tuple(torch.full((seq - prompt,), -7.0).tolist()),
        )
        for i in range(rows)
    ]
    return collate(samples).to(device)


class PlainLoop:
    """The baseline: what a hand-written single-process trainer does per step."""

    def __init__(self, model: torch.nn.Module, config: LearnerConfig) -> None:
        self.model, self.config = model, config
        self.opt = torch.optim.AdamW(model.parameters(), lr=config.lr)

    def step(self, batch: Batch) -> float:
        """One step; its seconds."""
        t0 = time.perf_counter()
        logits = self.model(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
        out = grpo_loss(
            token_logprobs(logits, batch.targets),
            batch.behaviour_logprobs,
            batch.advantages,
            batch.loss_mask,
            is_cap=self.config.is_cap,
        )
        self.opt.zero_grad(set_to_none=True)
        out.loss.backward()  # type: ignore[no-untyped-call]
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.max_grad_norm)
        self.opt.step()
        if batch.input_ids.is_cuda:
            torch.cuda.synchronize()
        return time.perf_counter() - t0


def measure(
    stages: str = "0,2",
    steps: int = 8,
    warmup: int = 2,
    rows: int = 8,
    seq: int = 128,
    hidden: int = 256,
    layers: int = 4,
    vocab: int = 2048,
    threads: int = 2,
) -> dict[str, Any]:
    """Tokens/s of the plain torch loop and of the engine per backend/ZeRO stage, with ratios."""
    torch.set_num_threads(threads)
    accelerator = "cuda" if torch.cuda.is_available() else "cpu"
    device = torch.device(accelerator)

    base = random_llama(
        vocab_size=vocab,
        hidden_size=hidden,
        num_layers=layers,
        num_heads=max(4, hidden // 64),
    )
    params = sum(p.numel() for p in base.parameters())
    batch = make_batch(rows, seq, vocab, device)
    print(
        f"model {params / 1e6:.1f}M params (hidden {hidden}, {layers} layers, vocab {vocab}); "
        f"batch {rows}x{seq} = {batch.num_tokens} tokens; "
        f"{accelerator}, {threads} threads, fp32"
    )
    out: dict[str, Any] = {"params": params, "tokens_per_batch": batch.num_tokens, "engines": {}}

    with tempfile.TemporaryDirectory() as tmp:
        config = LearnerConfig(accelerator=accelerator, precision="fp32", lr=1e-5, checkpoint_dir=Path(tmp))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        plain_rates: list[float] = []
        engines = [("torch", 0, False)] + [
            ("deepspeed", int(x.removesuffix("+offload")), x.endswith("+offload"))
            for x in stages.split(",")
            if x
        ]
        for backend, stage, offload in engines:
            cfg = config.model_copy(
                update={
                    "backend": backend,
                    "zero_stage": stage,
                    "offload_optimizer": "cpu" if offload else "none",
                    "distributed": config.distributed.model_copy(update={"master_port": port}),
                }
            )
            engine = LearnerEngine(copy.deepcopy(base), cfg)
            plain = PlainLoop(copy.deepcopy(base).to(device), config)
            # a plain step and an engine step in turn, so a change of load on this shared machine falls on
            # both alike; each pair gives one ratio
            ratios, rates, plain_pair = [], [], []
            for i in range(warmup + steps):
                plain_s = plain.step(batch)
                rate = engine.train_step(batch)["tokens_per_s"]
                if i >= warmup:
                    plain_pair.append(batch.num_tokens / plain_s)
                    rates.append(rate)
                    ratios.append(rate * plain_s / batch.num_tokens)
            plain_rates += plain_pair
            label = "engine, torch backend" if backend == "torch" else f"engine, DeepSpeed ZeRO-{stage}"
            label += ", optimizer offloaded" if offload else ""
            ratio = statistics.median(ratios)
            out["engines"][label] = {
                "tokens_per_s": statistics.median(rates),
                "plain_tokens_per_s": statistics.median(plain_pair),
                "ratio": ratio,
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
            }
            print(
                f"{label:<48} {statistics.median(rates):10.0f} tokens/s  beside plain torch "
                f"{statistics.median(plain_pair):8.0f}: ratio {ratio:.2f} "
                f"(pairs {min(ratios):.2f}-{max(ratios):.2f})"
            )
        out["plain_torch_tokens_per_s"] = statistics.median(plain_rates)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stages", default="0,2")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--rows", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    measure(
        args.stages,
        args.steps,
        args.warmup,
        args.rows,
        args.seq,
        args.hidden,
        args.layers,
        args.vocab,
        args.threads,
    )


if __name__ == "__main__":
    main()
