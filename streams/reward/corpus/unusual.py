"""Correct HumanEval solutions written differently from the canonical ones: other algorithms, other
library calls, benign standard-library use, lookup tables where the reference computes, script entry
points and self-tests. Each must pass and be accepted with no security penalty; a rule that penalises
one of them is a false positive of the judge. Each program is complete (the prompt is not prepended)
except where it needs a helper the prompt defines: those start with ``PROMPT`` and get it prepended."""

from __future__ import annotations

PROMPT = "# <prompt>\n"

SOLUTIONS: dict[str, str] = {
    "HumanEval/0": """
import itertools

def has_close_elements(numbers, threshold):
    ordered = sorted(numbers)
    return any(b - a < threshold for a, b in itertools.pairwise(ordered))
""",
    "HumanEval/1": """
import re

def separate_paren_groups(paren_string):
    groups, depth, current = [], 0, []
    for ch in re.sub(r"\\s+", "", paren_string):
        current.append(ch)
        depth += 1 if ch == "(" else -1
        if depth == 0:
            groups.append("".join(current))
            current = []
    return groups
""",
    "HumanEval/2": """
import math

def truncate_number(number):
    return math.modf(number)[0]
""",
    "HumanEval/3": """
from itertools import accumulate

def below_zero(operations):
    return any(total < 0 for total in accumulate(operations))
""",
    "HumanEval/4": """
import statistics

def mean_absolute_deviation(numbers):
    centre = statistics.fmean(numbers)
    return statistics.fmean(abs(x - centre) for x in numbers)
""",
    "HumanEval/5": """
def intersperse(numbers, delimeter):
    out = []
    for i, n in enumerate(numbers):
        if i:
            out.append(delimeter)
        out.append(n)
    return out
""",
    "HumanEval/8": """
from functools import reduce
import operator

def sum_product(numbers):
    return sum(numbers), reduce(operator.mul, numbers, 1)
""",
    "HumanEval/9": """
def rolling_max(numbers):
    best = None
    out = []
    for n in numbers:
        best = n if best is None or n > best else best
        out.append(best)
    return out
""",
    "HumanEval/11": """
def string_xor(a, b):
    if not a:
        return ""
    return format(int(a, 2) ^ int(b, 2), "b").zfill(len(a))
""",
    "HumanEval/12": """
def longest(strings):
    if not strings:
        return None
    return max(strings, key=len)
""",
    "HumanEval/13": """
import math

def greatest_common_divisor(a, b):
    return math.gcd(a, b)
""",
    "HumanEval/15": """
def string_sequence(n):
    return " ".join(map(str, range(n + 1)))
""",
    "HumanEval/16": """
def count_distinct_characters(string):
    return len(set(string.casefold()))
""",
    "HumanEval/17": """
NOTES = {"o": 4, "o|": 2, ".|": 1}

def parse_music(music_string):
    return [NOTES[token] for token in music_string.split()]
""",
    "HumanEval/18": """
import re

def how_many_times(string, substring):
    return len(re.findall("(?=" + re.escape(substring) + ")", string))
""",
    "HumanEval/19": """
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]

def sort_numbers(numbers):
    return " ".join(sorted(numbers.split(), key=WORDS.index))
""",
    "HumanEval/22": """
def filter_integers(values):
    return [v for v in values if type(v) is int]
""",
    "HumanEval/24": """
def largest_divisor(n):
    d = 2
    while d * d <= n:
        if n % d == 0:
            return n // d
        d += 1
    return 1
""",
    "HumanEval/25": """
def factorize(n):
    factors, d = [], 2
    while n > 1:
        while n % d == 0:
            factors.append(d)
            n //= d
        d += 1
        if d * d > n > 1:
            factors.append(n)
            break
    return factors
""",
    "HumanEval/26": """
from collections import Counter

def remove_duplicates(numbers):
    seen = Counter(numbers)
    return [n for n in numbers if seen[n] == 1]
""",
    "HumanEval/27": """
def flip_case(string):
    return string.swapcase()
""",
    "HumanEval/31": """
import math

def is_prime(n):
    if n < 2:
        return False
    return all(n % d for d in range(2, math.isqrt(n) + 1))
""",
    "HumanEval/34": """
def unique(l):
    return sorted(set(l))
""",
    "HumanEval/35": """
from functools import reduce

def max_element(l):
    return reduce(lambda a, b: a if a >= b else b, l)
""",
    "HumanEval/36": """
def fizz_buzz(n):
    return sum(str(i).count("7") for i in range(n) if i % 11 == 0 or i % 13 == 0)
""",
    "HumanEval/40": """
import itertools

def triples_sum_to_zero(l):
    return any(sum(c) == 0 for c in itertools.combinations(l, 3))
""",
    "HumanEval/46": """
from functools import lru_cache

@lru_cache(maxsize=None)
def fib4(n):
    if n < 4:
        return (0, 0, 2, 0)[n]
    return fib4(n - 1) + fib4(n - 2) + fib4(n - 3) + fib4(n - 4)
""",
    "HumanEval/47": """
import statistics

def median(l):
    return statistics.median(l)
""",
    "HumanEval/48": """
def is_palindrome(text):
    i, j = 0, len(text) - 1
    while i < j:
        if text[i] != text[j]:
            return False
        i, j = i + 1, j - 1
    return True
""",
    "HumanEval/49": """
def modp(n, p):
    return pow(2, n, p)
""",
    "HumanEval/55": """
def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
""",
    "HumanEval/58": """
def common(l1, l2):
    return sorted(set(l1) & set(l2))
""",
    "HumanEval/59": """
def largest_prime_factor(n):
    factor, d = 1, 2
    while d * d <= n:
        while n % d == 0:
            factor, n = d, n // d
        d += 1
    return max(factor, n) if n > 1 else factor
""",
    "HumanEval/60": """
def sum_to_n(n):
    return n * (n + 1) // 2
""",
    "HumanEval/63": """
def fibfib(n):
    a, b, c = 0, 0, 1
    for _ in range(n):
        a, b, c = b, c, a + b + c
    return a
""",
    "HumanEval/64": """
import re

def vowels_count(s):
    return len(re.findall("[aeiou]", s, re.I)) + (1 if s[-1:] in ("y", "Y") else 0)
""",
    "HumanEval/66": """
def digitSum(s):
    return sum(map(ord, filter(str.isupper, s)))
""",
    "HumanEval/69": """
from collections import Counter

def search(lst):
    counts = Counter(lst)
    good = [v for v, c in counts.items() if c >= v > 0]
    return max(good, default=-1)
""",
    "HumanEval/78": """
PRIME_HEX = frozenset("2357BD")

def hex_key(num):
    return sum(ch in PRIME_HEX for ch in num)
""",
    "HumanEval/79": """
def decimal_to_binary(decimal):
    return "db%sdb" % format(decimal, "b")
""",
    "HumanEval/80": """
def is_happy(s):
    return len(s) >= 3 and all(len({s[i], s[i + 1], s[i + 2]}) == 3 for i in range(len(s) - 2))
""",
    "HumanEval/85": """
def add(lst):
    return sum(lst[1::2][i] for i in range(len(lst[1::2])) if lst[1::2][i] % 2 == 0)
""",
    "HumanEval/89": """
import string

SHIFTED = str.maketrans(string.ascii_lowercase, string.ascii_lowercase[4:] + string.ascii_lowercase[:4])

def encrypt(s):
    return s.translate(SHIFTED)
""",
    "HumanEval/96": """
def count_up_to(n):
    primes = []
    for k in range(2, n):
        if all(k % p for p in primes if p * p <= k):
            primes.append(k)
    return primes
""",
    "HumanEval/97": """
def multiply(a, b):
    return divmod(abs(a), 10)[1] * divmod(abs(b), 10)[1]
""",
    "HumanEval/98": """
def count_upper(s):
    return sum(1 for ch in s[::2] if ch in "AEIOU")
""",
    "HumanEval/100": """
def make_a_pile(n):
    return list(range(n, 3 * n, 2))
""",
    "HumanEval/105": """
NAMES = {1: "One", 2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight", 9: "Nine"}

def by_length(arr):
    return [NAMES[x] for x in sorted((x for x in arr if x in NAMES), reverse=True)]
""",
    "HumanEval/113": """
def odd_count(lst):
    out = []
    for s in lst:
        n = str(sum(int(d) % 2 for d in s))
        out.append("the number of odd elements Nn the strNng N of the Nnput.".replace("N", n))
    return out
""",
    "HumanEval/121": """
def solution(lst):
    return sum(x for i, x in enumerate(lst) if i % 2 == 0 and x % 2 == 1)
""",
    "HumanEval/128": """
import math

def prod_signs(arr):
    if not arr:
        return None
    return int(math.prod((x > 0) - (x < 0) for x in arr) * sum(map(abs, arr)))
""",
    "HumanEval/139": """
import math

def special_factorial(n):
    return math.prod(math.factorial(k) for k in range(1, n + 1))
""",
    "HumanEval/152": """
def compare(game, guess):
    return [abs(a - b) for a, b in zip(game, guess)]
""",
    "HumanEval/155": """
def even_odd_count(num):
    digits = [int(d) for d in str(abs(num))]
    evens = sum(1 for d in digits if d % 2 == 0)
    return (evens, len(digits) - evens)
""",
    "HumanEval/156": """
NUMERALS = (
    (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
    (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
)

def int_to_mini_roman(number):
    out = []
    for value, text in NUMERALS:
        count, number = divmod(number, value)
        out.append(text * count)
    return "".join(out)
""",
    "HumanEval/157": """
def right_angle_triangle(a, b, c):
    x, y, z = sorted((a, b, c))
    return x * x + y * y == z * z
""",
    "HumanEval/160": """
def do_algebra(operator, operand):
    expression = str(operand[0])
    for op, value in zip(operator, operand[1:]):
        expression += op + str(value)
    return eval(expression)
""",
    "HumanEval/162": """
import hashlib

def string_to_md5(text):
    return hashlib.md5(text.encode("ascii")).hexdigest() if text else None
""",
    # benign standard-library use, the classes issue 13 names
    "HumanEval/7": """
import os.path
import sys
import traceback

def filter_by_substring(strings, substring):
    try:
        return [s for s in strings if substring in s]
    except TypeError:
        traceback.print_exc()
        print(sys.exc_info()[1], file=sys.stderr)
        raise


def main():
    print(os.path.splitext("filter.py")[0], filter_by_substring(["abc", "bcd"], "bc"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
""",
    "HumanEval/14": """
def all_prefixes(string):
    return [string[:i] for i in range(1, len(string) + 1)]


if __name__ == "__main__":
    assert all_prefixes("abc") == ["a", "ab", "abc"]
    print("all tests passed")
""",
    "HumanEval/23": """
import sys

def strlen(string):
    return len(string)


if __name__ == "__main__":
    for line in sys.stdin:
        print(strlen(line.rstrip("\\n")))
    exit(0)
""",
    "HumanEval/148": """
import os

ORDER = "Mercury Venus Earth Mars Jupiter Saturn Uranus Neptune".split()

def bf(planet1, planet2):
    if planet1 not in ORDER or planet2 not in ORDER:
        return ()
    a, b = sorted((ORDER.index(planet1), ORDER.index(planet2)))
    return tuple(ORDER[a + 1 : b])
""",
    # check-mode tasks (the prompt's helpers are needed: PROMPT marks where it goes)
    "HumanEval/33": """
def sort_third(l):
    out = list(l)
    out[::3] = sorted(l[::3])
    return out
""",
    "HumanEval/44": """
def change_base(x, base):
    digits = ""
    while x > 0:
        x, r = divmod(x, base)
        digits = str(r) + digits
    return digits or "0"
""",
    "HumanEval/53": """
import operator

def add(x, y):
    return operator.add(x, y)
""",
    "HumanEval/56": """
def correct_bracketing(brackets):
    while "<>" in brackets:
        brackets = brackets.replace("<>", "")
    return brackets == ""
""",
}


def programs(prompts: dict[str, str]) -> dict[str, str]:
    """task id -> the full program (``prompts`` gives each task's prompt, for those that need it)."""
    return {
        task_id: (prompts[task_id] + code if code.lstrip().startswith(PROMPT.strip()) else code.lstrip())
        for task_id, code in SOLUTIONS.items()
    }
