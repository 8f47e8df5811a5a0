"""The supervised stage's pieces without a broker: examples from tasks, their training rows, epochs."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from learner.batch import collate
from learner.config import LearnerConfig
from learner.engine import LearnerEngine
from learner.models import random_llama
from learner.sft import nll, train
from producers.generator.models import load_model
from producers.ingest.split import hold_out
from producers.ingest.synthetic import synthetic_tasks
from rlstream.sft import completion_text, example_sample, reference_examples
from schemas.errors import InputError
from schemas.sft import SftExample

torch.set_num_threads(1)


def test_only_training_tasks_with_a_reference_become_examples() -> None:
    tasks = hold_out(synthetic_tasks(None), fraction=0.25, names_file=None)
    held = {t.task_id for t in tasks if t.split == "eval"}
    examples = reference_examples("stage", tasks)
    assert held and examples
    assert {e.task_id for e in examples} == {t.task_id for t in tasks if t.split == "train"}
    assert all(e.source == "reference" and e.example_id == f"{e.task_id}:reference" for e in examples)
    # the same stage names the same facts: a stage run again doubles nothing on the log
    assert [e.event_id() for e in examples] == [e.event_id() for e in reference_examples("stage", tasks)]
    assert examples[0].event_id() != reference_examples("other", tasks)[0].event_id()


def test_a_reviewed_example_must_name_its_review() -> None:
    with pytest.raises(ValueError, match="review_event_id"):
        SftExample(run_id="s", example_id="x", task_id="t", source="review", prompt="p", completion="c")


def test_the_answer_is_what_the_generator_extracts() -> None:
    prompt = "def f(x):\n    return x + "
    assert completion_text(prompt + "1\n", prompt, "completion") == "1\n"
    # a program that does not continue the prompt is taught whole (extraction finds its def)
    assert completion_text("def f(x):\n    return x\n", prompt, "completion") == "def f(x):\n    return x\n"
    assert (
        completion_text("def f(x):\n    return x\n", prompt, "chat")
        == "```python\ndef f(x):\n    return x\n```"
    )


def test_a_row_puts_only_the_answer_and_its_end_in_the_loss() -> None:
    policy = load_model("tiny")
    task = synthetic_tasks(1)[0]
    (example,) = reference_examples("stage", [task])
    row = example_sample(policy, example)
    assert row.prompt_token_ids == tuple(policy.tokenizer.encode(task.prompt, add_special_tokens=True))
    assert row.completion_token_ids[-1] == policy.eos_token_ids[0]
    answer = policy.tokenizer.decode(row.completion_token_ids[:-1])
    assert task.reference is not None
    assert (task.prompt + answer).strip() == task.reference.strip()
    batch = collate([row], pad_token_id=policy.pad_token_id)
    assert int(batch.loss_mask.sum()) == len(row.completion_token_ids)


def test_epochs_lower_the_examples_nll_and_the_same_seed_gives_the_same_steps(tmp_path: Path) -> None:
    policy = load_model("tiny")
    rows = [example_sample(policy, e) for e in reference_examples("stage", synthetic_tasks(None))]

    def run(seed_dir: Path) -> tuple[float, float, tuple[float, ...]]:
        config = LearnerConfig(
            backend="torch", lr=5e-3, checkpoint_dir=seed_dir, pad_token_id=policy.pad_token_id
        )
        engine = LearnerEngine(load_model("tiny").model, config)
        before = nll(engine, rows, token_budget=512, pad_token_id=policy.pad_token_id)
        curve = train(engine, rows, epochs=4, token_budget=64, pad_token_id=policy.pad_token_id, seed=3)
        after = nll(engine, rows, token_budget=512, pad_token_id=policy.pad_token_id)
        assert len(curve.epochs) == 4 and len(curve.steps) > 4  # several batches per epoch
        return before, after, curve.steps

    before, after, steps = run(tmp_path / "a")
    assert after < before - 1.0, (before, after)
    assert run(tmp_path / "b")[2] == steps


def test_training_refuses_what_it_cannot_do_naming_it(tmp_path: Path) -> None:
    engine = LearnerEngine(random_llama(), LearnerConfig(backend="torch", checkpoint_dir=tmp_path))
    rows = [example_sample(load_model("tiny"), e) for e in reference_examples("s", synthetic_tasks(1))]
    with pytest.raises(InputError, match="epochs"):
        train(engine, rows, epochs=0, token_budget=512, pad_token_id=0, seed=0)
    with pytest.raises(InputError, match="token budget"):
        train(engine, rows, epochs=1, token_budget=4, pad_token_id=0, seed=0)
