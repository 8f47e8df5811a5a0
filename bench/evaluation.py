"""The cost of an evaluation round against a training round of the same size, same run.

    .venv/bin/python -m bench.evaluation [--model tiny|smollm2|PATH] [--tasks 8] [--samples 8]

A round is ``--tasks`` groups of ``--samples`` samples. A training round generates them with the
weights in place; an evaluation round is what the evaluator does for each new version: load exactly
that version's checkpoint (sha256-verified) and generate the same groups as evaluation requests (a
fixed seed per task and version). The sandbox, reward and filter treat both alike, so the difference
is the generator's; rounds alternate and the best of each is compared (a shared machine is noisy).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.policy import PolicyFollower, StalenessPolicy
from producers.generator.rollout import RolloutGenerator
from producers.generator.weights import write_safetensors
from producers.ingest.synthetic import synthetic_tasks
from schemas.policy import PolicyPublished
from schemas.rollout import RolloutRequested, SamplingParams
from streams.config import EvaluationConfig
from streams.scheduler.evaluation import EvalPlan, EvalTask


def measure(
    model: str = "tiny",
    models_dir: Path = Path.home() / ".rlstream" / "models",
    tasks: int = 8,
    samples: int = 8,
    max_tokens: int = 16,
    rounds: int = 3,
) -> dict[str, Any]:
    policy = load_model(model, models_dir)
    backend = HFBackend(policy)
    sampling = SamplingParams(temperature=1.0, max_tokens=max_tokens)
    family = (synthetic_tasks() * (tasks // 8 + 1))[:tasks]
    plan = EvalPlan(EvaluationConfig(samples=samples), sampling)
    train = [
        RolloutRequested(
            group_id=f"bench/{t.task_id}/{i}/0",
            task_id=t.task_id,
            group_size=samples,
            prompt=t.prompt,
            entry_point=t.entry_point,
            sampling=sampling,
        )
        for i, t in enumerate(family)
    ]
    with tempfile.TemporaryDirectory(prefix="rlstream-bench-eval-") as tmp:
        follower = PolicyFollower(
            backend, StalenessPolicy(1), base_weights=lambda: Path(tmp) / "v0.safetensors"
        )
        for version in (0, 1, 2):  # the same weights under three names: loading is what is measured
            path = Path(tmp) / f"v{version}.safetensors"
            digest = write_safetensors(policy.model, path)
            if version:
                follower.observe(
                    PolicyPublished(
                        run_id="bench",
                        policy_version=version,
                        step=version,
                        checkpoint_uri=path.as_uri(),
                        sha256=digest,
                    )
                )
        generator = RolloutGenerator(backend)
        train_s: list[float] = []
        eval_s: list[float] = []
        for r in range(rounds):
            t0 = time.perf_counter()
            for request in train:
                generator.generate(request)
            train_s.append(time.perf_counter() - t0)
            version = 1 + r % 2  # a version the backend does not hold: the round loads it
            t0 = time.perf_counter()
            follower.exact(version)
            for i, t in enumerate(family):
                request = plan.request(
                    EvalTask("bench", f"{t.task_id}/{i}", "e", t.prompt, t.entry_point), version
                )
                generator.generate(request)
            eval_s.append(time.perf_counter() - t0)
    best_train, best_eval = min(train_s), min(eval_s)
    return {
        "model": model,
        "tasks": tasks,
        "samples": samples,
        "max_tokens": max_tokens,
        "train_round_s": best_train,
        "eval_round_s": best_eval,
        # a cost: the evaluation round's time over the training round's
        "ratio": best_eval / best_train,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=16)
    args = ap.parse_args()
    print(
        json.dumps(
            measure(args.model, tasks=args.tasks, samples=args.samples, max_tokens=args.max_tokens), indent=2
        )
    )


if __name__ == "__main__":
    main()
