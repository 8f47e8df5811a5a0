"""The scheduler processor: tasks -> RolloutRequested groups, fair across tenants, held back under
pressure. A singleton (it decides globally); its state lives in changelog partition 0.

A task belongs to the run that published it (the envelope's run id; tasks from upstream systems
without one belong to the scheduler's own run), and its groups are named ``<run>/<task>/<epoch>``:
publishing the same tasks in a new run schedules them again, and restarting a run resumes it.

Held-out (``eval``) tasks are never queued for training: they are sampled in evaluation rounds
(``evaluation.py``) on their own topic, outside backpressure and curriculum.

With the level curriculum on (``levels.py``), graded tasks above a run's current level wait; the scores
of the evaluation rounds' samples move the level on, and each move is published on ``rl.curriculum``.

Backpressure holds groups back while the learner's consumer lag or the groups in flight reach their bounds,
or while a run's generators are more than ``max_staleness`` versions behind its newest published policy:
what they run is what they said they loaded (``PolicyLoaded`` on ``rl.policy.loaded``), so the bound
releases as soon as they catch up.

Input: ``rl.tasks`` (new work), ``rl.experiences`` (groups finished), ``rl.policy`` (versions),
``rl.policy.loaded`` (the versions the generators run), ``rl.rewards`` (the scores of evaluation samples;
the others are passed over).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from infra.runtime.port import Emit, Incoming
from infra.runtime.state import Kind, State
from schemas.base import FrozenModel
from schemas.curriculum import CurriculumLevelChanged
from schemas.policy import PolicyLoaded, PolicyPublished
from schemas.rollout import ExperienceReady, RewardScored, RolloutRequested
from schemas.task import TaskPublished
from schemas.topics import (
    CURRICULUM,
    EVALUATIONS_REQUESTED,
    EXPERIENCES,
    POLICY,
    POLICY_LOADED,
    REWARDS,
    ROLLOUTS_REQUESTED,
    TASKS,
)
from streams.config import SchedulerConfig
from streams.scheduler.evaluation import EvalPlan, EvalTask, eval_group_id
from streams.scheduler.levels import LevelPlan, RoundTally
from streams.scheduler.policy import (
    BackpressureBounds,
    Curriculum,
    Decision,
    Pressure,
    TaskRef,
    WeightedFairQueue,
    backpressure,
)

INPUT_TOPICS = (TASKS.name, EXPERIENCES.name, POLICY.name, POLICY_LOADED.name, REWARDS.name)
#: where it writes (the access plan grants exactly these; the host refuses any other)
OUTPUT_TOPICS = (ROLLOUTS_REQUESTED.name, EVALUATIONS_REQUESTED.name, CURRICULUM.name)
P = 0  # the singleton's state partition


class TaskRecord(FrozenModel):
    """A task the scheduler knows (key ``<run>/<task>``) and how many of its groups it issued."""

    event_id: str
    run: str
    task_id: str
    issued: int
    tenant: str
    priority: int
    prompt: str
    entry_point: str
    #: turns each of its episodes may take (a record kept before episodes existed: one shot)
    max_turns: int = 1
    #: the task's difficulty level (None: not graded)
    difficulty: int | None = None
    #: where the task was read: each group's trace links back to it
    trace: str | None = None


class InFlight(FrozenModel):
    """A group issued and not finished yet (key: its group id)."""

    task_id: str
    at: float


TASK = Kind("task", TaskRecord)
INFLIGHT = Kind("inflight", InFlight)
#: per task id, the rewards of its last groups (the curriculum's window)
HIST = Kind("hist", list[list[float]])
#: per run, its newest published policy version (state written before it was per run has one under "")
POLICY_VERSION = Kind("policy_version", int)
#: per run, the newest version its training generators said they loaded (rl.policy.loaded)
RUNNING_VERSION = Kind("running_version", int)
#: a held-out task (key ``<run>/<task>``) and the versions it was evaluated under
EVALTASK = Kind("evaltask", encode=EvalTask.to_json, decode=EvalTask.from_json)
#: per run, the policy versions due for an evaluation round
EVALVERSIONS = Kind("evalversions", list[int])
#: per run: its training is over (the final step's version was published)
CLOSED = Kind("closed", bool)
#: per run, its current level (the level curriculum)
LEVEL = Kind("level", int)
#: per run, until it first moves on: its level is where it started (a task of an easier level read
#: later restarts it there)
LEVELSTART = Kind("levelstart", bool)
#: per eval group id, the scored samples of a round the level curriculum follows (dropped with its round)
EVALROUND = Kind("evalround", encode=RoundTally.to_json, decode=RoundTally.from_json)
KINDS = (
    TASK,
    INFLIGHT,
    HIST,
    POLICY_VERSION,
    RUNNING_VERSION,
    EVALTASK,
    EVALVERSIONS,
    CLOSED,
    LEVEL,
    LEVELSTART,
    EVALROUND,
)


class SchedulerAgent:
    def __init__(
        self, cfg: SchedulerConfig, run_id: str, learner_lag: Callable[[bool], int], *, max_turns: int = 1
    ) -> None:
        """``learner_lag(fresh)``: the learner's consumer lag; a cached value may be up to a second old,
        ``fresh=True`` reads the broker now (asked just before a group is issued, so a stale reading
        can never let the lag overshoot its bound). ``max_turns``: the turns an episode may take when
        its task does not say."""
        self.cfg = cfg
        self.max_turns = max_turns
        self.run_id = run_id
        self._learner_lag = learner_lag
        self._bounds = BackpressureBounds(cfg.max_learner_lag, cfg.max_groups_in_flight, cfg.max_staleness)
        self._queue = WeightedFairQueue(cfg.tenant_weights)
        self._curriculum = Curriculum(window=max(cfg.curriculum_window, 1), cooldown=cfg.curriculum_cooldown)
        self._built_generation = -1
        self.last_decision = Decision(True)
        self._plan = EvalPlan(cfg.evaluation, cfg.sampling)
        self._levels = LevelPlan(cfg.levels)

    # the queue and curriculum are derived from the state: rebuilt after every restore
    def _rebuild(self, state: State) -> None:
        if self._built_generation == state.generation:
            return
        self._queue = WeightedFairQueue(self.cfg.tenant_weights)
        self._curriculum = Curriculum(
            window=max(self.cfg.curriculum_window, 1), cooldown=self.cfg.curriculum_cooldown
        )
        for key, task in state.items(P, TASK):
            if task.issued < self.cfg.epochs:
                self._queue.push(TaskRef(key, task.tenant, task.priority))
        for key, history in state.items(P, HIST):
            for rewards in history:
                self._curriculum.record(key, rewards)
        self._built_generation = state.generation

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        self._rebuild(state)
        out: list[Emit] = []
        for msg in batch:
            event = msg.event
            if isinstance(event, TaskPublished):
                run = msg.envelope.run_id or self.run_id
                if self.cfg.only_own_run and run != self.run_id:
                    continue
                if self._held_out(state, run, event, msg):
                    continue
                key = f"{run}/{event.task_id}"
                known = state.get(P, TASK, key)
                if known is not None and known.event_id == msg.envelope.id:
                    continue  # re-delivery or re-publication of the same content
                issued = known.issued if known else 0
                state.put(
                    P,
                    TASK,
                    key,
                    TaskRecord(
                        event_id=msg.envelope.id,
                        run=run,
                        task_id=event.task_id,
                        issued=issued,
                        tenant=event.tenant,
                        priority=event.priority,
                        prompt=event.prompt,
                        entry_point=event.entry_point,
                        max_turns=self._turns(event),
                        difficulty=event.difficulty,
                        trace=msg.trace,
                    ),
                )
                if known is None:
                    self._queue.push(TaskRef(f"{run}/{event.task_id}", event.tenant, event.priority))
                    if self.cfg.levels.enabled and event.difficulty is not None:
                        out.extend(self._easier_start(state, run, event.difficulty))
            elif isinstance(event, ExperienceReady):
                if state.get(P, INFLIGHT, event.group_id) is None:
                    continue
                state.delete(P, INFLIGHT, event.group_id)
                rewards = [s.reward for s in event.samples]
                history = (state.get(P, HIST, event.task_id) or [])[-(self.cfg.curriculum_window or 1) :]
                state.put(P, HIST, event.task_id, [*history, rewards])
                self._curriculum.record(event.task_id, rewards)
            elif isinstance(event, PolicyPublished | PolicyLoaded) and not self._own(event.run_id):
                continue  # another run's versions say nothing about this run's learner or generators
            elif isinstance(event, PolicyPublished):
                self._version_published(state, event)
            elif isinstance(event, PolicyLoaded):
                if event.policy_version > (state.get(P, RUNNING_VERSION, event.run_id) or 0):
                    state.put(P, RUNNING_VERSION, event.run_id, event.policy_version)
            elif isinstance(event, RewardScored) and self.cfg.levels.enabled:
                out.extend(self._scored(state, event))
        return out

    def _own(self, run: str) -> bool:
        return run == self.run_id or not self.cfg.only_own_run

    def _turns(self, event: TaskPublished) -> int:
        return event.max_turns or self.max_turns

    def _held_out(self, state: State, run: str, event: TaskPublished, msg: Incoming) -> bool:
        """Keep an ``eval`` task for evaluation rounds (never for training); False for a train task."""
        key = f"{run}/{event.task_id}"
        known = state.get(P, EVALTASK, key)
        if event.split != "eval":
            if known is not None:  # republished as a training task: no more rounds
                state.delete(P, EVALTASK, key)
            return False
        if known is not None and known.event_id == msg.envelope.id:
            return True
        # a training task republished as held out leaves training (its queued entry is skipped)
        state.delete(P, TASK, key)
        task = EvalTask(
            run=run,
            task_id=event.task_id,
            event_id=msg.envelope.id,
            prompt=event.prompt,
            entry_point=event.entry_point,
            tenant=event.tenant,
            priority=event.priority,
            trace=msg.trace,
            evaluated=known.evaluated if known is not None else [],
            max_turns=self._turns(event),
            difficulty=event.difficulty,
        )
        state.put(P, EVALTASK, key, task)
        return True

    def _version_published(self, state: State, event: PolicyPublished) -> None:
        if event.policy_version > (state.get(P, POLICY_VERSION, event.run_id) or 0):
            state.put(P, POLICY_VERSION, event.run_id, event.policy_version)
        closed = state.get(P, CLOSED, event.run_id) or False
        if self._plan.due(event.policy_version, event.step, closed=closed):
            due = state.get(P, EVALVERSIONS, event.run_id) or [0]
            if event.policy_version not in due:
                state.put(P, EVALVERSIONS, event.run_id, sorted([*due, event.policy_version]))
        if self._plan.closes_training(event.step):
            state.put(P, CLOSED, event.run_id, True)

    def _evaluations(self, state: State) -> list[Emit]:
        """Every round due and not issued yet, for every held-out task (no backpressure applies)."""
        out: list[Emit] = []
        for key, task in list(state.items(P, EVALTASK)):
            missing = self._plan.missing(task, state.get(P, EVALVERSIONS, task.run) or [0])
            if not missing:
                continue
            for version in missing:
                if self.cfg.levels.enabled and task.difficulty is not None:
                    tally = RoundTally(
                        task.run, task.task_id, version, task.difficulty, self.cfg.evaluation.samples
                    )
                    state.put(P, EVALROUND, eval_group_id(task.run, task.task_id, version), tally)
                out.append(
                    Emit(
                        self._plan.request(task, version),
                        topic=EVALUATIONS_REQUESTED.name,
                        causation_id=task.event_id,
                        run_id=task.run,
                        new_trace=True,
                        links=(task.trace,) if task.trace else (),
                    )
                )
            task.evaluated = sorted({*task.evaluated, *missing})
            state.put(P, EVALTASK, key, task)
        return out

    def in_flight(self, state: State) -> int:
        return state.count(P, INFLIGHT)

    def tick(self, state: State, now: float) -> list[Emit]:
        if P not in state.owned_partitions():
            return []
        self._rebuild(state)
        out: list[Emit] = self._evaluations(state)
        lag = self._learner_lag(False)
        fresh = False
        skipped: list[TaskRef] = []
        gated: set[str] = set()
        while len(self._queue):
            self.last_decision = backpressure(
                Pressure(learner_lag=lag, groups_in_flight=self.in_flight(state)), self._bounds
            )
            if not self.last_decision.issue:
                break
            if not fresh:
                lag, fresh = self._learner_lag(True), True
                continue  # decide again on the fresh reading
            ref = self._queue.pop()
            assert ref is not None
            record = state.get(P, TASK, ref.task_id)
            if record is None or state.get(P, CLOSED, record.run) or record.issued >= self.cfg.epochs:
                continue  # held out since it was queued, its run's training is over, or all issued
            version = state.get(P, POLICY_VERSION, record.run) or 0
            # staleness is per run: its own generators against its own learner's versions
            stale = backpressure(
                Pressure(
                    learner_lag=lag,
                    groups_in_flight=self.in_flight(state),
                    newest_policy_version=version,
                    generator_policy_version=state.get(P, RUNNING_VERSION, record.run) or 0,
                ),
                self._bounds,
            )
            if not stale.issue:
                self.last_decision = stale
                skipped.append(ref)
                if len(skipped) > len(self._queue):
                    break
                continue
            if self.cfg.levels.enabled and not self._level_allows(state, record, out):
                skipped.append(ref)
                gated.add(record.run)
                if len(skipped) > len(self._queue):
                    break
                continue
            if self.cfg.curriculum_window and self._curriculum.should_skip(record.task_id):
                skipped.append(ref)
                if len(skipped) > len(self._queue):
                    break
                continue
            epoch = record.issued
            group_id = f"{ref.task_id}/{epoch}"  # ref.task_id is <run>/<task>
            state.put(P, TASK, ref.task_id, record.model_copy(update={"issued": epoch + 1}))
            state.put(P, INFLIGHT, group_id, InFlight(task_id=ref.task_id, at=now))
            self._curriculum.issued()
            if epoch + 1 < self.cfg.epochs:
                self._queue.push(ref)
            request = RolloutRequested(
                group_id=group_id,
                task_id=record.task_id,
                group_size=self.cfg.group_size,
                prompt=record.prompt,
                entry_point=record.entry_point,
                tenant=ref.tenant,
                priority=ref.priority,
                policy_version=version,
                sampling=self.cfg.sampling,
                max_turns=record.max_turns,
            )
            # a group's trace starts here (issued by a tick, not while handling a record), linked
            # to its task's
            trace = record.trace
            out.append(
                Emit(
                    request,
                    causation_id=record.event_id,
                    run_id=record.run,
                    new_trace=True,
                    links=(trace,) if trace else (),
                )
            )
        for ref in skipped:
            self._queue.push(ref)
        for run in sorted(gated):
            out.extend(self._exhausted(state, run))
        return out

    # --- the level curriculum (rules in levels.py) -------------------------------------------------

    @staticmethod
    def _tasks(state: State, run: str) -> list[TaskRecord]:
        return [t for _, t in state.items(P, TASK) if t.run == run]

    def _move(self, state: State, moves: list[CurriculumLevelChanged]) -> list[Emit]:
        for move in moves:
            state.put(P, LEVEL, move.run_id, move.to_level)
            if move.reason == "start":
                state.put(P, LEVELSTART, move.run_id, True)
            else:
                state.delete(P, LEVELSTART, move.run_id)
        return [Emit(m, topic=CURRICULUM.name, run_id=m.run_id) for m in moves]

    def _easier_start(self, state: State, run: str, level: int) -> list[Emit]:
        """A run started at its easiest level known then; tasks arrive over several partitions, so an
        easier one may be read after the start: the run starts again there (never after a move on)."""
        current = state.get(P, LEVEL, run)
        if current is None or level >= current or not state.get(P, LEVELSTART, run):
            return []
        return self._move(state, [CurriculumLevelChanged(run_id=run, to_level=level, reason="start")])

    def _current(self, state: State, run: str, out: list[Emit]) -> int | None:
        """The run's level; the first call starts it at its easiest graded training level."""
        current = state.get(P, LEVEL, run)
        if current is None:
            levels = (t.difficulty for t in self._tasks(state, run))
            start = self._levels.start(run, (lv for lv in levels if lv is not None))
            if start is not None:
                out.extend(self._move(state, [start]))
                current = start.to_level
        return current

    def _level_allows(self, state: State, record: TaskRecord, out: list[Emit]) -> bool:
        level = record.difficulty
        return level is None or self._levels.eligible(level, self._current(state, record.run, out))

    def _scored(self, state: State, event: RewardScored) -> list[Emit]:
        """Tally an evaluation sample's score; a round that completes may move its run's level."""
        tally = state.get(P, EVALROUND, event.group_id)
        if tally is None:
            return []  # a training sample, or a round the curriculum does not follow
        if event.sample_id in tally.correct:
            return []
        tally.correct[event.sample_id] = event.total_cases > 0 and event.passed == event.total_cases
        state.put(P, EVALROUND, event.group_id, tally)
        if not tally.complete:
            return []
        out: list[Emit] = []
        current = self._current(state, tally.run, out)
        of_version = [
            t for _, t in state.items(P, EVALROUND) if t.run == tally.run and t.version == tally.version
        ]
        if current is not None:
            held_out = {t.difficulty for _, t in state.items(P, EVALTASK) if t.run == tally.run}
            train = {t.difficulty for t in self._tasks(state, tally.run)}
            moves = self._levels.after_round(
                tally.run,
                current,
                tally.version,
                of_version,
                (lv for lv in held_out if lv is not None),
                (lv for lv in train if lv is not None),
            )
            out.extend(self._move(state, moves))
        if all(t.complete for t in of_version):  # the round is over: its tallies have served
            for t in of_version:
                state.delete(P, EVALROUND, eval_group_id(t.run, t.task_id, t.version))
        return out

    def _exhausted(self, state: State, run: str) -> list[Emit]:
        """Leave the run's level when none of its tasks is left to schedule and none is in flight."""
        out: list[Emit] = []
        current = self._current(state, run, out)
        if current is None:
            return out
        records = self._tasks(state, run)
        waiting = any(
            r.issued < self.cfg.epochs and self._levels.eligible(r.difficulty, current) for r in records
        )
        in_flight = any(k.startswith(f"{run}/") for k in state.keys(P, INFLIGHT))
        if waiting or in_flight:
            return out
        train = {r.difficulty for r in records}
        move = self._levels.exhausted(run, current, (lv for lv in train if lv is not None))
        return out + (self._move(state, [move]) if move is not None else [])
