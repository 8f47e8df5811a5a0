"""``max_turns = 1`` keeps the log of a one-shot run byte for byte: the deterministic run of
``tests/golden_run.py`` (the pipeline's processors and the learner in one process, the real sandbox and
codec) writes, record for record, what the same run wrote before episodes existed - the same types,
event ids, keys and bodies (timings blanked) - and nothing on ``rl.turns``."""

from __future__ import annotations

import json
from pathlib import Path

import torch

from schemas.topics import POLICY_LOADED
from tests.golden_run import GOLDEN, normalised, run_records

torch.set_num_threads(1)

LATER_TOPICS = {POLICY_LOADED.name}


def test_a_one_turn_run_writes_exactly_what_it_wrote_before_episodes(tmp_path: Path) -> None:
    # the recording is normalised again: fields found volatile since it was made are blanked on both sides
    recorded = normalised(json.loads(GOLDEN.read_text()))
    # facts on topics added after the recording (the versions the generators loaded) are no part of it
    now = [r for r in normalised(run_records(tmp_path)) if r["topic"] not in LATER_TOPICS]
    assert not [r for r in now if r["topic"] == "rl.turns"]
    assert [(r["topic"], r["type"], r["id"]) for r in now] == [
        (r["topic"], r["type"], r["id"]) for r in recorded
    ]
    for mine, golden in zip(now, recorded, strict=True):
        assert mine == golden, f"{golden['type']} {golden['id']} differs"
