"""Two CPU ranks under a launcher: DeepSpeed ZeRO-2 partitions the optimizer state across them, the
checkpoint holds both partitions, one rank publishes the weights and both agree on the event, and both
resume from the checkpoint. (Run by the test below as ``torch.distributed.run`` of this very file.)"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def rank_main(out: Path) -> None:
    import torch

    torch.set_num_threads(1)
    from learner.batch import TrainSample, collate
    from learner.config import LearnerConfig
    from learner.engine import LearnerEngine
    from learner.models import random_llama

    config = LearnerConfig.model_validate(
        {
            "accelerator": "cpu",
            "zero_stage": 2,
            "lr": 1e-3,
            "checkpoint_dir": out / "ckpt",
            "distributed": {"launcher": "external"},
        }
    )
    engine = LearnerEngine(random_llama(vocab_size=300, seed=0), config)
    g = torch.Generator().manual_seed(engine.rank)  # each rank trains on its own data
    samples = [
        TrainSample(
            sample_id=f"r{engine.rank}s{i}",
            group_id="g",
            policy_version=0,
            reward=float(i % 2),
            advantage=1.0 if i % 2 else -1.0,
            prompt_token_ids=(5, 6, 7),
            completion_token_ids=tuple(torch.randint(3, 300, (4,), generator=g).tolist()),
            behaviour_logprobs=(-5.7,) * 4,
        )
        for i in range(4)
    ]
    batch = collate(samples)
    for _ in range(3):
        engine.train_step(batch)
    event = engine.publish(run_id="multi")
    weights = [p.detach().clone() for p in engine.module.parameters()]
    manifest = engine.load_checkpoint()
    assert manifest is not None
    same = all(torch.equal(a, b) for a, b in zip(weights, engine.module.parameters(), strict=True))
    (out / f"rank{engine.rank}.json").write_text(
        json.dumps(
            {
                "world_size": engine.world_size,
                "uri": event.checkpoint_uri,
                "sha256": event.sha256,
                "resumed_step": engine.step,
                "weights_equal_after_load": same,
            }
        )
    )


@pytest.mark.slow
def test_two_cpu_ranks_zero2_checkpoint_and_publish(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        str(port),
        __file__,
        str(tmp_path),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-4000:]
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in (0, 1)]
    assert [r["world_size"] for r in ranks] == [2, 2]
    assert ranks[0]["uri"] == ranks[1]["uri"] and ranks[0]["sha256"] == ranks[1]["sha256"]
    assert all(r["resumed_step"] == 3 and r["weights_equal_after_load"] for r in ranks)
    state = tmp_path / "ckpt" / "step-00000003" / "state" / "ds"
    assert sorted(p.name for p in state.glob("zero_pp_rank_*_optim_states.pt")) == [
        "zero_pp_rank_0_mp_rank_00_optim_states.pt",
        "zero_pp_rank_1_mp_rank_00_optim_states.pt",
    ]
    published = list((tmp_path / "ckpt" / "published").rglob("*"))
    assert [p.name for p in published if p.is_file()] == ["model.safetensors"]  # no stray temporaries


if __name__ == "__main__":
    rank_main(Path(sys.argv[1]))
