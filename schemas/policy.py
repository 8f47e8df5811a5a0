"""The policy aggregate: each version the learner publishes (one partition, totally ordered per run)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from schemas.base import Event, FrozenModel


class ConsumedOffset(FrozenModel):
    """The next offset to read on one partition: what a checkpoint has consumed up to."""

    topic: str
    partition: int = Field(ge=0)
    offset: int = Field(ge=0)


class PolicyPublishedV1(Event):
    event_type: ClassVar[str] = "rlstream.policy.published"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "run_id"

    schema_version: Literal[1] = 1
    run_id: str = Field(min_length=1)
    policy_version: int = Field(ge=0)
    step: int = Field(ge=0)
    checkpoint_uri: str = Field(description="where the weights are, e.g. file:///.../v3/model.safetensors")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    model: str = ""
    consumed: tuple[ConsumedOffset, ...] = ()
    trained_sample_ids: tuple[str, ...] = ()
    metrics: dict[str, float] = Field(default_factory=dict)

    def identity(self) -> tuple[str, ...]:
        return (self.run_id, str(self.policy_version))


#: the stage of training a version came from: ``rl`` (the learner on the filtered reward stream) or
#: ``sft`` (``rlstream sft`` on curated examples from ``rl.sft.examples``)
Stage = Literal["rl", "sft"]


class PolicyPublishedV2(PolicyPublishedV1):
    """A policy version, with the stage that made it. ``consumed`` names the offsets of the stage's
    input (``rl.experiences`` for RL, ``rl.sft.examples`` for SFT) and ``trained_sample_ids`` the
    samples or examples trained on, so a version's lineage leads back to the very records behind it.
    An RL version is written as v1, byte for byte as before the stage existed."""

    version: ClassVar[int] = 2

    schema_version: Literal[2] = 2  # type: ignore[assignment]
    stage: Stage = "rl"

    def previous_version(self) -> PolicyPublishedV1 | None:
        return self._as_version(PolicyPublishedV1, {"stage": "rl"})


#: a published version named across runs: ``RUN_ID:vN``
POLICY_REF = r"^\S+:v\d+$"


#: the objective an RL-stage version was trained with (``learner.algorithm``)
Algorithm = Literal["grpo", "dpo"]


def implied_algorithm(stage: str) -> Algorithm | None:
    """What a version written before the algorithm was recorded was trained with: an RL step's was
    GRPO's (the only objective there was), an SFT stage has none."""
    return "grpo" if stage == "rl" else None


class PolicyPublished(PolicyPublishedV2):
    """A policy version: its stage; for an RL version, the objective it was trained with
    (``algorithm``: grpo or dpo; None for an SFT version); and the published version its run started
    from (``base``, as ``RUN_ID:vN``: e.g. the ``rlstream sft`` version an RL run was started from with
    ``--from-policy``), so the lineage of a stage's version leads on to the stage before it. A GRPO or
    SFT version of a run started from a model's own weights is written as v2 (or v1), as before."""

    version: ClassVar[int] = 3

    schema_version: Literal[3] = 3  # type: ignore[assignment]
    algorithm: Algorithm | None = None
    base: str | None = Field(default=None, pattern=POLICY_REF)

    @model_validator(mode="before")
    @classmethod
    def _algorithm_by_default(cls, data: Any) -> Any:
        # not named: what its stage implies (GRPO for an RL version, none for an SFT one)
        if isinstance(data, dict) and "algorithm" not in data:
            return {**data, "algorithm": implied_algorithm(data.get("stage", "rl"))}
        return data

    @model_validator(mode="after")
    def _algorithm_of_its_stage(self) -> PolicyPublished:
        if (self.stage == "rl") != (self.algorithm is not None):
            raise ValueError(f"a version of stage {self.stage} has algorithm {self.algorithm!r}")
        return self

    def previous_version(self) -> PolicyPublishedV2 | None:
        return self._as_version(PolicyPublishedV2, {"base": None, "algorithm": implied_algorithm(self.stage)})


class PolicyLoaded(Event):
    """A run's training generators took in a published version: the weights they generate training
    samples with from now on (``policy_version``) after reading ``published_version`` on ``rl.policy``.

    This is the version the scheduler's staleness bound measures against the newest published one. A
    checkpoint the generators refused (``loaded`` false, ``error`` says why) leaves ``policy_version``
    at the weights they kept."""

    event_type: ClassVar[str] = "rlstream.policy.loaded"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "run_id"

    schema_version: Literal[1] = 1
    run_id: str = Field(min_length=1)
    #: the version the generators now generate training samples with
    policy_version: int = Field(ge=0)
    #: the PolicyPublished the generators read
    published_version: int = Field(ge=0)
    loaded: bool = True
    error: str | None = None

    def identity(self) -> tuple[str, ...]:
        # one fact per publication read (re-reading it after an aborted batch writes the same id)
        return (self.run_id, str(self.published_version))
