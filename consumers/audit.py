"""Audit by re-scoring: every stored run-0 execution is scored again with the reward function version
recorded on its reward (and, optionally, a counterfactual version), and every decision that differs
is reported.

Pure: the caller feeds the events it reads from the log (any order) to :meth:`Audit.fold` and asks for
the :class:`Report`. Everything a reward depended on is on the log: the task (``rl.tasks``), the code
(``rl.generations``), the execution (``rl.executions``) and the reference run it was compared with
(``rl.references``, named on the reward), so re-scoring with the recorded version reproduces the
recorded event byte for byte, and any difference is a finding: a tampered record, a reward function
whose code changed under an unchanged version, or a non-deterministic scorer.

Where the recorded verdict's filter configuration is the one given, the verdict is judged again too
(from the sample's runs on the log, the same reference run and the reference's runs of the probe plan
the verdict names), with the re-scored reward.

An episode of several turns is scored on its final turn: that turn's run-0 execution is re-scored like
any other (its earlier turns' executions have no reward: the episode went on), and every TurnEnded is
derived again from its turn's generation and execution and the task's visible cases with the feedback
version it records, byte for byte; a difference in any field is a finding like a reward's.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from schemas.base import Event
from schemas.episode import TurnEnded
from schemas.errors import UsageError
from schemas.reference import ReferenceExecuted
from schemas.rollout import CodeGenerated, NoiseVerdict, RewardScored, SandboxExecuted, SandboxExecutedV2
from schemas.task import TaskPublished
from streams.episode.config import FeedbackConfig
from streams.episode.core import end_turn
from streams.noise.config import VERSIONS as NOISE_VERSIONS
from streams.noise.config import NoiseConfig
from streams.noise.filter import filter_episode
from streams.noise.rules import TaskQuality, assess_task
from streams.reward.config import RewardConfig, RewardWeights
from streams.reward.function import RewardFunction, get_reward_function
from streams.reward.lint import Linter, RuffLinter
from streams.reward.literals import CompareOptions

# ---------------------------------------------------------------------------------------------------
# which reward function a recorded version is, and the counterfactual one


def parse_override(text: str) -> tuple[str, Any]:
    """``weights.quality=0.5`` -> (``weights.quality``, 0.5). A leading ``reward.`` (the settings
    path) is accepted; the value is read as JSON when it parses, else kept as text."""
    path, sep, raw = text.partition("=")
    path = path.strip()
    if not sep or not path:
        raise UsageError(f"--set {text!r}: expected KEY=VALUE", hint="e.g. --set weights.quality=0.5")
    path = path.removeprefix("reward.")
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return path, value


def apply_overrides(config: RewardConfig, overrides: Mapping[str, Any]) -> RewardConfig:
    """``config`` with the dotted-path ``overrides`` set, validated like any configuration."""
    body = config.model_dump(mode="json")
    for path, value in overrides.items():
        node = body
        *parents, leaf = path.split(".")
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                raise UsageError(f"--set {path}: {part!r} is not a section of the reward configuration")
            node = child
        if leaf not in node:
            raise UsageError(
                f"--set {path}: no such reward setting",
                hint="one of: " + ", ".join(sorted(_paths(config.model_dump(mode="json")))),
            )
        node[leaf] = value
    try:
        return RewardConfig.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or ", ".join(overrides)
        raise UsageError(f"--set: {loc}: {first['msg']}") from None


def _paths(body: Mapping[str, Any], prefix: str = "") -> list[str]:
    out: list[str] = []
    for k, v in body.items():
        out.extend(_paths(v, f"{prefix}{k}.") if isinstance(v, dict) else [f"{prefix}{k}"])
    return out


@dataclass(frozen=True)
class Counterfactual:
    """Another way to score: a registered function (``spec``, default the recorded one) with the
    recorded configuration changed by ``overrides``."""

    spec: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        parts = [self.spec or "the recorded function"]
        parts += [f"{k}={json.dumps(v)}" for k, v in self.overrides.items()]
        return " with ".join(parts[:1]) + ("" if len(parts) == 1 else " with " + ", ".join(parts[1:]))


class Resolver:
    """Finds the reward function a recorded ``reward_version`` names.

    A version is ``v1`` for the default configuration and ``v1+<fingerprint>`` otherwise; a fingerprint
    cannot be inverted, so candidates are tried: the configured settings, the defaults, and either of
    them with the weights recorded on the event.
    """

    def __init__(self, configured: RewardConfig | None = None, *, linter: Linter | None = None) -> None:
        self.configured = configured or RewardConfig()
        self._linter = linter
        self._linters: dict[tuple[tuple[str, ...], str | None], Linter] = {}
        self._fns: dict[tuple[str, str], RewardFunction] = {}

    def linter(self, config: RewardConfig) -> Linter:
        """One linter per rule set, shared by every function that lints with it (its answers are
        cached per source)."""
        if self._linter is not None:
            return self._linter
        key = (config.lint_select, config.ruff_path)
        if key not in self._linters:
            self._linters[key] = RuffLinter(config.lint_select, config.ruff_path)
        return self._linters[key]

    def warm(self, codes: Sequence[str]) -> None:
        """Lint many programs in one process per rule set, so the scoring that follows hits the cache."""
        for linter in [self._linter] if self._linter is not None else list(self._linters.values()):
            warm = getattr(linter, "warm", None)
            if callable(warm):
                warm(codes)

    def function(self, spec: str, config: RewardConfig) -> RewardFunction:
        key = (spec, config.model_dump_json())
        if key not in self._fns:
            self._fns[key] = get_reward_function(spec, config, linter=self.linter(config))
        return self._fns[key]

    def recorded(self, reward: RewardScored) -> RewardFunction | str:
        """The function that wrote ``reward``, or why it cannot be found."""
        spec = f"{reward.reward_fn}-{reward.reward_version.split('+', 1)[0]}"
        candidates = [self.configured, RewardConfig()]
        try:
            weights = RewardWeights.model_validate(reward.weights)
            candidates += [c.model_copy(update={"weights": weights}) for c in candidates]
        except ValidationError:
            pass
        for config in candidates:
            try:
                fn = self.function(spec, config)
            except UsageError:
                return f"reward function {spec} is not registered in this build"
            if fn.version_label == reward.reward_version:
                return fn
        return (
            f"configuration {reward.reward_version} of {reward.reward_fn} is neither the configured one "
            f"({self.function(spec, self.configured).version_label}) nor the default"
        )

    def counterfactual(self, recorded: RewardFunction, cf: Counterfactual) -> RewardFunction:
        base = getattr(recorded, "config", None)
        config = base if isinstance(base, RewardConfig) else RewardConfig()
        return self.function(cf.spec or recorded.spec, apply_overrides(config, cf.overrides))


# ---------------------------------------------------------------------------------------------------
# one comparison


Kind = Literal["rescored", "counterfactual"]


@dataclass(frozen=True)
class Difference:
    """A recorded reward next to the same execution scored again, where they disagree."""

    kind: Kind
    sample_id: str
    task_id: str
    reward_event_id: str
    recorded_version: str
    rescored_version: str
    recorded_total: float
    rescored_total: float
    recorded_components: dict[str, float]
    rescored_components: dict[str, float]
    #: body fields that differ (for ``rescored``: any field; for ``counterfactual``: the decision)
    fields: tuple[str, ...]
    recorded_verdict: str | None = None
    rescored_verdict: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "sample_id": self.sample_id,
            "task_id": self.task_id,
            "reward_event_id": self.reward_event_id,
            "recorded": {
                "version": self.recorded_version,
                "total": self.recorded_total,
                "components": self.recorded_components,
                "verdict": self.recorded_verdict,
            },
            "rescored": {
                "version": self.rescored_version,
                "total": self.rescored_total,
                "components": self.rescored_components,
                "verdict": self.rescored_verdict,
            },
            "fields": list(self.fields),
        }

    def line(self) -> str:
        changed = {
            k: f"{self.recorded_components.get(k)} -> {self.rescored_components.get(k)}"
            for k in sorted(set(self.recorded_components) | set(self.rescored_components))
            if self.recorded_components.get(k) != self.rescored_components.get(k)
        }
        parts = [
            f"{self.kind:<14} {self.sample_id}",
            f"total {self.recorded_total:.6g} ({self.recorded_version}) -> "
            f"{self.rescored_total:.6g} ({self.rescored_version})",
        ]
        if changed:
            parts.append("components " + ", ".join(f"{k} {v}" for k, v in changed.items()))
        if self.recorded_verdict != self.rescored_verdict:
            parts.append(f"verdict {self.recorded_verdict} -> {self.rescored_verdict}")
        others = [f for f in self.fields if f not in ("total", "components", "verdict")]
        if others:
            parts.append("fields " + ",".join(others))
        return "  ".join(parts)


def body_diff(recorded: RewardScored, rescored: RewardScored) -> tuple[str, ...]:
    """Fields whose serialized values differ (the serialized body is what the log holds)."""
    a, b = json.loads(recorded.model_dump_json()), json.loads(rescored.model_dump_json())
    return tuple(k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))


def decision_diff(recorded: RewardScored, other: RewardScored) -> tuple[str, ...]:
    """What a counterfactual changes about the decision: the total and the components (weights and
    version labels always differ and say nothing by themselves)."""
    return tuple(
        k
        for k in ("total", "components", "passed", "total_cases")
        if getattr(recorded, k) != getattr(other, k)
    )


# ---------------------------------------------------------------------------------------------------
# the audit over a whole log


@dataclass(frozen=True)
class TurnDifference:
    """A recorded TurnEnded next to the same turn's end derived again, where they disagree."""

    sample_id: str
    turn: int
    event_id: str
    feedback_version: str | None
    #: body fields that differ (``feedback`` covers the feedback's text and every part of it)
    fields: tuple[str, ...]
    recorded_outcome: str
    rederived_outcome: str

    def to_json(self) -> dict[str, Any]:
        return {
            "sample_id": self.sample_id,
            "turn": self.turn,
            "event_id": self.event_id,
            "feedback_version": self.feedback_version,
            "fields": list(self.fields),
            "recorded": {"outcome": self.recorded_outcome},
            "rederived": {"outcome": self.rederived_outcome},
        }

    def line(self) -> str:
        return (
            f"{'turn':<14} {self.sample_id} turn {self.turn}  outcome {self.recorded_outcome} -> "
            f"{self.rederived_outcome}  fields {','.join(self.fields)}"
        )


@dataclass(frozen=True)
class Unverifiable:
    sample_id: str
    reason: str


@dataclass
class Report:
    executions: int = 0
    rewards: int = 0
    #: of ``rewards``, those of evaluation samples (held-out tasks, evaluation rounds)
    evaluation_rewards: int = 0
    verdicts: int = 0
    counterfactual: str | None = None
    differences: list[Difference] = field(default_factory=list)
    counterfactual_differences: list[Difference] = field(default_factory=list)
    unscored: list[str] = field(default_factory=list)
    unverifiable: list[Unverifiable] = field(default_factory=list)
    #: turns of episodes whose end (and feedback) was derived again, and those that differ
    turns: int = 0
    turn_differences: list[TurnDifference] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.differences or self.counterfactual_differences or self.unverifiable or self.turn_differences
        )

    def summary(self) -> str:
        text = (
            f"verified {self.rewards} reward(s) ({self.evaluation_rewards} of evaluation samples) of "
            f"{self.executions} execution(s), {self.verdicts} verdict(s): {len(self.differences)} differ "
            "from re-scoring with the recorded version"
        )
        if self.counterfactual is not None:
            text += f", {len(self.counterfactual_differences)} decision(s) change under {self.counterfactual}"
        if self.turns:
            differ = len(self.turn_differences)
            text += f"; re-derived {self.turns} turn end(s) and their feedback: {differ} differ"
        if self.unverifiable:
            text += f", {len(self.unverifiable)} could not be re-scored"
        if self.unscored:
            text += f", {len(self.unscored)} execution(s) not scored yet"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "executions": self.executions,
            "rewards": self.rewards,
            "evaluation_rewards": self.evaluation_rewards,
            "verdicts": self.verdicts,
            "counterfactual": self.counterfactual,
            "differences": [d.to_json() for d in self.differences],
            "counterfactual_differences": [d.to_json() for d in self.counterfactual_differences],
            "unverifiable": [{"sample_id": u.sample_id, "reason": u.reason} for u in self.unverifiable],
            "unscored": self.unscored,
            "turns": self.turns,
            "turn_differences": [d.to_json() for d in self.turn_differences],
        }


#: executions re-scored per lint batch (the linter's cache holds a few thousand answers)
_CHUNK = 512


class Audit:
    """Folds the log, then re-scores every run-0 execution that ``selected`` admits."""

    def __init__(
        self,
        resolver: Resolver,
        *,
        counterfactual: Counterfactual | None = None,
        noise: NoiseConfig | None = None,
        feedback: FeedbackConfig | None = None,
    ) -> None:
        self.resolver = resolver
        self.cf = counterfactual
        self.noise = noise
        #: the feedback configuration besides the default a recorded feedback version may name
        self.feedback = feedback or FeedbackConfig()
        self._tasks: dict[str, TaskPublished] = {}
        self._latest_task: dict[str, TaskPublished] = {}
        #: (sample id, turn) -> the code of that turn (a one-turn sample's only turn is 0)
        self._code: dict[tuple[str, int], str] = {}
        self._generations: dict[str, CodeGenerated] = {}
        self._evaluation: set[str] = set()
        self._runs: dict[tuple[str, int], dict[int, SandboxExecuted]] = defaultdict(dict)
        self._turns: dict[str, TurnEnded] = {}
        self._executions: dict[str, SandboxExecuted] = {}
        self._references: dict[str, ReferenceExecuted] = {}
        # execution event id -> each distinct recorded body (a record with a known id and a new body
        # is exactly what an audit must see, so bodies are not collapsed by id)
        self._rewards: dict[str, dict[str, RewardScored]] = defaultdict(dict)
        self._verdicts: dict[str, NoiseVerdict] = {}
        self._quality: dict[tuple[str, str], TaskQuality] = {}

    def fold(self, event: Event) -> None:
        if isinstance(event, TaskPublished):
            self._tasks[event.event_id()] = event
            self._latest_task[event.task_id] = event
        elif isinstance(event, CodeGenerated):
            self._code[(event.sample_id, event.turn)] = event.code
            if event.max_turns > 1:
                self._generations[event.event_id()] = event
            if event.split == "eval":
                self._evaluation.add(event.sample_id)
        elif isinstance(event, SandboxExecuted):
            self._runs[(event.sample_id, event.turn)][event.run_index] = event
            self._executions[event.event_id()] = event
        elif isinstance(event, TurnEnded):
            self._turns[event.event_id()] = event
        elif isinstance(event, ReferenceExecuted):
            self._references[event.event_id()] = event
        elif isinstance(event, RewardScored):
            self._rewards[event.execution_event_id][event.model_dump_json()] = event
        elif isinstance(event, NoiseVerdict):
            self._verdicts[event.reward_event_id] = event

    def fold_all(self, events: Iterable[Event]) -> None:
        for e in events:
            self.fold(e)

    def _scored(self) -> Callable[[str, SandboxExecuted], bool]:
        """Whether an execution is one a reward scores: run 0 of a turn that did not go on."""
        went_on = {t.execution_event_id for t in self._turns.values() if t.outcome == "continue"}
        return lambda exec_id, x: x.run_index == 0 and exec_id not in went_on

    def report(self, selected: Callable[[SandboxExecuted], bool] = lambda _: True) -> Report:
        report = Report(counterfactual=self.cf.describe() if self.cf else None)
        scored = self._scored()
        todo = [(exec_id, x) for exec_id, x in self._executions.items() if scored(exec_id, x) and selected(x)]
        self._check_turns({exec_id for exec_id, x in self._executions.items() if selected(x)}, report)
        self.resolver.linter(self.resolver.configured)  # exists before the first warm-up
        for start in range(0, len(todo), _CHUNK):
            chunk = todo[start : start + _CHUNK]
            # one lint process per chunk instead of one per program (and per reference)
            codes = [self._code[key] for _, x in chunk if (key := (x.sample_id, x.turn)) in self._code]
            codes += [t.reference for t in self._latest_task.values() if t.reference]
            self.resolver.warm(codes)
            for exec_id, execution in chunk:
                report.executions += 1
                rewards = self._rewards.get(exec_id)
                if not rewards:
                    report.unscored.append(execution.sample_id)
                    continue
                for recorded in rewards.values():
                    report.rewards += 1
                    report.evaluation_rewards += execution.sample_id in self._evaluation
                    self._check(execution, recorded, report)
        return report

    def _inputs(
        self, execution: SandboxExecuted, recorded: RewardScored
    ) -> tuple[RewardFunction, TaskPublished, str, SandboxExecutedV2 | None] | str:
        """What re-scoring ``recorded`` needs from the log (its function, task, code and reference
        run), or why it cannot be re-scored."""
        fn = self.resolver.recorded(recorded)
        if isinstance(fn, str):
            return fn
        code = self._code.get((execution.sample_id, execution.turn))
        if code is None:
            return "its generation (the code) is not on rl.generations"
        reference: ReferenceExecuted | None = None
        if recorded.reference_event_id is not None:
            reference = self._references.get(recorded.reference_event_id)
            if reference is None:
                return f"reference run {recorded.reference_event_id} is not on rl.references"
            task = self._tasks.get(reference.task_event_id)
        else:
            task = self._latest_task.get(execution.task_id)
        if task is None:
            return f"task {execution.task_id} is not on rl.tasks"
        if reference is None and task.reference and not execution.infra_error:
            return "the reward names no reference run (written before rewards named them)"
        return fn, task, code, reference.execution if reference else None

    def rescored(
        self, cf: Counterfactual, selected: Callable[[SandboxExecuted], bool]
    ) -> list[tuple[RewardScored, RewardScored, NoiseVerdict | None]]:
        """Every selected run-0 execution's recorded reward next to the reward ``cf`` gives it and the
        filter's verdict under that reward (None where the audit does not cover the verdict). Executions
        that cannot be re-scored are left out."""
        out: list[tuple[RewardScored, RewardScored, NoiseVerdict | None]] = []
        scored = self._scored()
        todo = [(i, x) for i, x in self._executions.items() if scored(i, x) and selected(x)]
        self.resolver.linter(self.resolver.configured)
        self.resolver.warm([self._code[k] for _, x in todo if (k := (x.sample_id, x.turn)) in self._code])
        for exec_id, execution in todo:
            for recorded in (self._rewards.get(exec_id) or {}).values():
                inputs = self._inputs(execution, recorded)
                if isinstance(inputs, str):
                    continue
                fn, task, code, ref_run = inputs
                other = self.resolver.counterfactual(fn, cf).scored_event(
                    task, code, execution, ref_run, reference_event_id=recorded.reference_event_id
                )
                verdict = self._verdicts.get(recorded.event_id())
                probe_ref = self._probe_reference(verdict)
                judge = (
                    None
                    if isinstance(probe_ref, str)
                    else self._judge(task, code, execution, ref_run, verdict, fn.compare_options(), probe_ref)
                )
                out.append((recorded, other, judge(other) if judge else None))
        return out

    def _probe_reference(self, verdict: NoiseVerdict | None) -> ReferenceExecuted | str | None:
        """The reference's runs of the probe plan ``verdict`` was judged with (None: none), or why they
        cannot be found."""
        if verdict is None or verdict.probe_reference_event_id is None:
            return None
        found = self._references.get(verdict.probe_reference_event_id)
        if found is None:
            return f"the probe's reference run {verdict.probe_reference_event_id} is not on rl.references"
        return found

    def recorded_verdict(self, reward: RewardScored) -> str | None:
        verdict = self._verdicts.get(reward.event_id())
        return verdict.verdict if verdict is not None else None

    def sample_split(self, sample_id: str) -> str:
        return "eval" if sample_id in self._evaluation else "train"

    def _check(self, execution: SandboxExecuted, recorded: RewardScored, report: Report) -> None:
        sid = execution.sample_id

        def unverifiable(reason: str) -> None:
            report.unverifiable.append(Unverifiable(sid, reason))

        inputs = self._inputs(execution, recorded)
        if isinstance(inputs, str):
            return unverifiable(inputs)
        fn, task, code, ref_run = inputs

        rescored = fn.scored_event(
            task, code, execution, ref_run, reference_event_id=recorded.reference_event_id
        )
        verdict = self._verdicts.get(recorded.event_id())
        probe_ref = self._probe_reference(verdict)
        if isinstance(probe_ref, str):
            return unverifiable(probe_ref)
        judge = self._judge(task, code, execution, ref_run, verdict, fn.compare_options(), probe_ref)
        if verdict is not None and judge is not None:
            report.verdicts += 1
        fields = body_diff(recorded, rescored)
        re_verdict = judge(rescored) if judge else None
        if verdict is not None and re_verdict is not None and _decision(verdict) != _decision(re_verdict):
            fields += ("verdict",)
        if fields:
            diff = _difference("rescored", recorded, rescored, fields, verdict, re_verdict)
            report.differences.append(diff)
        if self.cf is not None:
            other_fn = self.resolver.counterfactual(fn, self.cf)
            other = other_fn.scored_event(
                task, code, execution, ref_run, reference_event_id=recorded.reference_event_id
            )
            cf_verdict = judge(other) if judge else None
            changed = decision_diff(recorded, other)
            if verdict is not None and cf_verdict is not None and _decision(verdict) != _decision(cf_verdict):
                changed += ("verdict",)
            if changed:
                report.counterfactual_differences.append(
                    _difference("counterfactual", recorded, other, changed, verdict, cf_verdict)
                )
        return None

    def _judge(
        self,
        task: TaskPublished,
        code: str,
        execution: SandboxExecuted,
        reference: SandboxExecutedV2 | None,
        recorded: NoiseVerdict | None,
        options: CompareOptions,
        probe_reference: ReferenceExecuted | None = None,
    ) -> Callable[[RewardScored], NoiseVerdict] | None:
        """How the filter judges this sample given a reward, when the audit covers its verdict: the
        recorded verdict was written under the filter configuration given, comparing values the way
        the reward function that scored the sample does (as the filter processor does)."""
        noise = self._noise_config(recorded.filter_version) if recorded is not None else None
        if noise is None:
            return None
        turn_key = (execution.sample_id, execution.turn)
        runs: Sequence[SandboxExecuted] = [self._runs[turn_key][i] for i in sorted(self._runs[turn_key])]
        earlier = []
        for turn in range(execution.turn):
            first = self._runs.get((execution.sample_id, turn), {}).get(0)
            turn_code = self._code.get((execution.sample_id, turn))
            if first is None or turn_code is None:
                return None  # an earlier turn is not on the log: the verdict cannot be judged again
            earlier.append((turn_code, first))
        quality = None
        if not execution.infra_error:
            # like the filter, once per task and reference run
            key = (task.event_id(), reference.event_id() if reference else "")
            quality = self._quality.get(key)
            if quality is None:
                quality = self._quality[key] = assess_task(
                    task,
                    options,
                    min_cases=noise.min_cases,
                    reference_execution=reference,
                    flag_constant=noise.flag_constant_answer,
                    flag_identity=noise.flag_identity_answer,
                )

        def judge(reward: RewardScored) -> NoiseVerdict:
            return filter_episode(
                task=task,
                earlier=earlier,
                code=code,
                executions=runs,
                reward=reward,
                config=noise,
                options=options,
                task_quality=quality,
                probe_reference=probe_reference,
            )

        return judge

    def _noise_config(self, version: str) -> NoiseConfig | None:
        """The filter configuration a recorded verdict's version names: the one configured or the
        default, under any filter version (a verdict written by an earlier version is judged again by
        it); None where the audit covers no verdicts or none of those names it."""
        if self.noise is None:
            return None
        for config in (self.noise, NoiseConfig()):
            for v in NOISE_VERSIONS:
                candidate = config.model_copy(update={"version": v})
                if candidate.label() == version:
                    return candidate
        return None

    def _feedback_config(self, version: str) -> FeedbackConfig | None:
        # a feedback written by an earlier version of the feedback function is re-derived by it, under
        # the caps configured now or the default ones
        configured = (self.feedback, FeedbackConfig())
        for config in (*configured, *(c.model_copy(update={"version": "v1"}) for c in configured)):
            if config.label() == version:
                return config
        return None

    def _check_turns(self, selected: set[str], report: Report) -> None:
        """Derive every TurnEnded of a selected execution again and compare it field by field."""
        for event_id, recorded in self._turns.items():
            if recorded.execution_event_id not in selected:
                continue
            sid = recorded.sample_id

            def unverifiable(reason: str, turn: int = recorded.turn, sample: str = sid) -> None:
                report.unverifiable.append(Unverifiable(sample, f"turn {turn}: {reason}"))

            generation = self._generations.get(recorded.generation_event_id)
            execution = self._executions.get(recorded.execution_event_id)
            task = self._latest_task.get(recorded.task_id)
            if generation is None or execution is None or task is None:
                missing = "generation" if generation is None else "execution" if execution is None else "task"
                unverifiable(f"its {missing} is not on the log")
                continue
            version = recorded.feedback.version if recorded.feedback else self.feedback.label()
            config = self._feedback_config(version)
            if config is None:
                unverifiable(f"feedback {version} is neither the configured one nor the default")
                continue
            again = end_turn(
                task,
                generation,
                execution,
                generation_event_id=recorded.generation_event_id,
                execution_event_id=recorded.execution_event_id,
                feedback=config,
            )
            report.turns += 1
            a, b = json.loads(recorded.model_dump_json()), json.loads(again.model_dump_json())
            fields = tuple(k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k))
            if fields:
                report.turn_differences.append(
                    TurnDifference(
                        sid, recorded.turn, event_id, version, fields, recorded.outcome, again.outcome
                    )
                )


def _decision(v: NoiseVerdict) -> tuple[object, ...]:
    return (
        v.verdict,
        tuple((r.code, r.detail) for r in v.reasons),
        v.failure_reward,
        v.probe_reference_event_id,
    )


def _difference(
    kind: Kind,
    recorded: RewardScored,
    other: RewardScored,
    fields: tuple[str, ...],
    verdict: NoiseVerdict | None,
    other_verdict: NoiseVerdict | None,
) -> Difference:
    return Difference(
        kind=kind,
        sample_id=recorded.sample_id,
        task_id=recorded.task_id,
        reward_event_id=recorded.event_id(),
        recorded_version=f"{recorded.reward_fn}-{recorded.reward_version}",
        rescored_version=f"{other.reward_fn}-{other.reward_version}",
        recorded_total=recorded.total,
        rescored_total=other.total,
        recorded_components=dict(recorded.components),
        rescored_components=dict(other.components),
        fields=fields,
        recorded_verdict=verdict.verdict if verdict else None,
        rescored_verdict=other_verdict.verdict if other_verdict else None,
    )
