"""The supervised stage (``rlstream sft``): curated examples written to the log, trained on as read back,
published as a policy version that names them.

An SFT stage is a run of its own (its run id names its versions on ``rl.policy``). It writes its
examples to ``rl.sft.examples`` first, then trains on the examples of its run as the log holds them, so
what was trained is exactly what an auditor replays; a stage started again with the same run id writes
the same event ids (nothing is doubled) and trains on the same examples. The version it publishes is a
``PolicyPublished`` with ``stage="sft"`` whose ``consumed`` is the examples' end offset and whose
``trained_sample_ids`` are their ids; its metrics hold the loss curve and the answers' NLL before and
after. The weights are also saved as a model folder that ``rlstream run --from-policy`` (or ``--model``)
starts RL from.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from consumers.review import Recorded, reviews_in_force
from infra.kafka.admin import ensure_topics
from infra.kafka.producer import EventProducer
from infra.kafka.replay import replay, skip_undecodable
from learner.batch import TrainSample
from learner.config import default_checkpoint_dir
from learner.engine import LearnerEngine
from learner.sft import Curve, nll, train
from producers.generator.models import PolicyModel, load_model
from producers.generator.prompting import PromptStyle, build_prompt, template_for
from rlstream.settings import Settings
from schemas.errors import InputError
from schemas.policy import ConsumedOffset, PolicyPublished
from schemas.rollout import CodeGenerated, ReviewRecorded
from schemas.sft import SftExample
from schemas.task import TaskPublished
from schemas.topics import GENERATIONS, POLICY, REVIEWS, SFT_EXAMPLES, TASKS

Progress = Callable[[str], None]


def reference_examples(run_id: str, tasks: Iterable[TaskPublished]) -> list[SftExample]:
    """One example per training task with a reference solution: its prompt and the reference. A
    held-out task (``split="eval"``) is never an example: evaluation must stay on tasks the policy
    never saw an answer to."""
    return [
        SftExample(
            run_id=run_id,
            example_id=f"{t.task_id}:reference",
            task_id=t.task_id,
            source="reference",
            prompt=t.prompt,
            completion=t.reference,
        )
        for t in tasks
        if t.reference and t.split == "train"
    ]


def review_examples(bootstrap: str, run_id: str, source_run: str, progress: Progress) -> list[SftExample]:
    """One example per sample of ``source_run`` whose review in force is ``accept``: the code of its
    last turn under its task's prompt (a human vouched for that answer)."""
    in_force = reviews_in_force(
        Recorded(item.envelope.id, item.envelope.time, item.event)
        for item in replay(bootstrap, REVIEWS.name, on_undecodable=skip_undecodable)
        if isinstance(item.event, ReviewRecorded)
    )
    accepted = {sid: r.event_id for sid, r in in_force.items() if r.event.verdict == "accept"}
    last: dict[str, CodeGenerated] = {}
    for item in replay(bootstrap, GENERATIONS.name, on_undecodable=skip_undecodable):
        ev = item.event
        if not (isinstance(ev, CodeGenerated) and item.envelope.run_id == source_run):
            continue
        # an episode's answer is its last turn's code
        if ev.sample_id in accepted and (ev.sample_id not in last or ev.turn > last[ev.sample_id].turn):
            last[ev.sample_id] = ev
    prompts = {
        item.event.task_id: item.event.prompt
        for item in replay(bootstrap, TASKS.name, on_undecodable=skip_undecodable)
        if isinstance(item.event, TaskPublished)
    }
    out = [
        SftExample(
            run_id=run_id,
            example_id=f"{sid}:review",
            task_id=ev.task_id,
            source="review",
            prompt=prompts[ev.task_id],
            completion=ev.code,
            review_event_id=accepted[sid],
            source_run_id=source_run,
        )
        for sid, ev in sorted(last.items())
        if ev.task_id in prompts and ev.code.strip()
    ]
    progress(f"{len(out)} accepted review(s) of run {source_run} with their code ({len(accepted)} in force)")
    return out


def completion_text(code: str, prompt: str, style: PromptStyle) -> str:
    """What the model should write after the prompt for ``code`` (a whole program) to be its answer,
    in the form the generator's extraction reads (``producers/generator/prompting.extract_code``): a
    fenced block for a chat model; for a completion model the rest of the program after the prompt
    when the program continues it (a task's reference usually does), else the whole program."""
    if style == "chat":
        return f"```python\n{code.strip(chr(10))}\n```"
    return code[len(prompt) :] if code.startswith(prompt) and len(code) > len(prompt) else code


def example_sample(policy: PolicyModel, example: SftExample) -> TrainSample:
    """One example as the learner's training row: the prompt encoded exactly as the generator encodes
    a first turn's (its chat template for a chat model), the answer after it and an end-of-sequence
    token (the model learns to stop); all of the answer is in the loss and none of the prompt."""
    tokenizer = policy.tokenizer
    template = template_for(tokenizer)
    prompt = build_prompt(tokenizer, example.prompt, template)
    prompt_ids = tuple(tokenizer.encode(prompt, add_special_tokens=not policy.has_chat_template))
    target = completion_text(example.completion, example.prompt, template.style)
    answer = (*tokenizer.encode(target, add_special_tokens=False), policy.eos_token_ids[0])
    return TrainSample(
        sample_id=example.example_id,
        group_id=example.run_id,
        policy_version=0,
        reward=0.0,
        advantage=0.0,
        prompt_token_ids=prompt_ids,
        completion_token_ids=answer,
        behaviour_logprobs=(0.0,) * len(answer),
    )


def publish_examples(bootstrap: str, settings: Settings, examples: Sequence[SftExample]) -> None:
    """Write the examples (idempotent: the same stage writes the same event ids)."""
    ensure_topics(bootstrap, settings.kafka, [SFT_EXAMPLES, POLICY])
    with EventProducer(
        bootstrap, source="rlstream-sft", run_id=examples[0].run_id if examples else ""
    ) as out:
        for example in examples:
            out.publish(example)


def read_examples(bootstrap: str, run_id: str) -> tuple[list[SftExample], ConsumedOffset | None]:
    """The stage's examples as the log holds them, in log order, each once (by event id), and the
    offset after the last record read (what the version's ``consumed`` names)."""
    seen: set[str] = set()
    out: list[SftExample] = []
    end: ConsumedOffset | None = None
    for item in replay(bootstrap, SFT_EXAMPLES.name, on_undecodable=skip_undecodable):
        end = ConsumedOffset(topic=item.topic, partition=item.partition, offset=item.offset + 1)
        if (
            isinstance(item.event, SftExample)
            and item.event.run_id == run_id
            and item.envelope.id not in seen
        ):
            seen.add(item.envelope.id)
            out.append(item.event)
    return out, end


@dataclass(frozen=True)
class StageResult:
    published: PolicyPublished
    curve: Curve
    nll_before: float
    nll_after: float
    examples: int
    #: the trained weights as a model folder (``rlstream run --from-policy``/``--model``)
    folder: Path


def policy_folder(settings: Settings, run_id: str, version: int) -> Path:
    return settings.home / "runs" / run_id / "policy" / f"v{version:06d}"


def train_stage(
    settings: Settings,
    bootstrap: str,
    run_id: str,
    *,
    epochs: int,
    progress: Progress,
) -> StageResult:
    """Train the generator's model (``settings.generator.model``) on the stage's examples read back from
    the log and publish the version on ``rl.policy``."""
    examples, end = read_examples(bootstrap, run_id)
    if not examples or end is None:
        raise InputError(f"no examples of stage {run_id} on {SFT_EXAMPLES.name}", location="--tasks")
    gen = settings.generator
    policy = load_model(gen.model, gen.models_dir or settings.home / "models", seed=gen.seed)
    config = settings.learner
    update: dict[str, object] = {
        "temperature": 1.0,
        "pad_token_id": policy.pad_token_id,
        "kl_coef": 0.0,
    }
    if config.checkpoint_dir == type(config)().checkpoint_dir:
        update["checkpoint_dir"] = default_checkpoint_dir(settings.home, run_id)
    config = config.model_copy(update=update)
    samples = [example_sample(policy, e) for e in examples]
    budget = max(config.token_budget, max(s.length for s in samples))
    engine = LearnerEngine(policy.model, config)
    before = nll(engine, samples, token_budget=budget, pad_token_id=policy.pad_token_id)
    progress(
        f"{len(samples)} example(s), {sum(s.generated for s in samples)} answer tokens; NLL {before:.4f}"
    )

    def step(epoch: int, n: int, loss: float) -> None:
        progress(f"epoch {epoch}/{epochs} step {n}: loss {loss:.4f}")

    curve = train(
        engine,
        samples,
        epochs=epochs,
        token_budget=budget,
        pad_token_id=policy.pad_token_id,
        seed=config.seed,
        progress=step,
    )
    after = nll(engine, samples, token_budget=budget, pad_token_id=policy.pad_token_id)
    metrics = {
        "sft_nll_before": before,
        "sft_nll_after": after,
        "sft_tokens": float(curve.tokens),
        "sft_examples": float(len(samples)),
        **{f"sft_loss.epoch_{i}": v for i, v in enumerate(curve.epochs, start=1)},
    }
    published = engine.publish(
        run_id=run_id,
        consumed=[end],
        trained_sample_ids=[e.example_id for e in examples],
        metrics={k: v for k, v in metrics.items() if math.isfinite(v)},
        model_name=policy.name,
        stage="sft",
    )
    with EventProducer(bootstrap, source="rlstream-sft", run_id=run_id) as out:
        out.publish(published)
    folder = policy_folder(settings, run_id, published.policy_version)
    folder.mkdir(parents=True, exist_ok=True)
    model: Any = engine.module
    with engine.whole_parameters():  # under ZeRO-3 the module holds only slices of them
        model.save_pretrained(str(folder))
    policy.tokenizer.save_pretrained(str(folder))
    return StageResult(
        published=published,
        curve=curve,
        nll_before=before,
        nll_after=after,
        examples=len(samples),
        folder=folder,
    )


@dataclass(frozen=True)
class StartingPolicy:
    """What ``rlstream run --from-policy`` starts from: a model folder, and the published version it
    holds as ``RUN_ID:vN`` (None for a folder given as such), which the run's versions name as base."""

    folder: Path
    ref: str | None = None


def starting_policy(settings: Settings, bootstrap: str | None, spec: str) -> StartingPolicy:
    """The model folder ``rlstream run --from-policy SPEC`` starts from: SPEC is a model folder, or a
    published version as ``RUN_ID`` (its newest) or ``RUN_ID:vN``. A version's folder is the one its
    stage saved on this machine, else it is rebuilt from the published checkpoint (verified against the
    version's sha256) on the model the version names."""
    folder = Path(spec).expanduser()
    if folder.is_dir():
        return StartingPolicy(folder)
    run_id, _, wanted = spec.partition(":v")
    if not run_id or (wanted and not wanted.isdigit()):
        raise InputError(
            f"--from-policy {spec!r} is neither a model folder nor RUN_ID or RUN_ID:vN",
            location="--from-policy",
        )
    if bootstrap is None:
        raise InputError(f"--from-policy {spec}: no broker to read rl.policy from", location="--from-policy")
    versions = {
        item.event.policy_version: item.event
        for item in replay(bootstrap, POLICY.name, on_undecodable=skip_undecodable)
        if isinstance(item.event, PolicyPublished) and item.event.run_id == run_id
    }
    if not versions:
        raise InputError(f"--from-policy {spec}: run {run_id} published no version", location="--from-policy")
    version = int(wanted) if wanted else max(versions)
    if version not in versions:
        raise InputError(
            f"--from-policy {spec}: run {run_id} has versions {sorted(versions)}", location="--from-policy"
        )
    published = versions[version]
    folder = policy_folder(settings, run_id, version)
    ref = f"{run_id}:v{version}"
    if (folder / "config.json").exists():
        return StartingPolicy(folder, ref)
    from producers.generator.weights import apply_state_dict, read_safetensors, verified_checkpoint

    gen = settings.generator
    policy = load_model(published.model, gen.models_dir or settings.home / "models", seed=gen.seed)
    apply_state_dict(
        policy.model, read_safetensors(verified_checkpoint(published.checkpoint_uri, published.sha256))
    )
    folder.mkdir(parents=True, exist_ok=True)
    policy.model.save_pretrained(str(folder))
    policy.tokenizer.save_pretrained(str(folder))
    return StartingPolicy(folder, ref)
