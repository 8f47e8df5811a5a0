"""The filter processor: rewards -> verdicts, a thin shell over the noise filter.

A sample's verdict needs its source (generation), every run the sandbox made of it (run 0, the
configured re-runs for the flakiness check, and its probe run when run 0 answered every case) and its
reward. All arrive co-partitioned by ``group_id``, in any order; the sample waits in the state until
it is complete, is judged once, and its entries are dropped. A task's quality (with its reference's
run) is assessed once per task and backend and kept in memory (the ``references_kept`` most recently
used): it is derived, so a restart, or a task that comes back after its entry went, computes it again.

The reference's runs of a task's probe plan (its answers on inputs the task never showed) are what a
probe run is judged against, so they are kept in the state of each partition that needs them and
published as ``ReferenceExecuted`` on ``rl.references``, in the same transaction as the first verdict
judged with them there; every such verdict names them. A plan drawn with a probe seed (one per group:
see ``streams/sandbox/agent.py``) has runs of its own. A restart reuses the stored runs, so
``rlstream replay --verify`` re-judges every verdict from the log alone. The stored runs are a cache
with a lifetime (:class:`~infra.runtime.state.Cached`): at most ``references_kept`` of each kind per
partition (the least recently used go first), none kept ``grace_s`` of stream time after its last use;
runs dropped and needed again are run again and published again. The task quality kept in memory is
bounded the same way.

A plan's reference runs are first needed by the verdict of the first sample of the group judged here,
but the plan is known as soon as that sample's probe run arrives (it records the seed and the plan's
digest), before its reward does: given ``warm_reference``, the filter starts them then (on the worker's
pool, beside the reward's scoring), unless this partition keeps them already, and the verdict takes them
when it is judged. The seed is drawn where it was (by the sandbox, after the group's programs were
written), the runs are the same, and they enter the state and the log only with that verdict, as
before: warming changes when the reference runs, not what a verdict reads.

An episode of several turns waits as a whole (``EPISODE``): every turn's code and runs, until its reward
names the final turn; it is judged then, its final turn exactly like a one-turn sample (its re-runs and,
when its first run answered every case, its probe run, judged against the same reference runs of the
plan) and every earlier turn for a reward-hacking signature (``filter_episode``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field, field_validator

from infra.runtime.port import Emit, Incoming, PoisonRecord
from infra.runtime.state import Cached, Kind, Marker, Remembered, State, event_from_state
from schemas.reference import ReferenceExecuted
from schemas.rollout import CodeGenerated, NoiseVerdict, RewardScored, SandboxExecuted
from schemas.task import TaskPublished
from schemas.topics import EXECUTIONS, GENERATIONS, REFERENCES, REWARDS, VERDICTS
from streams.noise.config import NoiseConfig
from streams.noise.filter import filter_episode
from streams.noise.rules import TaskQuality, assess_task
from streams.probe.plan import plan_for, probe_due, probe_run_index
from streams.recent import Recent
from streams.reward.agent import REFERENCES_KEPT, ReferenceRunner, TaskLookup
from streams.reward.literals import CompareOptions

INPUT_TOPICS = (GENERATIONS.name, EXECUTIONS.name, REWARDS.name)
#: where it writes: verdicts, and the reference runs of the probe plans they judged with
OUTPUT_TOPICS = (VERDICTS.name, REFERENCES.name)


#: runs of waiting samples kept encoded and decoded (a few batches' worth: each sample's runs are
#: read back within its group's batches)
WAITING_RUNS_KEPT = 64


def _lift_reward(reward: Any) -> Any:
    return event_from_state(RewardScored, reward) if isinstance(reward, dict) else reward


class Waiting(BaseModel):
    """What has arrived of a sample not judged yet (key: its sample id)."""

    code: str | None = None
    #: run index (as text) -> the sandbox's execution
    runs: dict[str, SandboxExecuted] = Field(default_factory=dict)
    reward: RewardScored | None = None

    # a sample that waited across an upgrade holds events of an older version: lifted when read
    @field_validator("runs", mode="before")
    @classmethod
    def _lift_runs(cls, runs: Any) -> Any:
        if not isinstance(runs, dict):
            return runs
        return {
            k: event_from_state(SandboxExecuted, v) if isinstance(v, dict) else v for k, v in runs.items()
        }

    @field_validator("reward", mode="before")
    @classmethod
    def _lift_reward(cls, reward: Any) -> Any:
        return _lift_reward(reward)


class WaitingEpisode(BaseModel):
    """What has arrived of an episode of several turns not judged yet (key: its sample id)."""

    #: turn (as text) -> that turn's code and runs (its ``reward`` unused)
    turns: dict[str, Waiting] = Field(default_factory=dict)
    #: the episode's reward: it names the final turn
    reward: RewardScored | None = None

    @field_validator("reward", mode="before")
    @classmethod
    def _lift_reward(cls, reward: Any) -> Any:
        return _lift_reward(reward)


def _seeded_legacy(raw: Any) -> tuple[float, Any]:
    # written before the runs were a cache: ``{"reference": ..., "used_s": ...}``
    return float(raw["used_s"]), raw["reference"]


#: a waiting sample's runs as the state holds them: each run encoded once, and a stored run read back as
#: the event it was (a sample is read and written again with each of its events, and its probe run's
#: hundreds of cases were dumped and validated anew each time: ~1 ms per sample)
_RUNS: Remembered[SandboxExecuted] = Remembered(
    lambda raw: event_from_state(SandboxExecuted, raw), kept=WAITING_RUNS_KEPT
)
_run_json = _RUNS.encoding(lambda run: run.model_dump(mode="json"), once=True)


def _waiting_json(entry: Waiting) -> dict[str, Any]:
    """What ``TypeAdapter(Waiting).dump_python(entry, mode="json")`` gives, each run encoded once."""
    return {
        "code": entry.code,
        "runs": {k: _run_json(run) for k, run in entry.runs.items()},
        "reward": None if entry.reward is None else entry.reward.model_dump(mode="json"),
    }


def _waiting_from(raw: Any) -> Waiting:
    if isinstance(raw, dict) and isinstance(raw.get("runs"), dict):
        runs = {k: _RUNS(v) if isinstance(v, dict) else v for k, v in raw["runs"].items()}
        raw = {**raw, "runs": runs}
    return Waiting.model_validate(raw)


SAMPLE = Kind("sample", Waiting, encode=_waiting_json, decode=_waiting_from)
EPISODE = Kind("episode", WaitingEpisode)
#: a sample already judged: its re-delivered records are ignored
JUDGED = Marker("judged")
#: the reference's runs of a task's probe plan this partition judges with (key: ``<task event id>:<backend>``)
PROBE_REF = Cached("probe-ref", ReferenceExecuted)
#: the reference's runs of a plan drawn with a probe seed (key: ``<task event id>:<backend>:<plan digest>``)
SEEDED_REF = Cached("seeded-ref", ReferenceExecuted, legacy=_seeded_legacy)
KINDS = (SAMPLE, EPISODE, JUDGED, PROBE_REF, SEEDED_REF)

#: (task, backend, probe seed) -> the reference solution's runs of the task's probe plan drawn with
#: that seed (None: no reference)
ProbeReferenceRunner = Callable[[TaskPublished, str, str | None], ReferenceExecuted | None]
#: (task, backend, probe seed): start those runs now, for a later call of the runner to take
ProbeReferenceWarmer = Callable[[TaskPublished, str, str | None], None]


class FilterAgent:
    def __init__(
        self,
        config: NoiseConfig,
        options: CompareOptions,
        tasks: TaskLookup,
        reference: ReferenceRunner,
        probe_reference: ProbeReferenceRunner | None = None,
        *,
        references_kept: int = REFERENCES_KEPT,
        warm_reference: ProbeReferenceWarmer | None = None,
    ) -> None:
        self.config = config
        self.options = options
        self.tasks = tasks
        self.reference = reference
        self.probe_reference = probe_reference
        self.warm_reference = warm_reference
        #: reference runs kept in the state of each partition, per kind, and task qualities in memory
        self.references_kept = references_kept
        self._quality: Recent[tuple[str, str, str], TaskQuality] = Recent(references_kept)

    def _task_quality(self, task_id: str, backend: str) -> TaskQuality:
        task = self.tasks.get(task_id)
        if task is None:
            raise PoisonRecord(f"unknown task {task_id!r}: no TaskPublished on rl.tasks")
        key = (task_id, task.event_id(), backend)
        found, quality = self._quality.get(key)
        if not found or quality is None:
            quality = assess_task(
                task,
                self.options,
                min_cases=self.config.min_cases,
                reference_execution=self.reference(task, backend),
                flag_constant=self.config.flag_constant_answer,
                flag_identity=self.config.flag_identity_answer,
            )
            self._quality.put(key, quality)
        return quality

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        out: list[Emit] = []
        for msg in batch:
            event, p = msg.event, msg.partition
            sid = getattr(event, "sample_id", None)
            if sid is None or state.marked(p, JUDGED, sid):
                continue
            if isinstance(event, SandboxExecuted) and event.probe is not None:
                self._warm(event, p, state)
            episode = (isinstance(event, CodeGenerated | SandboxExecuted) and event.max_turns > 1) or (
                isinstance(event, RewardScored) and (event.turn > 0 or state.get(p, EPISODE, sid) is not None)
            )
            if episode:
                judged = self._episode(msg, state)
                if judged is not None:
                    out += self._emits(judged, msg)
                continue
            entry = state.get(p, SAMPLE, sid) or Waiting()
            if isinstance(event, CodeGenerated):
                entry.code = event.code
            elif isinstance(event, SandboxExecuted):
                entry.runs[str(event.run_index)] = event
            elif isinstance(event, RewardScored):
                entry.reward = event
            else:
                continue
            judged = self._judge(entry, p, state)
            if judged is None:
                state.put(p, SAMPLE, sid, entry)
                continue
            state.delete(p, SAMPLE, sid)
            state.mark(p, JUDGED, sid)
            out += self._emits(judged, msg)
        return out

    def _warm(self, run: SandboxExecuted, p: int, state: State) -> None:
        """Start the reference's runs of the plan this probe run records, unless this partition keeps
        them (its verdict will want them: :meth:`_probe_reference`)."""
        if self.warm_reference is None or self.probe_reference is None or run.infra_error:
            return
        task = self.tasks.get(run.task_id)
        if task is None or not task.reference:
            return
        if run.probe_seed is None:
            kind, key = PROBE_REF, f"{task.event_id()}:{run.backend}"
        else:
            kind, key = SEEDED_REF, f"{task.event_id()}:{run.backend}:{run.probe}"
        if key not in state.keys(p, kind):
            self.warm_reference(task, run.backend, run.probe_seed)

    @staticmethod
    def _emits(judged: tuple[NoiseVerdict, ReferenceExecuted | None], msg: Incoming) -> list[Emit]:
        # the probe plan's reference runs, on their first use here, go out with the verdict they judged
        verdict, reference = judged
        first = [Emit(reference, causation_id=msg.envelope.id)] if reference is not None else []
        return [*first, Emit(verdict, causation_id=msg.envelope.id)]

    def _episode(self, msg: Incoming, state: State) -> tuple[NoiseVerdict, ReferenceExecuted | None] | None:
        event, p = msg.event, msg.partition
        sid = str(getattr(event, "sample_id", ""))
        entry = state.get(p, EPISODE, sid) or WaitingEpisode()
        one_shot = state.get(p, SAMPLE, sid)
        if one_shot is not None:
            # the reward of a first turn that was final arrived before the episode's first turn did
            entry.reward = entry.reward or one_shot.reward
            state.delete(p, SAMPLE, sid)
        if isinstance(event, CodeGenerated):
            entry.turns.setdefault(str(event.turn), Waiting()).code = event.code
        elif isinstance(event, SandboxExecuted):
            entry.turns.setdefault(str(event.turn), Waiting()).runs[str(event.run_index)] = event
        elif isinstance(event, RewardScored):
            entry.reward = event
        judged = self._judge_episode(entry, p, state)
        if judged is None:
            state.put(p, EPISODE, sid, entry)
            return None
        state.delete(p, EPISODE, sid)
        state.mark(p, JUDGED, sid)
        return judged

    def _judge_episode(
        self, entry: WaitingEpisode, p: int, state: State
    ) -> tuple[NoiseVerdict, ReferenceExecuted | None] | None:
        """The verdict once every turn up to the final one (as the reward names it) is in, the final
        turn complete as a one-turn sample must be (its re-runs and its probe run)."""
        reward = entry.reward
        if reward is None:
            return None
        turns: list[tuple[str, list[SandboxExecuted]]] = []
        for t in range(reward.turn + 1):
            turn = entry.turns.get(str(t))
            if turn is None or turn.code is None or "0" not in turn.runs:
                return None
            turns.append((turn.code, [turn.runs[k] for k in sorted(turn.runs, key=int)]))
        code, runs = turns[-1]
        return self._verdict(code, runs, reward, p, state, earlier=[(c, r[0]) for c, r in turns[:-1]])

    def _judge(
        self, entry: Waiting, p: int, state: State
    ) -> tuple[NoiseVerdict, ReferenceExecuted | None] | None:
        """The verdict once the sample is complete, and the probe plan's reference runs when this is
        their first use on this partition (then they are published with it)."""
        if entry.code is None or entry.reward is None or "0" not in entry.runs:
            return None
        runs = [entry.runs[k] for k in sorted(entry.runs, key=int)]
        return self._verdict(entry.code, runs, entry.reward, p, state, earlier=[])

    def _verdict(
        self,
        code: str,
        runs: list[SandboxExecuted],
        reward: RewardScored,
        p: int,
        state: State,
        *,
        earlier: list[tuple[str, SandboxExecuted]],
    ) -> tuple[NoiseVerdict, ReferenceExecuted | None] | None:
        """Judge the (final turn's) code and runs, once every run the sandbox was asked for is in."""
        first = runs[0]
        task = self.tasks.get(first.task_id)
        if task is None:
            raise PoisonRecord(f"unknown task {first.task_id!r}: no TaskPublished on rl.tasks")
        # every run the sandbox was asked for must be on the log (a run it finally failed is published
        # with infra_error set, so none is waited for in vain)
        same_order = [x for x in runs if x.probe is None]
        if len(same_order) < 1 + self.config.reruns and not first.infra_error:
            return None
        if (
            self.config.probe
            and probe_due(task, first)
            and not any(x.run_index == probe_run_index(self.config.reruns) for x in runs)
        ):
            return None
        quality = None if first.infra_error else self._task_quality(first.task_id, first.backend)
        reference, first_use = None, False
        probe_run = next((x for x in runs if x.probe is not None and not x.infra_error), None)
        if probe_run is not None:
            reference, first_use = self._probe_reference(task, first.backend, probe_run.probe_seed, p, state)
        verdict = filter_episode(
            task=task,
            earlier=earlier,
            code=code,
            executions=runs,
            reward=reward,
            config=self.config,
            options=self.options,
            task_quality=quality,
            probe_reference=reference,
        )
        return verdict, reference if first_use else None

    def _probe_reference(
        self, task: TaskPublished, backend: str, seed: str | None, p: int, state: State
    ) -> tuple[ReferenceExecuted | None, bool]:
        """The reference's runs of the task's probe plan drawn with ``seed`` this partition judges with,
        and whether this is their first use here."""
        if self.probe_reference is None or not task.reference:
            return None, False
        if seed is not None:
            return self._seeded_reference(task, backend, seed, p, state)
        key = f"{task.event_id()}:{backend}"
        stored = state.use(p, PROBE_REF, key)
        if stored is not None:
            return stored, False
        ref = self.probe_reference(task, backend, None)
        if ref is None:
            return None, False
        state.keep(p, PROBE_REF, key, ref, limit=self.references_kept)
        return ref, True

    def _seeded_reference(
        self, task: TaskPublished, backend: str, seed: str, p: int, state: State
    ) -> tuple[ReferenceExecuted | None, bool]:
        plan = plan_for(task, seed)
        if plan is None or self.probe_reference is None:
            return None, False
        key = f"{task.event_id()}:{backend}:{plan.digest}"
        stored = state.use(p, SEEDED_REF, key)
        if stored is not None:
            return stored, False
        ref = self.probe_reference(task, backend, seed)
        if ref is None:
            return None, False
        state.keep(p, SEEDED_REF, key, ref, limit=self.references_kept)
        return ref, True
