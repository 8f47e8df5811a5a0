"""Level 4: several steps - parsing, searching, recursion, two pointers, small dynamic programs."""

from __future__ import annotations

import random

from producers.ingest.library.spec import Spec, choice, ints, letters, lists, sentence, word


def _spec(
    name: str, params: str, returns: str, doc: str, body: str, args: object, *tags: str, **kw: object
) -> Spec:
    return Spec(name, 4, params, returns, doc, body, args, ("algorithm", *tags), **kw)  # type: ignore[arg-type]


def _brackets(r: random.Random) -> tuple[str]:
    if r.random() < 0.5:
        # balanced by construction
        out = ""
        for _ in range(r.randint(0, 4)):
            o, c = r.choice([("(", ")"), ("[", "]"), ("{", "}")])
            out = r.choice([o + out + c, out + o + c])
        return (out,)
    return ("".join(r.choice("()[]{}") for _ in range(r.randint(1, 8))),)


def _rle(r: random.Random) -> tuple[str]:
    return ("".join(r.choice("abc") * r.randint(1, 12) for _ in range(r.randint(0, 4))),)


def _rle_encoded(r: random.Random) -> tuple[str]:
    return ("".join(f"{r.choice('xyz')}{r.randint(1, 12)}" for _ in range(r.randint(0, 4))),)


def _sorted_and_target(r: random.Random) -> tuple[list[int], int]:
    xs = sorted(set(lists(ints(-50, 50), 0, 10)(r)))
    return xs, r.choice([*xs, r.randint(-60, 60)]) if xs else r.randint(-5, 5)


def _two_sorted(r: random.Random) -> tuple[list[int], list[int]]:
    return sorted(lists(ints(0, 30), 0, 6)(r)), sorted(lists(ints(0, 30), 0, 6)(r))


def _two_sum(r: random.Random) -> tuple[list[int], int]:
    xs = list(dict.fromkeys(lists(ints(-20, 20), 2, 8)(r)))
    if len(xs) < 2:
        xs.append(xs[0] + 1)
    i, j = sorted(r.sample(range(len(xs)), 2))
    return xs, xs[i] + xs[j]


def _anagram_pair(r: random.Random) -> tuple[str, str]:
    a = letters(1, 7)(r)
    if r.random() < 0.5:
        return a, "".join(r.sample(a, len(a)))
    return a, letters(1, 7)(r)


def _prefixed_words(r: random.Random) -> tuple[list[str]]:
    stem = letters(0, 3)(r)
    return ([stem + letters(0, 4)(r) for _ in range(r.randint(1, 4))],)


def _matrix(r: random.Random) -> tuple[list[list[int]]]:
    rows, cols = r.randint(1, 4), r.randint(1, 4)
    return ([[r.randint(0, 9) for _ in range(cols)] for _ in range(rows)],)


def _matrices(r: random.Random) -> tuple[list[list[int]], list[list[int]]]:
    n, m, p = r.randint(1, 3), r.randint(1, 3), r.randint(1, 3)
    a = [[r.randint(-3, 5) for _ in range(m)] for _ in range(n)]
    b = [[r.randint(-3, 5) for _ in range(p)] for _ in range(m)]
    return a, b


def _ranges(r: random.Random) -> tuple[list[int]]:
    return (sorted(set(lists(ints(0, 20), 0, 10)(r))),)


def _key_values(r: random.Random) -> tuple[str]:
    pairs = [f"{w}={r.randint(0, 99)}" for w in dict.fromkeys(lists(word(), 0, 4)(r))]
    return (";".join(pairs),)


def _camel(r: random.Random) -> tuple[str]:
    words = lists(word(), 1, 4)(r)
    return (words[0] + "".join(w.capitalize() for w in words[1:]),)


def _snake(r: random.Random) -> tuple[str]:
    return ("_".join(lists(word(), 1, 4)(r)),)


def _nested(r: random.Random, depth: int = 0) -> list[object]:
    out: list[object] = []
    for _ in range(r.randint(0, 3)):
        out.append(_nested(r, depth + 1) if depth < 3 and r.random() < 0.4 else r.randint(0, 9))
    return out


def _subsequence(r: random.Random) -> tuple[str, str]:
    b = letters(0, 9, "abcd")(r)
    if r.random() < 0.5 and b:
        return "".join(c for c in b if r.random() < 0.5), b
    return letters(1, 4, "abcd")(r), b


SPECS: tuple[Spec, ...] = (
    _spec(
        "is_balanced",
        "s: str",
        "bool",
        "Return True if the brackets (), [] and {} in s are balanced and properly nested.",
        'pairs = {")": "(", "]": "[", "}": "{"}\nstack = []\nfor c in s:\n    if c in "([{":\n        stack.append(c)\n    elif c in pairs:\n        if not stack or stack.pop() != pairs[c]:\n            return False\nreturn not stack',
        _brackets,
        "stack",
        "string",
        edge=(("",), ("(]",)),
    ),
    _spec(
        "run_length_encode",
        "s: str",
        "str",
        'Encode runs of repeated characters as the character followed by the run length, e.g. "aaabcc" -> "a3b1c2".',
        'out = ""\ni = 0\nwhile i < len(s):\n    j = i\n    while j < len(s) and s[j] == s[i]:\n        j += 1\n    out += s[i] + str(j - i)\n    i = j\nreturn out',
        _rle,
        "string",
        "encoding",
        edge=(("",),),
    ),
    _spec(
        "run_length_decode",
        "s: str",
        "str",
        'Decode a string of letters each followed by a count, e.g. "a3b1c12" -> "aaab" + 12 times "c".',
        'out = ""\ni = 0\nwhile i < len(s):\n    c = s[i]\n    j = i + 1\n    while j < len(s) and s[j].isdigit():\n        j += 1\n    out += c * int(s[i + 1:j])\n    i = j\nreturn out',
        _rle_encoded,
        "string",
        "parsing",
        edge=(("",),),
    ),
    _spec(
        "roman_to_int",
        "s: str",
        "int",
        'Return the value of the Roman numeral s (I, V, X, L, C, D, M; a smaller numeral before a larger one is subtracted, e.g. "XIV" -> 14).',
        'values = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}\ntotal = 0\nfor i, c in enumerate(s):\n    v = values[c]\n    if i + 1 < len(s) and values[s[i + 1]] > v:\n        total -= v\n    else:\n        total += v\nreturn total',
        (
            choice(
                ["III", "IV", "IX", "XIV", "XL", "XC", "CD", "MCMXC", "MMXXIV", "LVIII", "DCCCXC", "CMXCIX"]
            ),
        ),
        "parsing",
        "string",
    ),
    _spec(
        "int_to_roman",
        "n: int",
        "str",
        "Return the Roman numeral of 1 <= n <= 3999, using subtractive pairs (IV, IX, XL, XC, CD, CM).",
        'table = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]\nout = ""\nfor value, numeral in table:\n    while n >= value:\n        out += numeral\n        n -= value\nreturn out',
        (ints(1, 3999),),
        "string",
        "greedy",
        edge=((4,), (9,), (3999,)),
    ),
    _spec(
        "binary_search",
        "items: list[int], target: int",
        "int",
        "Return the index of target in the sorted list items of distinct numbers, or -1 if it is absent.",
        "lo, hi = 0, len(items) - 1\nwhile lo <= hi:\n    mid = (lo + hi) // 2\n    if items[mid] == target:\n        return mid\n    if items[mid] < target:\n        lo = mid + 1\n    else:\n        hi = mid - 1\nreturn -1",
        _sorted_and_target,
        "search",
        "list",
        edge=(([], 3),),
    ),
    _spec(
        "merge_sorted",
        "a: list[int], b: list[int]",
        "list[int]",
        "Merge two sorted lists into one sorted list.",
        "out = []\ni = j = 0\nwhile i < len(a) and j < len(b):\n    if a[i] <= b[j]:\n        out.append(a[i])\n        i += 1\n    else:\n        out.append(b[j])\n        j += 1\nreturn out + a[i:] + b[j:]",
        _two_sorted,
        "two-pointers",
        "list",
    ),
    _spec(
        "two_sum",
        "numbers: list[int], target: int",
        "tuple[int, int]",
        "Return the indices (i, j), i < j, of the first pair (in order of j, then i) whose numbers add up to target; the numbers are distinct and such a pair exists.",
        "seen = {}\nfor j, x in enumerate(numbers):\n    if target - x in seen:\n        return (seen[target - x], j)\n    seen.setdefault(x, j)\nreturn (-1, -1)",
        _two_sum,
        "hashing",
        "list",
    ),
    _spec(
        "are_anagrams",
        "a: str, b: str",
        "bool",
        "Return True if a and b contain exactly the same letters the same number of times.",
        "return sorted(a) == sorted(b)",
        _anagram_pair,
        "string",
        "sorting",
    ),
    _spec(
        "group_anagrams",
        "words: list[str]",
        "list[list[str]]",
        "Group words that are anagrams of each other: each group sorted alphabetically, the groups sorted by their first word.",
        "groups = {}\nfor w in words:\n    groups.setdefault(''.join(sorted(w)), []).append(w)\nreturn sorted(sorted(g) for g in groups.values())",
        (
            lambda r: (
                list(
                    dict.fromkeys(
                        r.choice(
                            [
                                "listen",
                                "silent",
                                "enlist",
                                "stone",
                                "notes",
                                "onset",
                                "apple",
                                "paple",
                                "rat",
                                "tar",
                                "art",
                                "dog",
                            ]
                        )
                        for _ in range(r.randint(0, 7))
                    )
                ),
            ),
        ),
        "string",
        "hashing",
    ),
    _spec(
        "common_prefix",
        "words: list[str]",
        "str",
        "Return the longest prefix shared by every word of the non-empty list.",
        "prefix = words[0]\nfor w in words[1:]:\n    while not w.startswith(prefix):\n        prefix = prefix[:-1]\nreturn prefix",
        _prefixed_words,
        "string",
    ),
    _spec(
        "top_words",
        "text: str, k: int",
        "list[str]",
        "Return the k most frequent words of text, most frequent first, ties broken alphabetically.",
        "counts = {}\nfor w in text.split():\n    counts[w] = counts.get(w, 0) + 1\nreturn sorted(counts, key=lambda w: (-counts[w], w))[:k]",
        (
            lambda r: " ".join(r.choice(["a", "b", "c", "d", "e"]) for _ in range(r.randint(0, 10))),
            ints(1, 3),
        ),
        "string",
        "sorting",
        "counting",
    ),
    _spec(
        "transpose",
        "matrix: list[list[int]]",
        "list[list[int]]",
        "Return the transpose of a rectangular matrix given as a list of rows.",
        "return [list(col) for col in zip(*matrix)]",
        _matrix,
        "matrix",
    ),
    _spec(
        "matrix_multiply",
        "a: list[list[int]], b: list[list[int]]",
        "list[list[int]]",
        "Return the matrix product a x b (the number of columns of a equals the number of rows of b).",
        "return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]",
        _matrices,
        "matrix",
    ),
    _spec(
        "spiral_order",
        "matrix: list[list[int]]",
        "list[int]",
        "Return the elements of a rectangular matrix in clockwise spiral order, starting at the top left.",
        "out = []\nm = [row[:] for row in matrix]\nwhile m:\n    out += m.pop(0)\n    m = [list(r) for r in zip(*m)][::-1]\nreturn out",
        _matrix,
        "matrix",
    ),
    _spec(
        "rotate_right",
        "items: list[int], k: int",
        "list[int]",
        "Rotate items k places to the right (the last k items move to the front).",
        "if not items:\n    return []\nk %= len(items)\nreturn items[-k:] + items[:-k] if k else items[:]",
        (lists(ints(0, 9), 0, 7), ints(0, 10)),
        "list",
        "slicing",
    ),
    _spec(
        "prime_factors",
        "n: int",
        "list[int]",
        "Return the prime factors of n >= 2 in non-decreasing order, with repeats (12 -> [2, 2, 3]).",
        "out = []\nd = 2\nwhile d * d <= n:\n    while n % d == 0:\n        out.append(d)\n        n //= d\n    d += 1\nif n > 1:\n    out.append(n)\nreturn out",
        (ints(2, 5000),),
        "arithmetic",
    ),
    _spec(
        "is_armstrong",
        "n: int",
        "bool",
        "Return True if the non-negative n equals the sum of its digits each raised to the number of digits (153 = 1**3 + 5**3 + 3**3).",
        "digits = str(n)\nreturn n == sum(int(c) ** len(digits) for c in digits)",
        (choice([0, 1, 7, 10, 153, 154, 370, 371, 407, 408, 1634, 1635, 9474, 100]),),
        "digits",
        "boolean",
    ),
    _spec(
        "max_subarray_sum",
        "numbers: list[int]",
        "int",
        "Return the largest sum of a non-empty contiguous slice of the non-empty list.",
        "best = current = numbers[0]\nfor x in numbers[1:]:\n    current = max(x, current + x)\n    best = max(best, current)\nreturn best",
        (lists(ints(-10, 10), 1, 9),),
        "dynamic-programming",
        "list",
    ),
    _spec(
        "longest_increasing_run",
        "numbers: list[int]",
        "int",
        "Return the length of the longest run of strictly increasing consecutive numbers (0 for an empty list).",
        "best = run = 0\nfor i, x in enumerate(numbers):\n    run = run + 1 if i and numbers[i - 1] < x else 1\n    best = max(best, run)\nreturn best",
        (lists(ints(0, 9), 0, 10),),
        "list",
    ),
    _spec(
        "compress_ranges",
        "numbers: list[int]",
        "str",
        'Describe sorted distinct numbers as comma-separated ranges, e.g. [1, 2, 3, 5, 7, 8] -> "1-3,5,7-8".',
        'parts = []\ni = 0\nwhile i < len(numbers):\n    j = i\n    while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:\n        j += 1\n    parts.append(str(numbers[i]) if i == j else f"{numbers[i]}-{numbers[j]}")\n    i = j + 1\nreturn ",".join(parts)',
        _ranges,
        "string",
        "list",
    ),
    _spec(
        "parse_settings",
        "text: str",
        "dict[str, int]",
        'Parse "key=value" pairs separated by ";" into a dict of int values ("" gives {}).',
        'out = {}\nfor part in text.split(";"):\n    if part:\n        key, value = part.split("=")\n        out[key] = int(value)\nreturn out',
        _key_values,
        "parsing",
        "dict",
    ),
    _spec(
        "camel_to_snake",
        "name: str",
        "str",
        'Convert a camelCase name to snake_case, e.g. "fooBarBaz" -> "foo_bar_baz".',
        'out = ""\nfor c in name:\n    if c.isupper():\n        out += "_" + c.lower()\n    else:\n        out += c\nreturn out',
        _camel,
        "string",
    ),
    _spec(
        "snake_to_camel",
        "name: str",
        "str",
        'Convert a snake_case name to camelCase, e.g. "foo_bar_baz" -> "fooBarBaz".',
        'first, *rest = name.split("_")\nreturn first + "".join(w.capitalize() for w in rest)',
        _snake,
        "string",
    ),
    _spec(
        "pascal_row",
        "n: int",
        "list[int]",
        "Return row n of Pascal's triangle (row 0 is [1], row 2 is [1, 2, 1]).",
        "row = [1]\nfor _ in range(n):\n    row = [1] + [row[i] + row[i + 1] for i in range(len(row) - 1)] + [1]\nreturn row",
        (ints(0, 14),),
        "dynamic-programming",
        "list",
    ),
    _spec(
        "to_base",
        "n: int, base: int",
        "str",
        'Write the non-negative n in base 2 <= base <= 16 with digits 0-9a-f, e.g. (255, 16) -> "ff".',
        'digits = "0123456789abcdef"\nif n == 0:\n    return "0"\nout = ""\nwhile n:\n    out = digits[n % base] + out\n    n //= base\nreturn out',
        (ints(0, 5000), ints(2, 16)),
        "digits",
        "string",
        edge=((0, 2),),
    ),
    _spec(
        "edit_distance",
        "a: str, b: str",
        "int",
        "Return the minimum number of single-character insertions, deletions and substitutions turning a into b.",
        "prev = list(range(len(b) + 1))\nfor i, ca in enumerate(a, 1):\n    cur = [i]\n    for j, cb in enumerate(b, 1):\n        cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))\n    prev = cur\nreturn prev[-1]",
        (letters(0, 6, "abc"), letters(0, 6, "abc")),
        "dynamic-programming",
        "string",
    ),
    _spec(
        "longest_palindrome",
        "s: str",
        "str",
        'Return the longest palindromic substring of s (the leftmost one on ties; "" for an empty s).',
        'best = ""\nfor i in range(len(s)):\n    for j in range(i + 1, len(s) + 1):\n        piece = s[i:j]\n        if piece == piece[::-1] and len(piece) > len(best):\n            best = piece\nreturn best',
        (letters(0, 9, "aab"),),
        "string",
    ),
    _spec(
        "flatten_deep",
        "items: list",
        "list[int]",
        "Flatten arbitrarily nested lists of integers into one list, in order.",
        "out = []\nfor x in items:\n    if isinstance(x, list):\n        out.extend(flatten_deep(x))\n    else:\n        out.append(x)\nreturn out",
        (lambda r: (_nested(r),)),
        "recursion",
        "list",
    ),
    _spec(
        "primes_up_to",
        "n: int",
        "list[int]",
        "Return every prime p <= n in increasing order (use a sieve).",
        "if n < 2:\n    return []\nsieve = [True] * (n + 1)\nsieve[0] = sieve[1] = False\nfor i in range(2, int(n ** 0.5) + 1):\n    if sieve[i]:\n        for k in range(i * i, n + 1, i):\n            sieve[k] = False\nreturn [i for i, p in enumerate(sieve) if p]",
        (ints(0, 120),),
        "arithmetic",
        "sieve",
        edge=((1,), (2,)),
    ),
    _spec(
        "next_greater",
        "numbers: list[int]",
        "list[int]",
        "For each number, return the first later number that is greater, or -1 if there is none.",
        "out = [-1] * len(numbers)\nstack = []\nfor i, x in enumerate(numbers):\n    while stack and numbers[stack[-1]] < x:\n        out[stack.pop()] = x\n    stack.append(i)\nreturn out",
        (lists(ints(0, 20), 0, 8),),
        "stack",
        "list",
    ),
    _spec(
        "kth_smallest",
        "numbers: list[int], k: int",
        "int",
        "Return the k-th smallest number (k = 1 is the minimum) of a list with at least k numbers.",
        "return sorted(numbers)[k - 1]",
        lambda r: (lambda xs: (xs, r.randint(1, len(xs))))(lists(ints(-30, 30), 1, 8)(r)),
        "sorting",
        "list",
    ),
    _spec(
        "is_subsequence",
        "small: str, big: str",
        "bool",
        "Return True if the characters of small appear in big in the same order (not necessarily next to each other).",
        "it = iter(big)\nreturn all(c in it for c in small)",
        _subsequence,
        "two-pointers",
        "string",
    ),
    _spec(
        "wrap_text",
        "text: str, width: int",
        "list[str]",
        "Break text into lines of at most width characters, greedily, never splitting a word (a word longer than width gets a line of its own).",
        'lines = []\nline = ""\nfor w in text.split():\n    if line and len(line) + 1 + len(w) > width:\n        lines.append(line)\n        line = w\n    else:\n        line = f"{line} {w}" if line else w\nif line:\n    lines.append(line)\nreturn lines',
        (sentence(0, 8), ints(5, 20)),
        "string",
        "greedy",
    ),
    _spec(
        "format_duration",
        "seconds: int",
        "str",
        'Format a duration as hours, minutes and seconds, leaving out zero parts: 3725 -> "1h 2m 5s", 60 -> "1m", 0 -> "0s".',
        'h, rest = divmod(seconds, 3600)\nm, s = divmod(rest, 60)\nparts = [f"{v}{u}" for v, u in ((h, "h"), (m, "m"), (s, "s")) if v]\nreturn " ".join(parts) or "0s"',
        (ints(0, 20000),),
        "string",
        "format",
        edge=((0,), (60,), (3600,)),
    ),
    _spec(
        "count_change",
        "amount: int, coins: list[int]",
        "int",
        "Return in how many ways amount can be paid with any number of coins of the given distinct values.",
        "ways = [1] + [0] * amount\nfor c in coins:\n    for a in range(c, amount + 1):\n        ways[a] += ways[a - c]\nreturn ways[amount]",
        (ints(0, 40), choice([[1, 2, 5], [2, 3], [1, 5, 10, 25], [3, 7], [1, 2]])),
        "dynamic-programming",
    ),
    _spec(
        "climb_stairs",
        "n: int",
        "int",
        "Return in how many ways n stairs can be climbed taking 1 or 2 steps at a time.",
        "a, b = 1, 1\nfor _ in range(n):\n    a, b = b, a + b\nreturn a",
        (ints(0, 35),),
        "dynamic-programming",
        edge=((0,), (1,)),
    ),
    _spec(
        "count_islands",
        "grid: list[str]",
        "int",
        'Return the number of islands in a grid of "#" (land) and "." (water); land cells touching up, down, left or right belong to one island.',
        'seen = set()\ncount = 0\nfor r in range(len(grid)):\n    for c in range(len(grid[0])):\n        if grid[r][c] == "#" and (r, c) not in seen:\n            count += 1\n            stack = [(r, c)]\n            while stack:\n                y, x = stack.pop()\n                if (y, x) in seen or not (0 <= y < len(grid) and 0 <= x < len(grid[0])) or grid[y][x] != "#":\n                    continue\n                seen.add((y, x))\n                stack += [(y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)]\nreturn count',
        (
            lambda r: (
                lambda w: ["".join(r.choice("#..") for _ in range(w)) for _ in range(r.randint(1, 5))]
            )(r.randint(1, 6)),
        ),
        "graph",
        "search",
    ),
    _spec(
        "balanced_index",
        "numbers: list[int]",
        "int",
        "Return the first index i where the sum of the numbers left of i equals the sum right of i, or -1.",
        "total = sum(numbers)\nleft = 0\nfor i, x in enumerate(numbers):\n    if left == total - left - x:\n        return i\n    left += x\nreturn -1",
        (lists(ints(-3, 5), 0, 7),),
        "list",
        "prefix-sum",
    ),
    _spec(
        "decode_words",
        "text: str",
        "str",
        'Each word of text is a number of letters, then a word, e.g. "3cat 2hi" -> "cat hi": drop the leading digits of every word and join the words with single spaces.',
        'return " ".join(w.lstrip("0123456789") for w in text.split())',
        (lambda r: " ".join(f"{len(w)}{w}" for w in lists(word(), 0, 5)(r)),),
        "parsing",
        "string",
    ),
    _spec(
        "vowel_sorted_words",
        "text: str",
        "list[str]",
        "Return the words of text sorted by their number of vowels (a, e, i, o, u), then alphabetically.",
        'return sorted(text.split(), key=lambda w: (sum(c in "aeiou" for c in w), w))',
        (sentence(0, 6),),
        "sorting",
        "string",
    ),
)
