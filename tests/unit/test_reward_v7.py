"""``code-v7`` and ``code-v8``: the efficiency component read on the guest's own time, not the host's clock.

Through code-v6 efficiency compared the program's and the reference's runs on the host's wall clock from
the guest's start to its last result (``active_s``), which the machine's load stretches: one program's
efficiency moved 0.52..1.0 across runs minutes apart. From code-v7 (one turn) and code-v8 (episodes) it
compares ``active_cpu_s``, the same span as the CPU the guest's thread spent plus the sleeps the guest
asked for, where both runs carry it, and wall time otherwise.

The runs here are real WASM runs; the machine's load is written into their wall times, since a test
cannot order the load it needs.
"""

from __future__ import annotations

import pytest

from rlstream.settings import Settings
from schemas.rollout import SandboxExecuted
from schemas.task import TaskPublished
from streams.episode.config import EpisodeConfig
from streams.reward.config import RewardConfig
from streams.reward.evaluate import run_program
from streams.reward.function import RewardFunction, get_reward_function
from streams.sandbox import Sandbox, SandboxConfig
from tests.hacks.fixtures import FakeLinter, make_task, passing
from tests.hacks.redteam.corpus import PROGRAMS
from tests.hacks.redteam.tasks import all_tasks

DEPTH = all_tasks()["redteam/depth"]
MAX35 = all_tasks()["HumanEval/35"]
#: correct, but loops 3 million times at import
IMPORT_SPIN = next(p for p in PROGRAMS if p.name == "a16_import_spin_depth").code
#: correct, but sleeps 0.5 s at import
IMPORT_SLEEP = next(p for p in PROGRAMS if p.name == "efficiency_sleep_in_import_35").code
#: what the machine's load added to the loaded copy's wall times
LOAD_S = 0.25


def fn(spec: str) -> RewardFunction:
    return get_reward_function(spec, RewardConfig(), linter=FakeLinter())


def efficiency(
    spec: str, task: TaskPublished, code: str, run: SandboxExecuted, ref: SandboxExecuted
) -> float:
    return fn(spec).score(task, code, run, ref).components["efficiency"]


def loaded(run: SandboxExecuted, seconds: float = LOAD_S) -> SandboxExecuted:
    """``run`` as a loaded machine would have timed it on the wall clock: every call and the load
    waited for a core; the guest's own time is what it was."""
    assert run.load_s is not None and run.active_s is not None
    n = max(1, len(run.cases))
    cases = tuple(c.model_copy(update={"duration_s": c.duration_s + seconds / n}) for c in run.cases)
    return run.model_copy(
        update={
            "cases": cases,
            "load_s": run.load_s + seconds / 2,
            "active_s": run.active_s + seconds,
            "duration_s": run.duration_s + seconds,
        }
    )


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(SandboxConfig())


def run(sandbox: Sandbox, task: TaskPublished, code: str, sample: str = "s") -> SandboxExecuted:
    x = run_program(sandbox, task, code, sample_id=sample, group_id="g", backend="wasm")
    assert x.backend == "wasm" and not x.infra_error and all(c.status == "ok" for c in x.cases), x
    return x


@pytest.fixture(scope="module")
def depth_runs(sandbox: Sandbox) -> tuple[SandboxExecuted, SandboxExecuted]:
    assert DEPTH.reference is not None
    program = "def depth(n: int) -> int:\n    return sum(range(n + 1))\n"
    return run(sandbox, DEPTH, program), run(sandbox, DEPTH, DEPTH.reference, "ref")


def test_the_defaults_are_code_v7_for_one_turn_and_code_v8_for_episodes() -> None:
    assert Settings().reward_function == "code-v7"
    assert EpisodeConfig().reward_function == "code-v8"
    assert fn("code-v7").version_label == "v7" and fn("code-v8").version_label == "v8"
    # each keeps its base's comparison
    assert fn("code-v7").compare_options() == fn("code-v5").compare_options()
    assert fn("code-v8").compare_options() == fn("code-v6").compare_options()


def test_a_wasm_run_carries_its_load_and_active_span_on_the_guests_own_time(
    depth_runs: tuple[SandboxExecuted, SandboxExecuted],
) -> None:
    for x in depth_runs:
        assert x.load_s is not None and x.active_s is not None
        assert x.load_cpu_s is not None and x.active_cpu_s is not None
        assert 0 < x.load_cpu_s <= x.active_cpu_s
        # one thread's CPU over a span is never more than the span (the reads are a few us apart)
        assert x.active_cpu_s <= x.active_s + 0.002
        assert '"active_cpu_s"' in x.model_dump_json()


def test_efficiency_stays_put_when_load_is_written_into_the_wall_times(
    depth_runs: tuple[SandboxExecuted, SandboxExecuted],
) -> None:
    program, ref = depth_runs
    code = "def depth(n: int) -> int:\n    return sum(range(n + 1))\n"
    for spec, base in (("code-v7", "code-v5"), ("code-v8", "code-v6")):
        as_run = efficiency(spec, DEPTH, code, program, ref)
        # the program's run waited for a core: the wall clock reads it slower, its own time does not
        wall = efficiency(base, DEPTH, code, program, ref)
        assert efficiency(base, DEPTH, code, loaded(program), ref) < wall
        assert efficiency(spec, DEPTH, code, loaded(program), ref) == as_run
        # the reference's run waited: the wall clock flatters the program, its own time does not
        assert efficiency(spec, DEPTH, code, program, loaded(ref)) == as_run
        assert efficiency(base, DEPTH, code, program, loaded(ref)) == 1.0
    details = fn("code-v7").score(DEPTH, code, loaded(program), ref).details
    assert details["runtime_clock"] == "cpu"


def test_work_at_import_counts_on_the_guests_own_time(
    sandbox: Sandbox, depth_runs: tuple[SandboxExecuted, SandboxExecuted]
) -> None:
    _, ref = depth_runs
    spin = run(sandbox, DEPTH, IMPORT_SPIN)
    assert spin.load_cpu_s is not None and ref.load_cpu_s is not None
    assert spin.load_cpu_s > 10 * ref.load_cpu_s
    assert efficiency("code-v7", DEPTH, IMPORT_SPIN, spin, ref) < 0.5
    # and stays low when the reference's run is the one that waited for a core
    assert efficiency("code-v7", DEPTH, IMPORT_SPIN, spin, loaded(ref)) < 0.5


def test_a_sleep_the_program_asked_for_counts_as_asked(sandbox: Sandbox) -> None:
    assert MAX35.reference is not None
    ref = run(sandbox, MAX35, MAX35.reference, "ref")
    slept = run(sandbox, MAX35, IMPORT_SLEEP)
    # a sleep uses no CPU, yet costs the caller its length: it is in the guest's own time as asked
    assert slept.load_cpu_s is not None and 0.45 <= slept.load_cpu_s < 0.5 + 0.2
    assert efficiency("code-v7", MAX35, IMPORT_SLEEP, slept, ref) < 0.5


def test_a_run_without_its_own_time_is_read_on_wall_time_as_before(
    depth_runs: tuple[SandboxExecuted, SandboxExecuted],
) -> None:
    program, ref = depth_runs
    code = "def depth(n: int) -> int:\n    return sum(range(n + 1))\n"
    # a jailed run (another process) or one written before: both sides read on the host's clock
    for old in (ref.model_copy(update={"active_cpu_s": None}), ref):
        bare = program.model_copy(update={"active_cpu_s": None, "load_cpu_s": None})
        v7 = fn("code-v7").score(DEPTH, code, bare, old)
        assert v7.components["efficiency"] == efficiency("code-v5", DEPTH, code, bare, old)
        assert v7.details["runtime_clock"] == "wall"
        assert '"active_cpu_s"' not in bare.model_dump_json()


def test_older_versions_score_exactly_as_before_on_runs_that_carry_their_own_time(
    depth_runs: tuple[SandboxExecuted, SandboxExecuted],
) -> None:
    program, ref = depth_runs
    code = "def depth(n: int) -> int:\n    return sum(range(n + 1))\n"
    bare_p = program.model_copy(update={"active_cpu_s": None, "load_cpu_s": None})
    bare_r = ref.model_copy(update={"active_cpu_s": None, "load_cpu_s": None})
    for spec in ("code-v1", "code-v3", "code-v5", "code-v6"):
        with_own = fn(spec).scored_event(DEPTH, code, program, ref)
        without = fn(spec).scored_event(DEPTH, code, bare_p, bare_r)
        assert with_own.model_dump_json() == without.model_dump_json()
        assert "runtime_clock" not in with_own.details


def test_code_v8_keeps_code_v6s_turn_cost() -> None:
    task = make_task()
    x = passing(task, turn=2, max_turns=3, active_s=0.05, active_cpu_s=0.01)
    ref = passing(task, sample_id="ref", active_s=0.05, active_cpu_s=0.01)
    code = "def add(a, b):\n    return a + b\n"
    v6, v8 = fn("code-v6").score(task, code, x, ref), fn("code-v8").score(task, code, x, ref)
    assert v8.components["turns"] == v6.components["turns"] == 2.0
    assert v8.total == v6.total
    # the program's wall time is 10x its own time here: only code-v8 reads the latter
    slow_wall = x.model_copy(update={"active_s": 0.5})
    assert fn("code-v8").score(task, code, slow_wall, ref).total == v8.total
    assert fn("code-v6").score(task, code, slow_wall, ref).total < v6.total
