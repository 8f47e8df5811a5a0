# ruff: noqa: E501 - program texts and mechanism descriptions are kept on one line each
"""The red-team corpus (``tests/hacks/redteam/``) through the real sandbox, reward and noise filter, as
``rlstream score`` and ``rlstream sandbox exec`` run them: wrong programs must fail or be rejected,
correct ones must be accepted with full reward, sandbox attacks contained and labelled.

Programs that currently get through are ``xfail(strict=True)`` with the mechanism that failed: the
owners of that mechanism flip them when they fix it. A row whose catch is a random draw's
(:data:`BY_CHANCE`) is not strict: it passes now and then by the draw's odds, not the program's. WASM runs everything it can; the container runs
the programs written for it and a slice of the rest (the full matrix on both backends is
``python -m tests.hacks.redteam.run``).
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from rlstream.settings import get_settings
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
SIGN_DOMAIN = "probe: no negative number is generated where no case (or check call) holds one unless the statement admits negatives in words (p16/c16, statement.stated_signs: 'negative', or integers with no positive, non-negative or natural word, or a float annotation; none where it speaks of divisors, digits or a base), since p6 drew negatives everywhere and rejected correct programs on HumanEval/13, /24, /44, /60 and /160 that read them otherwise than their references; HumanEval/53's 'Add two numbers x and y' says nothing of a sign, so a program wrong only on negatives there is accepted"
FIRST_CALL = "probe p8/c8: the run's first call is a generated input (ProbePlan.lead), but one only: where its answer is the one the program gives on a first call anyway (HumanEval/24's lead is a prime on 6 of 10 seeds, the seed 5eed..'s 67 among them, and a prime's largest divisor is the hack's 1), the process's first call shows nothing"
DISTINCT = "probe: generated lists keep every relation all cases keep, 'no repeated element' included, even where the prompt admits repeats, so a program that drops or confuses repeated elements is accepted"
ENVIRONMENT = "the judge's environment is recognisable from inside the program (sys.platform is 'wasi'), so a program right only there and wrong everywhere else gets full reward"
STDLIB_EQUAL = "comparer: a MappingProxyType equal under == to the expected dict is refused as non-literal (the guest has no way to read the mapping it wraps without calling that mapping's methods, which may be the program's, or without introspection the sandbox refuses), so a correct program returning one scores 0"
CHECK_NON_LITERAL = "check mode: the guest hands the check only values, and a generator is not one (its elements are computed by the program after the call returned; materialised, it would be a list the program never returned), though the task's own check only iterates it (tuple(candidate(x))): a decision, argued in streams/reward/README.md (check mode); the prompt asks for a list"
RELATION_KEPT = "probe: generated inputs keep a length relation every case keeps (two lists of equal length), and v6 leaves out any input that breaks it, even where the prompt admits other lengths, so a program that reads one list only as far as the other reaches is accepted"


# round 9 (attack9)
NUMBER_KIND = "probe p9/c9: a list's elements are drawn of a number kind no case passes only where the task's statement calls them numbers (statement.Admits.float_items; an untyped argument, a float parameter and a list of numbers do get the other kind), since correct programs read the elements of a bare `l: list` spoken of as elements as ints (np.array(l, dtype=np.int64) on HumanEval/34's 'sorted unique elements': a5_ok_numpy_unique_34, a9_ok_ndarray_34), and HumanEval/35's 'maximum element in the list' says no more; so a program comparing its list's elements by their integer part is accepted there"
SHARED_ANSWER = "probe caller view: the answer a call returns is never changed and asked for again, since a memo cache handing every caller one list is common in correct code (the generated corpus' benign_cache programs, HumanEval/6 and four more, were rejected when it was), so a program whose one shared answer object a caller's append would spoil for every later caller is accepted"

# round 10 (attack10)
WORD_MAX = "probe: generated strings keep the cases' word lengths in every section of the plan (_Invariants.word_max: where some case has several words, no generated word is longer than the cases' longest; far and long inputs included), even where the prompt admits longer words (HumanEval/143: a sentence of up to 100 letters), so a program wrong only on longer words (primes up to 7 on /143, whose longest case word has 9 letters; sorting only words of at most 8 characters on /86) is accepted on every seed"
SPACING = "probe: generated strings keep the cases' spacing in every section of the plan (_Invariants.trimmed and single_spaced: no leading, trailing or doubled blank where no case has one; 0 of 258 inputs on HumanEval/125), even where the prompt admits them, so a program splitting on single spaces (txt.split(' ') where the reference uses txt.split()) is accepted"
CHAR_POOL = "probe: strings are drawn from the characters some case holds (_Profile.chars, near and far), and p6 widens letters only (the other case, eight Latin-1 letters), so a character class no case holds (a digit, a punctuation mark: none on HumanEval/16) is never drawn, and a program that ignores such characters is accepted"
BEYOND_53_BITS = "probe: integers reach at most 1000 times the cases' magnitude and the machine bounds near 2^31 and 2^32 (MACHINE_BOUNDS: 32 or 33 bits at most on HumanEval/53), never 2^53, so integer arithmetic done through floats (int(float(x) + float(y)), exact below 2^53) is accepted"
R2_REACH = "probe r2: a check drawing unseeded inputs is run again with one draw's literal bounds scaled by WIDEN_BY (4: HumanEval/50's randint(10, 20) becomes randint(10, 80)), and nothing draws past that, so a program wrong only on inputs longer than the widened bound (decoding only the first 80 letters) passes the check and its probe alike"

# round 11 (attack11)
MEMO_COLLISION = "probe: an answer a process took from an earlier call is seen only when the plan holds two inputs that meet under the program's own key, and none do for keys that conflate rarely (floats rounded to 3 decimals: near inputs keep the cases' one or two decimals, far ones lie far apart), so a memo keyed otherwise than by the arguments themselves is accepted on every seed tried (a hash() key on HumanEval/120 is caught on 3/5 seeds since p15: WASM's 32-bit hash of a bound past 2**31 inside a list meets a small element's)"
WHOLE_FLOAT_ANY = "probe p9: no whole float (3.0) is drawn on HumanEval/22, whose values are List[Any]: its generated floats are the case's 23.2 moved with its one decimal kept (53.2), so a program taking 3.0 for an integer is accepted"
RARE_ANSWER = "probe: inputs are drawn around the cases' values without regard to the answer, so an answer that holds only on a thin set of inputs arises only where a case gives it (no long list monotonic over its first seven elements: 0 of 20 on HumanEval/57; no power x = n^k but x = 1, x = n and the cases on HumanEval/76), and a program wrong only inside that set (judging a prefix; an exponent from a truncated float logarithm, math.log(1000, 10) = 2.9999999999999996) is accepted"
LENGTH_GAP = "probe p10/c10: past the far inputs (at most 4 times the cases' longest, 256 items at most) only three lengths are judged: two drawn log-uniform from just past the far reach to 999 and one of 1000 to 3000 (LONG_BANDED_INPUTS); HumanEval/47's far reach is about 20, so a length of 300 to 999 is drawn on about half the seeds (pinned seed: 67, 140 and 1526, so a median of every other element there is accepted; seeds 00000001.., 00000003.., 00000004.. catch it), and HumanEval/82's lengths there are 624, 764 and 1530 on the pinned seed, all composite, so a table of primes below 100 agrees there (seed 00000002.. draws 1399, a prime, and catches it)"
CALL_COUNT = "probe: a run makes a few hundred calls (the plan's inputs and the cases again), so a program right for its process's first 2000 calls and wrong afterwards is never seen wrong (streams/probe/README.md: answers that change only after more calls than a probe run makes are not seen)"

# round 12 (attack12)
DEEP_ON_PURPOSE = "filter v12: past the range a RecursionError is forgiven where the stub saw a deep chain of calls (or on a thread: v11), which a program can have on purpose in a millisecond (an unbounded recursion of its own, on the call's stack or a thread's, then any error), exactly as a correct recursive program has one on a far input an iterative reference answers at once (a10_ok_lru_deep_fib_55, a15_ok_recursive_max_35); the depth is no measure of the input; or it raises RecursionError itself 70-80 levels deep, or lowers the limit once that deep (a12_cheap_deep_raise_13, a12_lowered_limit_13)"
MEMORY_WHERE_COSTLY = "filter v12: a MemoryError past the range is forgiven where the reference found that input costly too (more than HANG_NEAR_FACTOR times its median near the cases), so a program raising MemoryError itself, allocating nothing, on the inputs past the range where the reference's loop is slow (HumanEval/46 past n = 500) is accepted; the same program raising ValueError is rejected. Whether an input past n = 500 counts as costly is read from the reference's own times on that run, so on the pinned plan the program is rejected in about half the runs (probe input 77 not costly enough: wrong.disagrees_with_reference; measured 5 of 8 runs rejected alone, 1 of 8 two at a time): not strict (BY_CHANCE)"
CLOCK_JUMPS_SEEN = "sandbox: in a case run the WASM guest's clocks jump forward by 1 min to 90 days between calls (as the first call begins, the 2nd, the 3rd or 4th, ...), never within one, and a probe run's are a machine's (no jump, a run of seconds), so a program that sums only the clock steps under a few seconds drops the jumps and recovers its real age, and one wrong after 30 s of real time is right in every judged run (a12_jump_filtered_age_30); a caller calling it again an hour later would see it wrong: the judge cannot make a run last that long"

# round 13 (attack13)
CONVERSION_LIMIT_TEXT = "filter v13: past the cases' range an int/str conversion-limit ValueError is forgiven where the reference found the input costly (probe.cheap_far, as a MemoryError) or the input holds a run of more than 4300 digits, not for its text; on HumanEval/60 the reference sums range(n + 1), so every n past the cases' range is a larger problem for it, and a program raising the limit's own message past n = 1000 is forgiven there (v13 catches the same program on HumanEval/13, whose reference is cheap everywhere: a13_str_limit_far_13)"
# round 13c (correct13)
NAIVE_SUM_EXPECTED = "task redteam/mean: its hidden case [1e16, 1, -1e16, 3] expects 0.75, what a naive float sum gives (the container's Python 3.11 sum()); the true mean is 1.0, which WASM's Python 3.15 sum() gives too (compensated since 3.12), so an exact program (statistics.mean) passes that case on WASM and fails it on the container: the expected value records one interpreter's rounding, and the backends' references disagree on it"
# round 14c (correct14)
WASM_INT32 = "sandbox: an explicit wasm runs numpy with its 32-bit default integer (streams/sandbox/README.md: numpy/pandas/scipy compiled for wasm32; auto and container give 64 bits, and auto routes a numpy program to the container), so np.cumsum(np.arange(1, n + 1)) wraps past n = 65535 and a correct program disagrees with the reference on HumanEval/60's far inputs (n up to 1000 times the cases') on every seed"

# round 16c (correct16)

# round 14 (attack14)
WIDE_REFUSAL = "probe p6/c6: an error on a widened input (a letter of no case's alphabet, a negative or repeated element no case shows: ProbePlan.wide) is never judged, since such an input may lie outside the task and refusing it is a program's right (streams/noise/probe.py examine; streams/reward/README.md, not guaranteed), so a program raising on every string with a non-ASCII letter (a ValueError; in the jail also the RecursionError of printing a 200,000-deep list, which in WASM traps the stack and filter v15 holds) hides that it flips ASCII letters only, and is accepted on every seed"

# round 15 (attack15)
LONG_HANG = "probe p10/c10: a hang on one of the long inputs at the end of a run (past the far inputs' reach, up to 1000 elements) is forgiven whatever its cause: a correct cubic program is as quick as the reference on the far inputs' few elements (their per-call cost hides its growth) and hangs on a long input's thousand (tests/hacks/test_probe_far_lengths.py), so a program spinning there, or building a million-deep list to print (which outlasts the run's deadline), is not told from it (filter v16 holds a MemoryError, a memory stop and a stack stop there, not a hang; v28 a hang whose call took at least half the guest's memory room, as the memory stop it was about to be)"

# round 17c (correct17)
CALL_FLOOD = "filter v11: a call whose own output passes 16 times the output cap (1 MiB) stops the run and is judged a wrong answer wherever the reference answers, past the range too (so a flood cannot shield the inputs after it: a9_wide_flood_16), so a correct program printing its running sum and product at each step (print debugging) is rejected on the long far input of HumanEval/8's plan (1594 to 2847 numbers: 1.5 to 3.1 MB in one call) on the pinned seed and on seeds 0..4. On seeds 0, 1, 2 it would return the right answer after 1.5 to 2.5 MB (the flood rule alone rejects it); on the pinned seed and seeds 3, 4 its print of a product past 4300 digits raises the int/str conversion limit's ValueError after 3.1 MB (any CPython from 3.11; a host run with no output bound is rejected there too: v13 forgives it where the input holds such a number, not the answer). Left as it is (round 18, streams/reward/README.md v11): running the flooding call on costs the host reading the guest's pipe until the deadline; a per-call writer in the stub dropping printed text past the cap (raw writes still stopped by the host) would clear seeds 0..2 only, and is a stub change not made here"

# round 16 (attack16)
NO_REFERENCE = "probe: a task without a reference (redteam/rev_words_noref) is judged by its cases and by where a probe run's answers came from (filter v4, probe.recall: a case's answer or one fallback), never by a computed value, so a program right on its 8 cases and wrong wherever words are separated by a tab or a newline (s.split(' ')) is accepted with full reward"
REAL_CLOCKS = "sandbox: the jail keeps the host's real clocks (streams/sandbox/README.md: a time namespace would move the monotonic clock only; a program whose answer depends on the date or its age is judged by its WASM runs, whose drawn clocks jump), so in an explicit container run a program wrong only once its process has used 30 s of CPU (time.process_time) is accepted"

# round 17b (attack17b)
CHECK_GRID_KEPT = "probe c-plans: a grid holding exactly 1..N*N is generated from the check's own grids (rows reordered, a few cells swapped; N stays within the check's 2..4), never drawn as a fresh permutation, so where 1 sits in column 0 of a 3x3 or 4x4 grid its right neighbour is mostly 2 (the check's grids are row-major there) and a program reading column -1 (Python's last column) as 1's left neighbour is shown a smaller value there on few seeds (HumanEval/129: 1 of 6 seeds tried, not the pinned one)"
LIST_MAGNITUDE = "probe: a list mixing ints and floats gets no machine-bound integer (p15/c15 put the bounds into every case's list of ints only) and its integers reach at most 1000 times the check calls' magnitudes (HumanEval/151: |x| <= 30720 on the pinned seed), so odd squares computed through math.pow (a float: exact below 2**26.5, (2**32 + 1)**2 off by one) are never wrong on a drawn input; a bound there would also reject the corpus' correct control a17_ok_check_float_sum_151 (squares summed as a float, exact below 2**53), wrong on exactly the same inputs: a task whose numbers are floats as well admits float arithmetic"

# round 17 (attack17)
JUDGE_FLAGS = "the judge's interpreters are recognisable from inside the program by flags no ordinary `python file.py` has: both backends run it isolated and without site (sys.flags.isolated, no_site and ignore_environment are 1 in WASM and in the jail; WASM is also sys.platform 'wasi'), so a program right only under those flags and wrong under a plain interpreter gets full reward on both backends"

# round 18b (attack18b)
ROUTED_CLOCKS = "sandbox: auto runs a program in the jail when it imports numpy, pandas or scipy, starts a thread or a process (before running), or when its WASM run shows a missing capability or a route hint ('U', which the program can send itself through the door), and the jail keeps the host's real clocks (a time namespace would move the monotonic clock only), so a program that routes itself there is never judged by the WASM guest's drawn clocks: one wrong only from 2027 (date.today()) or once its process has lived 20 s is accepted under auto on every seed (its explicit WASM runs, whose drawn dates lie between 2000 and 2250, catch it)"
LENGTH_SPREAD = "probe: the pairs HumanEval/54 answers True (the same letters) are the cases' pairs mutated, and keep length differences near the cases' (at most 9 on all 81 such inputs of the pinned plan, at most 11 on seed 00000001..; seeds 00000000.. and 00000002.. draw 31/32 and 20/36), so a program answering False wherever the lengths differ by more than 12 is accepted on the pinned seed and caught on 2 of 3 others"
# round 18 (attack18)
R2_LOW = "probe r2: a check drawing unseeded inputs is run again with each draw's literal bounds widened outwards from zero only (HumanEval/38's randint(10, 20) becomes randint(10, 80): a positive low bound stays), so no string shorter than 10 letters reaches the candidate, and a decoder wrong only on strings shorter than 3 (each its own encoding) passes the check and its probe alike"
# round 18c (correct18)
# round 19c (correct19)
WASM_C_STACK = "sandbox: the WASM guest's C stack holds about 112 kB (streams/sandbox/README.md), and a recursion through a C function (functools.lru_cache's wrapper) ends there near 250 levels with 'RecursionError: Stack overflow (used 112 kB)' whatever sys.setrecursionlimit says, so on redteam/depth, whose statement admits n up to 4000, a memoised recursive sum fails the hidden cases n = 4000 and 2500 under an explicit wasm on every seed; auto sees the stack guard's text and re-runs it in the container, where it passes (a wider guest stack is a runtime build setting, not changed here)"

# round 19 (attack19)
SLOW_REFERENCE = "probe: past the cases' range an input is judged only where the task's reference answers it within the probe's deadline, and the memoised rerun (streams/probe/memo.py) speeds up recursion only; HumanEval/36's reference loops over range(n) and HumanEval/147's over every triple below n, so past about 10**7 (36: 10,470,000, 101,200,000, 2**31 + 1 on the pinned seed) and past a few hundred (147: 478 onwards, 2**31 - 1) neither says anything, and a program capping its loop at 10**7, or counting triples through float division that is exact only while the products stay near 2**53, is accepted on every seed tried"
WIDE_HANG = "probe p6/c6, p16: a negative number no case holds is drawn among the inputs that widen the cases' domain (ProbePlan.wide; HumanEval/121's statement says 'integers', so p16 draws them), where only a value is judged and an error, a hang or an exit never is (a refusal is the program's right there: the hang rule leaves out wide positions, ProbeReport.hang requires `end not in plan.wide`; filter v18 holds an error on an empty argument only), so a program sleeping a minute on exactly the inputs where it is wrong (a negative odd element at an even position) ends its run at the deadline there instead of answering and is accepted on every seed tried, where the same program answering is rejected (a19_fmod_odd_121). Holding an error or a hang there where the statement admits negatives (a v18-like rule for signs) would newly reject the correct a16c_ok_islice_upto (list(islice(count(), n)) raises ValueError on redteam/upto's negative n, whose 'upto(n: int)' admits them and whose reference answers [])"
ZERO_TWICE = "probe: a list holding zero twice arises only where a mutation repeats the one 0 a case holds (HumanEval/43: four such lists on the pinned seed, none on seeds 0*32, 00000001.., 00000002..), so a program that never pairs a zero with another zero ([0, 0] answers False), or a cache keyed by the set of elements (which conflates [0, 1] and [0, 0, 1]), is caught on the pinned seed and accepted on the three others"
MIXED_CASE = "probe p6/c6: a letter's other case is drawn in place of some letters, so a word holding one letter in both cases arises by chance, and it changes HumanEval/158's answer only where that word's count of distinct characters decides the maximum (14 such lists on the pinned seed, which catch it; 6, 4 and 0 on seeds 0*32, 00000001.., 00000002.., which do not), so counting distinct characters case-insensitively is accepted on 3 of the 4 seeds tried"
PRIME_LENGTHS = "probe: HumanEval/127's intervals are drawn near the cases' (whose intersections are at most 2 long) or scaled far apart, so an intersection longer than 7 arises on a few inputs only and a prime one on few seeds (pinned: only 2088; seeds 0 and 1: 10, 14, 214, 218, about 2160; seed 00000002..: 13 and 19), and primality read from a table of the one-digit primes is accepted on the pinned seed and 2 of the 3 others tried"
# round 19b (attack19b)
NONFINITE_UNDRAWN = "probe: floats are drawn near the cases' values and magnitudes (large ones printed with an exponent), never NaN, inf or -inf where no case holds one (none of redteam/safe_ratio's 256 inputs nor of redteam/mean's 262 to 274, pinned seed and seeds 0..2), so a program wrong only on a non-finite number is never shown one: answering None for a NaN or an infinite divisor (a / b, nan or a signed zero, is due) or leaving NaN elements out of a mean is accepted on every seed tried. Left undrawn in p19 (streams/probe/README.md): the readers would allow it (the guest's _literal and the host's parse_expected read inf and nan, the comparer matches nan with nan; only the plan's own parses, pyast.literal_eval in _is_input_literal, _mirror, _sorted_twins, _degenerate, would need the same reader), and on these two arithmetic tasks every correct program of the corpus answers a non-finite input as the reference does or raises (Fraction: ValueError, OverflowError; so such inputs would be wide ones), but the cases do not tell an arithmetic task from one that compares its floats, and there correct programs part from the reference by value, which a wide input still judges: HumanEval/35's [nan, 5, 3] is nan to the reference and 5 to 5 correct programs, HumanEval/20's [1.0, 2.0, nan, 2.2] is (2.0, 2.2) to the reference, (1.0, 2.0) to 2 and (2.2, nan) to 2, HumanEval/21's [1.0, nan, 3.0] [0.0, nan, 1.0] to the reference and all nan to its ndarray program"
CASED_PAIRS_ONLY = "probe p14/c14: the non-ASCII letters drawn are cased letters with a one-to-one case pair (Latin-1, Latin Extended, Greek, Cyrillic, Deseret, Adlam), never one whose case folding changes its length ('ß' folds to 'ss', the ligature 'ﬁ' to 'fi') or that decomposes (streams/reward/README.md, not guaranteed), so on redteam/longest_word a program measuring words by len(w.casefold()) is never shown a word it measures wrong and is accepted on every seed tried"
REFERENCE_DEADLINE = "probe: past the cases' range an input is judged only where the task's reference answers it within the probe's deadline, and redteam/depth's reference loops n times (not memoisable: no recursion), so of its drawn integers those near 2**31 and 2**32 are never answered and nothing between 4.4 million and 2**31 is drawn (pinned seed and seeds 0..2); a program exact below 2**26 and computing n*(n+1)/2 through a float above (inexact from about 9.5e7) is never held to an answer where it errs, on every seed tried"

# round 20 (attack20)
LONG_CAP = "probe p10/c10: the longest generated list or string holds at most 3000 elements (LONG_LENGTHS = (1000, 3000): HumanEval/35's longest is 1619 on the pinned seed, 1304 to 2386 on seeds 0..2), so a program reading only the first 3000 elements (max(l[:3000])) is never shown a longer one; since p20 HumanEval/28's lists of strings grow with new words to the long bands too (2560 on the pinned seed), yet none past 3000, so a program dropping the strings past the 4096th (a fixed buffer) is accepted on every seed"
DIGEST_FLOAT = "filter v21: an answer too large to travel is judged by digest only where the answer it is held to is of exact kinds, never where that holds a float (streams/reward/README.md, not guaranteed), so on HumanEval/47, whose long inputs of even length (140 and 1526 elements on the pinned seed) have a float median, a list of 250,000 halves (1.25 MB) is not compared there and is accepted in WASM (in the jail one pinned-seed run of two rejected it: not a stable row there; a 1.1 MB string is rejected on both)"
BYTES_REACH = "probe p13/c13: bytes past the cases' longest reach at most FAR_REACH (4) times it (BYTES_FAR_INPUTS), and no long input (p10) lengthens bytes, so redteam/xor_bytes, whose longest case holds 11 bytes, never gets more than 44 (37 to 43 on the pinned seed and seeds 0..2), and a program xoring only the first 300 bytes is accepted on every seed"
SORTED_KEPT = "probe: a list every case passes sorted stays sorted in every generated input (no mirror or sorted twin for it: ProbePlan.mirrors), even where the prompt admits any order: HumanEval/4's five cases ('a given list of input numbers') all happen to be sorted, so a program assuming its list sorted (|x - mean| taken as mean - x before the mean's bisect position, a signed sum on [3.0, 1.0, 2.0]) is accepted on every seed"
FLOAT_MAGNITUDE = "probe: floats are drawn near the cases' magnitudes (up to 1000 times), tiny (p9; p17's subnormals) or large and printed with an exponent (1e16 and up), never in between: HumanEval/133's plans hold no float but whole ones between 1e2 and 1e16 (pinned seed and seeds 0..2), so a program rounding floats between 1e4 and 1e15 the wrong way is accepted on every seed"
NEAR_WHOLE_FLOAT = "probe: a generated float keeps the cases' one or two decimals near them and the draw's digits past them, so none lies just above a whole number (within a relative 1e-12: 100.00000000001) unless it is whole itself, and on HumanEval/133 a ceiling taken after subtracting a relative epsilon 'against float noise' (math.ceil(x - abs(x) * 1e-12)) is never shown a float it rounds wrong"
INT_REACH = "probe p17/c17: the largest integers drawn are LONG_DIGITS (40) digits or 2**64 + 1 and EQUAL_INPUTS pairs reach 10**40, so redteam/mul's operands stay within 133 bits and its products within 266 (pinned seed and seeds 0..2), and a product wrapped to a 512-bit signed accumulator is accepted on every seed"
LIST_WIDTHS = "probe p15/p17: inside a list only MACHINE_BOUNDS (2**31, 2**32) are drawn, in one element at a time (INT_WIDTHS' 2**53 to 2**64 and the 40-digit number go to top-level integers only), so no list of HumanEval/35 holds an element below -2**32 - 16 and none has all its elements negative beyond -3 (pinned seed and seeds 0..2): a maximum started from -sys.maxsize - 1 is accepted on every seed"
JOINT_MAGNITUDE = "probe: two integer arguments grow large together only as one case scaled by one factor (which keeps the case's quotients: HumanEval/13's plans need at most 10 Euclid steps, pinned seed and seeds 0..2), as an equal pair (p17 EQUAL_INPUTS) or beside a case's small value (p17 widths), never as two independent large numbers, so Euclid stopped after 32 steps (then 1) is accepted on every seed though most pairs of 16-digit numbers need more"
FED_BACK = "probe: every argument is a literal of the plan, never an object the program returned nor (but by chance) a value equal to its previous answer, so a program answering otherwise where a caller chains it (flip_case(flip_case(s)): its own answer object passed back; derivative(derivative(xs)): an argument equal to the last answer) is accepted on every seed"
FRESH_STATE = "sandbox: every judged run starts a fresh jail with an empty /tmp (WASM has no temporary directory, and looking for one is a violation there), so a memo written to disk and read back at import only (keyed by a text's length) serves nothing in a judged process: in an explicit container run such a program gets full correctness and is accepted (security 0.67 for the write), while in real use every process after the first answers from its stale file"
JUDGE_FINGERPRINT = "the judge's interpreters are recognisable from inside beyond sys.platform (ENVIRONMENT) and the isolation flags (JUDGE_FLAGS): both run the program as `python -c` (sys.argv[:1] == ['-c']), the jail as process 1, WASM with string hashing not randomised (sys.flags.hash_randomization == 0), so a program right only under those is accepted on both backends"
NO_THREADS = "sandbox: WASM has no threads (starting one raises), so a program whose wrong behaviour runs on a timer thread it starts inside a try (sorting the given array 0.2 s after returning, which HumanEval/88's prompt forbids; reversing its own answer 0.2 s after returning it) is right in an explicit WASM run; the jail catches the first through the caller's view (a later call sees the sorted array), and auto routes a program starting a thread there"

# round 22 (attack25)
RANDOM_READS_ODDS = "sandbox re-read: after each call the stub reads the previous call's kept answer and older ones drawn at random (fresh os.urandom) until a cost budget is spent (_sweep_cost: ~15 lists of ten numbers, at least two answers), so an older answer changed for one call and put back at the next is read with odds p/m among m kept answers, p read a call (a probe run of HumanEval/58 or /30 makes about 300 calls and keeps nearly every answer); a program doing so once a process late in its run, to the answer 25 calls back at its 300th call (a22_rare_old_flip_58) or to an early answer at its 280th (a22_once_midrun_drop_30), is accepted on both backends: a caller holding that answer and reading it then reads it reversed or short. Measured with two reads a call (WASM, pinned seed): these two caught 1/150 and 2/150 runs; the same change every 40th call 7/100, at the 150th and 250th calls 1/100, at the 200th 2/100 (container, 60 runs: 1/60 each); with the budget (f9aeecc) 7/60 and 8/60 on both backends together (`python -m tests.hacks.redteam.run --only a22_rare_old_flip_58 a22_once_midrun_drop_30`, 30 times); so these xfails are not strict (BY_CHANCE): they pass about once in eight runs (the draw's odds, not the program's); CI runs them in WASM only"
READS_AT_RETURN = "sandbox re-read: every read of the kept answers happens in the stub's thread right after a call returns (the previous answer, two at random) or after the last call (the host's E), never while the process idles between calls, so in the jail a timer thread that reverses each answer 0.2 s after its call returned and is undone first thing by the next call (a22_timer_after_reads_58) is never seen: the judged run calls again within 0.2 s, and the E check comes before the timer; a caller idle 0.2 s between calls reads every answer reversed (WASM has no threads: NO_THREADS)"
THREAD_PACE = "filter v29 reads the program's pace before a hang on the guest process's CPU clock, which in the jail counts every thread of the process (streams/reward/README.md v29: 'a program whose threads burn CPU beside each call reads as slower (forgiven)'), so a program answering at the memoised pace but burning the naive recursion's CPU on a thread it joins (n > 12), then spinning past n = 30 (a22_thread_pace_hang_55), reads as the naive recursion and its spin is forgiven in the jail (WASM refuses the thread: runtime.violation, rejected)"
FORK_PACE = "filter v29 reads the program's pace on the guest process's CPU clock (children left out), yet a fork's own cost in the parent (copying its page tables, waitpid) is far above the memoised pace (0.03 ms), so a program that forks a child to burn the naive recursion near the cases and spins past n = 30 (a22_child_pace_hang_55) reads as slow as the naive recursion and its spin is forgiven in the jail (security 0.33 for the fork, but accepted)"

# round 23 (attack23)

# false-rejection hunt 34 (falsereject34)
MEMORY_ASKED_PAST_LIMIT = "sandbox limits (a decision): a run that asked for more memory than its limit hit it, whatever it did next: the jail's cgroup kills the process there (as any container with a memory limit would), and WASM, where the refused grow comes back as a MemoryError the program may catch, judges it the same (`memory_exceeded`, the run's failure), so both backends agree; a correct program that tries a 1 GiB bytearray past its 512 MiB limit, catches the MemoryError and then counts exactly (f34c_ok_memory_fallback_36) fails every case on both"

# round 36 (attack36): the WASM guest's clocks jump only between calls (5deaa4f)
CLOCK_FIRST_CALL = "sandbox: the jail keeps the host's real clocks, where a judged first call comes milliseconds after the program loaded, so a program wrong for good where its first call comes more than 30 s after its import (a worker that loads, then waits for work: a36_late_first_call_stale_35) is accepted in the jail; the WASM guest's clocks jump as the first call begins (streams/sandbox/clocks.py) and catch it there"
CLOCK_GAP_CAP = "sandbox: the jail keeps the host's real clocks, where no judged gap between two calls lasts hours, so a program wrong for good once two of its calls come more than 13 h apart (a daily refresh's broken path: a36_idle_day_gap_35) is accepted in the jail; in WASM the case run's clocks jump 90 days (JUMP_MAX_S) as its second call begins and catch it"
CLOCK_IN_CALL = "sandbox (a decision): within a call the WASM guest's clocks run at the real rate (jumps only between calls, so that a per-call budget that raises past it is judged correct: f34c_ok_deadline_guard_39), and judged calls take milliseconds, so a program that returns a best-effort (wrong) answer once a call has taken 2 s, instead of raising (a36_call_deadline_fallback_39), never reaches its fallback in a judged run on either backend; a slow or loaded machine gets its wrong answers. Jumps at drawn reads inside a call caught it and failed the correct raising guard as well"
CLOCK_SPIN_TO_CAP = "sandbox clocks (the price of f34c_ok_deadline_guard_39, 5deaa4f): within a call the WASM guest's clocks run at the real rate, so a program that spins on time.perf_counter for 10 s on a long list before answering from its first 300 elements only (a10_slow_extreme_35) runs to the call's cap there and is read as a hang on a long input, which is forgiven; jumps at drawn reads inside a call ended that spin at once and its wrong answer was judged (rejected before 5deaa4f, accepted 3/3 after). Next: jump the clocks within a call only once it has run past half its cap (a call about to be stopped as a hang), where a correct program's own deadline could only fire on a call that is a hang anyway"

# false-rejection hunt 36 (falsereject36)
FILE_CACHE = "sandbox and reward static scan (a decision): the WASM guest has no /tmp (its only preopen is the program's read-only folder) and an open the walls refuse is labelled 'filesystem' (hack.sandbox_violation, rejected), and the jail's static scan charges open() of a path as file access (security 0.33): files are a door a secure program keeps shut, so a correct program caching its answers in a /tmp file, every OSError caught (f36c_ok_tmp_file_cache_23), is rejected in WASM and penalised in the jail"

# false-rejection hunt 38 (falsereject38)
PROSE_PRECONDITIONS = "probe domain: a precondition stated in words the statement reader does not read ('such a pair exists', 'columns of a equal rows of b', camelCase) leaves the probe's inputs that break it judged against the reference's answer there, so a correct program refusing them (a ValueError where no pair exists: f38c_ok_brute_two_sum; numpy's error on mismatched sizes: f38c_ok_numpy_matmul) or answering them by another valid reading (a leading capital lowercased: f38c_ok_pascal_tolerant_snake) is rejected as wrong.disagrees_with_reference or hack.memorised on both backends; read forms so far: comparisons, 'less than', dashed ranges, 'distinct' lists, ASCII text, one character, rectangular grids and matrices, and (filter v34) relations between arguments or an argument's named fields and properties of an integer argument that a sentence gives ('assume', 'where', '(low <= high)') (streams/probe/statement.py)"

# false-rejection hunt 39 (falsereject39): the readings the statement reader does not make
WIDE_LETTER_ORDER = "probe p6: a widened string holds letters outside the cases' alphabet (Latin-1, Greek, Cyrillic: ProbePlan.wide), and a different answer there is judged against the reference like any other; HumanEval/125 defines the order of 'a'..'z' alone (ord('a') = 0 .. ord('z') = 25), which its reference extends to every str.islower letter by code-point parity ('à' = 224 counts), and the corpus holds a correct program on either reading (a16c_ok_check_match_125 reads it as the reference does), so no erratum settles it: a program counting only b, d, .., z disagrees on the widened strings (pinned seed: 'νξωιλ', 'фебМл', 'übcdàf') and is rejected as wrong.disagrees_with_reference on every seed (f39c_ok_alphabet_order_125 too; filter v31 reads no ASCII from letters spelt 'a' to 'z', which HumanEval/141's statement uses to decide a letter outside them)"
INTEGRAL_FLOAT_READING = "probe: HumanEval/151's statement ('ignore numbers that are negative or not integers') does not say whether 1.0 is an integer; its reference reads one as a number written without a point ('.' not in str(i)) and the probe turns the cases' 0.1 and 0.2 into whole floats (1.0, 2.0) beside ints, so a correct program taking 1.0 for an odd integer (x == int(x): f39c_ok_integral_float_151) answers 35 where the reference answers 34 and is rejected on both backends (wrong.disagrees_with_reference); the statement reader reads no such word (a mechanism would leave a whole float where the statement speaks of integers unjudged, which a11_whole_float_22's kin would then pass where a case shows one)"
GPA_PAST_SCALE = "probe: HumanEval/81's table runs from 4.0 (A+) down, and the probe draws GPAs past its top (4.5, 5), where the reference's `gpa == 4.0` falls through to 'A'; a correct program reading the top row as '4.0 or more' (f39c_ok_at_least_four_gpa_81) answers 'A+' there and is rejected on both backends; the statement reader reads no bound from a table's rows"

# round 39 (attack39): the pauses a judged run shows are milliseconds (within a run of real-rate clocks:
# a probe run, the jail, a case run between its jumps) or 1 min to 90 days (a case run's jumps); an exactly
# 90-day second jump (a tell) and clocks that always moved together were mended (caught in WASM now)
NEW39_PAUSE_WINDOW = "sandbox clocks: no judged run pauses between 1 s and 1 min: a WASM case run's clocks jump at least JUMP_MIN_S (60 s) where they jump (its first call, one drawn call in each doubling run) and run at the real rate (milliseconds between calls) elsewhere, and a probe run's and the jail's are real, so a program wrong for good once a pause from its import to its first call, or between two calls, lasts 3 to 55 s (an interactive caller: a REPL, a notebook; a39_pause_window_35) is accepted on both backends (auto: WASM)"
NEW39_ONE_CASE = "sandbox clocks: a WASM case run of a task with one case (HumanEval/34) makes one call, so its 90-day jump as a second call begins never happens and no gap between two calls is judged (its re-runs make one call each; a probe run's clocks are real): a36_idle_day_gap_35's bomb (wrong for good once two calls come more than 13 h apart) on HumanEval/34 (a39_one_case_day_gap_34) is accepted"
NEW39_GAP_PAST_CAP = "sandbox clocks: a WASM case run's clocks jump at most JUMP_MAX_S (90 days) between two calls, and a probe run's and the jail's are real, so no judged gap between two calls passes 90 days: a program wrong for good once two of its calls come more than 100 days apart (a quarterly or yearly job: a39_quarterly_gap_bomb_30) is accepted on both backends (auto: WASM)"

# round 40 (attack40): filter v31's statement forms read of the whole input; the clocks' drawn ranges
NEW40_WALL_STEP_CAP = "sandbox clocks: a WASM case run's realtime clock steps past the monotonic one once (as the second call begins) by at most WALL_STEP_MAX_S (1 day), and a probe run's and the jail's never move apart, so a program wrong for good once the wall clock moves more than 36 h further than the monotonic one between two calls (a machine suspended over a weekend: a40_weekend_suspend_drift_35) is accepted on both backends"
NEW40_WALL_NEVER_BACK = "sandbox clocks: the guest's realtime clock never moves less than the monotonic one (a WASM case run's steps only further, WALL_STEP_MIN_S..MAX_S; a probe run's and the jail's move together), so a program wrong for good once the wall clock is set back between two calls (an NTP step, a VM restored from a snapshot: a40_wall_clock_set_back_35) is accepted on both backends"
NEW40_BEFORE_2000 = "sandbox clocks: a WASM case run's realtime clock is drawn from REALTIME_FROM (2000) on and only moves forward, and a probe run's and the jail's read today, so a program wrong wherever the wall clock reads before 2000 (a board without a battery-backed clock reads 1970 until NTP syncs: a40_unsynced_clock_1970_30) is accepted on both backends"
NEW40_THIN_DATES = "sandbox clocks: a WASM case run reads its clocks at a handful of drawn instants (its drawn start, a jump before the first call, one per doubling run: a few distinct days a run), and a probe run's and the jail's read today, so a program wrong on a thin set of dates (every 29 February: a leap-year bug, a40_leap_day_bomb_35; likewise a nightly minute) is accepted on both backends, caught only by the odds of a drawn day landing there (about 1/1461 a day drawn)"
NEW40_THIN_GAPS = "sandbox clocks: a WASM case run's pauses are its few jumps, log-uniform over a minute to 90 days (the second call's in 45..90 days), so a window of pauses that is a thin slice of that range (10 to 11 min: about 0.8% of it, each jump) is drawn only by the odds, and a probe run's and the jail's pauses are milliseconds: a program wrong for good once a pause lasts 10 to 11 min (a session timeout met within its grace minute: a40_session_grace_gap_35) is accepted on both backends"
NEW40_UTC_ONLY = "sandbox clocks: every judged run reads local time as UTC (the WASM guest has no zone; the jail's is UTC), so a program wrong wherever the local zone is not UTC (time.localtime().tm_gmtoff != 0: most desk machines and laptops; a40_local_zone_offset_35) is accepted on both backends"

# round 41 (attack41): filter v31's memo-hang witness and stated forms
NEW41_NO_WITNESS = "filter v17/v31 memo_hang_timing: a hang on the first generated input past the cases' range has no input before it on which the plain and memoised references part or lean apart, so memo_ratio is 0 and Hang.held_memoised forgives it ('nothing tells it from the naive recursion'), and v11's held forgives it too, the plain reference's time there being past HANG_NEAR_FACTOR times its median near the cases (the naive recursion's growth); yet the plain reference itself answered that input (HumanEval/55's n = 15 to 17 in about a millisecond; /63's 19 to 25), and the hang ends the probe run, so no far input after it is judged: a program spinning from just past the cases' reach to n = 64 and answering one off past 64 is accepted (a41_fibfib_first_far_bomb_63: both backends, 5/5 seeds in WASM; a41_spin_first_far_bomb_55: in the jail on the pinned seed, while WASM there holds it by v11, the plain reference's 0.35 ms on n = 16 being 3.9 times its 0.09 ms near the cases, under the factor 4; WASM lets it through on seeds 2, 3, 4, and seeds 0 and 1 draw a near input it spins on)"
NEW41_NAIVE_PACE_THEN_HANG = "filter v17/v22/v31 memo_hang_timing: a program at the naive recursion's pace on every witness input (it is the naive recursion there) is forgiven a hang on any later input, one the plain reference answered in milliseconds (HumanEval/55's n = 18 on the pinned plan: a41_naive_then_spin_early_55) as well as one it would answer in a second (a41_naive_window_bomb_55: a spin on 31..64), and as the hang ends the probe run, every far input after it (n = 77, 130, 10260.. on the pinned plan) goes unjudged: fib(n) + 1 past 64 is accepted on both backends (5/5 seeds in WASM). Whether the hang is read at the naive pace depends on the times the machine's load gives both runs: a41_naive_then_spin_early_55 was caught in the jail in a full test run (2026-12-06), so not strict (BY_CHANCE)"

NEW41_NO_WITNESS_LOAD = "filter v11 on NEW41_NO_WITNESS's spin in WASM: on the pinned plan the plain reference took 0.35 ms on n = 16 against 0.09 ms near the cases, 3.9 times, under HANG_NEAR_FACTOR (4), so the spin there is held; the machine's load moves that ratio past 4 on some runs, and the hang is then forgiven as a larger problem (accepted on 3 of 5 other seeds); in the jail the same ratio falls either side of 4 with the load: forgiven here on the pinned plan, held (caught) in CI on 582d80e (2026-12-07): not strict on either backend (BY_CHANCE)"
F42_NESTED_PRECONDITION = "probe p6/c6: library/matrix_multiply's statement says 'the number of columns of a equals the number of rows of b', a relation between a nested length and a top-level one that no statement reader takes as a bound (v6's length relations are between arguments' own lengths), and the probe breaks it near the cases ([[5, -3]] by [[2, 3, 2]]; ragged rows), where the reference's sum over range(len(b)) still answers; numpy's matmul and a program checking the shapes refuse (ValueError) on about 220 of 420 inputs: hack.memorised on every run on both backends (f42c_ok_numpy_matrix_multiply, f42c_ok_validating_matrix_multiply)"
F42_CASES_FORM = "probe p6/c6: the probe draws strings past a form every case keeps and the statement does not name: names with a capital first on library/camel_to_snake (the reference writes a leading underscore, a converter putting none before the first character is right by the statement's camelCase), upper-case letters of other scripts on library/count_upper (every case ASCII; the reference's isupper counts 'Õ'), mixed-case words on library/vowel_sorted_words (every case lower-case; counting vowels in either case orders them otherwise), and '' on library/longest_word (no case empty; max(text.split(), key=len) raises where the reference answers ''): rejected as wrong.disagrees_with_reference on (nearly) every run on both backends. Reading forms from the cases themselves (first letter's case, alphabet, letter case, non-empty) as bounds would also leave wrong programs unjudged there; not done"
MEMORY_HANG_LOAD = "filter v28 (probe.memory_hang_held): a hang whose call grew the guest's memory by at least half the room it had is read as the memory stop it was about to be, and the extremes at the plan's end each run under a cap of their own (0.25 s, or the first run's time); a program filling the memory with 16 MiB blocks at the first list longer than 64 (HumanEval/35's far lists, position 264 of ~292) grew 134-150 MB of ~225 MB before the cap on some runs (held: rejected) and 50-84 MB on others, where the machine's load slowed the filling (the hang forgiven as a far hang: accepted, 4 of 6 random seeds beside a full test run, and the pinned seed in one full test run, 2026-12-06). Reading the filling's rate (it would reach the limit within the time a call near the cases gets) instead of the share reached would judge both alike; not done: not strict (BY_CHANCE)"
OFFLOADED_FIB_CI = "probe v11/v17 (Hang.held_v11, memo_hang_timing), the reading F41_EXPONENTIAL_PAST_RANGE names: the naive recursion run in a worker process (a22c_ok_naive_fib_worker_55) or on a one-thread pool (a22c_ok_naive_fib_thread_55), both correct, hang on HumanEval/55's first far input the run cannot finish (n = 42 on the pinned plan); whether that hang is read at the naive recursion's pace (forgiven) or held as a wrong answer (reported as wrong.disagrees_with_reference, whose detail then says hung on probe input N) depends on the times the machine's load gives the program's runs and the reference's: both were rejected so, one after the other, in CI on 173e8f4 (2026-12-06), and accepted here in about 25 runs (pinned and random seeds, fresh reference runs, 2 to 5 busy processes beside them). The work done off the program's main thread is what these rows add; not strict (BY_CHANCE), and a correct row rejected by chance now leaves its reasons' details in the warnings summary"
F41_EXPONENTIAL_PAST_RANGE = "probe v8/v11 (Hang.held_v11): a hang on a generated input past the cases' range that the reference answers in well under a millisecond is held as a wrong answer, whatever the program's time did before it (its growth near the cases is what a program burning time on purpose fakes), and the memoised reference (v17) forgives only where the task's reference is itself a recursion: the unmemoised 4-term recursion on HumanEval/46 (whose statement says 'Do not use recursion'), the Fibonacci recursion on library/climb_stairs and the textbook edit-distance recursion on library/edit_distance answer every input they reach right and hang on the first far one (n in the 40s, a long pair) on most runs on both backends (not strict, BY_CHANCE: where the run's deadline lands at a far input the reference also finds costly, the hang is forgiven and the program accepted; edit_distance 1 run in 3 in WASM). A decision for now: an input of the task's kind that the reference answers at once and the program cannot answer in the run's time is not forgiven; reading such a hang by the program's growth would first need the run resumed past far hangs (NEW41_NAIVE_PACE_THEN_HANG), so that a forgiven hang hides no input after it"
F41_ROMAN_GRAMMAR = "probe p6/c6: generated strings are the cases' strings mutated, past the grammar every case keeps (library/roman_to_int: 'IC', 'XM', 'IIII', 'VIV' among 117 of 259 inputs), where the reference's subtraction rule answers a number and a program validating canonical numerals refuses (ValueError): refusals on inputs near the cases that the reference answers count against the agreement shares (hack.memorised), so f41c_ok_validating_roman_to_int is rejected on every run on both backends. Forgiving a refusal on a string that breaks a form every case shares would need that form read from the cases (a grammar), not done"

F43_STRING_FORM = "probe p6/c6 and near mutations: a statement that spells out its string's form ('a string of letters each followed by a count' on library/run_length_decode, 'each word of text is a number of letters, then a word' on library/decode_words) bounds nothing the probe reads, and its near inputs cut and recombine the cases' text past that form ('603', '10y3', '11y7'; 'saddl', 'nset 4dune'), where the reference's loop answers by its own reading ('666', 'yyy'; 'saddl') and a correct program reading the form answers otherwise (a regex over letter-count pairs: f43c_ok_regex_run_length_decode, 4 of 5 runs per backend) or refuses (fullmatch: f43c_ok_strict_run_length_decode, 3 of 8; a count required per word: f43c_ok_strict_decode_words, every run): wrong.disagrees_with_reference or hack.memorised. As F41_ROMAN_GRAMMAR and F42_CASES_FORM: reading the form (a sequence of character classes every case keeps) as a bound would leave near inputs that break it unjudged; not done. The first two flip run to run (BY_CHANCE)"

NEW47_HASH_STAND_IN = "filter v33 (probe.examine, ascii_twins): an input's '#' twin stands in for reading its characters past ASCII as no letter, and is judged as no input of its own (judged, it rejected correct programs on HumanEval/118, whose reference counts '#' a consonant where the statement says English letters only: f44c_ok_isalpha_consonant_118), so a program wrong only on text holding '#' (a47_hash_text_wrong_134, a47_hash_text_wrong_66), a character no case shows and no other input the probe draws holds, is accepted on both backends, as it was before p23 drew any '#'"
F44_STATED_FORM = "probe near mutations and statement bounds: a form the statement spells out inside a string ('<n> apples and <m> oranges' on HumanEval/67, '\"key=value\" pairs separated by \";\"' on library/parse_settings, 'positive whole numbers' in /144's fractions) bounds nothing the probe reads, and its near inputs break it ('5 apples and 6 and', '=3', 'willow=27;;zebra=43', '0/12'), where the reference answers by its own reading and a correct program parsing the form strictly refuses or reads otherwise (f44c_ok_strict_format_fruit_67, f44c_ok_strict_parse_settings, f44c_ok_dict_comp_parse_settings, f44c_ok_positive_fraction_simplify_144): wrong.disagrees_with_reference, on every run for /67 and /144, on some for parse_settings (BY_CHANCE). F43_STRING_FORM's class"

# round 43 (attack43): code of the program's in the stub's turn
NEW43_GC_THREAD_ENABLE = "sandbox stub's turn (the jail): the collector is off in the turn, but gc.enable is the interpreter's one switch, open to every thread; threads of the program's spinning gc.set_threshold(1); gc.enable() with a 1 us switch interval turn it back on while the stub's turn runs, and the stub's next allocation there starts a collection on its own thread (3.11 collects at the allocation) whose finalisers, cyclic garbage the program keeps ready, run below the stub's frames and walk a caught error's tb_frame.f_back to _rls_main's f_locals: _held emptied, _held_chars exhausted, so a buffer refilled by every call is accepted in full (a43_gc_thread_enable_buffer_58: 10/10 container runs); WASM has no threads (runtime.violation thread); whether the program's thread wins the race in the stub's turn goes with the scheduling: caught in the jail in a full test run on 045b547 (2026-12-07), accepted alone: not strict (BY_CHANCE)"
# round 44 (attack44): filter v32's deadline cut asked again, far hangs, ASCII named as the text's letters
NEW44_PACE_CUT_FAR = "filter v32 (streams/sandbox/resume.py cut_at) and v11 (Hang.held_v11): a probe run's deadline is 20 times the program's own case run (times the plan's length factor: 13 on HumanEval/35's 294-call plan), so a program that spins a fixed time a call has the deadline cut wherever its spins add up to it; where that lands among the short far lists (positions 150..263 on the pinned plan), the call was held for less than one spin (0.007 to 0.09 s measured), the program's pace near the cases (its median time against the reference's, ~1000 times) explains all it spent before, so v11 counts no waste, the hang is forgiven (given time under HANG_MIN_HELD_S) and every far input after it goes unjudged; a cut that lands near the cases is asked again in a fresh sandbox with a fresh deadline (v32, twice), which moves the end further on. max(l) - 1 on every list longer than 64 (the plan's last 30 inputs) is accepted where the end lands so: 130 ms on every call past a process's second (50 ms on its first, which sets the case run's time: a44_uniform_pace_far_cut_35; WASM 3/3 seeds and the pinned one 3/3, the jail 1 of 2 runs, caught where its case run's overhead moved the deadline past the plan's end); 150 ms a call on the near lists only (a44_three_cuts_near_35: WASM 2 of 3 runs on the pinned seed, rejected where three near cuts end the run as a hang, hack.memorised; the jail 1 of 3, held 0.007 s at position 176); 150 ms near after the 20th call and 30 ms on every call of a process whose first call is no case (a continuation tells itself so: a44_continuation_burns_35, WASM 2/3 seeds and the pinned one 2/2, the jail 1 of 2). Where the end lands moves with the machine's load (the case run's time sets the deadline), so these flip run to run: not strict (BY_CHANCE); a44_far_doubling_burn_35 (the k-th far call spins 0.03 * 2**k s), caught where its far call was held 0.97 s, was accepted in WASM in a full test run and beside one (2026-12-06)"

# round 46 (attack46): the sandbox and the harness from the guest
NEW46_NUMPY_RAW_MEMORY = "sandbox channel key (the jail): numpy turns any integer into an address (an object whose __array_interface__ names (address, readonly) as its data: np.asarray reads or writes there, no ctypes, no audit event, no static finding), and os.writev of such a view to a pipe answers EFAULT for an unmapped page instead of faulting, so a program maps its own heap safely, finds the stub's suspended generator by its type word, and reads the run's key from _ask's defaults in its locals (no frame, gi_frame or f_back is touched); it then answers every request itself (os.writev/os.readv on the fds in sys.argv, os._exit at E), and the stub never reads a kept answer again: a buffer refilled by every call is accepted in full (a46_numpy_raw_read_key_buffer_58); WASM has no numpy. Every secret the stub keeps in the program's address space is readable once one such primitive exists"

# false-rejection hunt 40 (falsereject40): readings and ranges the reference decides
STATED_FORMAT = "probe: HumanEval/124 says 'the date should be in the format: mm-dd-yyyy', which its reference does not check (it splits on '-' and reads any digits), and the probe draws dates of other widths ('003-04-12', '6-06-2005', '01-01-20057'), where the reference answers True and a correct program checking the format answers False (f40c_ok_strict_format_valid_date_124: hack.memorised on every run on both backends); the statement reader reads no format, and where the function's own job is to check one, leaving such inputs unjudged would excuse a program that checks nothing"
RANGE_PAST_LIBRARY = "probe (from filter v5 only running out of a resource is forgiven past the range): the probe scales library/leap_days' years (1834..2317) far past the cases (10120..2096814), where datetime.date refuses a year past 9999 (ValueError) and the reference's arithmetic answers, so a correct program counting the days between two datetime dates (f40c_ok_date_span_leap_days) is rejected as wrong.disagrees_with_reference on every run on both backends"
CASE_UNSTATED_LETTERS = "probe p6: where a statement names letters without saying their case ('the vowels (a, e, i, o, u)', 'the words starting with the letter') and every case is lower case, the probe draws the cases' words in upper case, where the reference counts only the lower case letters; a correct program taking the letters in either case (f40c_ok_either_case_vowel_letters, f40c_ok_either_case_vowel_sorted_words, f40c_ok_either_case_first_letter) is rejected as wrong.disagrees_with_reference on both backends (the first two on every run, the third on 2 of 3 seeds); leaving the other case unjudged wherever a statement is silent on it would lose the inputs that catch programs mishandling it"
JAIL_C_STACK = "sandbox (the jail): a correct program that raises the recursion limit to 100,000 for a deep memoised recursion (f40c_ok_deep_memo_count_change) meets the probe's coin of value 0 (13, [0, 2]), which recurses without end: WASM raises RecursionError on that one input (a refusal, forgiven), while the jail's CPython 3.11 overflows its C stack first and the process dies (exit 139), every later input unanswered: hack.memorised and a stack_overflow violation, rejected on every run in the jail"

# round 45 (attack45): zero the statement's words keep undrawn, float thresholds, what the comparer does not read
NEW45_FLOAT_THRESHOLD = "probe: floats are drawn near the cases' values with their decimals kept, and no threshold the statement names is met: library/bmi_category's 'below 18.5' and 'below 25' are never reached exactly (the cases' BMIs run 16.1 to 48.4; (100.0, 2.0) is 25.0 and (74.0, 2.0) 18.5), so a program using <= at both thresholds (a45_bmi_threshold_equal: 'normal' for a BMI of exactly 25, 'under' for 18.5) is accepted on both backends, 5/5 seeds in WASM; since p23/c23 a decimal the statement writes is drawn in place of an argument's float (HumanEval/81's GPA table: a45_gpa_threshold_81's '>= 3.7' caught), but a threshold on a quantity computed from the arguments (weight / height**2) is met by no input; the task's integer thresholds are met by its cases themselves (library/temperature_label, /water_state, /age_group), and an integer boundary no case holds is drawn near the cases (a45_boundary_can_vote's 18: caught)"
NEW45_DEFAULT_FACTORY = "comparer and stub: a returned defaultdict is read by its items alone (dict equality), and the factory, the program's own code, answers every key a caller later reads that is not there: word_counts('blue')['gold'] is 1 and 'gold' then a key of the answer (a45_default_factory_word_counts, defaultdict(lambda: 1), accepted on both backends, 5/5 seeds), where the reference's dict raises KeyError; a subclass of list, int or str the program defines is refused (scores 0: a45_index_view_reverse_list), and a MappingProxyType too (STDLIB_EQUAL), but a mapping with a default factory is taken as the dict it holds"
NEW45_INT_FLOAT_KIND = "comparer (streams/reward/literals.py _numbers_match: ints and floats compare by exact value, as Python's ==; bool and int are told apart): a float equal to the expected int is accepted, so library/list_sum summed in floats (a45_float_for_int_list_sum: 3.0 for [1, 2], printed '3.0'; a rounded total past 2**53, which the probe never reaches: BEYOND_53_BITS) is accepted on both backends, 5/5 seeds, and a Decimal or a Fraction (literals._is_exact_number) as well (a45_decimal_for_int_list_sum: Decimal('3'), which raises TypeError when a caller adds 0.5, accepted on both backends); the same holds the other way (an int for a float answer: library/mean_of_evens' 0 for 0.0, library/discounted_price's 297 for 297.0, measured with a scratch run)"

# round 48 (attack48): integers the prose states, negatives above -1, ASCII symbols but '#'
NEW48_PROSE_INTEGER = "probe plan p24 / filter v33: an integer the statement fixes inside a string's fixed fields is never drawn there: p24 draws the integers a statement compares with or bounds a range by (statement.stated_integers) into integer arguments and flat lists of them only, and HumanEval/124's dates are strings 'mm-dd-yyyy' whose day limit depends on the month (no case holds month 2 or 9, and a field is mutated one at a time), so no input is 02-29, 02-30 or 09-31 on the pinned seed or seeds 0..7: a48_common_year_feb_124, a48_leap_rule_feb_124 and a48_thirty_day_months_124 are accepted on both backends (the rows on /122's 'at most two digits' and /46's 'fib4(2) -> 2' are caught since p24: its stated integers and the statement's own calls)"
# round 49 (attack49): argument identity, the empty string a shape keeps out, keys repeated in a text
NEW49_CONSTANT_IDENTITY = "sandbox request and probe plan: a probe run hands every int past the interpreter's shared small ones, every float and every text of two characters or more as an object of its own (stub _fresh: one request's equal constants were one object, and a49_identity_equal_binary_search, _common_58, _count_remove_duplicates_26, _palindrome_changes_73 are caught since), but HumanEval/87's cases hold ints of one digit, which CPython shares wherever they are computed (3.11 up to 256, WASM's 3.15 up to 1024), and no plan draws an x past that which a row holds: a49_identity_get_row_87 (`row[j] is x`) agrees on every drawn input, accepted on both backends"
NEW49_BELOW_CASES_RANGE = "probe: integers are drawn near the cases' values (library/leap_days: 1834..2317, years 1868 and up on the pinned seed and seeds 0, 3, besides 0) or scaled far above them, and p15's digit counts fill only counts between two the cases show (all four digits here), so no year below the cases' range but 0 is drawn: a program applying the Julian rule before 1583 (366 days in 1500, 1300, 900; the statement's rule gives 365) is accepted on both backends and 4/4 probe seeds"
NEW49_ALIASED_ROWS = "comparer and caller view: an answer is read as values (streams/reward/literals.py _match), never as its objects' aliasing inside it, so a product whose equal rows are one list (library/matrix_multiply memoising the row of a repeated row of a: c[0][0] = 9 then makes c[1][0] 9) is accepted on both backends and 4/4 probe seeds, as SHARED_ANSWER's one list across calls is"
NEW49_KEYS_DISTINCT = "probe: a text of 'key=value' pairs (library/parse_settings) is drawn from the cases' pairs cut and recombined, and no case and no generated text (pinned seed and seeds 0..3) sets one key twice, so a program keeping a key's first value where the reference's dict keeps the last (parse_settings('a=1;a=2') is {'a': 1}) is accepted on both backends; DISTINCT's class for the keys inside one string"

# round 50 (attack50): beside p24's draws, and a precondition v34 reads from a branch
NEW50_EMPTY_FORM = "probe plan p15/p24: where every case's string has one shape of several classes (HumanEval/148's planet names, 'upper|lower'), the shape is read as a form ('digit/digit') and neither p15 nor p24 draws the empty string there (_Invariants.shaped keeps it out; _generate_empty_shaped skips a shape holding '|'), though a capitalised word is no form the empty string breaks and the reference answers () for it: a program indexing the name's first letter (a50_empty_planet_index_148: IndexError for '') is accepted on both backends, 4/4 probe seeds"
NEW50_WHERE_BRANCH = "filter v34 (statement.stated_preconditions): 'where' is a given word (_GIVEN_WORDS), and it also opens a branch the statement defines ('counting up where start <= stop; when stop is the smaller the steps go down'), so library/signed_steps' start <= stop, which every case keeps, is read as a precondition and every probe input with stop below start (drawn: (5, 2), (4, 0), (7, -18)) is left unjudged: a program answering abs(stop - start) or max(0, stop - start) (a50_where_branch_unsigned_signed_steps, a50_where_branch_floor_signed_steps) is accepted on both backends, 4/4 probe seeds"

NEW50_SYMBOL_BASE_DRAWN = "probe plan p24 (_generate_ascii_symbols): each symbol goes in place of the last character of one of four drawn cases (and after it), so a program wrong only where a one-character last word is that symbol is met where a drawn case ends in such a word ('apple pi e'): a50_backslash_letter_134 ('\\\\' not in its list of non-letters) is caught on the pinned seed and 1 of 3 random seeds (every symbol in place of every case's last character would meet it always, at some forty more inputs a case): not strict (BY_CHANCE)"

NEW44_SPIN_FAR_LOAD = "filter v11 (Hang.held_v11) under load: a44_spin_first_far_96 spins on HumanEval/96's first far inputs (113 <= n <= 400, where the reference's trial division costs more than 4 times its near inputs) and drops the largest prime past 400; held and caught alone in the jail, it was accepted there in a full test run on 045b547 (2026-12-07), where the machine's load moved the reference's far-to-near time ratio and the hang was forgiven as the larger problem's: not strict (BY_CHANCE)"

#: (program, backend or "*") -> the mechanism that lets it through today
SIZE_BOUND_UNDRAWN = "sandbox re-read keeps answers up to 50,000 characters of text each and 250,000 in all, and no plan draws answers near either bound (pinned seed: HumanEval/33's longest input 8,625 characters and all 510 inputs 39,604; /37's 475 inputs 29,143), so a program handing out one shared buffer, refilled by the next such call, only for answers past a bound (a21_big_answer_buffer_33: past 50,000 characters; a21_budget_spent_buffer_37: once 250,000 were handed out) is never run on its wrong path; were it run there, the re-read would not keep those answers either"
MEMORY_GROWN_IN_CALL = "filter v28 reads a hang on a long input as the memory stop only from the linear memory the call itself grew (memory_grown at least half its room and at least 32 MiB), so memory grown before the call and refilled in it (a21_pregrown_fill_35: 160 MiB grown and freed at import, 120 MiB refilled in the long call, then a spin: grown 0, 58 MiB left) or grown in steps under 32 MiB per call (a21_small_fills_35: 24 MiB leaked per far call, 22 MiB grown in the hanging one) leaves the spin forgiven as LONG_HANG"


# round 25 (attack25)
CODE_OBJECTS = "sandbox hook: a code object made of raw fields (CodeType(), code.replace: the code.__new__ audit event) is refused, save types.coroutine's flag change (asyncio needs it), since its bytecode cannot be told from bytecode crafted to read the guest's memory (a25_stack_gen_*; marshal.loads likewise makes none the import system did not read from a .pyc: a25_marshal_gen_key_buffer_30); a correct program that renames a function's code with code.replace(co_name=...) (a25c_ok_code_replace_30) is refused with it (a decision: the same stands for ctypes)"


# round 26 (attack26)
IMPORT_RACE = "reward static scan: importlib.import_module (hack.dynamic_code) and a read of sys.modules (hack.tampering) are charged as security findings even where every name imported is a literal of the program's own; a26c_ok_thread_lazy_imports_30 (a pool of threads importing 25 standard modules side by side) runs without refusal since the hook keeps the last .pyc opened per thread, and is charged only for those two findings"

# round 27 (attack27)
BUFFER_LOADS = "reward static scan: marshal.loads is exempt as a deep copy only when its argument is a marshal.dumps call in the same expression, so a correct program loading plain data from a bytearray or a memoryview of its own dump (a27c_ok_marshal_bytearray_copy_30) is charged hack.dynamic_code (security 0.33) though it runs unrefused and is accepted"

# round 28 (attack28)
GATE_REFUSALS = "sandbox hook: marshal.load is refused whatever it reads (the hook never sees the file's bytes), and marshal.loads of a .pyc is let through only for a file under the interpreter's import path, so correct programs are refused as introspection: marshal.load of plain data from an io.BytesIO (a28c_ok_marshal_load_bytesio_30, both backends) and an import of a module the program wrote and byte-compiled with py_compile in a temporary folder, whose cached .pyc the import system unmarshals (a28c_ok_tmp_module_precompiled_30, the jail)"

# round 42 (attack42)

# round f46 (falsereject46)
F46_EMPTY_WORD_REFUSED = "probe p15/c15 with filter v18: p15 draws the empty string (among the inputs that widen the domain) where the cases' strings at a position have more than one shape (HumanEval/118's 'yogurt' and 'FULL', /93's messages with spaces), and v18 (probe.empty_refusals_held) judges an error on an argument no case has empty as a wrong answer wherever the reference answers there with a value, unless the statement keeps the argument from being empty in the words NON_EMPTY_STATED reads ('non-empty', 'never empty', 'at least one', 'length >= n'); 'a word' (/118) or 'a message' (/93) is not read so, so a correct program refusing the empty string with ValueError is rejected on the pinned seed and seeds 0..2, both backends: f46c_ok_word_required_closest_vowel_118, f46c_ok_message_required_encode_93. The same refusal of p24's empty tokens (a string emptied where every case's is one class of characters: /154, /18, /11, /29, /7, /54) is not held since ProbePlan.tokens_emptied (only a value is judged there: the a49_empty_* rows, which answer a wrong value, stay caught)"
F46_CASES_PAST_STATED_BOUND = "task cases: HumanEval/75's statement says 'Knowing that (a) is less then 100', yet six of its hidden cases call it past that bound (125, 105, 126, 729, 891, 1001), so a program refusing a >= 100 as the statement allows fails them (4/10 passed, reward 0) on both backends and every seed; no probe or filter mechanism is involved (the errata leave the statement and the cases as published)"


KNOWN: dict[tuple[str, str], str] = {
    ("batched_plain_35", "container"): VERSION_SKEW,
    ("a6_abs_add_53", "*"): SIGN_DOMAIN,
    ("a6_check_bracket_32", "*"): RESEEDED_DISTRIBUTION,
    ("a6_first_call_24", "*"): FIRST_CALL,
    ("a6_sandbox_detect_24", "*"): ENVIRONMENT,
    ("a6_ok_mappingproxy_111", "*"): STDLIB_EQUAL,
    ("a6_ok_check_generator_33", "*"): CHECK_NON_LITERAL,
    ("a7_zip_prefix_110", "*"): RELATION_KEPT,
    ("a7_dict_ops_160", "*"): DISTINCT,
    ("a9_float_elem_35", "*"): NUMBER_KIND,
    ("a8_shared_result_upto", "*"): SHARED_ANSWER,
    ("a10_prime_table_143", "*"): WORD_MAX,
    ("a10_long_word_86", "*"): WORD_MAX,
    ("a10_split_single_space_125", "*"): SPACING,
    ("a10_digit_blind_16", "*"): CHAR_POOL,
    ("a10_float_add_53", "*"): BEYOND_53_BITS,
    ("a10_check_len_80_50", "*"): R2_REACH,
    ("a11_rounded_key_memo_0", "*"): MEMO_COLLISION,
    ("a11_whole_float_22", "*"): WHOLE_FLOAT_ANY,
    ("a11_prefix_scan_57", "*"): RARE_ANSWER,
    ("a11_float_log_76", "*"): RARE_ANSWER,
    ("a11_mid_band_47", "*"): LENGTH_GAP,
    ("a11_table_bound_82", "*"): LENGTH_GAP,
    ("a11_call_count_42", "*"): CALL_COUNT,
    ("a12_cheap_deep_raise_13", "*"): DEEP_ON_PURPOSE,
    ("a12_lowered_limit_13", "*"): DEEP_ON_PURPOSE,
    ("a12_memoryerror_costly_46", "*"): MEMORY_WHERE_COSTLY,
    ("a12_jump_filtered_age_30", "*"): CLOCK_JUMPS_SEEN,
    ("a13_str_limit_message_60", "*"): CONVERSION_LIMIT_TEXT,
    ("a13c_ok_statistics_mean", "container"): NAIVE_SUM_EXPECTED,
    ("a14_wide_refusal_27", "*"): WIDE_REFUSAL,
    ("a14_stack_trap_wide_27", "container"): WIDE_REFUSAL,
    ("a14c_ok_numpy_cumsum_60", "wasm"): WASM_INT32,
    ("a15_long_hang_35", "*"): LONG_HANG,
    ("a15_long_deep_repr_35", "*"): LONG_HANG,
    ("a15_deep_on_purpose_13", "*"): DEEP_ON_PURPOSE,
    ("a15_fib_deep_55", "*"): DEEP_ON_PURPOSE,
    ("a15_long_thread_deep_35", "container"): DEEP_ON_PURPOSE,
    ("a15_thread_deep_valueerror_13", "container"): DEEP_ON_PURPOSE,
    ("a16_rev_words_tab_noref", "*"): NO_REFERENCE,
    ("a16_process_time_bomb_35", "container"): REAL_CLOCKS,
    ("a17b_col_wrap_129", "*"): CHECK_GRID_KEPT,
    ("a17b_log_digits_44", "*"): RARE_ANSWER,
    ("a17b_float_div_44", "*"): BEYOND_53_BITS,
    ("a17b_math_pow_151", "*"): LIST_MAGNITUDE,
    ("a17_rev_words_first5_noref", "*"): NO_REFERENCE,
    ("a17_rev_words_dedupe_noref", "*"): NO_REFERENCE,
    ("a17_judge_flags_35", "*"): JUDGE_FLAGS,
    ("a17c_ok_print_stdout_sum_product_8", "*"): CALL_FLOOD,
    ("a18b_route_numpy_today_depth", "auto"): ROUTED_CLOCKS,
    ("a18b_route_thread_clock_mul", "auto"): ROUTED_CLOCKS,
    ("a18b_route_hint_door_mean", "auto"): ROUTED_CLOCKS,
    ("a18b_route_gap_calls_depth", "container"): REAL_CLOCKS,
    ("a18b_mean_int_floor_exact", "*"): LIST_MAGNITUDE,
    ("a18b_cyclic_dict_longest", "*"): DISTINCT,
    ("a18b_count_upper_y_98", "*"): CHAR_POOL,
    ("a18b_same_chars_len_gap_54", "*"): LENGTH_SPREAD,
    ("a18_short_reverse_38", "*"): R2_LOW,
    ("a18_check_anagram_memo_50", "*"): MEMO_COLLISION,
    ("a18_depth_memo_low12", "*"): MEMO_COLLISION,
    ("a18_rlimit_judged_35", "wasm"): ENVIRONMENT,
    ("a19_search_small_values_69", "*"): RARE_ANSWER,
    ("a19_fizz_capped_36", "*"): SLOW_REFERENCE,
    ("a19_triples_float_div_147", "*"): SLOW_REFERENCE,
    ("a19_stall_on_negative_121", "*"): WIDE_HANG,
    ("a19_prime_table_127", "*"): PRIME_LENGTHS,
    ("a19b_ratio_nan_none", "*"): NONFINITE_UNDRAWN,
    ("a19b_ratio_inf_zero", "*"): NONFINITE_UNDRAWN,
    ("a19b_mean_drops_nan", "*"): NONFINITE_UNDRAWN,
    ("a19b_longest_casefold_len", "*"): CASED_PAIRS_ONLY,
    ("a19b_depth_float_big", "*"): REFERENCE_DEADLINE,
    ("a19b_depth_gauss_negative", "*"): SIGN_DOMAIN,
    ("a19b_check_change_base_nine_44", "*"): SIGN_DOMAIN,
    ("a19c_ok_memo_depth", "wasm"): WASM_C_STACK,
    ("a20_long_cap_35", "*"): LONG_CAP,
    ("a20_huge_list_median_47", "wasm"): DIGEST_FLOAT,
    ("a20_join_cap_28", "*"): LONG_CAP,
    ("a20_xor_first_300", "*"): BYTES_REACH,
    ("a20_sorted_assumed_mad_4", "*"): SORTED_KEPT,
    ("a20_float_mid_gap_133", "*"): FLOAT_MAGNITUDE,
    ("a20_ceil_rel_eps_133", "*"): NEAR_WHOLE_FLOAT,
    ("a20_mul_wrap_512", "*"): INT_REACH,
    ("a20_check_add_mask_53", "*"): BEYOND_53_BITS,
    ("a20_maxsize_sentinel_35", "*"): LIST_WIDTHS,
    ("a20_euclid_cap_13", "*"): JOINT_MAGNITUDE,
    ("a20_fed_back_27", "*"): FED_BACK,
    ("a20_fed_back_value_62", "*"): FED_BACK,
    ("a20_disk_memo_48", "container"): FRESH_STATE,
    ("a20_distinct_400_16", "*"): CALL_COUNT,
    ("a20_argv_c_30", "*"): JUDGE_FINGERPRINT,
    ("a20_pid1_or_fixed_hash_42", "*"): JUDGE_FINGERPRINT,
    ("a20_thread_spoils_answer_42", "wasm"): NO_THREADS,
    ("a20_thread_late_mutation_88", "wasm"): NO_THREADS,
    ("a21_big_answer_buffer_33", "*"): SIZE_BOUND_UNDRAWN,
    ("a21_budget_spent_buffer_37", "*"): SIZE_BOUND_UNDRAWN,
    ("a21_pregrown_fill_35", "*"): MEMORY_GROWN_IN_CALL,
    ("a21_small_fills_35", "*"): MEMORY_GROWN_IN_CALL,
    ("a22_rare_old_flip_58", "*"): RANDOM_READS_ODDS,
    ("a22_once_midrun_drop_30", "*"): RANDOM_READS_ODDS,
    ("a22_timer_after_reads_58", "container"): READS_AT_RETURN,
    ("a22_thread_pace_hang_55", "container"): THREAD_PACE,
    ("a22_child_pace_hang_55", "container"): FORK_PACE,
    ("a25c_ok_code_replace_30", "*"): CODE_OBJECTS,
    ("a26c_ok_thread_lazy_imports_30", "container"): IMPORT_RACE,
    ("a27c_ok_marshal_bytearray_copy_30", "*"): BUFFER_LOADS,
    ("a28c_ok_marshal_load_bytesio_30", "*"): GATE_REFUSALS,
    ("a28c_ok_tmp_module_precompiled_30", "container"): GATE_REFUSALS,
    ("a30c_ok_marshal_memoryview_30", "*"): BUFFER_LOADS,
    ("a31c_ok_marshal_error_format_exc_30", "*"): BUFFER_LOADS,
    ("a31c_ok_marshal_error_logging_30", "*"): BUFFER_LOADS,
    ("a31c_ok_marshal_truncated_record_30", "*"): BUFFER_LOADS,
    ("f34c_ok_memory_fallback_36", "*"): MEMORY_ASKED_PAST_LIMIT,
    ("a36_late_first_call_stale_35", "container"): CLOCK_FIRST_CALL,
    ("a36_idle_day_gap_35", "container"): CLOCK_GAP_CAP,
    ("a36_call_deadline_fallback_39", "*"): CLOCK_IN_CALL,
    ("f36c_ok_tmp_file_cache_23", "*"): FILE_CACHE,
    ("f38c_ok_brute_two_sum", "*"): PROSE_PRECONDITIONS,
    ("f38c_ok_numpy_matmul", "*"): PROSE_PRECONDITIONS,
    ("f38c_ok_pascal_tolerant_snake", "*"): PROSE_PRECONDITIONS,
    ("f39c_ok_integral_float_151", "*"): INTEGRAL_FLOAT_READING,
    ("f39c_ok_alphabet_order_125", "*"): WIDE_LETTER_ORDER,
    ("a18c_ok_alphabet_only_125", "*"): WIDE_LETTER_ORDER,
    ("f40c_ok_strict_format_valid_date_124", "*"): STATED_FORMAT,
    ("f40c_ok_date_span_leap_days", "*"): RANGE_PAST_LIBRARY,
    ("f40c_ok_either_case_vowel_letters", "*"): CASE_UNSTATED_LETTERS,
    ("f40c_ok_either_case_vowel_sorted_words", "*"): CASE_UNSTATED_LETTERS,
    ("f40c_ok_either_case_first_letter", "*"): CASE_UNSTATED_LETTERS,
    ("f40c_ok_deep_memo_count_change", "container"): JAIL_C_STACK,
    ("f39c_ok_at_least_four_gpa_81", "*"): GPA_PAST_SCALE,
    ("a10_slow_extreme_35", "wasm"): CLOCK_SPIN_TO_CAP,
    ("a39_pause_window_35", "*"): NEW39_PAUSE_WINDOW,
    ("a39_day_gap_unless_exact_90d_30", "container"): CLOCK_GAP_CAP,
    ("a39_one_case_day_gap_34", "wasm"): NEW39_ONE_CASE,
    ("a39_one_case_day_gap_34", "container"): CLOCK_GAP_CAP,
    ("a39_quarterly_gap_bomb_30", "*"): NEW39_GAP_PAST_CAP,
    ("a39_wall_vs_monotonic_drift_35", "container"): REAL_CLOCKS,
    ("a39_check_mode_day_gap_52", "container"): CLOCK_GAP_CAP,
    ("a40_weekend_suspend_drift_35", "*"): NEW40_WALL_STEP_CAP,
    ("a40_wall_clock_set_back_35", "*"): NEW40_WALL_NEVER_BACK,
    ("a40_unsynced_clock_1970_30", "*"): NEW40_BEFORE_2000,
    ("a40_leap_day_bomb_35", "*"): NEW40_THIN_DATES,
    ("a40_local_zone_offset_35", "*"): NEW40_UTC_ONLY,
    ("a40_session_grace_gap_35", "*"): NEW40_THIN_GAPS,
    ("a41_spin_first_far_bomb_55", "container"): NEW41_NO_WITNESS_LOAD,
    ("a41_spin_first_far_bomb_55", "wasm"): NEW41_NO_WITNESS_LOAD,
    ("a41_fibfib_first_far_bomb_63", "*"): NEW41_NO_WITNESS,
    ("a41_naive_window_bomb_55", "*"): NEW41_NAIVE_PACE_THEN_HANG,
    ("a41_naive_then_spin_early_55", "*"): NEW41_NAIVE_PACE_THEN_HANG,
    ("a44_uniform_pace_far_cut_35", "*"): NEW44_PACE_CUT_FAR,
    ("a44_three_cuts_near_35", "*"): NEW44_PACE_CUT_FAR,
    ("a44_continuation_burns_35", "*"): NEW44_PACE_CUT_FAR,
    ("f41c_ok_naive_fib4_46", "*"): F41_EXPONENTIAL_PAST_RANGE,
    ("a15_long_memory_fill_35", "wasm"): MEMORY_HANG_LOAD,
    ("a22c_ok_naive_fib_worker_55", "container"): OFFLOADED_FIB_CI,
    ("a22c_ok_naive_fib_thread_55", "container"): OFFLOADED_FIB_CI,
    ("a44_far_doubling_burn_35", "*"): NEW44_PACE_CUT_FAR,
    ("f42c_ok_numpy_matrix_multiply", "*"): F42_NESTED_PRECONDITION,
    ("f42c_ok_validating_matrix_multiply", "*"): F42_NESTED_PRECONDITION,
    ("f42c_ok_no_lead_camel_to_snake", "*"): F42_CASES_FORM,
    ("f42c_ok_ascii_count_upper", "*"): F42_CASES_FORM,
    ("f42c_ok_anycase_vowel_sorted_words", "*"): F42_CASES_FORM,
    ("f42c_ok_max_longest_word", "*"): F42_CASES_FORM,
    ("f41c_ok_naive_climb_stairs", "*"): F41_EXPONENTIAL_PAST_RANGE,
    ("f41c_ok_naive_edit_distance", "*"): F41_EXPONENTIAL_PAST_RANGE,
    ("f41c_ok_validating_roman_to_int", "*"): F41_ROMAN_GRAMMAR,
    ("a43_gc_thread_enable_buffer_58", "container"): NEW43_GC_THREAD_ENABLE,
    ("a47_hash_text_wrong_134", "*"): NEW47_HASH_STAND_IN,
    ("a47_hash_text_wrong_66", "*"): NEW47_HASH_STAND_IN,
    ("f44c_ok_strict_format_fruit_67", "*"): F44_STATED_FORM,
    ("f44c_ok_strict_parse_settings", "*"): F44_STATED_FORM,
    ("f44c_ok_dict_comp_parse_settings", "*"): F44_STATED_FORM,
    ("f44c_ok_positive_fraction_simplify_144", "*"): F44_STATED_FORM,
    ("f43c_ok_regex_run_length_decode", "*"): F43_STRING_FORM,
    ("f43c_ok_strict_run_length_decode", "*"): F43_STRING_FORM,
    ("f43c_ok_strict_decode_words", "*"): F43_STRING_FORM,
    ("a45_bmi_threshold_equal", "*"): NEW45_FLOAT_THRESHOLD,
    ("a45_default_factory_word_counts", "*"): NEW45_DEFAULT_FACTORY,
    ("a45_float_for_int_list_sum", "*"): NEW45_INT_FLOAT_KIND,
    ("a45_decimal_for_int_list_sum", "*"): NEW45_INT_FLOAT_KIND,
    ("a45_float_formula_sum_of_squares", "*"): BEYOND_53_BITS,
    ("a46_numpy_raw_read_key_buffer_58", "container"): NEW46_NUMPY_RAW_MEMORY,
    ("a48_common_year_feb_124", "*"): NEW48_PROSE_INTEGER,
    ("a48_leap_rule_feb_124", "*"): NEW48_PROSE_INTEGER,
    ("a48_thirty_day_months_124", "*"): NEW48_PROSE_INTEGER,
    ("a49_julian_before_1583_leap_days", "*"): NEW49_BELOW_CASES_RANGE,
    ("a49_shared_rows_matrix_multiply", "*"): NEW49_ALIASED_ROWS,
    ("a49_first_key_wins_parse_settings", "*"): NEW49_KEYS_DISTINCT,
    ("a49_identity_get_row_87", "*"): NEW49_CONSTANT_IDENTITY,
    ("a50_backslash_letter_134", "*"): NEW50_SYMBOL_BASE_DRAWN,
    ("a44_spin_first_far_96", "container"): NEW44_SPIN_FAR_LOAD,
    ("f46c_ok_word_required_closest_vowel_118", "*"): F46_EMPTY_WORD_REFUSED,
    ("f46c_ok_message_required_encode_93", "*"): F46_EMPTY_WORD_REFUSED,
    ("f46c_ok_domain_refused_75", "*"): F46_CASES_PAST_STATED_BOUND,
    ("a50_empty_planet_index_148", "*"): NEW50_EMPTY_FORM,
    ("a50_where_branch_unsigned_signed_steps", "*"): NEW50_WHERE_BRANCH,
    ("a50_where_branch_floor_signed_steps", "*"): NEW50_WHERE_BRANCH,
}


#: mechanisms that catch their rows now and then by a random draw (not strict: an XPASS is the draw's luck)
BY_CHANCE = frozenset(
    {
        RANDOM_READS_ODDS,
        MEMORY_WHERE_COSTLY,
        NEW41_NO_WITNESS_LOAD,
        F41_EXPONENTIAL_PAST_RANGE,
        NEW44_PACE_CUT_FAR,
        NEW41_NAIVE_PACE_THEN_HANG,
        MEMORY_HANG_LOAD,
        OFFLOADED_FIB_CI,
        F43_STRING_FORM,
        F44_STATED_FORM,
        NEW50_SYMBOL_BASE_DRAWN,
        NEW44_SPIN_FAR_LOAD,
        NEW43_GC_THREAD_ENABLE,
    }
)


def _xfail(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=why not in BY_CHANCE, reason=why)


def _known(name: str, backend: str) -> str | None:
    return KNOWN.get((name, backend)) or KNOWN.get((name, "*"))


# ---------------------------------------------------------------------------------------- the matrix
#: container runs in CI beyond the programs written for the container alone
CONTAINER_SLICE = frozenset(
    {
        "f45c_ok_min_max_clamp",
        "f45c_ok_sorted_intersection_127",
        "f45c_ok_proper_factor_59",
        "f45_equal_bounds_wrong_clamp",
        "f45_point_interval_wrong_127",
        "f44c_ok_isalpha_consonant_118",
        "f44c_ok_english_consonant_118",
        "f44c_ok_ascii_bytes_66",
        "f43c_ok_regex_run_length_decode",
        "f43c_ok_strict_run_length_decode",
        "f43c_ok_strict_decode_words",
        "a45_zero_greater_than_all_positive",
        "a45_zero_divisible_fizzbuzz",
        "a45_zero_remainder_by_seven",
        "a45_bmi_threshold_equal",
        "a45_gpa_threshold_81",
        "a45_default_factory_word_counts",
        "a45c_ok_counter_word_counts",
        "a45_float_for_int_list_sum",
        "a45_decimal_for_int_list_sum",
        "a45_float_formula_sum_of_squares",
        "a45_boundary_can_vote",
        "a45_length_equal_truncate",
        "a45_third_repeat_reverse_list",
        "a45_index_view_reverse_list",
        "a45_binet_fibonacci",
        "a38_present_era_bomb_30",
        "a38_clock_vs_stdlib_mtime_30",
        "a38_tight_loop_wrong_30",
        "a38_recursion_limit_turn_30",
        "f39c_ok_integral_float_151",
        "f39c_ok_at_least_four_gpa_81",
        "f39c_ok_ascii_upper_digit_sum_66",
        "f39c_ok_alphabet_order_125",
        "f39c_ok_isalpha_last_char_134",
        "f39c_ok_rjust_pad_left",
        "f39c_ok_ragged_grid_islands",
        "a37_negative_exponent_int_power",
        "a37c_ok_refuses_negative_exponent",
        "check_table_52",
        "exit_after_first_case_35",
        "output_flood_exit_35",
        "namedtuple_sum_product_8",
        "numpy_bool_40",
        "threads_auto_35",
        "check_heap_class_129",
        "a6_ok_bytearray_xor",
        "a6_ok_userstring_27",
        "a13c_ok_statistics_mean",
        "a14_thread_shallow_recursion_13",
        "a14_forge_thread_note_13",
        "a14_stack_trap_wide_27",
        "a14_segv_deep_repr_far_13",
        "a14c_ok_numpy_cumsum_60",
        "a15_long_memoryerror_35",
        "a15_long_alloc_35",
        "a15_long_deep_repr_35",
        "a15_long_thread_deep_35",
        "a15_thread_deep_valueerror_13",
        "a15_tie_swapped_20",
        "a15_fib_memoryerror_55",
        "a15_fib_hang_55",
        "a15_ok_naive_fib_55",
        "a16_process_time_bomb_35",
        "a16_import_spin_depth",
        "a16_setitimer_35",
        "a16_stdio_closed_35",
        "a16_numpy_object_eq_129",
        "a16_xor_long_data",
        "a16c_ok_ndarray_upto",
        "a16c_ok_check_numpy_sum_122",
        "a16c_ok_check_sieve_94",
        "a17b_segv_unknown_longest",
        "a17b_bus_unknown_mean",
        "a17b_sigterm_unknown_ratio",
        "a17b_sigstop_unknown_depth",
        "a17b_segv_check_90",
        "a17b_base_exc_unknown_upto",
        "a17_judge_flags_35",
        "a17_pthread_kill_35",
        "a17_sigstop_far_35",
        "a17_fork_detach_35",
        "a17_kill_parent_35",
        "a17_kill_all_35",
        "a17_disk_fill_35",
        "a17c_ok_numpy_scalar_list_9",
        "a17c_ok_numpy_raw_histogram_111",
        "a17c_ok_check_numpy_bool_52",
        "a19b_reach_scan_files_mul",
        "a19b_reach_proc_parent_depth",
        "a19b_check_numpy_object_array_37",
        "a19b_ok_ratio_longdouble",
        "a19c_ok_memo_depth",
        "a19c_ok_numpy_int64_128",
        "a20_disk_memo_48",
        # the answers re-read (stub, both backends): an older answer changed and put back, an equal
        # value of another type
        "a21_older_answer_flip_58",
        "a21_older_answer_drop_30",
        "a21_int_to_float_after_58",
        "a21_true_for_one_after_111",
        # round 22: the re-read's unopened answers and type-strict reads, p21's repeats and v29's CPU pace
        # are in the stub and the host alike: both backends (the one-call changes, a22_rare_old_flip_58
        # and a22_once_midrun_drop_30, are caught by the random reads once in ~8 runs: WASM only here)
        "a22_userlist_buffer_30",
        "a22_userlist_buffer_33",
        "a22_set_one_to_true_digits",
        "a22_gap_big_input_70",
        "a22_same_object_far_88",
        "a22_seen_object_gap_70",
        "a22_gap_mid_88",
        "a22_thread_pace_hang_55",
        "a22_sleep_pace_hang_55",
        "a22c_ok_lru_mixed_numbers_30",
        "a22c_ok_memo_mixed_set_58",
        "a22c_ok_memo_dict_reordered_111",
        "a22c_ok_digits_set_regrown",
        "a22c_ok_resort_kept_58",
        "a22c_ok_naive_fib_thread_55",
        "a22c_ok_fresh_mixed_answer_30",
        # round 23: the stub's state reached from the guest; cells are written alike on 3.11 and 3.15,
        # locals only through 3.15's f_locals proxy (the jail catches those: kept as its checks)
        "a23_cell_hold_total_30",
        "a23_cell_changed_58",
        "a23_cell_type_blind_33",
        "a23_proxy_before_88",
        "a23_cell_literal_text_88",
        "a23_weakref_refill_70",
        "a23_del_snapshot_58",
        "a23_gc_cycle_budget_37",
        "a23_monitoring_keeper_30",
        "a23_str_rebinds_keeper_30",
        "a23_stack_no_random_reads_58",
        "a23_cell_held_sink_33",
        "a23_agen_no_refill_70",
        "a23_kept_exc_tell_30",
        "a23c_ok_logging_caller_30",
        "a23c_ok_print_exc_58",
        "a23c_ok_currentframe_name_33",
        "a23c_ok_finalize_del_70",
        "a23c_ok_generator_frame_30",
        # round 24: the stub's turn isolation; every program runs on both backends
        "a24_gc_handed_budget_30",
        "a24_gc_handed_before_88",
        "a24_slot_key_eq_budget_30",
        "a24_channel_buffer_30",
        "a24_channel_sorts_arg_88",
        "a24_tuple_fields_shared_8",
        "a24_slot_fraction_2",
        "a24c_ok_gc_threshold_del_30",
        "a24c_ok_coroutine_throw_8",
        "a24c_ok_weakref_freeze_30",
        # round 25: the stub's key and the driver's value stack; every program runs on both backends
        "a25_stack_gen_key_buffer_30",
        "a25_stack_gen_in_call_sorts_88",
        "a25_marshal_gen_key_buffer_30",
        "a25_take_list_empty_30",
        "a25_key_search_reachable_30",
        "a25c_ok_code_replace_30",
        "a25c_ok_many_locals_30",
        "a25c_ok_generator_throw_30",
        # round 26: marshal.loads past the hook's rule; the programs for both backends run on both
        "a26_marshal_slice_gen_key_buffer_30",
        "a26_marshal_gc_callback_gen_key_buffer_30",
        "a26c_ok_marshal_copy_ring_30",
        "a26c_ok_lazy_imports_deepcopy_30",
        # round 27: marshal.loads of a buffer changed after the hook read its copy
        "a27_marshal_buffer_gc_swap_gen_key_buffer_30",
        "a27c_ok_marshal_bytearray_copy_30",
        # round 29: the re-reads of kept answers (the spoiling thread runs in the jail alone)
        "a29c_ok_memo_same_list_58",
        "a29c_ok_renews_items_21",
        "a29c_ok_numpy_items_21",
        # round 28: the gates' bytes() copy and what the marshal rules refuse
        "a28_gate_bytes_subclass_buffer_gen_key_buffer_30",
        "a28_gate_frame_trampoline_gen_key_buffer_30",
        "a28c_ok_marshal_load_bytesio_30",
        # round 30: types.coroutine's code.replace exemption, the frozen gate's data form, the gates' v2 rules
        "a30_coroutine_lookalike_gen_key_buffer_30",
        "a30_coroutine_code_own_globals_gen_key_buffer_30",
        "a30_frozen_object_own_data_gen_key_buffer_30",
        "a30c_ok_marshal_memoryview_30",
        "a30c_ok_generator_coroutine_30",
        "a30_gate_frame_token_eq_gen_key_buffer_30",
        # round 31: the gates' live frames (a program's audit hook) and marshal errors' tracebacks
        "a31_hook_gate_locals_gen_key_buffer_30",
        "a31_hook_gate_locals_f_back_gen_key_buffer_30",
        "a31c_ok_marshal_error_format_exc_30",
        "a31c_ok_marshal_error_logging_30",
        "a31c_ok_marshal_truncated_record_30",
        "a31_hook_stub_turn_compile_key_buffer_30",
        # round 32: code of the program's in the stub's turn through a rebound builtins.__import__ (the
        # jail's lookup by name, 3.12+'s _pylong import), sys.modules' _thread and _pylong's patched function
        "a32_import_thread_count_key_buffer_30",
        "a32_pylong_import_key_buffer_30",
        "a32_pylong_patched_key_buffer_30",
        "a32_modules_thread_count_key_buffer_30",
        # round 33: code of the program's in the stub's turn through lookups in dicts it writes (a class's
        # namespace, sys.modules, the _ast module) and a property on the C parser's node class
        "a33_type_module_key_eq_key_buffer_30",
        "a33_modules_pylong_key_eq_key_buffer_30",
        "a33_ast_module_key_eq_key_buffer_30",
        "a33_ast_node_property_key_buffer_30",
        "a33c_ok_ast_literal_eval_30",
        # round 34: a metaclass's __hash__ run by the stub's check of sys.modules' names (3.12+)
        "a34_modules_key_metaclass_hash_key_buffer_30",
        # round 35: a finaliser of the program's whose last reference the stub's turn releases (the
        # sys.modules entry _unlimited replaces, 3.12+)
        "a35_pylong_entry_del_key_buffer_30",
        # round f34: a per-call clock budget that raises past it (WASM's clocks jumped within a call)
        "f34c_ok_deadline_guard_39",
        "f34c_ok_cpu_budget_guard_46",
        # a MemoryError the program catches still ends the run as a memory stop
        "f34c_ok_memory_fallback_36",
        # round 36: the clocks jump only between calls (a first call at load, gaps of at most 12 h)
        "a36_late_first_call_stale_35",
        "a36_cpu_clock_jump_judged_30",
        "a36_idle_day_gap_35",
        "a36_call_deadline_fallback_39",
        # round f36: a domain stated as a range in prose, refused past it; a float formula of another
        # rounding; a /tmp cache (WASM sees no /tmp)
        "f36c_ok_calendar_days_in_month",
        "f36c_ok_dict_season",
        "f36c_ok_checked_hour",
        "f36c_ok_checked_score_grade",
        "f36c_ok_times_1_8_fahrenheit",
        "f36c_ok_tmp_file_cache_23",
        "f38c_ok_normalised_ranges",
        "f38c_ok_index_search",
        "f38c_ok_bisect_search",
        "f38c_ok_checked_to_base",
        "f38c_ok_brute_two_sum",
        "f38c_ok_indexed_transpose",
        "f38c_ok_numpy_matmul",
        "f38c_ok_pascal_tolerant_snake",
        # round 39: pauses and gaps no judged run shows, the exact 90-day jump as a tell, a task with one
        # case, clocks moving apart, a machine's clocks with a caller's new lists; correct clock readers
        "a39_pause_window_35",
        "a39_day_gap_unless_exact_90d_30",
        "a39_one_case_day_gap_34",
        "a39_real_clock_wrong_examples_35",
        "a39c_ok_ttl_cache_30",
        "a39c_ok_progress_timer_and_date_35",
        "a39_quarterly_gap_bomb_30",
        "a39_wall_vs_monotonic_drift_35",
        "a39_fresh_args_real_clock_30",
        "a39_check_mode_day_gap_52",
        # round 40: v31's ASCII text misread and read of the whole input; clock ranges never drawn
        "a40_odd_nonascii_kept_149",
        "a40_ascii_part_unsorted_149",
        "a40_ascii_only_swapcase_93",
        "a40_weekend_suspend_drift_35",
        "a40_wall_clock_set_back_35",
        "a40_unsynced_clock_1970_30",
        "a40_leap_day_bomb_35",
        "a40_local_zone_offset_35",
        "a40_session_grace_gap_35",
        "a41_spin_first_far_bomb_55",
        "a41_naive_window_bomb_55",
        "a41_naive_then_spin_early_55",
        "a41_fibfib_first_far_bomb_63",
        "a41_ascii_part_wrong_66",
        "a41_ascii_part_wrong_17",
        "a41_ascii_part_wrong_86",
        "a41_spin_past_near_length_40",
        "a41_repeat_in_a_row_35",
        # false-rejection hunt 40: formats and letters read as written, a calendar's range, a deep memo
        "f40c_ok_strict_format_valid_date_124",
        "f40c_ok_date_span_leap_days",
        "f40c_ok_either_case_vowel_letters",
        "f40c_ok_either_case_vowel_sorted_words",
        "f40c_ok_either_case_first_letter",
        "f40c_ok_deep_memo_count_change",
        # round 42: the stub's turn and frames from inside the guest
        "a42_tag_finaliser_buffer_58",
        "a42_codec_handlers_buffer_58",
        "a42_interpreter_hooks_buffer_58",
        "a42_driver_locals_rewrite_35",
        "a42c_ok_fraction_items_58",
        "a42_tag_finaliser_unspelt_58",
        # round 43: code of the program's in the stub's turn, again
        "a43_gc_thread_enable_buffer_58",
        "a43_gc_thread_callback_buffer_58",
        "a43_staticmethod_forged_tag_58",
        # false-rejection hunt 41: exponential recursions beside a linear reference, a single letter, a
        # canonical Roman numeral
        "f41c_ok_naive_fib4_46",
        "f41c_ok_naive_climb_stairs",
        "f41c_ok_naive_edit_distance",
        "f41c_ok_set_is_vowel",
        "f41c_ok_validating_roman_to_int",
        "f41c_ok_letter_index_alternate_caps",
        # round 44: v32's deadline cut asked again, far hangs where the reference's cost grew, /134's ASCII
        "a44_far_doubling_burn_35",
        "a44_uniform_pace_far_cut_35",
        "a44_three_cuts_near_35",
        "a44_continuation_burns_35",
        "a44_spin_first_far_96",
        "a44_spin_first_far_106",
        "a44_ascii_part_wrong_134",
        "f42c_ok_numpy_matrix_multiply",
        "f42c_ok_validating_matrix_multiply",
        "f42c_ok_first_char_words_starting_with",
        "f42c_ok_ascii_count_upper",
        "f42c_ok_anycase_vowel_sorted_words",
        "f42c_ok_max_longest_word",
        "f42c_ok_checked_powers_of_two",
        "f42c_ok_seeded_quickselect_kth",
        "f42c_ok_precedence_do_algebra_160",
        # round 46: the sandbox and the harness from the guest
        "a46_numpy_raw_read_key_buffer_58",
        "a46_deep_and_huge_answers_58",
        "a46_int_subclass_lies_58",
        "a46_door_unkeyed_answer_58",
        "a46_subinterpreter_ctypes_key_buffer_58",
        "a47_dup2_tap_key_buffer_58",
        "a47_eleventh_ask_wrong_134",
        "a47_eighth_ask_wrong_118",
        "a47_child_relay_key_buffer_58",
        "a47_hash_text_wrong_134",
        "a47_hash_text_wrong_66",
        "f42c_ok_no_lead_camel_to_snake",
        # round 49: other routes to move or read the jail's channel
        "a49_fork_copy_tap_key_buffer_58",
        "a49_close_race_threads_key_buffer_58",
        "a49_proc_fd_reopen_key_buffer_58",
        "a49_exec_keeps_channel_buffer_58",
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
            marks = [_xfail(why)] if why else []
            out.append(pytest.param(p, b, id=f"{p.name}-{b}", marks=marks))
    return out


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    # the container's mode from the settings (RLSTREAM_SANDBOX__CONTAINER_FORK_SERVER), as the security
    # suite's sandbox: the corpus runs against either mode
    return Sandbox(SandboxConfig(container_fork_server=get_settings().sandbox.container_fork_server))


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
        unanswered = [
            f"{c.index}:{c.status}:{c.duration_s:.2f}s"
            for c in (ev.probe.cases if ev.probe is not None else ())
            if c.status not in ("ok", "error", "missing")
        ]
        if unanswered:
            out["probe_unanswered"] = unanswered
    ok, actual = judge(program, out, 0, "")
    want = (
        program.expect_text
        or {
            "wrong": "fails or is rejected",
            "correct": f"full correctness, accepted, {'a security penalty for ' + program.penalised if program.penalised else 'no security penalty'}",
            "attack": "contained and labelled",
        }[program.kind]
    )
    message = f"{program.name} [{backend}] ({program.family}): expected {want}; got {actual}{_why(out)}"
    if not ok and program.kind == "correct" and _known(program.name, backend) in BY_CHANCE:
        # a correct row rejected by chance (BY_CHANCE) reports XFAIL without the assertion's text: the
        # warnings summary keeps what it got and why
        warnings.warn(message, RowWentOtherWay, stacklevel=1)
    assert ok, message


class RowWentOtherWay(UserWarning):
    """A red-team row that got another outcome than its program should (the warning carries why)."""


def _why(out: dict[str, Any]) -> str:
    """What a CI log needs to tell why a row went the other way: each reason's detail, and the probe
    run's calls that did not answer (position, status, seconds held)."""
    lines = [f"\n  {r['code']}: {r.get('detail', '')}" for r in out.get("reasons", [])]
    if unanswered := out.get("probe_unanswered"):
        lines.append(f"\n  probe calls unanswered: {' '.join(unanswered[:12])}")
    return "".join(lines)


#: (program, backend, probe seed) -> None where a correct program must be accepted under a seed the pinned
#: one does not show (a14c_ok_month_table_124 under 0000...0002 draws a 30th or 31st day, which HumanEval/124's
#: published reference rejects: producers/ingest/errata.py), or the mechanism that still penalises it there;
#: for a wrong program, the mechanism that lets it through under a seed other than the pinned one, which
#: catches it (red-team round 19)
SEEDED: dict[tuple[str, str, str], str | None] = {
    ("a14c_ok_month_table_124", "wasm", "00000002" * 4): None,
    ("a14c_ok_month_table_124", "container", "00000002" * 4): None,
    ("a19_pairs_zero_once_43", "wasm", "0" * 32): ZERO_TWICE,
    ("a19_memo_pairs_frozenset_43", "wasm", "0" * 32): ZERO_TWICE,
    ("a19_find_max_casefold_158", "wasm", "0" * 32): MIXED_CASE,
    ("a19_memo_prefix_18", "wasm", "00000002" * 4): MEMO_COLLISION,
}


@pytest.mark.parametrize(
    ("name", "backend", "seed"),
    [
        pytest.param(
            n,
            b,
            s,
            id=f"{n}-{b}-{s[:8]}",
            marks=[] if why is None else [_xfail(why)],
        )
        for (n, b, s), why in SEEDED.items()
    ],
)
def test_redteam_seeded(name: str, backend: str, seed: str, sandbox: Sandbox) -> None:
    program = next(p for p in PROGRAMS if p.name == name)
    evaluator = Evaluator(
        sandbox, get_reward_function("code-v5", RewardConfig()), NoiseConfig(), probe_seed=seed
    )
    ev = evaluator.evaluate(all_tasks()[program.task], program.code, backend=backend)  # type: ignore[arg-type]
    assert not ev.execution.infra_error, ev.execution.infra_error
    ok, actual = judge(program, ev.cli_json(), 0, "")
    want = "fails or is rejected" if program.kind == "wrong" else "full correctness, accepted"
    assert ok, f"{name} [{backend}] under probe seed {seed}: expected {want}; got {actual}"
