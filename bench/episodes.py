"""What the feedback hop of an episode costs per turn next to the sandbox run it follows.

Runs N HumanEval tasks with a wrong program (the prompt's function returning None: every visible case
fails, so every turn gets feedback) in the WASM sandbox (the baseline), then times, per turn, on the
stored executions: the episode step's decision and feedback (``end_turn``: visible results, feedback
derivation, neutralisation), the TurnEnded through the codec both ways (what the hop puts on and reads
off the log), and the generator's rendering of the feedback into the next turn's prompt tokens (the
model's template, special tokens split). Prints each per turn and as a ratio of the sandbox time
measured in the same run.

    .venv/bin/python -m bench.episodes [N] [--model tiny|smollm2]
"""

from __future__ import annotations

import argparse
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from producers.generator.hf_backend import HFBackend
from producers.generator.models import load_model
from producers.generator.rollout import RolloutGenerator
from producers.ingest.humaneval import load_rows, to_task
from schemas.codec import decode, encode
from schemas.envelope import Envelope
from schemas.rollout import CodeGenerated
from streams.episode.config import FeedbackConfig
from streams.episode.core import end_turn
from streams.reward.evaluate import run_program
from streams.sandbox.config import SandboxConfig
from streams.sandbox.service import Sandbox

CACHE = Path.home() / ".rlstream"


def _wrong(prompt: str) -> str:
    return prompt.rstrip("\n") + "\n    return None\n"


def measure(n: int = 40, *, model: str = "tiny", models_dir: Path | None = None) -> dict[str, Any]:
    """Per-turn seconds of the sandbox run (baseline) and of each part of the feedback hop, with ratios."""
    rows = [r for r in load_rows() if to_task(r).tests][:n]
    tasks = [to_task(r) for r in rows]
    codes = [_wrong(r.prompt) for r in rows]
    sandbox = Sandbox(SandboxConfig(backend="wasm"))
    run_program(sandbox, tasks[0], codes[0], sample_id="warm", group_id="warm")  # compile/load once

    t0 = time.perf_counter()
    runs = [
        run_program(sandbox, t, c, sample_id=f"b/{i}/0", group_id=f"b/{i}")
        for i, (t, c) in enumerate(zip(tasks, codes, strict=True))
    ]
    sandbox_s = time.perf_counter() - t0

    policy = load_model(model, models_dir or CACHE / "models")
    generator = RolloutGenerator(HFBackend(policy))
    prompt_ids = tuple(generator.backend.encode(tasks[0].prompt))
    gens = [
        CodeGenerated(
            sample_id=f"b/{i}/0",
            group_id=f"b/{i}",
            task_id=t.task_id,
            sample_index=0,
            policy_version=0,
            model=policy.name,
            prompt_text=t.prompt,
            completion_text=c,
            code=c,
            prompt_token_ids=prompt_ids,
            completion_token_ids=(5, 6, 7),
            behaviour_logprobs=(-1.0, -1.0, -1.0),
            max_turns=3,
        )
        for i, (t, c) in enumerate(zip(tasks, codes, strict=True))
    ]
    runs = [x.model_copy(update={"max_turns": 3}) for x in runs]
    cfg = FeedbackConfig()

    t0 = time.perf_counter()
    ended = [
        end_turn(t, g, x, generation_event_id=g.event_id(), execution_event_id=x.event_id(), feedback=cfg)
        for t, g, x in zip(tasks, gens, runs, strict=True)
    ]
    decide_s = time.perf_counter() - t0
    continued = sum(e.outcome == "continue" for e in ended)

    t0 = time.perf_counter()
    for e in ended:
        record = encode(e, Envelope.for_event(e, source="bench", time=datetime.now(UTC)))
        decode(record.value, list(record.headers))
    codec_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    for e in ended:
        if e.outcome == "continue":
            generator.segment_ids(e)
    render_s = time.perf_counter() - t0

    timings = {
        "sandbox (baseline)": sandbox_s,
        "end of turn + feedback": decide_s,
        "TurnEnded through the codec": codec_s,
        "feedback into the next prompt": render_s,
        "feedback hop in all": decide_s + codec_s + render_s,
    }
    return {
        "turns": n,
        "continued": continued,
        "model": policy.name,
        "mean_feedback_chars": sum(len(e.feedback.text) for e in ended if e.feedback) / max(continued, 1),
        "ms_per_turn": {k: 1000 * v / n for k, v in timings.items()},
        "ratio_to_sandbox": {k: v / sandbox_s for k, v in timings.items()},
    }


def main(n: int, model: str) -> None:
    r = measure(n, model=model)
    print(
        f"{n} HumanEval turns with a wrong program, {r['continued']} told feedback "
        f"(mean {r['mean_feedback_chars']:.0f} characters), prompts rendered for {r['model']}"
    )
    for name, ms in r["ms_per_turn"].items():
        print(f"{name:>30}: {ms:8.3f} ms/turn   ratio to sandbox {r['ratio_to_sandbox'][name]:6.3f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("turns", nargs="?", type=int, default=40, help="HumanEval tasks, one turn each")
    parser.add_argument("--model", default="tiny", help="whose template the feedback is rendered in")
    args = parser.parse_args()
    main(args.turns, args.model)
