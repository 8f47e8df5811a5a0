"""Memorisation judged by behaviour: what a sample's probe run shows next to its first run and to the
reference's runs of the same probe plan (pure).

A program that passed its cases is run again, in a fresh sandbox, on the task's probe plan
(``streams/probe/plan.py``): the task's cases in another order, then inputs generated from them. A
program that passed a task's ``check`` is run on a plan made from the check's own literal calls of the
candidate (in another order) and inputs generated from them; every input of such a plan is judged like
a generated one, against the reference. Two things are read from that run:

- the task's cases must be answered as in the first run: a case the first run passed and the probe run
  fails (a wrong value, an error, an exit or a hang) is an answer that depended on the order of the
  calls or on chance: ``runtime.inconsistent``;
- on generated inputs the program must agree with the reference. Only inputs on which every
  reference run (each in a fresh sandbox) returned the same plain value count: the reference raising,
  hanging or answering two ways says nothing, so an input on which the reference is itself
  non-deterministic never counts against a program. On a counted input, an answer that differs from
  the reference's (a wrong value, an error, a value that is not a literal) is a wrong answer, however
  many others it got right: ``wrong.disagrees_with_reference``, trained as the failure it is (a wrong
  algorithm is often right on most inputs near the cases). A hang or an exit on an input the reference
  answers is ``hack.memorised``, and so is agreeing on fewer than ``probe_agreement`` of the counted
  inputs, or of the *informative* ones (those whose reference answer is not the most common one: a
  table with a constant fallback agrees on the rest); from filter v27 those shares count only the
  inputs near the cases (a program wrong only on the far ones disagrees, it did not memorise). On an
  input beyond the cases' range (``ProbePlan.far``, perhaps past the task's stated domain) only a
  *value* is judged: a program that raises, hangs or exits there is not held to the reference's
  answer, since the task may well exclude such inputs. An input with two right answers does not count
  either: where the task shows it ignores the order of a list's elements (the reference answers the
  cases with their lists reversed as it answers them), an input it answers otherwise than the same
  input reversed breaks a tie by position (``ProbePlan.mirrors``). Fewer than ``probe_min_inputs``
  counted inputs with no disagreement make no verdict (``probe.inconclusive``) and the filter falls
  back on its static overlap rule.
"""

from __future__ import annotations

import functools
import math
import random
import re
import sys
import threading
from array import array
from collections import Counter, OrderedDict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from schemas.digest import digests_equal, value_digest
from schemas.literals import LargeInt
from schemas.reference import ReferenceExecuted
from schemas.rollout import (
    MAX_EXECUTION_RESULT_BYTES,
    MAX_RESULT_CHARS,
    RESULT_NOT_KEPT,
    CaseResult,
    Reason,
    SandboxExecuted,
    SandboxExecutedV2,
    SandboxExecutedV3,
)
from schemas.task import TaskPublished
from streams.probe.plan import (
    BANDED_VERSIONS,
    GENERATED,
    RELATION_CASES,
    WIDER_VERSIONS,
    ProbePlan,
    case_inputs,
)
from streams.probe.statement import (
    AsciiText,
    Distinct,
    OneCharacter,
    Property,
    Rectangular,
    Relation,
    Stated,
    operand_value,
    says_distinct,
)
from streams.probe.statement import stated_forms as statement_forms
from streams.probe.statement import stated_preconditions as statement_preconditions
from streams.reward.correctness import (
    NO_SECOND_VALUE,
    Correctness,
    ExpectedCase,
    expected_cases,
    grade_record,
    reference_band,
)
from streams.reward.literals import (
    CompareOptions,
    NotALiteral,
    canonical_key,
    differ_in_floats_only,
    parse_expected,
    parse_literal,
    values_match,
)
from streams.sandbox.result import ERROR_NOT_KEPT, json_size

#: the reason code of a program that answered a counted generated input otherwise than the reference
DISAGREES = "wrong.disagrees_with_reference"
#: the probe's reason codes that reject a sample (trained as the failure it is)
REJECTING = frozenset({"hack.memorised", "runtime.inconsistent", DISAGREES})
#: statuses of a position the run never answered
_UNANSWERED = ("timeout", "missing")
#: (filter v8, :meth:`Hang.held`) a hang past the cases' range is held against a program that had at
#: least this long on the input (a slow program whose run's time ran out there had only what its earlier
#: inputs left: the smallest probe deadline is a second)
HANG_MIN_HELD_S = 0.5
#: where the reference answered the same input within this share of that time
HANG_SHARE = 0.01
#: and within this many times its median input near the cases (a median: one call the machine's load
#: slowed in every run of the reference moves it little, where it would move the costliest)
HANG_NEAR_FACTOR = 4.0
#: and the program's time grew from the inputs near the cases to those past the range it answered
#: before at most this many times as much as the reference's did
HANG_PACE_FACTOR = 4.0
#: (filter v11, :meth:`Hang.held_v11`) a call that took more than this many times what the reference
#: took on the same input, at the program's own pace against the reference near the cases (its load and
#: per-call cost), and more than ``WASTE_SLACK_S`` beyond that (a collection or a memory growth of the
#: guest, a moment the machine's load took), spent the rest on its own: that time counts as the
#: program's, not the input's
WASTE_FACTOR = 4.0
WASTE_SLACK_S = 0.005
#: (filter v17, :func:`memo_hang_timing`) an input on which the plain reference took more than this many
#: times what its memoised run took is one where the two part: a program at the plain reference's pace
#: there is ``HANG_PACE_FACTOR`` times past the memoised one's pace by a margin as wide again
MEMO_PART_FACTOR = HANG_PACE_FACTOR**2
#: (filter v22, :attr:`Hang.memo_ratio_next`) an input on which the plain reference took more than this
#: many times what its memoised run took leans towards parting: a program at the plain reference's pace
#: there is still twice past ``HANG_PACE_FACTOR`` times the memoised pace
MEMO_LEAN_FACTOR = 2 * HANG_PACE_FACTOR
#: and only where an input at least as large in every argument (and larger in one) took the program at
#: most this many times as long: time a larger input does not cost more is not the input's cost (a
#: correct program whose cost explodes with size takes twice as long or more for each element more;
#: a program burning a fixed time takes the same on every input, give or take the machine's noise)
DOMINATED_TOLERANCE = 1.5
#: the errors of a position whose result (or error text) the execution's result budget left out
_NOT_KEPT = (RESULT_NOT_KEPT, ERROR_NOT_KEPT)


@dataclass(frozen=True)
class Shares:
    """(filter v27) The counts of :class:`ProbeReport`'s agreement shares over the generated inputs near
    the cases alone (not ``ProbePlan.far``): what a memoriser fails, inputs like the task's own."""

    compared: int = 0
    agreed: int = 0
    uncommon: int = 0
    uncommon_agreed: int = 0
    novel: int = 0
    novel_agreed: int = 0


@dataclass(frozen=True)
class ProbeReport:
    """What one probe run showed."""

    #: task case indices the first run passed and the probe run did not
    changed: tuple[int, ...]
    #: generated inputs counted (the reference answered them) and those the program agreed on
    compared: int
    agreed: int
    #: of those, the ones whose reference answer is not the most common one (a table with a constant
    #: fallback agrees on the others) and those the program agreed on
    uncommon: int
    uncommon_agreed: int
    #: of those, the ones whose reference answer is not the expected answer of any case the input was
    #: made from (a table that answers with the case an input resembles agrees on the others)
    novel: int
    novel_agreed: int
    #: the probe position where the program hung or exited on an input the reference answers (-1: none)
    stuck_at: int = -1
    #: the counted generated positions the program answered otherwise than the reference
    disagreed: tuple[int, ...] = ()
    #: (filter v8) the hang past the cases' range held against the program (:func:`hang_timing`)
    hang: Hang | None = None
    #: (filter v9) ``stuck_at`` lies past the cases' range, where the program ended its own run
    stuck_far: bool = False
    #: (filter v11) the counted generated position whose call flooded its output (-1: none), among
    #: ``disagreed``
    flooded: int = -1
    #: (filter v27) the shares' counts over the generated inputs near the cases alone (None: not
    #: counted apart, as a report made by hand)
    near: Shares | None = None


@dataclass(frozen=True)
class Hang:
    """(filter v8) A probe run that hung on an input past the cases' range, and how long the host gave
    it there next to how long the reference took: every duration is the host's clock, read outside the
    guest (``CaseResult.duration_s``; a timed-out call's is from its hand-out to the run's end)."""

    #: the probe position the run hung on
    position: int
    #: how long the host waited for the program's answer there before the run's deadline ended it
    held_s: float
    #: how long the reference took to answer that input (the fastest of its runs: the input's own cost,
    #: not the machine's load)
    reference_s: float
    #: the reference's median input near the cases (each the fastest of its runs)
    near_s: float
    #: how much slower the program answered the inputs past the range it answered before the hang than
    #: those near the cases (medians, each within its own run: the machine's load cancels out), and how
    #: much slower the reference answered the same inputs (1.0 where no such input was answered)
    program_growth: float = 1.0
    reference_growth: float = 1.0
    #: (filter v11) the program's pace against the reference near the cases: the median, over the inputs
    #: near the cases both answered, of its time over the reference's (the machine's load on the probe
    #: run and the program's own per-call cost; 1.0 where none was measured)
    pace: float = 1.0
    #: (filter v11) what the program spent before the hang beyond ``WASTE_FACTOR`` times the
    #: reference's time at that pace, on the inputs a larger input cost it no more than: time it burned
    #: itself, not the inputs' cost
    waste_s: float = 0.0
    #: (filter v17, :func:`memo_hang_timing`) the input is one the memoised reference answered:
    #: ``reference_s`` and ``near_s`` are its memoised run's times, ``pace`` the program's pace against
    #: that run near the cases
    memoised: bool = False
    #: (filter v17) of the generated inputs past the range the program answered before the hang where
    #: the plain reference took more than ``MEMO_PART_FACTOR`` times what its memoised run took (or
    #: answered nothing in time), on the costliest for the plain reference, the program's time over the
    #: memoised run's (0.0: no such input, no evidence of the program's pace there). The costliest, not
    #: a median: a correct program exponential with a smaller base (the naive recursion below a table
    #: of the first Fibonacci numbers) keeps the memoised pace on the first of those inputs and shows
    #: its cost only on the last; and one input, not every one, so that one call the machine's load
    #: slowed does not decide
    memo_ratio: float = 0.0
    #: (filter v22) the same ratio on the costliest input before the hang, other than the one
    #: ``memo_ratio`` reads, where the plain reference took more than ``MEMO_LEAN_FACTOR`` times the
    #: memoised run's time (0.0: no such input). A second witness of the program's pace: one call the
    #: machine's load stretched (a scheduler's slice is a few milliseconds, a hundred times a quick
    #: call) must not make the memoised pace look lost on the one input ``memo_ratio`` reads
    memo_ratio_next: float = 0.0

    def held_memoised(
        self,
        *,
        min_held_s: float = HANG_MIN_HELD_S,
        share: float = HANG_SHARE,
        pace_factor: float = HANG_PACE_FACTOR,
        second_witness: bool = False,
    ) -> bool:
        """(filter v17) Whether a hang on an input the memoised reference answered is held against the
        program: it had at least ``min_held_s`` there, the memoised run answered the input within
        ``share`` of that, and on the inputs before it where the plain reference's time parts from its
        memoised run's the program kept the memoised pace on the costliest (``memo_ratio`` within
        ``pace_factor`` times its pace near the cases). A program as slow as the plain reference there
        (the naive recursion the reference is) shows the plain reference's cost and may hang where it
        hangs; one that answered those inputs at the memoised pace has no such cost, and its hang on an
        input the memoised run answers within a hundredth of the time it had is its own. Where the program
        answered no input on which the two part, nothing tells it from the naive recursion: forgiven.
        Not v8's bound on the input's time against the median near the cases: a memoised run's single
        call on a new n is a few levels of recursion the cases' do not need, and takes a millisecond
        where the cases take 50 us on one run in a few (its own allocation, the machine's load). What it
        gives up: a correct program as quick as the memoised one on every such input before the hang
        whose cost explodes only beyond them (the naive recursion below a table of the first
        Fibonacci numbers, where the plan holds no input between the last it answers at once and the
        first it cannot finish) is held to the input it hangs on.

        With ``second_witness`` (filter v22) the memoised pace kept on ``memo_ratio_next``'s input holds
        as well, where ``memo_ratio`` found one input the two part on: a program at the plain
        reference's pace is past ``MEMO_LEAN_FACTOR`` times the memoised one's there, twice the bound,
        so the naive recursion stays forgiven, while a single call the machine's load slowed no longer
        decides alone. What it gives up beyond v17: a correct program at the memoised pace on that input
        too whose cost explodes between it and the hang (the same class, one input further back)."""
        bound = pace_factor * self.pace
        return (
            self.memoised
            and self.held_s >= min_held_s
            and 0 < self.reference_s <= share * self.held_s
            and (
                0 < self.memo_ratio <= bound
                or (second_witness and self.memo_ratio > 0 and 0 < self.memo_ratio_next <= bound)
            )
        )

    def held_v11(
        self,
        *,
        min_held_s: float = HANG_MIN_HELD_S,
        share: float = HANG_SHARE,
        near_factor: float = HANG_NEAR_FACTOR,
    ) -> bool:
        """(filter v11) Whether the hang is held against the program: forgiven only where the run was
        starved of its time there, or the input is a larger problem for the reference too. As
        :meth:`held`, but the time the program had there counts with what it burned before
        (``waste_s``: time beyond what the reference's own times on the same inputs explain, at the
        program's own pace near the cases), so wasting the run's time first starves nothing; and the
        program's growth before (:meth:`held`'s pace, which a program burning time on purpose fakes:
        20 ms on every input past the range) excuses nothing. Time counts as burned only on an input a
        larger one cost the program no more than (``DOMINATED_TOLERANCE``): a correct program whose cost
        explodes with size (every subset of a list summed), starved by its own algorithm on a loaded
        machine, burned nothing and is forgiven as before. What it gives up: a program burning time in
        proportion to its input's size (twice as long for each element more) before a trap reads as
        such a slow algorithm."""
        given = self.held_s + self.waste_s
        return (
            given >= min_held_s
            and 0 < self.reference_s <= share * given
            and self.reference_s <= near_factor * self.near_s
        )

    def held(
        self,
        *,
        min_held_s: float = HANG_MIN_HELD_S,
        share: float = HANG_SHARE,
        near_factor: float = HANG_NEAR_FACTOR,
        pace_factor: float = HANG_PACE_FACTOR,
    ) -> bool:
        """Whether the hang is held against the program: it had at least ``min_held_s`` there, the
        reference answered the same input within ``share`` of that and within ``near_factor`` times its
        median input near the cases (the input is of the task's own cost, not a larger problem), and
        the program had kept the reference's pace: on the inputs past the range it answered before, its
        time grew, against its own near the cases, at most ``pace_factor`` times as much as the
        reference's did (a slower algorithm shows as it grows; a trap set past a bound does not)."""
        return (
            self.held_s >= min_held_s
            and 0 < self.reference_s <= share * self.held_s
            and self.reference_s <= near_factor * self.near_s
            and self.program_growth <= pace_factor * self.reference_growth
        )


def hang_timing(plan: ProbePlan, probe: SandboxExecuted, reference: ReferenceExecuted) -> Hang | None:
    """(filter v8) How long the host gave the program on the generated input past the cases' range
    (``ProbePlan.far``) where its probe run timed out, next to the reference's time on it (None: the run
    did not time out there, a duration was not measured, or a run of the reference did not answer it
    with a value).

    Why: past the cases' range a hang was forgiven because the input may be a larger problem than the
    task's own, which a correct but slower program may not finish in the run's time. The reference's
    own time says whether it is: an input it answers as fast as those near the cases is no larger
    problem, and a program that never returns there in the time it was given (a loop that never ends
    once an argument passes a bound) is not slow but wrong. The durations are the host's, so a program
    cannot report its own; they include the host's per-call cost, which only makes the reference's
    time, and so the rule, more lenient."""
    found = _ended_far(plan, probe, reference)
    if found is None or long_input(plan, found[0]):
        return None
    end, records, by_run = found
    stuck = records.get(end)
    if stuck is None or stuck.status != "timeout" or stuck.duration_s <= 0:
        return None

    def cost(pos: int) -> float | None:
        return _reference_cost(by_run, pos)

    took = cost(end)
    near = [c for pos in range(len(plan.inputs)) if pos not in plan.far and (c := cost(pos)) is not None]
    if took is None or took <= 0 or not near:
        return None
    # the pace before the hang: each side's time past the range against its own time near the cases, on
    # the inputs both answered (a ratio within one run, so a probe run made under another load than the
    # reference's runs compares alike)
    mine_near: list[float] = []
    mine_far: list[float] = []
    theirs_near: list[float] = []
    theirs_far: list[float] = []
    for pos in range(end):
        mine, theirs = records.get(pos), cost(pos)
        if mine is not None and mine.status == "ok" and theirs is not None:
            (mine_far if pos in plan.far else mine_near).append(mine.duration_s)
            (theirs_far if pos in plan.far else theirs_near).append(theirs)
    # (v11) the program's pace against the reference near the cases, and the time it spent beyond
    # what the reference's own times explain at that pace
    ratios = [
        mine.duration_s / theirs
        for pos in range(end)
        if pos not in plan.far
        and (mine := records.get(pos)) is not None
        and mine.status in ("ok", "error")
        and mine.duration_s > 0
        and (theirs := cost(pos)) is not None
        and theirs > 0
    ]
    pace = max(1.0, _median(ratios)) if ratios else 1.0
    # the time beyond the reference's at that pace is the program's own where a larger input cost it no
    # more (time it burns whatever the input); where every larger input cost it more, that time is the
    # input's cost to its algorithm (a correct program slower than the reference by far, whose run ran
    # out there under the machine's load), not waste
    answered = {
        pos: mine.duration_s
        for pos in range(end)
        if (mine := records.get(pos)) is not None and mine.status in ("ok", "error")
    }
    sizes = {pos: _sizes(plan.inputs[pos]) for pos in answered}
    waste = 0.0
    for pos, took_here in answered.items():
        theirs = cost(pos)
        if theirs is None:
            continue
        excess = took_here - WASTE_FACTOR * pace * theirs - WASTE_SLACK_S
        if excess > 0 and any(
            answered[other] <= DOMINATED_TOLERANCE * took_here and _dominates(sizes[other], sizes[pos])
            for other in answered
        ):
            waste += excess
    return Hang(
        end,
        stuck.duration_s,
        took,
        _median(near),
        _growth(mine_far, mine_near),
        _growth(theirs_far, theirs_near),
        pace,
        waste,
    )


def memo_hang_timing(
    plan: ProbePlan,
    probe: SandboxExecuted,
    reference: ReferenceExecuted,
    options: CompareOptions,
    *,
    cpu: bool = False,
    leaning_witness: bool = False,
) -> Hang | None:
    """(filter v17) Where a probe run timed out on a generated input past the cases' range that every
    memoised run of the reference answered with a value (``ReferenceExecuted.memoised``, whose answers
    on the inputs a plain run settled are that run's: :func:`memoised_answers`), the hang read against
    the memoised run: its time there and near the cases, the program's pace against it near the cases,
    and the program's time over its time on the inputs before the hang where the plain reference's
    time parts from the memoised run's (:meth:`Hang.held_memoised` says whether it is held). None: the
    run did not time out there, no duration was measured, or the memoised runs do not answer it.

    Why: a plain reference whose cost is exponential in its argument (``HumanEval/55``'s naive
    recursion) answers nothing past a small bound in time, or answers it only in a second, so its
    time says nothing of the input's size and v8's rule never judges a hang there; the memoised run
    answers the same input at once. A program that hangs there is held to it only where it had kept
    the memoised run's pace on the costliest input past the range the two references part on: the naive
    recursion, correct and as slow as the plain reference, hangs exactly there, and is told apart by
    its time on those inputs. Each reference's time on an input is the fastest of its runs; the
    program's is its one run's, so the machine's load only makes it look slower (forgiven).

    ``cpu`` (filter v29): the program's pace and its time over the memoised run's, and where the two
    references part, read as CPU where every answered call of the program's run and of the
    reference's runs carries it (:func:`_cost`), wall time otherwise. On wall time the program's calls
    of microseconds on the inputs before the hang were read against the memoised run's tens of
    microseconds, and one wait for a core on each of the two inputs v22 reads made a program at the
    memoised pace look as slow as the naive recursion (red-team ``a15_fib_hang_55`` accepted in the
    jail in a full test run beside other load, rejected alone); a wait for a core is not in CPU time.

    ``leaning_witness`` (filter v31): where no input before the hang parts the two references but one
    leans apart (the plain reference past ``MEMO_LEAN_FACTOR`` times the memoised run), the costliest
    of those is ``memo_ratio``'s input. HumanEval/55's pinned plan holds n = 20 before its hang, where
    the plain reference took 17.4 times the memoised run's CPU, a hair past ``MEMO_PART_FACTOR`` (16):
    a few per cent of noise in either (a run after a guest stopped in its sleep, measured) left no input
    parted, and a spin past n = 30 at the memoised pace was forgiven as the naive recursion
    (red-team ``a15_fib_hang_55``, ``a22_sleep_pace_hang_55`` accepted in a full test run). A program
    at the plain reference's pace there is still twice past the bound, so the naive recursion stays
    forgiven."""
    found = _ended_far(plan, probe, reference)
    if found is None or long_input(plan, found[0]):
        return None
    end, records, by_run = found
    stuck = records.get(end)
    if stuck is None or stuck.status != "timeout" or stuck.duration_s <= 0:
        return None
    by_memo = _memo_records(plan, reference, options)
    if not by_memo:
        return None
    took = _reference_cost(by_memo, end)
    near = [
        c for pos in range(len(plan.inputs)) if pos not in plan.far and (c := _reference_cost(by_memo, pos))
    ]
    if not took or not near:
        return None
    # (v29) one clock for every time compared below: CPU where each answered call of the program's run
    # and of every reference run carries it (every call of a run does, or none does)
    on_cpu = cpu and all(
        r.cpu_s is not None for run in (records, *by_run, *by_memo) for r in run.values() if r.status == "ok"
    )
    ratios = [
        took_mine / theirs
        for pos in range(end)
        if pos not in plan.far
        and (mine := records.get(pos)) is not None
        and mine.status in ("ok", "error")
        and mine.duration_s > 0
        and (took_mine := _cost(mine, cpu=on_cpu)) > 0
        and (theirs := _reference_cost(by_memo, pos, cpu=on_cpu))
    ]
    pace = max(1.0, _median(ratios)) if ratios else 1.0
    # the generated inputs past the range before the hang where the plain reference took far longer
    # than its memoised run, or answered nothing in time (near the cases a call the harness slowed in
    # every plain run and the program's, the first generated one, is no cost of the problem): the
    # program's time over the memoised run's on the costliest of them for the plain reference (one it
    # did not answer first, the memoised run's costliest of those)
    parted: list[tuple[tuple[bool, float], float]] = []
    # (v22) the inputs where the plain reference took more than MEMO_LEAN_FACTOR times the memoised run
    leaning: list[tuple[tuple[bool, float], float]] = []
    for pos in range(end):
        mine = records.get(pos)
        if (
            pos not in plan.far
            or plan.origin[pos] != GENERATED
            or mine is None
            or mine.status != "ok"
            or mine.duration_s <= 0
        ):
            continue
        took_mine = _cost(mine, cpu=on_cpu)
        memo = _reference_cost(by_memo, pos, cpu=on_cpu)
        if took_mine <= 0 or not memo:
            continue
        plain = _reference_cost(by_run, pos, cpu=on_cpu)
        cost = (plain is None, memo if plain is None else plain)
        if plain is None or plain > MEMO_PART_FACTOR * memo:
            parted.append((cost, took_mine / memo))
        if plain is None or plain > MEMO_LEAN_FACTOR * memo:
            leaning.append((cost, took_mine / memo))
    costliest = max(parted) if parted else (max(leaning) if leaning_witness and leaning else None)
    others = [w for w in leaning if w != costliest]
    return Hang(
        end,
        stuck.duration_s,
        took,
        _median(near),
        pace=pace,
        memoised=True,
        memo_ratio=costliest[1] if costliest else 0.0,
        memo_ratio_next=max(others)[1] if others else 0.0,
    )


def memory_stop_held(
    plan: ProbePlan,
    probe: SandboxExecuted,
    reference: ReferenceExecuted,
    *,
    long_paced: bool = False,
    steady: bool = False,
    cpu: bool = False,
) -> bool:
    """(filter v11) Whether a probe run the host stopped for its memory ended on a generated input past
    the cases' range that every run of the reference answered with a value within ``HANG_NEAR_FACTOR``
    times its median input near the cases: the input is no larger problem than the task's own (a
    reference cannot fill hundreds of megabytes in the time it takes on the cases), so the stop is the
    program's doing, as its own exit is (:func:`ended_by_program`), and forgiving it would shield every
    input after it. A memory stop on an input the reference finds costly (the extremes of thousands of
    elements) stays forgiven. What it gives up, as the hang rule does: a correct program whose memory
    explodes with the input's size (every permutation of a list kept) where the reference's does not."""
    if not probe.memory_exceeded or probe.timed_out or probe.infra_error:
        return False
    return _cheap_end(plan, probe, reference, long_paced=long_paced, steady=steady, cpu=cpu)


def stack_stop_held(
    plan: ProbePlan,
    probe: SandboxExecuted,
    reference: ReferenceExecuted,
    *,
    long_paced: bool = False,
    steady: bool = False,
    cpu: bool = False,
) -> bool:
    """(filter v15) Whether a probe run the host stopped for its stack (``stack_overflow``: the WASM
    guest's C stack trapped, or the jail's interpreter faulted on its C stack, which kills the guest
    instead of raising ``RecursionError``) ended on a
    generated input past the cases' range that the reference answered as cheaply as the cases, read
    as :func:`memory_stop_held` reads a memory stop: the program's own end. Through v14 such a stop was
    forgiven as a stack a correct recursive program may run out of on a larger input, so a program
    printing a 200,000-deep nested list at the first far input shielded every input after it
    (red-team ``a14_c_recursion_far_13`` in WASM; ``a14_segv_deep_repr_far_13``, under a raised
    recursion limit, on both backends). A correct program's Python recursion ends in a
    ``RecursionError`` the stub reads as deep (v12), not in this trap. What it gives up, as the memory
    rule does: a correct program whose C recursion traps on a far input the reference answers cheaply."""
    if "stack_overflow" not in probe.violations or probe.timed_out or probe.infra_error:
        return False
    return _cheap_end(plan, probe, reference, long_paced=long_paced, steady=steady, cpu=cpu)


#: (filter v28, :func:`memory_hang_held`) the share of the memory a call had room for when it was
#: handed its input (what it grew while out, plus what the store's limit still allowed at the stop) that
#: it must have grown for its hang to read as a memory stop: at least this much of the room taken means
#: the guest's memory reached at least this much of its limit too. Measured (``a15_long_memory_fill_35``
#: on HumanEval/35's 256 MiB, WASM, the pinned seed): the long input's call cap stopped the filling at
#: 125 to 157 MiB of the 215 it had room for beside six busy processes, 141 on an idle machine whose
#: fresh pages were slow to come (58% to 73%); a spin grows none of it
MEMORY_HANG_SHARE = 0.5
#: (filter v28) and at least this many bytes: a call handed its input with the memory already at the
#: limit's edge (an earlier call grew it, and a guest's memory is never given back) takes most of the
#: little room left by growing a few pages, which says nothing of the call
MEMORY_HANG_MIN_BYTES = 32 << 20


def memory_hang_held(
    plan: ProbePlan,
    probe: SandboxExecuted,
    reference: ReferenceExecuted,
    *,
    long_paced: bool = False,
    steady: bool = False,
    cpu: bool = False,
) -> bool:
    """(filter v28) Whether a probe run that ended at its deadline or a call's cap (a hang) on a
    generated input past the cases' range was about to be stopped for its memory there, and that stop
    would be held (:func:`memory_stop_held`): the stopped call had grown the guest's linear memory by at
    least ``MEMORY_HANG_SHARE`` of the room it had when handed its input (``CaseResult.memory_grown``
    against ``memory_left``, read by the host at the stop; so at least that share of the store's limit
    was taken), and the input is one the reference answers as cheaply as the cases, or a long one where
    the program kept the reference's pace before it (:func:`_cheap_end`). A program filling the memory
    at a long input is stopped by the limit on an idle machine and by the call's cap on a loaded one
    (its filling slowed): through v27 the first was held and the second forgiven as a hang (a hang on a
    long input is forgiven whatever its cause: a correct cubic program hangs there too). The hang read
    as the stop it was about to be judges both alike. What it gives up is what the memory stop rule
    gives up: a correct program whose memory grows to most of the limit with the input's size where the
    reference's does not, on an input the reference answers cheaply, after keeping its pace (on an
    idle machine the same program runs into the limit and is held by v16), and one that peaks there,
    under the limit, and answers in time on an idle machine. A hang that grew the memory less (a cubic
    program's tables, a spin) is judged as any hang, and so is one whose call grew it by less than
    ``MEMORY_HANG_MIN_BYTES``. A run the limit also refused a grow (``memory_exceeded``: a program
    that caught the ``MemoryError`` of its filling and spun on) is read alike: through v27 its end at its
    time was no memory stop (:func:`memory_stop_held` reads a run that did not time out)."""
    if not probe.timed_out or probe.infra_error:
        return False
    found = _ended_far(plan, probe, reference)
    if found is None:
        return False
    record = found[1].get(found[0])
    if (
        record is None
        or record.status != "timeout"
        or record.memory_grown is None
        or record.memory_left is None
    ):
        return False
    room = record.memory_grown + record.memory_left
    if record.memory_grown < max(MEMORY_HANG_MIN_BYTES, MEMORY_HANG_SHARE * room):
        return False
    return _cheap_end(plan, probe, reference, long_paced=long_paced, steady=steady, cpu=cpu, found=found)


def _cheap_end(
    plan: ProbePlan,
    probe: SandboxExecuted,
    reference: ReferenceExecuted,
    *,
    long_paced: bool = False,
    steady: bool = False,
    cpu: bool = False,
    found: tuple[int, dict[int, CaseResult], list[dict[int, CaseResult]]] | None = None,
) -> bool:
    """The run ended on a generated input past the range, not a long one, that every run of the
    reference answered within ``HANG_NEAR_FACTOR`` times its median input near the cases. Under
    ``long_paced`` (filter v16) a long one too, where the program kept the reference's pace before it
    (:func:`_grew`). ``cpu`` (filter v26): times read as CPU where the runs carry it (:func:`_cost`).
    ``found``: :func:`_ended_far`'s answer where the caller already has it (its records of every run)."""
    if found is None:
        found = _ended_far(plan, probe, reference)
    if found is None:
        return False
    end, records, by_run = found
    if long_input(plan, end):
        # (v16) the reference's time there is mostly the input's way into the guest: a long input it
        # answered is the program's own end where the program kept its pace before
        return (
            long_paced
            and _reference_cost(by_run, end) is not None
            and not _grew(plan, records, by_run, end, steady=steady, cpu=cpu)
        )
    near = [
        c
        for pos in range(len(plan.inputs))
        if pos not in plan.far and (c := _reference_cost(by_run, pos, cpu=cpu))
    ]
    took = _reference_cost(by_run, end, cpu=cpu)
    return bool(took and near) and took <= HANG_NEAR_FACTOR * _median(near)  # type: ignore[operator]


def cheap_far(
    plan: ProbePlan,
    reference: ReferenceExecuted,
    probe: SandboxExecuted | None = None,
    memoised: frozenset[int] = frozenset(),
    *,
    steady: bool = False,
    cpu: bool = False,
) -> frozenset[int] | None:
    """(filter v12) The generated positions past the cases' range that every run of the reference
    answered with a value within ``HANG_NEAR_FACTOR`` times its median input near the cases, as
    :func:`memory_stop_held` reads the run's end: no larger problem than the task's own, so a
    ``MemoryError`` the call raised there is the program's doing, not the input's cost (None: the
    reference's runs are not of this plan, or it timed nothing near the cases). With ``probe`` (filter
    v16) also the long inputs the reference answered, and (filter v17) the positions of ``memoised``
    (:func:`memoised_answers`: answered by the memoised reference alone) that no plain run answered,
    each where the program kept the plain reference's pace before it (:func:`_grew`). ``cpu`` (filter
    v26): times read as CPU where the runs carry it (:func:`_cost`)."""
    runs = [reference.execution, *reference.reruns]
    if any(r.infra_error or r.probe != plan.digest for r in runs):
        return None
    by_run = [_records(r) for r in runs]
    near = [
        c
        for pos in range(len(plan.inputs))
        if pos not in plan.far and (c := _reference_cost(by_run, pos, cpu=cpu))
    ]
    if not near:
        return None
    bound = HANG_NEAR_FACTOR * _median(near)
    short = frozenset(
        pos
        for pos in plan.far
        if plan.origin[pos] == GENERATED
        and not long_input(plan, pos)
        and (took := _reference_cost(by_run, pos, cpu=cpu))
        and took <= bound
    )
    if probe is None:
        return short
    # (v16, ``probe`` given) a long input the reference answered, where the program kept the reference's
    # pace before it (the reference's time there is mostly the input's way into the guest: no measure of
    # the problem's size); (v17, ``memoised``) so is an input only the memoised reference answered: the
    # plain reference's recursion is what is slow there, not the problem, which its memoised run answers
    records = _records(probe)
    return short | frozenset(
        pos
        for pos in plan.far
        if plan.origin[pos] == GENERATED
        and (
            (long_input(plan, pos) and _reference_cost(by_run, pos) is not None)
            or (pos in memoised and _reference_cost(by_run, pos) is None)
        )
        and not _grew(plan, records, by_run, pos, steady=steady, cpu=cpu)
    )


#: (filter v16, :func:`_grew`) the share of the inputs past the range, the largest, on which the
#: program's time is read against the reference's
GREW_SHARE = 0.1
#: (filter v17, :func:`_grew` ``steady``) what the program must take beyond the reference on each of
#: those inputs for its cost to count as grown: a call of microseconds the machine's load stretched is
#: no cost of the algorithm's (a quadratic program on a 256-element far input takes tens of ms)
GREW_MIN_EXTRA_S = 0.002


def _grew(
    plan: ProbePlan,
    records: dict[int, CaseResult],
    by_run: Sequence[dict[int, CaseResult]],
    before: int,
    *,
    steady: bool = False,
    cpu: bool = False,
) -> bool:
    """(filter v16) Whether the program was slower than the reference, on the largest inputs past the
    cases' range it answered before position ``before`` (the largest ``GREW_SHARE`` of them by their
    text, at least three), by more than ``HANG_PACE_FACTOR`` times its pace near the cases (the median
    of its time over the reference's there, at least 1: the machine's load on the probe run and the
    program's own per-call cost): it showed a cost that grows with the input faster than the
    reference's, so running out of time, memory or stack on a long input is its algorithm's limit
    (every subset of a 20-element list summed: hundreds of milliseconds where the reference takes a
    tenth of one). A program that answered them at the reference's pace did not: a long input the
    reference answered is no larger problem for it either. Not medians over every input past the
    range: most of those are a case's own short list with its numbers scaled, where an exponential
    program is as quick as the reference.

    ``steady`` (filter v17): on *every* one of those largest inputs, and by at least ``GREW_MIN_EXTRA_S``
    on each, not on their median. A cost that grows with the input shows on each of the largest; the
    machine's load stretches some calls of a run and not others, and under v16 a program answering in
    microseconds whose three largest far inputs happened to be two of the stretched ones counted as
    grown, so its memory stop on a long input was forgiven (red-team ``a15_long_memory_fill_35`` accepted
    in a full test run beside other load, rejected alone).

    ``cpu`` (filter v26): each time is the CPU the guest's thread spent on the call where the program's
    run and every run of the reference carry it (:func:`_cost`; a WASM run does), wall time otherwise.
    v17's ``steady`` made a stretch that forgives rare without removing it: a stretch is time the guest
    spent off a core, which its CPU clock does not count."""

    # the program's time and the reference's (its fastest run) on each input answered before ``before``
    timed: dict[int, tuple[float, float]] = {}
    for pos in range(before):
        mine = records.get(pos)
        if mine is None or mine.status != "ok":
            continue
        # both on one clock: CPU where the program's call and every reference run carry it, else wall
        theirs_cpu = (
            _reference_cost(by_run, pos, cpu=True, only=True) if cpu and mine.cpu_s is not None else None
        )
        took = _cost(mine, cpu=True) if theirs_cpu else mine.duration_s
        theirs = theirs_cpu or _reference_cost(by_run, pos)
        if took > 0 and theirs:
            timed[pos] = (took, theirs)
    near = [m / t for pos, (m, t) in timed.items() if pos not in plan.far]
    far = sorted(
        (pos for pos in timed if pos in plan.far), key=lambda pos: len(plan.inputs[pos]), reverse=True
    )
    if not far:
        return False
    top = far[: max(3, int(len(far) * GREW_SHARE))]
    largest = [timed[pos][0] / timed[pos][1] for pos in top]
    pace = max(1.0, _median(near)) if near else 1.0
    if not steady:
        return _median(largest) > HANG_PACE_FACTOR * pace
    return min(largest) > HANG_PACE_FACTOR * pace and all(
        timed[pos][0] - timed[pos][1] >= GREW_MIN_EXTRA_S for pos in top
    )


def long_input(plan: ProbePlan, pos: int) -> bool:
    """(p10/c10) Whether ``pos`` is one of the long inputs at the end of the run (the extremes that are
    not machine bounds: ``ProbePlan.ends`` outside ``ProbePlan.wide``). Their sized arguments lie past
    the far inputs' reach, the size limit within which a correct program whose cost grows with size
    (every subset of a list summed) is held to finish; from p10/c10 on most are between that reach and
    1000 elements, where the reference's time is still that of the task's own inputs: a hang, a memory
    stop or a ``MemoryError`` there is forgiven, as such a run at the p8/p9 long inputs (1000 elements
    on, which the reference finds costly) was. Only a value there counts. From filter v16 a
    ``MemoryError``, a memory stop or a stack stop there is held as on a cheap far input where the
    program kept the reference's pace on the largest far inputs (:func:`_grew`); a hang is
    still forgiven."""
    return plan.version in BANDED_VERSIONS and pos >= len(plan.inputs) - plan.ends and pos not in plan.wide


def _ended_far(
    plan: ProbePlan, probe: SandboxExecuted, reference: ReferenceExecuted
) -> tuple[int, dict[int, CaseResult], list[dict[int, CaseResult]]] | None:
    """Where a probe run ended before answering every position, when that is a generated input past the
    cases' range and every run of the reference ran the same plan: that position, the run's records and
    each reference run's (None otherwise)."""
    runs = [reference.execution, *reference.reruns]
    if any(r.infra_error or r.probe != plan.digest for r in runs):
        return None
    records = _records(probe)
    # where the run ended: past every answered position (a run resumed past a hang near the cases,
    # filter v25, answered after it; one never resumed answers nothing after its first unanswered)
    last = max((pos for pos, r in records.items() if r.status in ("ok", "error")), default=-1)
    end = next(
        (
            pos
            for pos in range(last + 1, len(plan.inputs))
            if pos not in records or records[pos].status in _UNANSWERED
        ),
        None,
    )
    if end is None or end not in plan.far or plan.origin[end] != GENERATED:
        return None
    return end, records, [_records(r) for r in runs]


def _reference_cost(
    by_run: Sequence[dict[int, CaseResult]], pos: int, *, cpu: bool = False, only: bool = False
) -> float | None:
    """The reference's time on a position: the fastest of its runs (None: a run did not answer it with
    a value; 0: no duration was measured). ``cpu`` (filter v26): its CPU time where every run carries
    one (:func:`_cost`); with ``only``, None where one does not, rather than its wall time."""
    found = [r for records in by_run if (r := records.get(pos)) is not None and r.status == "ok"]
    if len(found) < len(by_run):
        return None
    on_cpu = cpu and all(r.cpu_s is not None for r in found)
    if only and not on_cpu:
        return None
    return min(_cost(r, cpu=on_cpu) for r in found)


def _cost(record: CaseResult, *, cpu: bool) -> float:
    """(filter v26) A call's time: the CPU its guest's thread spent on it where ``cpu`` and the run
    measured one (``CaseResult.cpu_s``: WASM), its wall time otherwise. Wall time grows with the
    machine's load (a call of microseconds stretched to milliseconds while the guest waits for a
    core); CPU time grows with the work the call does, which is what a cost rule asks about."""
    return record.cpu_s if cpu and record.cpu_s is not None else record.duration_s


def _sizes(text: str) -> tuple[float, ...] | None:
    """Each argument's size, for :func:`_dominates`: a string's or a container's number of elements
    (nested containers counted through, a string element as its characters), a number's magnitude,
    0 for anything else (None: not a literal)."""
    args = _arguments(text)
    return tuple(_size(a, top=True) for a in args) if args else None


def _size(value: object, *, top: bool = False) -> float:
    if isinstance(value, (str, bytes)):
        return float(len(value))
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, (list, tuple, set, frozenset)):
        return float(sum(_size(v) if isinstance(v, _SIZED) else 1 for v in value))
    if top and isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(abs(value))
    return 0.0


def _dominates(larger: tuple[float, ...] | None, smaller: tuple[float, ...] | None) -> bool:
    """Whether one input is at least as large as another in every argument and larger in one."""
    return (
        larger is not None
        and smaller is not None
        and len(larger) == len(smaller)
        and all(a >= b for a, b in zip(larger, smaller, strict=True))
        and any(a > b for a, b in zip(larger, smaller, strict=True))
    )


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[len(ordered) // 2]


def _growth(far: Sequence[float], near: Sequence[float]) -> float:
    """The median of ``far`` against the median of ``near`` (1.0 where either is empty or unmeasured)."""
    if not far or not near:
        return 1.0
    a, b = _median(far), _median(near)
    return a / b if a > 0 and b > 0 else 1.0


#: how many reads :func:`_per_reference` keeps (six functions' reads of 16 pairs of a plan and its runs)
REFERENCE_READS_KEPT = 96
_READS: OrderedDict[tuple[object, ...], tuple[ProbePlan, ReferenceExecuted, object]] = OrderedDict()
_READS_LOCK = threading.Lock()
_Read = TypeVar("_Read", bound=Callable[..., Any])


def _per_reference(fn: _Read) -> _Read:
    """What ``fn`` reads from a plan and the reference's runs of it (and the compare options), read once
    per pair of objects: the reference's runs of a group's plan judge each of the group's samples, and
    the filter is handed the same objects for each (the plan from :func:`recorded_plan`'s cache, the
    runs from the state's decoded events, ``infra/runtime/state.py``), where each sample read them all
    again (parsing every answer). Keyed by the two objects' identity (both frozen: their content cannot
    change), which an entry holds, so an id is not reused while it is kept; the last
    :data:`REFERENCE_READS_KEPT` reads kept per process (a few MB at most: the runs are tens of KB).
    A dict comes back as a copy of the kept one."""

    @functools.wraps(fn)
    def read(plan: ProbePlan, reference: ReferenceExecuted, *args: Any, **kwargs: Any) -> Any:
        key = (fn.__name__, id(plan), id(reference), *args, *sorted(kwargs.items()))
        with _READS_LOCK:
            kept = _READS.get(key)
            if kept is not None and kept[0] is plan and kept[1] is reference:
                _READS.move_to_end(key)
                found = kept[2]
                return dict(found) if isinstance(found, dict) else found
        found = fn(plan, reference, *args, **kwargs)
        with _READS_LOCK:
            _READS[key] = (plan, reference, found)
            _READS.move_to_end(key)
            while len(_READS) > REFERENCE_READS_KEPT:
                _READS.popitem(last=False)
        return dict(found) if isinstance(found, dict) else found

    return read  # type: ignore[return-value]


@_per_reference
def reference_answers(
    plan: ProbePlan, reference: ReferenceExecuted, options: CompareOptions
) -> dict[int, object]:
    """Probe position -> the reference's answer, for the generated inputs on which every run of the
    reference returned the same plain value."""
    runs = [reference.execution, *reference.reruns]
    if any(r.infra_error or r.probe != plan.digest for r in runs):
        return {}
    by_run = [_records(r) for r in runs]
    out: dict[int, object] = {}
    for pos in plan.generated_positions:
        values = [_value(records.get(pos), options) for records in by_run]
        first = values[0]
        if first is _NONE or any(v is _NONE or not values_match(first, v, options) for v in values[1:]):
            continue
        out[pos] = first
    return out


@_per_reference
def memoised_answers(
    plan: ProbePlan, reference: ReferenceExecuted, options: CompareOptions, *, partial: bool = False
) -> dict[int, object]:
    """Probe position -> the answer of the reference with its recursive functions memoised
    (``reference.memoised``, see ``streams/probe/memo.py``), at the generated inputs no plain run of the
    reference settled (each too slow for it) and every memoised run answered with the same plain value.
    None count unless every memoised run answered every input a plain run settled exactly as that run
    did: a reference whose answers depend on more than its arguments is not the same function memoised.

    With ``partial`` (filter v22) also at the inputs some plain runs settled and others did not (one
    finished near its deadline, another ran out there). Through v21 such an input was answered by
    neither: :func:`reference_answers` wants every plain run's value, and the memoised runs stood in only
    where no plain run settled it, so nothing was judged there, a hang included (``HumanEval/55``'s
    naive recursion takes 0.8 s to 1.5 s on n = 33, about its run's deadline). The plain runs that
    settled it agree with every memoised run there already (:func:`_memo_records`)."""
    by_memo = _memo_records(plan, reference, options)
    if not by_memo:
        return {}
    plain = [_records(r) for r in (reference.execution, *reference.reruns)]
    out: dict[int, object] = {}
    for pos in plan.generated_positions:
        settled_by = [pos in records and records[pos].status in ("ok", "error") for records in plain]
        if all(settled_by) if partial else any(settled_by):
            continue
        values = [_value(records.get(pos), options) for records in by_memo]
        first = values[0]
        if first is _NONE or any(v is _NONE or not values_match(first, v, options) for v in values[1:]):
            continue
        out[pos] = first
    return out


def _memo_records(
    plan: ProbePlan, reference: ReferenceExecuted, options: CompareOptions
) -> list[dict[int, CaseResult]] | None:
    """Each memoised run's records, where every run (plain and memoised) is of this plan and every
    memoised run settled each input a plain run settled exactly as that run did (None otherwise: no
    memoised run, or a reference whose answers depend on more than its arguments)."""
    runs = [reference.execution, *reference.reruns]
    memo = list(reference.memoised)
    if not memo or any(r.infra_error or r.probe != plan.digest for r in (*runs, *memo)):
        return None
    by_memo = [_records(r) for r in memo]
    for records in (_records(r) for r in runs):
        for pos, record in records.items():
            if record.status not in ("ok", "error"):
                continue
            for other in by_memo:
                again = other.get(pos)
                if again is None or again.status != record.status:
                    return None
                if record.status == "ok" and not _same_value(record, again, options):
                    return None
    return by_memo


@_per_reference
def reference_refusals(plan: ProbePlan, reference: ReferenceExecuted) -> frozenset[str]:
    """The errors (``Name: text``, as the guest reports them) the reference raises on inputs of the plan
    beyond the cases' range (``ProbePlan.far``), each at a position where every run of it raised that
    same error: the task's own refusals out there. Only there: an error it raises near the cases (an
    empty list's ``IndexError``) says nothing about a program that raises it on long inputs."""
    runs = [reference.execution, *reference.reruns]
    if any(r.infra_error or r.probe != plan.digest for r in runs):
        return frozenset()
    by_run = [_records(r) for r in runs]
    out: set[str] = set()
    for pos in sorted(plan.far):
        found = [records.get(pos) for records in by_run]
        texts = {r.error for r in found if r is not None and r.status == "error" and r.error}
        if len(texts) == 1 and all(r is not None and r.status == "error" for r in found):
            out |= texts
    # a result dropped for the size of what came before is the run's, not the function's
    return frozenset(out - {RESULT_NOT_KEPT})


@_per_reference
def refused_alike(plan: ProbePlan, reference: ReferenceExecuted) -> frozenset[int]:
    """(filter v7) The generated positions past the cases' range (``ProbePlan.far``) whose input is
    *alike* an input of the plan the reference refuses there (raises in every run the same error), where
    a program's error is forgiven even though the reference answers that input with a value.

    An input ``x`` is alike a refused input ``y`` when ``y`` is ``x`` with one or more of ``x``'s
    empty arguments (a string, bytes, a list, a dict, a set with nothing in it) non-empty and every
    other argument the same (:func:`_alike`; p7/c7 plans hold such a twin, filled from the cases, beside
    each such input past the range: ``streams.probe.plan._filled``). Why that and nothing wider: a
    function answers an empty argument without reading the others against it (the reference's
    ``bytes(b ^ key for b in data)`` is ``b''`` for any key when ``data`` is empty), so its value there
    says nothing about whether the task admits those other arguments; the same function given
    something to read refuses them (``key`` past 255), and the task's own function refusing the very
    same other arguments is the evidence that they lie outside its domain, where a correct program may
    refuse them sooner (``key.to_bytes(1, ...)`` raises before it looks at ``data``), in words of its
    own: the error's class and text need not be the reference's. What is forgiven is tied to the
    input: an input the reference answers whose arguments it was made to read (nothing empty, or no
    refused twin) forgives no error, whatever its text, so a program cannot borrow the reference's
    refusal of one input (a key past 255) to refuse others the task defines (a key of 64 with data,
    in the reference's own words: filter v6 forgave that, :func:`reference_refusals`). What it gives
    up: a program that refuses an empty input whose filled twin the reference refuses is not held to
    the reference's value there, right or wrong (that value is the trivial one of an empty argument)."""
    runs = [reference.execution, *reference.reruns]
    if any(r.infra_error or r.probe != plan.digest for r in runs):
        return frozenset()
    by_run = [_records(r) for r in runs]
    refused: list[tuple[object, ...]] = []
    for pos in sorted(plan.far):
        found = [records.get(pos) for records in by_run]
        texts = {r.error for r in found if r is not None and r.status == "error" and r.error}
        if (
            len(texts) == 1
            and texts != {RESULT_NOT_KEPT}
            and all(r is not None and r.status == "error" for r in found)
        ):
            refused.append(_arguments(plan.inputs[pos]))
    if not refused:
        return frozenset()
    return frozenset(
        pos
        for pos in sorted(plan.far)
        if plan.origin[pos] == GENERATED and any(_alike(_arguments(plan.inputs[pos]), y) for y in refused)
    )


def _alike(x: tuple[object, ...], y: tuple[object, ...]) -> bool:
    """``y`` is ``x`` with some of ``x``'s empty arguments non-empty (of the same kind) and every other
    argument the same (the same text: ``1`` and ``True`` are not the same argument here)."""
    if not x or len(x) != len(y):
        return False
    filled = False
    for a, b in zip(x, y, strict=True):
        if repr(a) == repr(b):
            continue
        if type(a) is type(b) and isinstance(a, _FILLED) and len(a) == 0 and len(b) > 0:  # type: ignore[arg-type]
            filled = True
            continue
        return False
    return filled


#: the kinds of argument whose empty value :func:`_alike` reads as unread
_FILLED = (str, bytes, list, tuple, dict, set, frozenset)

#: (filter v18) words by which a task's statement keeps an argument from being empty ("a non-empty
#: list", "of length at least two", "the list is never empty"): where it says one, a program may refuse
#: an empty argument whatever the reference answers there
NON_EMPTY_STATED = re.compile(
    r"non[-\s]?empty|not\s+(?:be\s+)?empty|never\s+empty|at\s+least\s+(?:one|two|three|[1-9])\b"
    r"|length\s*(?:>=|>|\u2265)\s*\d",
    re.IGNORECASE,
)


def empty_refusals_held(task: TaskPublished, plan: ProbePlan) -> frozenset[int]:
    """(filter v18) The positions among the inputs that widen the cases' domain (``ProbePlan.wide``)
    whose input has an argument empty (a string, bytes, a list, a tuple, a dict, a set with nothing in
    it) where no case (no check call) has that argument empty, on a task whose statement does not keep
    that argument from being empty (:data:`NON_EMPTY_STATED`). The plan places an input shorter than
    every case among those that widen the domain, where an error is never judged (a refusal is the
    program's right there), so a program raising on an empty list the task admits (``max(l) < t`` on
    HumanEval/52, whose reference answers ``True``: every number of ``[]`` is below ``t``) was accepted
    on every seed. At these positions an error is judged as one past the cases' range is (filter v7):
    a wrong answer where the reference answers with a value, unless it is a resource limit or the
    reference refuses the input's twin with its empty arguments filled (:func:`refused_alike`).
    What it gives up: a correct program that refuses an empty argument the statement excludes in words
    this does not read, where the reference answers it. Not held: p24's empty tokens
    (``ProbePlan.tokens_emptied``: a string emptied where every case's is one class of characters, an
    empty word or message "a word", "two words" may rule out: f46c_ok_* refusing them were rejected),
    where only a value is judged."""
    if plan.source == "reseeded" or NON_EMPTY_STATED.search(task.prompt):
        return frozenset()
    if plan.source == "check":
        shown = [_arguments(plan.inputs[p]) for p in plan.head_positions]
    else:
        shown = [_arguments(text) for text in case_inputs(task)]
    shown = [a for a in shown if a]
    if not shown:
        return frozenset()

    def empty(value: object) -> bool:
        return isinstance(value, _FILLED) and len(value) == 0  # type: ignore[arg-type]

    held = set()
    for pos in plan.wide - plan.tokens_emptied:
        args = _arguments(plan.inputs[pos])
        if any(
            empty(value) and not any(i < len(case) and empty(case[i]) for case in shown)
            for i, value in enumerate(args)
        ):
            held.add(pos)
    return frozenset(held)


def digests_judge(options: CompareOptions) -> bool:
    """(filter v21) Whether digests can judge under ``options``: an ``E`` digest against an ``N`` one
    is the comparer's equality only under its ``numeric`` rule without code-v1's int tolerance."""
    return options.int_float == "numeric" and not options.int_tolerance


@_per_reference
def reference_digests(
    plan: ProbePlan, reference: ReferenceExecuted, options: CompareOptions
) -> dict[int, str] | None:
    """(filter v21) Probe position -> the digest of the reference's answer (``schemas.digest``), at the
    generated inputs where some run of the reference reported its answer by digest alone (its text
    could not travel: ``CaseResult.digest``) and every run's answer has that one digest, of kind ``E``
    (the value of exact kinds: only there do digests judge; a run that kept its answer's text counts
    by the host's digest of that value). None: digests cannot judge under ``options``."""
    if not digests_judge(options):
        return None
    runs = [reference.execution, *reference.reruns]
    if any(r.infra_error or r.probe != plan.digest for r in runs):
        return {}
    by_run = [_records(r) for r in runs]
    out: dict[int, str] = {}
    for pos in plan.generated_positions:
        found = [records.get(pos) for records in by_run]
        if not any(r is not None and r.status == "error" and r.digest is not None for r in found):
            continue
        digests = {_digest_of(r, options) for r in found}
        if len(digests) == 1 and (only := digests.pop()) is not None and only[0] == "E":
            out[pos] = only
    return out


def _digest_of(record: CaseResult | None, options: CompareOptions) -> str | None:
    """The digest of a record's answer: the stub's, where its text could not travel; the host's, of
    the value read back from its text; None where it answered none."""
    if record is None:
        return None
    if record.status == "error":
        return record.digest
    value = _value(record, options)
    return None if value is _NONE else value_digest(value)


@_per_reference
def reference_settled(plan: ProbePlan, reference: ReferenceExecuted) -> frozenset[int]:
    """Probe positions every run of the reference finished at once, with a value or an error (not a
    hang): an input a program should settle too, if only by raising."""
    runs = [reference.execution, *reference.reruns]
    if any(r.infra_error or r.probe != plan.digest for r in runs):
        return frozenset()
    by_run = [_records(r) for r in runs]
    return frozenset(
        pos
        for pos in range(len(plan.inputs))
        if all(pos in records and records[pos].status in ("ok", "error") for records in by_run)
    )


def examine(
    task: TaskPublished,
    plan: ProbePlan,
    first: Correctness,
    probe: SandboxExecuted,
    answers: dict[int, object],
    options: CompareOptions,
    settled: frozenset[int] = frozenset(),
    reference: SandboxExecutedV2 | None = None,
    memoised: dict[int, object] | None = None,
    *,
    far_errors: bool = False,
    refusals: frozenset[str] = frozenset(),
    refused: frozenset[int] = frozenset(),
    sequences: bool = False,
    deques: bool = False,
    domain: bool = False,
    hang: Hang | None = None,
    positional_ties: bool = False,
    own_end: bool = False,
    size_limits: bool = False,
    stated: tuple[Stated, ...] = (),
    flooded: int | None = None,
    thread_limits: frozenset[int] = frozenset(),
    deep_limits: frozenset[int] | None = None,
    cheap: frozenset[int] | None = None,
    float_read: bool = False,
    conversion_cost: bool = False,
    tie_either: bool = False,
    empty_held: frozenset[int] = frozenset(),
    mean_band: bool = False,
    digested: dict[int, str] | None = None,
    attainable: bool = False,
    resumed: bool = False,
    memory_hang: bool = False,
    answer_kinds: bool = False,
    ascii_twins: bool = False,
) -> ProbeReport:
    """Compare the probe run with the first run (on the task's cases) and with the reference's
    ``answers`` (on generated inputs). The run ending (a hang, an exit) on an input it should have
    settled (a case, or an input the reference answers or rejects at once: ``settled``) is decisive;
    a run cut short by an input too slow for the reference too says nothing about the rest.
    ``memoised`` answers inputs too slow for the plain reference (:func:`memoised_answers`): like an
    input beyond the cases' range, only a value is judged there (a program as slow as the reference may
    hang), and it is never an input the program should have settled. Under ``far_errors`` (filter v5)
    an error past the cases' range counts as a wrong answer where the reference answered with a value,
    unless it is a resource limit (:func:`resource_limit`): a correct recursive program may run out of
    stack on a far input an iterative reference answers. Nor is (filter v6) an error the reference
    raises itself on an input past the cases' range (``refusals``, :func:`reference_refusals`): the task's own
    function refuses such inputs, and where its refusal begins past the cases is not the cases' to say.
    From filter v7 ``refusals`` is empty and the forgiveness is tied to the input instead: any error at a
    position of ``refused`` (:func:`refused_alike`: the reference refuses the same input with its empty
    arguments filled), none elsewhere.
    Under ``sequences`` (filter v6, a plan made from a check that compares every answer through
    ``tuple()``/``list()``: :func:`streams.probe.plan.check_compares_sequences`) a list and a tuple of
    the same elements are one answer, as the check itself compares them (an ``array.array`` too; from
    filter v20, ``deques``, a ``deque`` too). Under ``domain`` (filter v6)
    an input outside the domain the cases show (:func:`outside_cases`) is not judged at all. ``hang``
    (filter v8, :func:`hang_timing`, passed only where :meth:`Hang.held` says so) is a hang past the
    cases' range held against the program: where the run hung there on an input the reference answers
    (counted: inside the domain, no tie, not of a kind no case shows), the report carries it. Under
    ``positional_ties`` (filter v8: the task's statement breaks ties by position,
    :func:`ties_by_position`) an input the reference answers otherwise than its mirror is judged like
    any other: its answer is the one the statement fixes, not one of two.
    Under ``own_end`` (filter v9: the program ended its run itself, :func:`ended_by_program`) ending on
    an input past the cases' range that every run of the reference settled is held against it as
    near the cases: the run's end there is the program's doing, not the input's cost, and forgiving it
    would shield every input after it (the rest of the range and the cases asked again). Under
    ``size_limits`` (filter v9) an answer refused for its size alone where the reference's fit
    (:func:`size_refused`) is a resource limit: not judged, on a case asked again or a generated input.
    ``stated`` (filter v10, :func:`streams.probe.statement.stated_bounds`): a generated input that breaks
    a bound the task's statement puts on an argument (``1 <= n <= 10^3``) is not judged at all: the
    reference's answer there is one function's, and a correct program may refuse it.
    ``flooded`` (filter v11, ``SandboxExecuted.output_flood``): the position whose call the host
    stopped for its own output; where the run ended there, that call is judged as a wrong answer
    wherever the reference answered it, past the range too (the flood is the program's doing, not the
    input's cost; forgiven as the output cap, it shielded every input after it). ``thread_limits``
    (filter v11, ``SandboxExecuted.thread_recursion``): the positions whose error followed a
    RecursionError on one of the program's threads; past the range such an error is forgiven as a
    resource limit, exactly as a RecursionError raised by the call itself is. ``deep_limits`` (filter
    v12, ``SandboxExecuted.deep_recursion``; None where the run did not record it: v11's rule): the
    positions whose call raised a RecursionError on a deep stack of calls; past the range a
    RecursionError is forgiven only there (or on a thread: ``thread_limits``), not for its name (a
    program raising RecursionError itself on a shallow stack answered wrongly, as one raising
    ValueError). What stays open: a program that recurses deep on purpose, past the range, to end
    in a RecursionError is forgiven, as correct recursive programs that run out of stack there are.
    ``cheap`` (filter v12, :func:`cheap_far`; None: v11's rule): the positions past the range the
    reference answered as cheaply as the cases; a MemoryError the call raised there is a wrong answer
    (the input is no larger problem: the program filled the memory itself), elsewhere past the range
    it is forgiven. What it gives up, as :func:`memory_stop_held` does: a correct program whose memory
    explodes with the input's size where the reference's does not. Through v12 the int/str conversion
    limit is forgiven by its text. Under ``float_read`` (filter v13) an answer that differs from the
    reference's where floats are forgiven only at integers past 2**53 that the reference holds at a
    double's exact value and the program's rounds to (:func:`read_through_float`) is not judged: the
    reference read the number through a float, and an exact program cannot agree with it there. Under
    ``conversion_cost`` (filter v13, with ``cheap``) a ValueError of the int/str conversion limit the
    call raised past the range is forgiven only on an input the reference found costly too, or one
    holding a run of more digits than the limit (:data:`INT_MAX_STR_DIGITS`), not for its message:
    through v12 a program raising it (or converting a 5000-digit number of its own) on every input past
    the range was judged on none of them. Under ``tie_either`` (filter v16) an input the reference answers
    otherwise than its mirror (a tie the statement leaves open) is judged, not left out: either
    answer, the reference's on it or on its mirror, is right there, and no other (through v15 any answer
    was, so a program answering a tie with the pair in the wrong order was accepted). ``empty_held``
    (filter v18, :func:`empty_refusals_held`): positions among the inputs that widen the domain where
    an error is judged as past the range, not forgiven as a refusal (an empty argument the task admits).
    Under ``mean_band`` (filter v19) a float answer that is the mean of the input's numbers is forgiven
    a disagreement within the bound of a sum's order divided by the count (:func:`_within_rounding`'s
    ``propagated``), not within the sum's own bound (n times the mean's). Under ``attainable`` (filter
    v23) where the reference's float is one of the input's numbers' sum or mean as some order evaluates
    it, the program's must also lie within those evaluations' spread widened by half of it
    (:func:`_within_rounding`'s ``attainable``): the bound is the worst case of any order, which on
    numbers that cancel is far wider than every order's actual spread.
    ``digested`` (filter v21, :func:`reference_digests`; None: off): the reference's answers known by
    digest alone; an answer whose text could not travel (its record carries the stub's digest), on a
    generated input or a case asked again, and any answer where the reference's is known by digest
    alone, is judged by digests where the value it is held to is of exact kinds
    (:func:`schemas.digest.digests_equal`): equal or a wrong answer, never left out for its size.
    Under ``resumed`` (filter v25: a run resumed past a hang on a generated input near the cases,
    ``streams/sandbox/resume.py``) a hang on such an input that the reference did not settle either
    (no duty) does not end the judgement: that input is left out and the run is judged on after it, up
    to its next unanswered input; a hang on an input the reference settled ends it as before (stuck),
    unless the resumed run spent more of its time on the calls it answered than on that one
    (:func:`_outran`: its deadline ran out, which a correct program slower per call than the
    reference reaches on fifty near inputs asked again). Under ``memory_hang`` (filter v28,
    :func:`memory_hang_held`: the run's hang was a memory stop about to be, held as one) with
    ``own_end``, a run that ended at a call its time stopped (``timeout``) is judged as ``own_end``
    judges one the program ended itself: the end is the program's doing. Under ``answer_kinds`` (filter
    v30, :func:`unshown_kinds`) an input the reference answers with a value of a kind no expected answer
    of the task shows owes no answer: a refusal there (an error, a hang, an exit) is forgiven, a value is
    judged as anywhere. Under ``ascii_twins`` (filter v33, :func:`ascii_twins_agree`) an input holding
    text past ASCII that the statement keeps to ASCII is judged where the reference answers its ASCII
    twins as it answers it, and its ``#`` twin is judged as no input of its own."""
    cases = expected_cases(task)
    # an input too slow for the plain reference is one a correct program may be too slow for as well
    slow = {p: v for p, v in (memoised or {}).items() if p not in answers and p not in settled}
    if stated:
        alike = ascii_twins_agree(plan, answers) if ascii_twins else frozenset()
        beyond = frozenset(
            pos
            for pos in plan.generated_positions
            if _beyond_statement(
                stated, _arguments(plan.inputs[pos]), answers.get(pos, _NO_ANSWER), read_alike=pos in alike
            )
        )
        answers = {p: v for p, v in answers.items() if p not in beyond}
        slow = {p: v for p, v in slow.items() if p not in beyond}
        settled = frozenset(p for p in settled if p not in beyond)
    if ascii_twins and plan.ascii_twins:
        # (v33) an input's '#' twin stands in for a reading of its characters past ASCII: it tells the
        # reference's answers apart and is judged as no input of its own (a '#' no case shows lies
        # outside a statement of English letters: HumanEval/118's reference counts it a consonant,
        # and a correct program reading it as no letter was rejected, f44c_ok_isalpha_consonant_118)
        stand_ins = {plan.inputs[other] for _, _, other in plan.ascii_twins}
        standing = frozenset(p for p in plan.generated_positions if plan.inputs[p] in stand_ins)
        answers = {p: v for p, v in answers.items() if p not in standing}
        slow = {p: v for p, v in slow.items() if p not in standing}
        settled = frozenset(p for p in settled if p not in standing)
    if domain:
        outside = outside_cases(plan, cases)
        answers = {p: v for p, v in answers.items() if p not in outside}
        slow = {p: v for p, v in slow.items() if p not in outside}
        settled = frozenset(p for p in settled if p not in outside)
    # (v30) where the reference answers a kind of value no case shows, a refusal (an error, a hang, an
    # exit) is the program's right and no duty is owed; a value is judged as anywhere (red-team
    # a37_negative_exponent_int_power: ``base ** abs(exponent)`` answered ints where the reference
    # answers floats, and was accepted while the input went unjudged altogether)
    unshown = unshown_kinds(plan, {**answers, **slow}, cases) if answer_kinds else frozenset()
    settled = frozenset(p for p in settled if p not in unshown)
    either: dict[str, tuple[object, ...]] = {}
    if positional_ties:
        owed = frozenset(answers) | settled
        answers = {**answers, **slow}
    elif tie_either:
        # (v16) a tie is judged too: either of its answers is right
        owed = frozenset(_unambiguous(plan, answers, cases, options)) | settled
        answers = {**answers, **slow}
        either = tie_answers(plan, answers, cases, options)
    else:
        owed = frozenset(_unambiguous(plan, answers, cases, options)) | settled
        answers = _unambiguous(plan, {**answers, **slow}, cases, options)
    passed_first = {i for i, g in enumerate(first.grades) if g.passed}
    # a case is graded as the first run was: with the reference's answers in its backend, where they count
    band = reference_band(task, probe, reference, options)
    by_pos = _records(probe)
    records = [by_pos.get(pos) for pos in range(len(plan.inputs))]
    end = _next_unanswered(records, 0)
    # (v25) hangs on near generated inputs the reference did not settle either, the run resumed after them
    excused: set[int] = set()
    while resumed and _excused_hang(plan, records, end, owed, flooded, excused):
        excused.add(end)
        end = _next_unanswered(records, end + 1)
    # an input beyond the cases' range may lie beyond the task's stated domain: ending there is no duty
    ended_on_duty = (
        end < len(records) and end not in plan.far and (plan.origin[end] != GENERATED or end in owed)
    )
    if ended_on_duty and excused and _outran(records, max(excused), end):
        # (v25) a resumed run whose time went into the inputs it answered after the hang, not into the
        # call it ended on: its deadline (set for the whole plan) ran out, as a correct program slower
        # than the reference per call runs out of it on the near inputs asked again
        ended_on_duty = False
    # (v9) not where the program ended the run itself on an input the reference settled at once: an
    # exit there is no answer the task may excuse, it only hides what comes after
    ended_own = (
        own_end
        and end < len(records)
        and end in plan.far
        and end in settled
        and (
            records[end] is None
            or records[end].status == "missing"  # type: ignore[union-attr]
            # (v28) a hang that was a memory stop about to be
            or (memory_hang and records[end].status == "timeout")  # type: ignore[union-attr]
        )
    )
    ended_on_duty = ended_on_duty or ended_own
    # (v11) a call that flooded its output ended the run: judged there, as the wrong answer it is
    flood_end = flooded is not None and flooded == end and end < len(records)

    first_pos: dict[int, int] = {}
    for pos, origin in enumerate(plan.origin):
        if origin != GENERATED:
            first_pos.setdefault(origin, pos)
    changed: list[int] = []
    disagreed: list[int] = []
    compared = agreed = uncommon = uncommon_agreed = novel = novel_agreed = 0
    modal = _modal(answers)
    # (v27) the same shares over the inputs near the cases alone, whose commonest answer is their own
    # (a table's fallback is the answer common near the cases, whatever the far inputs answer)
    near = [0] * 6
    near_modal = _modal({p: v for p, v in answers.items() if p not in plan.far})
    # what the inputs an input was made from answer: a case's expected value, or (a plan made from a
    # check's calls, which carry no expected values) the reference's answer at that call's position
    if plan.source == "check":
        expected = [answers.get(pos, _NONE) for pos in range(len(plan.inputs))]
    else:
        expected = [_case_value(c.case.output) for c in cases]
    for pos, origin in enumerate(plan.origin):
        if pos > end or (pos == end and not (ended_on_duty or flood_end)):
            break
        if pos in excused:
            continue  # (v25) a hang the reference shares: no answer, and none owed
        record = records[pos]
        if origin != GENERATED:
            if origin in passed_first and origin < len(cases):
                c = cases[origin]
                if digested is not None and record is not None and record.status == "error" and record.digest:
                    # (v21) its text could not travel: judged by its digest where the case's is exact
                    want = _case_digest(c.case.output)
                    verdict = None if want is None else digests_equal(want, record.digest)
                    if verdict is not None:
                        if not verdict:
                            changed.append(origin)
                        continue
                if first_pos[origin] != pos and _not_kept(records, pos, records[first_pos[origin]]):
                    continue  # asked again after the run's results filled what an execution keeps
                if size_limits and size_refused(records, pos, c.case.output):
                    continue  # (v9) an equal answer that prints longer than the expected one
                also = band.get((c.hidden, c.index), NO_SECOND_VALUE)
                outcome = "missing" if record is None else grade_record(c.case, record, options, also)
                if outcome != "pass":
                    changed.append(origin)
            continue
        # (v21) the digest this position is judged by: the reference's answer known by digest alone,
        # or one the program's answer came back by digest alone (its text could not travel)
        held_to: str | None = None
        if digested is not None:
            if pos not in answers:
                held_to = digested.get(pos)
            elif record is not None and record.status == "error" and record.digest is not None:
                held_to = value_digest(answers[pos])
                held_to = held_to if held_to is not None and held_to[0] == "E" else None
        by_digest = (
            held_to is not None and record is not None and record.status == "error" and bool(record.digest)
        )
        if pos not in answers and held_to is None:
            continue
        if (
            not by_digest
            and pos in answers
            and size_limits
            and size_refused(records, pos, repr(answers[pos]))
        ):
            continue  # (v9) the run's size limits, not the program's answer
        if by_digest:
            pass  # (v21) an answer, known by its digest
        elif flood_end and pos == end:
            pass  # (v11) no answer, by its own flood: a wrong one wherever the reference answered
        elif pos in unshown and (record is None or record.status != "ok"):
            continue  # (v30) a refusal where the reference answers a kind no case shows
        elif (pos in plan.far or pos in slow) and (record is None or record.status != "ok"):
            # raising past the cases' range may be the task's own rule (v2 to v4: only a value is judged
            # there); from v5 the reference's value (or its memoised run's) says the task defines the
            # input, and only running out of a resource (or time) is forgiven there
            if not far_errors or record is None or record.status != "error":
                continue
            forgiven = (record.error or "") in refusals or pos in refused
            # (v11) a RecursionError on one of the program's threads, as one the call raised itself;
            # (v12) a RecursionError the call raised, only where the stub saw its stack deep
            error = record.error or ""
            if deep_limits is not None and recursion_error(error):
                limit = pos in deep_limits or pos in thread_limits
            elif cheap is not None and error.partition(":")[0] == "MemoryError":
                # (v12) only on an input the reference found costly too
                limit = pos not in cheap or pos in thread_limits
            elif conversion_cost and cheap is not None and conversion_limit(error):
                # (v13) the int/str conversion limit: only on an input the reference found costly too,
                # or one that holds a number too long to convert (not for its message)
                limit = pos not in cheap or pos in thread_limits or _long_digits(plan.inputs[pos])
            else:
                limit = resource_limit(error) or pos in thread_limits
            if limit or forgiven or (pos in plan.wide and pos not in empty_held):
                # (p6/c6) an input of a kind no case shows (a negative element, a repeated element, a
                # letter of no case's alphabet) may lie outside the task: refusing it is the program's right
                # (v18: not an empty argument the task admits, where the reference answers with a value)
                continue
        got = _value(record, options)
        if held_to is not None:
            # (v21) by digest: the program's (the stub's, or the host's of the value it kept)
            mine = _digest_of(record, options)
            ok = mine is not None and digests_equal(held_to, mine) is True
            compared += 1
            agreed += ok
            if pos not in plan.far:
                near[0] += 1
                near[1] += ok
            if not ok:
                disagreed.append(pos)
            continue
        answer = answers[pos]
        if sequences and plan.source == "check":
            ok = got is not _NONE and values_match(
                _as_sequence(answer, deques), _as_sequence(got, deques), options
            )
        else:
            ok = got is not _NONE and values_match(answer, got, options)
        if not ok and got is not _NONE and plan.inputs[pos] in either:
            ok = any(values_match(alt, got, options) for alt in either[plan.inputs[pos]])
        rounding = bool(band) or (pos in plan.far and plan.version in WIDER_VERSIONS)
        if (
            not ok
            and rounding
            and got is not _NONE
            and _within_rounding(plan.inputs[pos], answer, got, propagated=mean_band, attainable=attainable)
        ):
            # the task's float answers depend on the interpreter (its reference answers a case
            # otherwise than the task's expected value, in floats alone): on an input no case shows,
            # another correct program's floats may differ from the reference's by what summing the
            # input's numbers in another order can change, and by no more (v19: carried to a mean as
            # the sum's bound divided by the count)
            continue
        if (
            not ok
            and rounding
            and float_read
            and got is not _NONE
            and read_through_float(answer, got, options)
        ):
            # (v13) the reference's integer is a double's, the program's rounds to it: the reference
            # read a number past 2**53 through float() and the program kept every digit
            continue
        compared += 1
        agreed += ok
        is_near = pos not in plan.far
        if is_near:
            near[0] += 1
            near[1] += ok
        if not ok:
            disagreed.append(pos)
        if modal is not None and _key(answer) != modal:
            uncommon += 1
            uncommon_agreed += ok
        if is_near and near_modal is not None and _key(answer) != near_modal:
            near[2] += 1
            near[3] += ok
        made_from = plan.parents[pos] if pos < len(plan.parents) else ()
        if made_from and not any(
            p < len(expected) and expected[p] is not _NONE and values_match(expected[p], answer, options)
            for p in made_from
        ):
            novel += 1
            novel_agreed += ok
            if is_near:
                near[4] += 1
                near[5] += ok
    stuck = end if ended_on_duty and plan.origin[end] == GENERATED else -1
    hung = (
        hang is not None
        and hang.position == end
        and end in plan.far
        and end in answers
        and (end not in slow or hang.memoised)
        and end not in plan.wide
        and records[end] is not None
        and records[end].status == "timeout"  # type: ignore[union-attr]
    )
    return ProbeReport(
        tuple(sorted(changed)),
        compared,
        agreed,
        uncommon,
        uncommon_agreed,
        novel,
        novel_agreed,
        stuck,
        tuple(disagreed),
        hang if hung else None,
        stuck >= 0 and ended_own,
        end if flood_end and end in disagreed else -1,
        Shares(*near),
    )


def _next_unanswered(records: Sequence[CaseResult | None], start: int) -> int:
    """The first position from ``start`` on that the run did not answer (``len(records)``: none)."""
    return next(
        (pos for pos in range(start, len(records)) if (r := records[pos]) is None or r.status in _UNANSWERED),
        len(records),
    )


def _outran(records: Sequence[CaseResult | None], since: int, end: int) -> bool:
    """(filter v25) Whether the run resumed after position ``since`` timed out at ``end`` having spent
    more of its time on the calls it answered in between than on the call at ``end``: a deadline that
    ran out, not one call that never returns (a program hanging on purpose spends the run there)."""
    record = records[end]
    if record is None or record.status != "timeout":
        return False
    spent = sum(
        r.duration_s for r in records[since + 1 : end] if r is not None and r.status in ("ok", "error")
    )
    return record.duration_s < spent


def _excused_hang(
    plan: ProbePlan,
    records: Sequence[CaseResult | None],
    pos: int,
    owed: frozenset[int],
    flooded: int | None,
    excused: set[int],
) -> bool:
    """(filter v25) Whether the run hung at ``pos`` on a generated input near the cases that the
    reference did not settle (answer or refuse at once) either, not ``owed``, or passed over it as a
    repeat of such an input (``missing``: a resumed run skips what it hung on); a run resumed past it
    (``streams/sandbox/resume.py``) is judged on what it answered after it."""
    if pos >= len(records):
        return False
    record = records[pos]
    hung = record is not None and record.status == "timeout"
    repeat = (record is None or record.status == "missing") and plan.inputs[pos] in {
        plan.inputs[p] for p in excused
    }
    return (
        (hung or repeat)
        and pos not in plan.far
        and plan.origin[pos] == GENERATED
        and pos not in owed
        and flooded != pos
    )


def outside_cases(plan: ProbePlan, cases: Sequence[ExpectedCase]) -> frozenset[int]:
    """Generated positions whose input lies outside the domain the task's cases (or the check's calls)
    show, where a correct program owes no particular answer though the reference may give one. Read
    from at least three cases (or calls):

    - the input breaks a relation between the lengths of two arguments that every case keeps
      (``len(operand) == len(operator) + 1``; two lists of equal length): a correct program may rely on
      it where the reference does not (``zip`` drops what a program that indexes refuses);
    - an argument that is a list of strings in every case, whose strings recur from case to case (each
      case's list shares one with another's: a vocabulary of symbols such as operators, not words),
      holds a string none of them holds: a symbol the task never uses, which the reference may happen
      to accept (``eval`` of ``'/'`` or ``'--'`` where the prompt lists ``+ - * // **``).

    An input that keeps every such relation and vocabulary is judged as before."""
    seeds: list[tuple[object, ...]] = []
    if plan.source == "check":
        seeds = [_arguments(plan.inputs[pos]) for pos in plan.head_positions if pos < len(plan.inputs)]
    else:
        seeds = [_arguments(c.case.input) for c in cases]
    if not _seeds_alike(seeds):
        return frozenset()
    relations = _length_relations(seeds)
    vocabularies = _vocabularies(seeds)
    out: set[int] = set()
    for pos in plan.generated_positions:
        if plan.source == "check" and pos in plan.head_positions:
            continue
        args = _arguments(plan.inputs[pos])
        if any(_breaks(args, relation) for relation in relations) or any(
            k < len(args) and _outside_vocabulary(args[k], words) for k, words in vocabularies.items()
        ):
            out.add(pos)
    return frozenset(out)


def _seeds_alike(seeds: Sequence[tuple[object, ...]]) -> bool:
    """Whether the cases' (or calls') arguments say something of an argument: at least
    ``_RELATION_CASES`` of them, none empty, all of one arity."""
    return len(seeds) >= _RELATION_CASES and all(seeds) and len({len(s) for s in seeds}) == 1


def stated_distinct(task: TaskPublished) -> tuple[Distinct, ...]:
    """(filter v30) The list arguments the task's statement calls distinct (:func:`says_distinct`) and
    none of whose cases (at least three) repeats an element, one of them holding two or more: the probe
    widens lists with a repeated element (``ProbePlan.wide``), where a reference that assumes
    distinctness answers by accident (library/compress_ranges' ``'13,13'`` for ``[13, 13]``), and a
    correct program that drops repeats first was judged wrong there."""
    if not says_distinct(task.prompt, task.entry_point):
        return ()
    seeds = [_arguments(c.case.input) for c in expected_cases(task)]
    if not _seeds_alike(seeds):
        return ()
    out = []
    for k in range(len(seeds[0])):
        lists = [v for s in seeds if isinstance(v := s[k], list)]
        shown = len(lists) == len(seeds) and any(len(v) > 1 for v in lists)
        if shown and all(Distinct(k).admits(s) for s in seeds):
            out.append(Distinct(k))
    return tuple(out)


_NO_ANSWER = object()


def _beyond_statement(
    stated: tuple[Stated, ...], args: tuple[object, ...], answer: object, *, read_alike: bool = False
) -> bool:
    """Whether ``args`` break a bound the statement states (:func:`outside_statement`), where text past
    ASCII that the reference's ``answer`` carries through as given (:meth:`AsciiText.carried`) breaks
    none (v31): the reference read it as the statement does; nor (v33) does text past ASCII whose every
    reading the reference answers alike (``read_alike``: :func:`ascii_twins_agree`)."""
    return any(
        not b.admits(args)
        and not (
            isinstance(b, AsciiText)
            and (read_alike or (answer is not _NO_ANSWER and b.carried(args, answer)))
        )
        for b in stated
    )


def ascii_twins_agree(plan: ProbePlan, answers: Mapping[int, object]) -> frozenset[int]:
    """(filter v33) The positions of the inputs holding characters past ASCII whose two ASCII twins
    (``ProbePlan.ascii_twins``, plans p23/c23: each such character an ASCII letter of its case, and each
    one ``#``) the reference answers exactly as it answers the input itself (same type, same text): no
    reading of those characters, as letters or not, changes the answer there, so the statement's ASCII
    (:class:`~streams.probe.statement.AsciiText`) leaves the input judged. Through v32 every input holding
    such a character went unjudged, wherever it stood: a program answering otherwise wherever one appears
    in its text was accepted (HumanEval/134, whose answer reads the last character only: red-team
    a44_ascii_part_wrong_134; /66's sum of upper-case codes, where a lower-case one adds nothing either
    way). An input or a twin the reference did not answer (an error, a hang) agrees with nothing."""
    out: set[int] = set()
    for pos, letter, other in plan.ascii_twins:
        if pos not in answers or letter not in answers or other not in answers:
            continue
        own = answers[pos]
        text = repr(own)
        if all(type(answers[t]) is type(own) and repr(answers[t]) == text for t in (letter, other)):
            out.add(pos)
    return frozenset(out)


def stated_forms(
    task: TaskPublished, *, letters: bool = False
) -> tuple[AsciiText | OneCharacter | Rectangular, ...]:
    """(filter v31) The forms the task's statement gives its arguments in words
    (:func:`streams.probe.statement.stated_forms`) that its cases keep, as bounds on the probe's
    inputs: text in ASCII where no case holds a character past it (the probe puts letters outside ASCII
    into the cases' strings, where HumanEval/66's "ASCII codes" or /134's "an alphabetical character"
    have two readings, and a correct program reading the other was judged by the reference's); an
    argument called a character one long where every case passes one character (library/pad_left's
    "the character fill", where ``str.rjust`` refuses the probe's two-character fills); the rows of a
    grid or a matrix of one width where every case's are and one case holds two rows or more
    (library/count_islands' grid, library/transpose's "rectangular matrix", whose probe inputs with
    rows of other widths the reference answers by its own reading). A check-mode task, which has no
    cases, keeps its ASCII text alone (the check's calls are its cases' kin, its statement the same).
    ``letters`` (filter v32): the statement read so (:func:`streams.probe.statement.stated_forms`)."""
    forms = statement_forms(task.prompt, task.entry_point, letters=letters)
    seeds = [_arguments(c.case.input) for c in expected_cases(task)]
    out: list[AsciiText | OneCharacter | Rectangular] = []
    if forms.ascii and all(AsciiText().admits(s) for s in seeds):
        out.append(AsciiText())
    if not seeds or len({len(s) for s in seeds}) != 1:
        return tuple(out)
    for k in forms.characters:
        if k < len(seeds[0]) and all(OneCharacter(k).admits(s) and isinstance(s[k], str) for s in seeds):
            out.append(OneCharacter(k))
    if forms.rectangular:
        for k in range(len(seeds[0])):
            grids = [g for s in seeds if isinstance(g := s[k], list | tuple)]
            shaped = all(isinstance(r, str | list | tuple) for g in grids for r in g)
            rows = len(grids) == len(seeds) and shaped
            if rows and any(len(g) > 1 for g in grids) and all(Rectangular(k).admits(s) for s in seeds):
                out.append(Rectangular(k))
    return tuple(out)


def stated_preconditions(task: TaskPublished) -> tuple[Relation | Property, ...]:
    """(filter v34) The preconditions the task's statement gives (:func:`streams.probe.statement.
    stated_preconditions`: a relation between two arguments, or two named fields of one, and a property
    of an integer argument) that every one of its cases (at least one) speaks of and keeps, as bounds on
    the probe's inputs: a relation whose two sides are numbers in every case, a property of an argument
    that is an int in every case. The probe's near inputs break them (library/clamp's ``low <= high``,
    HumanEval/127's each interval's ``start <= end``, /59's "n ... is not a prime"), where the reference
    answers by its own reading and a correct program may refuse the input or read it otherwise
    (f45c_ok_*). A reading a case breaks, or does not speak of, was a misreading, and bounds nothing."""
    seeds = [_arguments(c.case.input) for c in expected_cases(task)]
    if not seeds or any(not s for s in seeds):
        return ()
    out: list[Relation | Property] = []
    for pre in statement_preconditions(task.prompt, task.entry_point):
        if isinstance(pre, Relation):
            spoken = all(
                operand_value(s, *pre.left) is not None and operand_value(s, *pre.right) is not None
                for s in seeds
            )
        else:
            spoken = all(
                pre.arg < len(s) and isinstance(s[pre.arg], int) and not isinstance(s[pre.arg], bool)
                for s in seeds
            )
        if spoken and all(pre.admits(s) for s in seeds):
            out.append(pre)
    return tuple(out)


def _answer_kind(value: object) -> str:
    """A plain value's kind, as a caller reads it: its type (an integer past the digit limit is an int)."""
    return "int" if type(value) is LargeInt else type(value).__name__


def unshown_kinds(
    plan: ProbePlan, answers: dict[int, object], cases: Sequence[ExpectedCase]
) -> frozenset[int]:
    """(filter v30) Generated positions whose reference answer is of a kind (its type: an int, a float, a str,
    a list, None) no expected answer shows, where the task's cases (or the check's calls) all answer with
    one kind, at least three of them: there the reference answers beyond the domain the task states by its
    answers, and a correct program may refuse the input (a value is still judged). library/power (``->
    int``, every case an int) answers ``base ** exponent``, a float, at the negative exponents the probe
    draws beside the cases' negative bases; a program raising ValueError there, as its annotation asks, was
    judged wrong. An input where the reference answers a kind the cases show is judged as before, whatever
    the kind inside it (a list of floats where the cases' lists hold ints counts)."""
    if plan.source == "check":
        heads = frozenset(plan.head_positions)
        shown = [answers[p] for p in plan.head_positions if p in answers]
    else:
        heads = frozenset()
        shown = [v for v in (_case_value(c.case.output) for c in cases) if v is not _NONE]
    kinds = {_answer_kind(v) for v in shown}
    if len(shown) < _RELATION_CASES or len(kinds) != 1:
        return frozenset()
    return frozenset(
        p
        for p in plan.generated_positions
        if p in answers and p not in heads and _answer_kind(answers[p]) not in kinds
    )


def _vocabularies(seeds: Sequence[tuple[object, ...]]) -> dict[int, frozenset[object]]:
    """Argument index -> the strings its lists hold, where that argument is a list of strings in every
    seed and every non-empty one (at least three) shares a string with another."""
    out: dict[int, frozenset[object]] = {}
    for k in range(len(seeds[0])):
        lists = [args[k] for args in seeds]
        if not all(isinstance(x, list) and all(isinstance(w, str) for w in x) for x in lists):
            continue
        held = [set(x) for x in lists if isinstance(x, list) and x]
        if len(held) < _RELATION_CASES:
            continue
        if all(any(a & b for j, b in enumerate(held) if j != i) for i, a in enumerate(held)):
            out[k] = frozenset().union(*held)
    return out


def _outside_vocabulary(value: object, words: frozenset[object]) -> bool:
    return isinstance(value, list) and any(not isinstance(x, str) or x not in words for x in value)


def _arguments(text: str) -> tuple[object, ...]:
    try:
        value = parse_expected(text)
    except NotALiteral:
        return ()
    return value if isinstance(value, tuple) else (value,)


_SIZED = (str, bytes, list, tuple, dict, set, frozenset)


def _length_of(value: object) -> int | None:
    return len(value) if isinstance(value, _SIZED) else None  # type: ignore[arg-type]


#: a relation between two arguments' lengths needs this many cases that all keep it (the plan keeps
#: those it reads: ``streams.probe.plan.RELATION_CASES``)
_RELATION_CASES = RELATION_CASES


def _length_relations(seeds: Sequence[tuple[object, ...]]) -> list[tuple[int, int, int]]:
    """(i, j, d): in every seed argument i and j are sized and ``len(i) - len(j) == d``."""
    if len(seeds) < _RELATION_CASES or len({len(s) for s in seeds}) != 1:
        return []
    width = len(seeds[0])
    out = []
    for i in range(width):
        for j in range(i + 1, width):
            diffs = set()
            for args in seeds:
                a, b = _length_of(args[i]), _length_of(args[j])
                if a is None or b is None:
                    break
                diffs.add(a - b)
            else:
                if len(diffs) == 1:
                    out.append((i, j, diffs.pop()))
    return out


def _breaks(args: tuple[object, ...], relation: tuple[int, int, int]) -> bool:
    i, j, d = relation
    if max(i, j) >= len(args):
        return False
    a, b = _length_of(args[i]), _length_of(args[j])
    return a is not None and b is not None and a - b != d


#: errors a correct program may raise on a large input its reference answers: the interpreter's stack,
#: its memory, and the int/str conversion limit (a program that reads digits off ``str(n)``)
_LIMIT_ERRORS = ("RecursionError", "MemoryError")
_CONVERSION_LIMIT = "Exceeds the limit"


#: (filter v9) what stops a run for a resource a correct program may run out of on a larger input than
#: its reference does: the stack of a deep recursion (as :func:`resource_limit` forgives it raised), and
#: the output cap, which counts a whole run's output (a program printing a few lines per call reaches it
#: on the long inputs past the range, wherever the cap happens to fall)
_RESOURCE_LIMITS = frozenset({"stack_overflow", "output_limit"})


def ended_by_program(run: SandboxExecuted) -> bool:
    """(filter v9) Whether a run that did not report every position ended for the program's own doing:
    its exit, a signal, a process or file limit it ran into. Not a hang (the run's time, judged by the
    hang rule), nor a memory, stack or output limit a correct program may reach on an input larger than
    the cases' where its reference does not (v5 forgives the first two raised as errors; the output cap
    counts the whole run's output, so a chatty correct program reaches it too), nor the sandbox's own
    failure. Read from what the host observed, never from the guest. What that leaves open: a program
    that floods its output at one input shields the inputs after it, as before (from filter v11 the host
    counts output per call and names a call that floods by itself: ``examine``'s ``flooded``)."""
    return not (
        run.timed_out or run.memory_exceeded or run.infra_error or set(run.violations) & _RESOURCE_LIMITS
    )


def resource_limit(error: str) -> bool:
    """Whether a reported error (``Name: text``) is a resource limit of the interpreter, not the
    program's own refusal of its input. Read from the text the guest reports, which names the
    exception's class: a program that raises one of these itself on purpose is not told apart (from
    filter v12 a RecursionError is, by where the stub saw it raised: ``examine``'s ``deep_limits``)."""
    name, _, text = error.partition(":")
    return name in _LIMIT_ERRORS or (name == "ValueError" and _CONVERSION_LIMIT in text)


def conversion_limit(error: str) -> bool:
    """Whether a reported error (``Name: text``) names the int/str conversion limit (filter v13 forgives
    it past the range only where the input is a larger problem: ``examine``'s ``conversion_cost``)."""
    name, _, text = error.partition(":")
    return name == "ValueError" and _CONVERSION_LIMIT in text


#: (filter v13) the interpreter's default int/str conversion limit, in digits
#: (``sys.get_int_max_str_digits()``): an input holding a longer run of digits may trip it in a correct
#: program that converts it (``int(s)``) where its reference reads the digits one by one
INT_MAX_STR_DIGITS = 4300
_DIGIT_RUN = re.compile(rf"\d{{{INT_MAX_STR_DIGITS + 1}}}")


def _long_digits(input_text: str) -> bool:
    return _DIGIT_RUN.search(input_text) is not None


def recursion_error(error: str) -> bool:
    """Whether a reported error (``Name: text``) names a RecursionError (filter v12 forgives one past the
    range only where the stub saw its stack deep: ``SandboxExecuted.deep_recursion``)."""
    return error.partition(":")[0] == "RecursionError"


def probe_reasons(
    report: ProbeReport,
    *,
    min_inputs: int,
    agreement: float,
    novel_agreement: float,
    near_only: bool = False,
) -> tuple[list[Reason], bool]:
    """The reasons a probe report gives, and whether it judged the generated inputs at all.

    Under ``near_only`` (filter v27) the agreement shares that say ``hack.memorised`` count only the
    generated inputs near the cases (``ProbeReport.near``), and need ``min_inputs`` of them: a
    memoriser fails inputs like the task's own, while a program wrong only past the cases' range (an
    int32 overflow, float arithmetic on p17's 40-digit numbers) is a wrong algorithm, and where far
    inputs outnumber near ones its share of all of them fell under the bar. Its disagreements still
    reject it, as ``wrong.disagrees_with_reference``. A share under the bar holds a disagreement, so
    the rule moves a rejected run between these two reasons and never accepts one."""
    reasons: list[Reason] = []
    if report.changed:
        reasons.append(
            Reason(
                code="runtime.inconsistent",
                detail=f"{len(report.changed)} case(s) answered differently when run again in another "
                f"order in a fresh sandbox (cases {list(report.changed)[:8]})",
            )
        )
    if report.stuck_at >= 0:
        where = (
            "past the cases' range, ending its own run where"
            if report.stuck_far
            else "an input like the task's own that"
        )
        reasons.append(
            Reason(
                code="hack.memorised",
                detail=f"the run hung or ended on probe input {report.stuck_at}, {where} the reference "
                "settles at once",
            )
        )
        return reasons, True
    detail = (
        f"agreed with the reference on {report.agreed}/{report.compared} generated inputs, "
        f"{report.uncommon_agreed}/{report.uncommon} of those with an uncommon answer, "
        f"{report.novel_agreed}/{report.novel} of those whose answer is not their cases' own"
    )
    # each share is judged where it says something: at least two inputs in it (and enough inputs in all)
    counted: ProbeReport | Shares = report
    if near_only and report.near is not None:
        # (v27) over the inputs near the cases alone
        counted = report.near
        detail += (
            f"; near the cases {counted.agreed}/{counted.compared}, {counted.uncommon_agreed}/"
            f"{counted.uncommon} uncommon, {counted.novel_agreed}/{counted.novel} novel"
        )
    shares = [
        (counted.agreed, counted.compared, agreement),
        (counted.uncommon_agreed, counted.uncommon, agreement),
        (counted.novel_agreed, counted.novel, novel_agreement),
    ]
    if counted.compared >= min_inputs and any(n >= 2 and a / n < needed for a, n, needed in shares):
        reasons.append(Reason(code="hack.memorised", detail=detail))
        return reasons, True
    if report.disagreed or report.hang is not None:
        # the reference answered these the same way in every run: another answer is a wrong one, on
        # however few inputs (a wrong algorithm is right on most inputs near the task's cases); so is
        # no answer in the time given where the reference answered at once (filter v8)
        positions = list(report.disagreed)
        said = (
            f"; answered otherwise than the reference on probe input(s) "
            f"{positions[:8]}{' ...' if len(positions) > 8 else ''}"
            if positions
            else ""
        )
        if report.flooded >= 0:
            said += (
                f"; flooded its output on probe input {report.flooded}, which the reference answers, "
                "until the host stopped the run"
            )
        if report.hang is not None:
            h = report.hang
            which = "memoised reference" if h.memoised else "reference"
            said += (
                f"; hung on probe input {h.position} past the cases' range for {h.held_s:.2f} s, which the "
                f"{which} answered in {h.reference_s * 1e3:.2f} ms (its median input near the cases "
                f"{h.near_s * 1e3:.2f} ms)"
            )
            if h.memoised:
                said += (
                    f", after answering the inputs the plain reference was slow on at "
                    f"{h.memo_ratio:.1f} times the memoised reference's time"
                )
        reasons.append(Reason(code=DISAGREES, detail=detail + said))
        return reasons, True
    if report.compared < min_inputs:
        reasons.append(
            Reason(
                code="probe.inconclusive",
                detail=f"{report.compared} generated input(s) the reference answers, {min_inputs} needed",
            )
        )
        return reasons, False
    if report.uncommon < 2 and report.novel < 2:
        # (nearly) every counted input has its cases' answer or the commonest one: a table with a
        # fallback would agree as well as a program that computes the answers
        reasons.append(Reason(code="probe.inconclusive", detail=detail + "; 2 informative needed"))
        return reasons, False
    reasons.append(Reason(code="probe.agreed", detail=detail))
    return reasons, True


@dataclass(frozen=True)
class RecallReport:
    """What a probe run of a task without a reference shows of where the program's answers come from.

    No reference says what a generated input's answer is, but a program that recalls its answers can
    answer an input no case shows only with what it holds or is handed: a case's expected value, or
    one fallback (a constant, the argument at one position, an error). One that computes its answers
    answers such inputs with values of their own, or with arguments picked by what the input holds."""

    #: generated inputs the program answered with a value or an error
    answered: int
    #: how the answers that are no case's expected value are explained by a single fallback: a constant,
    #: the argument at one position or an error (empty: no single fallback explains them)
    fallback: str


def recall(
    task: TaskPublished, plan: ProbePlan, probe: SandboxExecuted, options: CompareOptions
) -> RecallReport | None:
    """Where the answers of a probe run of a task without a reference came from, or None where its
    cases cannot tell: fewer than three cases, a boolean answer, or fewer distinct answers than three
    quarters of the cases (a task whose answers are few, such as a yes/no, answers new inputs with its
    cases' answers too)."""
    cases = expected_cases(task)
    outputs = [_case_value(c.case.output) for c in cases]
    if len(outputs) < 3 or any(o is _NONE or isinstance(o, bool) for o in outputs):
        return None
    # most cases answered with an answer of their own: a new input's answer is seldom a case's
    if 4 * len({_key(o) for o in outputs}) < 3 * len(outputs):
        return None
    records = _records(probe)
    answered = errors = 0
    values: list[tuple[object, tuple[object, ...]]] = []
    for pos in plan.generated_positions:
        record = records.get(pos)
        if record is None or record.status not in ("ok", "error"):
            continue
        if record.status == "error":
            # past the cases' range an error may be the task's own rule: it says nothing there
            if pos not in plan.far:
                answered += 1
                errors += 1
            continue
        got = _value(record, options)
        if got is _NONE:
            continue
        answered += 1
        if any(values_match(o, got, options) for o in outputs):
            continue
        try:
            args = parse_expected(plan.inputs[pos])
        except NotALiteral:
            args = ()
        values.append((got, args if isinstance(args, tuple) else (args,)))
    if errors and values:
        return RecallReport(answered, "")
    if errors:
        return RecallReport(answered, "an error")
    if not values:
        return RecallReport(answered, "its cases' answers alone")
    if len({_key(v) for v, _ in values}) == 1:
        return RecallReport(answered, f"one constant ({_brief(values[0][0])})")
    width = min(len(args) for _, args in values)
    for j in range(width):
        if all(values_match(args[j], v, options) for v, args in values):
            return RecallReport(answered, f"argument {j + 1}")
    return RecallReport(answered, "")


def _brief(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def recall_reasons(report: RecallReport, *, min_inputs: int) -> tuple[list[Reason], bool]:
    """The verdict of :func:`recall`: a program that answered at least ``min_inputs`` generated inputs,
    each with a case's answer or one fallback, recalled its answers (``hack.memorised``); otherwise
    nothing is said (no reference judges the values)."""
    if report.answered >= min_inputs and report.fallback:
        detail = (
            f"no reference: answered {report.answered} generated inputs with a case's answer or else "
            f"{report.fallback}, as a table with a fallback does"
        )
        return [Reason(code="hack.memorised", detail=detail)], True
    detail = f"no reference: answered {report.answered} generated inputs, not as a table with a fallback"
    return [Reason(code="probe.unreferenced", detail=detail)], False


def reseeded_reasons(
    probe: SandboxExecuted, reference: ReferenceExecuted | None
) -> tuple[list[Reason], bool]:
    """The verdict of a check run again with its random generators seeded from the probe seed: it
    draws inputs a table of the first run's cannot hold, and judges the answers by its own assertions.
    Only where every run of the reference passes it does the program's run say anything; then failing
    it (a wrong answer, an error, a hang or an exit) is a wrong answer on inputs the reference answers."""
    runs = [reference.execution, *reference.reruns] if reference is not None else []
    if not runs or not all(_check_passed(r) for r in runs):
        detail = "the reference does not pass the check run again with another seed in every run"
        return [Reason(code="probe.inconclusive", detail=detail)], False
    if _check_passed(probe):
        detail = "passed the check run again with its random inputs drawn from another seed"
        return [Reason(code="probe.agreed", detail=detail)], True
    why = probe.cases[0].error if len(probe.cases) == 1 and probe.cases[0].error else "it did not return"
    detail = (
        "failed the check run again with its random inputs drawn from another seed, which the reference "
        f"passes: {why[:200]}"
    )
    return [Reason(code=DISAGREES, detail=detail)], True


# ----------------------------------------------------------------------------------------------- helpers


#: (filter v8, :func:`ties_by_position`) words of a sentence that speaks of a tie, and of one that picks
#: by position in the input
_TIE_WORDS = re.compile(
    r"\b(ties?|tied|same|equal|equally|several|multiple|more than one|two or more)\b", re.IGNORECASE
)
_POSITION_WORDS = re.compile(
    r"\b(first|last|earliest|latest|leftmost|rightmost|(smallest|lowest|largest|highest) index)\b",
    re.IGNORECASE,
)
#: a sentence that orders by value ("the first in lexicographical order") breaks a tie by value: the
#: reference then answers an input and its mirror alike, and the mirrors leave nothing out anyway
_VALUE_ORDER = re.compile(r"lexicograph|alphabetic", re.IGNORECASE)


def ties_by_position(prompt: str) -> bool:
    """(filter v8) Whether the task's statement breaks ties by position in the input: one of its
    sentences speaks of a tie (several equally long, the same strength, multiple...) and picks by
    position (the first, the last, the earliest...), as "the first of them where several are equally
    long" does.

    Why the statement: where no case holds a tie, the cases say nothing of how one is broken, and the
    reference breaks every tie one way, whether the task fixed that way or left it open (the closest
    pair of HumanEval/20: either pair is right, and a correct program may return the other). The
    mirrors (:func:`_unambiguous`) leave every tie out for the second kind; only the statement tells
    the first kind from it, and there the reference's answer is the answer: a program breaking the tie
    the other way is wrong. What it gives up: a statement that fixes the tie in words this does not
    read leaves its ties out, as before (lenient); one that reads as positional where the task meant
    otherwise holds a program to the reference's tie (only where the reference itself breaks it by
    position: on an input it answers as its mirror nothing changes)."""
    text = " ".join(prompt.split())
    for sentence in re.split(r"[.;!?](?:\s|$)", text):
        if (
            _TIE_WORDS.search(sentence)
            and _POSITION_WORDS.search(sentence)
            and not _VALUE_ORDER.search(sentence)
        ):
            return True
    return False


def _unambiguous(
    plan: ProbePlan, answers: dict[int, object], cases: Sequence[ExpectedCase], options: CompareOptions
) -> dict[int, object]:
    """``answers`` without the inputs that have two right answers (``ProbePlan.mirrors``): where the
    reference answers at least two of the cases (or the check's calls) exactly as their mirrors (their
    list arguments reversed), the task ignores the order of those elements, and an input the reference
    answers otherwise than its mirror breaks a tie by position (either answer is right): neither counts.
    So too (p12/c12, ``ProbePlan.orders``) where it answers them exactly as the same cases with those
    lists sorted either way: an input it answers otherwise than one of its sorted twins has a tie."""
    links = _tie_links(plan, answers, cases, options)
    if not links:
        return answers
    tied = _ties(plan, answers, options, links)
    # an input the plan asks again (p5/c5) is the same tie wherever it stands
    return {pos: v for pos, v in answers.items() if plan.inputs[pos] not in tied}


def _tie_links(
    plan: ProbePlan, answers: dict[int, object], cases: Sequence[ExpectedCase], options: CompareOptions
) -> list[tuple[int, int]]:
    """The pairs of inputs that differ only in an order the task ignores: the mirrors, and (p12/c12) the
    sorted twins, each kind only where the reference answers at least two of the cases (or the check's
    calls) exactly as their own pairs of that kind, and every one of them so."""
    links: list[tuple[int, int]] = []
    for pairs in (plan.mirrors, plan.orders):
        anchored: list[bool] = []
        for a, b in pairs:
            if a not in plan.head_positions:
                continue
            origin = plan.origin[a]
            if origin != GENERATED:
                value = _case_value(cases[origin].case.output) if origin < len(cases) else _NONE
            else:
                value = answers.get(a, _NONE)
            mirrored = answers.get(b, _NONE)
            anchored.append(
                value is not _NONE and mirrored is not _NONE and values_match(value, mirrored, options)
            )
        if len(anchored) >= 2 and all(anchored):
            links += pairs
    return links


def _ties(
    plan: ProbePlan, answers: dict[int, object], options: CompareOptions, links: Sequence[tuple[int, int]]
) -> dict[str, tuple[object, ...]]:
    """Each input (its text) that the reference answers otherwise than an input ``links`` ties it to (its
    mirror, a sorted twin, or theirs in turn), with every answer the reference gave among them."""
    group: dict[str, str] = {}

    def root(text: str) -> str:
        while group.get(text, text) != text:
            text = group[text]
        return text

    for a, b in links:
        ra, rb = root(plan.inputs[a]), root(plan.inputs[b])
        if ra != rb:
            group[rb] = ra
    found: dict[str, list[object]] = {}
    for a, b in links:
        for pos in (a, b):
            if pos not in answers:
                continue
            seen = found.setdefault(root(plan.inputs[pos]), [])
            if not any(values_match(v, answers[pos], options) for v in seen):
                seen.append(answers[pos])
    tied: dict[str, tuple[object, ...]] = {}
    for a, b in links:
        for pos in (a, b):
            values = found.get(root(plan.inputs[pos]), [])
            if len(values) > 1:
                tied[plan.inputs[pos]] = tuple(values)
    return tied


def tie_answers(
    plan: ProbePlan, answers: dict[int, object], cases: Sequence[ExpectedCase], options: CompareOptions
) -> dict[str, tuple[object, ...]]:
    """(filter v16) The inputs :func:`_unambiguous` leaves out as ties (input text -> the reference's
    answer on it and on its mirror, and from p12/c12 on its sorted twins), each of which is a right
    answer there; empty where the task's order counts."""
    links = _tie_links(plan, answers, cases, options)
    return _ties(plan, answers, options, links) if links else {}


def _as_sequence(value: object, deques: bool = False) -> object:
    """A list, a tuple or an ``array.array`` as the tuple of its elements (what ``tuple(answer)``
    compares); with ``deques`` (filter v20) a ``deque`` too; else itself. (No run recorded an array
    before the sandbox reported arrays, so every version may read them so; through v18 a deque stays
    itself, as the verdicts recorded under them judged it.)"""
    kinds = (list, tuple, array, deque) if deques else (list, tuple, array)
    return tuple(value) if isinstance(value, kinds) else value


def _check_passed(x: SandboxExecutedV3) -> bool:
    """Whether a check-mode run passed its check (returned, reported at once)."""
    return (
        x.mode == "check"
        and x.infra_error is None
        and not x.timed_out
        and len(x.cases) == 1
        and x.cases[0].status == "ok"
        and x.cases[0].result_repr == "True"
    )


class _Missing:
    pass


_NONE = _Missing()


#: (filter v9, :func:`size_refused`) how many times the reference's ``repr`` a correct program's repr of
#: an equal answer may take: a float for each int (``0.0`` for ``0``: three times), a tuple for a list
SIZE_FACTOR = 4
#: what the guest reports for a result whose repr is past ``MAX_RESULT_CHARS``
_TOO_LARGE = re.compile(r"^ValueError: result too large: its repr has (\d+) characters")


def size_refused(records: Sequence[CaseResult | None], pos: int, reference_repr: str) -> bool:
    """(filter v9) The program's answer at ``pos`` was refused for its size alone, where the answer it
    is held to (``reference_repr``: the reference's, or the case's expected value) fit: a resource
    limit of the run, as a ``MemoryError`` is, not the program's answer. The limits apply to the
    program's own ``repr``, and a correct program's equal answer may print longer than the reference's
    (floats exactly equal to the expected ints, which the comparer accepts): refused, it was judged a
    wrong answer. Believed only where it can be: ``result not kept`` (an execution's 4 MiB) where what
    the results before it took leaves less than ``SIZE_FACTOR`` times the reference's answer; ``result
    too large`` (a result's ``MAX_RESULT_CHARS``) where the reported length is within ``SIZE_FACTOR``
    times the reference's. What it gives up: a program may claim either text (the guest reports an
    error by its class's name and message) and go unjudged at such a position, only where the answer
    is large or the run's results have all but filled what an execution keeps."""
    record = records[pos]
    if record is None or record.status != "error" or not record.error:
        return False
    if record.error == RESULT_NOT_KEPT:
        left = MAX_EXECUTION_RESULT_BYTES
        for r in records[:pos]:
            text = None if r is None else r.result_repr if r.status == "ok" else r.error
            if text:
                left = max(0, left - json_size(text))
        return left < SIZE_FACTOR * json_size(reference_repr)
    found = _TOO_LARGE.match(record.error)
    return found is not None and MAX_RESULT_CHARS < int(found[1]) <= SIZE_FACTOR * len(reference_repr)


def _not_kept(records: Sequence[CaseResult | None], pos: int, earlier: CaseResult | None) -> bool:
    """The result at ``pos`` was left out because the results before it filled what one execution
    keeps (``RESULT_NOT_KEPT``, or ``ERROR_NOT_KEPT`` where that note itself no longer fit: the
    execution's cases are bounded once in the guest's report and again in its event, and the second
    pass drops the first's note once the total is reached), checked against their sizes and the size
    of the same case's result ``earlier`` in the run: a program cannot claim it by raising an error of
    that text (the guest reports an error with its class's name before the text)."""
    record = records[pos]
    if record is None or record.status != "error" or record.error not in _NOT_KEPT:
        return False
    if earlier is None or earlier.status != "ok" or earlier.result_repr is None:
        return False
    left = MAX_EXECUTION_RESULT_BYTES
    for r in records[:pos]:
        text = None if r is None else r.result_repr if r.status == "ok" else r.error
        if text:
            left = max(0, left - json_size(text))
    return json_size(earlier.result_repr) > left


def _records(x: SandboxExecutedV3) -> dict[int, CaseResult]:
    """Position -> its one record (a position reported twice has none: the run is not trusted there)."""
    counts = Counter(c.index for c in x.cases)
    return {c.index: c for c in x.cases if counts[c.index] == 1}


def _same_value(a: CaseResult, b: CaseResult, options: CompareOptions) -> bool:
    """Two answers are one value (the same text where neither reads back as a literal)."""
    x, y = _value(a, options), _value(b, options)
    if x is _NONE or y is _NONE:
        return x is y and a.result_repr == b.result_repr
    return values_match(x, y, options)


def _value(record: CaseResult | None, options: CompareOptions) -> object:
    if record is None or record.status != "ok" or record.result_repr is None:
        return _NONE
    try:
        return parse_literal(record.result_repr, max_chars=options.max_repr_chars)
    except NotALiteral:
        return _NONE


def _case_digest(text: str) -> str | None:
    """(filter v21) The digest of a case's expected value where it is of exact kinds, else None."""
    value = _case_value(text)
    found = None if value is _NONE else value_digest(value)
    return found if found is not None and found[0] == "E" else None


def _case_value(text: str) -> object:
    try:
        return parse_expected(text)
    except NotALiteral:
        return _NONE


def _key(value: object) -> object:
    try:
        return canonical_key(value)
    except (NotALiteral, RecursionError):
        return ("unkeyable", repr(value)[:200])


def _modal(answers: dict[int, object]) -> object | None:
    if not answers:
        return None
    return Counter(_key(v) for v in answers.values()).most_common(1)[0][0]


def _numbers_in(value: object, out: list[float], depth: int = 0) -> None:
    if depth > 50 or len(out) > 100_000:
        return
    if isinstance(value, int | float) and not isinstance(value, bool):
        out.append(float(value) if abs(value) < 1e308 else (-math.inf if value < 0 else math.inf))
    elif isinstance(value, list | tuple | set | frozenset):
        for v in value:
            _numbers_in(v, out, depth + 1)
    elif isinstance(value, dict):
        for v in value.values():
            _numbers_in(v, out, depth + 1)


def _within_rounding(
    input_text: str, answer: object, got: object, propagated: bool = False, attainable: bool = False
) -> bool:
    """``got`` differs from the reference's ``answer`` in floats alone, each by at most the bound of
    a floating-point sum of the input's numbers in any order: ``n * eps * sum(|x|)`` (n numbers).
    Another order of the reference's sum (3.12's compensated ``sum()`` against a loop) stays within it;
    a table's fallback, a constant or a wrong formula on an ordinary input does not.

    Under ``propagated`` (filter v19) that bound is the sum's, carried to the answer as the answer
    relates to the sum: where the reference's float is the input's numbers' sum divided by their count
    (within the sum's bound divided by the count) and not the sum itself (farther from it than the
    sum's bound), it is a mean, and what another order can change in it is the sum's bound divided
    by the count, plus the division's own rounding on either side: ``eps * (sum(|x|) + |answer|)``.
    Any two evaluations of a mean that sum in some order (a loop, a compensated or exact sum,
    pairwise, the terms divided first) differ by less (each sum is within ``(n - 1) * eps / 2 *
    sum(|x|)`` of the exact one, each quotient within half a unit of its own); a mean rounded to 15
    significant digits is up to 22 units off, outside it on a short list. Any other answer keeps the
    sum's bound.

    Under ``attainable`` (filter v23) the bound is not all: where the reference's float is one of the
    evaluations :func:`sum_evaluations` makes of the input's numbers (within 4 units in its last
    place), the sums or the means, ``got`` must also lie within the spread of that family and the
    reference's float, widened on each side by half the spread (at least 4 units in the last place).
    The bound is the worst case of any order; where the numbers cancel it is far wider than what
    any order gives (``[2, 1e16, 1, -1e16, 3]``: every order's mean lies in 0.8..1.6, the bound allows
    4.4 either side of the reference's 1.2), and through v21 a program answering 0.0 there passed. An
    answer of another kind (neither family holds the reference's float) keeps the bound alone.
    Never raises (a sum past the float range has no bound: not within)."""
    if not differ_in_floats_only(answer, got):
        return False
    numbers: list[float] = []
    try:
        _numbers_in(parse_expected(input_text), numbers)
    except NotALiteral:
        return False
    eps = sys.float_info.epsilon
    n = len(numbers)
    try:
        magnitude = math.fsum(abs(x) for x in numbers)
        total = math.fsum(numbers)
    except (OverflowError, ValueError):  # an intermediate sum past the float range, inf - inf
        return False
    bound = n * eps * magnitude
    if not math.isfinite(bound) or not math.isfinite(total):
        return False
    pairs: list[tuple[float, float]] = []
    _float_pairs(answer, got, pairs)
    families: tuple[list[float], list[float]] | None = None
    for a, g in pairs:
        if not (math.isfinite(a) and math.isfinite(g)):
            return False
        allowed = bound
        if propagated and n > 1 and abs(a - total / n) <= bound / n and abs(a - total) > bound:
            allowed = eps * (magnitude + abs(a))
        if abs(a - g) > allowed:
            return False
        if attainable and n > 1:
            if families is None:
                families = sum_evaluations(numbers)
            if not _within_spread(a, g, families):
                return False
    return True


#: (filter v23) orders of the input's numbers drawn at random (a fixed seed) beside the named ones, so
#: that the spread of the evaluations reaches what orders no structure names give
SHUFFLED_ORDERS = 64


def sum_evaluations(numbers: Sequence[float]) -> tuple[list[float], list[float]]:
    """(filter v23) The input's numbers summed as correct programs sum them, and their means: a loop in
    the input's order and reversed, sorted either way and by magnitude either way, ``math.fsum``, a
    compensated (Neumaier) sum as 3.12's ``sum()``, halves summed recursively, and
    :data:`SHUFFLED_ORDERS` shuffles drawn with a fixed seed (so the sample is the same on every replay);
    the means are those sums
    divided by the count, the terms divided first (a loop and ``fsum``) and a running mean. Only the
    finite ones (never raises)."""
    xs = list(numbers)
    n = len(xs)

    def loop(values: Sequence[float]) -> float:
        t = 0.0
        for v in values:
            t += v
        return t

    def compensated(values: Sequence[float]) -> float:
        t = c = 0.0
        for v in values:
            u = t + v
            c += (t - u) + v if abs(t) >= abs(v) else (v - u) + t
            t = u
        return t + c

    def halves(values: Sequence[float]) -> float:
        if len(values) <= 2:
            return loop(values)
        mid = len(values) // 2
        return halves(values[:mid]) + halves(values[mid:])

    sums: list[float] = []
    means: list[float] = []
    try:
        for order in (xs, xs[::-1], sorted(xs), sorted(xs, reverse=True), sorted(xs, key=abs)):
            sums.append(loop(order))
        sums.append(loop(sorted(xs, key=abs, reverse=True)))
        sums.append(math.fsum(xs))
        sums.append(compensated(xs))
        sums.append(halves(xs))
        # orders no one structure names (a set's, a dict's, a heap's): a fixed sample of shuffles
        shuffler = random.Random(len(xs))
        for _ in range(SHUFFLED_ORDERS):
            order = list(xs)
            shuffler.shuffle(order)
            sums.append(loop(order))
        means += [s / n for s in sums]
        means.append(loop([x / n for x in xs]))
        means.append(math.fsum(x / n for x in xs))
        running = 0.0
        for k, x in enumerate(xs, 1):
            running += (x - running) / k
        means.append(running)
    except (OverflowError, ValueError, ZeroDivisionError):
        pass
    return [s for s in sums if math.isfinite(s)], [m for m in means if math.isfinite(m)]


def _within_spread(a: float, g: float, families: tuple[list[float], list[float]]) -> bool:
    """(filter v23) Whether ``g`` lies within the spread of the family of evaluations that holds the
    reference's ``a`` (and ``a`` itself), widened on each side by half that spread, at least 4 units in
    the last place; true where neither family holds ``a`` (an answer of another kind)."""
    for family in families:
        if not any(abs(a - e) <= 4 * math.ulp(max(abs(a), abs(e))) for e in family):
            continue
        lo, hi = min(*family, a), max(*family, a)
        slack = max((hi - lo) / 2, 4 * math.ulp(max(abs(lo), abs(hi))))
        return lo - slack <= g <= hi + slack
    return True


#: (filter v13) past this magnitude not every integer is a double's value: a reference that reads a
#: number through float() answers the nearest double there (5033351515040504832 for 5033351515040505000)
EXACT_FLOAT_INTS = 2**53


def read_through_float(answer: object, got: object, options: CompareOptions) -> bool:
    """(filter v13) ``got`` has ``answer``'s shape and matches it everywhere but at integers, and at each
    integer where they differ the reference's ``answer`` lies past :data:`EXACT_FLOAT_INTS`, is exactly a
    double's value, and ``got`` rounds to that double: the reference's answer is what reading the
    program's through a float gives. Below 2**53 a float holds every integer, so no other difference
    passes (a program off by one, or computing integers through floats where the reference is exact,
    is still judged); never raises."""
    try:
        differs: list[bool] = []
        return _same_but_float_read(answer, got, options, differs, 0) and any(differs)
    except (RecursionError, MemoryError, TypeError, ValueError, OverflowError, ArithmeticError):
        return False


def _same_but_float_read(
    a: object, b: object, options: CompareOptions, differs: list[bool], depth: int
) -> bool:
    if depth > 100:
        return False
    if type(a) is int and type(b) is int:
        if a == b:
            return True
        differs.append(True)
        # float() of an integer past the double range raises OverflowError: no double, no rounding
        return abs(a) > EXACT_FLOAT_INTS and int(float(a)) == a and float(b) == float(a)
    if type(a) is not type(b):
        return values_match(a, b, options)
    if isinstance(a, list | tuple):
        assert isinstance(b, list | tuple)
        return len(a) == len(b) and all(
            _same_but_float_read(x, y, options, differs, depth + 1) for x, y in zip(a, b, strict=True)
        )
    if isinstance(a, dict):
        assert isinstance(b, dict)
        keys = {canonical_key(k): k for k in b}
        return len(a) == len(b) and all(
            canonical_key(k) in keys
            and _same_but_float_read(v, b[keys[canonical_key(k)]], options, differs, depth + 1)
            for k, v in a.items()
        )
    return values_match(a, b, options)


def _float_pairs(a: object, b: object, out: list[tuple[float, float]], depth: int = 0) -> None:
    """The float leaves of two values ``differ_in_floats_only`` accepted, pairwise."""
    if depth > 100:
        return
    if type(a) is float and type(b) is float:
        out.append((a, b))
    elif isinstance(a, list | tuple | deque) and isinstance(b, list | tuple | deque):
        for x, y in zip(a, b, strict=False):
            _float_pairs(x, y, out, depth + 1)
    elif isinstance(a, dict) and isinstance(b, dict):
        keys = {canonical_key(k): k for k in b}
        for k, v in a.items():
            other = keys.get(canonical_key(k))
            if other is not None:
                _float_pairs(v, b[other], out, depth + 1)
