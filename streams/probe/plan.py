"""Probe plans: the inputs a passing sample is run on again, to tell a program that computes its answers
from one that recalls them.

A plan holds the task's own cases in another order, then inputs generated from the cases' own values and
types: integers and floats moved a little within the range the cases use (signs kept),
strings with characters swapped, replaced, dropped or added from the same character class, lists
shuffled, shortened, lengthened or with an element changed (kept sorted or distinct where every case's
list is), arguments of different cases recombined. A program that computes its answers returns the
same value for a case in any order and agrees with the task's reference on most generated inputs; one
that serves answers in call order or looks them up in a table does neither.

A task judged by its ``check`` alone has no cases: its plan starts from the calls of the candidate the
check itself makes with literal arguments (``assert candidate([1, 2, 4, 10], 100)``), each a call whose
answer the check pins (compared with ``==``/``is`` or asserted truthy/falsy, a ``tuple()``/``list()``
around it at most), and generates further inputs from them as from cases, keeping a few more
relations every call shows (see :class:`_CheckDomain`). Such a plan is only made for a task with a
reference: the check's calls have no expected values on the host, so every input is judged against the
reference's answer (:data:`CHECK_PLAN_VERSION`).

Pure and deterministic given its seed: a plan is a function of the task's content (its event id), of
a secret *probe seed* and of its version, so the sandbox that runs it, the filter that judges it and an
audit that re-judges it years later all derive the same plan; its digest names it on the log. The probe
seed (:func:`new_probe_seed`) is drawn afresh by the sandbox processor when it decides a sample earns a
probe run, after the program was written, and recorded on that run's event (``probe_seed``): no program
can carry the answers of inputs nobody had drawn when it was written. Without a seed (runs written
before seeds existed) the plan is the one derived from the task alone (:data:`PLAN_VERSION`,
:data:`CHECK_PLAN_VERSION`), exactly as it always was, so old runs replay byte for byte.

A seeded plan (:data:`SEEDED_PLAN_VERSION`, :data:`SEEDED_CHECK_PLAN_VERSION`) also goes beyond the
cases' range: after the inputs near the cases come inputs whose numbers lie past the range the cases
use (up to a few times their magnitude, signs kept) or whose integers are all multiplied by one small
factor (common divisors and magnitudes the cases never show). The reference's own runs decide which of
them count (one it raises on or is too slow for says nothing), and since the task's stated domain may
end where the cases do, a program is held only to the *value* it returns there: raising, hanging or
exiting on such an input is not held against it (``ProbePlan.far``). Since p4/c3 such inputs also go
beyond the cases' *sizes*: strings, lists, nested lists, dicts and sets a few times longer than the
longest the cases pass at that position, built from what the cases hold there and keeping every relation
they keep (:class:`_Sizes`), within a size limit that keeps a correct program whose cost grows with
size in time. Since p8/c8 the run starts with a generated input (``ProbePlan.lead``: a program wrong only
on its process's first call shows there) and ends with inputs at extremes no case approaches: integers
around the machine widths, arguments thousands of elements long (``ProbePlan.ends``). Since p9/c9 it
also holds inputs of the kinds the task's statement admits though no case shows them (a float where the
cases pass ints, zero, a letter of the other case: :func:`_generate_admitted`). Since p10/c10 most of
its long inputs lie between the far inputs' reach and 1000 elements (:data:`LONG_BANDED_INPUTS`). Since
p11/c11 an input whose integers are multiplied by 10, 100 or 1000 is multiplied by a factor drawn just
above it instead (:data:`DIGITS_KEPT_FACTORS`): its answers keep their significant digits. Since
p12/c12 every input with a list argument to reverse has its mirror and its sorted twins
(``ProbePlan.orders``): a tie the task leaves open shows there (:data:`_MIRRORED_GENERATION`). Since
p13/c13 a bytes argument is varied, near the cases and longer than them (:func:`_generate_bytes`). Since
p14/c14 strings are also widened with cased letters beyond Latin-1 and the BMP, and with whole words of
them (:func:`_generate_wider_letters`), and bytes inside lists and tuples are varied
(:func:`_generate_nested_bytes`). Since p15/c15 a plan holds the empty string where no case's string
is empty, machine-bound integers inside every case's list of ints, and integers of the digit counts
between two the cases show (:func:`_generate_edges`). Since p16/c16 it holds integers at powers of ten
and two, a widened letter at a string's first position, and zero and negatives where the statement
admits them (:func:`_generate_boundaries`). Since p17/c17 it holds integers at the widths machine and
library integers wrap at, equal integers at large magnitudes, a negative zero and subnormal floats
(:func:`_generate_widths`). Since p18/c18 a few cheap inputs near the cases come twice in a row
(:func:`_twice`), a string whose cases are groups of balanced brackets keeps each group balanced
(:func:`_balanced_groups`), and a run of blanks is lengthened past the cases' longest
(:func:`_generate_blank_runs`). Since p19/c19 it holds bracket strings nesting 100 to 300 deeper than
any case (:func:`_generate_deep_nesting`) and lists whose cases mix ints and floats grown past the cases'
own numbers with new ones (:func:`_generate_grown_numbers`). Since p20/c20 lists of floats alone and
lists of words grow past the cases' own elements with new ones of their kind
(:func:`_generate_grown_elements`), and a few cheap inputs near the cases are asked again after exactly
one other call, one of them five times (:func:`_asked_again`). Since p21/c21 inputs come back after
every distance of 2 to 12 other calls, at inputs drawn from the seed (:func:`_gapped`), and a case and an
input near the cases holding a list are each asked twice in a row in the run's second half, where the
second call is handed the first's very argument objects, unchanged (:func:`_held`). Since p22/c22 inputs
also come back after distances drawn in bands up to 64 calls and at inputs longer than the median
(:func:`_gapped_more`), after every distance of 2 to 12 calls in the run's second half, where the stub
refills one set of argument objects for every call (:func:`_gapped_late`), and inputs past the cases'
range are held twice on the same objects (:func:`_held_far`). Since p23/c23, where the task's statement
keeps its text to ASCII, each input holding a character past ASCII has its two ASCII twins beside it
(:func:`_with_ascii_twins`, ``ProbePlan.ascii_twins``). A run of an older seeded version finds its plan by
its digest (:func:`recorded_plan`).
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import itertools
import math
import random
import re
import secrets
import unicodedata
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from schemas import pyast
from schemas.rollout import SandboxExecuted
from schemas.task import TaskPublished
from streams.probe.statement import (
    Admits,
    AsciiText,
    Relation,
    Signs,
    operand_value,
    stated_admits,
    stated_calls,
    stated_forms,
    stated_integers,
    stated_letters_only,
    stated_numbers,
    stated_preconditions,
    stated_signs,
)

#: the generator's version; a change to how inputs are generated is a new version (new digests)
PLAN_VERSION = "p2"
#: the version of plans derived from a check's literal calls (their own name: their digests and seeds
#: never collide with a case plan's)
CHECK_PLAN_VERSION = "c1"
#: the versions of plans drawn with a probe seed (inputs near the cases, then inputs beyond their range:
#: numbers past the cases' range, and since p4/c3 strings, lists and dicts longer than the cases')
SEEDED_PLAN_VERSION = "p24"
SEEDED_CHECK_PLAN_VERSION = "c24"
#: every generation of seeded plans, oldest first, as (case plan, check plan) versions: a run records
#: its plan's digest, and an old run's plan is derived again by the generator of its own version
SEEDED_VERSIONS = (
    ("p3", "c2"),
    ("p4", "c3"),
    ("p4", "c4"),
    ("p5", "c5"),
    ("p6", "c6"),
    ("p7", "c7"),
    ("p8", "c8"),
    ("p9", "c9"),
    ("p10", "c10"),
    ("p11", "c11"),
    ("p12", "c12"),
    ("p13", "c13"),
    ("p14", "c14"),
    ("p15", "c15"),
    ("p16", "c16"),
    ("p17", "c17"),
    ("p18", "c18"),
    ("p19", "c19"),
    ("p20", "c20"),
    ("p21", "c21"),
    ("p22", "c22"),
    ("p23", "c23"),
    (SEEDED_PLAN_VERSION, SEEDED_CHECK_PLAN_VERSION),
)
#: a version that only refuses more inputs than the one it refines draws as that one does: where it
#: refuses nothing more, its plan holds the same inputs (under a digest of its own); c5 (the wider plans
#: with c4's 1..n rule) draws from the seed named c4; p6/c6 draw every input p5/c5 hold as those do, and
#: the inputs they add from a generator of their own (seeded by their own version: :data:`_WIDE_DRAWN_AS`);
#: p7/c7 draw as p6/c6 do, wherever they keep no more than those (see :data:`RELATED_VERSIONS`); p8/c8
#: draw every input p7/c7 hold as those do, and what they add (the lead, the extremes) from a generator
#: of their own (seeded by their own version); p9/c9 draw every input p8/c8 hold as those do (the lead,
#: the extremes and the spread lengths from p8/c8's own generator: :data:`_EXTREME_DRAWN_AS`), and the
#: inputs the task's statement admits from a generator of their own (:func:`_generate_admitted`); p10/c10
#: draw every input p9/c9 hold as those do (the admitted ones from p9/c9's own generator:
#: :data:`_ADMITTED_DRAWN_AS`) but the long inputs, which they draw from a generator of their own
#: (:data:`LONG_BANDED_INPUTS`); p11/c11 draw every input p10/c10 hold as those do (the long inputs from
#: p10/c10's own generator: :data:`_BANDED_DRAWN_AS`) but the factors past 10 that a far input's integers
#: are multiplied by, which they draw from a generator of their own (:data:`DIGITS_KEPT_FACTORS`); p12/c12
#: draw every input p11/c11 hold as those do (the factors from p11/c11's own generator:
#: :data:`_DIGITS_DRAWN_AS`) and add the mirror of every input that had none (:data:`_MIRRORED_GENERATION`)
_DRAWN_AS = {
    "c4": "c3",
    "c5": "c4",
    "p6": "p5",
    "c6": "c4",
    "p7": "p5",
    "c7": "c4",
    "p8": "p5",
    "c8": "c4",
    "p9": "p5",
    "c9": "c4",
    "p10": "p5",
    "c10": "c4",
    "p11": "p5",
    "c11": "c4",
    "p12": "p5",
    "c12": "c4",
    "p13": "p5",
    "c13": "c4",
    "p14": "p5",
    "c14": "c4",
    "p15": "p5",
    "c15": "c4",
    "p16": "p5",
    "c16": "c4",
    "p17": "p5",
    "c17": "c4",
    "p18": "p5",
    "c18": "c4",
    "p19": "p5",
    "c19": "c4",
    "p20": "p5",
    "c20": "c4",
    "p21": "p5",
    "c21": "c4",
    "p22": "p5",
    "p23": "p5",
    "p24": "p5",
    "c22": "c4",
    "c23": "c4",
    "c24": "c4",
}
#: the version whose seed draws the inputs that widen the cases' domain (:func:`_generate_wide`)
_WIDE_DRAWN_AS = {
    "p7": "p6",
    "c7": "c6",
    "p8": "p6",
    "c8": "c6",
    "p9": "p6",
    "c9": "c6",
    "p10": "p6",
    "c10": "c6",
    "p11": "p6",
    "c11": "c6",
    "p12": "p6",
    "c12": "c6",
    "p13": "p6",
    "c13": "c6",
    "p14": "p6",
    "c14": "c6",
    "p15": "p6",
    "c15": "c6",
    "p16": "p6",
    "c16": "c6",
    "p17": "p6",
    "c17": "c6",
    "p18": "p6",
    "c18": "c6",
    "p19": "p6",
    "c19": "c6",
    "p20": "p6",
    "c20": "c6",
    "p21": "p6",
    "c21": "c6",
    "p22": "p6",
    "p23": "p6",
    "p24": "p6",
    "c22": "c6",
    "c23": "c6",
    "c24": "c6",
}
#: the version whose seed draws the lead, the extremes and the lengths the cases leave out (p8/c8 on)
_EXTREME_DRAWN_AS = {
    "p9": "p8",
    "c9": "c8",
    "p10": "p8",
    "c10": "c8",
    "p11": "p8",
    "c11": "c8",
    "p12": "p8",
    "c12": "c8",
    "p13": "p8",
    "c13": "c8",
    "p14": "p8",
    "c14": "c8",
    "p15": "p8",
    "c15": "c8",
    "p16": "p8",
    "c16": "c8",
    "p17": "p8",
    "c17": "c8",
    "p18": "p8",
    "c18": "c8",
    "p19": "p8",
    "c19": "c8",
    "p20": "p8",
    "c20": "c8",
    "p21": "p8",
    "c21": "c8",
    "p22": "p8",
    "p23": "p8",
    "p24": "p8",
    "c22": "c8",
    "c23": "c8",
    "c24": "c8",
}
#: the version whose seed draws the inputs the task's statement admits (p9/c9 on)
_ADMITTED_DRAWN_AS = {
    "p10": "p9",
    "c10": "c9",
    "p11": "p9",
    "c11": "c9",
    "p12": "p9",
    "c12": "c9",
    "p13": "p9",
    "c13": "c9",
    "p14": "p9",
    "c14": "c9",
    "p15": "p9",
    "c15": "c9",
    "p16": "p9",
    "c16": "c9",
    "p17": "p9",
    "c17": "c9",
    "p18": "p9",
    "c18": "c9",
    "p19": "p9",
    "c19": "c9",
    "p20": "p9",
    "c20": "c9",
    "p21": "p9",
    "c21": "c9",
    "p22": "p9",
    "p23": "p9",
    "p24": "p9",
    "c22": "c9",
    "c23": "c9",
    "c24": "c9",
}
#: the version whose seed draws the long inputs in bands (p10/c10 on)
_BANDED_DRAWN_AS = {
    "p11": "p10",
    "c11": "c10",
    "p12": "p10",
    "c12": "c10",
    "p13": "p10",
    "c13": "c10",
    "p14": "p10",
    "c14": "c10",
    "p15": "p10",
    "c15": "c10",
    "p16": "p10",
    "c16": "c10",
    "p17": "p10",
    "c17": "c10",
    "p18": "p10",
    "c18": "c10",
    "p19": "p10",
    "c19": "c10",
    "p20": "p10",
    "c20": "c10",
    "p21": "p10",
    "c21": "c10",
    "p22": "p10",
    "p23": "p10",
    "p24": "p10",
    "c22": "c10",
    "c23": "c10",
    "c24": "c10",
}
#: the version whose seed draws the factors that keep a far input's significant digits (p11/c11 on)
_DIGITS_DRAWN_AS = {
    "p12": "p11",
    "c12": "c11",
    "p13": "p11",
    "c13": "c11",
    "p14": "p11",
    "c14": "c11",
    "p15": "p11",
    "c15": "c11",
    "p16": "p11",
    "c16": "c11",
    "p17": "p11",
    "c17": "c11",
    "p18": "p11",
    "c18": "c11",
    "p19": "p11",
    "c19": "c11",
    "p20": "p11",
    "c20": "c11",
    "p21": "p11",
    "c21": "c11",
    "p22": "p11",
    "p23": "p11",
    "p24": "p11",
    "c22": "c11",
    "c23": "c11",
    "c24": "c11",
}
#: the version whose seed draws the varied top-level bytes arguments (p13/c13 on)
_BYTES_DRAWN_AS = {
    "p14": "p13",
    "c14": "c13",
    "p15": "p13",
    "c15": "c13",
    "p16": "p13",
    "c16": "c13",
    "p17": "p13",
    "c17": "c13",
    "p18": "p13",
    "c18": "c13",
    "p19": "p13",
    "c19": "c13",
    "p20": "p13",
    "c20": "c13",
    "p21": "p13",
    "c21": "c13",
    "p22": "p13",
    "p23": "p13",
    "p24": "p13",
    "c22": "c13",
    "c23": "c13",
    "c24": "c13",
}
#: the version whose seed draws the letters beyond Latin-1 and the bytes inside lists (p14/c14 on)
_LETTERS_DRAWN_AS = {
    "p15": "p14",
    "c15": "c14",
    "p16": "p14",
    "c16": "c14",
    "p17": "p14",
    "c17": "c14",
    "p18": "p14",
    "c18": "c14",
    "p19": "p14",
    "c19": "c14",
    "p20": "p14",
    "c20": "c14",
    "p21": "p14",
    "c21": "c14",
    "p22": "p14",
    "p23": "p14",
    "p24": "p14",
    "c22": "c14",
    "c23": "c14",
    "c24": "c14",
}
#: the version whose seed draws the empty strings, the bounds inside lists and the digit counts (p15/c15 on)
_EDGES_DRAWN_AS = {
    "p16": "p15",
    "c16": "c15",
    "p17": "p15",
    "c17": "c15",
    "p18": "p15",
    "c18": "c15",
    "p19": "p15",
    "c19": "c15",
    "p20": "p15",
    "c20": "c15",
    "p21": "p15",
    "c21": "c15",
    "p22": "p15",
    "p23": "p15",
    "p24": "p15",
    "c22": "c15",
    "c23": "c15",
    "c24": "c15",
}
#: the version whose seed draws the powers of ten and two, the first letters and the signs (p16/c16 on)
_BOUNDARIES_DRAWN_AS = {
    **{v: "p16" for v in ("p17", "p18", "p19", "p20", "p21", "p22", "p23", "p24")},
    **{v: "c16" for v in ("c17", "c18", "c19", "c20", "c21", "c22", "c23", "c24")},
}
#: the version whose seed draws the integer widths, signed zeros and subnormals (p17/c17 on)
_WIDTHS_DRAWN_AS = {
    **{v: "p17" for v in ("p18", "p19", "p20", "p21", "p22", "p23", "p24")},
    **{v: "c17" for v in ("c18", "c19", "c20", "c21", "c22", "c23", "c24")},
}
#: the versions whose plans repeat the cases after the inputs near them and reach further past their
#: range (p5/c5 on): a float-only difference from the reference on an input past the range is judged as
#: rounding there (``streams/noise/probe.py``), since such an input's floats may carry every digit
WIDER_VERSIONS = frozenset(v for generation in SEEDED_VERSIONS[3:] for v in generation)
#: the versions whose plans also widen the cases' domain in kind (p6/c6 on: :func:`_generate_wide`) and
#: ask the cheaper cases again, round and round, until the run has made :data:`LATE_CALLS` calls
WIDEST_VERSIONS = frozenset(v for generation in SEEDED_VERSIONS[4:] for v in generation)
#: the versions (p7/c7 on) whose inputs past the cases' range keep every relation between two arguments'
#: lengths that :data:`RELATION_CASES` cases keep (``len(operand) == len(operator) + 1``: both lengthened
#: together, :class:`_Sizes`), where p4 to p6 lengthened such arguments one at a time and the filter
#: (v6 on) left every such input out; and that hold, beside each input past the range with an empty
#: argument, the same input with that argument filled from the cases (:func:`_filled`): what the
#: reference does once it must read that argument tells whether it refuses the other arguments
RELATED_VERSIONS = frozenset(v for generation in SEEDED_VERSIONS[5:] for v in generation)
#: the versions (p10/c10 on) whose long inputs are drawn in bands (:data:`LONG_BANDED_INPUTS`): a hang on
#: one is no evidence (``streams.noise.probe.long_input``)
BANDED_VERSIONS = frozenset(v for generation in SEEDED_VERSIONS[8:] for v in generation)
#: a relation between two arguments' lengths is the cases' only where this many of them keep it (the
#: filter reads the same relations: ``streams.noise.probe.outside_cases``)
RELATION_CASES = 3
#: the first generation (p8/c8) whose plans start the run with an input near the cases that is none of
#: them (``ProbePlan.lead``) and end it with inputs at extremes no case approaches (:func:`_generate_extreme`)
_EXTREME_GENERATION = 6
#: the first generation (p9/c9) whose plans widen the cases' domain to what the task's statement admits
#: (:func:`_generate_admitted`)
_ADMITTED_GENERATION = 7
#: the first generation (p10/c10) whose long inputs are drawn in bands, most of them between the far
#: inputs' reach and 1000 elements (:data:`LONG_BANDED_INPUTS`)
_BANDED_GENERATION = 8
#: the first generation (p11/c11) whose far inputs multiply integers by factors that keep their
#: significant digits (:data:`DIGITS_KEPT_FACTORS`)
_DIGITS_GENERATION = 9
#: the first generation (p12/c12) whose plans hold the mirror of every input with a list argument to
#: reverse (``ProbePlan.mirrors``), where p5/c5 to p11/c11 laid a mirror only where it kept the seeded
#: plan's domain: the inputs the plan of the task alone holds (drawn without the rule that a list repeats
#: no more of its elements than a case's list does) had none where they repeat more, and a tie on one of
#: them (two closest pairs of HumanEval/20 at distance 0) was judged against the reference's own
#: tie-break alone, rejecting a correct program that takes the other (see :func:`_mirror`); and whose
#: plans hold every input's sorted twins (``ProbePlan.orders``, :func:`_sorted_twins`), which give the
#: tie-breaks by value (the smallest, the largest) where a mirror gives those by position
_MIRRORED_GENERATION = 10
#: the first generation (p13/c13) whose plans vary a bytes argument (:func:`_generate_bytes`, from a
#: generator of its own): through p12/c12 ``_mutate`` returned a bytes value as it was and the far
#: inputs never lengthened one, so every generated input held one of the cases' own bytes values
_BYTES_GENERATION = 11
#: (p13/c13) per bytes argument position: inputs near the cases (lengths within the cases', bytes from
#: the cases' and a few others) and inputs longer than the cases' longest (up to :data:`FAR_REACH` times)
BYTES_NEAR_INPUTS = 8
BYTES_FAR_INPUTS = 4
#: (p13/c13) how many bytes no case holds join the cases' own as the bytes a new value is drawn from
BYTES_OTHERS = 4
#: the first generation (p14/c14) whose plans widen strings with cased letters beyond Latin-1
#: (:data:`WIDER_LETTERS`, :func:`_generate_wider_letters`) and vary bytes inside lists and tuples
#: (:func:`_generate_nested_bytes`), each from a generator of its own: through p13/c13 the letters no case
#: holds were :data:`_OTHER_LETTERS`' eight Latin-1 ones per case, all in the BMP, two bytes in UTF-8,
#: their cases 32 code points apart, always put in place of one or two letters (a word kept its length in
#: bytes but for them), and a bytes value inside a list was never changed
_LETTERS_GENERATION = 12
#: (p14/c14) per input that widens strings with :data:`WIDER_LETTERS`: inputs with one or two letters
#: replaced, and inputs with whole words (runs of letters) made of one script's letters, their length in
#: code points kept (in UTF-8 bytes and UTF-16 code units it grows)
WIDER_LETTER_INPUTS = 6
WIDER_WORD_INPUTS = 4
#: the first generation (p15/c15) whose plans draw, from a generator of their own
#: (:func:`_generate_edges`), the empty string where no case's string is empty, machine-bound integers
#: inside every case's list of numbers, and integer arguments of digit counts the cases leave out
_EDGES_GENERATION = 13
#: (p15/c15) per string argument no case passes empty: inputs with it emptied (a case's other arguments)
EMPTY_STRING_INPUTS = 2
#: (p15/c15) per list-of-numbers argument and machine bound: how many cases get one element set near it
BOUND_LIST_CASES = 8
#: (p15/c15) how many digit counts the cases leave out an input's integer arguments are given (one
#: input near the top of that count's range, one drawn across it, for each)
DIGIT_COUNTS = 4
#: the first generation (p16/c16) whose plans draw, from a generator of their own
#: (:func:`_generate_boundaries`), integers at powers of ten and two, a widened letter at a string's first
#: position, and zero and negative numbers where the statement admits them (:func:`stated_signs`)
_BOUNDARY_GENERATION = 14
#: (p16/c16) per integer argument: inputs with it set to a power of ten or two or one below
#: (``10**k - 1``, ``10**k``, ``2**k - 1``, ``2**k``, for the digit and bit counts the cases span there)
BOUNDARY_INPUTS = 4
#: (p16/c16) per string position with cased letters: inputs with the first letter of a string (the last
#: of them: of a word) replaced by a letter of :data:`WIDER_LETTERS` of its case
FIRST_LETTER_INPUTS = 6
#: (p16/c16) per numeric position whose statement admits them: inputs with zero, and with negatives
SIGN_INPUTS = 4
#: the first generation (p17/c17) whose plans draw, from a generator of their own
#: (:func:`_generate_widths`), integers at the widths machine and library integers wrap, saturate or hash
#: at, equal integer arguments at large magnitudes, magnitudes between the far inputs' reach and 2**31,
#: a negative zero where a case holds 0.0 and subnormal floats
_WIDTH_GENERATION = 15
#: (p17/c17) the bit widths an integer argument is set around: ``2**k - 1``, ``2**k``, ``2**k + 1`` (int32,
#: uint32, a double's exact integers, the hash modulus ``2**61 - 1``, int64, uint64)
INT_WIDTHS = (31, 32, 53, 61, 63, 64)
#: (p17/c17) and the digits of the one long decimal number (its last digit one no other digit is)
LONG_DIGITS = 40
#: (p17/c17) the largest of a double's run of exact integers: past it a reference that reads its numbers
#: through a float answers a double's value
EXACT_FLOAT_INTS = 2**53
#: (p17/c17) and how far the integer widths reach where the reference reads its numbers through a float
#: and no case passes a number past :data:`EXACT_FLOAT_INTS`: ``3 * n + 1`` of HumanEval/123's reference
#: halved by ``/`` leaves a double's exact integers below 2**53 already
FLOAT_READ_REACH = 2**32 + 1
#: (p17/c17) per pair of integer arguments: inputs with both set to one large value
EQUAL_INPUTS = 4
#: (p17/c17) per integer argument: inputs log-uniform between 1000 times the cases' magnitude and 2**31
GAP_INPUTS = 6
#: (p17/c17) per float argument: cases holding 0.0 given -0.0, and inputs with a subnormal float
SIGNED_ZERO_INPUTS = 2
SUBNORMAL_INPUTS = 3
#: the first generation (p18/c18) whose plans ask a few cheap inputs near the cases twice in a row
#: (:func:`_twice`), keep each group of a string balanced where every case's groups balance
#: (:func:`_balanced_groups`), and lengthen a run of blanks past the cases' longest
#: (:func:`_generate_blank_runs`). Through p17/c17 no plan asked one input twice in a row: the generated
#: inputs are distinct, and the inputs asked again (p5's cheap half, p6's late cases) come round a
#: cycle after other inputs, so a program answering otherwise when a call repeats the previous call's
#: arguments was never seen; and a string whose cases are space-separated balanced groups
#: (HumanEval/6's ``'(()()) ((())) () ((())()())'``) was kept balanced as a whole only, so a character
#: moved across a space (``'()( (())()())'``) made groups whose depth the task leaves undefined; and no
#: run of blanks longer than the cases' longest was drawn
_TWICE_GENERATION = 16
#: (p18/c18) at most this many inputs near the cases asked twice in a row: one made from each case (a
#: check's call) as far as they go, each drawn among the cheaper half of those inputs
TWICE_INPUTS = 8
#: (p18/c18) per string position where some case holds a run of two or more blanks (white space in a
#: row): inputs with one such run of a case lengthened past the cases' longest (:func:`_generate_blank_runs`)
BLANK_RUN_INPUTS = 3
#: the version whose seed draws the repeated inputs and the blank runs (p18/c18 on)
_TWICE_DRAWN_AS = {
    **{v: "p18" for v in ("p19", "p20", "p21", "p22", "p23", "p24")},
    **{v: "c18" for v in ("c19", "c20", "c21", "c22", "c23", "c24")},
}
#: the first generation (p19/c19) whose plans draw, from generators of their own, bracket strings
#: nesting far deeper than any case (:func:`_generate_deep_nesting`) and lists of numbers of both kinds
#: grown past the cases' own numbers (:func:`_generate_grown_numbers`). Through p18/c18 a bracket string
#: was the cases' strings mutated a character at a time or joined end to end, so none nested deeper than
#: a case does (HumanEval/61: 6 levels, its 3000-character inputs included), and a list whose cases mix
#: ints and floats grew with the cases' own numbers only (new numbers came where every element is an
#: int), so with distinct elements none grew past the cases' distinct numbers (redteam/mean: 15)
_DEEP_GENERATION = 17
#: (p19/c19) per string position and bracket pair where every case's string is made of brackets alone or
#: balances (:func:`_deep_positions`): inputs with one balanced part of a case wrapped in this many more
#: pairs, drawn in DEEP_NESTING (past a signed byte's 127 on most draws)
DEEP_INPUTS = 3
DEEP_NESTING = (100, 300)
#: (p19/c19) per list position whose cases mix ints and floats: inputs grown with new numbers of both
#: kinds, two within the far inputs' reach and one each in the two long bands (:data:`LONG_BANDED_INPUTS`)
GROWN_FAR_INPUTS = 2
#: the version whose seed draws the deep bracket strings and the grown lists (p19/c19 on)
_DEEP_DRAWN_AS = {
    **{v: "p19" for v in ("p20", "p21", "p22", "p23", "p24")},
    **{v: "c19" for v in ("c20", "c21", "c22", "c23", "c24")},
}
#: the first generation (p20/c20) whose plans draw, from generators of their own, lists of floats alone
#: and lists of words grown past the cases' own elements (:func:`_generate_grown_elements`), and ask a
#: few cheap inputs near the cases again after exactly one other call, one of them again and again
#: (:func:`_asked_again`). Through p19/c19 a list whose elements are not all ints grew with the cases' own
#: elements alone and repeated none more often than a case does (p19 added new numbers only where the
#: cases mix ints and floats), so none held more elements than the cases' distinct ones (HumanEval/28's
#: and /29's lists of strings at most 7, /149's at most 20, every word no longer than the cases'
#: longest), the long inputs included; and an input was asked again right after itself (p18) or after a
#: cycle of other inputs (p5, p6), never with exactly one call between, and at most three times in a run
_SPACED_GENERATION = 18
#: (p20/c20) per list position whose cases' elements are all floats, or all words (letters and digits):
#: inputs grown with new elements of that kind, two within the far inputs' reach and one in each long
#: band (:data:`LONG_BANDED_INPUTS`), as p19's :data:`GROWN_FAR_INPUTS`
GROWN_ELEMENT_FAR_INPUTS = 2
#: (p20/c20) how many inputs near the cases are asked again after exactly one other call (A, B, A), and
#: how many times in all the one input asked again and again is asked (each time after one other call)
SPACED_INPUTS = 3
HOT_ASKS = 5
#: (p20/c20) how many digits past the cases' decimals a new float of a grown list of floats shows
FLOAT_EXTRA_DIGITS = 6
#: the version whose seed draws the grown elements and the spaced repeats (p20/c20 on)
_SPACED_DRAWN_AS = {
    **{v: "p20" for v in ("p21", "p22", "p23", "p24")},
    **{v: "c20" for v in ("c21", "c22", "c23", "c24")},
}
#: the first generation (p21/c21) whose plans ask inputs near the cases again after every number of
#: other calls from :data:`MIN_REPEAT_GAP` to :data:`MAX_REPEAT_GAP` (:func:`_gapped`), and ask an input
#: holding a list, dict or set twice in a row where the probe run hands the second call the very
#: argument objects of the first, unchanged (:func:`_held`). Through p20/c20 an input came back right
#: after itself (p18), after one other call (p20) or after a cycle of dozens (p5's and p6's sections,
#: HumanEval/70 on the pinned seed: 61, 69, 71 and 223 to 234 calls later), never after 2 to 12 other
#: calls, so a program answering otherwise only at such a distance was never seen; and every input
#: asked twice in a row lay among the inputs near the cases, in the first half of the run, where the
#: stub hands each call new argument objects (``streams/sandbox/protocol.py``, ``caller_reuse_from``),
#: while in its second half, where a call's objects are the previous call's refilled in place, no two
#: calls in a row held the same input (the late section cycles over the cheaper cases): no call was
#: ever handed the previous call's own list unchanged, as a caller passing one list twice does
_GAPS_GENERATION = 19
#: (p21/c21) the numbers of other calls between an input's asking and its next that :func:`_gapped` lays,
#: each once per plan (where the inputs near the cases leave room), in an order and at inputs drawn
#: from the seed
MIN_REPEAT_GAP = 2
MAX_REPEAT_GAP = 12
#: the version whose seed draws the gapped repeats and the inputs asked twice on one object (p21/c21 on)
_GAPS_DRAWN_AS = {"p22": "p21", "c22": "c21", "p23": "p21", "c23": "c21", "p24": "p21", "c24": "c21"}
#: the first generation (p22/c22) whose plans ask inputs again at more distances, on longer inputs and in
#: the run's second half (:func:`_gapped_more`, :func:`_gapped_late`), and hold an input past the cases'
#: range twice on the same objects (:func:`_held_far`). Through p21/c21 the input asked again after 2 to
#: 12 other calls was drawn among those no longer than the median text (HumanEval/70: no input of more
#: than 7 distinct elements came back so), no input came back after 13 to ~60 other calls (p5's and p6's
#: cycles: 61 and more on HumanEval/70), none after 2 to 12 calls in the run's second half (where the
#: stub hands every call the previous call's argument objects refilled in place, so a repeat there is
#: the very object holding again what it held), and the lists held twice in a row on one object were a
#: case's and a cheap near input's only, never longer or larger than the cases'
_BANDS_GENERATION = 20
#: (p22/c22) the distances past :data:`MAX_REPEAT_GAP` an input is asked again at: one drawn in each band
#: (bands spread on a log scale up to 64 other calls), in each half of the run where it has room
REPEAT_GAP_BANDS = ((13, 19), (20, 31), (32, 47), (48, 64))
#: the version whose seed draws p22's repeats and its held input past the range (p22/c22 on)
_BANDS_DRAWN_AS = {"p23": "p22", "c23": "c22", "p24": "p22", "c24": "c22"}
#: (p23/c23) what stands for a character past ASCII in an input's other twin: no reading takes it for a
#: letter, a digit or white space
ASCII_OTHER = "#"
#: the first generation (p23/c23) whose plans add (:func:`_p23_additions`), from generators of their own:
#: - where the task's statement keeps its text to ASCII (it names ASCII characters, codes or values,
#:   English letters or alphabetical characters: ``statement.stated_forms``), the ASCII twins of every
#:   input holding a character past ASCII (``ProbePlan.ascii_twins``). Through p22/c22 such an input went
#:   unjudged whatever the character's place (the filter's ``AsciiText`` bound, v31), so a program wrong
#:   wherever a character past ASCII appears anywhere in its text was accepted: HumanEval/134's last
#:   character, /66's upper-case codes (red-team a44_ascii_part_wrong_134, a41's ASCII rows on /66);
#: - the zero and negative inputs a statement admits read with its tested signs
#:   (:func:`_generate_tested_signs`). Through p22/c22 a positive word anywhere in the statement kept zero
#:   out, even one the function tests ("Return True if every number is greater than zero"), and so did a
#:   convention on negatives alone ("divisible by 3", "the remainder of x divided by 7"): programs wrong
#:   only at zero were accepted (red-team a45_zero_greater_than_all_positive, a45_zero_divisible_fizzbuzz,
#:   a45_zero_remainder_by_seven);
#: - the decimals the statement writes (:func:`_generate_stated_numbers`)
_P23_GENERATION = 21
#: the version whose seed draws p23's tested signs (p23/c23 on)
_SIGNS_DRAWN_AS = {"p24": "p23", "c24": "c23"}
#: (p23/c23) per numeric argument holding floats (or flat lists with floats), at most this many inputs
#: with one number set to a decimal the statement writes (:func:`_generate_stated_numbers`). Through p22 a
#: float was the cases' digits mutated and never landed on a bound the statement names: HumanEval/81's
#: "> 3.7  A" read as "from 3.7" was accepted on the pinned seed (red-team a45_gpa_threshold_81)
STATED_NUMBER_INPUTS = 16
#: the first generation (p24/c24) whose plans add (:func:`_p24_additions`), from generators of their own:
#: - the calls of the entry point its statement writes with literal arguments (``statement.stated_calls``:
#:   "fib4(2) -> 2", an example's ``>>> f(...)``), among the inputs near the cases. Through p23/c23 an
#:   input the statement itself gives was drawn only by chance: HumanEval/46's fib4(2), which no case and
#:   no near draw reached (its cases start at 5), so a program wrong only at 2 was accepted (red-team
#:   round 48);
#: - the integers the statement compares with or bounds a range by, with their neighbours, and the bounds
#:   its counts of digits set (``statement.stated_integers``), among the inputs widening the cases'
#:   domain (:func:`_generate_stated_integers`). Through p23/c23 only the statement's decimals were
#:   drawn: HumanEval/122's "at most two digits" never met 100, so `<= 100` for `< 100` was accepted;
#: - where the statement keeps its text to ASCII and not to letters, inputs with one character set to an
#:   ASCII symbol, among the inputs widening the cases' domain (:func:`_generate_ascii_symbols`);
#: - the edges of a relation the statement gives between two integer arguments or fields (low = high,
#:   high = low + 1), among the near inputs (:func:`_generate_relation_edges`), which filter v34 judges
#:   only where they keep it;
#: - numbers written as text set to a magnitude under three, halves among them
#:   (:func:`_generate_numeric_texts`): HumanEval/99's '-0.5';
#: - p15's empty string where every case's string has one shape, which kept it out
#:   (:func:`_generate_empty_shaped`)
_P24_GENERATION = 22
#: (p24/c24) per integer argument (or flat list of integers), at most this many inputs with one integer
#: set to one the statement states (:func:`_generate_stated_integers`)
STATED_INTEGER_INPUTS = 16
#: (p24/c24) per string argument of a task whose statement keeps its text to ASCII and not to letters,
#: beside each symbol in place of the text's last character and after it, this many inputs with a drawn
#: symbol at a drawn place (:func:`_generate_ascii_symbols`)
ASCII_SYMBOL_INPUTS = 8
#: (p24/c24) per relation the statement gives between two integer arguments or fields, at most this many
#: inputs on its edge (:func:`_generate_relation_edges`)
RELATION_EDGE_INPUTS = 12
#: (p24/c24) per argument holding numbers written as text with decimals, at most this many inputs with a
#: number of magnitude under three (:func:`_generate_numeric_texts`), drawn from these
NUMERIC_TEXT_INPUTS = 12
#: (p24/c24) and this many of its halves written with two decimals ('2.50')
NUMERIC_TEXT_HALVES = 4
NUMERIC_TEXT_VALUES = (-2.5, -1.5, -0.9, -0.6, -0.5, -0.4, -0.1, 0.1, 0.4, 0.5, 0.6, 0.9, 1.5, 2.5)
#: (p24/c24) and the digits, where no case holds one
ASCII_DIGITS = "0123456789"
#: (p24/c24) the symbols those inputs draw from: ASCII's punctuation but the '#' twins' stand-in
ASCII_SYMBOLS = "!$%&'()*+,-./:;<=>?@[]^_`{|}~\"\\"


def _code_points(*spans: tuple[int, int]) -> str:
    return "".join(chr(c) for lo, hi in spans for c in range(lo, hi + 1))


#: (p14/c14) cased letters outside Latin-1, per script (lower, upper), that a widened string draws from:
#: letters whose case mapping is one-to-one (``upper()`` and ``lower()`` of one another, one code point
#: each, ``swapcase()``, ``title()`` and ``casefold()`` agreeing with them) and which have no decomposition
#: (NFC and NFD leave them as they are). Left out: Greek sigma in both cases (``str.lower()`` makes a
#: word-final capital sigma the final form, so ``s.upper().lower()`` does not give ``s`` back), letters
#: with a diacritic (``й``, ``ā``: NFD makes them two code points) and those whose case pair is not one
#: letter (``ı``, ``ĸ``, ``ŉ``). Their cases lie 32 code points apart in Greek alpha..omicron and Cyrillic
#: a..pe only (a case flip by ``^ 32`` is wrong on pi..omega, er..ya, the Latin pairs, which lie next to
#: each other, and the astral scripts). Deseret and Adlam lie beyond the BMP: a letter of theirs is two
#: UTF-16 code units and four UTF-8 bytes.
WIDER_LETTERS: dict[str, tuple[str, str]] = {
    "latin": (
        _code_points(
            (0x111, 0x111), (0x127, 0x127), (0x142, 0x142), (0x14B, 0x14B), (0x153, 0x153), (0x167, 0x167)
        ),
        _code_points(
            (0x110, 0x110), (0x126, 0x126), (0x141, 0x141), (0x14A, 0x14A), (0x152, 0x152), (0x166, 0x166)
        ),
    ),
    "greek": (_code_points((0x3B1, 0x3C1), (0x3C4, 0x3C9)), _code_points((0x391, 0x3A1), (0x3A4, 0x3A9))),
    "cyrillic": (_code_points((0x430, 0x438), (0x43A, 0x44F)), _code_points((0x410, 0x418), (0x41A, 0x42F))),
    "deseret": (_code_points((0x10428, 0x1044F)), _code_points((0x10400, 0x10427))),
    "adlam": (_code_points((0x1E922, 0x1E943)), _code_points((0x1E900, 0x1E921))),
}
#: the version of a check run again with the random generators it seeds seeded from the probe seed
RESEEDED_CHECK_VERSION = "r1"
#: (r2) the version of a check that seeds no generator, run again with one of its random draws reaching
#: past the check's range (:func:`widened_check`); made by the generations from _WIDENED_FROM on (before,
#: such a check had no probe)
WIDENED_CHECK_VERSION = "r2"
_WIDENED_FROM = 4
#: generated inputs per plan: three times the task's cases, within these bounds
MIN_GENERATED = 16
MAX_GENERATED = 48
#: a generated argument tuple's repr may be at most this many times the longest case input's (+ slack)
_SIZE_FACTOR = 2
_SIZE_SLACK = 64
#: inputs beyond the cases' range in a seeded plan: half as many as near them, within these bounds
MIN_FAR = 12
MAX_FAR = 24
#: how far past the cases' range such an input's numbers go, in multiples of their magnitude
FAR_REACH = 4
#: (p4/c3) a longer argument has between 2 and FAR_REACH times as many elements (characters, items,
#: keys) as the cases' longest at its position, at least _FAR_MIN_LENGTH at the top, at most
#: _FAR_MAX_LENGTH; such an input's repr is at most FAR_REACH times the longest case input's (+ slack)
#: and never over _FAR_MAX_CHARS: a correct program whose cost grows with size stays cheap on it
_FAR_MIN_LENGTH = 8
_FAR_MAX_LENGTH = 256
_FAR_MAX_CHARS = 4096
#: (p5/c5) calls a probe run makes before it asks the cases again
REPEAT_AFTER = 64
#: (p6/c6) calls a probe run has made when its last section ends: the cheaper half of the cases (a
#: check's calls) asked again until then, after every other input, so an answer that changes only after
#: a few hundred calls (past 200: a counter that turns there shows) is a case answered otherwise than in
#: the first run; cheap calls (the cases whose input and answer are the shortest), so the section costs
#: a fraction of the run
LATE_CALLS = 256
#: (p6/c6) inputs of each kind that widen the cases' domain (:func:`_generate_wide`)
WIDE_PER_KIND = 5
#: (p9/c9) inputs of each kind the task's statement admits beyond its cases (:func:`_generate_admitted`):
#: as cheap as the inputs near the cases, and what each shows depends on where its value falls
ADMITTED_PER_KIND = 8
#: (p8/c8) the integer bounds 32-bit machine arithmetic wraps or saturates at (signed and not): an integer
#: argument (or element of a flat list of them) is set just below, at or just past one. Not the 64-bit
#: ones: a program on the platform's 64-bit integers (numpy arrays) is a correct implementation of a
#: task about integers, and past 2**63 it refuses them (OverflowError) or turns them into floats that
#: drop their last digits (``np.array([2**63 + 5, 3])`` is float64): no value there tells a wrong
#: program from such a correct one, and a wrap-around at 32 bits is not the platform's but the program's
MACHINE_BOUNDS = (2**31, 2**32)
#: (p8/c8) inputs whose list or string arguments have lengths no case shows below or between the cases'
#: own (:func:`_generate_spread`): per length band, this many at most
SPREAD_PER_BAND = 4
#: (p8/c8) inputs with a sized argument (string, list, dict, set) thousands of elements long, and how long
#: (p8/c8 and p9/c9; p10/c10 draw :data:`LONG_BANDED_INPUTS`)
LONG_INPUTS = 2
LONG_LENGTHS = (1000, 3000)
#: and the longest such an input's text may be (a grid of long rows is refused, not shortened)
_LONG_MAX_CHARS = 64_000
_LONG_ATTEMPTS = 3
#: (p10/c10) the long inputs instead: MID_BAND_INPUTS of them of a length drawn log-uniform from just past
#: the longest a far input of the plan can be (:data:`FAR_REACH` times the cases' longest, 256 at most)
#: up to MID_BAND_TOP, and the rest of :data:`LONG_LENGTHS`; laid shortest first. Before, no argument
#: between 257 (often far less) and 999 elements was ever drawn, and past the far reach only two lengths
#: were: a program wrong only on lengths in that band (a median, a table bound) was accepted
LONG_BANDED_INPUTS = 3
MID_BAND_INPUTS = 2
MID_BAND_TOP = 999
#: (p6/c6) letters of each case that no alphabet of the cases holds: each non-ASCII, each with a one-to-one
#: case mapping (upper() and lower() of one another), so a letter's case means what it means in ASCII
_OTHER_LETTERS = {"lower": "àéîõüñçø", "upper": "ÀÉÎÕÜÑÇØ"}
#: the factors every integer of a case is multiplied by (a common divisor the cases never show)
_SCALES = (2, 3, 5, 7)
#: (p5/c5) and magnitudes the cases never reach: a program right only below some bound past the cases'
#: range (``x + y if x <= 1000 else ...``) shows there; an input too slow for the reference says nothing
_FAR_SCALES = (2, 3, 5, 7, 10, 100, 1000)
#: (p5/c5) cases scaled by the largest factor that every such plan holds
_FORCED_SCALED = 3
#: (p11/c11) the factors of :data:`_FAR_SCALES` that make round numbers (p5/c5 to p10/c10 multiplied
#: by them as they are: a case's 100 became 1000, 10000, 100000, whose answers carry as few significant
#: digits, so a program computing at six significant digits, in float32 or a fixed-precision Decimal,
#: agreed with the reference on every far input), each drawn afresh per input as a whole factor just
#: above it, up to a tenth more and never a multiple of 10 (10 -> 11..13, 100 -> 101..109, 1000 ->
#: 1001..1099).
#: A whole factor keeps what multiplying by one keeps: signs, order, distinct elements, and a common
#: divisor at least as large (gcd(1037a, 1037b) = 1037 gcd(a, b)); the input is as far past the cases
#: as before or further, and its numbers at most one digit longer
DIGITS_KEPT_FACTORS = (10, 100, 1000)
#: how hard to try for distinct inputs before settling for fewer
_ATTEMPTS_PER_INPUT = 25
#: shuffles of the cases tried for the one that moves the most answers
_REORDER_TRIES = 32

GENERATED = -1


@dataclass(frozen=True)
class ProbePlan:
    """The probe job's inputs in call order; ``origin[i]`` is the index of the task case (visible then
    hidden, as the sandbox numbers them) input ``i`` repeats, or :data:`GENERATED`.

    A plan of ``source == "check"`` has no cases: every input is :data:`GENERATED` (judged against the
    reference), its ``seeds`` inputs after the ``lead`` are the check's own literal calls, and ``parents``
    name plan positions (the seeds an input was made from) rather than case indices."""

    version: str
    inputs: tuple[str, ...]
    origin: tuple[int, ...]
    digest: str = field(default="")
    #: per input, the task cases it was made from (a case: itself): an answer that differs from all of
    #: theirs shows the program reads its input, not the case it resembles
    parents: tuple[tuple[int, ...], ...] = ()
    source: Literal["cases", "check", "reseeded"] = "cases"
    #: how many inputs the plan starts from: the task's cases, or the check's literal calls
    seeds: int = 0
    #: the secret probe seed the plan was drawn with (None: the plan derived from the task alone)
    seed: str | None = None
    #: positions of the inputs beyond the cases' range (perhaps beyond the task's stated domain): only
    #: a value that differs from the reference's counts there, never an error, a hang or an exit
    far: frozenset[int] = frozenset()
    #: a plan of ``source == "reseeded"``: the task's check with its generators' seeds replaced (no inputs:
    #: the check draws them itself, and judges the answers by its own assertions)
    check: str | None = None
    #: pairs of positions whose inputs differ only in the order of their list arguments' elements (a
    #: seeded plan's): where the reference answers every case and its mirror alike (the task ignores
    #: that order), an input it answers otherwise than its mirror has two right answers (a tie broken
    #: by position: 'the closest pair' of [1.0, 2.5, 3.0]) and neither of the two counts
    mirrors: tuple[tuple[int, int], ...] = ()
    #: (p12/c12) pairs of positions whose second input is the first with those list arguments sorted
    #: (ascending, or descending): where the reference answers every case as it answers the case sorted
    #: either way (the task ignores every order, not only the reversed one), an input it answers otherwise
    #: than one of them has a tie, and each of those answers is right. A mirror gives the tie-break of
    #: the first and the last by position; these give the smallest and the largest by value, which a
    #: correct program that sorts its list first returns (HumanEval/20's closest pair of
    #: ``[1.0, 2.0, 3.0, 4.0, 5.0, 5.0, 2.0]``: the reference takes (2.0, 2.0) on it and on its mirror, a
    #: program scanning the sorted list from its end (5.0, 5.0), the reference's answer sorted descending)
    orders: tuple[tuple[int, int], ...] = ()
    #: (p6/c6) positions (among ``far``) of the inputs that leave the cases' domain in kind, not in range:
    #: a list with a repeated element where no case's list repeats one, a letter in the other case or of
    #: no case's alphabet, a float that prints with an exponent. The task may well exclude such an input,
    #: so a program that refuses it (raises) is not held to the reference's answer; a value is judged
    wide: frozenset[int] = frozenset()
    #: (p6/c6) how many calls at the end ask the cheaper cases again (up to :data:`LATE_CALLS` in all):
    #: cheap ones, which do not lengthen the probe run's deadline (an input past the range that hangs
    #: would otherwise burn three times the time it did); since p21/c21 it ends with the inputs asked twice
    #: in a row on one argument object (:func:`_held`)
    late: int = 0
    #: (p8/c8) how many inputs come before the cases (a check's calls): one generated input near them,
    #: so the run's first call is none of the task's own (every other run of a sample starts with them,
    #: and a program wrong only on its process's first call would never be seen wrong)
    lead: int = 0
    #: (p8/c8) how many inputs at the end of the run are at extremes no case approaches (among ``far``):
    #: integers around the machine widths, arguments thousands of elements long (:func:`_generate_extreme`)
    ends: int = 0
    #: (p23/c23) where the task's statement keeps its text to ASCII (``statement.stated_forms``): per
    #: input holding characters past it, (its position, its letter twin's, its other twin's): the input
    #: with each such character an ASCII letter of its case, and with each one ``#``
    #: (:func:`_with_ascii_twins`). Where the reference answers all three alike, no reading of those
    #: characters changes the answer,
    #: so the input is judged like any other (``streams.noise.probe.ascii_twins_agree``)
    ascii_twins: tuple[tuple[int, int, int], ...] = ()
    #: (p24/c24) the positions of the inputs whose string was emptied where every case's string there is
    #: one class of characters (:func:`_generate_empty_shaped`): an empty word, prefix or message the
    #: statement may well rule out in words no reader takes (a word, two words), so a refusal there is
    #: the program's right, as at any input widening the domain, and only a value is judged
    #: (``streams.noise.probe.empty_refusals_held`` leaves them out)
    tokens_emptied: frozenset[int] = frozenset()

    @property
    def head_positions(self) -> range:
        """The positions of the task's cases (a check's calls) at the start of the run, after the lead."""
        return range(self.lead, self.lead + self.seeds)

    @property
    def generated_positions(self) -> tuple[int, ...]:
        return tuple(i for i, o in enumerate(self.origin) if o == GENERATED)

    def position_of_case(self) -> dict[int, int]:
        """Task case index -> position in the probe job."""
        return {o: i for i, o in enumerate(self.origin) if o != GENERATED}


def case_inputs(task: TaskPublished) -> tuple[str, ...]:
    """The task's case inputs in the order the sandbox runs them: visible, then hidden."""
    return tuple(c.input for c in (*task.tests, *task.hidden_tests))


def new_probe_seed() -> str:
    """A fresh secret probe seed (128 bits from the operating system's generator): drawn on the host
    after the program was written, never shown to a guest except as the plan's inputs themselves."""
    return secrets.token_hex(16)


def plan_for(task: TaskPublished, seed: str | None = None) -> ProbePlan | None:
    """The task's probe plan drawn with ``seed`` (None: the plan derived from the task alone, as runs
    written before probe seeds were made): from its cases, or for a task judged by its ``check`` alone
    from the check's literal calls of the candidate (None: no reference to judge them by, or no such
    call). Cached per task and seed, and made under a lock: CPython 3.11's AST constructor is not
    thread-safe (gh-106905) and plans are also made on threads."""
    with _LOCK:
        return _plan(task, seed, len(SEEDED_VERSIONS) - 1)


def recorded_plan(task: TaskPublished, seed: str | None, digest: str | None) -> ProbePlan | None:
    """The plan a probe run that records ``digest`` and ``seed`` executed: the current one, or one of an
    older seeded version (a run written before its generator changed), derived again byte for byte by
    that version's generator (None: no version of the task's plan has that digest)."""
    with _LOCK:
        newest = len(SEEDED_VERSIONS) - 1
        for generation in range(newest, -1, -1) if seed is not None else (newest,):
            plan = _plan(task, seed, generation)
            if plan is None or plan.digest == digest:
                return plan
    return None


_LOCK = pyast.LOCK  # one lock with every other parse in the process


@lru_cache(maxsize=1024)
def _plan(task: TaskPublished, seed: str | None, generation: int) -> ProbePlan | None:
    """The plan drawn with ``seed`` by the seeded generator of ``SEEDED_VERSIONS[generation]`` (no
    seed: the plan of the task alone, which every generation shares)."""
    originals = case_inputs(task)
    if not originals:
        return _check_plan(task, seed, generation)
    version = PLAN_VERSION if seed is None else SEEDED_VERSIONS[generation][0]
    lengths = generation >= 1
    wider = generation >= 3
    widest = generation >= 4
    related = generation >= 5
    extreme = seed is not None and generation >= _EXTREME_GENERATION
    rng = random.Random(_seed(task, _DRAWN_AS.get(version, version), seed))
    args = [pyast.literal_eval(text) for text in originals]
    wanted = min(MAX_GENERATED, max(MIN_GENERATED, 4 * len(originals)))
    generated = _generate(args, wanted, rng, seeded=seed is not None)
    if seed is not None:
        # the inputs of the plan of the task alone stay (every sample is still checked on what it
        # covered), joined by as many secret ones drawn from the seed
        fixed = list(_public_inputs(task, wanted, None))
        taken = public = {t for t, _ in fixed}
        generated = fixed + [g for g in generated if g[0] not in taken]
    far = (
        []
        if seed is None
        else _generate_far(
            args,
            _far_wanted(wanted),
            rng,
            {t for t, _ in generated},
            lengths=lengths,
            wider=wider,
            related=related,
            digits=_digits(task, version, seed, generation),
        )
    )
    if related:
        far += _filled(args, far, {t for t, _ in generated})

    # the cases first, in another order (never the task's own when there are two or more, and one that
    # moves as many answers as it can), then the generated inputs, smallest first, then those beyond the
    # cases' range, smallest first: an input too slow for the reference itself (which then says nothing
    # about it) cuts the run short as late as possible
    order = _reorder(task, rng)
    generated.sort(key=lambda item: (len(item[0]), item[0]))
    far.sort(key=lambda item: (len(item[0]), item[0]))
    head: list[tuple[str, tuple[int, ...]]] = [(originals[o], (o,)) for o in order]
    if seed is None:
        made = [*generated, *far]
        origin = (*order, *([GENERATED] * len(made)))
        inputs = tuple(text for text, _ in (*head, *made))
        parents = tuple(made_from for _, made_from in (*head, *made))
        digest = hashlib.sha256("\n".join((version, *inputs)).encode()).hexdigest()
        return ProbePlan(version, inputs, origin, digest, parents, seeds=len(originals))
    # (p5) the cases once more, in their own order, after the inputs near them (see _with_mirrors)
    again = sorted(range(len(order)), key=order.__getitem__) if wider else None
    wide: list[tuple[str, tuple[int, ...]]] = []
    late: list[int] = []
    if widest:
        # (p6) drawn from a generator of their own: every input p5 draws stays as p5 draws it
        taken = {t for t, _ in (*generated, *far)}
        drawn = random.Random(_seed(task, _WIDE_DRAWN_AS.get(version, version), seed))
        wide = _generate_wide(args, drawn, taken)
        wide.sort(key=lambda item: (len(item[0]), item[0]))
        outputs = [c.output for c in (*task.tests, *task.hidden_tests)]
        late = _cheaper_half([len(originals[o]) + len(outputs[o]) for o in order])
    lead: list[tuple[str, tuple[int, ...]]] = []
    ends: list[tuple[str, tuple[int, ...]]] = []
    bounds: list[tuple[str, tuple[int, ...]]] = []
    if extreme:
        # (p8) from a generator of their own: every input p7 draws stays as p7 draws it
        drawn = random.Random(_seed(task, _EXTREME_DRAWN_AS.get(version, version), seed))
        lead, generated = _lead(generated, drawn, public)
        ends, bounds = _generate_extreme(
            args,
            drawn,
            {t for t, _ in (*lead, *generated, *far, *wide)},
            banded=_banded(task, version, seed, generation),
        )
        taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
        inside, shorter = _generate_spread(args, drawn, taken)
        generated = sorted([*generated, *inside], key=lambda item: (len(item[0]), item[0]))
        # shorter than every case: among those that widen the cases' domain (a refusal is no error)
        wide = sorted([*wide, *shorter], key=lambda item: (len(item[0]), item[0]))
    if seed is not None and generation >= _ADMITTED_GENERATION:
        # (p9) from a generator of their own: every input p8 draws stays as p8 draws it
        taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
        admits = stated_admits(task.prompt, task.entry_point)
        drawn = random.Random(_seed(task, _ADMITTED_DRAWN_AS.get(version, version), seed))
        admitted = _generate_admitted(args, admits, drawn, taken)
        wide = sorted([*wide, *admitted], key=lambda item: (len(item[0]), item[0]))
    if seed is not None and generation >= _BYTES_GENERATION:
        # (p13) from a generator of their own: every input p12 draws stays as p12 draws it
        taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
        drawn = random.Random(_seed(task, f"{_BYTES_DRAWN_AS.get(version, version)}|bytes", seed))
        near_bytes, far_bytes = _generate_bytes(args, drawn, taken)
        generated = sorted([*generated, *near_bytes], key=lambda item: (len(item[0]), item[0]))
        far = sorted([*far, *far_bytes], key=lambda item: (len(item[0]), item[0]))
    if seed is not None and generation >= _LETTERS_GENERATION:
        # (p14) from generators of their own: every input p13 draws stays as p13 draws it
        taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
        drawn = random.Random(_seed(task, f"{_LETTERS_DRAWN_AS.get(version, version)}|nested-bytes", seed))
        near_bytes, far_bytes = _generate_nested_bytes(args, drawn, taken)
        generated = sorted([*generated, *near_bytes], key=lambda item: (len(item[0]), item[0]))
        far = sorted([*far, *far_bytes], key=lambda item: (len(item[0]), item[0]))
        taken |= {t for t, _ in (*near_bytes, *far_bytes)}
        drawn = random.Random(_seed(task, f"{_LETTERS_DRAWN_AS.get(version, version)}|letters", seed))
        wide = sorted(
            [*wide, *_generate_wider_letters(args, drawn, taken)], key=lambda item: (len(item[0]), item[0])
        )
    if seed is not None and generation >= _EDGES_GENERATION:
        # (p15) from a generator of their own: every input p14 draws stays as p14 draws it
        taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
        drawn = random.Random(_seed(task, f"{_EDGES_DRAWN_AS.get(version, version)}|edges", seed))
        edges, inside = _generate_edges(args, drawn, taken)
        wide = sorted([*wide, *edges], key=lambda item: (len(item[0]), item[0]))
        bounds = [*bounds, *inside]
    if seed is not None and generation >= _BOUNDARY_GENERATION:
        # (p16) from a generator of their own: every input p15 draws stays as p15 draws it
        taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
        drawn = random.Random(_seed(task, f"{_BOUNDARIES_DRAWN_AS.get(version, version)}|boundaries", seed))
        signs = stated_signs(task.prompt, task.entry_point)
        more = _generate_boundaries(args, signs, drawn, taken)
        wide = sorted([*wide, *more], key=lambda item: (len(item[0]), item[0]))
    if seed is not None and generation >= _WIDTH_GENERATION:
        # (p17) from a generator of their own: every input p16 draws stays as p16 draws it
        taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
        drawn = random.Random(_seed(task, f"{_WIDTHS_DRAWN_AS.get(version, version)}|widths", seed))
        zeros, tiny, widths = _generate_widths(args, drawn, taken, exact=not _reads_float(task.reference))
        generated = sorted([*generated, *zeros], key=lambda item: (len(item[0]), item[0]))
        wide = sorted([*wide, *tiny], key=lambda item: (len(item[0]), item[0]))
        bounds = [*bounds, *widths]
    twice: frozenset[str] = frozenset()
    if seed is not None and generation >= _TWICE_GENERATION:
        # (p18) from a generator of their own: every input p17 draws stays as p17 draws it, but those
        # whose groups break the balance every case's groups keep
        taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
        blanks = _generate_blank_runs(
            args, random.Random(_seed(task, f"{_TWICE_DRAWN_AS.get(version, version)}|blanks", seed)), taken
        )
        wide = sorted([*wide, *blanks], key=lambda item: (len(item[0]), item[0]))
        drawn = random.Random(_seed(task, f"{_TWICE_DRAWN_AS.get(version, version)}|twice", seed))
        lead, generated, far, wide, ends, bounds = _groups_kept(
            args, drawn, public, lead, generated, far, wide, ends, bounds
        )
        twice = _twice(generated, drawn)
    if seed is not None and generation >= _DEEP_GENERATION:
        # (p19) from generators of their own: every input p18 draws stays as p18 draws it
        taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
        drawn_as = _DEEP_DRAWN_AS.get(version, version)
        deep = _generate_deep_nesting(args, random.Random(_seed(task, f"{drawn_as}|deep", seed)), taken)
        taken |= {t for t, _ in deep}
        grown, long = _generate_grown_numbers(
            args, random.Random(_seed(task, f"{drawn_as}|numbers", seed)), taken
        )
        far = sorted([*far, *grown], key=lambda item: (len(item[0]), item[0]))
        # the deep strings among the long inputs at the end: past the far inputs' size limit
        ends = sorted([*ends, *deep, *long], key=lambda item: (len(item[0]), item[0]))
    spaced: dict[str, int] = {}
    if seed is not None and generation >= _SPACED_GENERATION:
        # (p20) from generators of their own: every input p19 draws stays as p19 draws it
        taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
        drawn_as = _SPACED_DRAWN_AS.get(version, version)
        grown, long = _generate_grown_elements(
            args, random.Random(_seed(task, f"{drawn_as}|elements", seed)), taken
        )
        far = sorted([*far, *grown], key=lambda item: (len(item[0]), item[0]))
        ends = sorted([*ends, *long], key=lambda item: (len(item[0]), item[0]))
        spaced = _asked_again(generated, twice, random.Random(_seed(task, f"{drawn_as}|spaced", seed)))
    added: set[str] = set()
    emptied: set[str] = set()
    twin_texts: list[tuple[str, str, str]] = []
    if seed is not None and generation >= _P23_GENERATION:
        generated, far, wide, added, twin_texts = _p23_additions(
            task, version, seed, args, lead, generated, far, wide, ends, bounds
        )
    if seed is not None and generation >= _P24_GENERATION:
        generated, wide, p24_added, emptied = _p24_additions(
            task, version, seed, args, lead, generated, far, wide, ends, bounds
        )
        added |= p24_added
    gaps, held, bands = _repeat_draws(task, version, seed, generation, head, generated, far)
    every = seed is not None and generation >= _MIRRORED_GENERATION
    laid = _with_mirrors(
        head,
        generated,
        far,
        args,
        again,
        wide,
        late,
        lead,
        ends,
        bounds,
        every=every,
        twice=twice,
        spaced=spaced,
        gaps=gaps,
        held=held,
        bands=bands,
        added=added,
    )
    origin = tuple(
        order[laid.source(pos) - laid.lead] if 0 <= laid.source(pos) - laid.lead < len(order) else GENERATED
        for pos in range(len(laid.inputs))
    )
    digest = hashlib.sha256("\n".join((version, *laid.inputs)).encode()).hexdigest()
    return ProbePlan(
        version,
        laid.inputs,
        origin,
        digest,
        laid.parents,
        seeds=len(originals),
        seed=seed,
        far=laid.far,
        mirrors=laid.mirrors,
        orders=laid.orders,
        wide=laid.wide,
        late=laid.late,
        lead=laid.lead,
        ends=laid.ends,
        ascii_twins=_twin_positions(laid.inputs, twin_texts),
        tokens_emptied=_emptied_positions(laid, emptied),
    )


@lru_cache(maxsize=256)
def _public_inputs(
    task: TaskPublished, wanted: int, mostly: bool | None
) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The generated inputs every seeded plan of the task shares with the plan of the task alone (its
    public ones), as :func:`_generate` draws them from the task alone: from its cases (``mostly`` None),
    or from its check's literal calls within a :class:`_CheckDomain` of that ``mostly``. They depend on
    no seed, so they are drawn once per task and kept (at most 256 tasks' worth per process, the least
    recently used dropped; each entry is at most :data:`MAX_GENERATED` inputs), where drawing them for
    every seed was 40 % of a small task's plan. Called under :data:`_LOCK`, as every draw is."""
    if mostly is None:
        args = [pyast.literal_eval(text) for text in case_inputs(task)]
        return tuple(_generate(args, wanted, random.Random(_seed(task, PLAN_VERSION, None))))
    assert task.check is not None
    args = [pyast.literal_eval(text) for text in check_calls(task.check, task.entry_point)]
    domain = _CheckDomain(args, mostly=mostly)
    rng = random.Random(_seed(task, CHECK_PLAN_VERSION, None))
    return tuple(_generate(args, wanted, rng, domain.hold))


def _banded(task: TaskPublished, version: str, seed: str | None, generation: int) -> random.Random | None:
    """(p10/c10) The generator of the plan's long inputs, drawn in bands (None: an older generation's)."""
    if seed is None or generation < _BANDED_GENERATION:
        return None
    return random.Random(_seed(task, _BANDED_DRAWN_AS.get(version, version), seed))


def _digits(task: TaskPublished, version: str, seed: str | None, generation: int) -> random.Random | None:
    """(p11/c11) The generator of the factors that keep a far input's significant digits
    (:data:`DIGITS_KEPT_FACTORS`; None: an older generation, which multiplies by round factors)."""
    if seed is None or generation < _DIGITS_GENERATION:
        return None
    return random.Random(_seed(task, _DIGITS_DRAWN_AS.get(version, version), seed))


def _cheaper_half(costs: Sequence[int]) -> list[int]:
    """The positions of the cheaper half of the head (at least one), by a cost that grows with the text
    of a call and of its answer, in plan order."""
    ranked = sorted(range(len(costs)), key=lambda k: (costs[k], k))
    return sorted(ranked[: (len(costs) + 1) // 2])


def _check_plan(task: TaskPublished, seed: str | None, generation: int) -> ProbePlan | None:
    """The plan of a task judged by its check: the check's literal calls of the candidate in another
    order (a program serving the check's answers in call order then answers the wrong input), then
    inputs generated from them, smallest first (then, drawn with a seed, inputs beyond their range).
    Every input is judged against the reference. A check without such calls whose candidate's inputs
    come from a random generator it seeds with a literal is run again, with a seed drawn from the probe
    seed (:func:`reseeded_check`); one whose generators are unseeded, with one of its draws reaching
    past its range (r2, :func:`widened_check`)."""
    if not task.check or not task.reference:
        return None
    seeds = check_calls(task.check, task.entry_point)
    if not seeds:
        if seed is None:
            return None
        check, version = reseeded_check(task.check, seed), RESEEDED_CHECK_VERSION
        if check is None and generation >= _WIDENED_FROM:
            check, version = widened_check(task.check, seed), WIDENED_CHECK_VERSION
        if check is None:
            return None
        digest = hashlib.sha256("\n".join((version, check)).encode()).hexdigest()
        return ProbePlan(version, (), (), digest, (), "reseeded", 0, seed, frozenset(), check)
    version = CHECK_PLAN_VERSION if seed is None else SEEDED_VERSIONS[generation][1]
    rng = random.Random(_seed(task, _DRAWN_AS.get(version, version), seed))
    args = [pyast.literal_eval(text) for text in seeds]
    # as many generated inputs as a case plan may hold: a check has few calls, and no hidden case
    # stands behind them
    domain = _CheckDomain(args, mostly=generation >= 2)
    generated = _generate(args, MAX_GENERATED, rng, domain.hold, seeded=seed is not None)
    if seed is not None:
        fixed = list(_public_inputs(task, MAX_GENERATED, generation >= 2))
        taken = public = {t for t, _ in fixed}
        generated = fixed + [g for g in generated if g[0] not in taken]
    far = (
        []
        if seed is None
        else _generate_far(
            args,
            MAX_FAR,
            rng,
            {t for t, _ in generated},
            domain.hold_beyond_range,
            lengths=generation >= 1,
            wider=generation >= 3,
            related=generation >= 5,
            digits=_digits(task, version, seed, generation),
        )
    )
    if seed is not None and generation >= 5:
        far += _filled(args, far, {t for t, _ in generated}, domain.hold_beyond_range)
    generated.sort(key=lambda item: (len(item[0]), item[0]))
    far.sort(key=lambda item: (len(item[0]), item[0]))
    order = list(range(len(seeds)))
    for _ in range(_REORDER_TRIES):
        rng.shuffle(order)
        if len(order) < 2 or order != sorted(order):
            break
    position = {s: k for k, s in enumerate(order)}
    # (c8) one generated input leads the run: the calls' plan positions come after it
    extreme = seed is not None and generation >= _EXTREME_GENERATION
    shift = 1 if extreme and generated else 0

    def placed(items: list[tuple[str, tuple[int, ...]]]) -> list[tuple[str, tuple[int, ...]]]:
        return [(text, tuple(sorted(position[p] + shift for p in made_from))) for text, made_from in items]

    head: list[tuple[str, tuple[int, ...]]] = [(seeds[o], ()) for o in order]
    if seed is None:
        made = [*head, *placed(generated)]
        inputs = tuple(text for text, _ in made)
        parents = tuple(made_from for _, made_from in made)
        digest = hashlib.sha256("\n".join((version, *inputs)).encode()).hexdigest()
        return ProbePlan(version, inputs, (GENERATED,) * len(inputs), digest, parents, "check", len(seeds))
    # (c5) the check's calls once more, in the check's own order, after the inputs near them
    again = [position[o] for o in range(len(seeds))] if generation >= 3 else None
    wide: list[tuple[str, tuple[int, ...]]] = []
    late: list[int] = []
    if generation >= 4:
        taken = {t for t, _ in (*generated, *far)}
        drawn = random.Random(_seed(task, _WIDE_DRAWN_AS.get(version, version), seed))
        wide = _generate_wide(args, drawn, taken, domain.hold_beyond_range)
        wide.sort(key=lambda item: (len(item[0]), item[0]))
        late = _cheaper_half([len(text) for text, _ in head])
    lead: list[tuple[str, tuple[int, ...]]] = []
    ends: list[tuple[str, tuple[int, ...]]] = []
    bounds: list[tuple[str, tuple[int, ...]]] = []
    if extreme:
        drawn = random.Random(_seed(task, _EXTREME_DRAWN_AS.get(version, version), seed))
        lead, generated = _lead(generated, drawn, public)
        taken = {t for t, _ in (*generated, *lead, *far, *wide)}
        banded = _banded(task, version, seed, generation)
        ends, bounds = _generate_extreme(args, drawn, taken, domain.hold_beyond_range, banded=banded)
        taken |= {t for t, _ in (*ends, *bounds)}
        inside, shorter = _generate_spread(args, drawn, taken, domain.hold, domain.hold_beyond_range)
        generated = sorted([*generated, *inside], key=lambda item: (len(item[0]), item[0]))
        wide = sorted([*wide, *shorter], key=lambda item: (len(item[0]), item[0]))
    if seed is not None and generation >= _ADMITTED_GENERATION:
        # (c9) from a generator of their own: every input c8 draws stays as c8 draws it
        taken = {t for t, _ in (*generated, *lead, *far, *wide, *ends, *bounds)}
        admits = stated_admits(task.prompt, task.entry_point)
        drawn = random.Random(_seed(task, _ADMITTED_DRAWN_AS.get(version, version), seed))
        admitted = _generate_admitted(args, admits, drawn, taken, domain.hold_admitted)
        wide = sorted([*wide, *admitted], key=lambda item: (len(item[0]), item[0]))
    if seed is not None and generation >= _BYTES_GENERATION:
        # (c13) from a generator of their own: every input c12 draws stays as c12 draws it
        taken = {t for t, _ in (*generated, *lead, *far, *wide, *ends, *bounds)}
        drawn = random.Random(_seed(task, f"{_BYTES_DRAWN_AS.get(version, version)}|bytes", seed))
        near_bytes, far_bytes = _generate_bytes(args, drawn, taken, domain.hold, domain.hold_beyond_range)
        generated = sorted([*generated, *near_bytes], key=lambda item: (len(item[0]), item[0]))
        far = sorted([*far, *far_bytes], key=lambda item: (len(item[0]), item[0]))
    if seed is not None and generation >= _LETTERS_GENERATION:
        # (c14) from generators of their own: every input c13 draws stays as c13 draws it
        taken = {t for t, _ in (*generated, *lead, *far, *wide, *ends, *bounds)}
        drawn = random.Random(_seed(task, f"{_LETTERS_DRAWN_AS.get(version, version)}|nested-bytes", seed))
        near_bytes, far_bytes = _generate_nested_bytes(
            args, drawn, taken, domain.hold, domain.hold_beyond_range
        )
        generated = sorted([*generated, *near_bytes], key=lambda item: (len(item[0]), item[0]))
        far = sorted([*far, *far_bytes], key=lambda item: (len(item[0]), item[0]))
        taken |= {t for t, _ in (*near_bytes, *far_bytes)}
        drawn = random.Random(_seed(task, f"{_LETTERS_DRAWN_AS.get(version, version)}|letters", seed))
        letters = _generate_wider_letters(args, drawn, taken, domain.hold_beyond_range)
        wide = sorted([*wide, *letters], key=lambda item: (len(item[0]), item[0]))
    if seed is not None and generation >= _EDGES_GENERATION:
        # (c15) from a generator of their own: every input c14 draws stays as c14 draws it
        taken = {t for t, _ in (*generated, *lead, *far, *wide, *ends, *bounds)}
        drawn = random.Random(_seed(task, f"{_EDGES_DRAWN_AS.get(version, version)}|edges", seed))
        edges, inside = _generate_edges(args, drawn, taken, domain.hold_beyond_range)
        wide = sorted([*wide, *edges], key=lambda item: (len(item[0]), item[0]))
        bounds = [*bounds, *inside]
    if seed is not None and generation >= _BOUNDARY_GENERATION:
        # (c16) from a generator of their own: every input c15 draws stays as c15 draws it
        taken = {t for t, _ in (*generated, *lead, *far, *wide, *ends, *bounds)}
        drawn = random.Random(_seed(task, f"{_BOUNDARIES_DRAWN_AS.get(version, version)}|boundaries", seed))
        signs = stated_signs(task.prompt, task.entry_point)
        more = _generate_boundaries(args, signs, drawn, taken, domain.hold_beyond_range, domain.hold_admitted)
        wide = sorted([*wide, *more], key=lambda item: (len(item[0]), item[0]))
    if seed is not None and generation >= _WIDTH_GENERATION:
        # (c17) from a generator of their own: every input c16 draws stays as c16 draws it
        taken = {t for t, _ in (*generated, *lead, *far, *wide, *ends, *bounds)}
        drawn = random.Random(_seed(task, f"{_WIDTHS_DRAWN_AS.get(version, version)}|widths", seed))
        exact = not _reads_float(task.reference)
        zeros, tiny, widths = _generate_widths(
            args, drawn, taken, domain.hold, domain.hold_beyond_range, exact=exact
        )
        generated = sorted([*generated, *zeros], key=lambda item: (len(item[0]), item[0]))
        wide = sorted([*wide, *tiny], key=lambda item: (len(item[0]), item[0]))
        bounds = [*bounds, *widths]
    twice: frozenset[str] = frozenset()
    if seed is not None and generation >= _TWICE_GENERATION:
        # (c18) from a generator of their own: every input c17 draws stays as c17 draws it, but those
        # whose groups break the balance every call's groups keep
        taken = {t for t, _ in (*generated, *lead, *far, *wide, *ends, *bounds)}
        blanks = _generate_blank_runs(
            args,
            random.Random(_seed(task, f"{_TWICE_DRAWN_AS.get(version, version)}|blanks", seed)),
            taken,
            domain.hold_beyond_range,
        )
        wide = sorted([*wide, *blanks], key=lambda item: (len(item[0]), item[0]))
        drawn = random.Random(_seed(task, f"{_TWICE_DRAWN_AS.get(version, version)}|twice", seed))
        lead, generated, far, wide, ends, bounds = _groups_kept(
            args, drawn, public, lead, generated, far, wide, ends, bounds
        )
        twice = _twice(generated, drawn)
    if seed is not None and generation >= _DEEP_GENERATION:
        # (c19) from generators of their own: every input c18 draws stays as c18 draws it
        taken = {t for t, _ in (*generated, *lead, *far, *wide, *ends, *bounds)}
        drawn_as = _DEEP_DRAWN_AS.get(version, version)
        deep = _generate_deep_nesting(
            args, random.Random(_seed(task, f"{drawn_as}|deep", seed)), taken, domain.hold_beyond_range
        )
        taken |= {t for t, _ in deep}
        grown, long = _generate_grown_numbers(
            args, random.Random(_seed(task, f"{drawn_as}|numbers", seed)), taken, domain.hold_beyond_range
        )
        far = sorted([*far, *grown], key=lambda item: (len(item[0]), item[0]))
        # the deep strings among the long inputs at the end: past the far inputs' size limit
        ends = sorted([*ends, *deep, *long], key=lambda item: (len(item[0]), item[0]))
    spaced: dict[str, int] = {}
    if seed is not None and generation >= _SPACED_GENERATION:
        # (c20) from generators of their own: every input c19 draws stays as c19 draws it
        taken = {t for t, _ in (*generated, *lead, *far, *wide, *ends, *bounds)}
        drawn_as = _SPACED_DRAWN_AS.get(version, version)
        grown, long = _generate_grown_elements(
            args, random.Random(_seed(task, f"{drawn_as}|elements", seed)), taken, domain.hold_beyond_range
        )
        far = sorted([*far, *grown], key=lambda item: (len(item[0]), item[0]))
        ends = sorted([*ends, *long], key=lambda item: (len(item[0]), item[0]))
        spaced = _asked_again(generated, twice, random.Random(_seed(task, f"{drawn_as}|spaced", seed)))
    added: set[str] = set()
    emptied: set[str] = set()
    twin_texts: list[tuple[str, str, str]] = []
    if seed is not None and generation >= _P23_GENERATION:
        generated, far, wide, added, twin_texts = _p23_additions(
            task, version, seed, args, lead, generated, far, wide, ends, bounds,
            beyond=domain.hold_beyond_range, admitted=domain.hold_admitted,
        )  # fmt: skip
    if seed is not None and generation >= _P24_GENERATION:
        generated, wide, p24_added, emptied = _p24_additions(
            task,
            version,
            seed,
            args,
            lead,
            generated,
            far,
            wide,
            ends,
            bounds,
            beyond=domain.hold_beyond_range,
        )
        added |= p24_added
    gaps, held, bands = _repeat_draws(task, version, seed, generation, head, generated, far)
    laid = _with_mirrors(
        head,
        placed(generated),
        placed(far),
        args,
        again,
        placed(wide),
        late,
        placed(lead),
        placed(ends),
        placed(bounds),
        every=generation >= _MIRRORED_GENERATION,
        twice=twice,
        spaced=spaced,
        gaps=gaps,
        held=held,
        bands=bands,
        added=added,
    )
    digest = hashlib.sha256("\n".join((version, *laid.inputs)).encode()).hexdigest()
    return ProbePlan(
        version,
        laid.inputs,
        (GENERATED,) * len(laid.inputs),
        digest,
        laid.parents,
        "check",
        len(seeds),
        seed,
        laid.far,
        mirrors=laid.mirrors,
        orders=laid.orders,
        wide=laid.wide,
        late=laid.late,
        lead=laid.lead,
        ends=laid.ends,
        ascii_twins=_twin_positions(laid.inputs, twin_texts),
        tokens_emptied=_emptied_positions(laid, emptied),
    )


#: calls that seed a random generator with their one argument: ``random.Random(42)``, ``random.seed(42)``,
#: numpy's ``RandomState``/``default_rng``/``seed``
_SEEDING = frozenset({"Random", "seed", "RandomState", "default_rng"})


#: (r2) the draws whose literal bounds a widened check scales: ``randint(a, b)``, ``randrange([a,] b)``,
#: ``uniform(a, b)``, on any generator (the module's, a ``Random``, numpy's ``integers`` excluded: its
#: upper bound is exclusive and its arguments often arrays)
_DRAWS = frozenset({"randint", "randrange", "uniform"})
#: how far a widened check's draws reach: bounds scaled by this (an upper bound of 20 letters: 80)
WIDEN_BY = 4


def widened_check(check: str, seed: str) -> str | None:
    """(r2) ``check`` with the literal bounds of one of its random draws (which one: drawn from ``seed``)
    scaled by :data:`WIDEN_BY`, the rest of its text kept byte for byte (None: it draws nothing with
    literal bounds).

    A check that draws the candidate's inputs from an unseeded generator (strings of 10 to 20 letters)
    tests a program only within that distribution, whatever the seed, and a rule right only there (a
    decoder that stops at 24 letters) passes it every time; the same check with a draw reaching past
    that range tests the program where the check's own assertions still judge it. A non-negative lower
    bound stays (a length of 10 or more stays that), a negative one is scaled too, so the old range lies
    inside the new one. Whether the widened check still states the task is the reference's to say: the
    filter counts the run only where every run of the reference passes it
    (``streams/noise/probe.py``, ``reseeded_reasons``), so a widening the task does not admit makes the
    probe inconclusive, never a wrong verdict. A check that seeds its generators keeps :func:`reseeded_check`
    alone: its reseeded run catches a table of the check's own draws whenever the reference passes it,
    which a widening the reference fails (a polynomial's degree past its root finder's tolerance) would
    give away."""
    tree = _parsed(check)
    if tree is None:
        return None
    sites = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _literal_draw(node)]
    if not sites:
        return None
    sites.sort(key=lambda n: (n.lineno, n.col_offset))
    k = int.from_bytes(hashlib.sha256(f"{seed}|widen".encode()).digest()[:8], "big") % len(sites)
    edits = _widened_bounds(sites[k])
    return _rewrite(check, edits) if edits else None


def _parsed(check: str) -> ast.Module | None:
    try:
        tree: ast.Module = pyast.parse(check)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    return tree


def _number(node: ast.expr) -> int | float | None:
    """The value of a numeric literal (a minus sign included), else None."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and type(node.value) is not bool
    ):
        return node.value if math.isfinite(node.value) else None
    return None


def _literal_draw(node: ast.Call) -> bool:
    if node.keywords or not 1 <= len(node.args) <= 2:
        return False
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
    if name not in _DRAWS or (name != "randrange" and len(node.args) != 2):
        return False
    return all(_number(a) is not None and a.end_lineno == a.lineno for a in node.args)


def _widened_bounds(call: ast.Call) -> list[tuple[ast.expr, str]]:
    bounds = [_number(a) for a in call.args]
    low, high = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
    assert low is not None and high is not None  # _literal_draw saw numbers
    new_low = low * WIDEN_BY if low < 0 else low
    new_high = high * WIDEN_BY if high > 0 else high
    if new_high < new_low:
        return []
    texts = [repr(new_high)] if len(bounds) == 1 else [repr(new_low), repr(new_high)]
    return [
        (node, text) for node, text, old in zip(call.args, texts, bounds, strict=True) if text != repr(old)
    ]


def _seeding_edits(tree: ast.Module, seed: str) -> list[tuple[ast.expr, str]]:
    """Each literal a random generator of the check is seeded with, and the seed drawn for it."""
    sites = sorted(
        (
            node.args[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and len(node.args) == 1
            and not node.keywords
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr in _SEEDING)
                or (isinstance(node.func, ast.Name) and node.func.id in _SEEDING - {"seed"})
            )
            and isinstance(node.args[0], ast.Constant)
            and type(node.args[0].value) is int
            and node.args[0].end_lineno == node.args[0].lineno
        ),
        key=lambda n: (n.lineno, n.col_offset),
    )
    return [
        (node, str(int.from_bytes(hashlib.sha256(f"{seed}|{k}".encode()).digest()[:4], "big")))
        for k, node in enumerate(sites)
    ]


def _rewrite(check: str, edits: list[tuple[ast.expr, str]]) -> str:
    """``check`` with each edited node's text replaced, the rest kept byte for byte."""
    lines = [line.encode() for line in check.splitlines(keepends=True)]
    # from the last edit back, so earlier offsets (UTF-8 bytes, as the parser counts them) stay valid
    for node, text in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        row = node.lineno - 1
        line = lines[row]
        lines[row] = line[: node.col_offset] + text.encode() + line[node.end_col_offset or 0 :]
    return b"".join(lines).decode()


def reseeded_check(check: str, seed: str) -> str | None:
    """``check`` with the literal integer each random generator it seeds is seeded with replaced by one
    drawn from ``seed`` (None: it seeds none). Only those literals change, in place (the rest of the text
    is kept byte for byte): a check that draws the candidate's inputs from a seeded generator then draws
    others, which a table of the inputs drawn with the check's own seed does not hold, and judges the
    answers by its own assertions (a tolerance included), as it judged the first run."""
    tree = _parsed(check)
    edits = [] if tree is None else _seeding_edits(tree, seed)
    return _rewrite(check, edits) if edits else None


def has_plan(task: TaskPublished) -> bool:
    """Whether a probe run of the task has a plan to run (as the sandbox processor draws them: seeded)."""
    return plan_for(task, _ANY_SEED) is not None


#: a plan exists for every seed or for none: any one answers :func:`has_plan`
_ANY_SEED = "0" * 32


@dataclass(frozen=True)
class _Laid:
    inputs: tuple[str, ...]
    parents: tuple[tuple[int, ...], ...]
    far: frozenset[int]
    mirrors: tuple[tuple[int, int], ...]
    orders: tuple[tuple[int, int], ...]
    #: (p5/c5) position -> the earlier position whose input it repeats
    repeats: dict[int, int] = field(default_factory=dict)
    wide: frozenset[int] = frozenset()
    late: int = 0
    lead: int = 0
    ends: int = 0

    def source(self, pos: int) -> int:
        """The first position holding the input at ``pos``."""
        return self.repeats.get(pos, pos)


def _emptied_positions(laid: _Laid, emptied: set[str]) -> frozenset[int]:
    """(p24/c24) The positions of the empty tokens' inputs (``emptied``: their texts), their repeats and
    the mirrors and reorderings laid of them (``ProbePlan.tokens_emptied``)."""
    out = {pos for pos, text in enumerate(laid.inputs) if text in emptied}
    out |= {b for a, b in (*laid.mirrors, *laid.orders) if a in out}
    return frozenset(pos for pos in range(len(laid.inputs)) if pos in out or laid.source(pos) in out)


def _with_mirrors(
    head: list[tuple[str, tuple[int, ...]]],
    near: list[tuple[str, tuple[int, ...]]],
    far: list[tuple[str, tuple[int, ...]]],
    cases: Sequence[object],
    again: Sequence[int] | None = None,
    wide: list[tuple[str, tuple[int, ...]]] | None = None,
    late: Sequence[int] = (),
    lead: Sequence[tuple[str, tuple[int, ...]]] = (),
    ends: Sequence[tuple[str, tuple[int, ...]]] = (),
    bounds: Sequence[tuple[str, tuple[int, ...]]] = (),
    *,
    every: bool = False,
    twice: frozenset[str] = frozenset(),
    spaced: Mapping[str, int] | None = None,
    gaps: random.Random | None = None,
    held: Sequence[str] = (),
    bands: random.Random | None = None,
    added: Set[str] = frozenset(),
) -> _Laid:
    """A seeded plan's inputs laid out: the cases (or the check's calls), the inputs near them, the
    mirrors of both (their list arguments reversed, see ``ProbePlan.mirrors``), then the inputs beyond
    the cases' range and their mirrors. A mirror already in the plan is paired with it, not repeated.
    With ``again`` (p5/c5: head positions, the cases in their own order) the smaller half of the near
    inputs are asked again until :data:`REPEAT_AFTER` calls were made, then those cases, between the
    two sections: a program whose answers depend on how often it was called (right for the first calls
    of a run, wrong later) answers a case otherwise there than in its first run, or a near input
    otherwise than the reference; before the inputs past the range, where hanging or raising is never
    held against it.
    Reversing a list keeps every relation the generator keeps (lengths, distinct elements, 1..n, rows),
    except sortedness: a list argument every case passes sorted is never reversed.
    With ``wide`` (p6/c6) the inputs that widen the cases' domain and their mirrors come first among
    those past the range (as cheap as the inputs near the cases: an input too slow for the reference
    past the range cuts the run later), and with ``late`` (head positions) those are asked again, round
    and round, after every other input, until the run has made :data:`LATE_CALLS` calls: counted with
    the inputs past the range, where a run that ends (its deadline, its output) is not held against the
    program, but a case answered otherwise there than in the first run is.
    With ``lead`` (p8/c8) those inputs come first, before the cases (``again`` and ``late`` still name
    head positions); ``ends`` then ``bounds`` (p8/c8, :func:`_generate_extreme`) and their mirrors come
    last, after every other input: one that hangs or ends the run cuts nothing else short (and a list
    thousands of elements long holds ties a task that ignores order breaks no particular way: its
    mirror shows them). ``bounds`` are among ``wide``: refusing a magnitude no case approaches (an
    int32 array's OverflowError past 2**31) is the program's right, a wrong value there is not.
    With ``every`` (p12/c12) every input with a list argument to reverse gets its mirror, the inputs
    outside the seeded domain included (see :func:`_mirror`); before, only those inside it did. And every
    input but the long ones at the end gets its sorted twins (``ProbePlan.orders``,
    :func:`_sorted_twins`), laid with the mirrors.
    With ``twice`` (p18/c18: texts of inputs near the cases, :func:`_twice`) each of those inputs is
    asked again right after itself (``repeats``), before any mirror: a program answering otherwise when
    a call repeats the previous call's arguments answers the second otherwise than the reference. A
    repeat gets no mirror or twin of its own (its input's are laid), and is not among the inputs the
    ``again`` section asks once more.
    With ``spaced`` (p20/c20: text -> how many times more, :func:`_asked_again`) each of those inputs is
    asked again after the next input near the cases, that many times (A, B, A, C, A, ...): a program
    answering otherwise when a call repeats the call before last, or from the fourth time one input is
    asked, answers one of those otherwise than the reference. Such repeats are like ``twice``'s.
    With ``gaps`` (p21/c21: the generator that draws them, :func:`_gapped`) inputs near the cases are
    asked again after each number of other calls from :data:`MIN_REPEAT_GAP` to :data:`MAX_REPEAT_GAP`,
    and with ``held`` (p21/c21: texts asked before, :func:`_held`) each of those inputs is asked twice
    in a row at the end of the late section, in the run's second half, where the stub hands a call the
    previous call's argument objects refilled in place: the second asking gets the very objects of the
    first, their content unchanged. Such repeats are like ``twice``'s.
    With ``bands`` (p22/c22: the generator that draws them) inputs near the cases are also asked again
    after each distance from :data:`MIN_REPEAT_GAP` to :data:`MAX_REPEAT_GAP` at an input longer than the
    median and after one distance of each of :data:`REPEAT_GAP_BANDS` (:func:`_gapped_more`), and inputs
    of the run's second half after each of those distances as far as its inputs past the range leave
    room (:func:`_gapped_late`); ``held`` then ends with an input past the range (:func:`_held_far`).
    ``added`` (p23/c23: the texts of the inputs that generation adds, its ASCII twins, tested signs and
    stated numbers) lengthen the run rather than take the late section's place: it fills the run up to
    :data:`LATE_CALLS` plus what they and their mirrors and twins take (through a first p23 they took it:
    HumanEval/134's late section fell from 72 askings to 28, and a program wrong from an input's 11th
    asking was accepted, red-team a47_eleventh_ask_wrong_134)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    invariants = _Invariants(tuples, seeded=True)
    ordered = {
        i
        for i in range(min(len(t) for t in tuples))
        if all(isinstance(t[i], list) and _sorted(t[i]) for t in tuples)  # type: ignore[arg-type]
        and any(len(t[i]) > 1 for t in tuples)  # type: ignore[arg-type]
    }
    texts: list[str] = []
    parents: list[tuple[int, ...]] = []
    mirrors: list[tuple[int, int]] = []
    orders: list[tuple[int, int]] = []
    repeats: dict[int, int] = {}
    extra = [0]  # (p23/c23) the calls ``added`` inputs take, with their mirrors and twins

    def lay(
        section: list[tuple[str, tuple[int, ...]]], check: _Invariants = invariants, *, twins: bool = True
    ) -> None:
        start = len(texts)
        texts.extend(text for text, _ in section)
        parents.extend(made_from for _, made_from in section)
        where = {text: pos for pos, text in enumerate(texts)}

        def placed(text: str, pos: int) -> int:
            if text not in where:
                where[text] = len(texts)
                texts.append(text)
                parents.append(parents[pos] or (pos,))  # a check's call: made from that call
            return where[text]

        for pos in range(start, start + len(section)):
            if pos in repeats:
                continue  # (p18/c18) asked twice in a row: the first asking's mirror and twins serve
            before = len(texts)
            text = _mirror(texts[pos], ordered, check, every=every)
            if text is not None and where.get(text) != pos:
                mirrors.append((pos, placed(text, pos)))
            # (p12/c12) and the input with those lists sorted, both ways
            for text in _sorted_twins(texts[pos], ordered) if every and twins else ():
                if where.get(text) != pos:
                    orders.append((pos, placed(text, pos)))
            if texts[pos] in added:
                extra[0] += 1 + len(texts) - before

    first: list[tuple[str, tuple[int, ...]]] = [*lead, *head]
    owed: list[int] = []
    for item in near:
        first.append(item)
        if item[0] in twice:
            # (p18/c18) the same input again, right after itself
            repeats[len(first)] = len(first) - 1
            first.append(item)
        if owed:
            # (p20/c20) an input asked again after exactly one other call
            pos = owed.pop()
            repeats[len(first)] = pos
            first.append(first[pos])
        elif spaced and item[0] in spaced:
            owed = [len(first) - 1] * spaced[item[0]]
    for pos in owed:  # no next input (never so as _asked_again draws them)
        repeats[len(first)] = pos
        first.append(first[pos])
    if gaps is not None:
        # (p21/c21) inputs near the cases asked again after 2 to 12 other calls
        first, repeats = _gapped(first, repeats, len(lead) + len(head), gaps)
    if bands is not None:
        # (p22/c22) inputs near the cases asked again at longer inputs and longer distances
        first, repeats = _gapped_more(first, repeats, len(lead) + len(head), bands)
    lay(first)
    shift = len(lead)
    if again is not None:
        asked = len(texts)
        # the smaller half of the inputs near the cases (by their text: what a call costs grows with
        # it), so asking again costs a fraction of the run it follows
        near_positions = [
            pos for pos in range(asked) if not shift <= pos < shift + len(head) and pos not in repeats
        ]
        cheap = sorted(near_positions, key=lambda pos: (len(texts[pos]), pos))
        cheap = cheap[: (len(cheap) + 1) // 2]
        pad = itertools.cycle(cheap) if cheap else iter(())
        for pos in [*itertools.islice(pad, max(0, REPEAT_AFTER - asked)), *(shift + k for k in again)]:
            repeats[len(texts)] = pos
            texts.append(texts[pos])
            parents.append(parents[pos] or (pos,))  # a check's call: made from that call
    start_far = len(texts)
    if wide:
        # a repeated element is what some of these inputs add: their mirrors keep it
        lay(wide, _Invariants(tuples, seeded=False))
    end_wide = len(texts)
    lay(far)
    start_late = len(texts)
    if late:
        head_late = [shift + k for k in late]
        cycle_calls = max(len(late), LATE_CALLS + extra[0] - len(texts))
        for pos in itertools.islice(itertools.cycle(head_late), cycle_calls):
            repeats[len(texts)] = pos
            texts.append(texts[pos])
            parents.append(parents[pos] or (pos,))  # a check's call: made from that call
    # (p21/c21) each held input twice in a row: the late section ends in the run's second half (what
    # follows it, the long inputs at the end, is never as long as everything before), where the stub
    # refills the previous call's argument objects (streams/sandbox/protocol.py: caller_reuse_from)
    end_cycle = len(texts)
    first_asked = {text: pos for pos, text in reversed(list(enumerate(texts)))}
    for text in held:
        pos = first_asked[text]
        for _ in range(2):
            repeats[len(texts)] = pos
            texts.append(text)
            parents.append(parents[pos] or (pos,))
    end_late = len(texts)
    if ends:
        # (p12/c12) no sorted twins of the long inputs: each would cost as much as its input (thousands of
        # elements), and their lists repeat no element more often than a case's list does
        lay(list(ends), twins=False)
    start_bounds = len(texts)
    if bounds:
        lay(list(bounds))
    wide_at = {*range(start_far, end_wide), *range(start_bounds, len(texts))}
    if bands is not None:
        # (p22/c22) inputs of the run's second half asked again there, among the inputs past the range
        # and the late section (the held pairs and the long inputs after them only move). The late
        # section's calls past its one round of the cases (those that fill the run up to LATE_CALLS)
        # give way to them: as many of its last calls are left out as are added, so a short plan keeps
        # its length
        spare = end_cycle - start_late - len(late)
        laid_late = _gapped_late(texts, start_far, start_late, end_cycle, end_cycle, bands)
        cycle = set(range(start_late, end_cycle))  # the late section's own calls (then: where they moved)
        spans: list[tuple[int, int]] = []
        for at, pos in laid_late:
            texts.insert(at, texts[pos])
            parents.insert(at, parents[pos] or (pos,))

            def moved(k: int, at: int = at) -> int:
                return k + (k >= at)

            parents[:] = [tuple(moved(k) for k in made_from) for made_from in parents]
            repeats = {moved(k): moved(v) for k, v in repeats.items()}
            repeats[at] = repeats.get(moved(pos), moved(pos))
            mirrors[:] = [(moved(a), moved(b)) for a, b in mirrors]
            orders[:] = [(moved(a), moved(b)) for a, b in orders]
            wide_at = {moved(k) for k in wide_at} | ({at} if pos in wide_at else set())
            start_late, end_late = moved(start_late), moved(end_late)
            cycle = {moved(k) for k in cycle}
            spans = [(moved(a), moved(b)) for a, b in spans] + [(pos, at)]
        end_cycle += len(laid_late)
        # the late section's last calls that no repeat laid here spans or asks (leaving one out changes
        # no drawn distance), as many as were added, where the section filled the run up to LATE_CALLS
        for gone in [
            k
            for k in range(end_cycle - 1, start_late - 1, -1)
            if k in cycle and not any(a <= k <= b for a, b in spans)
        ][: min(spare, len(laid_late))]:
            # a call of the late section's cycle: no mirror, twin or later repeat refers to it
            del texts[gone], parents[gone]

            def kept(k: int, gone: int = gone) -> int:
                return k - (k > gone)

            repeats = {kept(k): kept(v) for k, v in repeats.items() if k != gone}
            mirrors[:] = [(kept(a), kept(b)) for a, b in mirrors]
            orders[:] = [(kept(a), kept(b)) for a, b in orders]
            parents[:] = [tuple(kept(k) for k in made_from) for made_from in parents]
            wide_at = {kept(k) for k in wide_at}
            spans = [(kept(a), kept(b)) for a, b in spans]
            end_late -= 1
    return _Laid(
        tuple(texts),
        tuple(parents),
        frozenset(range(start_far, len(texts))),
        tuple(mirrors),
        tuple(orders),
        repeats,
        frozenset(wide_at),
        end_late - start_late,
        shift,
        len(texts) - end_late,
    )


def _mirror(text: str, ordered: set[int], invariants: _Invariants, *, every: bool = False) -> str | None:
    """The input with each list argument's elements in reverse order (None: none changes, or the input
    so made leaves the cases' domain).

    Through p11/c11 a mirror had to keep ``invariants`` (the seeded plan's, for most sections), so an
    input that breaks them had none: the inputs of the plan of the task alone, drawn without the seeded
    rule that a list repeats no more of its elements than a case's list does, sit among the inputs near
    the cases, and one repeating more (``[1.0, 2.0, 3.0, 1.0, 4.0, 5.0, 2.0]``: two closest pairs at
    distance 0) is exactly where a tie is. With ``every`` (p12/c12) a mirror is refused only where
    reversing breaks a relation the input itself keeps: the mirror then lies in whatever domain its
    input does, and where the task ignores the order of a list its answer there is as right as the
    reference's on the input (every relation :class:`_Invariants` reads is one of lengths, strings or
    repeats, which reversing a list keeps, so this refuses nothing today)."""
    args = pyast.literal_eval(text)
    if not isinstance(args, tuple):
        return None
    flipped = [
        list(reversed(v)) if isinstance(v, list) and i not in ordered and len(v) > 1 else v
        for i, v in enumerate(args)
    ]
    out = repr(tuple(flipped))
    if out == text or not _is_input_literal(out, tuple(flipped)):
        return None
    if not invariants.hold(flipped) and (not every or invariants.hold(args)):
        return None
    return out


def _sorted_twins(text: str, ordered: set[int]) -> list[str]:
    """(p12/c12) The input with each list argument that :func:`_mirror` reverses sorted ascending, then
    descending (none where its elements do not compare, or a twin is the input itself). A permutation
    of a list keeps every relation :class:`_Invariants` reads, as a reversal does."""
    args = pyast.literal_eval(text)
    if not isinstance(args, tuple):
        return []
    at = [i for i, v in enumerate(args) if isinstance(v, list) and i not in ordered and len(v) > 1]
    out: list[str] = []
    for descending in (False, True):
        try:
            twin = tuple(sorted(v, reverse=descending) if i in at else v for i, v in enumerate(args))  # type: ignore[type-var, call-overload]
        except TypeError:
            return []
        made = repr(twin)
        if at and made != text and made not in out and _is_input_literal(made, twin):
            out.append(made)
    return out


def _bytes_pool(column: Sequence[bytes], rng: random.Random) -> list[int]:
    """(p13/c13) The byte values a varied bytes argument draws from: every byte the cases pass at that
    position and :data:`BYTES_OTHERS` more. Where every case's bytes are printable ASCII (text, white
    space included) the others are printable too: such a task may read its bytes as text
    (``data.decode('ascii')``) and a byte past 0x7f would leave its domain. Where some case's are not,
    the task takes arbitrary bytes, and the others always include 0x00, 0x7f, 0x80 and 0xff (a NUL
    where no case's data ends with one, a byte past 0x7f where only one case holds one) besides drawn
    ones of the whole range."""
    held = sorted({b for value in column for b in value})
    text = all(0x20 <= b < 0x7F or b in (0x09, 0x0A, 0x0D) for b in held)
    if text:
        others = [b for b in range(0x21, 0x7F) if b not in held]
        extra = rng.sample(others, min(BYTES_OTHERS, len(others)))
    else:
        drawn = rng.sample([b for b in range(256) if b not in held], BYTES_OTHERS)
        extra = [0x00, 0x7F, 0x80, 0xFF, *drawn]
    return sorted({*held, *extra})


def _generate_bytes(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    near_domain: Callable[[Sequence[object], set[int]], bool] | None = None,
    far_domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """(p13/c13) Inputs with a bytes argument varied, each with the case it was made from: near the
    cases (the first :data:`BYTES_NEAR_INPUTS` per position: a case's bytes with one replaced, one
    dropped or added, two swapped, or a new value of a length the cases show; first of all one ending
    with a NUL and one holding a byte past 0x7f where the pool has them, see :func:`_bytes_pool`), and
    beyond them (:data:`BYTES_FAR_INPUTS` per position: longer than the cases' longest there, up to
    :data:`FAR_REACH` times it and :data:`_FAR_MAX_LENGTH`, from the case's bytes then the pool's). The
    case's other arguments stay: a program keyed by them and the length (a memo under ``(len(data),
    key)``) answers another input's bytes. Every relation the cases keep is kept (:class:`_Invariants`,
    and its relations of lengths read on the bytes as well: equal lengths, an integer at most a
    length); none about the byte values themselves (a case repeating a byte says nothing of the task).
    Only top-level bytes arguments (every case's) are varied; through p12/c12 none was (``_mutate``
    returned a bytes value as it was; p7's filled twins only re-fill an emptied one)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    at = [i for i in range(arity) if all(isinstance(t[i], bytes) for t in tuples)]
    if not at:
        return [], []
    invariants = _Invariants(tuples, seeded=True)
    # the relations of lengths the cases keep, bytes read as lists of their values (no repeats rule)
    viewed = _Invariants([_bytes_as_lists(t) for t in tuples])
    near_limit = _SIZE_FACTOR * max(len(repr(t)) for t in tuples) + _SIZE_SLACK
    far_limit = min(_FAR_MAX_CHARS, FAR_REACH * max(len(repr(t)) for t in tuples) + _SIZE_SLACK)
    seen = {repr(t) for t in tuples} | set(taken)
    near: list[tuple[str, tuple[int, ...]]] = []
    far: list[tuple[str, tuple[int, ...]]] = []

    def keep(
        candidate: list[object],
        b: int,
        out: list[tuple[str, tuple[int, ...]]],
        limit: int,
        domain: Callable[[Sequence[object], set[int]], bool] | None,
    ) -> bool:
        text = repr(tuple(candidate))
        if text in seen or len(text) > limit:
            return False
        if not invariants.hold(candidate) or not viewed.hold(_bytes_as_lists(tuple(candidate))):
            return False
        if domain is not None and not domain(candidate, {b}):
            return False
        if not _is_input_literal(text, tuple(candidate)):
            return False
        seen.add(text)
        out.append((text, (b,)))
        return True

    for i in at:
        column: list[bytes] = [t[i] for t in tuples]  # type: ignore[misc]
        pool = _bytes_pool(column, rng)
        lengths = [len(v) for v in column]
        shortest, longest = min(lengths), max(lengths)
        high = [x for x in pool if x >= 0x80]
        filled = [k for k, v in enumerate(column) if v]
        # near the cases: the edges first (a NUL at the end, a byte past 0x7f), then drawn changes
        wanted = len(near) + BYTES_NEAR_INPUTS
        for nul in (True, False):
            for _ in range(_ATTEMPTS_PER_INPUT):
                if not filled:
                    break
                b = rng.choice(filled)
                if nul:
                    value = column[b][:-1] + b"\x00" if 0 in pool else None
                else:
                    value = _with_high(column[b], high, rng)
                if value is None:
                    break
                candidate = list(tuples[b])
                candidate[i] = value
                if keep(candidate, b, near, near_limit, near_domain):
                    break
        for _ in range(BYTES_NEAR_INPUTS * _ATTEMPTS_PER_INPUT):
            if len(near) >= wanted:
                break
            b = rng.randrange(len(tuples))
            candidate = list(tuples[b])
            candidate[i] = _vary_bytes(column[b], pool, shortest, longest, rng)
            keep(candidate, b, near, near_limit, near_domain)
        # beyond them: longer than the cases' longest, the case's own bytes first
        lo = max(longest + 1, _FAR_MIN_LENGTH)
        hi = max(lo, min(_FAR_MAX_LENGTH, FAR_REACH * max(longest, 1)))
        wanted = len(far) + BYTES_FAR_INPUTS
        for _ in range(BYTES_FAR_INPUTS * _ATTEMPTS_PER_INPUT):
            if len(far) >= wanted:
                break
            b = rng.randrange(len(tuples))
            size = rng.randint(lo, hi)
            head = column[b] if rng.random() < 0.5 else b""
            value = (head + bytes(rng.choice(pool) for _ in range(size)))[:size]
            candidate = list(tuples[b])
            candidate[i] = value
            # shortened until its text fits (a byte past 0x7f prints as four characters)
            while len(repr(tuple(candidate))) > far_limit and len(value) > lo:
                value = value[: max(lo, len(value) - 8)]
                candidate[i] = value
            keep(candidate, b, far, far_limit, far_domain)
    return near, far


def _bytes_as_lists(t: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(list(v) if isinstance(v, bytes) else v for v in t)


def _with_high(value: bytes, high: list[int], rng: random.Random) -> bytes | None:
    """(p13/c13) ``value`` with one byte replaced by a byte past 0x7f (None: the pool has none)."""
    if not high or not value:
        return None
    k = rng.randrange(len(value))
    return value[:k] + bytes([rng.choice(high)]) + value[k + 1 :]


def _vary_bytes(value: bytes, pool: list[int], shortest: int, longest: int, rng: random.Random) -> bytes:
    """(p13/c13) ``value`` changed as a string is (:func:`_mutate_str`): a byte replaced by one of the
    pool, one dropped or added, two neighbours swapped, or a new value of a length the cases show."""
    choice = rng.random()
    data = bytearray(value)
    if choice < 0.35 and data:
        data[rng.randrange(len(data))] = rng.choice(pool)
    elif choice < 0.5 and len(data) > max(shortest, 1):
        del data[rng.randrange(len(data))]
    elif choice < 0.65 and len(data) < longest:
        data.insert(rng.randrange(len(data) + 1), rng.choice(pool))
    elif choice < 0.75 and len(data) > 1:
        k = rng.randrange(len(data) - 1)
        data[k], data[k + 1] = data[k + 1], data[k]
    else:
        # of the same length as the case half the time: a program keyed by the length answers it wrong
        size = len(data) if rng.random() < 0.5 else rng.randint(max(shortest, 1), max(longest, 1))
        data = bytearray(rng.choice(pool) for _ in range(size))
    return bytes(data)


def _nested_bytes_positions(tuples: Sequence[tuple[object, ...]], arity: int) -> list[int]:
    """(p14/c14) The argument positions where every case passes a list or a tuple of bytes values only,
    some of them non-empty."""
    return [
        i
        for i in range(arity)
        if all(isinstance(t[i], list | tuple) for t in tuples)
        and all(isinstance(e, bytes) for t in tuples for e in t[i])  # type: ignore[attr-defined]
        and any(e for t in tuples for e in t[i])  # type: ignore[attr-defined]
    ]


def _generate_nested_bytes(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    near_domain: Callable[[Sequence[object], set[int]], bool] | None = None,
    far_domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """(p14/c14) Inputs with a bytes value inside a list or tuple argument varied, as
    :func:`_generate_bytes` varies a top-level one (through p13/c13 no such value was ever changed): per
    position where every case passes a list or tuple of bytes values, :data:`BYTES_NEAR_INPUTS` inputs
    near the cases (one element of a case's list ending with a NUL, one holding a byte past 0x7f where the
    pool has them, then elements with a byte replaced, dropped, added, two swapped, or new ones of a
    length the cases' elements show; the bytes from :func:`_bytes_pool` over every element there) and
    :data:`BYTES_FAR_INPUTS` with one element longer than the cases' longest (up to :data:`FAR_REACH`
    times it). The list keeps its length and the case's other arguments stay; a list every case passes
    sorted stays sorted, and every relation the cases keep is kept (:class:`_Invariants`: no more repeats
    than a case's list shows). Bytes inside dicts and sets are not varied."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    at = _nested_bytes_positions(tuples, arity)
    if not at:
        return [], []
    invariants = _Invariants(tuples, seeded=True)
    near_limit = _SIZE_FACTOR * max(len(repr(t)) for t in tuples) + _SIZE_SLACK
    far_limit = min(_FAR_MAX_CHARS, FAR_REACH * max(len(repr(t)) for t in tuples) + _SIZE_SLACK)
    seen = {repr(t) for t in tuples} | set(taken)
    near: list[tuple[str, tuple[int, ...]]] = []
    far: list[tuple[str, tuple[int, ...]]] = []

    def keep(
        candidate: list[object],
        b: int,
        out: list[tuple[str, tuple[int, ...]]],
        limit: int,
        domain: Callable[[Sequence[object], set[int]], bool] | None,
    ) -> bool:
        text = repr(tuple(candidate))
        if text in seen or len(text) > limit or not invariants.hold(candidate):
            return False
        if domain is not None and not domain(candidate, {b}):
            return False
        if not _is_input_literal(text, tuple(candidate)):
            return False
        seen.add(text)
        out.append((text, (b,)))
        return True

    for i in at:
        containers: list[list[bytes] | tuple[bytes, ...]] = [t[i] for t in tuples]  # type: ignore[misc]
        elements = [e for v in containers for e in v]
        pool = _bytes_pool(elements, rng)
        lengths = [len(e) for e in elements]
        shortest, longest = min(lengths), max(lengths)
        high = [x for x in pool if x >= 0x80]
        ordered = all(list(v) == sorted(v) for v in containers) and any(len(v) > 1 for v in containers)
        holders = [(b, k) for b, v in enumerate(containers) for k, e in enumerate(v) if e]
        every = [(b, k) for b, v in enumerate(containers) for k in range(len(v))]

        def placed(b: int, k: int, value: bytes, i: int = i, ordered: bool = ordered) -> list[object]:
            return _with_element(tuples[b], i, k, value, ordered=ordered)

        wanted = len(near) + BYTES_NEAR_INPUTS
        for nul in (True, False):
            for _ in range(_ATTEMPTS_PER_INPUT):
                b, k = rng.choice(holders)
                element: bytes = containers[b][k]
                if nul:
                    value = element[:-1] + b"\x00" if 0 in pool else None
                else:
                    value = _with_high(element, high, rng)
                if value is None:
                    break
                if keep(placed(b, k, value), b, near, near_limit, near_domain):
                    break
        for _ in range(BYTES_NEAR_INPUTS * _ATTEMPTS_PER_INPUT):
            if len(near) >= wanted:
                break
            b, k = rng.choice(every)
            value = _vary_bytes(containers[b][k], pool, shortest, longest, rng)
            keep(placed(b, k, value), b, near, near_limit, near_domain)
        lo = max(longest + 1, _FAR_MIN_LENGTH)
        hi = max(lo, min(_FAR_MAX_LENGTH, FAR_REACH * max(longest, 1)))
        wanted = len(far) + BYTES_FAR_INPUTS
        for _ in range(BYTES_FAR_INPUTS * _ATTEMPTS_PER_INPUT):
            if len(far) >= wanted:
                break
            b, k = rng.choice(every)
            size = rng.randint(lo, hi)
            head = containers[b][k] if rng.random() < 0.5 else b""
            value = (head + bytes(rng.choice(pool) for _ in range(size)))[:size]
            candidate = placed(b, k, value)
            while len(repr(tuple(candidate))) > far_limit and len(value) > lo:
                value = value[: max(lo, len(value) - 8)]
                candidate = placed(b, k, value)
            keep(candidate, b, far, far_limit, far_domain)
    return near, far


def _far_wanted(wanted: int) -> int:
    return min(MAX_FAR, max(MIN_FAR, wanted // 2))


#: a conversion around a call that keeps its answer's elements and order (only the type is loosened)
_SEQUENCE_CONVERSIONS = frozenset({"tuple", "list"})


def check_calls(check: str, entry_point: str) -> tuple[str, ...]:
    """The argument tuples (as case inputs are written) of the calls ``check(candidate)`` makes of the
    candidate (its parameter, or the entry point's name, which the check's namespace binds to it) with
    literal arguments only, whose answer the check pins: compared with ``==`` or ``is``, or asserted
    truthy or falsy, a ``tuple()``/``list()`` around the call at most. A call whose answer the check
    only measures or bounds (``len``, ``sorted``, ``set``, a tolerance, ``in``, ``!=``, ``is not``) is
    left out: another answer than the reference's may satisfy it. In the check's order, each once."""
    try:
        tree = pyast.parse(check)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ()
    fn = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check" and n.args.args), None
    )
    if fn is None:
        return ()
    names = {fn.args.args[0].arg, entry_point}
    parents = {child: node for node in ast.walk(fn) for child in ast.iter_child_nodes(node)}
    out: list[str] = []
    for node in sorted(ast.walk(fn), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in names
            and not node.keywords
            and _pinned(node, parents)
        ):
            continue
        try:
            values = tuple(pyast.literal_eval(arg) for arg in node.args)  # a Starred argument raises
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        text = repr(values)
        if text not in out and _is_input_literal(text, values):
            out.append(text)
    return tuple(out)


def check_compares_sequences(check: str, entry_point: str) -> bool:
    """Whether every call of the candidate whose answer ``check(candidate)`` pins (see
    :func:`check_calls`, literal arguments or not) has a ``tuple()``/``list()`` around it: the check
    then compares only the elements of an answer, in order, never whether it is a list or a tuple,
    and a probe of the task judges its inputs the same way."""
    try:
        tree = pyast.parse(check)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    fn = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check" and n.args.args), None
    )
    if fn is None:
        return False
    names = {fn.args.args[0].arg, entry_point}
    parents = {child: node for node in ast.walk(fn) for child in ast.iter_child_nodes(node)}
    pinned = [
        node
        for node in ast.walk(fn)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in names
        and _pinned(node, parents)
    ]
    return bool(pinned) and all(_converted(node, parents) for node in pinned)


def _converted(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(call)
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in _SEQUENCE_CONVERSIONS
        and len(parent.args) == 1
        and not parent.keywords
    )


def _pinned(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether the check compares the call's answer exactly (see :func:`check_calls`)."""
    child: ast.AST = call
    parent = parents.get(child)
    while (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in _SEQUENCE_CONVERSIONS
        and len(parent.args) == 1
        and parent.args[0] is child
    ):
        child, parent = parent, parents.get(parent)
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        child, parent = parent, parents.get(parent)
        return isinstance(parent, ast.Assert) and parent.test is child
    if isinstance(parent, ast.Compare):
        return all(isinstance(op, ast.Eq | ast.Is) for op in parent.ops)
    return isinstance(parent, ast.Assert) and parent.test is child


def _reorder(task: TaskPublished, rng: random.Random) -> list[int]:
    """The task's cases in another order, chosen among a few shuffles so that as many positions as
    possible expect another answer than the task's own order does there: a program serving answers
    in call order then fails them (with yes/no answers a careless shuffle often lines them up again)."""
    expected = [repr(pyast.literal_eval(c.output)) for c in (*task.tests, *task.hidden_tests)]
    identity = list(range(len(expected)))
    if len(identity) < 2:
        return identity
    best, best_moved = list(reversed(identity)), -1
    for _ in range(_REORDER_TRIES):
        order = identity[:]
        rng.shuffle(order)
        moved = sum(expected[o] != expected[k] for k, o in enumerate(order))
        if order != identity and moved > best_moved:
            best, best_moved = order, moved
    return best


def _seed(task: TaskPublished, version: str, seed: str | None) -> int:
    # an unseeded plan's generator is seeded exactly as it always was (its digests must not change)
    text = f"{version}|{task.event_id()}" if seed is None else f"{version}|{task.event_id()}|{seed}"
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


# ------------------------------------------------------------------------------------------ generation


@dataclass
class _Profile:
    """What the cases show about one argument position: value ranges, characters, list shapes."""

    #: the whole values the cases pass at this position (another case's value is a fine new input)
    values: list[object] = field(default_factory=list)
    ints: list[int] = field(default_factory=list)
    floats: list[float] = field(default_factory=list)
    chars: str = ""
    str_lengths: list[int] = field(default_factory=list)
    #: every element seen in any list, tuple or set at this position (the pool new elements come from)
    elements: list[object] = field(default_factory=list)
    list_lengths: list[int] = field(default_factory=list)
    lists_sorted: bool = True
    lists_distinct: bool = True
    float_decimals: int = 0
    #: (p5/c5) a float moved past the range may keep every digit (else the cases' decimals at most)
    precise: bool = False

    def add(self, value: object) -> None:
        if isinstance(value, bool):
            return
        if isinstance(value, int):
            self.ints.append(value)
        elif isinstance(value, float):
            self.floats.append(value)
            text = repr(value)
            if "e" not in text and "." in text:
                self.float_decimals = max(self.float_decimals, len(text.split(".")[1]))
        elif isinstance(value, str):
            self.chars = "".join(sorted(set(self.chars) | set(value)))
            self.str_lengths.append(len(value))
        elif isinstance(value, list | tuple | set | frozenset):
            items = list(value)
            self.elements.extend(items)
            if isinstance(value, list):
                self.list_lengths.append(len(items))
                self.lists_sorted &= _sorted(items)
                self.lists_distinct &= _distinct(items)
            for item in items:
                self.add(item)
        elif isinstance(value, dict):
            for v in value.values():
                self.add(v)


def _sorted(items: list[object]) -> bool:
    try:
        return all(a <= b for a, b in itertools.pairwise(items))  # type: ignore[operator]
    except TypeError:
        return False


def _distinct(items: list[object]) -> bool:
    try:
        return len({repr(i) for i in items}) == len(items)
    except RecursionError:
        return False


def _generate(
    cases: Sequence[object],
    wanted: int,
    rng: random.Random,
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
    *,
    seeded: bool = False,
) -> list[tuple[str, tuple[int, ...]]]:
    """Generated argument tuples, each with the indices of the cases it was made from (and, given a
    ``domain``, kept only where it holds of the input and those cases)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = max(len(t) for t in tuples)
    profiles = [_Profile() for _ in range(arity)]
    for t in tuples:
        for i, v in enumerate(t):
            profiles[i].values.append(v)
            profiles[i].add(v)
    limit = _SIZE_FACTOR * max(len(repr(t)) for t in tuples) + _SIZE_SLACK
    invariants = _Invariants(tuples, seeded=seeded)
    seen = {repr(t) for t in tuples}
    # what each attempt read of its base case, derived once per case (most attempts of a small task
    # make an input already seen, so these were most of the loop's work): its strings, whether its
    # arguments share one type, and per position the cases with an argument of the same type there
    strings_of: dict[int, list[str]] = {}
    one_type = [len({type(v) for v in t}) == 1 for t in tuples]
    alike: dict[tuple[int, type], list[int]] = {}
    out: list[tuple[str, tuple[int, ...]]] = []
    for _ in range(wanted * _ATTEMPTS_PER_INPUT):
        if len(out) >= wanted:
            break
        b = rng.randrange(len(tuples))
        base, parents = tuples[b], {b}
        strategy = rng.random()
        if strategy < 0.15 and len(tuples) > 1 and arity > 1:
            candidate, parents = _recombine(tuples, rng)
        elif strategy < 0.4 and len(base) > 1 and one_type[b]:
            candidate = list(base)  # the same arguments in another order (a symmetric task's cases)
            rng.shuffle(candidate)
        else:
            candidate = list(base)
            positions = list(range(len(candidate)))
            touched = positions if strategy > 0.85 else [rng.choice(positions)] if positions else []
            strings = strings_of.get(b)
            if strings is None:
                strings = strings_of[b] = _strings_in(base)
            for i in touched:
                # candidate[i] is still base[i] here: each position is touched once
                kind = type(candidate[i])
                others = alike.get((i, kind))
                if others is None:
                    others = alike[(i, kind)] = [
                        k for k, t in enumerate(tuples) if len(t) > i and type(t[i]) is kind
                    ]
                if len(touched) > 1 and others and rng.random() < 0.3:
                    k = rng.choice(others)  # another case's value here, with its neighbours'
                    candidate[i] = tuples[k][i]
                    parents.add(k)
                elif isinstance(candidate[i], str) and strings and rng.random() < 0.25:
                    candidate[i] = _slice_of(rng.choice(strings), rng)  # a piece of another argument
                else:
                    candidate[i] = _mutate(candidate[i], profiles[i], rng, 0)
        text = repr(tuple(candidate))
        if text in seen or len(text) > limit or not invariants.hold(candidate):
            continue
        if domain is not None and not domain(candidate, parents):
            continue
        if not _is_input_literal(text, tuple(candidate)):
            continue
        seen.add(text)
        out.append((text, tuple(sorted(parents))))
    return out


def _generate_far(
    cases: Sequence[object],
    wanted: int,
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
    *,
    lengths: bool = False,
    wider: bool = False,
    related: bool = False,
    digits: random.Random | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """Inputs beyond the cases' range, each with the case it was made from: a case with some of its
    numbers moved past the range the cases use at that argument position (up to :data:`FAR_REACH`
    times their magnitude, on a side the cases' signs allow), or with every integer multiplied by one
    factor of :data:`_SCALES`; with ``lengths`` (p4/c3), half of them (all, where no argument is a
    number) a case with some of its strings, lists, dicts or sets made longer than the cases' longest at
    that position (:class:`_Sizes`). Every relation the cases keep is kept (:class:`_Invariants`;
    ``domain`` besides), so an index stays an index and a list of 1..n stays one. With ``wider``
    (p5/c5) the factors go up to 1000 (:data:`_FAR_SCALES`) and half the floats moved past the range keep
    every digit the draw gave them (a program that rounds to the cases' decimals shows there). With
    ``related`` (p7/c7) arguments whose lengths differ by one amount in every one of
    :data:`RELATION_CASES` cases are made longer together, keeping that difference (:class:`_Sizes`).
    With ``digits`` (p11/c11, a generator of its own: every other draw stays ``rng``'s) a factor of
    :data:`DIGITS_KEPT_FACTORS` is replaced by one drawn just above it (:func:`_kept_digits`)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = max(len(t) for t in tuples)
    profiles = [_Profile(precise=wider) for _ in range(arity)]
    for t in tuples:
        for i, v in enumerate(t):
            profiles[i].add(v)
    numeric = any(p.ints or p.floats for p in profiles)
    sizes = _Sizes(tuples, related=related) if lengths else None
    longer = sizes is not None and bool(sizes.positions)
    if not numeric and not longer:
        return []
    longest = max(len(repr(t)) for t in tuples)
    limit = _SIZE_FACTOR * longest + _SIZE_SLACK
    far_limit = min(_FAR_MAX_CHARS, FAR_REACH * longest + _SIZE_SLACK)
    invariants = _Invariants(tuples, seeded=True)
    seen = {repr(t) for t in tuples} | taken
    out: list[tuple[str, tuple[int, ...]]] = []
    # (p5/c5) first the cases of the largest integers, each scaled by the largest factor: drawn at random
    # among the rest they are too rare to show a bound a program is right only below
    magnitude = sorted(range(len(tuples)), key=lambda k: -_largest_scaled(tuples[k]))
    forced = [k for k in magnitude if _largest_scaled(tuples[k]) > 1][:_FORCED_SCALED] if wider else []
    for attempt in range(wanted * _ATTEMPTS_PER_INPUT):
        if len(out) >= wanted:
            break
        b = forced[attempt] if attempt < len(forced) else rng.randrange(len(tuples))
        base = tuples[b]
        cap = limit
        if attempt < len(forced):
            factor = _kept_digits(_FAR_SCALES[-1], digits)
            candidate = [_scaled(v, factor) for v in base]
        elif sizes is not None and longer and (not numeric or rng.random() < 0.5):
            made = sizes.longer(base, rng)
            if made is None:
                continue
            candidate, cap = made, far_limit
        elif rng.random() < 0.4:
            factor = _kept_digits(rng.choice(_FAR_SCALES if wider else _SCALES), digits)
            candidate = [_scaled(v, factor) for v in base]
        else:
            candidate = [
                _beyond(v, profiles[i], rng, 0) if rng.random() < 0.6 else v for i, v in enumerate(base)
            ]
        text = repr(tuple(candidate))
        if text in seen or len(text) > cap or not invariants.hold(candidate):
            continue
        if sizes is not None and not sizes.keeps(candidate):
            continue
        if domain is not None and not domain(candidate, {b}):
            continue
        if not _is_input_literal(text, tuple(candidate)):
            continue
        seen.add(text)
        out.append((text, (b,)))
    return out


class _Made:
    """The inputs a widening generator (:func:`_generate_wide`, :func:`_generate_admitted`) has made from
    the cases, each with the case it was made from. A candidate is taken where it is new, no longer than
    the cases allow (:data:`_SIZE_FACTOR`, :data:`_SIZE_SLACK`), keeps every relation the cases keep
    (``invariants``, :class:`_Sizes`, ``domain``) and prints as a literal."""

    def __init__(
        self,
        tuples: Sequence[tuple[object, ...]],
        taken: set[str],
        domain: Callable[[Sequence[object], set[int]], bool] | None,
    ) -> None:
        self.limit = _SIZE_FACTOR * max(len(repr(t)) for t in tuples) + _SIZE_SLACK
        self.sizes = _Sizes(tuples)
        self.domain = domain
        self.seen = {repr(t) for t in tuples} | taken
        self.out: list[tuple[str, tuple[int, ...]]] = []

    def take(self, candidate: list[object], b: int, invariants: _Invariants) -> bool:
        text = repr(tuple(candidate))
        if text in self.seen or len(text) > self.limit or not invariants.hold(candidate):
            return False
        if not self.sizes.keeps(candidate) or (self.domain is not None and not self.domain(candidate, {b})):
            return False
        if not _is_input_literal(text, tuple(candidate)):
            return False
        self.seen.add(text)
        self.out.append((text, (b,)))
        return True


def _generate_wide(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p6/c6) Inputs that leave the cases' domain in kind, not in range, each with the case it was made
    from: a case with some of its values changed in a way no case shows at that argument position, up
    to :data:`WIDE_PER_KIND` inputs of each kind the position admits (:data:`_WIDENINGS`):

    - ``repeat``: a list with an element repeated where no case's list repeats one (kept sorted where
      every case's is);
    - ``case``: letters put in the other case where the cases hold letters of both (``'xxx'`` against
      a prefix ``'xxx'`` becomes ``'Xxx'``);
    - ``letters``: a letter of no case's alphabet in the class of the one it replaces (``'é'`` for a
      lower-case letter, ``'É'`` for an upper-case one);
    - ``float``: floats moved to magnitudes that print with an exponent (``1.33e+17``).

    Every other relation the cases keep is kept (:class:`_Invariants`, sortedness and 1..n, ``domain``
    besides). The reference decides what such an input says, as past the range: an input it refuses or
    is too slow for says nothing; where it answers with a value, a program answering another value is
    wrong, and one that refuses the input (raises) is not held to it (``ProbePlan.wide``)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    columns = [[t[i] for t in tuples] for i in range(arity)]
    inputs = _Made(tuples, taken, domain)
    for name, admits, widen in _WIDENINGS:
        positions = [i for i, column in enumerate(columns) if admits(column)]
        if not positions:
            continue
        # a repeated element is this kind's point: the cases' bound on repeats is lifted where it widens
        invariants = _Invariants(tuples, seeded=name != "repeat")
        made = 0
        for _ in range(WIDE_PER_KIND * _ATTEMPTS_PER_INPUT):
            if made >= WIDE_PER_KIND:
                break
            b = rng.randrange(len(tuples))
            candidate = list(tuples[b])
            chosen = [i for i in positions if rng.random() < 0.5] or [rng.choice(positions)]
            changed = False
            for i in chosen:
                value = widen(candidate[i], columns[i], rng)
                if value is not None:
                    candidate[i], changed = value, True
            if changed and inputs.take(candidate, b, invariants):
                made += 1
    return inputs.out


#: the kinds of argument an empty value of which :func:`_filled` fills
_FILLABLE = (str, bytes, list, tuple, dict, set, frozenset)


def _filled(
    cases: Sequence[object],
    far: Sequence[tuple[str, tuple[int, ...]]],
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p7/c7) Beside each input past the range with empty arguments (a string, bytes, a list, a dict,
    a set with nothing in it) where some case passes a non-empty one of that kind, the same input with
    every such argument filled: the shortest non-empty value a case passes there. A function answers
    an empty argument without reading the others against it (``bytes(b ^ key for b in b'')`` is
    ``b''`` for any key); filled, it must, and the reference's run of the filled input says whether it
    refuses the other arguments (a key past 255). The filter forgives a program's refusal of the empty
    input only where the reference refuses its filled twin (``streams.noise.probe.refused_alike``).
    Every relation the cases keep is kept (:class:`_Invariants`, :class:`_Sizes`, ``domain``): an
    input that would break one gets no twin. Draws nothing: every other input stays as drawn."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    fills: dict[int, object] = {}
    for i in range(arity):
        full = [t[i] for t in tuples if isinstance(t[i], _FILLABLE) and len(t[i]) > 0]  # type: ignore[arg-type]
        if full:
            fills[i] = min(full, key=lambda v: (len(repr(v)), repr(v)))
    invariants = _Invariants(tuples, seeded=True)
    sizes = _Sizes(tuples)
    seen = {repr(t) for t in tuples} | set(taken) | {text for text, _ in far}
    out: list[tuple[str, tuple[int, ...]]] = []
    for text, made_from in far:
        args = pyast.literal_eval(text)
        if not isinstance(args, tuple):
            continue
        candidate = list(args)
        changed = False
        for i, value in enumerate(args):
            fill = fills.get(i)
            if fill is not None and type(value) is type(fill) and len(value) == 0:  # type: ignore[arg-type]
                candidate[i], changed = fill, True
        twin = repr(tuple(candidate))
        if not changed or twin in seen or not invariants.hold(candidate) or not sizes.keeps(candidate):
            continue
        if domain is not None and not domain(candidate, set(made_from)):
            continue
        if not _is_input_literal(twin, tuple(candidate)):
            continue
        seen.add(twin)
        out.append((twin, made_from))
    return out


def _lead(
    near: list[tuple[str, tuple[int, ...]]], rng: random.Random, public: set[str]
) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """(p8/c8) One of the inputs near the cases, drawn to lead the run, and the others. Every other run
    of a sample (its first, its re-runs) starts with the task's own cases or the check's own calls, so
    a program wrong only on its process's first call, unless that call is one of those, would never be
    seen wrong; here its first call is an input it cannot know. Drawn among the inputs only the seed
    draws (those of the plan of the task alone can be derived from the task), where there are any."""
    if not near:
        return [], near
    secret = [k for k, (text, _) in enumerate(near) if text not in public]
    # and, among those, one without a degenerate argument (0, 1, an empty string or list), where many
    # functions agree: a first call answered x - y for x + y is not seen on (5, 0)
    telling = [k for k in secret if not _degenerate(near[k][0])]
    k = rng.choice(telling or secret or range(len(near)))
    return [near[k]], [*near[:k], *near[k + 1 :]]


def _degenerate(text: str) -> bool:
    """Whether an argument tuple holds a value on which many functions agree: 0, 1, -1, or empty."""
    args = pyast.literal_eval(text)
    values = args if isinstance(args, tuple) else (args,)
    return any(
        (type(v) in (int, float) and v in (0, 1, -1))
        or (isinstance(v, str | list | tuple | dict | set) and not v)
        for v in values
    )


def _twice(near: Sequence[tuple[str, tuple[int, ...]]], rng: random.Random) -> frozenset[str]:
    """(p18/c18) The inputs near the cases to ask twice in a row (see :func:`_with_mirrors`): among the
    cheaper half of ``near`` (by their text, as the ``again`` section's), one made from each case (a
    check's call; the first each was made from) as far as :data:`TWICE_INPUTS` go, the cases drawn where
    there are more, each input drawn among that case's without a degenerate argument where it has any
    (:func:`_degenerate`: an empty list's answer is one that many programs give however they are called).
    One per case: a program answering otherwise on a repeated call may do so only on part of the domain
    (``eat(2, 11, 5)``: more is needed than remains), and the cases are where the task shows its parts."""
    ranked = sorted(near, key=lambda item: (len(item[0]), item[0]))
    by_case: dict[int, list[str]] = {}
    for text, made_from in ranked[: (len(ranked) + 1) // 2]:
        by_case.setdefault(made_from[0] if made_from else GENERATED, []).append(text)
    cases = sorted(by_case)
    if len(cases) > TWICE_INPUTS:
        cases = sorted(rng.sample(cases, TWICE_INPUTS))
    chosen: set[str] = set()
    for case in cases:
        texts = by_case[case]
        chosen.add(rng.choice([t for t in texts if not _degenerate(t)] or texts))
    return frozenset(chosen)


def _variety(text: str) -> int:
    """(p20/c20) How many distinct parts an argument tuple holds: its numbers (and other scalars) by value
    and kind, its strings and each of their characters, through lists, tuples, sets and dicts, keys
    included. What an input can tell apart grows with it: a list of one element, or of four equal ones,
    comes out of every reordering alike, and a word of one letter out of every change of its letters'
    order."""
    parts: set[tuple[str, str]] = set()
    todo: list[object] = [pyast.literal_eval(text)]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            todo.extend(value.keys())
            todo.extend(value.values())
        elif isinstance(value, list | tuple | set | frozenset):
            todo.extend(value)
        elif isinstance(value, str):
            parts.add(("str", value))
            parts.update(("char", ch) for ch in value)
        else:
            parts.add((type(value).__name__, repr(value)))
    return len(parts)


def _asked_again(
    near: Sequence[tuple[str, tuple[int, ...]]], twice: frozenset[str], rng: random.Random
) -> dict[str, int]:
    """(p20/c20) The inputs near the cases to ask again after exactly one other call (see
    :func:`_with_mirrors`), each with how many times more: one input asked :data:`HOT_ASKS` times in
    all (H, B1, H, B2, H, ...), and :data:`SPACED_INPUTS` others asked twice (A, B, A). Drawn among the
    cheaper half of ``near`` (``near`` comes cheapest first: sorted by its text) without a degenerate
    argument (:func:`_degenerate`), where those run out among the dearer half's, then among the cheaper
    half's degenerate ones; none asked twice in a row already (p18's
    :func:`_twice`), and the inputs asked between (B) none of those either, so no B is followed by its
    own repeat; the spans so drawn do not overlap. Within a pool the input asked again and again is one
    of those with the most distinct parts (:func:`_variety`), and the others are drawn among those with
    at least the pool's median: an input of few distinct parts is answered alike by many functions (a
    sort, a reversal and HumanEval/70's strange order of ``[111110]``, ``[7, 111111]`` or ``[5, 5, 2, 5]``;
    drawn at random among the cheaper half, such an input was the one asked five times on 17 of 100
    seeds, and a program answering sorted from the fourth asking was accepted there). Through p19/c19 no
    input was asked again with exactly one call between, and none more than three times in a run (near,
    p18's repeat, p5's late section)."""
    texts = [text for text, _ in near]
    variety = [_variety(text) for text in texts]

    def free(k: int) -> bool:
        return 0 <= k < len(texts) and texts[k] not in twice

    half = (len(texts) + 1) // 2
    cheap = [k for k in range(half) if free(k)]
    telling = [k for k in range(len(texts)) if free(k) and not _degenerate(texts[k])]
    chosen: dict[str, int] = {}
    used: set[int] = set()
    # the cheaper half's telling inputs first; where those run out (HumanEval/29's cheaper half is
    # mostly empty lists) the dearer half's, then the degenerate ones
    for pool in ([k for k in telling if k < half], telling, cheap):
        hot = [k for k in pool if all(free(k + j) for j in range(1, HOT_ASKS))]
        if hot:
            most = max(variety[k] for k in hot)
            k = rng.choice([k for k in hot if variety[k] == most])
            chosen[texts[k]] = HOT_ASKS - 1
            used |= set(range(k, k + HOT_ASKS))
            break
    spaced = 0
    for pool in ([k for k in telling if k < half], telling, cheap):
        while spaced < SPACED_INPUTS:
            rest = [k for k in pool if free(k + 1) and not {k, k + 1} & used]
            if not rest:
                break
            median = sorted(variety[k] for k in rest)[len(rest) // 2]
            k = rng.choice([k for k in rest if variety[k] >= median])
            chosen[texts[k]] = 1
            used |= {k, k + 1}
            spaced += 1
    return chosen


def _repeat_draws(
    task: TaskPublished,
    version: str,
    seed: str | None,
    generation: int,
    head: Sequence[tuple[str, tuple[int, ...]]],
    near: Sequence[tuple[str, tuple[int, ...]]],
    far: Sequence[tuple[str, tuple[int, ...]]],
) -> tuple[random.Random | None, tuple[str, ...], random.Random | None]:
    """What a seeded plan (either kind) draws its repeats from, as :func:`_with_mirrors` takes them:
    (p21/c21) the generator of the gapped repeats (:func:`_gapped`) and the inputs held twice on one
    object (:func:`_held`), then (p22/c22) the generator of the banded and second-half repeats and the
    far inputs held too (:func:`_held_far`). Each from generators of its own, so every input and repeat
    the generation before draws stays as it drew it. None and () before those generations."""
    gaps: random.Random | None = None
    held: tuple[str, ...] = ()
    bands: random.Random | None = None
    if seed is None:
        return gaps, held, bands
    if generation >= _GAPS_GENERATION:
        drawn_as = _GAPS_DRAWN_AS.get(version, version)
        gaps = random.Random(_seed(task, f"{drawn_as}|gaps", seed))
        held = _held([text for text, _ in head], near, random.Random(_seed(task, f"{drawn_as}|held", seed)))
    if generation >= _BANDS_GENERATION:
        drawn_as = _BANDS_DRAWN_AS.get(version, version)
        bands = random.Random(_seed(task, f"{drawn_as}|bands", seed))
        held = (*held, *_held_far(far, random.Random(_seed(task, f"{drawn_as}|held-far", seed))))
    return gaps, held, bands


def _gapped(
    first: list[tuple[str, tuple[int, ...]]], repeats: dict[int, int], start: int, rng: random.Random
) -> tuple[list[tuple[str, tuple[int, ...]]], dict[int, int]]:
    """(p21/c21) ``first`` (the lead, the cases and the inputs near them, with p18's and p20's repeats;
    ``repeats``: position -> the input's first asking) with inputs asked again after each number of
    other calls ``g`` from :data:`MAX_REPEAT_GAP` down to :data:`MIN_REPEAT_GAP` (the longest first:
    they need the most room), once each, each at an input drawn from ``rng``: its repeat is put ``g``
    calls after its latest asking, among the inputs near the cases (from position ``start`` on: the
    lead and the cases keep their positions, though a case or the lead may be the input asked again),
    never inside the span between two askings of one input (that repeat's distance is what it shows,
    and an insertion would change it). Drawn among the inputs without a degenerate argument
    (:func:`_degenerate`) with at least the median's distinct parts (:func:`_variety`) and no longer
    than the median text, where none is left among all telling ones, then among any. Which input comes
    back after how many calls is the seed's: a program cannot tell a repeat coming before it is asked.
    A distance the section has no room for is left out (HumanEval/83's few inputs near its one
    integer case). Returns the new list and repeats (positions after an insertion shifted)."""
    texts = [text for text, _ in first]
    telling = {t for t in texts if not _degenerate(t)}
    variety = {t: _variety(t) for t in telling}
    lengths = sorted(len(t) for t in texts)
    median_len = lengths[len(lengths) // 2] if lengths else 0
    median_variety = sorted(variety.values())[len(variety) // 2] if variety else 0
    # the longest distances first: they need the most room
    for gap in range(MAX_REPEAT_GAP, MIN_REPEAT_GAP - 1, -1):
        texts = [text for text, _ in first]
        seen: dict[str, int] = {}
        closed: set[int] = set()  # boundaries (the index an insertion would take) inside a span
        for pos, text in enumerate(texts):
            if text in seen:
                closed.update(range(seen[text] + 1, pos + 1))
            seen[text] = pos
        open_at = [
            pos
            for pos in range(max(0, start - gap - 1), len(texts) - gap)
            if seen[texts[pos]] == pos and pos + gap + 1 not in closed
        ]
        pools = (
            [
                p
                for p in open_at
                if texts[p] in telling and variety[texts[p]] >= median_variety and len(texts[p]) <= median_len
            ],
            [p for p in open_at if texts[p] in telling],
            open_at,
        )
        pool = next((p for p in pools if p), None)
        if pool is None:
            continue
        pos = rng.choice(pool)
        at = pos + gap + 1
        repeats = {k + (k >= at): v + (v >= at) for k, v in repeats.items()}
        repeats[at] = pos
        first = [*first[:at], first[pos], *first[at:]]
    return first, repeats


def _held(
    head: Sequence[str], near: Sequence[tuple[str, tuple[int, ...]]], rng: random.Random
) -> tuple[str, ...]:
    """(p21/c21) The inputs to ask twice in a row on the very same argument objects (see
    :func:`_with_mirrors`): a case (a check's call) and an input near the cases, each holding a list,
    dict or set argument (the objects the stub refills in place; a string or a number is built anew by
    every call) and without a degenerate one where there is such an input, each drawn among those with
    the most distinct parts (:func:`_variety`), the near one among the cheaper half of ``near`` (sorted
    by text) where it holds one. An input no reordering or stale answer tells apart (``[5, 5, 5, 5]``)
    shows nothing when answered otherwise on a repeated object. None where no input holds such an
    argument."""

    def holds(text: str) -> bool:
        value = pyast.literal_eval(text)
        return any(type(v) in (list, dict, set) for v in (value if isinstance(value, tuple) else (value,)))

    def most(texts: Sequence[str]) -> str | None:
        texts = [t for t in texts if holds(t)]
        texts = [t for t in texts if not _degenerate(t)] or texts
        if not texts:
            return None
        top = max(_variety(t) for t in texts)
        return rng.choice([t for t in texts if _variety(t) == top])

    ranked = sorted((text for text, _ in near), key=lambda t: (len(t), t))
    chosen = [most(head), most(ranked[: (len(ranked) + 1) // 2]) or most(ranked)]
    return tuple(t for t in chosen if t is not None)


def _gap_sources(texts: Sequence[str], gap: int, lo: int, hi: int, free: Set[int] = frozenset()) -> list[int]:
    """(p22/c22) The positions whose input, asked again after ``gap`` other calls, is put at a position
    from ``lo`` to ``hi`` (an insertion there): none of its askings between (the distance is to the
    latest), and never inside the span between two askings of one input (that repeat's distance is what
    it shows, and an insertion would change it), as :func:`_gapped` lays them; but a span that ends at a
    position of ``free`` (p6's late section, the cases asked round and round: its distances are no draw)
    may take one, though never right before that asking (which would come twice in a row)."""
    last: dict[str, int] = {}
    after: dict[int, int] = {}
    closed: set[int] = set()
    for pos, text in enumerate(texts):
        if text in last:
            after[last[text]] = pos
            if pos not in free:
                closed.update(range(last[text] + 1, pos + 1))
        last[text] = pos
    return [
        pos
        for pos in range(max(0, lo - gap - 1), min(len(texts) - 1, hi - gap - 1) + 1)
        if after.get(pos, len(texts) + 1) > pos + gap + 1 and pos + gap + 1 not in closed
    ]


def _band_gaps(rng: random.Random) -> list[int]:
    """(p22/c22) One distance drawn in each of :data:`REPEAT_GAP_BANDS`, log-uniform within it (the
    longest first: they need the most room)."""
    return [
        min(hi, int(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))
        for lo, hi in reversed(REPEAT_GAP_BANDS)
    ]


def _telling_pools(
    texts: Sequence[str], candidates: Sequence[int], *, longer: bool | None
) -> list[list[int]]:
    """(p22/c22) The pools a repeat's input is drawn from, best first: among ``candidates`` (positions
    of ``texts``) those without a degenerate argument (:func:`_degenerate`) of at least the median's
    distinct parts (:func:`_variety`) and, with ``longer``, longer than the median text (False: no
    longer; None: any length); then all telling ones of that length; then all telling ones; then any."""
    lengths = sorted(len(texts[p]) for p in candidates)
    median_len = lengths[len(lengths) // 2] if lengths else 0

    def fits(p: int) -> bool:
        return longer is None or (len(texts[p]) > median_len) == longer

    telling = [p for p in candidates if not _degenerate(texts[p])]
    sized = [p for p in telling if fits(p)]
    varieties = sorted(_variety(texts[p]) for p in sized)
    median_variety = varieties[len(varieties) // 2] if varieties else 0
    return [
        [p for p in sized if _variety(texts[p]) >= median_variety],
        sized,
        telling,
        list(candidates),
    ]


def _gapped_more(
    first: list[tuple[str, tuple[int, ...]]], repeats: dict[int, int], start: int, rng: random.Random
) -> tuple[list[tuple[str, tuple[int, ...]]], dict[int, int]]:
    """(p22/c22) ``first`` (as :func:`_gapped` returns it) with more inputs asked again: after one
    distance drawn in each of :data:`REPEAT_GAP_BANDS` (longest first) at an input drawn among the
    telling ones of most distinct parts, then after each distance from :data:`MAX_REPEAT_GAP` down to
    :data:`MIN_REPEAT_GAP` at an input longer than the median text (p21's are no longer than it: a
    program answering otherwise only when a long input comes back was never shown). Laid as
    :func:`_gapped` lays its own (never inside another repeat's span, from ``start`` on); a distance
    the section has no room for is left out. Which input comes back after how many calls is the seed's."""
    # the longest first: they need the most room
    plan: list[tuple[int, bool | None]] = [(gap, None) for gap in _band_gaps(rng)]
    plan += [(gap, True) for gap in range(MAX_REPEAT_GAP, MIN_REPEAT_GAP - 1, -1)]
    for gap, longer in plan:
        texts = [text for text, _ in first]
        sources = set(_gap_sources(texts, gap, start, len(texts)))
        # drawn among the inputs near the cases (their first askings), by their length among those
        near = [p for p in range(start, len(texts)) if p not in repeats]
        pools = _telling_pools(texts, near, longer=longer)
        pool = next((q for q in ([p for p in pool if p in sources] for pool in pools) if q), None)
        if pool is None:
            continue
        pos = rng.choice(pool)
        at = pos + gap + 1
        repeats = {k + (k >= at): v + (v >= at) for k, v in repeats.items()}
        repeats[at] = repeats.get(pos, pos)
        first = [*first[:at], first[pos], *first[at:]]
    return first, repeats


def _gapped_late(
    texts: Sequence[str], start_far: int, start_late: int, end: int, end_late: int, rng: random.Random
) -> list[tuple[int, int]]:
    """(p22/c22) The repeats to lay in the run's second half, among the inputs past the cases' range and
    the cases asked round and round after them (``texts[start_far:end]``; p6's late section is
    ``texts[start_late:end_late]``): there the stub hands every call the previous call's argument objects
    refilled in place (``streams/sandbox/protocol.py``, ``caller_reuse_from``), so an input asked again
    is the very object holding again what it held ``g`` calls before. One per distance ``g`` from
    :data:`MAX_REPEAT_GAP` down to :data:`MIN_REPEAT_GAP`, each at an input drawn among the cheaper
    three quarters of those that part asks by text (a repeat costs what its input costs), the telling
    ones of most distinct parts first, longer or no longer than their median by a coin of the seed.
    Where that part has no room (a short plan, whose second half is the late section: the same few
    cases, each asked again every few calls), an input asked before it and not in it is asked twice
    there, ``g`` calls apart, at one of the first three places left drawn from the seed. Every asking
    lies past the range: a hang or an error there is not held against the program, a value is. Returns
    (insertion position, source position) pairs, each in the positions the insertions before it left
    (they are applied in order)."""
    # the longest first: they need the most room
    gaps = list(range(MAX_REPEAT_GAP, MIN_REPEAT_GAP - 1, -1))
    # the second half of the run as long as it will be once every repeat is laid: it starts at
    # (n + 2 * len(gaps)) // 2 at most
    lo = max(start_far, (len(texts) + 2 * len(gaps) + 1) // 2)
    current = list(texts)
    out: list[tuple[int, int]] = []
    # the late section's askings: their spans are a cycle's (the repeats laid here are not)
    free = set(range(start_late, end_late))

    def insert(at: int, pos: int) -> None:
        nonlocal free
        current.insert(at, current[pos])
        out.append((at, pos))
        free = {k + (k >= at) for k in free}

    for gap in gaps:
        hi = end + len(out)
        if hi <= lo:
            break
        shown = {current[p] for p in range(lo, hi)}
        by_length = sorted(shown, key=lambda t: (len(t), t))
        kept = set(by_length[: (3 * len(by_length) + 3) // 4])
        # the askings after this part (the held pairs) are left out: their spans are drawn apart
        sources = set(_gap_sources(current[:hi], gap, lo + gap + 1, hi, free))
        longer = rng.random() < 0.5
        candidates = [p for p in range(lo, hi) if current[p] in kept]
        pools = _telling_pools(current, candidates, longer=longer)
        pool = next((q for q in ([p for p in pool if p in sources] for pool in pools) if q), None)
        if pool is not None:
            pos = rng.choice(pool)
            insert(pos + gap + 1, pos)
            continue
        # no room: an input asked before this part (its latest asking), twice in it
        closed = _closed(current[:hi], free)
        places = [a for a in range(lo, hi - gap + 1) if a not in closed and a + gap not in closed]
        latest = {text: p for p, text in enumerate(current[:lo]) if text not in shown}
        outside = sorted(latest.values(), key=lambda p: (len(current[p]), p))
        outside = sorted(outside[: (3 * len(outside) + 3) // 4])
        pool = next((q for q in _telling_pools(current, outside, longer=longer) if q), None)
        if pool is None or not places:
            continue
        # among the first few places left: laid one after another, the pairs leave the most room
        pos, at = rng.choice(pool), rng.choice(places[:3])
        insert(at, pos)
        insert(at + gap + 1, at)
    return out


def _closed(texts: Sequence[str], free: Set[int] = frozenset()) -> set[int]:
    """(p22/c22) The insertion positions inside the span between two askings of one input (but a span
    ending at a position of ``free``: :func:`_gap_sources`)."""
    last: dict[str, int] = {}
    closed: set[int] = set()
    for pos, text in enumerate(texts):
        if text in last and pos not in free:
            closed.update(range(last[text] + 1, pos + 1))
        last[text] = pos
    return closed


def _held_far(far: Sequence[tuple[str, tuple[int, ...]]], rng: random.Random) -> tuple[str, ...]:
    """(p22/c22) The input past the cases' range to ask twice in a row on the very same argument objects
    (as :func:`_held`'s): one holding a list, dict or set argument, among the cheaper three quarters of
    the far inputs (by text: cheap enough to ask twice) and without a degenerate argument where there
    is such one: one drawn among the quarter holding the most elements (lists, dicts and sets longer
    than the cases'), and one among the quarter holding the numbers of largest magnitude (past the
    cases' range), each drawn from the seed. A hang or an error there is not held against the
    program (it lies past the range), but a value is. None where no far input holds such an
    argument."""
    ranked = sorted((text for text, _ in far), key=lambda t: (len(t), t))
    texts = [t for t in ranked[: (3 * len(ranked) + 3) // 4] if _holds_container(t)]
    texts = [t for t in texts if not _degenerate(t)] or texts
    if not texts:
        return ()
    chosen: list[str] = []
    for measure in (_elements, _magnitude):
        reach = {t: measure(pyast.literal_eval(t)) for t in texts}
        top = sorted(reach.values(), reverse=True)[: (len(reach) + 3) // 4]
        if top[-1] > 0:
            text = rng.choice([t for t in texts if reach[t] >= top[-1] and t not in chosen] or texts)
            if text not in chosen:
                chosen.append(text)
    return tuple(chosen) if chosen else (rng.choice(texts),)


def _elements(value: object) -> int:
    """(p22/c22) How many elements the lists, tuples, dicts and sets of ``value`` hold, at every depth."""
    if isinstance(value, dict):
        return len(value) + sum(_elements(k) + _elements(v) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return len(value) + sum(_elements(v) for v in value)
    return 0


def _magnitude(value: object) -> float:
    """(p22/c22) The largest magnitude of a number in ``value``, at every depth (0: none)."""
    if isinstance(value, dict):
        return max((_magnitude(x) for kv in value.items() for x in kv), default=0)
    if isinstance(value, list | tuple | set | frozenset):
        return max((_magnitude(v) for v in value), default=0)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return abs(value)
    return 0


def _holds_container(text: str) -> bool:
    """Whether an argument tuple holds a list, dict or set (the objects the stub refills in place)."""
    value = pyast.literal_eval(text)
    return any(type(v) in (list, dict, set) for v in (value if isinstance(value, tuple) else (value,)))


def _blank_runs(s: str) -> list[tuple[int, int]]:
    """(p18/c18) The spans (start, end) of the runs of two or more white space characters in ``s``."""
    out: list[tuple[int, int]] = []
    start = 0
    for blank, run in itertools.groupby(s, key=str.isspace):
        length = len(list(run))
        if blank and length >= 2:
            out.append((start, start + length))
        start += length
    return out


def _generate_blank_runs(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p18/c18) Inputs with a run of blanks longer than any case's, each with the case it was made from:
    per string position where some case holds a run of two or more blanks (the cases' spacing is then
    the task's subject, or at least in its domain: :class:`_Invariants` keeps a single-spaced column
    single-spaced), :data:`BLANK_RUN_INPUTS` inputs with one such run of a case lengthened, the first
    tried to one blank past the cases' longest run, the others drawn up to twice it and two more; the run's
    first character repeated, every other character of the case kept. Through p17/c17 strings were
    mutated character by character and words moved around the cases' own separators, so no run longer
    than the cases' longest was drawn: HumanEval/140's longest is three, and a program replacing
    exactly three spaces with '-' (four give '-_', where one '-' is due) was accepted. Laid among the
    inputs that widen the domain: a run past the cases' may lie past the task's, so only a value is
    judged there."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    invariants = _Invariants(tuples, seeded=True)
    seen = {repr(t) for t in tuples} | set(taken)
    out: list[tuple[str, tuple[int, ...]]] = []
    for i in range(min(len(t) for t in tuples)):
        if not all(isinstance(t[i], str) for t in tuples):
            continue
        runs = {k: _blank_runs(t[i]) for k, t in enumerate(tuples)}  # type: ignore[arg-type]
        holding = [k for k, found in runs.items() if found]
        if not holding:
            continue
        longest = max(end - start for found in runs.values() for start, end in found)
        made = 0
        for attempt in range(BLANK_RUN_INPUTS * _ATTEMPTS_PER_INPUT):
            if made >= BLANK_RUN_INPUTS:
                break
            k = rng.choice(holding)
            start, end = rng.choice(runs[k])
            text: str = tuples[k][i]  # type: ignore[assignment]
            length = longest + 1 if attempt == 0 else rng.randint(longest + 1, 2 * longest + 2)
            candidate = list(tuples[k])
            candidate[i] = text[:start] + text[start] * length + text[end:]
            made_text = repr(tuple(candidate))
            if made_text in seen or not invariants.hold(candidate):
                continue
            if domain is not None and not domain(candidate, {k}):
                continue
            if not _is_input_literal(made_text, tuple(candidate)):
                continue
            seen.add(made_text)
            out.append((made_text, (k,)))
            made += 1
    return out


def _balanced_groups(cases: Sequence[object]) -> list[tuple[int, str]]:
    """(p18/c18) The string argument positions and bracket pairs at which every case's string is made of
    balanced groups: each of its words (a run without white space) closes as many brackets of the pair
    as it opens and never one it has not opened, where some case's string has two or more words holding
    that bracket (one word: :class:`_Invariants` keeps the whole string balanced already). Such a task's
    answer is per group (HumanEval/6's depth of each group), and a group that does not balance is one the
    task leaves undefined: the reference's depth of ``'()('`` is 1 and of ``'(())()())'`` 2, where a
    correct program reading a group by its matching brackets answers otherwise. General: any string
    position, any pair of :data:`_Invariants._BRACKETS`, whatever the task, where the cases show it."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    out: list[tuple[int, str]] = []
    for i in range(min(len(t) for t in tuples)):
        column = [t[i] for t in tuples]
        if not all(isinstance(v, str) for v in column):
            continue
        words = [w for v in column for w in v.split()]  # type: ignore[union-attr]
        for pair in _Invariants._BRACKETS:
            grouped = any(sum(pair[0] in w for w in v.split()) >= 2 for v in column)  # type: ignore[union-attr]
            if grouped and all(_balanced(w, pair) for w in words):
                out.append((i, pair))
    return out


def _keeps_groups(text: str, groups: Sequence[tuple[int, str]]) -> bool:
    """(p18/c18) Whether each string of the input at those positions is made of balanced groups (a value
    of another kind there, one that widens the domain in kind, is none of this rule's)."""
    args = pyast.literal_eval(text)
    values = args if isinstance(args, tuple) else (args,)
    return all(
        not isinstance(values[i], str) or all(_balanced(w, pair) for w in values[i].split())
        for i, pair in groups
        if i < len(values)
    )


_Section = list[tuple[str, tuple[int, ...]]]


def _groups_kept(
    cases: Sequence[object],
    rng: random.Random,
    public: set[str],
    lead: _Section,
    *sections: _Section,
) -> tuple[_Section, ...]:
    """(p18/c18) The plan's sections (the lead, then the others as given) without the inputs whose
    groups break the balance every case's keep (:func:`_balanced_groups`); a lead so left out is drawn
    again among the first section's inputs (those near the cases, :func:`_lead`)."""
    groups = _balanced_groups(cases)
    if not groups:
        return (lead, *sections)
    kept = [[item for item in section if _keeps_groups(item[0], groups)] for section in (lead, *sections)]
    if lead and not kept[0] and sections:
        kept[0], kept[1] = _lead(kept[1], rng, public)
    return tuple(kept)


def _deep_positions(tuples: Sequence[tuple[object, ...]]) -> list[tuple[int, str]]:
    """(p19/c19) The string argument positions and bracket pairs where every case's string is made of
    brackets alone (white space aside: HumanEval/61's ``')(()'`` as well as its ``'(()())'``) or balances
    in the pair, and some case's string holds the pair's opening bracket. Such a string's nesting is
    what the task reads, and every depth keeps the cases' domain: a string of brackets alone is one
    whatever it nests, a balanced one stays balanced when a balanced part of it is wrapped in more pairs."""
    brackets = "".join(_Invariants._BRACKETS)
    out: list[tuple[int, str]] = []
    for i in range(min(len(t) for t in tuples)):
        column = [v for t in tuples if isinstance(v := t[i], str)]
        if len(column) < len(tuples):
            continue
        only = all(c in brackets or c.isspace() for v in column for c in v)
        for pair in _Invariants._BRACKETS:
            if not any(pair[0] in v for v in column):
                continue
            if only or all(_balanced(v, pair) for v in column):
                out.append((i, pair))
    return out


def _balanced_parts(s: str, pair: str, grouped: bool) -> list[tuple[int, int]]:
    """(p19/c19) The spans of ``s`` that balance in ``pair`` and hold its opening bracket: each word (a
    run without white space), and the whole string unless its groups are the task's
    (:func:`_balanced_groups`: wrapping the whole would make a group of its spaces)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for blank, run in itertools.groupby(s, key=str.isspace):
        length = len(list(run))
        if not blank and pair[0] in s[start : start + length] and _balanced(s[start : start + length], pair):
            spans.append((start, start + length))
        start += length
    if not grouped and pair[0] in s and _balanced(s, pair) and (0, len(s)) not in spans:
        spans.append((0, len(s)))
    return spans


def _generate_deep_nesting(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p19/c19) Bracket strings nesting far deeper than any case, each with the case it was made from:
    per position and pair of :func:`_deep_positions`, :data:`DEEP_INPUTS` inputs with one balanced part of
    a case (:func:`_balanced_parts`) wrapped in ``d`` more pairs, ``d`` drawn in :data:`DEEP_NESTING`,
    every other character of the case kept. Through p18/c18 a bracket string was a case's mutated a
    character at a time, or cases' strings joined end to end, so none nested deeper than the cases
    (HumanEval/61: 6 levels), and a program keeping the depth in a signed byte (wrapping at 128) was
    accepted. Every relation the cases keep is kept (:class:`_Invariants`: a balanced string stays
    balanced, p18's groups each stay balanced), but the longest word: a group nested deeper is a longer
    word, and bracket groups are no words of a vocabulary. Laid among the long inputs at the end (a value
    and an error are judged, a stack the recursion runs out of or a hang is not): the depth is the
    input's size, past the far inputs' size limit."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    seen = {repr(t) for t in tuples} | set(taken)
    groups = set(_balanced_groups(tuples))
    out: list[tuple[str, tuple[int, ...]]] = []
    for i, pair in _deep_positions(tuples):
        invariants = _Invariants(tuples, seeded=True)
        invariants.word_max.pop(i, None)
        parts = {k: _balanced_parts(t[i], pair, (i, pair) in groups) for k, t in enumerate(tuples)}  # type: ignore[arg-type]
        holding = [k for k, found in parts.items() if found]
        made = 0
        for _ in range(DEEP_INPUTS * _ATTEMPTS_PER_INPUT):
            if made >= DEEP_INPUTS or not holding:
                break
            k = rng.choice(holding)
            start, end = rng.choice(parts[k])
            text: str = tuples[k][i]  # type: ignore[assignment]
            depth = rng.randint(*DEEP_NESTING)
            candidate = list(tuples[k])
            candidate[i] = text[:start] + pair[0] * depth + text[start:end] + pair[1] * depth + text[end:]
            made_text = repr(tuple(candidate))
            if made_text in seen or len(made_text) > _FAR_MAX_CHARS or not invariants.hold(candidate):
                continue
            if domain is not None and not domain(candidate, {k}):
                continue
            if not _is_input_literal(made_text, tuple(candidate)):
                continue
            seen.add(made_text)
            out.append((made_text, (k,)))
            made += 1
    return out


def _mixed_numbers(column: Sequence[object]) -> tuple[list[int], list[float]] | None:
    """(p19/c19) The ints and the finite floats of a column of flat lists of numbers that holds both
    kinds (None: another column)."""
    if not all(isinstance(v, list) for v in column):
        return None
    elements = [e for v in column for e in v]  # type: ignore[attr-defined]
    if not all(type(e) in (int, float) for e in elements):
        return None
    ints = [e for e in elements if type(e) is int]
    floats = [e for e in elements if type(e) is float and math.isfinite(e)]
    return (ints, floats) if ints and floats else None


def _plain(e: object) -> bool:
    """(p19/c19) An int, or a finite float printed without an exponent."""
    return type(e) is int or (type(e) is float and math.isfinite(e) and "e" not in repr(e))  # type: ignore[arg-type]


def _decimals(floats: Sequence[float]) -> int:
    """(p19/c19) The most decimals a float printed without an exponent shows (1 to 3)."""
    shown = [len(repr(f).partition(".")[2]) for f in floats if "e" not in repr(f)]
    return min(3, max([1, *shown]))


def _grown_numbers(
    xs: list[object],
    n: int,
    pool: list[object],
    numbers: tuple[list[int], list[float]],
    rng: random.Random,
) -> list[object]:
    """(p19/c19) ``xs`` with numbers inserted up to ``n`` distinct ones: the cases' own (``pool``) and new
    ones drawn alike while the cases' last, then new ones only. A new number is a float with as many
    decimals as the cases' show (:func:`_decimals`) in the share of the cases' numbers that are floats,
    an int otherwise, drawn within the range of the cases' numbers (those printed without an exponent:
    redteam/mean's 1e+16 is an edge, not a scale), its top moved up only as far as a list this long
    needs distinct numbers (as :func:`_more_ints` does); zero and negatives only where the cases'
    numbers reach them."""
    ints, floats = numbers
    plain = [*ints, *(f for f in floats if _plain(f))]
    lo, hi = min(plain), max(plain)
    top = max(hi, lo + 2 * n)
    decimals = _decimals(floats)
    share = len(floats) / (len(ints) + len(floats))
    zero = any(v == 0 for v in plain)
    out = list(xs)
    present = {repr(e) for e in out}
    fresh = [e for e in pool if repr(e) not in present]
    rng.shuffle(fresh)
    for _ in range(8 * n):
        if len(out) >= n:
            break
        e: object
        if fresh and rng.random() < 0.5:
            e = fresh.pop()
        elif rng.random() < share:
            e = round(rng.uniform(lo, top), decimals)
        else:
            e = rng.randint(math.ceil(lo), math.floor(top))
        if repr(e) in present or (e == 0 and not zero):
            continue
        present.add(repr(e))
        out.insert(rng.randint(0, len(out)), e)
    return out


def _generate_grown_numbers(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """(p19/c19) Inputs whose list of numbers (the cases mix ints and floats there) grows past the cases'
    own numbers, each with the case it was made from: per such position :data:`GROWN_FAR_INPUTS` within
    the far inputs' reach (2 to :data:`FAR_REACH` times the cases' longest list) and one each of a length
    in the two bands of the long inputs (past that reach up to :data:`MID_BAND_TOP`, and
    :data:`LONG_LENGTHS`), grown by :func:`_grown_numbers`. Through p18/c18 such a list grew with the
    cases' numbers alone (new ones came only where every element is an int: :meth:`_Sized._grown_list`),
    so with distinct elements none grew past the cases' distinct numbers, the long inputs included
    (redteam/mean: 15), and a program refusing longer lists was never called on one. Every relation the
    cases keep is kept (distinct, sorted, no more repeats, an argument equal to the list's length); a
    number printed with an exponent (a case's edge: ``1e+16``) is neither added nor grown beside.
    Returns those within the far reach, then the long ones."""

    def column(
        i: int, tuples: list[tuple[object, ...]], sized: _Sized
    ) -> tuple[list[int], Callable[[list[object], int, random.Random], list[object]]] | None:
        numbers = _mixed_numbers([t[i] for t in tuples])
        if numbers is None:
            return None
        # numbers printed with an exponent (redteam/mean's 1e+16 and -1e+16) are the cases' edges, not
        # their scale: a long list holding them beside many others has a mean that the order of summing
        # decides (correct programs summing otherwise part from the reference by more than rounding)
        pool = [e for e in _unique(sized.elements) if _plain(e)]
        bases = [k for k, t in enumerate(tuples) if all(_plain(e) for e in t[i])]  # type: ignore[attr-defined]
        if not bases:
            return None
        return bases, lambda xs, n, rng: _grown_numbers(xs, n, pool, numbers, rng)  # type: ignore[arg-type]

    return _grow_columns(cases, rng, taken, domain, GROWN_FAR_INPUTS, column)


def _grow_columns(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None,
    far_inputs: int,
    column: Callable[
        [int, list[tuple[object, ...]], _Sized],
        tuple[list[int], Callable[[list[object], int, random.Random], list[object]]] | None,
    ],
) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """(p19/c19, p20/c20) Inputs whose list at a position grows past the cases' own, each with the case
    it was made from: where ``column`` (given the position, the cases and what they keep there) says
    which cases may be grown and how (the list, a length, the draw), ``far_inputs`` within the far
    inputs' reach (2 to :data:`FAR_REACH` times the cases' longest list) and one each of a length in the
    two bands of the long inputs (past that reach up to :data:`MID_BAND_TOP`, and :data:`LONG_LENGTHS`).
    Every relation the cases keep is kept (distinct, sorted, no more repeats, an argument equal to the
    list's length). Returns those within the far reach, then the long ones."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    invariants = _Invariants(tuples, seeded=True)
    sizes = _Sizes(tuples, related=True)
    seen = {repr(t) for t in tuples} | set(taken)
    near_cap = min(_FAR_MAX_CHARS, FAR_REACH * max(len(repr(t)) for t in tuples) + _SIZE_SLACK)
    far: list[tuple[str, tuple[int, ...]]] = []
    long: list[tuple[str, tuple[int, ...]]] = []
    for i in range(min(len(t) for t in tuples)):
        sized = sizes.positions.get(i)
        if sized is None:
            continue
        recipe = column(i, tuples, sized)
        if recipe is None:
            continue
        bases, grow = recipe
        shown = sized.longest
        reach = min(_FAR_MAX_LENGTH, max(FAR_REACH * shown, _FAR_MIN_LENGTH))
        low = min(MID_BAND_TOP, reach + 1)
        bands = [(min(reach, max(shown + 1, 2 * shown)), reach, near_cap, far)] * far_inputs
        bands += [(low, MID_BAND_TOP, _LONG_MAX_CHARS, long), (*LONG_LENGTHS, _LONG_MAX_CHARS, long)]
        for first, last, cap, section in bands:
            for _ in range(_ATTEMPTS_PER_INPUT):
                n = min(last, max(first, round(math.exp(rng.uniform(math.log(first), math.log(last))))))
                k = rng.choice(bases)
                candidate = list(tuples[k])
                grown = grow(candidate[i], n, rng)  # type: ignore[arg-type]
                if sized.sorted:
                    grown.sort()  # type: ignore[call-overload]
                candidate[i] = grown
                for count, j in sizes.counts.items():
                    if j == i:
                        candidate[count] = len(grown)
                made_text = repr(tuple(candidate))
                if made_text in seen or len(made_text) > cap or len(grown) <= shown:
                    continue
                if not invariants.hold(candidate) or not sizes.keeps(candidate):
                    continue
                if domain is not None and not domain(candidate, {k}):
                    continue
                if not _is_input_literal(made_text, tuple(candidate)):
                    continue
                seen.add(made_text)
                section.append((made_text, (k,)))
                break
    return far, long


def _element_kind(column: Sequence[object]) -> Literal["float", "word"] | None:
    """(p20/c20) The kind of the elements of a column of flat lists where all of them are finite floats
    ("float") or all words of letters and digits (:func:`_worded`; "word", an empty string among them
    allowed), None elsewhere: lists mixing ints and floats grow by :func:`_generate_grown_numbers`,
    lists of ints by :meth:`_Sized._grown_list`, and strings holding other characters (HumanEval/160's
    operators, a format's separators) are tokens of a closed set, not words of an alphabet."""
    if not column or not all(isinstance(v, list) for v in column):
        return None
    elements = [e for v in column for e in v]  # type: ignore[attr-defined]
    if not elements:
        return None
    if all(type(e) is float and math.isfinite(e) for e in elements):
        return "float"
    words = [e for e in elements if isinstance(e, str) and e.strip()]
    if all(type(e) is str for e in elements) and words and all(_worded(w) for w in words):
        return "word"
    return None


def _worded(s: str) -> bool:
    """(p20/c20) Whether ``s`` is made of letters and digits, single spaces between them at most
    (HumanEval/29's ``'john doe'``)."""
    return all(w.isalnum() for w in s.split(" "))


def _element_drawer(kind: str, elements: Sequence[object], n: int) -> Callable[[random.Random], object]:
    """(p20/c20) How a new element of ``kind`` is drawn for a list of ``n``: a float with
    :data:`FLOAT_EXTRA_DIGITS` decimals more than the cases' show (:func:`_decimals`), within the
    range of the cases' floats (those printed without an exponent), its top moved up only as far as a
    list this long needs distinct numbers, as p19's :func:`_grown_numbers` (zero and negatives only
    where the cases reach them: a zero drawn elsewhere is refused by the caller); a word of the cases'
    letters and digits (one word: no space), as long as the cases' shortest word to twice their longest
    (past the cases' range, as a far number is), or longer where a list this long needs more distinct
    words."""
    if kind == "float":
        floats = [e for e in elements if type(e) is float and _plain(e)]
        lo, hi = min(floats), max(floats)  # type: ignore[type-var]
        top = max(hi, lo + 2 * n)  # type: ignore[operator]
        # six digits more than the cases show: with their decimals alone a long list holds many pairs
        # at one smallest distance, a tie HumanEval/20's correct programs break otherwise than the
        # reference, beyond what a mirror or a sorted twin shows (measured: 4 of its correct programs
        # rejected on seeds 0..2)
        decimals = _decimals(floats) + FLOAT_EXTRA_DIGITS  # type: ignore[arg-type]
        return lambda rng: round(rng.uniform(lo, top), decimals)  # type: ignore[arg-type]
    words = [w for e in elements if isinstance(e, str) for w in e.split()]
    chars = "".join(sorted({c for w in words for c in w}))
    shortest, longest = min(map(len, words)), 2 * max(map(len, words))
    # and as long as a list this long needs distinct words (HumanEval/28's five letters: two-letter
    # words give 30, a list of 3000 needs five)
    while sum(len(chars) ** k for k in range(shortest, longest + 1)) < 2 * n:
        longest += 1
    return lambda rng: "".join(rng.choice(chars) for _ in range(rng.randint(shortest, longest)))


def _grown_elements(
    xs: list[object],
    n: int,
    pool: list[object],
    draw: Callable[[random.Random], object],
    zero: bool,
    rng: random.Random,
) -> list[object]:
    """(p20/c20) ``xs`` with elements inserted up to ``n`` distinct ones: the cases' own (``pool``) and
    new ones (``draw``) alike while the cases' last, then new ones only (a zero only where ``zero``)."""
    out = list(xs)
    present = {repr(e) for e in out}
    fresh = [e for e in pool if repr(e) not in present]
    rng.shuffle(fresh)
    for _ in range(8 * n):
        if len(out) >= n:
            break
        e = fresh.pop() if fresh and rng.random() < 0.5 else draw(rng)
        if repr(e) in present or (type(e) is float and e == 0 and not zero):
            continue
        present.add(repr(e))
        out.insert(rng.randint(0, len(out)), e)
    return out


def _generate_grown_elements(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """(p20/c20) Inputs whose list of floats alone or of words (:func:`_element_kind`) grows past the
    cases' own elements, each with the case it was made from: per such position
    :data:`GROWN_ELEMENT_FAR_INPUTS` within the far inputs' reach and one in each long band, as p19's
    :func:`_generate_grown_numbers` draws lists mixing ints and floats, grown by
    :func:`_grown_elements` with new elements of the cases' kind (:func:`_element_drawer`). Through
    p19/c19 such a list grew with the cases' own elements alone, repeating none more often than a case
    does, so none held more elements than the cases' distinct ones (HumanEval/28: 7, /149: 20, the long
    inputs included) and no word was longer than the cases' longest. Every relation the cases keep is
    kept (distinct, sorted, no more repeats, an argument equal to the list's length). Returns those
    within the far reach, then the long ones."""

    def column(
        i: int, tuples: list[tuple[object, ...]], sized: _Sized
    ) -> tuple[list[int], Callable[[list[object], int, random.Random], list[object]]] | None:
        kind = _element_kind([t[i] for t in tuples])
        if kind is None:
            return None
        # a float printed with an exponent is a case's edge, not its scale (as p19's lists)
        pool = [e for e in _unique(sized.elements) if kind == "word" or _plain(e)]
        bases = [k for k, t in enumerate(tuples) if kind == "word" or all(_plain(e) for e in t[i])]  # type: ignore[attr-defined]
        if not pool or not bases:
            return None
        if kind == "word" and len({c for e in pool if isinstance(e, str) for c in e if not c.isspace()}) < 2:
            return None  # one letter makes one word per length: a long list of distinct ones is absurdly long
        zero = any(type(e) is float and e == 0 for e in pool)

        def grow(xs: list[object], n: int, rng: random.Random) -> list[object]:
            # a list of floats grows with new ones alone: the cases' floats of several cases side by
            # side (HumanEval/20's 3.9, 4.0, 4.1 and 5.0, 5.1) make pairs at one distance, a tie
            draw = _element_drawer(kind, pool, n)
            return _grown_elements(xs, n, pool if kind == "word" else [], draw, zero, rng)

        return bases, grow

    return _grow_columns(cases, rng, taken, domain, GROWN_ELEMENT_FAR_INPUTS, column)


def _generate_extreme(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
    *,
    banded: random.Random | None = None,
) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """(p8/c8) Inputs at extremes no case approaches, each with the case it was made from, laid after
    every other input of the run (a hang or an exit there cuts nothing else short), judged as inputs
    past the range (only a value counts):

    - **long**: up to :data:`LONG_INPUTS` cases with their strings, lists, dicts or sets (one group of
      arguments of one length, or all) made :data:`LONG_LENGTHS` elements long, from what the cases hold
      there (:class:`_Sized`): a program that reads a bounded prefix of its input (``max(l[:50])``)
      shows there, where the inputs past the range stop at 4 times the cases' longest (256 at most).
      With ``banded`` (p10/c10, a generator of their own) :data:`LONG_BANDED_INPUTS` instead, drawn
      from it: :data:`MID_BAND_INPUTS` of a length log-uniform from just past the longest a far input
      can be (:meth:`_Sizes.far_reach`) up to :data:`MID_BAND_TOP`, the rest of :data:`LONG_LENGTHS`
      elements, shortest first (a deadline then cuts the longest); p8/c8's long inputs are still drawn
      from ``rng`` and dropped, so every other input is the one p9/c9 draw. A program wrong only on
      lengths between the far reach and 1000 (a median, a table bound) shows there;
    - **bounds**: a case with some integer arguments (or elements of a flat list of them) set just
      below, at or just past each of :data:`MACHINE_BOUNDS` (negated as well where some case holds a
      negative there): a program right only below a machine width (32-bit wrap-around) shows there,
      where the inputs past the range stop at 1000 times the cases' magnitudes.

    The reference decides what each says, as past the range: one it raises on or is too slow for says
    nothing; a program's refusal (an error) of a bound is not held against it (``ProbePlan.wide``): a
    correct program on int32 arrays refuses 2**31. Every relation the cases keep is kept
    (:class:`_Invariants`, :class:`_Sizes`, ``domain``). Returns the long inputs, then the bounds."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    invariants = _Invariants(tuples, seeded=True)
    sizes = _Sizes(tuples)
    seen = {repr(t) for t in tuples} | taken
    out: list[tuple[str, tuple[int, ...]]] = []

    #: (p10/c10) what the long inputs p8/c8 draw would have made: drawn still (every other input stays
    #: as p9/c9 draw it), never kept
    dropped: set[str] = set()

    def keep(candidate: list[object], b: int, cap: int, *, kept: bool = True) -> bool:
        text = repr(tuple(candidate))
        if text in seen or text in dropped or len(text) > cap:
            return False
        if not invariants.hold(candidate) or not sizes.keeps(candidate):
            return False
        if domain is not None and not domain(candidate, {b}):
            return False
        if not _is_input_literal(text, tuple(candidate)):
            return False
        if not kept:
            dropped.add(text)
            return True
        seen.add(text)
        out.append((text, (b,)))
        return True

    def lengthened(b: int, n: int, drawn: random.Random) -> list[object] | None:
        """Case ``b`` with its sized arguments (one group of one length, or all, drawn with ``drawn``)
        made ``n`` elements long (None: the case's relations refuse it)."""
        candidate = list(tuples[b])
        groups = sizes.groups if drawn.random() < 0.5 else [drawn.choice(sizes.groups)]
        for group in groups:
            for i in group:
                value = sizes.positions[i].longer(candidate[i], n, drawn)
                if value is None:
                    return None
                candidate[i] = value
        for k, j in sizes.counts.items():
            candidate[k] = len(candidate[j])  # type: ignore[arg-type]
        # rows of one length in every case stay so (a row made long may fall short of its length)
        if any(
            sized.rows is not None and sized.rectangular and len({len(r) for r in candidate[i]}) > 1  # type: ignore[attr-defined]
            for i, sized in sizes.positions.items()
        ):
            return None
        return candidate

    if sizes.groups:
        made = 0
        # few attempts: each builds thousands of elements, and one the cases' relations refuse (a grid
        # too large, a relation broken) is seldom made acceptable by drawing again
        for _ in range(LONG_INPUTS * _LONG_ATTEMPTS):
            if made >= LONG_INPUTS:
                break
            b = rng.randrange(len(tuples))
            candidate = lengthened(b, rng.randint(*LONG_LENGTHS), rng)
            if candidate is not None:
                made += keep(candidate, b, _LONG_MAX_CHARS, kept=banded is None)

    if sizes.groups and banded is not None:
        # (p10/c10) from a generator of their own: MID_BAND_INPUTS lengths drawn log-uniform from just
        # past the far inputs' reach up to MID_BAND_TOP, the rest from LONG_LENGTHS
        low = min(MID_BAND_TOP, sizes.far_reach() + 1)
        for band in range(LONG_BANDED_INPUTS):
            for _ in range(_LONG_ATTEMPTS):
                if band < MID_BAND_INPUTS:
                    n = round(math.exp(banded.uniform(math.log(low), math.log(MID_BAND_TOP))))
                    n = min(MID_BAND_TOP, max(low, n))
                else:
                    n = banded.randint(*LONG_LENGTHS)
                b = banded.randrange(len(tuples))
                candidate = lengthened(b, n, banded)
                if candidate is not None and keep(candidate, b, _LONG_MAX_CHARS):
                    break
        # shortest first: a deadline that ends the run cuts the longest, not the others
        out.sort(key=lambda item: (len(item[0]), item[0]))

    # integer positions: an int in every case, or a flat list of ints in every case
    ints = [i for i in range(arity) if all(type(t[i]) is int for t in tuples)]
    lists = [
        i
        for i in range(arity)
        if all(isinstance(t[i], list) and all(type(e) is int for e in t[i]) for t in tuples)  # type: ignore[attr-defined]
        and any(t[i] for t in tuples)
    ]
    negative = {
        i
        for i in (*ints, *lists)
        if any(min(t[i] if isinstance(t[i], list) else [t[i]], default=0) < 0 for t in tuples)  # type: ignore[type-var, call-overload]
    }
    positions = [*ints, *lists]
    long = list(out)
    out.clear()  # what keep() adds from here on are the bounds
    if not positions:
        return long, out
    limit = _SIZE_FACTOR * max(len(repr(t)) for t in tuples) + _SIZE_SLACK + 40 * len(positions)
    for bound in MACHINE_BOUNDS:
        for _ in range(_ATTEMPTS_PER_INPUT):
            b = rng.randrange(len(tuples))
            candidate = list(tuples[b])
            chosen = [i for i in positions if rng.random() < 0.5] or [rng.choice(positions)]
            for i in chosen:
                value = candidate[i]
                if isinstance(value, list):
                    if not value:
                        continue
                    items = list(value)
                    for k in rng.sample(range(len(items)), min(len(items), rng.choice((1, 1, 2)))):
                        items[k] = _near_bound(bound, i in negative, rng)
                    if sizes.positions.get(i) is not None and sizes.positions[i].sorted:
                        items.sort()
                    candidate[i] = items
                else:
                    candidate[i] = _near_bound(bound, i in negative, rng)
            if keep(candidate, b, limit):
                break
    return long, out


def _generate_spread(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    near_domain: Callable[[Sequence[object], set[int]], bool] | None = None,
    far_domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """(p8/c8) Inputs whose list or string arguments have lengths the cases never show, below or
    between their own, each with the case it was made from. The inputs near the cases change a case's
    list by one element and those past the range lengthen it 2 to 4 times, so with cases of 3 and 11
    elements no list of 0 to 2 or of 4 to 10 was ever drawn, and a program wrong only there passed. Per
    group of arguments of one length (:class:`_Sizes`) and per band of lengths the cases leave out (below
    the shortest, and each gap between two lengths the cases show), up to :data:`SPREAD_PER_BAND`
    lengths drawn uniformly from the band (below the cases: the empty argument and one element first),
    each a case's arguments made that long (:meth:`_Sized.resized`), every relation the cases keep kept
    (:class:`_Invariants`, :class:`_Sizes`, the domains). Returns the inputs within the cases' lengths
    (judged as the inputs near them: a gap between two lengths the task shows is its domain), then
    those shorter than every case's (laid among ``ProbePlan.wide``: the task may exclude an empty list,
    so a refusal there is not held against a program, a value that differs from the reference's is;
    the reference decides which count)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    sizes = _Sizes(tuples)
    invariants = _Invariants(tuples, seeded=True)
    seen = {repr(t) for t in tuples} | taken
    near: list[tuple[str, tuple[int, ...]]] = []
    far: list[tuple[str, tuple[int, ...]]] = []
    for group in sizes.groups:
        if any(sizes.positions[i].kind not in ("list", "str") for i in group):
            continue
        first = group[0]
        shown = sorted({len(t[first]) for t in tuples})  # type: ignore[arg-type]
        shortest = {i: min(len(t[i]) for t in tuples) for i in group}  # type: ignore[arg-type]
        bands = [(0, shown[0] - 1)] if shown[0] > 0 else []
        bands += [(a + 1, b - 1) for a, b in itertools.pairwise(shown) if b - a > 1]
        for lo, hi in bands:
            lengths = list(range(lo, hi + 1))
            rng.shuffle(lengths)
            if lo == 0:
                # an empty argument and one element first: the reference says whether the task has them
                lengths = sorted(lengths[:2]) if hi < 2 else [0, 1, *[n for n in lengths if n > 1]]
            made = 0
            for n in lengths[: SPREAD_PER_BAND + (1 if lo == 0 else 0)] * 2:
                if made >= SPREAD_PER_BAND + (1 if lo == 0 else 0):
                    break
                b = rng.randrange(len(tuples))
                candidate = list(tuples[b])
                for i in group:
                    candidate[i] = sizes.positions[i].resized(candidate[i], n + sizes.offsets[i], rng)
                if any(candidate[i] is None for i in group):
                    continue
                if not lo <= len(candidate[first]) <= hi:  # type: ignore[arg-type]
                    continue
                for k, j in sizes.counts.items():
                    candidate[k] = len(candidate[j])  # type: ignore[arg-type]
                text = repr(tuple(candidate))
                if text in seen or not invariants.hold(candidate) or not sizes.keeps(candidate):
                    continue
                inside = all(len(candidate[i]) >= shortest[i] for i in group)  # type: ignore[arg-type]
                domain = near_domain if inside else far_domain
                if domain is not None and not domain(candidate, {b}):
                    continue
                if not _is_input_literal(text, tuple(candidate)):
                    continue
                seen.add(text)
                (near if inside else far).append((text, (b,)))
                made += 1
    return near, far


def _generate_edges(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> tuple[list[tuple[str, tuple[int, ...]]], list[tuple[str, tuple[int, ...]]]]:
    """(p15/c15) Edges of the cases' domain that every earlier plan reached only by chance, each input with
    the case it was made from. Returns the inputs laid among those that widen the domain
    (``ProbePlan.wide``: a refusal is no error, a value other than the reference's is wrong; an empty
    argument's refusal is judged from filter v18), then the bounds inside lists (laid with the extremes):

    - **the empty string**: per argument position where every case passes a string and none an empty
      one, :data:`EMPTY_STRING_INPUTS` cases with it emptied (and the arguments whose lengths equal its
      in every case emptied alike; an integer equal to its length set to 0). Through p14 a string was
      shortened by dropping letters and digits only, so a string of brackets or separators was never
      emptied (HumanEval/61: ``brackets[0]`` unguarded was accepted on every seed);
    - **machine-bound integers inside lists**: per argument position where every case passes a flat list
      of ints, per bound of :data:`MACHINE_BOUNDS`, up to :data:`BOUND_LIST_CASES` cases with a non-empty
      list there (all where there are no more) with one element set just past the bound (never a
      value a signed 32-bit integer holds), of the sign and parity of the element it replaces (a sorted
      list sorted again; every relation the cases keep kept). p8's extremes put a bound into one drawn
      case's list only where the draw chose that argument, so where it counts (HumanEval/90's second
      smallest: a list of two) it landed on one seed of five. Not into lists mixing ints and floats
      (HumanEval/151): a task whose numbers are floats as well admits float arithmetic, and a float sum
      is exact only below 2**53;
    - **digit counts the cases leave out**: per integer argument (top-level, no length of another), the
      digit counts between two the cases show there and shown by none; :data:`DIGIT_COUNTS` of them
      (first those just below a count the cases show, largest first, then drawn), and for each one input
      with every argument whose cases span that count given an odd number just below the next power of
      ten (its product or sum keeps its low bit: ``99999989 * 99999971`` is past 2**53 and odd) and one
      drawn across the count, of the sign of the value it replaces. Near inputs keep each argument's digit
      count and far ones scale it up, so two eight-digit factors never met where the cases pass nine
      digits (``redteam/mul``). These lie within the range the cases span at that position.

    Every relation the cases keep is kept (:class:`_Invariants`, :class:`_Sizes`, ``domain``)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    sizes = _Sizes(tuples)
    invariants = _Invariants(tuples, seeded=True)
    wide = _Made(tuples, taken, domain)

    # the empty string
    for i in range(arity):
        if not all(isinstance(t[i], str) and t[i] for t in tuples):
            continue
        group = next((g for g in sizes.groups if i in g), [i])
        made = 0
        for b in rng.sample(range(len(tuples)), len(tuples)):
            if made >= EMPTY_STRING_INPUTS:
                break
            candidate = list(tuples[b])
            for j in group:
                value = candidate[j]
                candidate[j] = value[:0] if isinstance(value, str | bytes | list | tuple) else type(value)()  # type: ignore[index, operator]
            for k, j in sizes.counts.items():
                candidate[k] = len(candidate[j])  # type: ignore[arg-type]
            made += wide.take(candidate, b, invariants)

    # integer arguments of digit counts the cases leave out
    ints = [i for i in range(arity) if all(type(t[i]) is int for t in tuples) and i not in sizes.counts]
    shown = {i: {_digit_count(t[i]) for t in tuples} for i in ints}  # type: ignore[arg-type]
    # between two counts the cases show there (below the fewest: outside the domain they span)
    missing = {i: set(range(min(counts) + 1, max(counts))) - counts for i, counts in shown.items()}
    below = sorted({k for i in ints for k in missing[i] if k + 1 in shown[i]}, reverse=True)
    rest = sorted({k for i in ints for k in missing[i]} - set(below))
    rng.shuffle(rest)
    for k in [*below, *rest][:DIGIT_COUNTS]:
        reach = [i for i in ints if min(shown[i]) < k < max(shown[i])]
        for top in (True, False):
            for _ in range(_ATTEMPTS_PER_INPUT // 5):
                b = rng.randrange(len(tuples))
                candidate = list(tuples[b])
                for i in reach:
                    candidate[i] = _of_digits(k, candidate[i] < 0, top, rng)  # type: ignore[operator]
                if wide.take(candidate, b, invariants):
                    break

    # machine-bound integers inside lists of numbers
    ends = _Made(tuples, taken | wide.seen, domain)
    ends.limit += 40
    for i in range(arity):
        column = [t[i] for t in tuples]
        if not all(isinstance(v, list) and all(type(e) is int for e in v) for v in column):
            continue
        holding = [b for b, v in enumerate(column) if v]
        sized = sizes.positions.get(i)
        if not holding or (sized is not None and sized.permutation):
            continue
        for bound in MACHINE_BOUNDS:
            for b in sorted(rng.sample(holding, min(len(holding), BOUND_LIST_CASES))):
                candidate = list(tuples[b])
                items = list(column[b])  # type: ignore[call-overload]
                k = rng.randrange(len(items))
                items[k] = _bound_like(bound, items[k], rng)
                if sized is not None and sized.sorted:
                    items.sort()
                candidate[i] = items
                ends.take(candidate, b, invariants)
    return wide.out, ends.out


def _digit_count(v: int) -> int:
    return len(str(abs(v)))


def _of_digits(k: int, negative: bool, top: bool, rng: random.Random) -> int:
    """(p15/c15) An integer of ``k`` digits: odd and just below ``10**k`` (``top``), or drawn across them."""
    value: int
    if top:
        value = 10**k - 1 - 2 * rng.randrange(max(1, 10 ** (k // 2) // 2))
    else:
        value = rng.randrange(10 ** (k - 1), 10**k)
    return -value if negative else value


def _bound_like(bound: int, element: int, rng: random.Random) -> int:
    """(p15/c15) An integer just past ``bound``, of the sign and parity of ``element``. Never one a signed
    32-bit integer holds (2**31 - 1, -2**31): an array library reads a list holding one as 32-bit where
    that is the platform's default (numpy in WASM), and a correct program's sum or difference of two
    elements then wraps (``np.subtract([2**31 - 1], [-1])``), while a list holding a value past that range
    is read as 64-bit everywhere; 2**31 - 1 itself is the scalar extremes' (:func:`_near_bound`)."""
    value = bound + rng.choice((1, 2, 3, rng.randint(4, 999)))
    if value % 2 != element % 2:
        value += 1
    return -value if element < 0 else value


def _near_bound(bound: int, signed: bool, rng: random.Random) -> int:
    """An integer just below, at or just past ``bound`` (negated half the time where ``signed``)."""
    value = bound + rng.choice((-1, 0, 1, rng.randint(2, 999)))
    return -value if signed and rng.random() < 0.5 else value


def _generate_boundaries(
    cases: Sequence[object],
    signs: Sequence[Signs],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
    admitted: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p16/c16) Inputs every earlier plan reached by chance only, each with the case it was made from, all
    laid among those that widen the cases' domain (``ProbePlan.wide``: a refusal is no error, a value
    other than the reference's is wrong), before the far inputs, so none is larger than the cases' own
    (a reference whose cost grows with its number, fib's naive recursion, answers each as fast):

    - **powers of ten and two**: per integer argument (top-level, no length of another),
      :data:`BOUNDARY_INPUTS` cases with it set to ``10**k - 1``, ``10**k``, ``2**k - 1`` or ``2**k``
      for the digit and bit counts the cases span there, none larger than the cases' largest magnitude
      there, of the sign of the value replaced; first the largest ``10**k - 1`` and ``2**k - 1`` (past
      2**53 a float reads them as the power itself: ``math.log10(10**18 - 1)`` is 18.0), then drawn.
      Near inputs mutate the cases' digits and far ones scale them, so a number of nines only was
      drawn by chance;
    - **a widened letter first**: per position where the cases pass strings (or flat lists of them)
      with cased letters, :data:`FIRST_LETTER_INPUTS` inputs with the first character of one string
      (where it is a cased letter) replaced by a letter of :data:`WIDER_LETTERS` of its case, the first
      of a string but on the last input (the first of a word there), from the cases in a drawn order
      (each once before any twice), the scripts taken in turn from a drawn start. p14 replaced one or
      two letters anywhere, and a program testing only the first letter (HumanEval/141:
      ``stem[0].isalpha()`` where the statement names 'a'-'z' and 'A'-'Z') met one there on some
      seeds only;
    - **zero and negatives the statement admits** (:func:`stated_signs`; ``admitted`` the relations a
      check's calls keep): per numeric argument (or flat list of numbers) whose every case's value there is
      another, :data:`SIGN_INPUTS` // 2 inputs with it (one element of a list) set to 0 where the
      statement admits zero, and :data:`SIGN_INPUTS` with it negated (every element of a list on the
      first, a drawn part on the others; a list every case passes sorted sorted again) where no case's
      number there is negative and the statement admits negatives. Where it says nothing of them, or
      puts a convention on them (divisors, digits, a base), none: a correct program may answer such an
      input otherwise than the reference (p6 drew negatives everywhere, and rejected correct programs on
      HumanEval/13, /24, /44, /60 and /160).

    Every relation the cases keep is kept (:class:`_Invariants`, :class:`_Sizes`, ``domain``)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    invariants = _Invariants(tuples, seeded=True)
    made = _Made(tuples, taken, domain)
    sizes = made.sizes

    # powers of ten and two
    for i in range(arity):
        column = [t[i] for t in tuples]
        if i in sizes.counts or not all(type(v) is int for v in column):
            continue
        digits = [_digit_count(v) for v in column]  # type: ignore[arg-type]
        bits = [abs(v).bit_length() for v in column]  # type: ignore[arg-type]
        top = max(abs(v) for v in column)  # type: ignore[arg-type]
        nines = [v for k in range(min(digits), max(digits) + 1) if (v := 10**k - 1) <= top]
        tens = [v for k in range(min(digits), max(digits)) if (v := 10**k) <= top]
        ones = [v for k in range(max(1, min(bits)), max(bits) + 1) if (v := 2**k - 1) <= top]
        twos = [v for k in range(max(1, min(bits)), max(bits)) if (v := 2**k) <= top]
        first = [*nines[-1:], *ones[-1:]]
        rest = sorted(set(nines + tens + ones + twos) - set(first))
        rng.shuffle(rest)
        count = 0
        for value in dict.fromkeys([*first, *rest]):
            if count >= BOUNDARY_INPUTS:
                break
            for b in rng.sample(range(len(tuples)), min(len(tuples), 4)):
                candidate = list(tuples[b])
                candidate[i] = -value if candidate[i] < 0 else value  # type: ignore[operator]
                if made.take(candidate, b, invariants):
                    count += 1
                    break

    # a widened letter first
    columns = [[t[i] for t in tuples] for i in range(arity)]
    pools = {i: _wider_pool(chars) for i in range(arity) if (chars := _column_chars(columns[i])) is not None}
    positions = [i for i, pool in pools.items() if pool]
    if positions:
        scripts = sorted({script for i in positions for script in pools[i]}, key=list(WIDER_LETTERS).index)
        start = rng.randrange(len(scripts))
        for i in positions:
            count = 0
            # the cases in a drawn order, each once before any twice (a case's other arguments may make
            # its answer the same whatever its first letter)
            order = rng.sample(range(len(tuples)), len(tuples))
            for attempt in range(FIRST_LETTER_INPUTS * _ATTEMPTS_PER_INPUT):
                if count >= FIRST_LETTER_INPUTS:
                    break
                script = scripts[(start + count) % len(scripts)]
                if script not in pools[i]:
                    script = rng.choice(sorted(pools[i]))
                b = order[attempt % len(order)]
                candidate = list(tuples[b])
                word = count == FIRST_LETTER_INPUTS - 1
                value = _first_letter_widened(candidate[i], pools[i][script], word, rng)
                if value is None:
                    continue
                candidate[i] = value
                if made.take(candidate, b, invariants):
                    count += 1

    # zero and negatives the statement admits
    signed = _Made(tuples, taken | made.seen, admitted if admitted is not None else domain)
    _signed_inputs(tuples, columns, signs, rng, invariants, signed)
    return [*made.out, *signed.out]


def _signed_inputs(
    tuples: Sequence[tuple[object, ...]],
    columns: Sequence[Sequence[object]],
    signs: Sequence[Signs],
    rng: random.Random,
    invariants: _Invariants,
    signed: _Made,
) -> None:
    """(p16/c16) The zero and negative inputs ``signs`` admit (:func:`_generate_boundaries`' last part),
    taken into ``signed``."""
    for i in range(min(len(columns), len(signs))):
        numbers = _number_column(columns[i])
        if numbers is None:
            continue
        ordered = any(isinstance(v, list) for v in columns[i]) and all(
            isinstance(v, list) and v == sorted(v)  # type: ignore[type-var]
            for v in columns[i]
        )
        kinds: list[tuple[int, Callable[[object, int], object | None]]] = []
        if signs[i].zero and all(type(v) is int for v in numbers) and 0 not in numbers:
            kinds.append((SIGN_INPUTS // 2, lambda v, n: _zeroed(v, rng)))
        if signs[i].negative and all(v >= 0 for v in numbers) and any(v > 0 for v in numbers):
            kinds.append((SIGN_INPUTS, lambda v, n: _negated(v, n == 0, rng)))
        for wanted, change in kinds:
            count = 0
            for _ in range(wanted * _ATTEMPTS_PER_INPUT):
                if count >= wanted:
                    break
                b = rng.randrange(len(tuples))
                candidate = list(tuples[b])
                value = change(candidate[i], count)
                if value is None:
                    continue
                if ordered and isinstance(value, list):
                    value = sorted(value)  # type: ignore[type-var]
                candidate[i] = value
                if signed.take(candidate, b, invariants):
                    count += 1


def _p23_additions(
    task: TaskPublished,
    version: str,
    seed: str,
    args: Sequence[object],
    lead: _Inputs,
    generated: _Inputs,
    far: _Inputs,
    wide: _Inputs,
    ends: _Inputs,
    bounds: _Inputs,
    *,
    beyond: Callable[[Sequence[object], set[int]], bool] | None = None,
    admitted: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> tuple[_Inputs, _Inputs, _Inputs, set[str], list[tuple[str, str, str]]]:
    """(p23/c23) What p23 adds to a plan's sections, from generators of its own (every input p22 draws
    stays as p22 draws it): the tested signs and the statement's own numbers among the inputs widening
    the cases' domain, then the ASCII twins where the statement keeps its text to ASCII. Returns the near,
    far and widening sections, the texts added (which lengthen the run: ``_with_mirrors``' ``added``) and
    the (input, letter twin, other twin) texts. ``beyond``, ``admitted``: a check plan's domain."""
    taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
    drawn = random.Random(_seed(task, f"{_SIGNS_DRAWN_AS.get(version, version)}|signs", seed))
    signed = _generate_tested_signs(args, task.prompt, task.entry_point, drawn, taken, beyond, admitted)
    taken |= {t for t, _ in signed}
    drawn = random.Random(_seed(task, f"{_SIGNS_DRAWN_AS.get(version, version)}|numbers", seed))
    stated = _generate_stated_numbers(
        args, stated_numbers(task.prompt, task.entry_point), drawn, taken, beyond
    )
    wide = sorted([*wide, *signed, *stated], key=lambda item: (len(item[0]), item[0]))
    added = {t for t, _ in (*signed, *stated)}
    twin_texts: list[tuple[str, str, str]] = []
    if _keeps_ascii(task):
        taken |= {t for t, _ in stated}
        (generated, far, wide), twin_texts = _with_ascii_twins((generated, far, wide), taken)
        added |= {t for _, *twins in twin_texts for t in twins} - taken
    return generated, far, wide, added, twin_texts


def _p24_additions(
    task: TaskPublished,
    version: str,
    seed: str,
    args: Sequence[object],
    lead: _Inputs,
    generated: _Inputs,
    far: _Inputs,
    wide: _Inputs,
    ends: _Inputs,
    bounds: _Inputs,
    *,
    beyond: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> tuple[_Inputs, _Inputs, set[str], set[str]]:
    """(p24/c24) What p24 adds to a plan's sections, each from a generator of its own (every input p23
    draws stays as p23 draws it): the statement's own calls and a stated relation's edges among the near
    inputs; its integers, ASCII symbols, numbers written as text under one and the empty token among the
    inputs widening the cases' domain (:data:`_P24_GENERATION`). Returns the near and widening sections,
    the texts added (which lengthen the run: ``_with_mirrors``' ``added``) and the empty tokens' texts
    (``ProbePlan.tokens_emptied``). ``beyond``: a check plan's domain."""
    taken = {t for t, _ in (*lead, *generated, *far, *wide, *ends, *bounds)}
    calls = _generate_stated_calls(args, stated_calls(task.prompt, task.entry_point), taken, beyond)
    taken |= {t for t, _ in calls}
    drawn = random.Random(_seed(task, f"{version}|integers", seed))
    integers = _generate_stated_integers(
        args, stated_integers(task.prompt, task.entry_point), drawn, taken, beyond
    )
    taken |= {t for t, _ in integers}
    symbols: _Inputs = []
    if _keeps_ascii(task) and not stated_letters_only(task.prompt, task.entry_point):
        drawn = random.Random(_seed(task, f"{version}|symbols", seed))
        symbols = _generate_ascii_symbols(args, drawn, taken, beyond)
    taken |= {t for t, _ in symbols}
    relations = [r for r in stated_preconditions(task.prompt, task.entry_point) if isinstance(r, Relation)]
    drawn = random.Random(_seed(task, f"{version}|edges", seed))
    edges = _generate_relation_edges(args, relations, drawn, taken, beyond)
    taken |= {t for t, _ in edges}
    drawn = random.Random(_seed(task, f"{version}|numeric-text", seed))
    texts = _generate_numeric_texts(args, drawn, taken, beyond)
    taken |= {t for t, _ in texts}
    drawn = random.Random(_seed(task, f"{version}|empty", seed))
    empty = _generate_empty_shaped(args, drawn, taken, beyond)
    generated = sorted([*generated, *calls, *edges], key=lambda item: (len(item[0]), item[0]))
    wide = sorted([*wide, *integers, *symbols, *texts, *empty], key=lambda item: (len(item[0]), item[0]))
    added = {t for t, _ in (*calls, *integers, *symbols, *edges, *texts, *empty)}
    return generated, wide, added, {t for t, _ in empty}


def _generate_empty_shaped(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p24/c24) p15's empty string where every case's string at a position has one shape (letters of
    one case alone, digits alone: ``_Invariants.shaped``), which the empty string has not, so p15 drew
    none there: :data:`EMPTY_STRING_INPUTS` cases with it emptied (and the arguments whose lengths equal
    its in every case emptied alike, an integer equal to its length set to 0), every other relation the
    cases keep kept; where the shape is one class of characters (a word, a number's digits: the cases'
    strings are tokens), not a form of several (HumanEval/144's 'digit/digit', /67's sentence: the empty
    string is outside such a form, and a correct program refusing it was rejected, since an emptied
    argument's refusal is judged from v18). A shape says what a non-empty string holds, not that a
    string holds something: HumanEval/29's empty prefix, /18's empty substring, library/pad_left's
    empty text were never drawn, and programs answering None or '0' there were accepted (red-team
    a49_empty_*)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    sizes = _Sizes(tuples)
    invariants = _Invariants(tuples, seeded=True)
    shaped = dict(invariants.shaped)
    wide = _Made(tuples, taken, domain)
    for i in range(arity):
        if i not in shaped or "|" in shaped[i] or not all(isinstance(t[i], str) and t[i] for t in tuples):
            continue  # a shape of several classes is a form ('digit/digit'), which the empty string is not
        group = next((g for g in sizes.groups if i in g), [i])
        invariants.shaped = {k: v for k, v in shaped.items() if k not in group}
        made = 0
        for b in rng.sample(range(len(tuples)), len(tuples)):
            if made >= EMPTY_STRING_INPUTS:
                break
            candidate = list(tuples[b])
            for j in group:
                value = candidate[j]
                candidate[j] = value[:0] if isinstance(value, str | bytes | list | tuple) else type(value)()  # type: ignore[index, operator]
            for k, j in sizes.counts.items():
                candidate[k] = len(candidate[j])  # type: ignore[arg-type]
            made += wide.take(candidate, b, invariants)
    invariants.shaped = shaped
    return wide.out


def _with_operand(args: list[object], arg: int, field: int | None, value: int) -> list[object] | None:
    """``args`` with the number at ``arg`` (its field ``field``) set to ``value`` (None where there is
    none to set)."""
    out = list(args)
    if field is None:
        out[arg] = value
        return out
    held = out[arg]
    if not isinstance(held, list | tuple) or field >= len(held):
        return None
    items = list(held)
    items[field] = value
    out[arg] = tuple(items) if isinstance(held, tuple) else items
    return out


def _generate_relation_edges(
    cases: Sequence[object],
    relations: Sequence[Relation],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p24/c24) Per relation the statement gives between two integer arguments or fields
    (``statement.stated_preconditions``: library/clamp's ``low <= high``, HumanEval/127's each
    interval's ``start <= end``) that every case keeps, up to :data:`RELATION_EDGE_INPUTS` cases (in a
    drawn order) with its right side set on the relation's edge: equal to the left, and one step inside
    (``a <= b``: b = a and b = a + 1). Laid among the near inputs: they keep the relation, where filter
    v34 leaves every input breaking it unjudged and the near draws, which break it often, seldom meet
    its edge (red-team f45_unit_width_wrong_clamp: wrong only where high = low + 1, accepted on 3 of 3
    seeds)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    invariants = _Invariants(tuples, seeded=True)
    made = _Made(tuples, taken, domain)
    for relation in relations:
        sides = [(operand_value(t, *relation.left), operand_value(t, *relation.right)) for t in tuples]
        if any(type(a) is not int or type(b) is not int for a, b in sides):
            continue
        if not all(relation.admits(t) for t in tuples):
            continue
        steps = {"<=": (0, 1), "<": (1, 2), ">=": (0, -1), ">": (-1, -2)}.get(relation.op, ())
        order = list(range(len(tuples)))
        rng.shuffle(order)
        count = 0
        for b in order:
            for step in steps:
                if count >= RELATION_EDGE_INPUTS:
                    break
                left = sides[b][0]
                assert left is not None
                candidate = _with_operand(list(tuples[b]), *relation.right, int(left) + step)
                if candidate is not None and made.take(candidate, b, invariants):
                    count += 1
    return made.out


#: (p24/c24) a number written as text: an optional sign, digits, an optional decimal part
_NUMERIC_TEXT = re.compile(r"-?\d+(?:\.\d+)?")


def _generate_numeric_texts(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p24/c24) Per string argument position where every case's text is a decimal number and some
    case's has a decimal point, up to :data:`NUMERIC_TEXT_INPUTS` cases (drawn) with their text set to a
    number of magnitude under three written with one decimal (:data:`NUMERIC_TEXT_VALUES`: the halves a
    rounding rule decides, tenths beside them), of a sign the cases hold, in a drawn order, and
    :data:`NUMERIC_TEXT_HALVES` of its halves written with two decimals. A number's
    text was through p23 its digits mutated, which never reaches a value between -1 and 0 where the
    cases hold none (red-team round 48: HumanEval/99's '-0.5' rounded by the truncated integer part's
    sign)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    invariants = _Invariants(tuples, seeded=True)
    made = _Made(tuples, taken, domain)
    for i in range(arity):
        texts = [t[i] for t in tuples]
        if not all(isinstance(x, str) and _NUMERIC_TEXT.fullmatch(x) for x in texts):
            continue
        if not any("." in str(x) for x in texts):
            continue
        negative = any(str(x).startswith("-") for x in texts)
        values = [v for v in NUMERIC_TEXT_VALUES if v >= 0 or negative]
        rng.shuffle(values)
        count = 0
        for v in values:
            if count >= NUMERIC_TEXT_INPUTS:
                break
            b = rng.randrange(len(tuples))
            candidate = list(tuples[b])
            candidate[i] = f"{v:.1f}"
            if made.take(candidate, b, invariants):
                count += 1
        # a half written with a trailing zero: read by its last digit, '2.50' is no tie (red-team
        # a50_half_suffix_two_decimals_99: accepted on the pinned seed, two of four others)
        halves = [v for v in values if (2 * v).is_integer()]
        for v in halves[:NUMERIC_TEXT_HALVES]:
            b = rng.randrange(len(tuples))
            candidate = list(tuples[b])
            candidate[i] = f"{v:.2f}"
            made.take(candidate, b, invariants)
    return made.out


def _generate_ascii_symbols(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p24/c24) Per string argument position, for each ASCII symbol no case holds (:data:`ASCII_SYMBOLS`)
    two cases (drawn from those with text there) with the symbol in place of their text's last character
    and after it, and :data:`ASCII_SYMBOL_INPUTS` more with a drawn symbol at a drawn place. Drawn where the
    statement keeps its text to ASCII and not to letters: there a symbol is the text's, and the
    statement's classes of characters (alphabetical, upper) say how it reads, where through p23 the one
    symbol drawn was the '#' twin's stand-in, judged as no input (red-team round 48: HumanEval/134's
    last one-character word '^' read as a letter by a code range 'A'..'z', 'e.' read as 'e')."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    invariants = _Invariants(tuples, seeded=True)
    made = _Made(tuples, taken, domain)
    for i in range(arity):
        if not all(isinstance(t[i], str) for t in tuples):
            continue
        bases = [b for b, t in enumerate(tuples) if t[i]]
        held = set("".join(str(t[i]) for t in tuples))
        # the digits too where no case holds one (HumanEval/66, /86: a digit read as an upper-case letter,
        # or kept after the letters, was accepted on every seed: red-team a50_digit_*)
        symbols = [c for c in ASCII_SYMBOLS + ASCII_DIGITS if c not in held]
        if not bases or not symbols:
            continue
        places = [(c, at) for c in symbols for at in ("last", "after")]
        places += [(rng.choice(symbols), "drawn") for _ in range(ASCII_SYMBOL_INPUTS)]
        for symbol, at in places:
            for b in rng.sample(bases, min(len(bases), 4)):
                candidate = list(tuples[b])
                text = str(candidate[i])
                cut = {"last": len(text) - 1, "after": len(text)}.get(at, rng.randrange(len(text)))
                candidate[i] = text[:cut] + symbol + text[cut + 1 :]
                if made.take(candidate, b, invariants):
                    break
    return made.out


def _same_kind(value: object, like: object) -> bool:
    """Whether ``value`` is of the kind ``like`` is (bool apart from int; a list's, tuple's, dict's
    items are not looked into)."""
    return type(value) is type(like)


def _generate_stated_calls(
    cases: Sequence[object],
    calls: Sequence[tuple[object, ...]],
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p24/c24) The statement's own calls (:func:`~streams.probe.statement.stated_calls`) as inputs,
    where one has the cases' number of arguments, each of the kind some case passes there, and is not
    already planned; each made from the first case of its kinds. Not held to the relations the cases keep
    (the statement's own input is the task's by its word), only to a check plan's domain."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    out: list[tuple[str, tuple[int, ...]]] = []
    seen = {repr(t) for t in tuples} | taken
    for call in calls:
        matching = [
            b
            for b, t in enumerate(tuples)
            if len(t) == len(call) and all(_same_kind(v, c) for v, c in zip(call, t, strict=True))
        ]
        text = repr(tuple(call))
        if not matching or text in seen or not _is_input_literal(text, tuple(call)):
            continue
        if domain is not None and not domain(list(call), {matching[0]}):
            continue
        seen.add(text)
        out.append((text, (matching[0],)))
    return out


def _generate_stated_integers(
    cases: Sequence[object],
    numbers: Sequence[int],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p24/c24) Per argument position whose cases hold ints alone (an int, or a flat list of them), up
    to :data:`STATED_INTEGER_INPUTS` cases with that integer (one element of the list, drawn) set to one
    the statement states (:func:`~streams.probe.statement.stated_integers`) of a sign the cases hold
    there (zero where one holds zero or less), at most twice their largest magnitude, in a drawn order.
    Laid among the inputs widening the cases' domain: where a program reading a bound the other way
    answers otherwise and nowhere else. A stated integer's negative is not drawn: what the statement
    says of 100 it may not say of -100, and a reference may read a negative's sign as a digit
    (HumanEval/122's ``len(str(x)) <= 2`` leaves -10 out of "at most two digits": correct programs
    counting its two digits were rejected)."""
    if not numbers:
        return []
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    invariants = _Invariants(tuples, seeded=True)
    made = _Made(tuples, taken, domain)
    for i in range(arity):
        column = _number_column([t[i] for t in tuples])
        if column is None or any(type(v) is not int for v in column):
            continue
        top = 2 * max(abs(v) for v in column)
        negative, positive = any(v < 0 for v in column), any(v > 0 for v in column)
        zero = any(v <= 0 for v in column)
        wanted = [
            x for x in numbers if abs(x) <= top and (zero if x == 0 else positive if x > 0 else negative)
        ]
        rng.shuffle(wanted)
        _place_numbers(tuples, i, wanted, STATED_INTEGER_INPUTS, rng, made, invariants, scalar=(int,))
    return made.out


def _place_numbers(
    tuples: Sequence[tuple[object, ...]],
    i: int,
    wanted: Sequence[int | float],
    most: int,
    rng: random.Random,
    made: _Made,
    invariants: _Invariants,
    *,
    scalar: tuple[type, ...],
) -> None:
    """(p23/c23 on) Up to ``most`` of the numbers ``wanted``, in their order, each put into one of four
    drawn cases at argument position ``i`` (one drawn element of a list there, or the argument itself
    where it is of an exact type of ``scalar``), the first case that makes a new input keeping the
    cases' relations taking it (``made``)."""
    count = 0
    for x in wanted:
        if count >= most:
            break
        for b in rng.sample(range(len(tuples)), min(len(tuples), 4)):
            candidate = list(tuples[b])
            value = candidate[i]
            if isinstance(value, list):
                if not value:
                    continue
                value = list(value)
                value[rng.randrange(len(value))] = x
            elif type(value) in scalar:
                value = x
            else:
                continue
            candidate[i] = value
            if made.take(candidate, b, invariants):
                count += 1
                break


def _generate_stated_numbers(
    cases: Sequence[object],
    numbers: Sequence[float],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p23/c23) Per argument position whose cases hold floats (a float, or a flat list with one), up to
    :data:`STATED_NUMBER_INPUTS` cases with that number (one element of the list, drawn) set to a decimal
    the statement writes (:func:`~streams.probe.statement.stated_numbers`) of a sign its cases hold there
    (or zero), at most twice their largest magnitude, in a drawn order. Laid among the inputs widening the
    cases' domain (a refusal is no error, a value is judged): the statement's own numbers, where a
    program reading a bound the other way ('>' as '>=') answers otherwise and nowhere else."""
    if not numbers:
        return []
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    invariants = _Invariants(tuples, seeded=True)
    made = _Made(tuples, taken, domain)
    for i in range(arity):
        column = _number_column([t[i] for t in tuples])
        if column is None or not any(type(v) is float for v in column):
            continue
        top = 2 * max(abs(v) for v in column)
        negative, positive = any(v < 0 for v in column), any(v > 0 for v in column)
        wanted = [x for x in numbers if x <= top and (x == 0 or (positive if x > 0 else negative))]
        rng.shuffle(wanted)
        _place_numbers(tuples, i, wanted, STATED_NUMBER_INPUTS, rng, made, invariants, scalar=(int, float))
    return made.out


def _generate_tested_signs(
    cases: Sequence[object],
    prompt: str,
    entry_point: str,
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
    admitted: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p23/c23) The zero and negative inputs the statement admits read with its tested signs
    (:func:`~streams.probe.statement.stated_signs` ``tested``) that p16's reading did not: a zero where a
    positive word is a condition the function tests ("Return True if every number is greater than zero")
    or where the only convention is one on negatives (a remainder, divisibility), negatives where the
    statement tests its numbers' sign. Laid as p16's are, among the inputs widening the cases' domain."""
    before = stated_signs(prompt, entry_point)
    after = stated_signs(prompt, entry_point, tested=True)
    extra = [
        Signs(zero=a.zero and not b.zero, negative=a.negative and not b.negative)
        for a, b in zip(after, before, strict=False)
    ]
    if not any(e.zero or e.negative for e in extra):
        return []
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    columns = [[t[i] for t in tuples] for i in range(arity)]
    signed = _Made(tuples, taken, admitted if admitted is not None else domain)
    _signed_inputs(tuples, columns, extra, rng, _Invariants(tuples, seeded=True), signed)
    return signed.out


#: a generator's inputs, each with the cases (plan positions) it was made from
_Inputs = list[tuple[str, tuple[int, ...]]]


def _generate_widths(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    near_domain: Callable[[Sequence[object], set[int]], bool] | None = None,
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
    *,
    exact: bool = True,
) -> tuple[_Inputs, _Inputs, _Inputs]:
    """(p17/c17) Integer widths, signed zeros and subnormals that every earlier plan reached by chance
    only, each input with the case it was made from. Returns the inputs laid near the cases, those laid
    among the inputs that widen the domain (``ProbePlan.wide``), and those laid with the extremes at the
    end (among ``wide`` too, each call capped as the machine bounds are):

    - **a negative zero** (near the cases): per float argument (top-level, a float in every case), up to
      :data:`SIGNED_ZERO_INPUTS` cases holding ``0.0`` there with it set to ``-0.0``. ``-0.0 == 0.0``: it
      is a value of the task's own domain, so an error there is judged as near the cases (a program
      testing ``str(b) == '0.0'`` divides by it);
    - **subnormal floats** (widening): per float argument, :data:`SUBNORMAL_INPUTS` cases with it set to
      ``5e-324``, ``1e-310`` or one drawn below 2**-1022, of the sign of the value replaced, and as many
      with every float argument subnormal (where there are two or more): ``1.0 / b`` overflows there;
    - **integer widths** (with the extremes): per integer argument (top-level, no length of another),
      ``2**k - 1``, ``2**k`` and ``2**k + 1`` for every ``k`` of :data:`INT_WIDTHS` and one number of
      :data:`LONG_DIGITS` digits whose last digit is none of the others, each on a drawn case of every
      sign the cases pass there (of the sign of the value replaced). Through p16 no integer reached 2**61
      or 2**63 (:data:`MACHINE_BOUNDS` stop at 2**32 + 999, the far inputs at 1000 times the cases'),
      so a sign read from bit 63, an int64 wrap, ``hash(n)`` (zero at the hash modulus) or a product
      wrapped to 160 bits was accepted. Only a value counts there: a correct program on 64-bit integers
      (numpy) refuses them, and one whose cost grows with the number (``range(n)``) hangs, as the
      reference does where it is such a program. Only up to :data:`FLOAT_READ_REACH` (no long number)
      where no case passes a number past :data:`EXACT_FLOAT_INTS` unless the task takes one integer
      and its reference keeps it exact (``exact``, :func:`_reads_float`): HumanEval/123's reference
      halves with ``n/2``, so its answers past 2**53 are a double's and an exact program's differ; and
      two small integers are added or multiplied, which a correct program on numpy's int64 or on floats
      (HumanEval/53's ``np.add(x, y)``, ``float(x) + float(y)``) does silently wrong past 2**63 or 2**53;
      and where two integer arguments meet, none a signed 32-bit integer holds (``2**31 - 1``,
      ``-2**31``): numpy in WASM reads such a pair as int32 and a correct ``np.add`` wraps there;
    - **equal integer arguments** (with the extremes): where two or more arguments are integers,
      :data:`EQUAL_INPUTS` cases with a pair of them set to one large value (2**k +- 1, the long number,
      or drawn log-uniform up to it; none past :data:`FLOAT_READ_REACH` unless some case passes a
      number past :data:`EXACT_FLOAT_INTS` at both: a program reading the pair's mean through a float,
      ``round((n + m) / 2)``, is wrong past 2**53 but the cases never leave a double's exact integers,
      as ``a10_float_add_53``'s):
      independent draws meet only among small values, so ``a == b`` taken through ``math.pow(a, 2)``
      was never shown a square past 2**53;
    - **magnitudes in the gap** (with the extremes): per integer argument whose cases' magnitude times
      1000 lies below 2**31, :data:`GAP_INPUTS` values drawn log-uniform between the two, of the sign
      and parity of the value replaced: the far inputs stop at 1000 times the cases' magnitude and the
      machine bounds start at 2**31, so a program wrong only between (HumanEval/138 past 10**5) was
      accepted.

    Every relation the cases keep is kept (:class:`_Invariants`, :class:`_Sizes`, ``near_domain`` near the
    cases, ``domain`` elsewhere)."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    invariants = _Invariants(tuples, seeded=True)
    near = _Made(tuples, taken, near_domain)
    sizes = near.sizes
    ints = [i for i in range(arity) if all(type(t[i]) is int for t in tuples) and i not in sizes.counts]
    floats = [i for i in range(arity) if all(type(t[i]) is float for t in tuples)]

    # a negative zero where a case holds 0.0
    for i in floats:
        zeros = [b for b, t in enumerate(tuples) if t[i] == 0.0 and math.copysign(1.0, t[i]) > 0]  # type: ignore[arg-type]
        for b in rng.sample(zeros, min(len(zeros), SIGNED_ZERO_INPUTS)):
            candidate = list(tuples[b])
            candidate[i] = -0.0
            near.take(candidate, b, invariants)

    # subnormal floats
    wide = _Made(tuples, taken | near.seen, domain)

    def subnormal(count: int, like: object) -> float:
        value = (5e-324, 1e-310)[count] if count < 2 else math.ldexp(rng.randrange(1, 2**52), -1074)
        negative = isinstance(like, float) and math.copysign(1.0, like) < 0
        return -value if negative else value

    groups = [[i] for i in floats] + ([floats] if len(floats) >= 2 else [])
    for group in groups:
        count = 0
        for _ in range(SUBNORMAL_INPUTS * _ATTEMPTS_PER_INPUT // 5):
            if count >= SUBNORMAL_INPUTS:
                break
            b = rng.randrange(len(tuples))
            candidate = list(tuples[b])
            for i in group:
                candidate[i] = subnormal(count, candidate[i])
            count += wide.take(candidate, b, invariants)

    # integer widths, equal integers, magnitudes in the gap: at the end, each call capped
    ends = _Made(tuples, taken | near.seen | wide.seen, domain)
    ends.limit += (LONG_DIGITS + 8) * max(1, len(ints))

    def placed(b: int, values: dict[int, int], parity: bool = False) -> bool:
        candidate = list(tuples[b])
        for i, value in values.items():
            was = candidate[i]
            if parity and value % 2 != was % 2:  # type: ignore[operator]
                value += 1
            candidate[i] = -value if was < 0 else value  # type: ignore[operator]
        return ends.take(candidate, b, invariants)

    widths = [2**k + d for k in INT_WIDTHS for d in (-1, 0, 1)]
    past = {i: any(abs(t[i]) > EXACT_FLOAT_INTS for t in tuples) for i in ints}  # type: ignore[arg-type]
    # past 2**32 + 1 only where some case holds a number past 2**53, or one integer argument meets an
    # exact reference: two small ones are added or multiplied, which numpy's int64 and a float do
    # silently wrong past 2**63 and 2**53 (HumanEval/53's np.add and float(x) + float(y) programs,
    # correct on every pair the cases admit)
    wider = any(past.values()) or (exact and len(ints) == 1)
    # where two integers meet, none a signed 32-bit integer holds (2**31 - 1; -2**31): numpy in WASM reads
    # such a pair as int32, and a correct np.add(x, y) wraps there (as p15's bounds inside lists avoid)
    int32 = len(ints) >= 2
    for i in ints:
        reach = [*widths, _long_decimal(rng)]
        if not wider:
            reach = [v for v in reach if v <= FLOAT_READ_REACH]
        if int32:
            reach = [v for v in reach if v >= 2**31]
        # each value on a case of every sign the cases pass there (hash(n) is 0 at the hash modulus and
        # -hash(-n): a sign read from it is wrong at +(2**61 - 1) alone)
        sides = [[b for b, t in enumerate(tuples) if (t[i] < 0) is negative] for negative in (False, True)]  # type: ignore[operator]
        for value in reach:
            for side in sides:
                if int32 and value == 2**31 and side is sides[1]:
                    continue
                for b in rng.sample(side, min(len(side), 4)):
                    if placed(b, {i: value}):
                        break
    if len(ints) >= 2:
        large = [2**k + d for k in INT_WIDTHS for d in (-1, 1) if 2**k + d > 2**31]
        for count in range(EQUAL_INPUTS):
            for _ in range(_ATTEMPTS_PER_INPUT // 5):
                i, j = rng.sample(ints, 2)
                top = 10**LONG_DIGITS if past[i] and past[j] else FLOAT_READ_REACH
                if count == 0 and top > EXACT_FLOAT_INTS:
                    value = _long_decimal(rng)
                elif count <= 1:
                    value = rng.choice([v for v in large if v <= top])
                else:
                    value = round(math.exp(rng.uniform(math.log(2**31 + 1), math.log(top))))
                b = rng.randrange(len(tuples))
                candidate = list(tuples[b])
                value = -value if candidate[i] < 0 else value  # type: ignore[operator]
                candidate[i] = candidate[j] = value
                if ends.take(candidate, b, invariants):
                    break
    for i in ints:
        top = max(abs(t[i]) for t in tuples)  # type: ignore[arg-type]
        low = 1000 * top
        if top == 0 or 2 * low >= 2**31:
            continue
        for _ in range(GAP_INPUTS):
            for _ in range(_ATTEMPTS_PER_INPUT // 5):
                value = round(math.exp(rng.uniform(math.log(low), math.log(2**31))))
                if placed(rng.randrange(len(tuples)), {i: value}, parity=True):
                    break
    ends.out.sort(key=lambda item: (len(item[0]), item[0]))
    return near.out, wide.out, ends.out


#: (p17/c17) the ``math`` functions that keep an integer exact
_EXACT_MATH = frozenset({"isqrt", "gcd", "lcm", "comb", "perm", "factorial", "prod"})


def _reads_float(source: str | None) -> bool:
    """(p17/c17) Whether a reference reads numbers through a float: a true division, ``float()``, a
    ``math`` function other than the exact ones, or a power with a float exponent (``n ** 0.5``). Read
    from the task's own reference, never from a program; a source that does not parse reads as such."""
    if not source:
        return False
    tree = _parsed(source)
    if tree is None:
        return True
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp | ast.AugAssign) and isinstance(node.op, ast.Div):
            return True
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Pow)
            and isinstance(node.right, ast.Constant)
            and isinstance(node.right.value, float)
        ):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
            return True
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "math"
            and node.attr not in _EXACT_MATH
        ):
            return True
    return False


def _long_decimal(rng: random.Random) -> int:
    """(p17/c17) A number of :data:`LONG_DIGITS` digits whose last digit is none of the others (a program
    reading a bounded prefix of its digits misses it)."""
    last = rng.randrange(10)
    others = [d for d in range(10) if d != last]
    head = [rng.choice([d for d in others if d])] + [rng.choice(others) for _ in range(LONG_DIGITS - 2)]
    return int("".join(map(str, [*head, last])))


def _first_letter_widened(
    value: object, pool: dict[str, str], word: bool, rng: random.Random
) -> object | None:
    """(p16/c16) ``value`` (a string, or a flat list or tuple of them) with the first character of one
    string (``word``: of one of its words) replaced by a letter of ``pool`` of its case (None: no such
    character is a cased letter of the pool's classes)."""

    def starts(s: object) -> list[int]:
        if not isinstance(s, str):
            return []
        at = [k for k, c in enumerate(s) if (k == 0 or not s[k - 1].isalpha()) and c.isalpha()]
        at = [k for k in at if _char_class(s[k]) in pool]
        return at if word else [k for k in at if k == 0]

    def change(s: str) -> str | None:
        at = starts(s)
        if not at:
            return None
        k = rng.choice(at)
        return s[:k] + rng.choice(pool[_char_class(s[k])]) + s[k + 1 :]

    if isinstance(value, str):
        return change(value)
    if not isinstance(value, list | tuple):
        return None
    at = [k for k, e in enumerate(value) if starts(e)]
    if not at:
        return None
    k = rng.choice(at)
    items = list(value)
    items[k] = change(items[k])
    return type(value)(items)


def _zeroed(value: object, rng: random.Random) -> object | None:
    """(p16/c16) An int made 0, or a flat list of them with one element made 0 (None: neither)."""
    if type(value) is int:
        return 0
    if isinstance(value, list) and value and all(type(e) is int for e in value):
        items = list(value)
        items[rng.randrange(len(items))] = 0
        return items
    return None


def _negated(value: object, every: bool, rng: random.Random) -> object | None:
    """(p16/c16) A positive number negated, or a flat list of numbers with every (``every``) or a drawn
    part of its positive elements negated (None: nothing there to negate)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return -value if value > 0 else None
    if isinstance(value, list) and all(isinstance(e, int | float) and not isinstance(e, bool) for e in value):
        at = [k for k, e in enumerate(value) if e > 0]  # type: ignore[operator]
        if not at:
            return None
        chosen = at if every else [k for k in at if rng.random() < 0.5] or [rng.choice(at)]
        return [-e if k in chosen else e for k, e in enumerate(value)]  # type: ignore[operator]
    return None


def _leaves(column: Sequence[object]) -> list[object] | None:
    """The values at one argument position, the elements of flat lists and tuples in place of those
    (None: some value is another container, or a list holds one)."""
    out: list[object] = []
    for v in column:
        if isinstance(v, list | tuple):
            if any(isinstance(e, list | tuple | dict | set | frozenset) for e in v):
                return None
            out.extend(v)
        elif isinstance(v, dict | set | frozenset):
            return None
        else:
            out.append(v)
    return out


def _widen_leaves(
    value: object,
    pick: Callable[[object], bool],
    change: Callable[[object, random.Random], object],
    rng: random.Random,
) -> object | None:
    """``value`` (an argument, or a flat list or tuple) with some of the leaves ``pick`` accepts changed
    (each with even odds, at least one and, of two or more, not all; all of them one time in five), None
    where none is."""
    if isinstance(value, list | tuple):
        at = [k for k, e in enumerate(value) if pick(e)]
        if not at:
            return None
        if rng.random() < 0.2:
            chosen = at
        else:
            # some changed, some kept where there are two or more: a mix shows more than all or none
            chosen = [k for k in at if rng.random() < 0.5] or [rng.choice(at)]
            if len(chosen) == len(at) > 1:
                chosen.remove(rng.choice(chosen))
        items = list(value)
        for k in chosen:
            items[k] = change(items[k], rng)
        return type(value)(items)
    return change(value, rng) if pick(value) else None


def _admits_repeat(column: Sequence[object]) -> bool:
    return (
        all(isinstance(v, list) for v in column)
        and any(column)
        and all(not isinstance(e, list | tuple | dict | set | frozenset) for v in column for e in v)  # type: ignore[attr-defined]
        and all(_repeats(v) == 0 for v in column)
    )


def _repeated(value: object, column: Sequence[object], rng: random.Random) -> object | None:
    if not isinstance(value, list) or not value:
        return None
    out = list(value)
    for _ in range(rng.choice((1, 1, 2))):
        out.insert(rng.randint(0, len(out)), rng.choice(value))
    if all(_sorted(v) for v in column) and any(len(v) > 1 for v in column):  # type: ignore[arg-type]
        with contextlib.suppress(TypeError):
            out = sorted(out)  # type: ignore[type-var]
    return out


def _column_chars(column: Sequence[object]) -> str | None:
    """Every character of the strings at one position (None: not strings, or flat lists of them)."""
    texts = [v for v in _leaves(column) or [] if isinstance(v, str)]
    if not texts or len(texts) != len(_leaves(column) or []):
        return None
    return "".join(sorted({c for v in texts for c in v}))


def _admits_case(column: Sequence[object]) -> bool:
    chars = _column_chars(column) or ""
    return any(c.isupper() for c in chars) and any(c.islower() for c in chars)


def _other_case(value: object, column: Sequence[object], rng: random.Random) -> object | None:
    def flip(s: object, rng: random.Random) -> str:
        assert isinstance(s, str)
        at = [k for k, c in enumerate(s) if c.swapcase() != c and len(c.swapcase()) == 1]
        if rng.random() < 0.5:
            k = rng.choice(at)
            return s[:k] + s[k].swapcase() + s[k + 1 :]
        # one word (a run of letters) in the other case
        k = rng.choice(at)
        lo, hi = k, k
        while lo > 0 and s[lo - 1].isalpha():
            lo -= 1
        while hi < len(s) and s[hi].isalpha():
            hi += 1
        return s[:lo] + s[lo:hi].swapcase() + s[hi:]

    def cased(s: object) -> bool:
        return isinstance(s, str) and any(c.swapcase() != c and len(c.swapcase()) == 1 for c in s)

    return _widen_leaves(value, cased, flip, rng)


def _others(chars: str) -> dict[str, str]:
    """Character class -> the characters of it no case holds that may stand for one of the class."""
    # (no other white space for a blank: a reference that splits words on " " alone reads 'r\tt g' as two
    # words, a correct program that splits on any white space as three, and the prompt says "space")
    out = {cls: "".join(c for c in pool if c not in chars) for cls, pool in _OTHER_LETTERS.items()}
    return {cls: pool for cls, pool in out.items() if pool and any(_char_class(c) == cls for c in chars)}


def _admits_letters(column: Sequence[object]) -> bool:
    chars = _column_chars(column)
    return chars is not None and bool(_others(chars))


def _other_letters(value: object, column: Sequence[object], rng: random.Random) -> object | None:
    others = _others(_column_chars(column) or "")

    def replace(s: object, rng: random.Random) -> str:
        assert isinstance(s, str)
        chars = list(s)
        at = [k for k, c in enumerate(chars) if c.isalpha() and _char_class(c) in others]
        for k in rng.sample(at, min(len(at), rng.choice((1, 1, 2)))):
            chars[k] = rng.choice(others[_char_class(chars[k])])
        return "".join(chars)

    def holds(s: object) -> bool:
        return isinstance(s, str) and any(c.isalpha() and _char_class(c) in others for c in s)

    return _widen_leaves(value, holds, replace, rng)


def _with_element(args: tuple[object, ...], i: int, k: int, value: object, *, ordered: bool) -> list[object]:
    """(p14/c14) ``args`` as a list, with element ``k`` of its list or tuple argument ``i`` set to
    ``value`` (the container sorted again where ``ordered``)."""
    container = args[i]
    assert isinstance(container, list | tuple)
    items = list(container)
    items[k] = value
    if ordered:
        items.sort()
    candidate = list(args)
    candidate[i] = type(container)(items)
    return candidate


def _wider_pool(chars: str) -> dict[str, dict[str, str]]:
    """(p14/c14) Script -> character class ('lower', 'upper') -> the letters of :data:`WIDER_LETTERS` no
    case holds, for the classes of the letters the cases hold (empty: they hold no cased letter)."""
    classes = {cls for c in chars if c.isalpha() and (cls := _char_class(c)) in ("lower", "upper")}
    out: dict[str, dict[str, str]] = {}
    for script, (lower, upper) in WIDER_LETTERS.items():
        letters = {"lower": lower, "upper": upper}
        pools = {cls: "".join(c for c in letters[cls] if c not in chars) for cls in sorted(classes)}
        if pools and all(pools.values()):
            out[script] = pools
    return out


def _generate_wider_letters(
    cases: Sequence[object],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p14/c14) Inputs whose strings hold cased letters beyond Latin-1 (:data:`WIDER_LETTERS`: Latin
    pairs next to each other, Greek, Cyrillic, and Deseret and Adlam beyond the BMP), each with the case
    it was made from, at the positions where the cases pass strings (or flat lists of them) with cased
    letters: :data:`WIDER_LETTER_INPUTS` with one or two letters replaced by letters of their own case,
    and :data:`WIDER_WORD_INPUTS` with a whole word made of one script's letters, each of the case of the
    letter it replaces (:func:`_one_word_widened`: one string of a list or one word of a string, shorter
    than the longest there where one is), so the word keeps its length in code points and its case
    pattern while its length in UTF-8 bytes (two or four a letter) and UTF-16 code units grows. The
    scripts are taken in turn from a drawn start, so every plan holds letters of each script (and a word
    of an astral script). Through p13/c13 every letter of no case's alphabet was one of
    :data:`_OTHER_LETTERS`, eight Latin-1 letters per case in the BMP whose cases lie 32 apart, put in
    place of one or two letters: a program counting UTF-16 code units, flipping case by ``^ 32`` or
    measuring words in UTF-8 bytes agreed with the reference on every input of most seeds. Every relation
    the cases keep is kept (:class:`_Invariants`, :class:`_Sizes`, ``domain``): a word keeps its length,
    white space and separators stay. Judged as the inputs that widen the cases' domain
    (``ProbePlan.wide``): the reference decides what each says, a program may refuse one (raise), a value
    other than the reference's is wrong."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(len(t) for t in tuples)
    columns = [[t[i] for t in tuples] for i in range(arity)]
    pools = {i: _wider_pool(chars) for i in range(arity) if (chars := _column_chars(columns[i])) is not None}
    positions = [i for i, pool in pools.items() if pool]
    if not positions:
        return []
    scripts = sorted({script for i in positions for script in pools[i]}, key=list(WIDER_LETTERS).index)
    start = rng.randrange(len(scripts))
    inputs = _Made(tuples, taken, domain)
    invariants = _Invariants(tuples, seeded=True)

    for words, wanted in ((False, WIDER_LETTER_INPUTS), (True, WIDER_WORD_INPUTS)):
        made = 0
        for _ in range(wanted * _ATTEMPTS_PER_INPUT):
            if made >= wanted:
                break
            script = scripts[(start + made) % len(scripts)]
            usable = [i for i in positions if script in pools[i]]
            b = rng.randrange(len(tuples))
            candidate = list(tuples[b])
            chosen = [i for i in usable if rng.random() < 0.5] or [rng.choice(usable)]
            changed = False
            for i in chosen:
                widen = _Widened(pools[i][script], words=words)
                if words:
                    value = _one_word_widened(candidate[i], widen, rng)
                else:
                    value = _widen_leaves(candidate[i], widen.holds, widen.change, rng)
                if value is not None:
                    candidate[i], changed = value, True
            if changed and inputs.take(candidate, b, invariants):
                made += 1
    return inputs.out


def _keeps_ascii(task: TaskPublished) -> bool:
    """(p23/c23) Whether the task's statement keeps its text to ASCII (v32's reading)."""
    return stated_forms(task.prompt, task.entry_point, letters=True).ascii


def _ascii_stand_in(char: str, letter: bool) -> str:
    """(p23/c23) What stands for ``char`` (past ASCII) in a twin: under ``letter`` the ASCII letter its
    decomposition starts with ('é' -> 'e', 'Ё' -> 'E'), else 'a' or 'A' by its case; otherwise
    :data:`ASCII_OTHER`."""
    if not letter:
        return ASCII_OTHER
    base = unicodedata.normalize("NFKD", char)[:1]
    if base.isascii() and base.isalpha():
        return base
    return "A" if char.isupper() else "a"


def _ascii_replaced(value: object, letter: bool) -> object:
    """(p23/c23) ``value`` with every character past ASCII in its strings (a dict's keys, a set's items
    too) stood in for (:func:`_ascii_stand_in`). Raises ValueError where two keys or items become one
    (the twin would hold fewer: no reading of the characters makes that input)."""
    if isinstance(value, str):
        return "".join(c if c.isascii() else _ascii_stand_in(c, letter) for c in value)
    if isinstance(value, list):
        return [_ascii_replaced(v, letter) for v in value]
    if isinstance(value, tuple):
        return tuple(_ascii_replaced(v, letter) for v in value)
    out: dict[object, object] | set[object] | frozenset[object]
    if isinstance(value, dict):
        out = {_ascii_replaced(k, letter): _ascii_replaced(v, letter) for k, v in value.items()}
    elif isinstance(value, set | frozenset):
        out = type(value)(_ascii_replaced(v, letter) for v in value)
    else:
        return value
    if len(out) != len(value):
        raise ValueError("two keys or items stand for one")
    return out


def _with_ascii_twins(
    sections: Sequence[list[tuple[str, tuple[int, ...]]]], taken: set[str]
) -> tuple[list[list[tuple[str, tuple[int, ...]]]], list[tuple[str, str, str]]]:
    """(p23/c23) ``sections`` (the inputs near the cases, past their range, widening their domain) with
    the ASCII twins of each input holding a character past ASCII put in its own section (smallest first,
    each with the case it was made from), and the (input, letter twin, other twin) texts: the twins of
    :data:`_P23_GENERATION`. A twin already in the plan is paired, not asked twice."""
    seen = set(taken)
    triples: list[tuple[str, str, str]] = []
    out: list[list[tuple[str, tuple[int, ...]]]] = []
    for section in sections:
        added: list[tuple[str, tuple[int, ...]]] = []
        for text, made_from in section:
            value = pyast.literal_eval(text)
            if not isinstance(value, tuple) or AsciiText().admits(value):
                continue
            try:
                twins = [_ascii_replaced(value, letter) for letter in (True, False)]
            except (ValueError, TypeError):  # keys that collide, or turn unhashable: no twin
                continue
            texts = [repr(t) for t in twins]
            if not all(_is_input_literal(t, w) for t, w in zip(texts, twins, strict=True)):
                continue
            triples.append((text, texts[0], texts[1]))
            for twin in texts:
                if twin not in seen:
                    seen.add(twin)
                    added.append((twin, made_from))
        out.append(sorted([*section, *added], key=lambda item: (len(item[0]), item[0])))
    return out, triples


def _twin_positions(
    inputs: Sequence[str], triples: Sequence[tuple[str, str, str]]
) -> tuple[tuple[int, int, int], ...]:
    """(p23/c23) The plan positions of each (input, letter twin, other twin) laid: each text's first."""
    first: dict[str, int] = {}
    for pos, text in enumerate(inputs):
        first.setdefault(text, pos)
    return tuple(
        (first[a], first[b], first[c]) for a, b, c in triples if a in first and b in first and c in first
    )


@dataclass(frozen=True)
class _Widened:
    """(p14/c14) How one script's letters (``pool``: class -> letters) widen a string: one or two letters
    replaced, or with ``words`` a whole word (:func:`_wider_letter`, :func:`_wider_word`)."""

    pool: dict[str, str]
    words: bool

    def holds(self, s: object) -> bool:
        return isinstance(s, str) and any(c.isalpha() and _char_class(c) in self.pool for c in s)

    def change(self, s: object, rng: random.Random) -> str:
        assert isinstance(s, str)
        return _wider_word(s, self.pool, rng) if self.words else _wider_letter(s, self.pool, rng)


def _wider_letter(s: str, pool: dict[str, str], rng: random.Random) -> str:
    """(p14/c14) ``s`` with one or two of its cased letters replaced by letters of ``pool`` of their case."""
    chars = list(s)
    at = [k for k, c in enumerate(chars) if c.isalpha() and _char_class(c) in pool]
    for k in rng.sample(at, min(len(at), rng.choice((1, 1, 2)))):
        chars[k] = rng.choice(pool[_char_class(chars[k])])
    return "".join(chars)


def _one_word_widened(value: object, widen: _Widened, rng: random.Random) -> object | None:
    """(p14/c14) ``value`` (a string, or a flat list or tuple of them) with one word widened
    (:func:`_wider_word`): one string of a list, one word of a string, and of them one shorter than the
    longest where there is one, so its length in bytes may pass the longest's while its length in code
    points stays below it (a word of every string widened alike keeps their order by bytes). None: no
    string there holds a cased letter."""
    if isinstance(value, str):
        return widen.change(value, rng) if widen.holds(value) else None
    if not isinstance(value, list | tuple):
        return None
    at = [k for k, e in enumerate(value) if widen.holds(e)]
    if not at:
        return None
    longest = max(len(e) for e in value if isinstance(e, str))
    k = rng.choice([k for k in at if len(value[k]) < longest] or at)
    items = list(value)
    items[k] = widen.change(items[k], rng)
    return type(value)(items)


def _wider_word(s: str, pool: dict[str, str], rng: random.Random) -> str:
    """(p14/c14) ``s`` with one word (a run of letters holding a cased one; one shorter than the longest
    such word where there is one) made of letters of ``pool``, each of the case of the letter it replaces
    (a letter of no case stays)."""
    runs: list[tuple[int, int]] = []
    k = 0
    while k < len(s):
        if not s[k].isalpha():
            k += 1
            continue
        lo = k
        while k < len(s) and s[k].isalpha():
            k += 1
        if any(_char_class(c) in pool for c in s[lo:k]):
            runs.append((lo, k))
    longest = max(hi - lo for lo, hi in runs)
    lo, hi = rng.choice([(lo, hi) for lo, hi in runs if hi - lo < longest] or runs)
    word = "".join(rng.choice(pool[_char_class(c)]) if _char_class(c) in pool else c for c in s[lo:hi])
    return s[:lo] + word + s[hi:]


def _admits_float(column: Sequence[object]) -> bool:
    leaves = _leaves(column) or []
    floats = [v for v in leaves if type(v) is float]
    return bool(floats) and not any("e" in repr(v) for v in floats)


def _with_exponent(value: object, column: Sequence[object], rng: random.Random) -> object | None:
    def moved(v: object, rng: random.Random) -> float:
        assert isinstance(v, float)
        # the value's own digits at a magnitude that prints with an exponent: 1.33 -> 1.33e+17 (large
        # only: a tiny float is no whole number, yet 3.5e-06 has no '.' for a reference that tests
        # str(x) for one, and a correct program may well read it otherwise)
        shift = rng.randint(16, 18) - math.floor(math.log10(abs(v)))
        new = float(f"{v!r}e{shift}")
        return new if "e" in repr(new) else v

    return _widen_leaves(value, lambda v: type(v) is float and v != 0 and math.isfinite(v), moved, rng)


#: (p6/c6) the kinds of input that widen the cases' domain: a name, whether an argument position admits
#: it (from the values every case passes there) and how to widen a value there (None: this one cannot be)
_WIDENINGS: tuple[
    tuple[
        str,
        Callable[[Sequence[object]], bool],
        Callable[[object, Sequence[object], random.Random], object | None],
    ],
    ...,
] = (
    ("repeat", _admits_repeat, _repeated),
    ("case", _admits_case, _other_case),
    ("letters", _admits_letters, _other_letters),
    ("float", _admits_float, _with_exponent),
)


#: (p9/c9) how far a float made from an int lies from it (a fraction a decimal or two print exactly)
_FRACTIONS = (0.5, 0.25, 0.75, 0.4, 0.6, 0.1, 0.9)
#: (p9/c9) the decimal exponents of the tiny floats drawn: below 1e-4 (where repr turns to an exponent)
#: down to where a test against an epsilon of any usual size (1e-6, 1e-9, 1e-12) shows
_TINY_EXPONENTS = (5, 20)


def _number_column(column: Sequence[object]) -> list[int | float] | None:
    """The numbers at one argument position (flat lists' elements in place of those), None where some
    leaf is no number (or no case holds one)."""
    leaves = _leaves(column)
    if not leaves or any(isinstance(v, bool) or not isinstance(v, int | float) for v in leaves):
        return None
    return leaves  # type: ignore[return-value]


def _as_float(x: int, negative: bool, rng: random.Random) -> float:
    """A float that is no whole number, a fraction from ``x`` (never below zero from zero unless the
    cases hold negatives: an int past zero is at least 1 away from it)."""
    f = rng.choice(_FRACTIONS)
    down = rng.random() < 0.5 if x != 0 or negative else False
    return round(x - f if down else x + f, 2)


def _as_int(v: float, zero: bool, rng: random.Random) -> int:
    """An int next to ``v`` (not zero unless ``zero``, never of the other sign)."""
    n = math.floor(v) if rng.random() < 0.5 else math.ceil(v)
    if n == 0 and not zero:
        n = -1 if v < 0 else 1
    return n


def _as_whole(v: int | float, zero: bool, rng: random.Random) -> float:
    """A whole float: an int as a float, or a float moved to the whole number next to it."""
    if isinstance(v, int):
        return float(v)
    return float(_as_int(v, zero, rng))


def _tiny(v: int | float, rng: random.Random) -> float:
    """A non-zero float below 1e-4 of ``v``'s sign, whose repr holds a '.' besides its exponent (a
    reference that tests ``str(x)`` for one reads ``1e-06`` as a whole number; ``1.5e-06`` as no such)."""
    mantissa = rng.choice([m for m in range(11, 100) if m % 10])
    value = float(f"{mantissa / 10}e-{rng.randint(*_TINY_EXPONENTS)}")
    return -value if v < 0 else value


def _one_case(column: Sequence[object]) -> bool:
    """Strings whose letters are all of one case (where both show, p6/c6 widen them already)."""
    chars = _column_chars(column) or ""
    cased = [c for c in chars if c.swapcase() != c and len(c.swapcase()) == 1]
    return bool(cased) and (all(c.islower() for c in cased) or all(c.isupper() for c in cased))


def _admissions(
    column: Sequence[object], admits: Admits
) -> list[tuple[str, Callable[[object], bool], Callable[[object, random.Random], object]]]:
    """(p9/c9) The kinds of widening one argument position takes (a name, which leaves, how to change
    one), from what the statement admits there and what the cases pass there."""
    out: list[tuple[str, Callable[[object], bool], Callable[[object, random.Random], object]]] = []
    numbers = _number_column(column)
    if numbers is not None:
        negative = any(v < 0 for v in numbers)
        zero = admits.zero or any(v == 0 for v in numbers)
        # a list's elements admit floats by what the statement calls them, a lone number by its own
        floats = admits.float_items if any(isinstance(v, list | tuple) for v in column) else admits.floats

        def is_int(v: object) -> bool:
            return type(v) is int

        def is_float(v: object) -> bool:
            return type(v) is float and math.isfinite(v)

        def as_number(v: object) -> bool:
            return is_float(v) or (floats and is_int(v))

        if floats and any(is_int(v) for v in numbers):
            out.append(("float", is_int, lambda v, r: _as_float(v, negative, r)))  # type: ignore[arg-type]
        if admits.ints and any(is_float(v) for v in numbers):
            out.append(("int", is_float, lambda v, r: _as_int(v, zero, r)))  # type: ignore[arg-type]
        if any(as_number(v) for v in numbers):
            out.append(("whole", as_number, lambda v, r: _as_whole(v, zero, r)))  # type: ignore[arg-type]
            out.append(("tiny", as_number, _tiny))  # type: ignore[arg-type]
        if admits.zero and all(is_int(v) for v in numbers) and not any(v == 0 for v in numbers):
            out.append(("zero", is_int, lambda v, r: 0))
    elif admits.case and _one_case(column):

        def cased(s: object) -> bool:
            return isinstance(s, str) and any(_flips(c) for c in s)

        out.append(("case", cased, _mixed_case))  # type: ignore[arg-type]
    return out


def _flips(c: str) -> bool:
    """Whether a character has one other case that maps back to it (``'ß'`` has none: 'SS')."""
    return c.swapcase() != c and len(c.swapcase()) == 1 and c.swapcase().swapcase() == c


def _mixed_case(s: str, rng: random.Random) -> str:
    """``s`` with letters in the other case: mostly one of them (a letter beside others of its own
    case shows what a program that folds case confuses), else some at random, else one word."""
    at = [k for k, c in enumerate(s) if _flips(c)]
    roll = rng.random()
    if roll < 0.5:
        chosen = {rng.choice(at)}
    elif roll < 0.75:
        chosen = {k for k in at if rng.random() < 0.5} or {rng.choice(at)}
    else:
        k = rng.choice(at)
        lo, hi = k, k
        while lo > 0 and s[lo - 1].isalpha():
            lo -= 1
        while hi < len(s) and s[hi].isalpha():
            hi += 1
        chosen = {j for j in at if lo <= j < hi}
    return "".join(c.swapcase() if k in chosen else c for k, c in enumerate(s))


def _generate_admitted(
    cases: Sequence[object],
    admits: tuple[Admits, ...],
    rng: random.Random,
    taken: set[str],
    domain: Callable[[Sequence[object], set[int]], bool] | None = None,
) -> list[tuple[str, tuple[int, ...]]]:
    """(p9/c9) Inputs the task's statement admits though no case shows them, each with the case it was
    made from: every earlier plan drew its numbers and letters of the kinds the cases pass at each
    position, so a program wrong only on another was accepted. Per argument position, from what the
    statement admits there (:func:`streams.probe.statement.stated_admits`: the entry point's annotation
    and its docstring, never a program), up to :data:`ADMITTED_PER_KIND` inputs of each kind:

    - ``float``: an int made a float that is no whole number (``2`` -> ``2.5``) where the position
      admits floats (``float``; untyped where no integer is named; a list's elements where the statement
      calls them numbers: :class:`streams.probe.statement.Admits`);
    - ``int``: a float made the int next to it where ints are admitted (``float`` is: the numeric tower);
    - ``whole``: a whole float (``3.0``) from an int or a float where floats are admitted;
    - ``tiny``: a non-zero float below 1e-4 (``3.5e-06``), of its value's sign, where floats are;
    - ``zero``: zero where ints are admitted, no case holds zero there and nothing in the statement
      says the argument is positive (a word, or a bound it states);
    - ``case``: letters in the other case where the cases hold letters of one case only and the
      statement says nothing of case (where they hold both, :func:`_generate_wide` does it).

    Signs stay those the cases show (no negative where none is), and every relation the cases keep is
    kept (:class:`_Invariants`, :class:`_Sizes`, ``domain``); an integer equal to another argument's
    length is never changed. Judged as the inputs that widen the cases' domain (``ProbePlan.wide``): the
    reference decides what each says (one it refuses says nothing, filter v10 leaves out one that
    breaks a stated bound), a program may refuse one, and a value that differs from the reference's is
    wrong."""
    tuples = [c if isinstance(c, tuple) else (c,) for c in cases]
    arity = min(min(len(t) for t in tuples), len(admits))
    columns = [[t[i] for t in tuples] for i in range(arity)]
    inputs = _Made(tuples, taken, domain)
    invariants = _Invariants(tuples, seeded=True)
    ordered = {
        i
        for i in range(arity)
        if all(isinstance(t[i], list) and _sorted(t[i]) for t in tuples)  # type: ignore[arg-type]
        and any(len(t[i]) > 1 for t in tuples)  # type: ignore[arg-type]
    }
    kinds: dict[
        str, list[tuple[int, Callable[[object], bool], Callable[[object, random.Random], object]]]
    ] = {}
    for i in range(arity):
        if i in inputs.sizes.counts:
            continue
        for name, pick, change in _admissions(columns[i], admits[i]):
            kinds.setdefault(name, []).append((i, pick, change))
    for name in ("float", "int", "whole", "tiny", "zero", "case"):
        positions = kinds.get(name, [])
        if not positions:
            continue
        made = 0
        for _ in range(ADMITTED_PER_KIND * _ATTEMPTS_PER_INPUT):
            if made >= ADMITTED_PER_KIND:
                break
            b = rng.randrange(len(tuples))
            candidate = list(tuples[b])
            chosen = [p for p in positions if rng.random() < 0.5] or [rng.choice(positions)]
            changed = False
            for i, pick, change in chosen:
                value = _widen_leaves(candidate[i], pick, change, rng)
                if value is None:
                    continue
                if i in ordered and isinstance(value, list):
                    value = sorted(value)  # type: ignore[type-var]
                candidate[i], changed = value, True
            if changed and inputs.take(candidate, b, invariants):
                made += 1
    return inputs.out


class _Sizes:
    """What the cases show about the sizes of their arguments, for inputs longer than all of them: per
    argument position every case passes a string, list, dict or set at, the longest it shows
    (:class:`_Sized`); the positions whose lengths agree in every case (lengthened alike); the integer
    positions that equal another argument's length in every case (kept equal to it).

    With ``related`` (p7/c7) a group also holds the positions whose lengths differ from its first one's
    by one amount in every case, where :data:`RELATION_CASES` cases at least show it (``offsets``:
    ``len(operand) == len(operator) + 1``): lengthened together, each to the group's new length plus its
    own difference. Lengthened one at a time (p4 to p6) they broke the relation, and the filter leaves
    every input that breaks a relation so many cases keep out (``streams.noise.probe.outside_cases``):
    no input longer than the cases' was judged at all where two arguments' lengths are tied."""

    def __init__(self, tuples: Sequence[tuple[object, ...]], *, related: bool = False) -> None:
        arity = min(len(t) for t in tuples)
        self.positions: dict[int, _Sized] = {}
        for i in range(arity):
            sized = _Sized.of([t[i] for t in tuples])
            if sized is not None:
                self.positions[i] = sized
        several = len(tuples) >= 2
        # positions whose lengths are equal in every case (and not all one): one length for all of them
        self.groups: list[list[int]] = []
        #: position -> its length minus the length of its group's first position, in every case
        self.offsets: dict[int, int] = {}
        #: the first positions of the groups a length relation joined (p7/c7; lengthened together)
        self.related: set[int] = set()
        for i in sorted(self.positions):
            group = next((g for g in self.groups if _same_lengths(tuples, g[0], i, several)), None)
            if group is None and related:
                group = next((g for g in self.groups if _length_offset(tuples, g[0], i) is not None), None)
                if group is not None:
                    self.related.add(group[0])
            if group is None:
                self.groups.append([i])
                self.offsets[i] = 0
            else:
                group.append(i)
                self.offsets[i] = _length_offset(tuples, group[0], i) or 0
        self.counts = {
            k: j
            for k in range(arity)
            for j in self.positions
            if several and all(type(t[k]) is int and t[k] == len(t[j]) for t in tuples)  # type: ignore[arg-type]
        }

    def far_reach(self) -> int:
        """The most elements a far input's sized argument may have (:meth:`longer`), over the groups."""
        return max(
            min(
                _FAR_MAX_LENGTH,
                max(FAR_REACH * max(self.positions[i].longest - self.offsets[i] for i in g), _FAR_MIN_LENGTH),
            )
            for g in self.groups
        )

    def keeps(self, candidate: Sequence[object]) -> bool:
        """Whether every list argument every case passes sorted is sorted, and every one each case
        passes as a permutation of 1..n is one (numbers moved or scaled past the cases' range
        included: '[39, 27, 25]' is no input of a task whose lists are all sorted, '[3, 6]' none of
        one whose lists are all 1..n)."""
        return all(
            isinstance(value := candidate[i], list)
            and (not sized.sorted or _sorted(value))
            and (not sized.permutation or sorted(value) == list(range(1, len(value) + 1)))  # type: ignore[type-var]
            for i, sized in self.positions.items()
            if sized.sorted or sized.permutation
        )

    def longer(self, base: tuple[object, ...], rng: random.Random) -> list[object] | None:
        """``base`` with some of its sized arguments made longer (None: none could be)."""
        candidate = list(base)
        chosen = [g for g in self.groups if rng.random() < 0.7] or [rng.choice(self.groups)]
        for group in chosen:
            shown = max(self.positions[i].longest - self.offsets[i] for i in group)
            top = min(_FAR_MAX_LENGTH, max(FAR_REACH * shown, _FAR_MIN_LENGTH))
            n = rng.randint(min(top, max(shown + 1, 2 * shown)), top)
            if group[0] in self.related:
                made = self._together(base, group, n, rng)
                if made is None:
                    return None
                for i, value in zip(group, made, strict=True):
                    candidate[i] = value
                continue
            for i in group:
                value = self.positions[i].longer(candidate[i], n, rng)
                if value is None:
                    return None
                candidate[i] = value
        for k, j in self.counts.items():
            candidate[k] = len(candidate[j])  # type: ignore[arg-type]
        return candidate

    def _together(
        self, base: tuple[object, ...], group: list[int], n: int, rng: random.Random
    ) -> list[object] | None:
        """The group's arguments of ``base``, each made ``n`` plus its offset long (None: they cannot be
        made so). A value that falls short (a distinct list out of elements) sets a shorter length for
        all, tried once more; lengths that still disagree are no input of the cases' domain."""
        for _ in range(2):
            made = [self.positions[i].longer(base[i], n + self.offsets[i], rng) for i in group]
            if any(value is None for value in made):
                return None
            reached = [len(value) - self.offsets[i] for i, value in zip(group, made, strict=True)]  # type: ignore[arg-type]
            if len(set(reached)) == 1:
                return made
            n = min(reached)
            if any(n + self.offsets[i] <= self.positions[i].longest for i in group):
                return None
        return None


def _length_offset(tuples: Sequence[tuple[object, ...]], i: int, j: int) -> int | None:
    """``len(j) - len(i)``, where it is one amount in every case and at least :data:`RELATION_CASES`
    cases show it (None: not so)."""
    if len(tuples) < RELATION_CASES:
        return None
    diffs = {len(t[j]) - len(t[i]) for t in tuples}  # type: ignore[arg-type]
    return diffs.pop() if len(diffs) == 1 else None


def _same_lengths(tuples: Sequence[tuple[object, ...]], i: int, j: int, several: bool) -> bool:
    return (
        several
        and all(len(t[i]) == len(t[j]) for t in tuples)  # type: ignore[arg-type]
        and any(len(t[i]) > 1 for t in tuples)  # type: ignore[arg-type]
    )


@dataclass
class _Sized:
    """The values every case passes at one position, of one sized kind, and how to make one longer
    from what they hold: a string with characters of the classes around them (words from the cases'
    words where they are spaced) or with pieces of the cases' strings joined on, a list with the cases'
    elements (sorted, distinct, 1..n, rows of one length where every case's is), a dict with the cases'
    keys and values, a set with the cases' elements."""

    kind: Literal["str", "list", "dict", "set"]
    values: list[object]
    longest: int
    elements: list[object] = field(default_factory=list)
    keys: list[object] = field(default_factory=list)
    chars: str = ""
    words: list[str] = field(default_factory=list)
    spaced: bool = False
    sorted: bool = False
    distinct: bool = False
    permutation: bool = False
    repeats: int = 0
    #: lists of lists: the rows' own profile (their elements), and whether each case's rows share a length
    rows: _Sized | None = None
    rectangular: bool = False

    @staticmethod
    def of(values: list[object]) -> _Sized | None:
        kinds = {type(v) for v in values}
        if kinds == {str}:
            texts = [v for v in values if isinstance(v, str)]
            words = sorted({w for x in texts for w in x.split()})
            spaced = any(len(x.split()) > 1 for x in texts)
            chars = "".join(sorted({c for x in texts for c in x}))
            return _Sized("str", values, max(map(len, texts)), chars=chars, words=words, spaced=spaced)
        if kinds == {list}:
            lists = [v for v in values if isinstance(v, list)]
            elements = [e for x in lists for e in x]
            if not elements:
                return None
            rows = None
            rectangular = False
            if all(isinstance(e, list) for e in elements):
                rows = _Sized.of(elements)
                rectangular = all(len({len(r) for r in x}) <= 1 for x in lists)
            return _Sized(
                "list",
                values,
                max(map(len, lists)),
                elements=elements,
                sorted=all(_sorted(x) for x in lists) and any(len(x) > 1 for x in lists),
                distinct=all(_distinct(x) for x in lists),
                permutation=all(
                    all(type(e) is int for e in x) and sorted(x) == list(range(1, len(x) + 1))  # type: ignore[type-var]
                    for x in lists
                ),
                repeats=max(_repeats(x) for x in lists),
                rows=rows,
                rectangular=rectangular,
            )
        if kinds == {dict}:
            dicts = [v for v in values if isinstance(v, dict)]
            keys = [k for d in dicts for k in d]
            if not keys:
                return None
            elements = [x for d in dicts for x in d.values()]
            return _Sized("dict", values, max(map(len, dicts)), elements=elements, keys=keys)
        if kinds == {set}:
            sets = [v for v in values if isinstance(v, set)]
            elements = [e for x in sets for e in x]
            if not elements:
                return None
            return _Sized("set", values, max(map(len, sets)), elements=elements, distinct=True)
        return None

    def longer(self, value: object, n: int, rng: random.Random) -> object | None:
        """``value`` with ``n`` elements (characters, items, keys), or None where it cannot be made so."""
        if self.kind == "str" and isinstance(value, str):
            return self._longer_str(value, n, rng)
        if self.kind == "list" and isinstance(value, list):
            return self._longer_list(value, n, rng)
        if self.kind == "dict" and isinstance(value, dict):
            pool = _unique([k for k in self.keys if _hashable(k) and k not in value])
            if len(pool) < n - len(value):
                pool += _new_keys(self.keys, n - len(value) - len(pool), set(map(repr, (*value, *pool))), rng)
            rng.shuffle(pool)
            out = dict(value)
            for k in pool[: n - len(value)]:
                out[k] = rng.choice(self.elements or list(value.values()))
            return out if len(out) > self.longest else None
        if self.kind == "set" and isinstance(value, set):
            pool = [e for e in _unique(self.elements) if _hashable(e) and e not in value]
            pool += _more_ints(self.elements, n, {repr(e) for e in (*value, *pool)})
            rng.shuffle(pool)
            grown = value | set(pool[: n - len(value)])
            return grown if len(grown) > self.longest else None
        return None

    def _longer_str(self, s: str, n: int, rng: random.Random, *, beyond: bool = True) -> str | None:
        if self.spaced and self.words:
            words = s.split()
            while len(" ".join(words)) < n:
                words.insert(rng.randint(0, len(words)), rng.choice(self.words))
            return " ".join(words)
        if rng.random() < 0.3 and any(self.values):
            # the cases' strings here joined on (balanced brackets stay balanced)
            out = s
            while len(out) < n:
                out += rng.choice([v for v in self.values if isinstance(v, str) and v])
            return out
        # characters of the class of a neighbour (letters and digits only: a format's separators,
        # brackets and white space stay where they are: '1/5' may become '17/503', never '1//5')
        pool = self.chars or "a"
        out = s
        for _ in range(4 * n):
            if len(out) >= n:
                break
            i = rng.randint(0, len(out))
            near = out[max(0, i - 1) : i + 1] or rng.choice(pool)
            cls = _char_class(rng.choice(near))
            same = [c for c in pool if _char_class(c) == cls] if cls in ("digit", "lower", "upper") else []
            if same:
                out = out[:i] + rng.choice(same) + out[i:]
        return out if len(out) > self.longest or not beyond else None

    def _longer_list(self, xs: list[object], n: int, rng: random.Random) -> list[object] | None:
        if self.permutation:
            out: list[object] = list(range(1, n + 1))
            if not self.sorted:
                rng.shuffle(out)
            return out
        if self.rows is not None and xs and rng.random() < 0.5:
            # every row longer than the cases' longest row, all to one length (rows of one length stay so)
            width = max(self.rows.longest + 1, n // 2)
            made = [self.rows.longer(r, width, rng) for r in xs]
            return None if any(r is None for r in made) else made
        grown = self._grown_list(xs, n, rng)
        return grown if grown is not None and len(grown) > self.longest else None

    def _grown_list(self, xs: list[object], n: int, rng: random.Random) -> list[object] | None:
        """``xs`` with the cases' elements inserted up to ``n`` (fewer where they run out), every
        relation of the cases' lists kept."""
        rectangular = self.rows is not None and self.rectangular
        widths = {len(r) for r in xs if isinstance(r, list)} if rectangular else set()
        pool = [e for e in self.elements if not widths or (isinstance(e, list) and len(e) in widths)]
        pool = _unique(pool) + _more_ints(pool, n, {repr(e) for e in pool})
        out = list(xs)
        present = {repr(e) for e in out}
        repeats = _repeats(out)
        for _ in range(4 * n):
            if len(out) >= n or not pool:
                break
            e = rng.choice(pool)
            if repr(e) in present:
                if self.distinct or repeats >= self.repeats:
                    continue
                repeats += 1
            present.add(repr(e))
            out.insert(rng.randint(0, len(out)), e)
        if self.sorted:
            try:
                out = sorted(out)  # type: ignore[type-var]
            except TypeError:
                return None
        return out

    def resized(self, value: object, n: int, rng: random.Random) -> object | None:
        """(p8/c8) ``value`` (a list or a string) made ``n`` long (a string about so: whole words or the
        cases' pieces may overshoot it, the caller reads the length it got), shorter or longer, keeping
        what the cases keep there: a shorter one keeps a subsequence of its elements (sorted and
        distinct stay so; 1..n is drawn again), a string its format's separators and white space (its
        letters and digits are dropped, or added as :meth:`longer` adds them; a spaced one drops or
        adds whole words where that reaches ``n``). None where it cannot be made so."""
        if self.kind == "list" and isinstance(value, list):
            if self.permutation:
                out: list[object] = list(range(1, n + 1))
                if not self.sorted:
                    rng.shuffle(out)
                return out
            if n <= len(value):
                return [value[k] for k in sorted(rng.sample(range(len(value)), n))]
            return self._grown_list(value, n, rng)
        if self.kind != "str" or not isinstance(value, str):
            return None
        if n > len(value):
            return self._longer_str(value, n, rng, beyond=False)
        if self.spaced and self.words:
            words = value.split()
            while words and len(" ".join(words)) > n:
                words.pop(rng.randrange(len(words)))
            return " ".join(words)
        at = [k for k, c in enumerate(value) if _char_class(c) in ("digit", "lower", "upper")]
        if len(value) - n > len(at):
            return None
        dropped = set(rng.sample(at, len(value) - n))
        return "".join(c for k, c in enumerate(value) if k not in dropped)


def _unique(items: list[object]) -> list[object]:
    """``items`` without repeats (by repr), in order."""
    seen: set[str] = set()
    out = []
    for x in items:
        if repr(x) not in seen:
            seen.add(repr(x))
            out.append(x)
    return out


def _more_ints(elements: list[object], n: int, taken: set[str]) -> list[object]:
    """Where the elements are integers and fewer than ``n`` distinct ones are at hand: further integers
    within the cases' range, then just past its top (a distinct list needs as many as it is long)."""
    ints = [e for e in elements if type(e) is int]
    if not ints or len(ints) != len(elements) or len(taken) >= n:
        return []
    lo, hi = min(ints), max(ints)  # type: ignore[type-var]
    out: list[object] = []
    value = lo
    while len(taken) + len(out) < n and value <= max(hi, lo + 4 * n):  # type: ignore[operator]
        if repr(value) not in taken:
            out.append(value)
        value += 1  # type: ignore[operator]
    return out


def _new_keys(keys: list[object], count: int, taken: set[str], rng: random.Random) -> list[object]:
    """``count`` keys of the kind the cases' dicts use that none of them holds: strings of the keys'
    characters (as long as theirs, or one longer), or integers past the keys' range."""
    out: list[object] = []
    texts = [k for k in keys if isinstance(k, str) and k]
    ints = [k for k in keys if type(k) is int]
    for _ in range(8 * count):
        if len(out) >= count:
            break
        if texts:
            chars = "".join(sorted({c for k in texts for c in k}))
            # one character longer at most: single letters run out after the few the cases use
            size = rng.randint(min(map(len, texts)), max(map(len, texts)) + 1)
            key: object = "".join(rng.choice(chars) for _ in range(size))
        elif ints:
            key = max(ints) + 1 + len(out)  # type: ignore[type-var, operator]
        else:
            return out
        if repr(key) not in taken:
            taken.add(repr(key))
            out.append(key)
    return out


def _scaled(value: object, factor: int, depth: int = 0) -> object:
    """Every integer of ``value`` multiplied by ``factor``: an integer argument, or one in a flat list,
    tuple, set or dict of them (booleans, floats and strings kept). Numbers inside nested containers (a
    grid of the numbers 1..N², a list of pairs) are labels more often than magnitudes: kept."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value * factor
    if depth > 0:
        return value
    if isinstance(value, list | tuple | set | frozenset):
        return type(value)(_scaled(v, factor, depth + 1) for v in value)
    if isinstance(value, dict):
        return {k: _scaled(v, factor, depth + 1) for k, v in value.items()}
    return value


def _kept_digits(factor: int, digits: random.Random | None) -> int:
    """(p11/c11) ``factor``, or where it is one of :data:`DIGITS_KEPT_FACTORS` and ``digits`` is given, a
    whole factor drawn from ``digits`` just above it (up to a tenth more, at least 3 choices, never a
    multiple of 10), so the numbers it makes keep their significant digits (10 -> 11..13, 100 -> 101..109,
    1000 -> 1001..1099)."""
    if digits is None or factor not in DIGITS_KEPT_FACTORS:
        return factor
    return digits.choice([f for f in range(factor + 1, factor + max(3, factor // 10) + 1) if f % 10])


def _largest_scaled(args: tuple[object, ...]) -> int:
    """The largest magnitude among the integers :func:`_scaled` multiplies (0: none)."""
    out = 0
    for v in args:
        items = (
            v.values() if isinstance(v, dict) else v if isinstance(v, list | tuple | set | frozenset) else [v]
        )
        for x in items:
            if isinstance(x, int) and not isinstance(x, bool):
                out = max(out, abs(x))
    return out


def _beyond(value: object, p: _Profile, rng: random.Random, depth: int) -> object:
    """``value`` with some of its numbers moved past the cases' range (see :func:`_generate_far`): a
    number argument, or numbers of a flat list, tuple or dict (nested containers kept, as in
    :func:`_scaled`)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return _far_int(p, rng) if rng.random() < 0.7 else value
    if isinstance(value, float):
        return _far_float(p, rng) if rng.random() < 0.7 else value
    if depth > 0:
        return value
    if isinstance(value, list | tuple):
        return type(value)(_beyond(v, p, rng, depth + 1) for v in value)
    if isinstance(value, dict):
        return {k: _beyond(v, p, rng, depth + 1) for k, v in value.items()}
    return value


def _far_int(p: _Profile, rng: random.Random) -> int:
    lo, hi = (min(p.ints), max(p.ints)) if p.ints else (0, 10)
    reach = FAR_REACH * max(abs(lo), abs(hi), hi - lo, 2)
    # past the top where some case is not negative, past the bottom where some case is: no sign (and no
    # zero) the cases never show
    up = hi >= 0 and (lo >= 0 or rng.random() < 0.5)
    return rng.randint(hi + 1, hi + reach) if up else rng.randint(lo - reach, lo - 1)


def _far_float(p: _Profile, rng: random.Random) -> float:
    lo, hi = (min(p.floats), max(p.floats)) if p.floats else (0.0, 1.0)
    reach = FAR_REACH * max(abs(lo), abs(hi), hi - lo, 1.0)
    up = hi >= 0 and (lo >= 0 or rng.random() < 0.5)
    new = rng.uniform(hi, hi + reach) if up else rng.uniform(lo - reach, lo)
    if p.precise and rng.random() < 0.5:
        return new
    return round(new, max(1, min(p.float_decimals, 6)))


class _Invariants:
    """What every case of the task keeps, which a generated input must keep too: an input outside the
    task's domain (unbalanced brackets where every case is balanced, two strings of different lengths
    where every case pairs equal ones) has no right answer, and a correct program may well answer it
    otherwise than the reference does. Only relations every case shows are kept."""

    _BRACKETS = ("()", "[]", "{}", "<>")

    def __init__(self, tuples: Sequence[tuple[object, ...]], *, seeded: bool = False) -> None:
        arity = min(len(t) for t in tuples)
        # (seeded plans) a list argument repeats no more of its elements than some case's list does:
        # two equal elements where the cases show at most one tie the answer of 'the closest pair', 'the
        # second smallest', 'the most common', which the reference breaks one way and a correct program
        # may break another
        lists = [i for i in range(arity) if all(isinstance(t[i], list) for t in tuples)]
        self.repeats = {i: max(_repeats(t[i]) for t in tuples) for i in lists} if seeded else {}
        sized = [i for i in range(arity) if all(isinstance(t[i], str | list | tuple) for t in tuples)]
        ints = [
            i
            for i in range(arity)
            if all(isinstance(t[i], int) and not isinstance(t[i], bool) for t in tuples)
        ]
        several = len(tuples) >= 2
        self.arity = arity
        self.same_length = [
            (i, j)
            for i in sized
            for j in sized
            if i < j
            and several
            and all(len(t[i]) == len(t[j]) for t in tuples)  # type: ignore[arg-type]
            and any(len(t[i]) > 1 for t in tuples)  # type: ignore[arg-type]
        ]
        self.at_most_length = [
            (i, j, strict)
            for i in ints
            for j in sized
            for strict in (True, False)
            if several
            and all(
                t[i] < len(t[j]) if strict else t[i] <= len(t[j])  # type: ignore[arg-type, operator]
                for t in tuples
            )
        ]
        strings = [i for i in range(arity) if all(isinstance(t[i], str) for t in tuples)]
        self.balanced = [
            (i, pair)
            for i in strings
            for pair in self._BRACKETS
            if any(pair[0] in t[i] for t in tuples)  # type: ignore[operator]
            and all(_balanced(t[i], pair) for t in tuples)  # type: ignore[arg-type]
        ]
        shapes = {i: {_shape(t[i]) for t in tuples} for i in strings}  # type: ignore[arg-type]
        self.shaped = {i: next(iter(v)) for i, v in shapes.items() if several and len(v) == 1}
        # how the cases space their words: no string of any case starts or ends with white space, or
        # holds two in a row ('a b' never ' a  b'); where some case has several words, none is longer
        # than the cases' longest (single letters stay single letters)
        texts: dict[int, list[str]] = {i: [x for t in tuples if isinstance(x := t[i], str)] for i in strings}
        self.trimmed = [i for i, col in texts.items() if all(x == x.strip() for x in col)]
        self.single_spaced = [i for i, col in texts.items() if not any(_double_space(x) for x in col)]
        self.word_max = {
            i: max(len(w) for x in col for w in x.split())
            for i, col in texts.items()
            if any(len(x.split()) > 1 for x in col)
        }

    def _spacing(self) -> list[tuple[int, int | None]]:
        positions = {*self.trimmed, *self.single_spaced, *self.word_max}
        return [(i, self.word_max.get(i)) for i in sorted(positions)]

    def hold(self, candidate: Sequence[object]) -> bool:
        if len(candidate) < self.arity:
            return False
        try:
            return (
                all(len(candidate[i]) == len(candidate[j]) for i, j in self.same_length)  # type: ignore[arg-type]
                and all(
                    candidate[i] < len(candidate[j]) if strict else candidate[i] <= len(candidate[j])  # type: ignore[arg-type, operator]
                    for i, j, strict in self.at_most_length
                )
                and all(_balanced(candidate[i], pair) for i, pair in self.balanced)  # type: ignore[arg-type]
                and all(_shape(candidate[i]) == shape for i, shape in self.shaped.items())  # type: ignore[arg-type]
                and all(
                    _spaced(candidate[i], i in self.trimmed, i in self.single_spaced, most)
                    for i, most in self._spacing()
                )
                and all(_repeats(candidate[i]) <= most for i, most in self.repeats.items())
            )
        except TypeError:
            return False


#: the share of a check's calls, and how many at least, whose argument is exactly 1..n for every
#: generated input of a c4 plan to keep it so (see :class:`_CheckDomain`)
MOSTLY = 0.75
MOSTLY_MIN = 4


class _CheckDomain:
    """Relations a check-derived plan keeps beyond :class:`_Invariants`. A check's calls are few, often
    include an edge case outside the domain the others share, and every generated input is judged
    against the reference alone, so the plan stays close to the calls: a generated input keeps every
    relation the calls it was made from show at an argument position (the integers inside a nested
    argument distinct, or exactly 1..n, as in a grid of the numbers 1..N*N; rows of one length, or as
    many rows as columns), and a whole-number argument stays within the range all the calls use. An
    input outside the task's domain has no right answer (a grid with two 1s has no one 'path from the
    1'; base 1 is no base), and a correct program may answer it otherwise than the reference does.

    Since c4 (``mostly``), an argument that is exactly the integers 1..n in most calls (at least
    :data:`MOSTLY` of them, and :data:`MOSTLY_MIN` calls) is kept so in every generated input, even one
    made from the call that is not: such a list never arises by chance (distinct numbers do), so it is
    the task's domain, and the call outside it is the check's own edge case, which the check pins itself
    (it stays in the plan, judged as it is). An input made from it by changing an element has two equal
    values where the task promises none, and ties the reference breaks one way and a correct program
    another (HumanEval/129's grid ``[[1, 3], [3, 2]]``: ``[[1, 2], [3, 2]]`` has two cells '2')."""

    def __init__(self, tuples: Sequence[object], *, mostly: bool = False) -> None:
        rows = [t if isinstance(t, tuple) else (t,) for t in tuples]
        self.shown = [{i: _relations(v) for i, v in enumerate(t)} for t in rows]
        arity = min(len(t) for t in rows)
        #: argument position -> the relations every generated input keeps there, whatever its parents
        self.common: dict[int, set[str]] = {}
        if mostly:
            for i in range(arity):
                showing = sum("permutation" in shown[i] for shown in self.shown)
                if showing >= MOSTLY_MIN and showing >= MOSTLY * len(rows):
                    self.common[i] = {"permutation"}
        self.ranges: dict[int, tuple[int, int]] = {}
        for i in range(arity):
            column = [t[i] for t in rows]
            if len(column) >= 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in column):
                self.ranges[i] = (min(column), max(column))  # type: ignore[type-var, assignment]

    def hold(self, candidate: Sequence[object], parents: set[int]) -> bool:
        return self._hold(candidate, parents, within_range=True)

    def hold_beyond_range(self, candidate: Sequence[object], parents: set[int]) -> bool:
        """The relations alone, for an input meant to leave the calls' range (see :func:`_generate_far`)."""
        return self._hold(candidate, parents, within_range=False)

    def hold_admitted(self, candidate: Sequence[object], parents: set[int]) -> bool:
        """(c9) The relations alone, read on numbers of either kind: an input whose ints were made floats
        (or zero) keeps its numbers distinct, or 1..n, as the calls it was made from show them."""
        return self._hold(candidate, parents, within_range=False, numbers=True)

    def _hold(
        self, candidate: Sequence[object], parents: set[int], *, within_range: bool, numbers: bool = False
    ) -> bool:
        for i, value in enumerate(candidate):
            shown = [self.shown[p][i] for p in parents if i in self.shown[p]]
            needed = (set.intersection(*shown) if shown else set()) | self.common.get(i, set())
            if needed and not needed <= _relations(value, numbers=numbers):
                return False
            if within_range and i in self.ranges:
                lo, hi = self.ranges[i]
                if not (isinstance(value, int) and lo <= value <= hi):
                    return False
        return True


def _relations(value: object, *, numbers: bool = False) -> set[str]:
    """Which of the relations :class:`_CheckDomain` keeps one argument shows (``numbers``: read on ints
    and floats alike, where only ints count otherwise)."""
    out: set[str] = set()
    if isinstance(value, list | tuple):
        leaves = _number_leaves(value) if numbers else _int_leaves(value)
        if leaves is not None and len(set(leaves)) == len(leaves):
            out.add("distinct")
            if sorted(leaves) == list(range(1, len(leaves) + 1)):
                out.add("permutation")
        rows = _rows(value)
        if rows is not None:
            out.add("rectangular")
            if rows == len(value):
                out.add("square")
    return out


def _number_leaves(value: object) -> list[int | float] | None:
    """The numbers (ints and floats) inside nested lists and tuples, or None where a leaf is anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return [value]
    if isinstance(value, list | tuple):
        out: list[int | float] = []
        for v in value:
            leaves = _number_leaves(v)
            if leaves is None:
                return None
            out.extend(leaves)
        return out
    return None


def _int_leaves(value: object) -> list[int] | None:
    """The integers inside nested lists and tuples, or None where a leaf is anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return [value]
    if isinstance(value, list | tuple):
        out: list[int] = []
        for v in value:
            leaves = _int_leaves(v)
            if leaves is None:
                return None
            out.extend(leaves)
        return out
    return None


def _rows(value: object) -> int | None:
    """The common length of a non-empty list's rows (lists or tuples), or None."""
    if not isinstance(value, list) or not value or not all(isinstance(r, list | tuple) for r in value):
        return None
    lengths = {len(r) for r in value}  # type: ignore[arg-type]
    return lengths.pop() if len(lengths) == 1 else None


def _repeats(value: object) -> int:
    """How many elements of a list repeat an earlier one (by their repr)."""
    if not isinstance(value, list):
        return 0
    return len(value) - len({repr(v) for v in value})


def _balanced(s: str, pair: str) -> bool:
    depth = 0
    for ch in s:
        depth += (ch == pair[0]) - (ch == pair[1])
        if depth < 0:
            return False
    return depth == 0


def _spaced(value: object, trimmed: bool, single: bool, word_max: int | None) -> bool:
    """Whether a generated string keeps the cases' spacing (see :class:`_Invariants`)."""
    if not isinstance(value, str):
        return False
    return (
        (not trimmed or value == value.strip())
        and (not single or not _double_space(value))
        and (word_max is None or all(len(w) <= word_max for w in value.split()))
    )


def _double_space(s: str) -> bool:
    return any(a.isspace() and b.isspace() for a, b in itertools.pairwise(s))


def _shape(s: str) -> str:
    """The character classes of a string, runs collapsed: '12/5' and '1/50' are both 'digit/digit'."""
    out: list[str] = []
    for ch in s:
        cls = _char_class(ch) if _char_class(ch) != "other" else ch
        if not out or out[-1] != cls:
            out.append(cls)
    return "|".join(out)


def _strings_in(value: object) -> list[str]:
    """Every non-empty string inside a case's arguments (for inputs that search one in another)."""
    if isinstance(value, str):
        return [value] if value else []
    if isinstance(value, list | tuple | set | frozenset):
        return [s for v in value for s in _strings_in(v)]
    if isinstance(value, dict):
        return [s for kv in value.items() for v in kv for s in _strings_in(v)]
    return []


def _slice_of(s: str, rng: random.Random) -> str:
    i = rng.randrange(len(s))
    return s[i : rng.randint(i + 1, len(s))]


def _recombine(tuples: Sequence[tuple[object, ...]], rng: random.Random) -> tuple[list[object], set[int]]:
    same_arity = [k for k, t in enumerate(tuples) if len(t) == len(tuples[0])]
    picks = [rng.choice(same_arity) for _ in range(len(tuples[0]))]
    return [tuples[k][i] for i, k in enumerate(picks)], set(picks)


def _is_input_literal(text: str, value: object) -> bool:
    """Reads back as the same argument tuple (no NaN or infinity, no empty set: their reprs are not
    literals the sandbox's input parser accepts)."""
    try:
        read = pyast.literal_eval(text)
        return bool(read == value and repr(read) == text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def _mutate(value: object, p: _Profile, rng: random.Random, depth: int) -> object:
    if depth > 4:
        return value
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return _mutate_int(value, p, rng)
    if isinstance(value, float):
        return _mutate_float(value, p, rng)
    if isinstance(value, str):
        return _mutate_str(value, p, rng)
    if isinstance(value, list):
        return _mutate_list(value, p, rng, depth)
    if isinstance(value, tuple) and value:
        i = rng.randrange(len(value))
        return (*value[:i], _mutate(value[i], p, rng, depth + 1), *value[i + 1 :])
    if isinstance(value, dict) and value:
        keys = list(value)
        k = rng.choice(keys)
        if len(keys) > 1 and rng.random() < 0.25:
            return {key: v for key, v in value.items() if key != k}
        return {**value, k: _mutate(value[k], p, rng, depth + 1)}
    if isinstance(value, set | frozenset) and value:
        items = sorted(value, key=repr)
        pool = [e for e in p.elements if _hashable(e) and e not in value]
        if pool and (len(items) < 2 or rng.random() < 0.5):
            items.append(rng.choice(pool))
        elif len(items) > 1:
            items.pop(rng.randrange(len(items)))
        return type(value)(items)
    return value


def _hashable(v: object) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _mutate_int(v: int, p: _Profile, rng: random.Random) -> int:
    lo, hi = (min(p.ints), max(p.ints)) if p.ints else (v, v)
    steps: list[Callable[[], int]] = [
        lambda: v + 1,
        lambda: v - 1,
        lambda: v + rng.choice((2, 3)),
        lambda: v - rng.choice((2, 3)),
        lambda: rng.randint(lo, hi),
        lambda: rng.choice(p.ints) if p.ints else v,
    ]
    if abs(v) >= 10:
        steps.append(lambda: v + rng.randint(-abs(v) // 10, abs(v) // 10))
    new = rng.choice(steps)()
    # keep what every case shows: no negatives where none is negative, no zero where none is zero
    if p.ints and min(p.ints) >= 0:
        new = max(new, 1 if min(p.ints) >= 1 else 0)
    # stay near the cases' own magnitudes: a program as fast as the cases need is then fast enough here
    # (and one whose cost explodes beyond them meets the probe's deadline, as the reference does)
    span = max(2, (hi - lo) // 4)
    return max(min(new, hi + span), lo - span)


def _mutate_float(v: float, p: _Profile, rng: random.Random) -> float:
    lo, hi = (min(p.floats), max(p.floats)) if p.floats else (v, v)
    choice = rng.random()
    if choice < 0.3:
        new = v * rng.choice((0.5, 0.75, 1.25, 1.5))
    elif choice < 0.6:
        new = v + rng.choice((-1.0, -0.5, 0.5, 1.0))
    elif choice < 0.8 and hi > lo:
        new = rng.uniform(lo, hi)
    else:
        new = rng.choice(p.floats) if p.floats else v
    if p.floats and min(p.floats) >= 0:
        new = abs(new)
    span = max(1.0, (hi - lo) / 10)
    new = max(min(new, hi + span), lo - span)
    return round(new, max(1, min(p.float_decimals, 6)))


def _char_class(c: str) -> str:
    if c.isdigit():
        return "digit"
    if c.islower():
        return "lower"
    if c.isupper():
        return "upper"
    if c.isspace():
        return "space"
    return "other"


def _mutate_str(s: str, p: _Profile, rng: random.Random) -> str:
    if " " in s.strip() and rng.random() < 0.6:
        return _mutate_words(s, p, rng)
    pool = p.chars or s or "a"
    max_len = max(p.str_lengths, default=len(s)) + 1
    min_len = min(p.str_lengths, default=0)
    if not s:
        return rng.choice(pool)
    i = rng.randrange(len(s))
    op = rng.random()
    if op < 0.4:  # replace one character by another of its class (keeps a format: '1/5' -> '1/8')
        same = [c for c in pool if _char_class(c) == _char_class(s[i]) and c != s[i]]
        return s[:i] + rng.choice(same) + s[i + 1 :] if same else s
    if op < 0.55 and len(s) > 1:  # swap two neighbours
        j = min(i, len(s) - 2)
        return s[:j] + s[j + 1] + s[j] + s[j + 2 :]
    if op < 0.7 and len(s) > max(1, min_len):  # drop one
        return s[:i] + s[i + 1 :]
    if op < 0.85 and len(s) < max_len:  # add one of a neighbour's class
        same = [c for c in pool if _char_class(c) == _char_class(s[i])] or list(pool)
        return s[:i] + rng.choice(same) + s[i:]
    chars = list(s)
    rng.shuffle(chars)
    return "".join(chars)


def _mutate_words(s: str, p: _Profile, rng: random.Random) -> str:
    """Word-level changes of a spaced string (its vocabulary kept: 'three five' -> 'five three one')."""
    words = s.split(" ")
    vocabulary = sorted({w for v in p.values if isinstance(v, str) for w in v.split(" ") if w})
    op = rng.random()
    i = rng.randrange(len(words))
    if op < 0.3:
        rng.shuffle(words)
    elif op < 0.5 and len(words) > 1:
        words.pop(i)
    elif op < 0.75 and vocabulary:
        words.insert(i, rng.choice(vocabulary))
    elif vocabulary:
        words[i] = rng.choice(vocabulary)
    return " ".join(words)


def _mutate_list(items: list[object], p: _Profile, rng: random.Random, depth: int) -> list[object]:
    out = list(items)
    min_len = min(p.list_lengths, default=0)
    max_len = max(p.list_lengths, default=len(out)) + 1
    op = rng.randrange(6)
    if op == 0 and len(out) > max(min_len, 1) - (0 if min_len else 1):
        out.pop(rng.randrange(len(out)))
    elif op == 1 and out and len(out) < max_len:
        out.insert(rng.randrange(len(out) + 1), rng.choice(out))
    elif op == 2 and p.elements and len(out) < max_len:
        out.insert(rng.randrange(len(out) + 1), rng.choice(p.elements))
    elif op == 3 and out:
        i = rng.randrange(len(out))
        out[i] = _mutate(out[i], p, rng, depth + 1)
    elif op == 4 and len(out) > 1:
        rng.shuffle(out)
    elif out:
        i = rng.randrange(len(out))
        out[i] = _mutate(out[i], p, rng, depth + 1)
    if p.lists_distinct:
        unique: list[object] = []
        for x in out:
            if repr(x) not in {repr(u) for u in unique}:
                unique.append(x)
        out = unique
    if p.lists_sorted and p.list_lengths and max(p.list_lengths) > 1:
        with contextlib.suppress(TypeError):
            out = sorted(out)  # type: ignore[type-var]
    return out


def probe_due(task: TaskPublished, first: SandboxExecuted) -> bool:
    """Whether a sample's first run earns a probe run: only a run that answered every case can pass (a
    check run: whose check passed), and only a task with a plan has one. Decided from the run alone
    (never from expected values), so the sandbox that runs the probe and the filter that waits for it
    agree."""
    ran = (
        first.run_index == 0
        and first.probe is None
        and first.infra_error is None
        and not first.timed_out
        and not first.memory_exceeded
        and first.exit_code in (None, 0)
        and bool(first.cases)
    )
    if first.mode == "check":
        return (
            ran
            and len(first.cases) == 1
            and first.cases[0].status == "ok"
            and first.cases[0].result_repr == "True"
            and not case_inputs(task)
            and has_plan(task)
        )
    return (
        ran
        and first.mode == "cases"
        and all(c.status == "ok" for c in first.cases)
        and bool(case_inputs(task))
    )


def probe_run_index(reruns: int) -> int:
    """The run index of a sample's probe run: right after its same-order re-runs."""
    return 1 + reruns
