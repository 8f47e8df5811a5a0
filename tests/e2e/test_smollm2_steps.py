"""SmolLM2 trains end to end on CPU, CI-sized: ``rlstream run --model smollm2 --steps 2`` on four
one-expression library tasks - the real instruct model generating, the sandbox,
reward and filter judging, the learner stepping and publishing versions. It checks the machinery moved
the model (finite losses, a gradient, published weights that differ from the base model's and change
the log-probs of what was trained), not that the model learned: that is the documented learning run's
job (README, "Learning run")."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import torch

from learner.config import default_checkpoint_dir
from learner.service import learner_log_path, read_training_log
from producers.generator.models import load_model
from producers.generator.sampling import teacher_forced_logprobs
from producers.generator.weights import read_safetensors, verified_checkpoint
from producers.ingest.library import library_tasks
from schemas.policy import PolicyPublished
from schemas.rollout import CodeGenerated
from schemas.topics import GENERATIONS, POLICY
from tests.e2e.conftest import CACHE, run_env
from tests.e2e.test_learning import read_topic

pytestmark = pytest.mark.slow

STEPS = 2
TIMEOUT_S = 1200
#: one-expression tasks smollm2 solves about half the time at temperature 1 (a group of 8 then almost
#: never scores alike, so a step has advantages to learn from)
TASKS = ("absolute_value", "add_three", "double", "all_positive")


def test_smollm2_takes_steps_that_move_it_and_publishes_versions(own_broker: str, tmp_path: Path) -> None:
    run_id = f"smollm2-{uuid.uuid4().hex[:8]}"
    home = tmp_path / "home"
    tasks = tmp_path / "tasks.jsonl"
    chosen = [t for t in library_tasks("easy") if t.entry_point in TASKS]
    tasks.write_text("".join(t.model_dump_json() + "\n" for t in chosen))
    assert len(chosen) == len(TASKS)
    env = run_env(
        own_broker,
        home,
        RLSTREAM_LEARNER__LR="1e-5",
        # a group of 8 takes two steps: two steps need only a group or two
        RLSTREAM_LEARNER__TOKEN_BUDGET="1024",
        RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__MAX_TOKENS="64",
        # generate no further ahead of the learner than the steps need
        RLSTREAM_PIPELINE__SCHEDULER__MAX_GROUPS_IN_FLIGHT="2",
    )
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlstream.cli",
            "run",
            "--tasks",
            str(tasks),
            "--model",
            "smollm2",
            "--group-size",
            "8",
            "--steps",
            str(STEPS),
            "--run-id",
            run_id,
            "--timeout",
            str(TIMEOUT_S),
            "--json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S + 120,
    )
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-4000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["learner_step"] >= STEPS, summary

    # -- the loss: finite at every step, and a gradient (some group had samples that differed)
    entries = read_training_log(learner_log_path(default_checkpoint_dir(home, run_id)))
    steps = [e for e in entries if e["kind"] == "step"]
    losses = [e["metrics"]["loss"] for e in steps]
    print(f"\n{len(steps)} steps in {seconds:.0f} s: losses {losses}, summary {summary}")
    assert len(steps) >= STEPS and all(math.isfinite(x) for x in losses)
    # zero exactly when every group's samples scored alike (no advantage, no gradient)
    assert any(x != 0.0 for x in losses), steps

    # -- versions were published, and the newest differs from the base model where it was trained
    published = [
        e
        for _, _, e in read_topic(own_broker, POLICY.name)
        if isinstance(e, PolicyPublished) and e.run_id == run_id
    ]
    newest = max(published, key=lambda p: p.policy_version)
    assert newest.policy_version >= 1 and newest.trained_sample_ids
    weights = read_safetensors(verified_checkpoint(newest.checkpoint_uri, newest.sha256))
    policy = load_model("smollm2", CACHE / "models")
    base = dict(policy.model.named_parameters())
    assert any(not torch.equal(weights[name], base[name].detach()) for name in weights if name in base)

    trained = set(newest.trained_sample_ids)
    sample = next(
        e
        for _, _, e in read_topic(own_broker, GENERATIONS.name)
        if isinstance(e, CodeGenerated) and e.sample_id in trained and e.policy_version == 0
    )
    before = teacher_forced_logprobs(
        policy.model, sample.prompt_token_ids, sample.completion_token_ids, temperature=1.0, top_p=1.0
    )
    assert max(abs(a - b) for a, b in zip(before, sample.behaviour_logprobs, strict=True)) < 1e-3
    policy.model.load_state_dict(weights, strict=False)
    after = teacher_forced_logprobs(
        policy.model, sample.prompt_token_ids, sample.completion_token_ids, temperature=1.0, top_p=1.0
    )
    assert max(abs(a - b) for a, b in zip(after, before, strict=True)) > 1e-6
