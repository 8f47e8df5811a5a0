"""What the generator's savings buy on CPU: GRPO groups of easy library tasks with smollm2, side by side.

    .venv/bin/python -m bench.group_generation [--tasks 4] [--group-size 8] [--max-tokens 256]

Every configuration generates the same groups (same prompts, same seeds, temperature 1) through the
generator's own core (``RolloutGenerator``). Rows, from the setting before this work to the one a run
uses now:

* ``before``: 2 torch threads, batch 8, every sample prefilled on its own, sampling to end-of-sequence
  or ``max_tokens``;
* ``+ 1 thread``: one thread per torch process (what ``rlstream run`` gives each torch worker on two
  cores, where the generator, evaluator and learner share them);
* ``+ shared prefill``: a group's identical prompts prefilled once;
* ``+ stop at function end``: each sample ends where its program ends (``code_end``);
* ``+ batch 16``: 16 sequences per forward pass.

Each row prints samples/s, completion tokens per sample and the ratio to ``before``; a configuration's
rounds alternate with the others' and the best round counts (the machine is shared). The extracted
code is the same wherever a sample's tokens are (stopping early only drops what extraction drops).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.rollout import RolloutGenerator
from producers.ingest.library import library_tasks
from schemas.rollout import RolloutRequested, SamplingParams


@dataclass(frozen=True)
class Config:
    name: str
    threads: int
    batch_size: int
    share_prefill: bool
    stop_at_end: bool


CONFIGS = (
    Config("before", 2, 8, False, False),
    Config("+ 1 thread", 1, 8, False, False),
    Config("+ shared prefill", 1, 8, True, False),
    Config("+ stop at function end", 1, 8, True, True),
    Config("+ batch 16", 1, 16, True, True),
)


def measure(
    model: str = "smollm2",
    models_dir: Path = Path.home() / ".rlstream" / "models",
    tasks: int = 4,
    group_size: int = 8,
    max_tokens: int = 256,
    rounds: int = 2,
) -> list[dict[str, Any]]:
    policy = load_model(model, models_dir)
    chosen = library_tasks("easy")[:: max(1, len(library_tasks("easy")) // tasks)][:tasks]
    sampling = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=max_tokens, seed=0)
    requests = [
        RolloutRequested(
            group_id=f"bench/{t.task_id}/0",
            task_id=t.task_id,
            group_size=group_size,
            prompt=t.prompt,
            entry_point=t.entry_point,
            sampling=sampling,
        )
        for t in chosen
    ]
    best: dict[str, tuple[float, int, int]] = {}
    for round_ in range(rounds):
        for cfg in CONFIGS:
            torch.set_num_threads(cfg.threads)
            backend = HFBackend(policy, batch_size=cfg.batch_size, share_prefill=cfg.share_prefill)
            generator = RolloutGenerator(backend, stop_at_function_end=cfg.stop_at_end)
            started = time.perf_counter()
            samples = [s for r in requests for s in generator.generate(r)]
            seconds = time.perf_counter() - started
            tokens = sum(len(s.completion_token_ids) for s in samples)
            rate = len(samples) / seconds
            print(
                f"round {round_ + 1} {cfg.name:<24} {len(samples)} samples in {seconds:7.1f} s "
                f"({rate:.2f}/s, {tokens / len(samples):.0f} tokens/sample)",
                flush=True,
            )
            if cfg.name not in best or rate > best[cfg.name][0]:
                best[cfg.name] = (rate, tokens, len(samples))
    base = best[CONFIGS[0].name][0]
    rows = []
    print(
        f"\nmodel={model} tasks={len(requests)} group_size={group_size} max_tokens={max_tokens} (best round)"
    )
    for cfg in CONFIGS:
        rate, tokens, n = best[cfg.name]
        print(f"{cfg.name:<24} {rate:6.2f} samples/s  {tokens / n:5.0f} tokens/sample  {rate / base:5.2f}x")
        rows.append(
            {"config": cfg.name, "samples_per_s": rate, "tokens_per_sample": tokens / n, "ratio": rate / base}
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description="generator savings on CPU, side by side")
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--models-dir", type=Path, default=Path.home() / ".rlstream" / "models")
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--group-size", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=2)
    a = parser.parse_args()
    measure(a.model, a.models_dir, a.tasks, a.group_size, a.max_tokens, a.rounds)


if __name__ == "__main__":
    main()
