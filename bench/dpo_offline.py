"""DPO on the preference pairs of a logged run: does the chosen-over-rejected margin rise on pairs the
training never saw?

A finished run's experiences (``rl.experiences``, e.g. of a GRPO run) are read back from the log; its
groups are split by a hash of the group id into training groups and held-out groups (``--held-out``);
``learner/dpo.py``'s pairing rule makes each group's pairs. The learner's engine (algorithm ``dpo``, the
frozen reference being the starting model) trains ``--epochs`` passes over the training pairs, and the
held-out pairs' implicit-reward margin, β·[(log π − log π_ref)(chosen) − (log π − log π_ref)(rejected)],
and preference accuracy are measured before training (0 and undefined: π is its reference) and after
each epoch. The run's samples were drawn by the policies of that run, not by the starting model: this
is DPO on logged, off-policy preferences, as a user would run it on an earlier run's log.

    rlstream run --tasks synthetic --model tiny --steps 12 --group-size 8 --run-id grpoA
    .venv/bin/python -m bench.dpo_offline --run grpoA [--held-out 0.25] [--epochs 3] [--beta 0.1]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time

import torch

from infra.kafka.replay import replay, skip_undecodable
from learner.batch import TrainSample, collate, select_pairs
from learner.config import LearnerConfig
from learner.dpo import Pair, pair_chunks, sequence_logprobs
from learner.engine import LearnerEngine
from producers.generator.models import load_model
from rlstream.commands.broker import bootstrap_servers
from rlstream.settings import get_settings
from schemas.rollout import ExperienceReady
from schemas.topics import EXPERIENCES


def held_out(group_id: str, fraction: float) -> bool:
    digest = hashlib.sha256(group_id.encode()).digest()
    return int.from_bytes(digest[:4], "big") / 2**32 < fraction


def logged_pairs(
    events: list[ExperienceReady], config: LearnerConfig, vocab_size: int | None
) -> tuple[list[TrainSample], list[Pair]]:
    samples: list[TrainSample] = []
    pairs: list[Pair] = []
    for event in events:
        kept, group_pairs, _ = select_pairs(
            event,
            lambda _sid: None,  # no review in force: the filter's verdicts stand
            current_version=0,
            staleness_bound=10**9,  # logged data: every version's samples are welcome
            token_budget=config.token_budget,
            vocab_size=vocab_size,
            min_margin=config.dpo.min_margin,
            max_pairs=config.dpo.max_pairs_per_group,
        )
        samples += kept
        pairs += group_pairs
    return samples, pairs


def sequence_scores(
    engine: LearnerEngine, samples: list[TrainSample], pad: int, rows: int
) -> dict[str, float]:
    """Each sample's summed completion log-prob under the engine's current weights."""
    out: dict[str, float] = {}
    with torch.no_grad():
        for i in range(0, len(samples), rows):
            batch = collate(samples[i : i + rows], pad_token_id=pad).to(engine.device)
            scores = sequence_logprobs(engine.logprobs(batch), batch.loss_mask)
            out.update(zip(batch.sample_ids, scores.tolist(), strict=True))
    return out


def margins(
    pairs: list[Pair], policy: dict[str, float], reference: dict[str, float], beta: float
) -> tuple[float, float]:
    """Mean implicit-reward margin of ``pairs`` and the fraction whose chosen side leads."""
    values = [
        beta * ((policy[p.chosen] - reference[p.chosen]) - (policy[p.rejected] - reference[p.rejected]))
        for p in pairs
    ]
    return statistics.fmean(values), sum(v > 0 for v in values) / len(values)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", required=True, help="the logged run whose experiences give the pairs")
    ap.add_argument("--held-out", type=float, default=0.25, help="fraction of groups held out")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--model", default="tiny", help="the run's starting model (tiny, smollm2, a folder)")
    ap.add_argument("--beta", type=float, default=0.1)
    ap.add_argument("--lr", type=float, default=5e-3, help="5e-3: the rate the tiny model learns at")
    ap.add_argument("--rows", type=int, default=16, help="distinct samples per step")
    args = ap.parse_args()

    settings = get_settings()
    bootstrap = bootstrap_servers()
    events = [
        e.event
        for e in replay(bootstrap, EXPERIENCES.name, on_undecodable=skip_undecodable)
        if isinstance(e.event, ExperienceReady) and e.event.group_id.startswith(f"{args.run}/")
    ]
    if not events:
        raise SystemExit(f"no experiences of run {args.run} on {EXPERIENCES.name} at {bootstrap}")
    train_events = [e for e in events if not held_out(e.group_id, args.held_out)]
    test_events = [e for e in events if held_out(e.group_id, args.held_out)]

    gen = settings.generator
    policy = load_model(args.model, gen.models_dir or settings.home / "models", seed=gen.seed)
    base = settings.learner
    config = base.model_copy(
        update={
            "algorithm": "dpo",
            "lr": args.lr,
            "kl_coef": 0.0,
            "pad_token_id": policy.pad_token_id,
            "dpo": base.dpo.model_copy(update={"beta": args.beta}),
        }
    )
    vocab = getattr(policy.model.config, "vocab_size", None)
    train_samples, train_pairs = logged_pairs(train_events, config, vocab)
    test_samples, test_pairs = logged_pairs(test_events, config, vocab)
    print(
        f"run {args.run}: {len(events)} groups; training {len(train_events)} groups, {len(train_pairs)} "
        f"pairs; held out {len(test_events)} groups, {len(test_pairs)} pairs",
        flush=True,
    )
    if not train_pairs or not test_pairs:
        raise SystemExit("too few pairs on one side: a longer run, or another --held-out")

    engine = LearnerEngine(policy.model, config)
    pad = policy.pad_token_id
    reference = sequence_scores(engine, test_samples, pad, args.rows)
    print("epoch 0 (the reference itself): held-out margin 0.000, accuracy -", flush=True)
    by_id = {s.sample_id: s for s in train_samples}
    generator = torch.Generator().manual_seed(config.seed)
    for epoch in range(1, args.epochs + 1):
        started = time.perf_counter()
        order = torch.randperm(len(train_pairs), generator=generator).tolist()
        shuffled = [train_pairs[i] for i in order]
        train_margin: list[float] = []
        for chunk in pair_chunks(shuffled, max_rows=args.rows):
            ids = list(dict.fromkeys(sid for p in chunk for sid in (p.chosen, p.rejected)))
            row = {sid: i for i, sid in enumerate(ids)}
            batch = collate([by_id[sid] for sid in ids], pad_token_id=pad)
            metrics = engine.dpo_step(batch, [(row[p.chosen], row[p.rejected]) for p in chunk])
            train_margin.append(metrics["dpo_margin"])
        margin, accuracy = margins(
            test_pairs, sequence_scores(engine, test_samples, pad, args.rows), reference, args.beta
        )
        print(
            f"epoch {epoch}: held-out margin {margin:.3f}, accuracy {accuracy:.2f} "
            f"(training pairs' margin before their step {statistics.fmean(train_margin):.3f}; "
            f"{time.perf_counter() - started:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
