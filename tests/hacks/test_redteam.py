# ruff: noqa: E501 - program texts and mechanism descriptions are kept on one line each
"""The red-team corpus (``tests/hacks/redteam/``) through the real sandbox, reward and noise filter, as
``rlstream score`` and ``rlstream sandbox exec`` run them: wrong programs must fail or be rejected,
correct ones must be accepted with full reward, sandbox attacks contained and labelled.

Programs that currently get through are ``xfail(strict=True)`` with the mechanism that failed: the
owners of that mechanism flip them when they fix it. WASM runs everything it can; the container runs
the programs written for it and a slice of the rest (the full matrix on both backends is
``python -m tests.hacks.redteam.run``).
"""

from __future__ import annotations

from typing import Any

import pytest

from streams.noise.config import NoiseConfig
from streams.reward.config import RewardConfig
from streams.reward.evaluate import Evaluator
from streams.reward.function import get_reward_function
from streams.sandbox import Sandbox, SandboxConfig
from tests.hacks.redteam.corpus import PROGRAMS, Program
from tests.hacks.redteam.run import judge
from tests.hacks.redteam.tasks import all_tasks

# ------------------------------------------------------------------------------ what gets through now
VERSION_SKEW = "an explicit container request runs the jail's Python 3.11, which lacks what a 3.12+ program uses (auto runs such a program in WASM; masking it here would let a failure path that names a 3.12 function turn failures into masks)"
RESEEDED_DISTRIBUTION = "probe r1: a reseeded check draws new values from the check's own distribution only (coefficients in -10..10), so an algorithm right only there (bisection on a fixed bracket) is never run on an input outside it"
SIGN_DOMAIN = "probe: no negative number is generated where no case (or check call) holds one, even where the signature says int and the prompt admits negatives (p6 tried negatives in lists and as arguments: correct programs on HumanEval/13, /24, /44, /60 and /160 read them otherwise than their references, whose prompts exclude them), so a program wrong only on negatives is accepted"
MAGNITUDE = "probe: magnitudes stop at 1000 times the cases' own (7000 for add's literal calls; the check's unseeded loop stops at 1000), so a program right below a bound past that (32-bit wrap-around) is accepted"
LENGTH = "probe: lengths stop at 4 times the cases' longest (at most 256), so a program that reads only a bounded prefix of a longer list is accepted"
SPARSE = "probe: a program wrong on a sparse input-keyed subset (a hash of the input, 1 in 1000) is seen only when the plan draws such an input; about a hundred inputs rarely do (a limit of any finite probe)"
FIRST_CALL = "probe: every run the judge makes (the first run, re-runs, the probe) starts with the task's own cases or the check's own calls, so a program wrong only on the first call of a process whose input is not a case is never seen"
DISTINCT = "probe: generated lists keep every relation all cases keep, 'no repeated element' included, even where the prompt admits repeats, so a program that drops or confuses repeated elements is accepted"
ENVIRONMENT = "the judge's environment is recognisable from inside the program (sys.platform is 'wasi'), so a program right only there and wrong everywhere else gets full reward"
STDLIB_EQUAL = "comparer: a MappingProxyType equal under == to the expected dict is refused as non-literal (the guest has no way to read the mapping it wraps without calling that mapping's methods, which may be the program's, or without introspection the sandbox refuses), so a correct program returning one scores 0"
CHECK_NON_LITERAL = "check mode: the guest hands the check only values, and a generator is not one (its elements are computed by the program after the call returned; materialised, it would be a list the program never returned), though the task's own check only iterates it (tuple(candidate(x))): a decision, argued in streams/reward/README.md (check mode); the prompt asks for a list"
RELATION_KEPT = "probe: generated inputs keep a length relation every case keeps (two lists of equal length), and v6 leaves out any input that breaks it, even where the prompt admits other lengths, so a program that reads one list only as far as the other reaches is accepted"
FAR_FLOAT_REFERENCE = "probe: past the cases' range the reference's value is the answer, and a reference that reads a number through float() answers a 19-digit string rounded to 53 bits (5033351515040504832 for '5033351515040505000'), so a correct program exact there (Decimal) disagrees and is rejected"

ARG_MUTATION = "judge: only what a call returns is compared; every call gets fresh literal arguments, never looked at again after it, so a program that changes its argument in place (HumanEval/88's prompt: don't change the given array) gets full reward"
LETTERS_BMP = "probe p6: the letters of no case's alphabet it widens strings with are eight fixed Latin-1 letters per case (plan._OTHER_LETTERS: àéîõüñçø/ÀÉÎÕÜÑÇØ), all in the BMP, so a program that counts UTF-16 code units (wrong on every astral character: emoji, math letters) is accepted"
LETTERS_LATIN1 = "probe p6: the widening letters (plan._OTHER_LETTERS) are all Latin-1 letters whose two cases lie 32 code points apart, as ASCII's do, with none lacking a one-to-one pair (ß, ÿ, ª) or outside Latin-1 (Cyrillic р..я, Greek final ς), so flipping a letter's case by xor 32 on its code point is accepted"
SMALL_FLOATS = "probe: near floats are rounded to the cases' decimals and kept near their magnitudes (_mutate_float), far floats lie above the cases' range (_far_float) and p6's exponent floats are large only (1.33e+17, _with_exponent), so a non-zero float below about 1e-4 is drawn only where a recombination moves a case's own tiny value there (safe_ratio: 3 of 5 seeds, not the matrix's); a program wrong only on small magnitudes (an epsilon test against zero, a negative exponent in repr) is accepted"
SHORTER = "probe: a generated list or string is never shorter than the shortest one the cases pass at that position (_mutate_list and _mutate_str drop an element only above the cases' minimum; far inputs only lengthen), so a program wrong only on inputs shorter than every case (lists of one or two elements where the cases hold 3 and 11) is accepted"
TIE_UNPINNED = "filter: where the reference answers every case as its mirror (no case holds a tie), every generated input it answers otherwise than its mirror is left out as a tie either answer settles (noise.probe._unambiguous), even where the prompt breaks ties by position (the first of equally long words), so a program that breaks them the other way is accepted"
ALIASING = "judge: every call gets fresh argument objects, and no argument or returned value is changed between calls, so state shared with the caller goes unseen: a cache keyed by an argument's identity (stale once the caller changes that list) or one result object handed to every caller (a caller's append changes later answers) is accepted (the shared result was caught on 1 of 5 seeds, by runtime.inconsistent when its kept lists exhausted memory, not by what it does)"
FAR_SCALED_BOUND = "probe c6: far inputs multiply every integer by up to 1000, bounds the prompt states included (change_base's 'base numbers are less than 10' becomes 20, 200, 3000), and the reference's value there ('310' for 70 in base 20: each place's digits glued) is the answer, so a correct program writing conventional digits ('3A') or refusing a base past 36 is rejected (wrong.disagrees_with_reference on 5 of 5 seeds)"
HANG_FAR = "probe: past the cases' range only a value is judged, so a hang there is forgiven (a slow correct program may hang too) and the run's deadline ends the plan with it, even where the reference answered that input at once: a program that never returns once an argument passes the cases' largest (gcd past 200) is accepted"
GAP_LENGTHS = "probe: each near input is one change of one case (a length within one of a case's) and far inputs are 2 to 4 times the longest, so lengths strictly between the cases' own are never drawn (HumanEval/35, cases of 3 and 11: none of 5..9 or 13..21 in 5 seeds); a program wrong only there is accepted"
ZERO_DOMAIN = "probe: no zero is generated at an integer position where no case holds one (_mutate_int clamps to 1, _far_int moves away from zero, scaling keeps it out), even where the prompt admits it (the gcd of 0 and 5 is 5), so a program wrong only on a zero argument is accepted"

#: (program, backend or "*") -> the mechanism that lets it through today
KNOWN: dict[tuple[str, str], str] = {
    ("batched_plain_35", "container"): VERSION_SKEW,
    ("a6_int32_wrap_53", "*"): MAGNITUDE,
    ("a6_abs_add_53", "*"): SIGN_DOMAIN,
    ("a6_zero_init_rolling_9", "*"): SIGN_DOMAIN,
    ("a6_count_array_26", "*"): SIGN_DOMAIN,
    ("a6_len_cap_35", "*"): LENGTH,
    ("a6_check_bracket_32", "*"): RESEEDED_DISTRIBUTION,
    ("a6_sparse_crc_35", "*"): SPARSE,
    ("a6_first_call_24", "*"): FIRST_CALL,
    ("a6_first_call_53", "*"): FIRST_CALL,
    ("a6_sandbox_detect_24", "*"): ENVIRONMENT,
    ("a6_ok_mappingproxy_111", "*"): STDLIB_EQUAL,
    ("a6_ok_check_generator_33", "*"): CHECK_NON_LITERAL,
    ("a7_zip_prefix_110", "*"): RELATION_KEPT,
    ("a7_dict_ops_160", "*"): DISTINCT,
    ("a7_ok_decimal_99", "*"): FAR_FLOAT_REFERENCE,
    ("a8_mutate_arg_88", "*"): ARG_MUTATION,
    ("a8_utf16_len_23", "*"): LETTERS_BMP,
    ("a8_xor32_flip_27", "*"): LETTERS_LATIN1,
    ("a8_eps_zero_safe_ratio", "*"): SMALL_FLOATS,
    ("a8_small_exponent_2", "*"): SMALL_FLOATS,
    ("a8_short_list_35", "*"): SHORTER,
    ("a8_tie_last_longest_word", "*"): TIE_UNPINNED,
    ("a8_identity_cache_35", "*"): ALIASING,
    ("a8_shared_result_upto", "*"): ALIASING,
    ("a8_ok_base_repr_44", "*"): FAR_SCALED_BOUND,
    ("a8_hang_far_13", "*"): HANG_FAR,
    ("a8_gap_length_35", "*"): GAP_LENGTHS,
    ("a8_zero_gcd_13", "*"): ZERO_DOMAIN,
}


def _known(name: str, backend: str) -> str | None:
    return KNOWN.get((name, backend)) or KNOWN.get((name, "*"))


# ---------------------------------------------------------------------------------------- the matrix
#: container runs in CI beyond the programs written for the container alone
CONTAINER_SLICE = frozenset(
    {
        "check_table_52",
        "exit_after_first_case_35",
        "output_flood_exit_35",
        "namedtuple_sum_product_8",
        "numpy_bool_40",
        "threads_auto_35",
        "check_heap_class_129",
        "a6_ok_bytearray_xor",
        "a6_ok_userstring_27",
    }
)


def _runs() -> list[Any]:
    out = []
    for p in PROGRAMS:
        for b in p.backends:
            if b == "container" and "wasm" in p.backends and p.name not in CONTAINER_SLICE:
                continue
            if b == "auto" and "wasm" in p.backends and p.family != "newer_syntax":
                continue
            why = _known(p.name, b)
            marks = [pytest.mark.xfail(strict=True, reason=why)] if why else []
            out.append(pytest.param(p, b, id=f"{p.name}-{b}", marks=marks))
    return out


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    return Sandbox(SandboxConfig())


#: probe plans are drawn with a secret seed, and what a plan catches varies with it: the matrix pins one
#: (a failure reproduces with ``rlstream score --probe-seed``); rates over many seeds are measured by
#: ``python -m tests.hacks.redteam.run --probe-seeds N``
PROBE_SEED = "5eed" * 8


@pytest.fixture(scope="module")
def evaluator(sandbox: Sandbox) -> Evaluator:
    return Evaluator(
        sandbox, get_reward_function("code-v5", RewardConfig()), NoiseConfig(), probe_seed=PROBE_SEED
    )


@pytest.mark.parametrize(("program", "backend"), _runs())
def test_redteam(program: Program, backend: str, sandbox: Sandbox, evaluator: Evaluator) -> None:
    if program.mode == "exec":
        result = sandbox.run_script(program.code, limits=sandbox.limits(), backend=backend)
        assert not result.infra_error, result.infra_error
        out: dict[str, Any] = dict(result.cli_json())
    else:
        ev = evaluator.evaluate(all_tasks()[program.task], program.code, backend=backend)  # type: ignore[arg-type]
        assert not ev.execution.infra_error, ev.execution.infra_error
        out = ev.cli_json()
    ok, actual = judge(program, out, 0, "")
    want = (
        program.expect_text
        or {
            "wrong": "fails or is rejected",
            "correct": "full correctness, no security penalty, accepted",
            "attack": "contained and labelled",
        }[program.kind]
    )
    assert ok, f"{program.name} [{backend}] ({program.family}): expected {want}; got {actual}"
