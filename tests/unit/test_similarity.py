"""Code similarity to the reference (CodeBLEU) and reward code-v2, on pairs computed by hand."""

from __future__ import annotations

import math

import pytest

from streams.reward.code_v2 import NO_REFERENCE
from streams.reward.config import RewardConfig, RewardWeights
from streams.reward.function import get_reward_function
from streams.reward.similarity import code_similarity
from tests.hacks.fixtures import FakeLinter, execution, make_task, passing

REF = "def f(a):\n    return a\n"


def _bleu(p1: float, orders: int = 4) -> float:
    """BLEU-4 of a 4-token program that shares unigrams only: codebleu smooths each empty higher order
    to 0.1 / (its n-gram count) (NIST method 1); equal lengths, so no brevity penalty."""
    logs = [math.log(p1)] + [math.log(0.1 / (orders - n)) for n in range(1, orders)]
    return math.exp(sum(logs) / orders)


def test_identical_code_scores_one_and_surrounding_whitespace_does_not_count():
    assert code_similarity(REF, REF).score == 1.0
    assert code_similarity(REF, "\n" + REF + "\n\n").score == 1.0


def test_consistent_renaming_keeps_syntax_and_data_flow_whole():
    s = code_similarity(REF, "def f(b):\n    return b\n")
    # tokens def | f(a): | return | a  vs  def | f(b): | return | b: 2 of 4 unigrams, no longer n-gram
    assert s.ngram == pytest.approx(_bleu(2 / 4))
    # keywords (def, return) weigh 1, other tokens 0.2: 2 / 2.4 of the unigram weight matches
    assert s.weighted_ngram == pytest.approx(_bleu(2 / 2.4))
    assert s.syntax == 1.0  # the same tree shape
    assert s.dataflow == 1.0  # the parameter flows to the return value, names normalised
    assert s.score == pytest.approx((_bleu(0.5) + _bleu(2 / 2.4) + 2.0) / 4)


def test_renamed_scores_high_and_unrelated_low():
    ref = (
        "def close(numbers, threshold):\n"
        "    for i, x in enumerate(numbers):\n"
        "        for j, y in enumerate(numbers):\n"
        "            if i != j and abs(x - y) < threshold:\n"
        "                return True\n"
        "    return False\n"
    )
    renamed = ref.replace("numbers", "xs").replace("threshold", "t").replace("x", "p").replace("y", "q")
    unrelated = (
        "def shout(text):\n    out = []\n    for ch in text:\n        out.append(ch.upper())\n"
        "    return ''.join(out)\n"
    )
    high, low = code_similarity(ref, renamed).score, code_similarity(ref, unrelated).score
    assert high > 0.5 > 0.2 > low
    assert code_similarity(ref, "").score == 0.0


def test_a_reference_without_data_flow_leaves_that_part_out():
    s = code_similarity("def f():\n    return 1\n", "def f():\n    return 2\n")
    assert s.dataflow is None
    assert s.score == pytest.approx((s.ngram + s.weighted_ngram + s.syntax) / 3)


def _v2(similarity: float = 0.0):
    config = RewardConfig(weights=RewardWeights(similarity=similarity))
    return get_reward_function("code-v2", config, linter=FakeLinter())


def test_code_v2_records_similarity_rewards_it_only_when_weighted_and_passing():
    task = make_task()
    good, renamed = task.reference or "", "def add(x, y):\n    return x + y\n"
    v1 = get_reward_function("code-v1", linter=FakeLinter()).score(task, renamed, passing(task))
    s = _v2().score(task, renamed, passing(task))
    assert 0.5 < s.components["similarity"] < 1.0 and s.weights["similarity"] == 0.0
    assert s.total == v1.total  # weight 0: measured, not rewarded
    assert _v2(0.5).score(task, good, passing(task)).total == pytest.approx(v1.total + 0.5)
    failing = _v2(0.5).score(task, good, execution(["9", "9", "9", "9"]))
    assert failing.components["similarity"] == 1.0 and failing.total == 0.0  # never lifts a failing one
    assert _v2().version_label == "v2" and _v2(0.5).version_label.startswith("v2+")
    # code-v1 ignores the new weight: its recorded versions are reproduced as they were
    plain = get_reward_function("code-v1", RewardConfig(weights=RewardWeights(quality=0.5)))
    with_sim = get_reward_function(
        "code-v1", RewardConfig(weights=RewardWeights(quality=0.5, similarity=1.0))
    )
    assert plain.version_label == with_sim.version_label == "v1+c6adc3c8"


def test_a_task_without_a_reference_has_no_similarity_not_zero():
    task = make_task(reference=None)
    s = _v2(0.5).score(task, "def add(a, b):\n    return a + b\n", passing(task))
    assert "similarity" not in s.components
    assert s.details["similarity"] == NO_REFERENCE


@pytest.mark.parametrize(
    "program",
    [
        # 30,000 levels: tree-sitter's recursive rendering of each subtree overflowed the C stack and
        # killed the process that scored it
        "def f(a):\n    return " + "+".join(["a"] * 30_000) + "\n",
        "def f(a):\n    return a\n" + "# " + "x" * 300_000 + "\n",
        "def f(a):\n    return a  # \ud800\n",
    ],
    ids=["nested-past-the-c-stack", "oversized", "lone-surrogate"],
)
def test_a_program_the_package_cannot_read_safely_scores_zero_and_the_host_stays_up(program: str) -> None:
    s = code_similarity(REF, program)
    assert (s.score, s.ngram, s.syntax, s.dataflow) == (0.0, 0.0, 0.0, None)
    # a program just inside the bounds is still measured
    assert code_similarity(REF, "def f(a):\n    return " + "+".join(["a"] * 50) + "\n").score > 0
