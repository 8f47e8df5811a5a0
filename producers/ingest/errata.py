"""Corrections to HumanEval reference solutions that contradict their own prompts.

The reference is the probe's judge on generated inputs (streams/probe): where it is wrong, a correct
program that disagrees with it is rejected as ``wrong.disagrees_with_reference``. Seven errata below
were found by a correct program the probe rejected (/91, /95, /97, /124, /140, /144, /150); the others
by reading every canonical solution against its prompt, on edges the plans do not draw today (zero, a
modulus of 1, integers past a float's precision, letters and digits outside ASCII). Each is a bug in the
published canonical solution, not a matter of reading; each fix is the smallest that answers what the
prompt asks (the rest of the solution's behaviour kept), and each corrected solution passes every case
of the task's own check (``tests/unit/test_errata.py``).

An erratum applies only to the exact canonical text it was written against (its SHA-256): a data set
that has changed keeps its own reference, and the ingest says so in its log, rather than having a fix
for other code pasted over it.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Erratum:
    task_id: str
    #: SHA-256 of the canonical solution this erratum corrects (hex)
    original_sha256: str
    solution: str
    why: str


ERRATA: tuple[Erratum, ...] = (
    Erratum(
        task_id="HumanEval/44",
        original_sha256="01c73e8aae72cf6bc766bfd0e2d7835bab154eb7ee80a94a16dcea2a0f9fa99e",
        why=(
            "x = 0 gives the empty string (the loop never runs), while the prompt asks for the string"
            " representation of x in the base, which for zero is '0' in every base"
        ),
        solution="""\
    ret = ""
    if x == 0:
        return "0"
    while x > 0:
        ret = str(x % base) + ret
        x //= base
    return ret
""",
    ),
    Erratum(
        task_id="HumanEval/49",
        original_sha256="7860ee3a3349c5949371113dd49c13ec77f81fdb82e896a0ba7759304ad58c17",
        why=(
            "for n = 0 the answer is 1 whatever p is (the loop that reduces modulo p never runs), while"
            " 2^0 modulo 1 is 0"
        ),
        solution="""\
    ret = 1 % p
    for i in range(n):
        ret = (2 * ret) % p
    return ret
""",
    ),
    Erratum(
        task_id="HumanEval/77",
        original_sha256="1379eb75ac18f66a09b01d83827648ebef4e6408640a9ef920d6056fed3d9d08",
        why=(
            "the cube root is taken in floats (a ** (1. / 3), rounded), which past about 10**45 is off by"
            " more than one half, so large cubes are called no cube, and past a float's range raises"
            " OverflowError; the prompt takes any integer"
        ),
        solution="""\
    a = abs(a)
    lo, hi = 0, 1
    while hi ** 3 < a:
        hi *= 2
    while lo < hi:
        mid = (lo + hi) // 2
        if mid ** 3 < a:
            lo = mid + 1
        else:
            hi = mid
    return lo ** 3 == a
""",
    ),
    Erratum(
        task_id="HumanEval/91",
        original_sha256="9eeaea75f45a51657405641c2dfe0017db57aec039d1a1bd51727723d177ed4a",
        why=(
            "a sentence is counted only when it begins with 'I ' (the word and a blank), so a sentence"
            " that is the word 'I' alone (the last one of 'love It ! I', or 'I!') is not, though it"
            " starts with the word 'I'"
        ),
        solution="""\
    import re
    sentences = re.split(r'[.?!]\\s*', S)
    return sum(sentence == 'I' or sentence[0:2] == 'I ' for sentence in sentences)
""",
    ),
    Erratum(
        task_id="HumanEval/94",
        original_sha256="a50ff962c60eb7a0d4e36163e117af16642ea58dc26900077f9de379a9c2a575",
        why=(
            "its primality test divides by range(2, int(n**0.5) + 1), which is empty for n = 1, so 1 is"
            " called prime: [1] answers 1 and [0, 81, 12, 1, 21] answers 1, where no element is prime"
        ),
        solution="""\
    def isPrime(n):
        if n < 2:
            return False
        for i in range(2,int(n**0.5)+1):
            if n%i==0:
                return False

        return True
    maxx = 0
    i = 0
    while i < len(lst):
        if(lst[i] > maxx and isPrime(lst[i])):
            maxx = lst[i]
        i+=1
    result = sum(int(digit) for digit in str(maxx))
    return result

""",
    ),
    Erratum(
        task_id="HumanEval/95",
        original_sha256="39e442a9786a0f228c64552dead363dee83de8ea31cebc9adf17d5fe8b43b934",
        why=(
            "the loop breaks at the first key that agrees with the case of the first (its last `else:"
            " break`), so only the first two keys are ever compared: {'a': 1, 'b': 2, 'C': 3} and"
            " {'a': 1, 'b': 2, 5: 3} are called all lower case, while the prompt asks whether all keys"
            " are strings in lower case (or all in upper case)"
        ),
        solution="""\
    if len(dict.keys()) == 0:
        return False
    else:
        state = "start"
        for key in dict.keys():

            if isinstance(key, str) == False:
                state = "mixed"
                break
            if state == "start":
                if key.isupper():
                    state = "upper"
                elif key.islower():
                    state = "lower"
                else:
                    break
            elif (state == "upper" and not key.isupper()) or (state == "lower" and not key.islower()):
                    state = "mixed"
                    break
            else:
                continue
        return state == "upper" or state == "lower"
""",
    ),
    Erratum(
        task_id="HumanEval/97",
        original_sha256="d9d18f955e0c2adcbf91abda95d3ccece365cdb5b5728a9337eb1d2330a280c4",
        why=(
            "the unit digit is taken as a % 10, which for a negative a is 10 minus it (-1 % 10 == 9,"
            " -14 % 10 == 6), while the unit digit of -14 is 4 (the prompt's own multiply(14, -15) is"
            " 20 only because -15 % 10 happens to be 5)"
        ),
        solution="""\
    return (abs(a) % 10) * (abs(b) % 10)
""",
    ),
    Erratum(
        task_id="HumanEval/99",
        original_sha256="26a796dcdd761959432a6aae0ed6386ada9bdee3ccdef79612b7e8e98a36b043",
        why=(
            "the number is read as a float, which rounds past 2**53 and past 17 significant digits, so"
            " the closest integer to '12345678901234567890' comes out as 12345678901234567168 and"
            " '2.50000000000000001' (closer to 3) as 2; the number is read exactly now"
        ),
        solution="""\
    from math import floor, ceil
    from fractions import Fraction

    if value.count('.') == 1:
        # remove trailing zeros
        while (value[-1] == '0'):
            value = value[:-1]

    num = Fraction(value)
    if value[-2:] == '.5':
        if num > 0:
            res = ceil(num)
        else:
            res = floor(num)
    elif len(value) > 0:
        res = int(round(num))
    else:
        res = 0

    return res

""",
    ),
    Erratum(
        task_id="HumanEval/103",
        original_sha256="a2ce5276ef77b2fd4b88d3cf38b6b4065f76dc421dcc88baff6803638a39f48e",
        why=(
            "the average is taken by float division, which rounds past 2**53, so the nearest integer to"
            " the average of 2**53 + 1 alone comes out as 2**53; the average is exact now, its ties"
            " still rounded to even as the task's check expects (964..977 -> 970)"
        ),
        solution="""\
    from fractions import Fraction
    if m < n:
        return -1
    summation = 0
    for i in range(n, m+1):
        summation += i
    return bin(round(Fraction(summation, m - n + 1)))
""",
    ),
    Erratum(
        task_id="HumanEval/122",
        original_sha256="eb8518018fa77cdd4591561d7cfa3f7df8df4d665486b4512007ed6b786cbc39",
        why=(
            "an element's digits are counted as the length of its text, minus sign included, so -10 .. -99"
            " count as three digits and are left out; the prompt admits any integers, and -10 has two"
        ),
        solution="""\
    return sum(elem for elem in arr[:k] if len(str(abs(elem))) <= 2)
""",
    ),
    Erratum(
        task_id="HumanEval/124",
        original_sha256="e9e7a3a193f2c9a79c509ddb2e518ecc55ae46500274dd7895ce81fd82d5a871",
        why=(
            "operator precedence: `month in [...] and day < 1 or day > 29` reads `... or day > 29` for"
            " every month, so day 30 and 31 of every month are rejected; the prompt allows 31 days in"
            " months 1, 3, 5, 7, 8, 10, 12 and 30 in months 4, 6, 9, 11"
        ),
        solution="""\
    try:
        date = date.strip()
        month, day, year = date.split('-')
        month, day, year = int(month), int(day), int(year)
        if month < 1 or month > 12:
            return False
        if month in [1,3,5,7,8,10,12] and (day < 1 or day > 31):
            return False
        if month in [4,6,9,11] and (day < 1 or day > 30):
            return False
        if month == 2 and (day < 1 or day > 29):
            return False
    except:
        return False

    return True
""",
    ),
    Erratum(
        task_id="HumanEval/137",
        original_sha256="cabcae8ef34a46acbe1af1d06cf99bf02f3dd960b0a409ea8e0e3859d20f6db8",
        why=(
            "the values are compared as floats, which round past 2**53, so 2**53 and 2**53 + 1 (or two"
            " strings of 17 digits) are called equal and None is returned; they are compared exactly now"
        ),
        solution="""\
    from fractions import Fraction
    temp_a, temp_b = a, b
    if isinstance(temp_a, str): temp_a = temp_a.replace(',','.')
    if isinstance(temp_b, str): temp_b = temp_b.replace(',','.')
    if Fraction(temp_a) == Fraction(temp_b): return None
    return a if Fraction(temp_a) > Fraction(temp_b) else b
""",
    ),
    Erratum(
        task_id="HumanEval/140",
        original_sha256="54cf296c5899c0f30da0f441012ccba89a4353dcb402ced164a0421b9affdc75",
        why=(
            "a run of one or two blanks at the end of the string becomes a single '_' (the loop's"
            " end-of-string branch), while the prompt replaces every blank with an underscore, as the"
            " same run inside the string is"
        ),
        solution="""\
    new_text = ""
    i = 0
    start, end = 0, 0
    while i < len(text):
        if text[i] == " ":
            end += 1
        else:
            if end - start > 2:
                new_text += "-"+text[i]
            elif end - start > 0:
                new_text += "_"*(end - start)+text[i]
            else:
                new_text += text[i]
            start, end = i+1, i+1
        i+=1
    if end - start > 2:
        new_text += "-"
    elif end - start > 0:
        new_text += "_"*(end - start)
    return new_text
""",
    ),
    Erratum(
        task_id="HumanEval/141",
        original_sha256="e8ed19d064ba01161bb68206e02087ff965fd3b1531e5fe24817b15f3c773de3",
        why=(
            "the name's first character is tested with str.isalpha() and its digits counted with"
            " str.isdigit(), so 'é.txt' is valid and 'a¹²³⁴.txt' is not, while the prompt names the"
            " letters 'a'-'z' and 'A'-'Z' and the digits '0'-'9'"
        ),
        solution="""\
    suf = ['txt', 'exe', 'dll']
    lst = file_name.split(sep='.')
    if len(lst) != 2:
        return 'No'
    if not lst[1] in suf:
        return 'No'
    if len(lst[0]) == 0:
        return 'No'
    if not ('a' <= lst[0][0] <= 'z' or 'A' <= lst[0][0] <= 'Z'):
        return 'No'
    t = len([x for x in lst[0] if '0' <= x <= '9'])
    if t > 3:
        return 'No'
    return 'Yes'
""",
    ),
    Erratum(
        task_id="HumanEval/144",
        original_sha256="182032d31263842af5203581014aac094449f829736b190fe374189d3623b42f",
        why=(
            "whether x * n is whole is decided through float division, which rounds past 2**53, so on"
            " large fractions the answer follows the rounded quotient rather than the product"
        ),
        solution="""\
    a, b = x.split("/")
    c, d = n.split("/")
    numerator = int(a) * int(c)
    denom = int(b) * int(d)
    if numerator % denom == 0:
        return True
    return False
""",
    ),
    Erratum(
        task_id="HumanEval/150",
        original_sha256="f56dd4f61a3a04c9dd88141c72379414c7609b63d2a2511b6543aa8105cdd650",
        why=(
            "for n <= 0 the loop over range(2, n) never runs and the answer is x, calling 0 and the"
            " negative numbers prime; no number below 2 is prime"
        ),
        solution="""\
    if n < 2:
        return y
    for i in range(2, n):
        if n % i == 0:
            return y
            break
    else:
        return x
""",
    ),
)

BY_TASK: dict[str, Erratum] = {e.task_id: e for e in ERRATA}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def corrected_solution(task_id: str, canonical: str) -> str:
    """The canonical solution with its erratum applied, if one was written against exactly this text."""
    erratum = BY_TASK.get(task_id)
    if erratum is None:
        return canonical
    if sha256(canonical) != erratum.original_sha256:
        log.warning(
            "%s: the data set's canonical solution is not the one its erratum corrects; kept as it is",
            task_id,
        )
        return canonical
    return erratum.solution
