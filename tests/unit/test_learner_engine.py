"""The learner engine on CPU: DeepSpeed ZeRO 0 and 2 train, ZeRO-3 and the CPU-offloaded optimizer take
the step stage 0 takes, checkpoints resume exactly (optimizer state included), published weights load
back. A tiny random Llama keeps each step in milliseconds."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from learner.batch import Batch, TrainSample, collate
from learner.config import LearnerConfig
from learner.engine import LearnerEngine
from learner.models import random_llama
from learner.store import file_sha256, path_of_file_uri
from schemas.policy import ConsumedOffset

torch.set_num_threads(1)

VOCAB = 300


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def make_engine(
    tmp_path: Path, *, backend: str = "deepspeed", zero: int = 2, seed: int = 0, **kw: object
) -> LearnerEngine:
    config = LearnerConfig.model_validate(
        {
            "backend": backend,
            "accelerator": "cpu",
            "zero_stage": zero,
            "lr": 1e-3,
            "checkpoint_dir": tmp_path / "ckpt",
            "distributed": {"master_port": free_port()},
            **kw,
        }
    )
    return LearnerEngine(random_llama(vocab_size=VOCAB, seed=seed), config)


def fixed_batch(seed: int = 1, rows: int = 8) -> Batch:
    g = torch.Generator().manual_seed(seed)
    samples = []
    for i in range(rows):
        prompt = tuple(torch.randint(3, VOCAB, (3,), generator=g).tolist())
        completion = tuple(torch.randint(3, VOCAB, (5,), generator=g).tolist())
        samples.append(
            TrainSample(
                sample_id=f"s{i}",
                group_id="g",
                policy_version=0,
                reward=float(i % 2),
                advantage=1.0 if i % 2 else -1.0,
                prompt_token_ids=prompt,
                completion_token_ids=completion,
                behaviour_logprobs=(0.0,) * len(completion),
            )
        )
    return collate(samples)


def on_policy(engine: LearnerEngine, batch: Batch) -> Batch:
    """The batch with behaviour log-probs recorded by the engine's current weights."""
    lp = engine.logprobs(batch).cpu()
    return Batch(**{**batch.__dict__, "behaviour_logprobs": torch.where(batch.loss_mask, lp, 0.0)})


def rewarded_logprob(engine: LearnerEngine, batch: Batch) -> float:
    """Mean log-prob of the positive-advantage samples' completion tokens."""
    lp = engine.logprobs(batch).cpu()
    keep = batch.loss_mask & (batch.advantages > 0).unsqueeze(-1)
    return float(lp[keep].mean())


@pytest.mark.parametrize("zero", [0, 2])
def test_deepspeed_zero_stage_trains(tmp_path: Path, zero: int) -> None:
    engine = make_engine(tmp_path, zero=zero)
    assert engine._ds is not None
    assert engine._ds.zero_optimization_stage() == zero
    batch = on_policy(engine, fixed_batch())
    before = rewarded_logprob(engine, batch)
    first = engine.train_step(batch, staleness_hist={0: batch.rows})
    # behaviour log-probs came from these very weights: the importance ratio is exactly 1
    assert first["is_ratio_mean"] == 1.0
    assert first["is_ratio_max"] == 1.0
    assert first["is_truncated_fraction"] == 0.0
    assert first["staleness_hist.0"] == batch.rows
    assert first["tokens_per_s"] > 0
    for _ in range(4):
        last = engine.train_step(batch)
    assert engine.step == 5
    # the loss moved and the rewarded completions became more likely
    assert last["loss"] < first["loss"]
    assert rewarded_logprob(engine, batch) > before + 0.1
    # now the weights have moved away from the behaviour policy
    assert last["is_ratio_mean"] != 1.0


#: how far ZeRO-3 and the offloaded optimizer may land from stage 0 after one step (fp32 on CPU): the
#: partitioned gradients are summed in another order, and Adam's first step divides each gradient
#: by its own magnitude, so a last-bit difference in a near-zero gradient moves a weight by up to lr
#: times that relative difference
PARITY_ATOL = 1e-5


@pytest.mark.parametrize(("zero", "offload"), [(3, "none"), (2, "cpu"), (3, "cpu")])
def test_zero_3_and_cpu_offload_take_the_step_stage_0_takes(tmp_path: Path, zero: int, offload: str) -> None:
    batch = fixed_batch()
    plain = make_engine(tmp_path / "plain", zero=0)
    behaviour = on_policy(plain, batch)
    sharded = make_engine(tmp_path / "sharded", zero=zero, offload_optimizer=offload)
    assert sharded._ds is not None and sharded._ds.zero_optimization_stage() == zero
    first = (plain.train_step(behaviour), sharded.train_step(behaviour))
    second = (plain.train_step(behaviour), sharded.train_step(behaviour))
    # the same loss before the step (same weights), and after it (the same update)
    for a, b in (first, second):
        assert b["loss"] == pytest.approx(a["loss"], abs=1e-6)
    assert second[0]["loss"] != first[0]["loss"]
    expected, got = plain.full_state_dict(), sharded.full_state_dict()
    assert expected.keys() == got.keys()
    for name, tensor in expected.items():
        torch.testing.assert_close(got[name], tensor, rtol=0, atol=PARITY_ATOL, msg=name)
    torch.testing.assert_close(sharded.logprobs(batch), plain.logprobs(batch), rtol=0, atol=PARITY_ATOL)


@pytest.mark.parametrize(
    ("backend", "zero", "offload"),
    [
        ("deepspeed", 2, "none"),
        ("deepspeed", 0, "none"),
        ("torch", 0, "none"),
        ("deepspeed", 3, "none"),
        ("deepspeed", 3, "cpu"),
    ],
)
def test_checkpoint_resume_is_exact(tmp_path: Path, backend: str, zero: int, offload: str) -> None:
    batch = fixed_batch()
    offsets = (ConsumedOffset(topic="rl.experiences", partition=0, offset=42),)

    a = make_engine(tmp_path, backend=backend, zero=zero, offload_optimizer=offload)
    behaviour = on_policy(a, batch)
    for _ in range(2):
        a.train_step(behaviour)
    _, manifest = a.save_checkpoint(offsets)
    assert (manifest.step, manifest.consumed) == (2, offsets)
    # a crash mid-way through the next checkpoint leaves a temporary directory behind
    (a.checkpoints.begin(3) / "model.safetensors").write_bytes(b"partial")
    for _ in range(2):
        a.train_step(behaviour)
    expected = a.logprobs(batch)

    # a fresh process-equivalent: different random weights, then resume from disk
    b = make_engine(tmp_path, backend=backend, zero=zero, seed=123, offload_optimizer=offload)
    loaded = b.load_checkpoint()
    assert loaded is not None
    assert (loaded.step, loaded.consumed, b.step) == (2, offsets, 2)
    for _ in range(2):
        b.train_step(behaviour)
    # identical after the same two steps: weights AND AdamW moments were restored (with fresh moments
    # the first resumed step would differ)
    torch.testing.assert_close(b.logprobs(batch), expected, rtol=0, atol=1e-5)


def test_resume_without_optimizer_state_would_differ(tmp_path: Path) -> None:
    # guards the test above: loading only the weights gives a different trajectory
    batch = fixed_batch()
    a = make_engine(tmp_path, backend="torch", zero=0)
    behaviour = on_policy(a, batch)
    for _ in range(2):
        a.train_step(behaviour)
    path, _ = a.save_checkpoint()
    for _ in range(2):
        a.train_step(behaviour)
    b = make_engine(tmp_path / "b", backend="torch", zero=0, seed=5)
    b.module.load_state_dict(load_file(str(path / "model.safetensors")))
    for _ in range(2):
        b.train_step(behaviour)
    assert (b.logprobs(batch) - a.logprobs(batch)).abs().max() > 1e-4


@pytest.mark.parametrize("zero", [2, 3])
def test_publish_writes_verifiable_weights(tmp_path: Path, zero: int) -> None:
    # under ZeRO-3 the engine holds only slices of each parameter: the published file is whole
    engine = make_engine(tmp_path, zero=zero, publish_uri=(tmp_path / "store").as_uri())
    batch = fixed_batch()
    engine.train_step(on_policy(engine, batch))
    offsets = (ConsumedOffset(topic="rl.experiences", partition=1, offset=7),)
    event = engine.publish(
        run_id="run1", consumed=offsets, trained_sample_ids=batch.sample_ids, metrics={"loss": 0.5}
    )
    assert (event.policy_version, event.step, event.consumed) == (1, 1, offsets)
    assert event.checkpoint_uri.startswith("file://") and "run1/v000001" in event.checkpoint_uri
    weights = path_of_file_uri(event.checkpoint_uri)
    assert file_sha256(weights) == event.sha256
    # a generator loading the published file scores tokens exactly like the learner
    fresh = random_llama(vocab_size=VOCAB, seed=99)
    fresh.load_state_dict(load_file(str(weights)))
    fresh.eval()
    with torch.no_grad():
        logits = fresh(input_ids=batch.input_ids, attention_mask=batch.attention_mask).logits[:, :-1]
    from learner.grpo import token_logprobs

    torch.testing.assert_close(
        token_logprobs(logits, batch.targets), engine.logprobs(batch), rtol=0, atol=1e-5
    )
    # the checkpoint carries the published version: a restart continues from v1
    found = engine.checkpoints.newest()
    assert found is not None and found[1].policy_version == 1


def test_decoupled_and_kl_modes_run(tmp_path: Path) -> None:
    engine = make_engine(tmp_path, backend="torch", decoupled=True, kl_coef=0.05, updates_per_batch=3)
    batch = fixed_batch()
    stale = Batch(**{**batch.__dict__, "behaviour_logprobs": torch.where(batch.loss_mask, -8.0, 0.0)})
    m = engine.train_step(stale)
    assert engine.step == 3
    # behaviour log-prob -8 is far below the policy's (about -ln 300 = -5.7): every token is truncated
    assert m["is_truncated_fraction"] == 1.0
    assert m["kl_ref"] > 0.0


def test_every_version_names_the_version_its_run_started_from_and_a_restart_repeats_it(
    tmp_path: Path,
) -> None:
    engine = make_engine(tmp_path, backend="torch", base_policy="sft-run:v2")
    engine.train_step(on_policy(engine, fixed_batch()))
    event = engine.publish(run_id="rl-run", trained_sample_ids=("s0",))
    assert event.base == "sft-run:v2" and event.algorithm == "grpo" and event.as_written().version == 3
    found = engine.checkpoints.newest()
    assert found is not None
    again = engine.republish(*found)
    assert again == event and again.event_id() == event.event_id()
    # a run started from a model's own weights names none, and its bytes are the old version's
    plain = make_engine(tmp_path / "plain", backend="torch")
    plain.train_step(on_policy(plain, fixed_batch()))
    assert plain.publish(run_id="rl-run").as_written().version == 1
