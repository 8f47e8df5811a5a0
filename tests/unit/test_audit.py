"""The audit core: rewards written by the reward processor's own handler re-score to the same bytes; a
changed record, a counterfactual weight and a missing input are each reported as such."""

from __future__ import annotations

import ast

import pytest

from consumers.audit import Audit, Counterfactual, Resolver, apply_overrides, parse_override
from infra.runtime.state import State
from schemas.base import Event
from schemas.errors import UsageError
from schemas.reference import ReferenceExecuted
from schemas.rollout import CodeGenerated, NoiseVerdict, RewardScored, SandboxExecuted
from schemas.task import TaskPublished
from streams.noise.agent import FilterAgent
from streams.noise.config import NoiseConfig
from streams.reward.agent import RewardAgent
from streams.reward.config import RewardConfig
from streams.reward.function import get_reward_function
from tests.hacks.fixtures import (
    FakeLinter,
    execution,
    make_task,
    passing,
    simulated_reference_probe,
    simulated_run,
)
from tests.unit.test_reward_agent import Tasks, generated, incoming

SLOW = "def add(a, b):\n    total = 0\n    for _ in range(1):\n        total = a + b\n    return total\n"
FAST = "def add(a, b):\n    return a + b\n"
WRONG = "def add(a, b):\n    return a - b\n"


def _log(
    task: TaskPublished, config: RewardConfig | None = None, noise: NoiseConfig | None = None
) -> list[Event]:
    """A small run's log as the processors write it: generations, executions, the reference run,
    rewards and verdicts."""
    fn = get_reward_function("code-v3", config, linter=FakeLinter())
    inputs = [ast.literal_eval(c.input) for c in (*task.tests, *task.hidden_tests)]
    n = len(inputs)

    def reference(t: TaskPublished, backend: str) -> SandboxExecuted:
        return passing(t, sample_id=f"{t.task_id}#reference", durations=[0.002] * n)

    rewards, verdicts = (
        RewardAgent(fn, Tasks(task), reference),
        FilterAgent(
            noise or NoiseConfig(),
            fn.compare_options(),
            Tasks(task),
            reference,
            probe_reference=lambda t, backend, seed: simulated_reference_probe(t, seed=seed),
        ),
    )
    samples = {
        "s-fast": (FAST, passing(task, sample_id="s-fast", durations=[0.002] * n)),
        "s-slow": (SLOW, passing(task, sample_id="s-slow", durations=[0.01] * n)),
        "s-wrong": (WRONG, execution([repr(a - b) for a, b in inputs], sample_id="s-wrong")),
    }
    log: list[Event] = [task]
    rstate, fstate = State(), State()
    rstate.own(0)
    fstate.own(0)
    for sid, (code, x) in samples.items():
        gen = generated(code, sid)
        # every first run here answered every case: each earns a probe run
        probe = simulated_run(task, code, sample_id=sid, run_index=1, probe=True)
        log += [gen, x, probe]
        out = [e.event for e in rewards.handle([incoming(gen), incoming(x), incoming(probe)], rstate)]
        log += out
        reward = next(e for e in out if isinstance(e, RewardScored))
        batch = [incoming(gen), incoming(x), incoming(reward), incoming(probe)]
        log += [e.event for e in verdicts.handle(batch, fstate)]
    return log


def _audit(log: list[Event], cf: Counterfactual | None = None) -> Audit:
    audit = Audit(Resolver(linter=FakeLinter()), counterfactual=cf, noise=NoiseConfig())
    audit.fold_all(log)
    return audit


def test_rewards_re_score_to_the_recorded_bytes_and_verdicts_to_the_recorded_decisions() -> None:
    log = _log(make_task())
    # the reference run rewards compare with, and its runs of the probe plan verdicts compare with
    references = [e for e in log if isinstance(e, ReferenceExecuted)]
    assert [r.execution.probe is not None for r in references] == [False, True]
    verdicts = [e for e in log if isinstance(e, NoiseVerdict)]
    assert len(verdicts) == 3
    judged = [v for v in verdicts if v.probe_reference_event_id is not None]
    assert {v.sample_id for v in judged} == {"s-fast", "s-slow"}  # probes judge passing samples only
    assert all(v.probe_reference_event_id == references[1].event_id() for v in judged)
    report = _audit(log).report()
    assert report.ok, report.to_json()
    assert (report.executions, report.rewards, report.verdicts) == (3, 3, 3)
    assert "0 differ" in report.summary()


def test_verdicts_of_an_earlier_filter_version_are_judged_again_by_that_version() -> None:
    # one case, which a constant answers: v2 masks every sample, v3 accepts one its probe vouched for
    one_case = make_task(visible=(("(123, 456)", "579"),), hidden=())
    log = _log(one_case, noise=NoiseConfig(version="v2"))
    recorded = {e.sample_id: e for e in log if isinstance(e, NoiseVerdict)}
    assert {v.filter_version for v in recorded.values()} == {"v2"}
    assert recorded["s-fast"].verdict == "mask"
    # the audit is configured with the default (v3), and judges the v2 verdicts as v2 wrote them
    report = _audit(log).report()
    assert report.ok, report.to_json()
    assert report.verdicts == 3
    now = _log(one_case)
    assert {e.sample_id: e.verdict for e in now if isinstance(e, NoiseVerdict)}["s-fast"] == "accept"
    report = _audit(now).report()
    assert report.ok and report.verdicts == 3


def test_a_verdict_whose_probe_reference_is_not_on_the_log_cannot_be_re_judged() -> None:
    log = [e for e in _log(make_task()) if not (isinstance(e, ReferenceExecuted) and e.execution.probe)]
    report = _audit(log).report()
    assert not report.ok
    assert {u.sample_id for u in report.unverifiable} == {"s-fast", "s-slow"}
    assert all("probe's reference run" in u.reason for u in report.unverifiable)


def test_a_tampered_total_is_reported_next_to_the_re_scored_one() -> None:
    log = _log(make_task())
    honest = next(e for e in log if isinstance(e, RewardScored) and e.sample_id == "s-slow")
    log.append(honest.model_copy(update={"total": honest.total + 0.5}))
    report = _audit(log).report()
    assert not report.ok
    assert [(d.sample_id, d.fields) for d in report.differences] == [("s-slow", ("total",))]
    d = report.differences[0]
    assert d.recorded_total == honest.total + 0.5 and d.rescored_total == honest.total
    assert report.rewards == 4  # the honest record and the tampered one, each checked


def test_a_counterfactual_weight_reports_exactly_the_samples_it_moves() -> None:
    log = _log(make_task())
    # efficiency counts for passing programs only, and is 1 for the fast one: a new weight moves the
    # totals of both passing samples, never the failing one
    report = _audit(log, Counterfactual(overrides={"weights.efficiency": 0.3})).report()
    assert not report.differences
    moved = {d.sample_id: d for d in report.counterfactual_differences}
    assert set(moved) == {"s-fast", "s-slow"}
    assert moved["s-fast"].rescored_total == pytest.approx(moved["s-fast"].recorded_total + 0.2)
    assert moved["s-fast"].rescored_version.startswith("code-v3+")
    assert moved["s-fast"].recorded_verdict == moved["s-fast"].rescored_verdict == "accept"
    # a weight whose component is zero everywhere moves nothing
    quiet = _audit(log, Counterfactual(overrides={"weights.security": 0.5})).report()
    assert quiet.counterfactual_differences == [] and quiet.ok


def test_rewards_under_a_non_default_configuration_are_found_from_their_recorded_weights() -> None:
    config = RewardConfig.model_validate({"weights": {"quality": 0.3}})
    report = _audit(_log(make_task(), config)).report()
    assert report.ok and report.rewards == 3
    # a configuration that cannot be reconstructed is said so, not guessed
    other = RewardConfig(partial_credit=0.5)
    unknown = _audit(_log(make_task(), other)).report()
    assert not unknown.ok and len(unknown.unverifiable) == 3
    assert "neither the configured one" in unknown.unverifiable[0].reason


def test_missing_inputs_make_a_reward_unverifiable_and_unscored_executions_are_counted() -> None:
    log = _log(make_task())
    no_ref = [e for e in log if not isinstance(e, ReferenceExecuted)]
    report = _audit(no_ref).report()
    assert {u.reason.split(" ")[0] for u in report.unverifiable} == {"reference"}
    no_code = [e for e in log if not (isinstance(e, CodeGenerated) and e.sample_id == "s-fast")]
    assert [u.sample_id for u in _audit(no_code).report().unverifiable] == ["s-fast"]
    pending = [*log, passing(make_task(), sample_id="s-new")]
    r = _audit(pending).report()
    assert r.unscored == ["s-new"] and r.ok


def test_the_selection_limits_the_audit_to_the_window() -> None:
    log = _log(make_task())
    report = _audit(log).report(lambda x: x.sample_id == "s-wrong")
    assert (report.executions, report.rewards) == (1, 1)


def test_overrides_are_parsed_and_validated_like_settings() -> None:
    assert parse_override("reward.weights.quality=0.5") == ("weights.quality", 0.5)
    assert parse_override("compare.int_float=strict") == ("compare.int_float", "strict")
    changed = apply_overrides(RewardConfig(), {"weights.quality": 0.5, "partial_credit": 0.2})
    assert changed.weights.quality == 0.5 and changed.partial_credit == 0.2
    with pytest.raises(UsageError, match="no such reward setting"):
        apply_overrides(RewardConfig(), {"weights.speed": 1})
    with pytest.raises(UsageError, match="weights.security"):  # the config's own rule still holds
        apply_overrides(RewardConfig(), {"weights.security": 2.0})
    with pytest.raises(UsageError, match="KEY=VALUE"):
        parse_override("weights.quality")
