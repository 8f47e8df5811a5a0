"""The versioned code reward: registry, ordering guarantees and determinism."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from schemas.errors import UsageError
from schemas.rollout import SandboxExecuted
from schemas.task import TaskPublished
from streams.reward.config import RewardConfig, RewardWeights
from streams.reward.function import RewardFunction, available, get_reward_function
from streams.reward.lint import LintReport
from tests.hacks.fixtures import FakeLinter, execution, make_task, passing

GOOD = "def add(a, b):\n    return a + b\n"


def fn(config: RewardConfig | None = None, lint: tuple[str, ...] = ()) -> RewardFunction:
    return get_reward_function("code-v1", config, linter=FakeLinter(lint))


def test_registered_by_name_and_version() -> None:
    assert "code-v1" in available()
    f = fn()
    assert (f.name, f.version, f.spec) == ("code", "v1", "code-v1")
    with pytest.raises(UsageError):
        get_reward_function("code-v999")


def test_passing_program_scores_correctness_plus_bonus() -> None:
    task = make_task()
    ref = passing(task, sample_id="ref")
    s = fn().score(task, GOOD, passing(task), ref)
    assert s.passed
    assert s.components["correctness"] == 1.0
    assert s.components["quality"] == 1.0  # no lint findings, simple, same size as the reference
    assert s.components["efficiency"] == 1.0  # as fast as the reference
    assert s.total == pytest.approx(1.2)


def test_failing_program_gets_no_bonus_and_is_not_positive() -> None:
    task = make_task()
    s = fn().score(task, GOOD, execution(["3", "4", "15", "1"]), passing(task, sample_id="ref"))
    assert not s.passed
    assert s.components["quality"] == 0.0 and s.components["efficiency"] == 0.0
    assert s.total == 0.0


def test_security_findings_lower_the_reward() -> None:
    task = make_task()
    code = "import subprocess\ndef add(a, b):\n    return eval(f'{a}+{b}')\n"
    s = fn().score(task, code, passing(task))
    assert s.components["security"] > 0
    assert "security_findings" in s.details
    assert s.total < fn().score(task, GOOD, passing(task)).total


def test_reference_uses_are_not_security_findings() -> None:
    ref = "def add(a, b):\n    return eval(f'{a}+{b}')\n"
    task = make_task(reference=ref)
    assert fn().score(task, ref, passing(task)).components["security"] == 0.0


def test_infra_failure_is_never_negative() -> None:
    task = make_task()
    s = fn().score(task, "import os\nos.system('x')\n", passing(task, infra_error="sandbox died"))
    assert s.total == 0.0


def test_efficiency_needs_the_same_backend() -> None:
    task = make_task()
    slow = passing(task, durations=[0.1] * 4)
    fast_ref = passing(task, sample_id="ref", durations=[0.01] * 4)
    assert fn().score(task, GOOD, slow, fast_ref).components["efficiency"] < 0.2
    other = fast_ref.model_copy(update={"backend": "container"})
    s = fn().score(task, GOOD, slow, other)
    assert s.components["efficiency"] == 0.0
    assert "reference ran in container" in s.details["efficiency"]


def test_efficiency_uses_the_hosts_active_time_not_the_per_case_durations() -> None:
    task = make_task()
    # the program's cases look instant, but the host saw 0.5 s from its start to its last result
    # (module load, work between cases): that is what counts
    slow = passing(task, durations=[0.0] * 4, active_s=0.5)
    ref = passing(task, sample_id="ref", durations=[0.01] * 4, active_s=0.05)
    assert fn().score(task, GOOD, slow, ref).components["efficiency"] < 0.2
    fast = passing(task, durations=[0.2] * 4, active_s=0.05)
    assert fn().score(task, GOOD, fast, ref).components["efficiency"] == 1.0
    # a run written before the host timed it (v1, upcast: no active_s) is scored as it always was
    old = passing(task, durations=[0.1] * 4)
    assert fn().score(task, GOOD, old, ref).components["efficiency"] < 0.2


def test_partial_credit_is_configurable() -> None:
    task = make_task()
    half = execution(["3", "4", "0", "1"])
    assert fn().score(task, GOOD, half).components["correctness"] == 0.0
    cfg = RewardConfig(partial_credit=0.5)
    assert fn(cfg).score(task, GOOD, half).components["correctness"] == pytest.approx(0.25)


def test_weights_that_would_rank_a_failing_program_first_are_refused() -> None:
    with pytest.raises(ValidationError):
        RewardConfig(weights=RewardWeights(correctness=1.0, security=0.8), partial_credit=0.5)


def test_rescoring_gives_the_same_event_id_and_bytes() -> None:
    task = make_task()
    x = passing(task)
    ref = passing(task, sample_id="ref")
    a = fn(lint=("F401",)).scored_event(task, GOOD, x, ref)
    b = fn(lint=("F401",)).scored_event(task, GOOD, x.model_copy(), ref)
    assert a.event_id() == b.event_id()
    # the body written to the log (schemas.codec) is the model's JSON
    assert a.model_dump_json().encode() == b.model_dump_json().encode()
    assert a.execution_event_id == x.event_id()
    assert (a.reward_fn, a.reward_version) == ("code", "v1")


# ---- properties: quality and efficiency never lift a failing program


outcome = st.sampled_from(["pass", "wrong", "error"])
weights = st.builds(
    RewardWeights,
    correctness=st.floats(0.1, 10),
    quality=st.floats(0, 10),
    efficiency=st.floats(0, 10),
    security=st.floats(0, 10),
)


def _run(task: TaskPublished, outcomes: list[str], durations: list[float]) -> SandboxExecuted:
    expected = [c.output for c in (*task.tests, *task.hidden_tests)]
    reprs = [
        e if o == "pass" else ("99" if o == "wrong" else None)
        for e, o in zip(expected, outcomes, strict=True)
    ]
    return execution(reprs, durations=durations)


@settings(max_examples=150, deadline=None)
@given(
    w=weights,
    partial=st.floats(0, 0.9),
    fail_outcomes=st.lists(outcome, min_size=4, max_size=4).filter(lambda v: v != ["pass"] * 4),
    lint_a=st.lists(st.sampled_from(["F401", "B006", "SIM108"]), max_size=12),
    lint_b=st.lists(st.sampled_from(["F401", "B006", "SIM108"]), max_size=12),
    dur_a=st.lists(st.floats(0, 5), min_size=4, max_size=4),
    dur_b=st.lists(st.floats(0, 5), min_size=4, max_size=4),
    sec_fail=st.booleans(),
    sec_pass=st.booleans(),
)
def test_failing_never_outscores_passing_and_bonus_never_makes_failing_positive(
    w, partial, fail_outcomes, lint_a, lint_b, dur_a, dur_b, sec_fail, sec_pass
) -> None:  # type: ignore[no-untyped-def]
    task = make_task()
    assume(w.security < w.correctness * (1 - partial))  # what RewardConfig accepts
    cfg = RewardConfig(weights=w, partial_credit=partial)
    ref = passing(task, sample_id="ref")
    risky = "import subprocess\nimport socket\nimport ctypes\ndef add(a, b):\n    return a + b\n"
    failing_code = risky if sec_fail else GOOD
    passing_code = risky if sec_pass else GOOD
    failing = fn(cfg, tuple(lint_a)).score(task, failing_code, _run(task, fail_outcomes, dur_a), ref)
    good = fn(cfg, tuple(lint_b)).score(task, passing_code, _run(task, ["pass"] * 4, dur_b), ref)
    assert good.total > failing.total
    # the failing program's reward is what correctness and security alone give it
    alone = w.correctness * failing.components["correctness"] - w.security * failing.components["security"]
    assert failing.total == pytest.approx(alone, abs=1e-9)
    if partial == 0.0:
        assert failing.total <= 0.0
    # and no lint or runtime changes it
    other = fn(cfg, ()).score(task, failing_code, _run(task, fail_outcomes, [0.0] * 4), ref)
    assert other.total == failing.total


def test_a_non_default_configuration_is_recorded_in_the_version() -> None:
    task = make_task()
    x = passing(task)
    default = fn().scored_event(task, GOOD, x)
    tuned = fn(RewardConfig(weights=RewardWeights(quality=0.3))).scored_event(task, GOOD, x)
    assert default.reward_version == "v1"
    assert tuned.reward_version.startswith("v1+") and len(tuned.reward_version) == 11
    assert tuned.event_id() != default.event_id()
    again = fn(RewardConfig(weights=RewardWeights(quality=0.3))).scored_event(task, GOOD, x)
    assert again.reward_version == tuned.reward_version
    # where the linter lives does not change how it scores
    assert fn(RewardConfig(ruff_path="/usr/bin/ruff")).scored_event(task, GOOD, x).reward_version == "v1"


class _PerSourceLinter:
    def __init__(self, findings: dict[str, tuple[str, ...]]) -> None:
        self.findings = findings

    def __call__(self, code: str) -> LintReport:
        return LintReport(self.findings.get(code, ()), "fake 1.0")


def test_lint_findings_the_reference_shares_do_not_count() -> None:
    ref = "from typing import List\ndef add(a, b):\n    return a + b\n"
    task = make_task(reference=ref)
    code = "from typing import List\ndef add(a, b):\n    return b + a\n"
    linter = _PerSourceLinter({ref: ("F401",), code: ("F401", "SIM108")})
    s = get_reward_function("code-v1", linter=linter).score(task, code, passing(task))
    assert s.details["lint_findings"] == "SIM108"
    clean = _PerSourceLinter({ref: ("F401",), code: ("F401",)})
    assert (
        get_reward_function("code-v1", linter=clean).score(task, code, passing(task)).components["quality"]
        == 1.0
    )


# ------------------------------------------------------------------------------------------------ code-v3


def v3(config: RewardConfig | None = None) -> RewardFunction:
    return get_reward_function("code-v3", config, linter=FakeLinter())


def v2(config: RewardConfig | None = None) -> RewardFunction:
    return get_reward_function("code-v2", config, linter=FakeLinter())


def test_code_v3_is_registered_next_to_v1_and_v2_and_is_the_default() -> None:
    from rlstream.settings import Settings

    assert {"code-v1", "code-v2", "code-v3"} <= set(available())
    assert (v3().version, v3().version_label) == ("v3", "v3")
    # each version's own comparison rule is its default, not a configuration
    assert (fn().version_label, v2().version_label) == ("v1", "v2")
    # the default is the newest one-turn version's to assert (test_reward_v7.py)
    assert Settings().reward_function in available()


def test_older_versions_keep_the_fingerprints_they_recorded() -> None:
    # what code-v1 and code-v2 wrote for a non-default configuration before the comparison could be
    # left to the function: the same configuration must still find the same label
    config = RewardConfig.model_validate({"weights": {"quality": 0.3}})
    assert fn(config).version_label == "v1+a6ee59a9"
    assert v2(config).version_label == "v2+a04a2c99"
    assert v3(config).version_label.startswith("v3+")


def test_code_v3_compares_an_expected_int_exactly_where_v1_and_v2_tolerated_a_float() -> None:
    big = 10**12
    task = make_task(visible=[("(1, 2)", str(big))], hidden=[("(2, 2)", "4")])
    near = execution([repr(float(big + 1)), "4"])
    assert fn().score(task, GOOD, near).passed  # code-v1: within rel 1e-9, a pass
    assert v2().score(task, GOOD, near).passed  # code-v2 too (it is code-v1 plus similarity)
    assert not v3().score(task, GOOD, near).passed
    assert v3().score(task, GOOD, execution([repr(float(big)), "4"])).passed  # exactly that integer


def test_a_value_too_large_for_a_float_is_a_failed_case_not_a_crash() -> None:
    task = make_task(visible=[("(1, 2)", "1e+300")], hidden=[("(2, 2)", "4")])
    for f in (fn(), v2(), v3()):
        s = f.score(task, GOOD, execution([repr(10**400), "4"]))
        assert not s.passed and s.correctness.grades[0].outcome == "wrong"


@pytest.mark.parametrize(
    "code",
    [
        "import os\ndef add(a, b):\n    return a + b if os.path.splitext('x.py')[1] else 0\n",
        "import sys, traceback\ndef add(a, b):\n    try:\n        return a + b\n    except Exception:\n"
        "        traceback.print_exc()\n        print(sys.exc_info())\n        raise\n",
        "import sys\ndef add(a, b):\n    return a + b\ndef main():\n    return 0\n"
        "if __name__ == '__main__':\n    sys.exit(main())\n",
    ],
)
def test_code_v3_does_not_punish_benign_standard_library_use(code: str) -> None:
    task = make_task()
    s = v3().score(task, code, passing(task))
    assert s.components["security"] == 0.0, s.details
    assert fn().score(task, code, passing(task)).components["security"] > 0  # v1 did, and still does


def test_code_v3_counts_each_dangerous_call_once() -> None:
    task = make_task()
    code = (
        "import subprocess\ndef add(a, b):\n    subprocess.run(['true'])\n    subprocess.run(['true'])\n"
        "    return eval(f'{a}+{b}')\n"
    )
    s = v3().score(task, code, passing(task))
    assert s.details["security_findings"].count("subprocess.run") == 1
    assert 0 < s.components["security"] < 1
