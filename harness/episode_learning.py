"""Does credit flow across turns? The measurement behind ``python -m bench.episode_learning`` (whose
docstring states the question, the criterion and every figure): a format warm start (:func:`warm_start`),
then whole two-turn episodes of the ``synthetic-feedback`` family through the pipeline's processors on
the in-memory runtime with the learner between rounds (:func:`measure`), and the bound of a second turn
blind to the feedback (:func:`blind_second`)."""

from __future__ import annotations

import math
import random
import re
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from learner.batch import TrainSample, collate
from learner.config import LearnerConfig
from learner.grpo import token_logprobs
from learner.sft import sft_loss
from producers.generator.models import PolicyModel, load_model
from producers.generator.prompting import feedback_segment
from producers.ingest.synthetic import (
    FEEDBACK_OFFSETS,
    FEEDBACK_PROMPT,
    feedback_tasks,
)
from rlstream.inprocess import InProcessRun
from rlstream.settings import Settings
from schemas.episode import FailedCase, Feedback, TurnEnded
from schemas.rollout import CodeGenerated, NoiseVerdict, RolloutRequested, SamplingParams
from schemas.topics import GENERATIONS, TURNS, VERDICTS
from streams.episode.config import FeedbackConfig
from streams.episode.feedback import render

CACHE = Path.home() / ".rlstream"
_RETURN = re.compile(r"^\s*return\b(.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Window:
    """Pass rates of the episodes requested in some steps."""

    episodes: int
    #: episodes solved by their first turn
    first: float
    #: episodes solved by their final turn
    final: float
    #: episodes reaching a second turn, and the share of them it solved
    second_turns: int
    second: float
    #: groups whose episodes did not all score alike: the only ones with a gradient (group-relative)
    mixed_groups: int
    groups: int
    #: per offset, the first and the second turns' most common answers (what the program returns)
    first_answers: dict[int, list[tuple[str, int]]]
    answers: dict[int, list[tuple[str, int]]]

    def line(self) -> str:
        def top(answers: dict[int, list[tuple[str, int]]]) -> str:
            return "; ".join(f"{k}: " + " ".join(f"{a!r}x{n}" for a, n in v) for k, v in answers.items())

        return (
            f"{self.episodes} episodes: first turn {self.first:.2f}, final {self.final:.2f}, second turn "
            f"{self.second:.2f} of {self.second_turns}, groups with a signal "
            f"{self.mixed_groups}/{self.groups} "
            f"[first answers by offset: {top(self.first_answers)}] [second: {top(self.answers)}]"
        )


@dataclass(frozen=True)
class Measured:
    #: step 1 alone (version 0: the weights before any RL), the first and the last window
    before: Window
    start: Window
    end: Window
    #: second turns whose context the warm start's conversations matched token for token
    shaped: int
    #: the warm start's first and last loss (nan without one)
    warm_losses: tuple[float, float]


def _answer(code: str) -> str:
    """What a turn's program returns (the expression of its last ``return``), or its last line."""
    found = _RETURN.findall(code)
    if found:
        return str(found[-1]).strip()
    lines = [line.strip() for line in code.splitlines() if line.strip()]
    return lines[-1] if lines else ""


# --- the format warm start -------------------------------------------------------------------------

#: what the warm start answers with: any one-digit offset, whatever the task
DIGITS = tuple(range(10))


def _encode_prompt(policy: PolicyModel, text: str) -> list[int]:
    # as the generator encodes a first turn's prompt
    return list(policy.tokenizer.encode(text, add_special_tokens=not policy.has_chat_template))


def _digit_token(policy: PolicyModel, digit: int) -> int:
    ids = policy.tokenizer.encode(str(digit), add_special_tokens=False)
    if len(ids) != 1:
        raise ValueError(f"the digit {digit} is {len(ids)} tokens for this tokenizer, not one")
    return int(ids[0])


def feedback_ids(policy: PolicyModel, returned: int, expected: int) -> list[int]:
    """The tokens the episode puts between a first answer ``returned`` and the second turn of the task
    whose offset is ``expected``: the feedback the episode step derives (``offset(0)`` returned the
    answer, the visible case expected the offset) in the model's template, encoded as the generator
    encodes it (:meth:`RolloutGenerator.segment_ids`)."""
    case = FailedCase(
        index=0, call="offset(0)", expected=repr(expected), failure="wrong", returned=repr(returned)
    )
    body = Feedback(version=FeedbackConfig().label(), passed=0, total=1, cases=(case,), text="")
    segment = feedback_segment(policy.tokenizer, FEEDBACK_PROMPT, render(body))
    tokenizer = policy.tokenizer
    ids = list(tokenizer.encode(segment.before, add_special_tokens=False)) if segment.before else []
    ids += tokenizer.encode(segment.content, add_special_tokens=False, split_special_tokens=True)
    ids += tokenizer.encode(segment.after, add_special_tokens=False) if segment.after else []
    return ids


def warm_start_sample(policy: PolicyModel, rng: random.Random, offsets: Sequence[int]) -> TrainSample:
    """One conversation of the family's exact shape: a wrong first answer, the feedback it gets, a second
    answer. Both answers are uniformly random digits and the second is drawn without looking at the
    expected value (it is the offset one time in ten, for every offset alike): the conversation teaches
    to answer with a number and nothing about which."""
    expected = rng.choice(list(offsets))
    first = rng.choice([d for d in DIGITS if d != expected])
    second = rng.choice(DIGITS)
    return TrainSample(
        sample_id="warm",
        group_id="warm",
        policy_version=0,
        reward=0.0,
        advantage=0.0,
        prompt_token_ids=tuple(_encode_prompt(policy, FEEDBACK_PROMPT)),
        completion_token_ids=(),
        behaviour_logprobs=(),
        turns=(
            ((), (_digit_token(policy, first),), (0.0,)),
            (tuple(feedback_ids(policy, first, expected)), (_digit_token(policy, second),), (0.0,)),
        ),
    )


def warm_start(
    policy: PolicyModel,
    offsets: Sequence[int],
    *,
    steps: int,
    batch: int,
    lr: float,
    seed: int,
) -> tuple[float, float]:
    """Train ``policy.model`` in place on ``steps`` batches of fresh warm-start conversations
    (completion-only cross-entropy); the first and the last batch's loss."""
    rng = random.Random(seed)
    model = policy.model
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    losses: list[float] = []
    for _ in range(steps):
        rows = collate(
            [warm_start_sample(policy, rng, offsets) for _ in range(batch)], pad_token_id=policy.pad_token_id
        )
        logits = model(input_ids=rows.input_ids, attention_mask=rows.attention_mask).logits[:, :-1, :]
        loss = sft_loss(token_logprobs(logits, rows.targets), rows.loss_mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        losses.append(float(loss.detach()))
    model.eval()
    return (losses[0], losses[-1]) if losses else (math.nan, math.nan)


def _check_shape(pipe: InProcessRun, policy: PolicyModel) -> int:
    """How many second turns, after a one-digit first answer, the warm start's conversations matched
    token for token; raises on one that differs (the warm start would have taught another shape)."""
    prompt = _encode_prompt(policy, FEEDBACK_PROMPT)
    digits = {_digit_token(policy, d): d for d in DIGITS}
    matched = 0
    for g in pipe.events(GENERATIONS.name):
        if not (isinstance(g, CodeGenerated) and g.turn == 1):
            continue
        first = g.prompt_token_ids[len(prompt)]
        if first not in digits:
            continue
        offset = int(g.task_id.rsplit("add", 1)[1])
        if list(g.prompt_token_ids) != [*prompt, first, *feedback_ids(policy, digits[first], offset)]:
            raise RuntimeError(f"{g.sample_id}: the second turn's context is not the warm start's shape")
        matched += 1
    return matched


def blind_second(offsets: Sequence[int]) -> float:
    """The best a second turn blind to the expected value can do: one of the offsets left."""
    return 1 / (len(offsets) - 1)


def _window(pipe: InProcessRun, steps: range, offsets: Sequence[int]) -> Window:
    groups = {f"learn/{t.task_id}/{s}" for t in feedback_tasks(offsets=offsets) for s in steps}
    verdicts = [e for e in pipe.events(VERDICTS.name) if isinstance(e, NoiseVerdict) and e.group_id in groups]
    first_ended = [
        e
        for e in pipe.events(TURNS.name)
        if isinstance(e, TurnEnded) and e.turn == 0 and e.group_id in groups
    ]
    if len(first_ended) != len(verdicts):
        raise RuntimeError(f"{len(verdicts)} episodes judged but {len(first_ended)} first turns ended")
    n = max(1, len(verdicts))
    seconds = [v for v in verdicts if v.turn == 1]
    answers: list[dict[int, Counter[str]]] = [{k: Counter() for k in offsets} for _ in range(2)]
    for g in pipe.events(GENERATIONS.name):
        if isinstance(g, CodeGenerated) and g.turn < 2 and g.group_id in groups:
            answers[g.turn][int(g.task_id.rsplit("add", 1)[1])][_answer(g.code)] += 1
    rewards: dict[str, set[float]] = {}
    for v in verdicts:
        rewards.setdefault(v.group_id, set()).add(v.reward)
    return Window(
        episodes=len(verdicts),
        first=sum(1 for v in verdicts if v.turn == 0 and v.reward > 0) / n,
        final=sum(1 for v in verdicts if v.reward > 0) / n,
        second_turns=len(seconds),
        second=sum(1 for v in seconds if v.reward > 0) / max(1, len(seconds)),
        mixed_groups=sum(1 for r in rewards.values() if len(r) > 1),
        groups=len(rewards),
        first_answers={k: c.most_common(2) for k, c in answers[0].items()},
        answers={k: c.most_common(2) for k, c in answers[1].items()},
    )


def measure(
    steps: int,
    group: int,
    window: int,
    lr: float,
    temperature: float,
    workdir: Path,
    *,
    model: str = "tiny",
    max_tokens: int = 1,
    token_budget: int = 16384,
    offsets: Sequence[int] = FEEDBACK_OFFSETS,
    device: Literal["cpu", "cuda"] = "cpu",
    seed: int = 0,
    warm_steps: int = 0,
    warm_batch: int = 64,
    warm_lr: float = 3e-3,
    updates: int = 1,
) -> Measured:
    """Train ``steps`` steps of one group of ``group`` episodes per task, after ``warm_steps`` steps of
    the format warm start (:func:`warm_start`, on ``model`` loaded here and saved under ``workdir``)."""
    tasks = feedback_tasks(max_turns=2, offsets=offsets)
    warm_losses = (math.nan, math.nan)
    if warm_steps:
        policy = load_model(model, CACHE / "models", seed=seed)
        started = time.monotonic()
        warm_losses = warm_start(policy, offsets, steps=warm_steps, batch=warm_batch, lr=warm_lr, seed=seed)
        folder = workdir / "warm-start"
        policy.model.save_pretrained(str(folder))
        policy.tokenizer.save_pretrained(str(folder))
        print(
            f"warm start: {warm_steps} steps of {warm_batch} conversations, loss {warm_losses[0]:.3f} -> "
            f"{warm_losses[1]:.3f} (every digit alike: ln 10 = {math.log(10):.3f}) "
            f"in {time.monotonic() - started:.0f} s",
            flush=True,
        )
        model = str(folder)
    learner = LearnerConfig(
        backend="torch",
        accelerator=device,
        seed=seed,
        lr=lr,
        updates_per_batch=updates,
        # the behaviour log-probs describe the distribution sampled from
        temperature=temperature,
        token_budget=token_budget,
        checkpoint_dir=workdir / "checkpoints",
        pad_token_id=load_model(model, CACHE / "models").pad_token_id,
    )
    settings = Settings(
        run_id="learn",
        home=workdir,
        generator={
            "model": model,
            "device": device,
            "seed": seed,
            "models_dir": CACHE / "models",
            "batch_size": 64,
        },
        sandbox={"cache_dir": CACHE / "cache" / "sandbox", "backend": "wasm", "workers": 1},
        # a second turn that writes no program is the failure it is, trained on (not masked away)
        noise={"degenerate_verdict": "accept"},
        # solving on the second turn is worth what solving on the first is: only the feedback differs
        reward={"weights": {"turns": 0.0}},
        pipeline={"group_deadline_s": 3600.0},
    )
    pipe = InProcessRun(
        settings,
        learner,
        ("generator", "sandbox", "episode", "reward", "filter", "experience"),
        tasks=tasks,
    )
    # one token a turn: the offset after ``return x + ``
    sampling = SamplingParams(temperature=temperature, top_p=1.0, max_tokens=max_tokens)
    started = time.monotonic()
    try:
        for step in range(steps):
            for task in tasks:
                pipe.publish(
                    RolloutRequested(
                        group_id=f"learn/{task.task_id}/{step}",
                        task_id=task.task_id,
                        group_size=group,
                        prompt=task.prompt,
                        entry_point=task.entry_point,
                        policy_version=pipe.engine.policy_version,
                        sampling=sampling,
                        max_turns=task.max_turns or 1,
                    )
                )
            pipe.drain()
            if step % window == window - 1:
                w = _window(pipe, range(step - window + 1, step + 1), offsets)
                print(f"step {step + 1} ({time.monotonic() - started:.0f} s): {w.line()}", flush=True)
        return Measured(
            before=_window(pipe, range(1), offsets),
            start=_window(pipe, range(min(window, steps)), offsets),
            end=_window(pipe, range(max(0, steps - window), steps), offsets),
            shaped=_check_shape(pipe, pipe.policy) if warm_steps else 0,
            warm_losses=warm_losses,
        )
    finally:
        pipe.close()
