"""The rollout aggregate (one GRPO group of one task): request, generations, executions, rewards,
verdicts and the assembled experience. All keyed by ``group_id`` so a group stays on one partition."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import AwareDatetime, ConfigDict, Field, model_validator

from schemas.base import Event, FrozenModel, make_event_id, remembered
from schemas.task import MAX_TURNS_LIMIT, Split


class SamplingParams(FrozenModel):
    temperature: float = Field(default=1.0, ge=0.0, le=10.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=256, ge=1, le=65536)
    stop: tuple[str, ...] = ()
    seed: int | None = None


class RolloutRequestedV1(Event):
    """The scheduler asks for ``group_size`` samples of one task under one policy version."""

    event_type: ClassVar[str] = "rlstream.rollout.requested"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[1] = 1
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    group_size: int = Field(ge=1, le=1024)
    prompt: str = Field(description="the prompt text, visible cases only")
    entry_point: str
    tenant: str = "default"
    priority: int = 0
    #: the newest policy version the scheduler knew of; generators refuse to be staler than the bound
    policy_version: int = Field(default=0, ge=0)
    sampling: SamplingParams = SamplingParams()

    def identity(self) -> tuple[str, ...]:
        return (self.group_id,)


class RolloutRequestedV2(RolloutRequestedV1):
    """The scheduler asks for ``group_size`` samples of one task: for training (``split`` train, on
    ``rl.rollouts.requested``, under the newest policy version a generator has) or for evaluation
    (``split`` eval, on ``rl.evaluations.requested``: sampled under exactly ``policy_version`` with the
    seed in ``sampling``, and never trained on).

    Version 2 adds ``split`` (v1 requests are upcast as ``train``).
    """

    version: ClassVar[int] = 2

    model_config = ConfigDict(title="RolloutRequested")

    schema_version: Literal[2] = 2  # type: ignore[assignment]
    split: Split = Field(
        default="train", description="train: a GRPO group to learn from; eval: an evaluation round's group"
    )


class RolloutRequested(RolloutRequestedV2):
    """The scheduler asks for ``group_size`` episodes of one task (see :class:`RolloutRequestedV2`).

    Version 3 adds ``max_turns``: each sample is an episode of up to that many turns, the model revising
    its program from the feedback of its visible cases (1: one shot, written as v2).
    """

    version: ClassVar[int] = 3

    schema_version: Literal[3] = 3  # type: ignore[assignment]
    max_turns: int = Field(default=1, ge=1, le=MAX_TURNS_LIMIT, description="turns each episode may take")

    def previous_version(self) -> RolloutRequestedV2 | None:
        return self._as_version(RolloutRequestedV2, {"max_turns": 1})


class CodeGeneratedV1(Event):
    """One sample: the model's raw completion, the code extracted from it, and the exact behaviour
    policy (version, token ids, per-token log-probs under the sampling distribution used)."""

    event_type: ClassVar[str] = "rlstream.rollout.generated"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[1] = 1
    sample_id: str = Field(min_length=1)
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    sample_index: int = Field(ge=0)
    policy_version: int = Field(ge=0)
    model: str
    prompt_text: str
    completion_text: str
    code: str = Field(description="what the sandbox executes (extracted from the completion)")
    extraction: str = Field(default="", description="how the code was extracted, e.g. fenced, body")
    prompt_token_ids: tuple[int, ...] = ()
    completion_token_ids: tuple[int, ...] = ()
    behaviour_logprobs: tuple[float, ...] = ()
    finish_reason: str = "stop"
    sampling: SamplingParams = SamplingParams()
    duration_s: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _logprobs_match_tokens(self) -> CodeGeneratedV1:
        if self.behaviour_logprobs and len(self.behaviour_logprobs) != len(self.completion_token_ids):
            raise ValueError(
                f"behaviour_logprobs has {len(self.behaviour_logprobs)} entries for "
                f"{len(self.completion_token_ids)} completion tokens"
            )
        return self

    def identity(self) -> tuple[str, ...]:
        return (self.sample_id,)


class CodeGeneratedV2(CodeGeneratedV1):
    """One sample (see :class:`CodeGeneratedV1`) and the split of the request it answers: an ``eval``
    sample is judged like any other but never assembled into an experience nor trained on.

    Version 2 adds ``split`` (v1 samples are upcast as ``train``).
    """

    version: ClassVar[int] = 2

    model_config = ConfigDict(title="CodeGenerated")

    schema_version: Literal[2] = 2  # type: ignore[assignment]
    split: Split = Field(default="train", description="the split of the request it answers")


class CodeGenerated(CodeGeneratedV2):
    """One turn of one episode (see :class:`CodeGeneratedV1`): ``sample_id`` names the episode, ``turn``
    the turn (0 first). A later turn's prompt is the conversation so far: ``prompt_token_ids`` are the
    previous turn's prompt and generated tokens followed by the feedback it got (rendered in the
    model's template), so the tokens after the first turn's prompt alternate between what the policy
    generated and what it was told, and each turn's ``behaviour_logprobs`` cover its own tokens only.

    Version 3 adds ``turn``, ``max_turns`` and ``feedback_event_id`` (the TurnEnded a later turn
    answers); a one-turn sample is written as v2.
    """

    version: ClassVar[int] = 3

    schema_version: Literal[3] = 3  # type: ignore[assignment]
    turn: int = Field(default=0, ge=0, lt=MAX_TURNS_LIMIT, description="index of the turn (0: the first)")
    max_turns: int = Field(default=1, ge=1, le=MAX_TURNS_LIMIT, description="turns the episode may take")
    feedback_event_id: str | None = Field(
        default=None, description="event id of the TurnEnded whose feedback this turn answers (turn > 0)"
    )

    @model_validator(mode="after")
    def _turn_within_episode(self) -> CodeGenerated:
        if self.turn >= self.max_turns:
            raise ValueError(f"turn {self.turn} of an episode of {self.max_turns} turn(s)")
        if (self.turn > 0) != (self.feedback_event_id is not None):
            raise ValueError("a turn after the first answers a feedback (feedback_event_id), the first none")
        return self

    def identity(self) -> tuple[str, ...]:
        return (self.sample_id, str(self.turn))

    def previous_version(self) -> CodeGeneratedV2 | None:
        return self._as_version(CodeGeneratedV2, {"turn": 0, "max_turns": 1, "feedback_event_id": None})


CaseStatus = Literal["ok", "error", "timeout", "missing"]

#: the longest ``repr`` of one returned value the sandbox reports and the reward parses (characters);
#: one limit for the guest's stub, the protocol and the comparer
MAX_RESULT_CHARS = 1_000_000
#: The most the cases of one execution carry in its event: each ok case's result and each failed
#: case's error text, counted as the UTF-8 bytes of their JSON text, in case order. A result that would
#: go past it is not kept: its case fails with :data:`RESULT_NOT_KEPT` (the program returned more than
#: one execution may report), and a longer error text is cut. With the output an event keeps
#: (:data:`MAX_EVENT_OUTPUT_BYTES` per stream) and ~100 bytes per case, an execution event stays within
#: the message size of the topics that carry it (``schemas.topics.EXECUTION_MESSAGE_BYTES``).
MAX_EXECUTION_RESULT_BYTES = 4 * 1024 * 1024
#: what an execution event keeps of the program's stdout, and of its stderr (UTF-8 bytes of JSON text)
MAX_EVENT_OUTPUT_BYTES = 256 * 1024
#: the error of a case whose result was not kept
RESULT_NOT_KEPT = (
    f"result not kept: the results of this execution take more than {MAX_EXECUTION_RESULT_BYTES} bytes "
    "in total"
)


class CaseResult(FrozenModel):
    """The outcome of one case as reported over the trusted channel: ``repr()`` of the returned value
    (never compared inside the sandbox) or the error raised."""

    index: int = Field(ge=0)
    hidden: bool = False
    status: CaseStatus
    result_repr: str | None = None
    error: str | None = None
    duration_s: float = Field(default=0.0, ge=0)
    #: where the value's text could not travel (past ``MAX_RESULT_CHARS``, or past what the execution
    #: keeps: the case is an error saying so): the digest of its canonical text the sandbox's stub
    #: reported (``schemas.digest``), set by the host from the stub's own message only. Absent from the
    #: body where None, so every other case keeps its bytes
    digest: str | None = Field(
        default=None, pattern=r"^[ENX]:[0-9a-f]{64}:[0-9]{1,10}$", exclude_if=lambda v: v is None
    )
    #: the CPU time the guest spent between the request's hand-out and its result, read by the host:
    #: in WASM its thread's clock at the door on that thread; in the jail the guest process's CPU clock
    #: (every thread of it; runs before filter v29's change carry none). Unlike ``duration_s`` it does
    #: not grow while the machine's load keeps the guest off a core. Absent from the body where None, so
    #: every other case keeps its bytes
    cpu_s: float | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    #: a call the run's deadline or its own cap ended (``timeout``) in a WASM guest: how many bytes the
    #: guest's linear memory grew while the call was out, and how many more the store's memory limit
    #: still allowed it when the call was stopped, read by the host (linear memory never shrinks: what
    #: the call grew is what it took at its height). A call that grew the memory to the limit's edge
    #: was about to be stopped for it (filter v28). Absent from the body where None (every other case,
    #: and every jailed one), so they keep their bytes
    memory_grown: int | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    memory_left: int | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)


class SandboxExecutedV1(Event):
    """What the sandbox observed when running one sample's code against its task's case inputs."""

    event_type: ClassVar[str] = "rlstream.rollout.executed"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[1] = 1
    sample_id: str = Field(min_length=1)
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    #: 0 for the first execution, 1.. for the noise filter's flakiness re-runs
    run_index: int = Field(default=0, ge=0)
    backend: Literal["wasm", "container", "subprocess"]
    backend_reason: str = ""
    mode: Literal["cases", "check"] = "cases"
    cases: tuple[CaseResult, ...] = ()
    exit_code: int | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    violation: str | None = None
    stdout: str = ""
    stderr: str = ""
    duration_s: float = Field(default=0.0, ge=0)
    runtime_hash: str = ""
    cache_key: str = ""
    cache_hit: bool = False
    #: set when the sandbox itself failed; such a result is never scored as the model's failure
    infra_error: str | None = None

    def identity(self) -> tuple[str, ...]:
        return (self.sample_id, str(self.run_index))


class SandboxExecutedV2(SandboxExecutedV1):
    """What the sandbox observed when running one sample's code against its task's case inputs.

    v2 carries every label (``violations``; ``violation`` is the first of them) and the host's own
    timings of the run: ``load_s`` from the guest's start to its first request, ``active_s`` from the
    start to the last result (module load and everything between cases included), and where measured
    the same two on the guest's own time (``load_cpu_s``, ``active_cpu_s``)."""

    model_config = ConfigDict(title="SandboxExecuted")

    version: ClassVar[int] = 2

    schema_version: Literal[2] = 2  # type: ignore[assignment]
    #: every label of the run: limits the host observed, then what the program was refused
    violations: tuple[str, ...] = ()
    #: the guest's start to its first request (None: it never asked for one)
    load_s: float | None = Field(default=None, ge=0)
    #: the guest's start to its last result (None: no result came back)
    active_s: float | None = Field(default=None, ge=0)
    #: ``load_s`` and ``active_s`` on the guest's own time: the CPU its thread spent, read by the host at
    #: the door on that thread (WASM), plus the sleeps it asked for, counted as asked. The machine's load
    #: does not stretch them as it stretches the host's clock. None where not measured (a jailed guest is
    #: another process; runs written before them); absent from the body where None, so every other run
    #: keeps its bytes
    load_cpu_s: float | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)
    active_cpu_s: float | None = Field(default=None, ge=0, exclude_if=lambda v: v is None)

    @model_validator(mode="before")
    @classmethod
    def _one_label_is_a_list_of_one(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("violation") and "violations" not in data:
            return {**data, "violations": (data["violation"],)}
        return data

    @model_validator(mode="after")
    def _first_violation(self) -> SandboxExecutedV2:
        first = self.violations[0] if self.violations else None
        if self.violation != first:
            raise ValueError(
                f"violation {self.violation!r} is not the first of violations {self.violations!r}"
            )
        return self

    @remembered
    def event_id(self, attempt: int = 0) -> str:
        # The id of a run does not change with its schema: a reward names the execution it scored by
        # id, and a v1 body read back (upcast) must keep the id it was written with.
        return make_event_id(f"{self.event_type}.v1", *self.identity(), attempt=attempt)


class SandboxExecutedV3(SandboxExecutedV2):
    """What the sandbox observed when running one sample's code against its task's case inputs, or
    against the inputs of a probe plan (``probe``): the task's cases in another order, then inputs
    generated from them, which the noise filter compares with the reference solution's answers.

    v3 names the probe plan a run executed (see :class:`SandboxExecutedV2` for the rest)."""

    version: ClassVar[int] = 3

    schema_version: Literal[3] = 3  # type: ignore[assignment]
    probe: str | None = Field(
        default=None,
        description="digest of the probe plan this run executed (its cases are that plan's inputs, in its "
        "order); None: a run of the task's own cases",
    )


class SandboxExecutedV4(SandboxExecutedV3):
    """What the sandbox observed running one turn's code of one episode (see :class:`SandboxExecutedV3`).

    Version 4 adds ``turn`` and ``max_turns`` (copied from the generation, so a processor knows from the
    execution alone whether an episode may go on); the run of a one-turn sample is written as v3. The
    first turn's run keeps the id a one-turn run has; a later turn's names its turn.
    """

    version: ClassVar[int] = 4

    schema_version: Literal[4] = 4  # type: ignore[assignment]
    turn: int = Field(default=0, ge=0, lt=MAX_TURNS_LIMIT, description="the turn whose code ran")
    max_turns: int = Field(default=1, ge=1, le=MAX_TURNS_LIMIT, description="turns the episode may take")

    def identity(self) -> tuple[str, ...]:
        return super().identity() + ((str(self.turn),) if self.turn else ())

    def previous_version(self) -> SandboxExecutedV3 | None:
        return self._as_version(SandboxExecutedV3, {"turn": 0, "max_turns": 1})


class SandboxExecutedV5(SandboxExecutedV4):
    """What the sandbox observed running one turn's code of one episode (see :class:`SandboxExecutedV4`).

    Version 5 adds ``probe_seed``: the secret seed a probe run's plan was drawn with (drawn by the
    sandbox processor after the program was written; the plan is re-derived from the task and this seed
    by the filter and by an audit). A run without one is written as v4 (and a one-turn run as v3), so
    runs of the task's own cases, and probe runs of plans derived from the task alone, keep their bytes.
    """

    version: ClassVar[int] = 5

    schema_version: Literal[5] = 5  # type: ignore[assignment]
    probe_seed: str | None = Field(
        default=None,
        pattern=r"^[0-9a-f]{8,128}$",
        description="the secret seed the probe plan (``probe``) was drawn with; None: a run of the task's "
        "own cases, or of a plan derived from the task alone",
    )

    @model_validator(mode="after")
    def _seed_names_a_plan(self) -> SandboxExecutedV5:
        if self.probe_seed is not None and self.probe is None:
            raise ValueError("probe_seed is set on a run that names no probe plan (probe is None)")
        return self

    def previous_version(self) -> SandboxExecutedV4 | None:
        return self._as_version(SandboxExecutedV4, {"probe_seed": None})


class SandboxExecutedV6(SandboxExecutedV5):
    """What the sandbox observed running one turn's code of one episode (see :class:`SandboxExecutedV5`).

    Version 6 adds what the host saw of single calls: ``output_flood``, the case whose call was out
    when the host stopped the run for its output and had itself written most of it (a call that
    floods, not a run's chatter reaching the cap), and ``thread_recursion``, the cases whose error
    followed a RecursionError on one of the program's threads during the call. A run with neither is
    written as v5 (or older), so every other run keeps its bytes and id."""

    version: ClassVar[int] = 6

    schema_version: Literal[6] = 6  # type: ignore[assignment]
    output_flood: int | None = Field(
        default=None,
        ge=0,
        description="the case whose own output made the host stop the run (None: no call flooded)",
    )
    thread_recursion: tuple[int, ...] = Field(
        default=(),
        description="the cases whose error followed a RecursionError raised on one of the program's "
        "threads during the call",
    )

    def previous_version(self) -> SandboxExecutedV5 | None:
        return self._as_version(SandboxExecutedV5, {"output_flood": None, "thread_recursion": ()})


class SandboxExecuted(SandboxExecutedV6):
    """What the sandbox observed running one turn's code of one episode (see :class:`SandboxExecutedV6`).

    Version 7 adds ``deep_recursion``: the cases whose call raised a RecursionError on a deep stack of
    calls (the stub read the traceback as a chain of calls as deep as a recursion that ran out of
    stack; a RecursionError a program raises itself on a shallow stack is not among them). None: not
    recorded (a run before v7, or one in which no call raised a RecursionError: nothing to forgive);
    such a run is written as v6 (or older), so it keeps its bytes and id."""

    version: ClassVar[int] = 7

    schema_version: Literal[7] = 7  # type: ignore[assignment]
    deep_recursion: tuple[int, ...] | None = Field(
        default=None,
        description="the cases whose call raised a RecursionError on a deep stack of calls (None: not "
        "recorded)",
    )

    def previous_version(self) -> SandboxExecutedV6 | None:
        return self._as_version(SandboxExecutedV6, {"deep_recursion": None})


class RewardScoredV1(Event):
    """A versioned, multi-dimensional reward of one sample's execution."""

    # v1 named no reference run: its efficiency part cannot be re-scored exactly (v2 names it)

    event_type: ClassVar[str] = "rlstream.rollout.scored"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[1] = 1
    sample_id: str = Field(min_length=1)
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    execution_event_id: str
    reward_fn: str = Field(description="registered name, e.g. code")
    reward_version: str = Field(description="version of the reward function, e.g. v1")
    components: dict[str, float]
    weights: dict[str, float]
    total: float
    passed: int = Field(ge=0)
    total_cases: int = Field(ge=0)
    details: dict[str, str] = Field(default_factory=dict)

    def identity(self) -> tuple[str, ...]:
        return (self.sample_id, self.execution_event_id, self.reward_fn, self.reward_version)


class RewardScoredV2(Event):
    """A versioned, multi-dimensional reward of one sample's execution, naming the reference run
    (``ReferenceExecuted`` on ``rl.references``) it was compared with, so the log alone re-scores it."""

    model_config = ConfigDict(title="RewardScored")

    event_type: ClassVar[str] = "rlstream.rollout.scored"
    version: ClassVar[int] = 2
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[2] = 2
    sample_id: str = Field(min_length=1)
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    execution_event_id: str
    reward_fn: str = Field(description="registered name, e.g. code")
    reward_version: str = Field(description="version of the reward function, e.g. v1")
    components: dict[str, float]
    weights: dict[str, float]
    total: float
    passed: int = Field(ge=0)
    total_cases: int = Field(ge=0)
    details: dict[str, str] = Field(default_factory=dict)
    reference_event_id: str | None = Field(
        default=None,
        description="event id of the ReferenceExecuted scored against (None: no reference run was used)",
    )

    def identity(self) -> tuple[str, ...]:
        return (self.sample_id, self.execution_event_id, self.reward_fn, self.reward_version)


class RewardScored(RewardScoredV2):
    """The reward of one episode, scored on its final turn's execution (see :class:`RewardScoredV2`).

    Version 3 adds ``turn``, the final turn (its index; ``turn + 1`` turns were used); a reward of a
    one-turn sample is written as v2.
    """

    version: ClassVar[int] = 3

    schema_version: Literal[3] = 3  # type: ignore[assignment]
    turn: int = Field(default=0, ge=0, lt=MAX_TURNS_LIMIT, description="the final turn, whose code is scored")

    def previous_version(self) -> RewardScoredV2 | None:
        return self._as_version(RewardScoredV2, {"turn": 0})


class Reason(FrozenModel):
    code: str = Field(pattern=r"^[a-z][a-z0-9_.]*$", description="machine-readable, e.g. hack.forced_exit")
    detail: str = ""


class NoiseVerdictV1(Event):
    """The noise filter's decision about whether a sample may feed the gradient. It never rewrites the
    reward: ``mask`` removes the sample, ``reject`` removes it and marks it as a hack."""

    # v1's reject kept a sample out of the gradient, which spared a failing hack its failure (v2 trains
    # a reject as a failure)

    event_type: ClassVar[str] = "rlstream.rollout.filtered"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[1] = 1
    sample_id: str = Field(min_length=1)
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    reward_event_id: str
    verdict: Literal["accept", "mask", "reject"]
    reasons: tuple[Reason, ...] = ()
    reward: float
    filter_version: str = "v1"

    def identity(self) -> tuple[str, ...]:
        return (self.sample_id, self.reward_event_id, self.filter_version)


class NoiseVerdictV2(Event):
    """The noise filter's decision about how a sample feeds the gradient. It never rewrites the reward:
    ``accept`` trains the sample with its reward; ``reject`` (evidence the program attacked the judge or
    that its pass is not genuine) trains it as a failure, with ``failure_reward``; ``mask`` (the reward
    cannot be trusted or says nothing about the policy: infra failures, tasks that cannot judge) keeps
    it out."""

    model_config = ConfigDict(title="NoiseVerdict")

    event_type: ClassVar[str] = "rlstream.rollout.filtered"
    version: ClassVar[int] = 2
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[2] = 2
    sample_id: str = Field(min_length=1)
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    reward_event_id: str
    verdict: Literal["accept", "mask", "reject"]
    reasons: tuple[Reason, ...] = ()
    reward: float
    filter_version: str = "v1"
    failure_reward: float | None = Field(
        description="what the sample trains with as a failure (a reject, or a review that rejects it): no "
        "credit, its penalties kept, never above reward. None only on v1 verdicts, whose rejects stayed "
        "out of the gradient"
    )
    probe_reference_event_id: str | None = Field(
        default=None,
        description="event id of the ReferenceExecuted of the probe plan the sample's probe run was "
        "compared with (None: no probe judged it)",
    )

    def identity(self) -> tuple[str, ...]:
        return (self.sample_id, self.reward_event_id, self.filter_version)


class NoiseVerdict(NoiseVerdictV2):
    """The noise filter's decision on one episode (see :class:`NoiseVerdictV2`): its final turn judged
    like a one-turn sample (its probe run included), and a reward-hacking signature in any earlier
    turn's code or run rejects it too (the reason's detail names the turn).

    Version 3 adds ``turn``, the final turn judged; a verdict on a one-turn sample is written as v2.
    """

    version: ClassVar[int] = 3

    schema_version: Literal[3] = 3  # type: ignore[assignment]
    turn: int = Field(default=0, ge=0, lt=MAX_TURNS_LIMIT, description="the final turn of the episode")

    def previous_version(self) -> NoiseVerdictV2 | None:
        return self._as_version(NoiseVerdictV2, {"turn": 0})


class ExperienceSampleV1(FrozenModel):
    sample_id: str
    policy_version: int = Field(ge=0)
    reward: float
    advantage: float
    prompt_token_ids: tuple[int, ...]
    completion_token_ids: tuple[int, ...]
    behaviour_logprobs: tuple[float, ...]


class ExperienceSampleV2(ExperienceSampleV1):
    model_config = ConfigDict(title="ExperienceSample")

    traceparent: str | None = Field(
        default=None,
        description="W3C traceparent of the sample's own trace, which the learner's step links to",
    )


class ExperienceTurn(FrozenModel):
    """One turn of an episode as the learner trains it: the tokens it was told before it (the feedback
    on the previous turn in the model's template; none for the first turn, whose prompt is the
    sample's), the tokens it generated and their behaviour log-probs under its own policy version."""

    turn: int = Field(ge=0)
    policy_version: int = Field(ge=0)
    feedback_token_ids: tuple[int, ...] = ()
    completion_token_ids: tuple[int, ...]
    behaviour_logprobs: tuple[float, ...]

    @model_validator(mode="after")
    def _logprobs_match_tokens(self) -> ExperienceTurn:
        if len(self.behaviour_logprobs) != len(self.completion_token_ids):
            raise ValueError(
                f"turn {self.turn}: {len(self.behaviour_logprobs)} behaviour log-probs for "
                f"{len(self.completion_token_ids)} generated tokens"
            )
        return self


class ExperienceSample(ExperienceSampleV2):
    """One episode of a group. A one-turn sample is ``prompt_token_ids`` + ``completion_token_ids``. An
    episode of several turns is one trajectory: ``prompt_token_ids`` (the first turn's prompt), then for
    each of ``turns`` its feedback tokens and its generated tokens; ``completion_token_ids`` and
    ``behaviour_logprobs`` then stay empty (the turns carry them) and ``policy_version`` is the oldest
    turn's."""

    turns: tuple[ExperienceTurn, ...] = Field(
        default=(), description="the episode's turns (empty: a one-turn sample)"
    )

    @property
    def versions(self) -> tuple[int, ...]:
        """The policy version of each turn (one for a one-turn sample)."""
        return tuple(t.policy_version for t in self.turns) or (self.policy_version,)


class ExperienceReadyV1(Event):
    """A GRPO group ready for the learner: accepted samples with group-relative advantages."""

    # v1 samples carried no traceparent: a learner step cannot link to their traces (v2 can)

    event_type: ClassVar[str] = "rlstream.rollout.assembled"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[1] = 1
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    group_size: int = Field(ge=1)
    samples: tuple[ExperienceSampleV1, ...]
    #: the group's deadline passed before every sample had a verdict
    partial: bool = False
    masked: int = Field(default=0, ge=0)
    rejected: int = Field(default=0, ge=0)
    std_normalised: bool = True

    def identity(self) -> tuple[str, ...]:
        return (self.group_id,)


class ExperienceReadyV2(Event):
    """A GRPO group ready for the learner: accepted samples with group-relative advantages, each naming
    its own trace so the learner step that trains it links to it."""

    model_config = ConfigDict(title="ExperienceReady")

    event_type: ClassVar[str] = "rlstream.rollout.assembled"
    version: ClassVar[int] = 2
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[2] = 2
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    group_size: int = Field(ge=1)
    samples: tuple[ExperienceSampleV2, ...]
    #: the group's deadline passed before every sample had a verdict
    partial: bool = False
    masked: int = Field(default=0, ge=0)
    rejected: int = Field(default=0, ge=0)
    std_normalised: bool = True

    def identity(self) -> tuple[str, ...]:
        return (self.group_id,)


class ExperienceReady(ExperienceReadyV2):
    """A GRPO group of episodes ready for the learner (see :class:`ExperienceReadyV2`): advantages are
    group-relative over the group's episodes, and an episode of several turns is one trajectory.

    Version 3's samples may carry ``turns``; a group whose samples are all one-turn is written as v2.
    """

    version: ClassVar[int] = 3

    schema_version: Literal[3] = 3  # type: ignore[assignment]
    samples: tuple[ExperienceSample, ...]  # type: ignore[assignment]

    def previous_version(self) -> ExperienceReadyV2 | None:
        if any(s.turns for s in self.samples):
            return None
        return self._as_version(ExperienceReadyV2, {}, exclude={"samples": {"__all__": {"turns"}}})


class ReviewRecorded(Event):
    """A human reviewer's verdict on one sample, next to the automated verdict it overrides.

    The newest review of a sample (in log order: a group's reviews share one partition) is the one in
    force; it changes what is trained only for a sample not yet trained on, and a review that comes too
    late stays on the log for the audit. ``supersedes`` is the review in force when this one was made
    (None for a sample's first): it makes two reviews with the same words at different points of a
    sample's history distinct events, while the same command retried yields the same event id.
    """

    event_type: ClassVar[str] = "rlstream.review.recorded"
    version: ClassVar[int] = 1
    key_field: ClassVar[str] = "group_id"

    schema_version: Literal[1] = 1
    sample_id: str = Field(min_length=1)
    group_id: str = Field(min_length=1)
    task_id: str = Field(min_length=1)
    verdict: Literal["accept", "mask", "reject"]
    note: str = Field(min_length=1, max_length=4000)
    reviewer: str = Field(min_length=1, max_length=200)
    #: the automated verdict as recorded on rl.verdicts (None: the sample had no verdict yet)
    automated_verdict: Literal["accept", "mask", "reject"] | None = None
    automated_reasons: tuple[str, ...] = Field(default=(), description="its reason codes")
    verdict_event_id: str | None = Field(default=None, description="event id of that NoiseVerdict")
    supersedes: str | None = Field(default=None, description="event id of the review in force before")
    reviewed_at: AwareDatetime

    def identity(self) -> tuple[str, ...]:
        # the time is left out: re-running the same command must not make a second fact
        return (self.sample_id, self.reviewer, self.verdict, self.note, self.supersedes or "")
