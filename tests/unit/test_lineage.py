"""Lineage folds a sample's events from every topic, whatever order they are read in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from consumers.lineage import Lineage, group_of
from schemas import codec, export

GOLDEN = Path(export.__file__).parent / "golden"


def golden(ce_type: str) -> codec.Decoded:
    doc = json.loads((GOLDEN / f"{ce_type}.json").read_text())
    return codec.decode(
        json.dumps(doc["body"]).encode(), [(k, v.encode()) for k, v in doc["headers"].items()]
    )


def test_every_stage_of_the_golden_sample_is_found_in_any_order():
    lineage = Lineage("local/demo/add/0/1")
    for ce_type in (
        "rlstream.policy.published.v1",
        "rlstream.rollout.filtered.v1",
        "rlstream.rollout.assembled.v1",
        "rlstream.rollout.scored.v1",
        "rlstream.rollout.executed.v1",
        "rlstream.rollout.generated.v1",
        "rlstream.rollout.requested.v1",
        "rlstream.task.published.v2",
    ):
        d = golden(ce_type)
        lineage.fold(d.envelope, d.event)
    out = lineage.result()
    assert out["missing"] == []
    assert out["task"]["task_id"] == "demo/add"
    assert out["generation"]["code"].startswith("def add")
    assert out["executions"][0]["cases"][2]["hidden"] is True
    assert out["verdict"]["reasons"][0]["code"] == "hack.forced_exit"
    assert out["experience"]["in_gradient"] is True
    assert [p["policy_version"] for p in out["trained_into"]] == [3]
    assert out["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736"


def test_other_samples_and_bad_ids_are_kept_apart():
    lineage = Lineage("local/demo/add/0/2")
    d = golden("rlstream.rollout.generated.v1")
    lineage.fold(d.envelope, d.event)
    assert lineage.result()["generation"] is None
    with pytest.raises(ValueError, match="not a sample id"):
        group_of("no-index")
