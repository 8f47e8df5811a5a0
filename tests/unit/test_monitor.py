"""The monitor processor on the in-memory runtime, with the rules rlstream ships: faults injected as the
events they would put on the log (a burst of dead letters, a failing sandbox backend, collapsing rewards,
generators left behind, a stalled learner) raise their alert once the condition has held for the rule's
``for_s``, and resolve it after recovery; the alerts are events on rl.alerts with their evidence."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from consumers.alerts import AlertHistory
from infra.runtime.memory import MemoryLog, MemoryRuntime
from infra.runtime.port import ProcessorStats, dead_letter
from infra.runtime.sides import MemorySideInputs
from infra.telemetry.metrics import serve_metrics
from rlstream.runner import Progress
from rlstream.settings import Settings
from rlstream.workers import stream_processor
from schemas.alert import AlertRaised, AlertResolved
from schemas.base import Event
from schemas.codec import encode
from schemas.envelope import Envelope
from schemas.errors import InputError
from schemas.policy import PolicyLoaded, PolicyPublished
from schemas.rollout import CaseResult, RewardScored, SandboxExecuted
from schemas.topics import ALERTS, DLQ, EXECUTIONS, POLICY, POLICY_LOADED, REWARDS
from streams.monitor.promrules import prometheus_rules
from streams.monitor.rules import DEFAULT_RULES, load_rules
from streams.monitor.signals import Signals
from tests.e2e.conftest import ROOT, scrape

RUN = "run-mon"
T0 = 2_000_000.0


class Monitor:
    def __init__(self, lag: list[int]) -> None:
        self.log = MemoryLog()
        settings = Settings(run_id=RUN)
        self.built = stream_processor("monitor", settings, MemorySideInputs(self.log, lambda fresh: lag[0]))
        self.rt = MemoryRuntime(self.log, [self.built.processor], run_id=RUN, start=T0)
        self.seq = 0

    def put(self, topic: str, event: Event, run: str | None = RUN) -> None:
        self.log.publish(
            topic,
            encode(event, Envelope.for_event(event, source="test", run_id=run)),
            timestamp_ms=int(self.rt.clock * 1000),
        )

    def at(self, seconds: float) -> list[AlertRaised | AlertResolved]:
        """Move to ``T0 + seconds``, let the monitor read and evaluate; the alerts it wrote so far."""
        self.rt.clock = T0 + seconds
        self.rt.step("monitor")
        self.rt.step("monitor")
        return [e for _, e in self.log.events(ALERTS.name) if isinstance(e, AlertRaised | AlertResolved)]

    def reward(self, total: float) -> None:
        self.seq += 1
        self.put(
            REWARDS.name,
            RewardScored(
                sample_id=f"{RUN}/t/0/{self.seq}",
                group_id=f"{RUN}/t/0",
                task_id="t",
                execution_event_id="e",
                reward_fn="code",
                reward_version="v3",
                components={},
                weights={},
                total=total,
                passed=0,
                total_cases=1,
            ),
        )

    def execution(self, infra_error: str | None, duration_s: float = 0.05) -> None:
        self.seq += 1
        ok = (CaseResult(index=0, status="ok", result_repr="1"),)
        self.put(
            EXECUTIONS.name,
            SandboxExecuted(
                sample_id=f"{RUN}/t/0/{self.seq}",
                group_id=f"{RUN}/t/0",
                task_id="t",
                backend="wasm",
                cases=() if infra_error else ok,
                infra_error=infra_error,
                duration_s=duration_s,
            ),
        )


@pytest.fixture
def monitor() -> Iterator[tuple[Monitor, list[int]]]:
    lag = [0]
    m = Monitor(lag)
    try:
        yield m, lag
    finally:
        for close in m.built.closers:
            close()


def _life(alerts: list[AlertRaised | AlertResolved], rule: str) -> list[str]:
    return [type(a).__name__ for a in alerts if a.rule == rule]


def test_starved_sandbox_workers_raise_sandbox_slow_from_the_95th_percentile_not_the_mean(
    monitor: tuple[Monitor, list[int]],
) -> None:
    m, _ = monitor
    for second in range(0, 240, 10):  # 1 run in 10 takes 8 s: the mean stays under 1 s, p95 does not
        for i in range(10):
            m.execution(None, duration_s=8.0 if i == 0 else 0.05)
        # an infrastructure failure's run time is not the program's
        m.execution("runtime missing", duration_s=30.0)
        m.at(second)
    signals = Signals()
    for i in range(20):
        signals.observe(_slow_run(8.0 if i < 2 else 0.05), RUN, T0 + 1)
    assert signals.value("sandbox_p95_s", RUN, T0 + 2, 60) == 8.0
    assert signals.value("sandbox_p95_s", RUN, T0 + 100, 60) is None  # nothing in the window
    assert _life(m.at(240), "sandbox_slow") == ["AlertRaised"]
    (raised,) = [a for a in m.at(240) if a.rule == "sandbox_slow"]
    assert isinstance(raised, AlertRaised) and raised.value == 8.0 and raised.threshold == 5
    for second in range(250, 600, 10):  # the workers catch up: every run is quick again
        for _ in range(10):
            m.execution(None)
        m.at(second)
    assert _life(m.at(600), "sandbox_slow") == ["AlertRaised", "AlertResolved"]


def _slow_run(duration_s: float) -> SandboxExecuted:
    ok = (CaseResult(index=0, status="ok", result_repr="1"),)
    return SandboxExecuted(
        sample_id=f"{RUN}/t/0/x",
        group_id=f"{RUN}/t/0",
        task_id="t",
        backend="wasm",
        cases=ok,
        duration_s=duration_s,
    )


def test_a_poison_burst_raises_dead_letter_growth_after_its_for_and_resolves_once_the_window_empties(
    monitor: tuple[Monitor, list[int]],
) -> None:
    m, _ = monitor
    for i in range(5):  # a burst of poison records, each dead-lettered
        letter = dead_letter(
            "sandbox",
            "does not decode",
            topic="rl.generations",
            partition=0,
            offset=i,
            key=b"k",
            value=b"x",
            headers={},
        )
        m.put(DLQ.name, letter, run=None)
    assert m.at(1) == []  # the condition holds; its for (30 s) has not passed
    assert m.at(20) == []
    (raised,) = m.at(32)
    assert isinstance(raised, AlertRaised) and raised.rule == "dead_letter_growth"
    assert (raised.value, raised.threshold, raised.op, raised.window_s, raised.for_s) == (
        5.0,
        3.0,
        ">",
        300,
        30,
    )
    assert raised.run_id is None and raised.since_ms == int((T0 + 1) * 1000) and raised.rules_version == 2
    assert m.at(200)[1:] == []  # still firing: nothing new
    _, resolved = m.at(302)  # the burst left the 300 s window
    assert isinstance(resolved, AlertResolved) and resolved.since_ms == raised.since_ms
    assert resolved.value == 0.0 and resolved.fired_s == pytest.approx(302 - 1 - 30)

    # what `rlstream alerts` and the run's live line show of it
    history, progress = AlertHistory(RUN), Progress(RUN, expected_groups=1)
    for i, (eid, event) in enumerate(m.log.events(ALERTS.name)):
        history.fold(eid, datetime.fromtimestamp(T0 + 32 + 270 * i, UTC), event)
        progress.fold(eid, event)
        if i == 0:
            assert "| ALERTS dead_letter_growth" in progress.line()
    (life,) = history.lives
    assert life.state == "resolved" and life.as_dict()["fired_s"] == pytest.approx(271)
    assert "dead_letter_growth" in life.line() and "dead_letters 5 > 3 over 300s for 30s" in life.line()
    assert "ALERTS" not in progress.line() and progress.summary()["alerts_raised"] == 1


def test_sandbox_infra_errors_and_a_reward_collapse_fire_and_resolve_per_run(
    monitor: tuple[Monitor, list[int]],
) -> None:
    m, _ = monitor
    for s in range(0, 130, 10):  # the sandbox backend fails every run and the rewards are all 0
        m.rt.clock = T0 + s
        m.execution("the wasm runtime is missing")
        m.reward(0.0)
        m.at(s + 1)
    alerts = m.at(131)
    assert _life(alerts, "sandbox_infra_errors") == ["AlertRaised"]
    assert _life(alerts, "reward_collapse") == ["AlertRaised"]
    collapse = next(a for a in alerts if a.rule == "reward_collapse")
    assert isinstance(collapse, AlertRaised) and collapse.run_id == RUN and collapse.value == 0.0
    for s in range(131, 400, 10):  # the backend is back and the programs pass again
        m.rt.clock = T0 + s
        m.execution(None)
        m.reward(1.0)
        m.at(s + 1)
    alerts = m.at(400)
    assert _life(alerts, "sandbox_infra_errors") == ["AlertRaised", "AlertResolved"]
    assert _life(alerts, "reward_collapse") == ["AlertRaised", "AlertResolved"]
    assert not any(a.rule == "reward_explosion" for a in alerts)


def test_generators_left_behind_and_a_stalled_learner(
    monitor: tuple[Monitor, list[int]], tmp_path: Path
) -> None:
    m, lag = monitor

    def publish(version: int) -> None:
        digest = "0" * 64
        m.put(
            POLICY.name,
            PolicyPublished(
                run_id=RUN, policy_version=version, step=version, checkpoint_uri="file:///x", sha256=digest
            ),
        )

    publish(1)
    m.put(POLICY_LOADED.name, PolicyLoaded(run_id=RUN, policy_version=1, published_version=1))
    publish(4)  # the generators stay on v1
    lag[0] = 5  # and experiences wait for a learner that publishes nothing more
    assert m.at(1) == []
    alerts = m.at(125)
    assert _life(alerts, "generators_behind") == ["AlertRaised"]
    behind = alerts[0]
    assert isinstance(behind, AlertRaised) and behind.value == 3.0 and behind.policy_version == 4
    m.put(POLICY_LOADED.name, PolicyLoaded(run_id=RUN, policy_version=4, published_version=4))
    alerts = m.at(130)
    assert _life(alerts, "generators_behind") == ["AlertRaised", "AlertResolved"]
    # 900 s without a new version while the learner's lag stays, then the rule's for (60 s)
    assert _life(m.at(905), "learner_stalled") == []
    assert _life(m.at(966), "learner_stalled") == ["AlertRaised"]
    publish(5)
    assert _life(m.at(971), "learner_stalled") == ["AlertRaised", "AlertResolved"]


def test_every_alert_event_id_is_written_once_when_the_monitor_restarts(
    monitor: tuple[Monitor, list[int]],
) -> None:
    m, _ = monitor
    for i in range(5):
        m.put(
            DLQ.name,
            dead_letter("reward", "x", topic="t", partition=0, offset=i, key=None, value=b"", headers={}),
        )
    m.at(1)
    m.rt.restart("monitor")  # the firing state is restored from the changelog; the windows are not
    m.at(40)
    ids = [eid for eid, _ in m.log.events(ALERTS.name)]
    assert len(ids) == len(set(ids))


def test_the_shipped_rules_load_and_a_bad_rule_is_named(tmp_path: Path) -> None:
    rules = load_rules(DEFAULT_RULES)
    assert rules.version == 2
    signals = {r.signal for r in rules.rules}
    for rule in rules.rules:  # every signal the rules name can be measured
        Signals().value(rule.signal, RUN, T0, rule.window_s)
    assert {"reward_mean", "mask_rate", "flaky_tasks", "sandbox_infra_error_rate", "dead_letters"} <= signals
    bad = tmp_path / "rules.yaml"
    bad.write_text(
        "version: 1\nrules:\n  - name: too_hot\n    signal: reward_mean\n    window_s: 0\n    op: '>'\n"
        "    threshold: 1\n"
    )
    with pytest.raises(InputError, match="rule 'too_hot', field window_s"):
        load_rules(bad)


def test_the_rules_exported_for_prometheus_are_current_and_name_only_metrics_the_workers_serve() -> None:
    rules = load_rules(DEFAULT_RULES)
    exported = prometheus_rules(rules)
    committed = yaml.safe_load((ROOT / "infra" / "deploy" / "prometheus" / "rlstream-rules.yaml").read_text())
    assert committed == exported, (
        "regenerate: rlstream alerts --prometheus-rules > infra/deploy/prometheus/rlstream-rules.yaml"
    )
    (group,) = exported["groups"]
    assert [r["alert"] for r in group["rules"]] == [r.name for r in rules.rules]
    assert all(
        r["for"] == f"{round(rule.for_s)}s" for r, rule in zip(group["rules"], rules.rules, strict=True)
    )
    # a worker's page with every metric family filled in: each metric a rule names is on it
    stats = ProcessorStats(lag={"rl.experiences": 1})
    letter = dead_letter("x", "e", topic="t", partition=0, offset=0, key=None, value=b"", headers={})
    loaded = PolicyLoaded(run_id=RUN, policy_version=1, published_version=1)
    published = PolicyPublished(
        run_id=RUN, policy_version=1, step=1, checkpoint_uri="file:///x", sha256="0" * 64
    )
    stats.committed(
        [], [(DLQ.name, letter, None), (POLICY_LOADED.name, loaded, RUN), (POLICY.name, published, RUN)]
    )
    m = Monitor([0])
    m.execution("down")
    m.reward(0.5)
    for _, event in m.log.events(EXECUTIONS.name) + m.log.events(REWARDS.name):
        stats.tally.observe(event, RUN)
    stats.tally.verdicts[(RUN, "mask")] += 1
    stats.tally.reasons[(RUN, "noise.flaky")] += 1
    server = serve_metrics([("learner", lambda: stats)], host="127.0.0.1", port=0)
    try:
        served = {name for name, _ in scrape(server.url)}
    finally:
        server.close()
    named = {n for r in group["rules"] for n in re.findall(r"\brlstream_[a-z_]+", r["expr"])}
    assert named and named <= served, f"not served: {sorted(named - served)}"
