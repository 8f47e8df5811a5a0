"""Configuration of multi-turn episodes (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from schemas.task import MAX_TURNS_LIMIT


class FeedbackConfig(BaseModel):
    """How much of an execution the feedback shows. Part of the feedback function's identity: the
    version recorded on each feedback is ``version`` plus a fingerprint of any non-default cap, so a
    replay re-derives every feedback with the caps it was written under."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: v2: the program's output is shown only when the host never handed it a hidden case (v1 trusted
    #: what the program reported of its hidden cases; kept so replays of v1 runs re-derive their bytes)
    version: Literal["v1", "v2"] = "v2"
    #: failing visible cases shown (the others are counted)
    max_cases: int = Field(default=5, ge=1, le=100)
    #: characters of a case's call, of an expected or returned value, of an error
    max_call_chars: int = Field(default=200, ge=16, le=100_000)
    max_value_chars: int = Field(default=300, ge=16, le=100_000)
    max_error_chars: int = Field(default=500, ge=16, le=100_000)
    #: characters and lines of stdout and of stderr (their ends: where a traceback is)
    max_output_chars: int = Field(default=1000, ge=0, le=100_000)
    max_output_lines: int = Field(default=20, ge=0, le=10_000)

    def label(self) -> str:
        from streams.reward.config import config_fingerprint

        return self.version + config_fingerprint(self, FeedbackConfig(version=self.version))


class EpisodeConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    #: turns an episode may take when its task does not say (1: one shot, the log of a one-turn run)
    max_turns: int = Field(default=1, ge=1, le=MAX_TURNS_LIMIT)
    #: the registered reward function episodes of several turns are scored with (its final turn's code,
    #: against every case, less a cost per turn beyond the first; code-v5's comparison; code-v7's
    #: efficiency on the guest's own time, as one-turn samples' default reads it)
    reward_function: str = "code-v8"
    feedback: FeedbackConfig = FeedbackConfig()
