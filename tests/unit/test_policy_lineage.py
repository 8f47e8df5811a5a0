"""A policy version's lineage across stages: an RL version names the version its run started from
(PolicyPublished v3's ``base``), and its lineage leads on through that version to the SFT stage's
examples; old versions read as naming no base."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from pydantic import ValidationError

from consumers.lineage import policy_lineage
from schemas.codec import decode_body
from schemas.policy import PolicyPublished
from schemas.sft import SftExample


def version(
    run_id: str, n: int, *, stage: str = "rl", base: str | None = None, trained: Sequence[str] = ()
) -> PolicyPublished:
    return PolicyPublished(
        run_id=run_id,
        policy_version=n,
        step=n,
        checkpoint_uri=f"file:///ckpt/{run_id}/v{n}",
        sha256="a" * 64,
        model="tiny",
        stage=stage,  # type: ignore[arg-type]
        base=base,
        trained_sample_ids=tuple(trained),
    )


def example(run_id: str, example_id: str) -> SftExample:
    return SftExample(
        run_id=run_id,
        example_id=example_id,
        task_id="demo/add",
        prompt="def add(a, b):\n",
        completion="    return a + b\n",
        source="reference",
    )


def test_an_rl_version_leads_through_its_base_to_the_sft_examples() -> None:
    sft = version("sft-1", 1, stage="sft", trained=["demo/add:reference"])
    rl = version("rl-1", 3, base="sft-1:v1", trained=["rl-1/demo/add/0/0"])
    versions = {(v.run_id, v.policy_version): v for v in (sft, rl)}
    out = policy_lineage(rl, [example("sft-1", "demo/add:reference"), example("other", "x")], versions)
    assert out["stage"] == "rl" and out["trained_sample_ids"] == ["rl-1/demo/add/0/0"]
    base = out["base"]
    assert base["ref"] == "sft-1:v1" and base["stage"] == "sft" and base["run_id"] == "sft-1"
    assert [e["example_id"] for e in base["examples"]] == ["demo/add:reference"]
    assert "base" not in base  # the SFT stage started from the model's own weights
    json.dumps(out)  # what `rlstream lineage --policy --json` prints


def test_a_chain_of_bases_is_followed_and_a_missing_or_cyclic_one_is_named() -> None:
    a = version("a", 1, stage="sft")
    b = version("b", 2, base="a:v1")
    c = version("c", 1, base="b:v2")
    versions = {(v.run_id, v.policy_version): v for v in (a, b, c)}
    out = policy_lineage(c, (), versions)
    assert (out["base"]["ref"], out["base"]["base"]["ref"]) == ("b:v2", "a:v1")
    assert "base" not in out["base"]["base"]
    gone = policy_lineage(version("d", 1, base="nowhere:v9"), (), versions)
    assert gone["base"] == {"ref": "nowhere:v9", "missing": True}
    x, y = version("x", 1, base="y:v1"), version("y", 1, base="x:v1")
    loop = policy_lineage(x, (), {("x", 1): x, ("y", 1): y})
    assert loop["base"]["base"] == {"ref": "x:v1", "cycle": True}


def test_a_version_without_a_base_keeps_its_old_bytes_and_old_bytes_read_as_none() -> None:
    rl, sft = version("r", 1), version("s", 1, stage="sft")
    assert rl.as_written().version == 1 and sft.as_written().version == 2
    based = version("r", 2, base="s:v1")
    assert based.as_written().version == 3
    for event in (rl, sft):
        written = event.as_written()
        back = decode_body(written.ce_type(), written.model_dump_json().encode())
        assert isinstance(back, PolicyPublished) and back.base is None and back == event


@pytest.mark.parametrize("ref", ["run", "run:3", "run:v", "a run:v1", ""])
def test_a_base_that_names_no_version_is_refused(ref: str) -> None:
    with pytest.raises(ValidationError, match="base"):
        version("r", 1, base=ref)


def test_an_rl_version_names_its_objective_and_old_versions_read_as_what_their_stage_implies() -> None:
    dpo = version("r", 1).model_copy(update={"algorithm": "dpo"})
    assert dpo.as_written().version == 3  # a DPO version needs the field
    assert policy_lineage(dpo)["algorithm"] == "dpo"
    # written before the field: an RL version was GRPO's, an SFT one has none
    v2_rl = {**version("r", 2).model_dump(exclude={"base", "algorithm"}), "schema_version": 2}
    v2_sft = {**version("s", 1, stage="sft").model_dump(exclude={"base", "algorithm"}), "schema_version": 2}
    for body, algorithm in ((v2_rl, "grpo"), (v2_sft, None)):
        back = decode_body("rlstream.policy.published.v2", json.dumps(body).encode())
        assert isinstance(back, PolicyPublished) and back.algorithm == algorithm and back.base is None
    with pytest.raises(ValidationError, match="stage sft has algorithm 'dpo'"):
        version("s", 1, stage="sft").model_validate(
            {**version("s", 1, stage="sft").model_dump(), "algorithm": "dpo"}
        )
    with pytest.raises(ValidationError, match="stage rl has algorithm None"):
        PolicyPublished.model_validate({**version("r", 1).model_dump(), "algorithm": None})
