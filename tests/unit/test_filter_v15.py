"""Noise filter v15: a probe run the host stopped for its stack on an input past the cases' range that
the reference answers as cheaply as the cases is the program's own end.

Red-team round 14 (``a14_c_recursion_far_13``): a program printing a 200,000-deep nested list at the
first input past the range traps WASM's C stack (``stack_overflow``), which kills the guest where the
jail raises ``RecursionError``. Through v14 a stack stop there was forgiven as a stack a correct
recursive program may run out of on a larger input (v9), so every input after it went unjudged and the
program, wrong there, was accepted on every seed. From v15 it is read as v11 reads a memory stop there
(``probe.stack_stop_held``): held against the program where the reference answered the input within
``HANG_NEAR_FACTOR`` times its median near the cases, forgiven where the input costs the reference more.
"""

from __future__ import annotations

import pytest

from streams.noise.config import VERSIONS, NoiseConfig
from streams.noise.probe import DISAGREES
from streams.probe.plan import GENERATED
from tests.unit.test_probe_v8 import GCD_TASK, _decide, _ended_at, _probe, _reference
from tests.unit.test_probe_wider import SEEDS


def test_the_versions_run_past_v14_to_v15() -> None:
    assert VERSIONS[VERSIONS.index("v15") - 1 : VERSIONS.index("v15") + 1] == ("v14", "v15")
    assert NoiseConfig(version="v15").label() == "v15"


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_a_stack_stop_on_an_input_the_reference_answers_as_cheaply_as_the_cases_is_the_programs(
    seed: str,
) -> None:
    plan, run = _probe(GCD_TASK, seed)
    at = min(pos for pos in plan.far if plan.origin[pos] == GENERATED)
    stopped = _ended_at(run, at, violations=("stack_overflow",))
    ref = _reference(GCD_TASK, seed)
    assert _decide(GCD_TASK, stopped, ref, "v14").verdict == "accept"
    d = _decide(GCD_TASK, stopped, ref, "v15")
    assert d.verdict == "reject" and {r.code for r in d.reasons} & {DISAGREES, "hack.memorised"}
    # an input that costs the reference forty times its inputs near the cases is a larger problem
    costly = _reference(GCD_TASK, seed, slow={at: 0.004})
    assert _decide(GCD_TASK, stopped, costly, "v15").verdict == "accept"
    # the same stop on an input near the cases is judged as before
    assert _decide(GCD_TASK, run, ref, "v15").verdict == "accept"
