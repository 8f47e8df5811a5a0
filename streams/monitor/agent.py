"""The monitor processor: the run's events -> windowed signals -> alert rules -> ``rl.alerts``.

It reads what operators watch (rewards, verdicts, executions, dead letters, policy versions published and
loaded), keeps per-run windows of them (``signals.py``) and evaluates the rules of a versioned YAML file
(``rules.py``) on every tick at stream time. A rule whose condition holds for its ``for_s`` fires an
``AlertRaised`` with the evidence (window, value, threshold, run, policy version); when the condition no
longer holds an ``AlertResolved`` follows. Which alerts are pending or firing is state (a restarted
monitor neither raises an alert twice nor forgets to resolve one); the windows are not: they fill again
from the events that follow. A singleton, like the scheduler: its state lives in partition 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from infra.runtime.port import Emit, Incoming
from infra.runtime.state import Kind, State
from schemas.alert import AlertRaised, AlertResolved
from schemas.base import FrozenModel
from schemas.topics import ALERTS, DLQ, EXECUTIONS, POLICY, POLICY_LOADED, REWARDS, VERDICTS
from streams.monitor.rules import Rule, RuleSet
from streams.monitor.signals import EVERY_RUN, Signals

INPUT_TOPICS = (REWARDS.name, VERDICTS.name, EXECUTIONS.name, DLQ.name, POLICY.name, POLICY_LOADED.name)
#: where it writes (the access plan grants exactly these; the host refuses any other)
OUTPUT_TOPICS = (ALERTS.name,)
P = 0
#: seconds of stream time between two evaluations of the rules
EVALUATE_EVERY_S = 1.0


class Watch(FrozenModel):
    """A rule's condition that holds for a run: since when, and whether its alert has fired."""

    since_ms: int
    firing: bool = False
    value: float


#: key ``<rule>|<run>`` (``*``: every run)
WATCH = Kind("watch", Watch)
KINDS = (WATCH,)


def _key(rule: Rule, run: str | None) -> str:
    return f"{rule.name}|{run if run is not None else '*'}"


class MonitorAgent:
    def __init__(self, rules: RuleSet, learner_lag: Callable[[bool], int]) -> None:
        self.rules = rules
        self.signals = Signals()
        self._learner_lag = learner_lag
        self._evaluated = float("-inf")
        self._horizon = 2 * max((r.window_s for r in rules.rules), default=60.0)

    def handle(self, batch: Sequence[Incoming], state: State) -> list[Emit]:
        for msg in batch:
            self.signals.observe(msg.event, msg.envelope.run_id, msg.timestamp_ms / 1000.0)
        return []

    def tick(self, state: State, now: float) -> list[Emit]:
        if P not in state.owned_partitions() or now - self._evaluated < EVALUATE_EVERY_S:
            return []
        self._evaluated = now
        self.signals.prune(now - self._horizon)
        lag = self._learner_lag(False)
        out: list[Emit] = []
        for rule in self.rules.rules:
            runs = [EVERY_RUN] if rule.signal == "dead_letters" else self.signals.runs()
            for run in runs:
                out.extend(self._evaluate(state, rule, run, now, lag))
        return out

    def _measure(self, rule: Rule, run: str | None, now: float, lag: int) -> float | None:
        value = self.signals.value(rule.signal, run, now, rule.window_s, learner_lag=lag)
        if rule.measure == "value" or value is None:
            return value
        before = self.signals.value(rule.signal, run, now - rule.window_s, rule.window_s, learner_lag=lag)
        return None if before is None else value - before

    def _evaluate(self, state: State, rule: Rule, run: str | None, now: float, lag: int) -> list[Emit]:
        key = _key(rule, run)
        watch = state.get(P, WATCH, key)
        value = self._measure(rule, run, now, lag)
        version = self.signals.newest_version(run)
        if value is not None and rule.holds(value):
            if watch is None:
                watch = Watch(since_ms=int(now * 1000), value=value)
            if not watch.firing and now - watch.since_ms / 1000.0 >= rule.for_s:
                state.put(P, WATCH, key, watch.model_copy(update={"firing": True, "value": value}))
                raised = AlertRaised(
                    rule=rule.name,
                    rules_version=self.rules.version,
                    severity=rule.severity,
                    summary=rule.summary,
                    run_id=run,
                    signal=rule.signal,
                    window_s=rule.window_s,
                    measure=rule.measure,
                    op=rule.op,
                    threshold=rule.threshold,
                    value=value,
                    for_s=rule.for_s,
                    since_ms=watch.since_ms,
                    policy_version=version,
                )
                return [Emit(raised, topic=ALERTS.name, run_id=run, new_trace=True)]
            if state.get(P, WATCH, key) is None:
                state.put(P, WATCH, key, watch)
            return []
        if watch is None:
            return []
        state.delete(P, WATCH, key)
        if not watch.firing:
            return []  # it never held for long enough
        resolved = AlertResolved(
            rule=rule.name,
            rules_version=self.rules.version,
            run_id=run,
            signal=rule.signal,
            value=value,
            threshold=rule.threshold,
            since_ms=watch.since_ms,
            fired_s=max(now - watch.since_ms / 1000.0 - rule.for_s, 0.0),
            policy_version=version,
        )
        return [Emit(resolved, topic=ALERTS.name, run_id=run, new_trace=True)]
