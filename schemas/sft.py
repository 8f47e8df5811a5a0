"""The supervised stage's input: one curated example (a prompt and the answer to teach) per event.

``rlstream sft`` writes the examples it trains on to ``rl.sft.examples`` before it trains, and trains
on what it reads back, so an SFT stage is replayed and audited from the log like an RL run: the version
it publishes names the examples' offsets (``PolicyPublished.consumed``) and ids.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field, model_validator

from schemas.base import Event

#: where an example's answer came from: a task's reference solution, or a sample a human reviewer
#: accepted (its review names it)
ExampleSource = Literal["reference", "review"]


class SftExample(Event):
    event_type: ClassVar[str] = "rlstream.sft.example"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "run_id"

    schema_version: Literal[1] = 1
    #: the SFT stage (its run id: the versions it publishes are that run's on ``rl.policy``)
    run_id: str = Field(min_length=1)
    example_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    source: ExampleSource
    #: the task's prompt as the generator is given it (the chat template is applied at training time,
    #: by the model trained, exactly as the generator applies it)
    prompt: str = Field(min_length=1)
    #: the answer to teach: the code the model should write
    completion: str = Field(min_length=1)
    #: a reviewed sample's review (ReviewRecorded event id) and its run; None for a reference
    review_event_id: str | None = None
    source_run_id: str | None = None

    @model_validator(mode="after")
    def _review_named(self) -> SftExample:
        if (self.source == "review") != (self.review_event_id is not None):
            raise ValueError("review_event_id is required for a reviewed example and only for one")
        return self

    def identity(self) -> tuple[str, ...]:
        return (self.run_id, self.example_id)
