"""The bounds a task's statement puts on its arguments, read from its prompt (pure).

A probe input generated past the cases' range may lie outside what the statement admits: HumanEval/107
says ``1 <= n <= 10^3``, HumanEval/44 that the base numbers are less than 10, and the far inputs
multiply integers by up to 1000. There the reference's answer is only what one function happens to do;
a correct program may refuse the input (a precondition check that raises) or answer it otherwise
(conventional digits past base 10), and owes nothing. So an input that breaks a bound the statement
states is not judged (filter v10, :func:`outside_statement`); every other input is judged as before.

Only bounds stated plainly on an argument the signature names are read (a bound misread would leave
inputs unjudged, so anything unclear is left out):

- comparisons in the docstring's prose (never a ``>>>`` example line): ``1 <= n <= 10^3``, ``n > 0``,
  ``0 <= k <= len(arr)``, ``1 <= len(arr) <= 100``, ``1 <= arr.length <= 100``; a bound is a number
  (``1000``, ``10^3``, ``10**3``, ``1e3``) or another argument's length;
- "NAME (numbers|values) (is|are) less|smaller|greater|larger than NUMBER" (``base numbers are less
  than 10``).

From filter v14 (``wider=True``) three more forms are read, each seen on a task whose correct programs
were rejected for answering inputs the statement excludes otherwise than the reference:

- the docstring where the function's body opens with imports before it (HumanEval/115: ``import math``,
  then a docstring stating ``1 <= capacity <= 10``; Python's docstring is only a body's first statement);
- the name in parentheses and "then" for "than" (HumanEval/75: "Knowing that (a) is less then 100");
- "a list|array|tuple of two|three|...|N WORD" of the one argument a function of one argument takes: its
  length is that number (HumanEval/119: "a list of two strings").

From filter v24 (``abbreviated=True``) a comparison's name that abbreviates the one argument of a function
of one argument (the argument's name starts with it, and it is at least three letters long) names that
argument (HumanEval/156: ``int_to_mini_roman(number)`` states ``1 <= num <= 1000``).

From filter v30 (``ranged=True``) a range of whole numbers written with a dash right after an argument's
own name, perhaps after "is", "are", "in" or "from", bounds it on both sides: "month 1-12", "(hour is
0-23)", "a score 0-100" (library/days_in_month, /time_of_day, /grade: a correct program refusing month 13
was judged wrong where the reference answers it). The name must be the argument's exactly ("hours 5-11"
says nothing of ``hour``) and the range must rise.
"""

from __future__ import annotations

import ast
import inspect
import math
import re
from dataclasses import dataclass

from schemas import pyast

#: a bound: a number, or ("len", k): the length of argument k
Limit = float | tuple[str, int]

_NUMBER = r"(?:\d+(?:\.\d+)?(?:\s*(?:\^|\*\*)\s*\d+)?(?:e\d+)?)"
_NAME = r"(?:len\(\s*\w+\s*\)|\w+\.length|\w+)"
_OP = r"(?:<=|>=|<|>|≤|≥)"
_TERM = rf"(?:{_NUMBER}|{_NAME})"
#: a chain of two or three terms joined by comparisons, not inside a longer expression
_CHAIN = re.compile(
    rf"(?<![\w.(\[+\-*/])({_TERM})\s*({_OP})\s*({_TERM})(?:\s*({_OP})\s*({_TERM}))?(?![\w(\[+\-*/])"
)
_WORDS = re.compile(
    r"\b(\w+)(?:\s+(?:numbers?|values?|integers?))?\s+(?:is|are)\s+(less|smaller|greater|larger)\s+than\s+"
    rf"({_NUMBER})\b",
    re.IGNORECASE,
)
#: (v14) the same, the name perhaps in parentheses and "then" for "than" ("(a) is less then 100")
_WORDS_WIDER = re.compile(
    r"(?:\((\w+)\)|\b(\w+))(?:\s+(?:numbers?|values?|integers?))?\s+(?:is|are)\s+"
    rf"(less|smaller|greater|larger)\s+th[ae]n\s+({_NUMBER})\b",
    re.IGNORECASE,
)
#: (v30) "month 1-12", "(hour is 0-23)": a range of whole numbers after a name, a dash between them
_RANGE = re.compile(r"\b(\w+)\s+(?:(?:is|are|in|from)\s+)?(\d+)\s*[-–]\s*(\d+)\b(?![.\d])")
#: (v30) an example inside a statement's line: a parenthesised one, or "e.g." / "for example" to its end
_INLINE_EXAMPLE = re.compile(
    r"\([^()]*(?:->|=>)[^()]*\)|\b(?:e\.g\.|for example)[^;]*(?:->|=>).*$", re.IGNORECASE
)
#: (v30) the word by which a statement says a list holds no element twice
_DISTINCT = re.compile(r"\bdistinct\b", re.IGNORECASE)
_COUNTS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
#: (v14) "a list of two strings": the length of a function's one argument
_LENGTH_WORDS = re.compile(
    rf"\b(?:list|array|tuple)\s+of\s+(?:exactly\s+)?({'|'.join(_COUNTS)}|\d+)\s+\w+", re.IGNORECASE
)


@dataclass(frozen=True)
class Bound:
    """One side of a stated range: argument ``arg`` (its value, or its length under ``length``) lies
    below (``upper``) or above ``limit``, ``strict`` or not."""

    arg: int
    length: bool
    upper: bool
    limit: Limit
    strict: bool

    def admits(self, args: tuple[object, ...]) -> bool:
        """Whether ``args`` keep this bound (an argument of another kind than the bound speaks of, or a
        limit that cannot be read from ``args``, keeps it: only a plain break counts)."""
        if self.arg >= len(args):
            return True
        value = _measure(args[self.arg], self.length)
        limit = self.limit
        if isinstance(limit, tuple):
            other = _measure(args[limit[1]], True) if limit[1] < len(args) else None
            if other is None:
                return True
            limit = other
        if value is None:
            return True
        if self.upper:
            return value < limit if self.strict else value <= limit
        return value > limit if self.strict else value >= limit


def _measure(value: object, length: bool) -> float | None:
    if length:
        return float(len(value)) if isinstance(value, str | bytes | list | tuple | dict | set) else None
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def _number(text: str) -> float | None:
    text = text.replace(" ", "")
    try:
        if "^" in text or "**" in text:
            base, exp = re.split(r"\^|\*\*", text)
            return float(base) ** int(exp)
        return float(text)
    except (ValueError, OverflowError):
        return None


def _signature(prompt: str, entry_point: str, wider: bool = False) -> tuple[list[str], str] | None:
    """The entry point's argument names and its docstring, or None where the prompt does not define it
    (``wider``: the first string statement of its body after imports, where no docstring opens it)."""
    try:
        with pyast.LOCK:
            tree = ast.parse(prompt)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == entry_point:
            names = [a.arg for a in (*node.args.posonlyargs, *node.args.args)]
            doc = ast.get_docstring(node)
            if doc is None and wider:
                doc = _doc_after_imports(node.body)
            return names, doc or ""
    return None


def _doc_after_imports(body: list[ast.stmt]) -> str | None:
    for stmt in body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            continue
        if (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        ):
            return inspect.cleandoc(stmt.value.value)
        return None
    return None


def _operand(term: str, names: list[str], abbreviated: bool = False) -> tuple[int, bool] | None:
    """(argument index, whether its length) a term names, or None (``abbreviated``, filter v24: a name
    of at least three letters that the one argument's name starts with names that argument)."""
    m = re.fullmatch(r"len\(\s*(\w+)\s*\)|(\w+)\.length|(\w+)", term.strip())
    if m is None:
        return None
    name = m.group(1) or m.group(2) or m.group(3)
    if name not in names:
        if abbreviated and len(names) == 1 and len(name) >= 3 and names[0].startswith(name):
            return 0, bool(m.group(1) or m.group(2))
        return None
    return names.index(name), bool(m.group(1) or m.group(2))


def _limit(term: str, names: list[str], abbreviated: bool = False) -> Limit | None:
    number = _number(term) if re.fullmatch(_NUMBER, term.strip()) else None
    if number is not None:
        return number
    operand = _operand(term, names, abbreviated)
    if operand is not None and operand[1]:
        return ("len", operand[0])
    return None


def _pair(left: str, op: str, right: str, names: list[str], abbreviated: bool = False) -> list[Bound]:
    op = {"≤": "<=", "≥": ">="}.get(op, op)
    subject, limit_text, flip = _operand(left, names, abbreviated), right, False
    if subject is None:
        subject, limit_text, flip = _operand(right, names, abbreviated), left, True
    if subject is None:
        return []
    limit = _limit(limit_text, names, abbreviated)
    if limit is None or limit == ("len", subject[0]):
        return []
    upper = op in ("<", "<=")
    return [Bound(subject[0], subject[1], upper != flip, limit, op in ("<", ">"))]


def stated_bounds(
    prompt: str, entry_point: str, wider: bool = False, abbreviated: bool = False, ranged: bool = False
) -> tuple[Bound, ...]:
    """The bounds the entry point's docstring states on its arguments (none where it states none);
    ``wider`` (filter v14): the forms the module docstring lists from v14 too; ``abbreviated`` (filter
    v24): a comparison on an abbreviation of a function's one argument (``num`` for ``number``);
    ``ranged`` (filter v30): a dashed range after an argument's name ("month 1-12")."""
    found = _signature(prompt, entry_point, wider)
    if found is None:
        return ()
    names, doc = found
    if not names:
        return ()
    bounds: list[Bound] = []
    for line in doc.splitlines():
        text = line.strip()
        if ranged and not text.startswith(">>>"):
            # (v30) an example written inline ("e.g. (255, 16) -> 'ff'", "(12 -> [2, 2, 3])") is cut
            # from its line, and the statement before it read (library/to_base's ``2 <= base <= 16``)
            text = _INLINE_EXAMPLE.sub("", text)
        if text.startswith(">>>") or "==>" in text or "=>" in text or "->" in text:
            continue  # an example, not a statement
        for m in _CHAIN.finditer(text):
            a, op1, b, op2, c = m.groups()
            if op2 is None:
                bounds += _pair(a, op1, b, names, abbreviated)
            elif (op1 in ("<", "<=", "≤")) == (op2 in ("<", "<=", "≤")):
                bounds += _pair(a, op1, b, names, abbreviated) + _pair(b, op2, c, names, abbreviated)
        for m in _WORDS.finditer(text):
            name, word, number = m.groups()
            limit = _number(number)
            if name in names and limit is not None:
                upper = word.lower() in ("less", "smaller")
                bounds.append(Bound(names.index(name), False, upper, limit, True))
        if ranged:
            for m in _RANGE.finditer(text):
                name, low, high = m.group(1), int(m.group(2)), int(m.group(3))
                if name in names and low < high:
                    k = names.index(name)
                    bounds += [
                        Bound(k, False, False, float(low), False),
                        Bound(k, False, True, float(high), False),
                    ]
        if not wider:
            continue
        for m in _WORDS_WIDER.finditer(text):
            in_parens, bare, word, number = m.groups()
            name, limit = in_parens or bare, _number(number)
            if name in names and limit is not None:
                upper = word.lower() in ("less", "smaller")
                bounds.append(Bound(names.index(name), False, upper, limit, True))
        if len(names) == 1:
            for m in _LENGTH_WORDS.finditer(text):
                count = _COUNTS.get(m.group(1).lower()) or int(m.group(1))
                bounds += [
                    Bound(0, True, True, float(count), False),
                    Bound(0, True, False, float(count), False),
                ]
    return tuple(dict.fromkeys(bounds))


@dataclass(frozen=True)
class Distinct:
    """(filter v30) Argument ``arg`` is a list the statement calls distinct: it holds no element twice."""

    arg: int

    def admits(self, args: tuple[object, ...]) -> bool:
        """Whether ``args`` keep it (an argument that is no list, or holds what cannot be hashed, keeps
        it)."""
        items = args[self.arg] if self.arg < len(args) else None
        if not isinstance(items, list | tuple):
            return True
        try:
            return len(set(items)) == len(items)
        except TypeError:
            return True


def says_distinct(prompt: str, entry_point: str) -> bool:
    """(filter v30) Whether the entry point's docstring calls something distinct outside its examples
    (library/binary_search's "the sorted list items of distinct numbers"). What is distinct is left to
    the cases: :func:`streams.noise.probe.stated_distinct` bounds only a list argument none of whose
    cases repeats an element."""
    found = _signature(prompt, entry_point, wider=True)
    return found is not None and any(_DISTINCT.search(line) is not None for line in _prose(found[1]))


def _prose(doc: str) -> list[str]:
    """A docstring's lines outside its examples: no ``>>>`` line, an example written inline cut."""
    return [
        _INLINE_EXAMPLE.sub("", line.strip())
        for line in doc.splitlines()
        if not line.strip().startswith(">>>")
    ]


# ----------------------------------------------------------- (v31) forms of the arguments stated in words
#: words by which a statement keeps the characters of its text to ASCII, where the probe's letters outside
#: it (é, Ñ) have two readings: it names ASCII (HumanEval/66's "ASCII codes"), English letters (/118's
#: "contains English letter only") or alphabetical characters (/134's "an alphabetical character"). Not
#: the alphabet as an order or a place: "sort alphabetically" (/149) orders whatever words it gets, and a
#: letter "in the english alphabet" (/93) is where a vowel moves, while "swaps case of all letters"
#: speaks of 'É' too (red-team a40_odd_nonascii_kept_149, a40_ascii_only_swapcase_93: accepted where
#: those were read); nor letters spelt 'a' to 'z', which may decide a letter outside them (/141's name
#: "starts with a letter from the latin alphapet ('a'-'z' and 'A'-'Z')": 'ŋame.txt' is 'No')
_ASCII_WORDS = re.compile(r"\bASCII\b|\bEnglish letters?\b|\balphabetical characters?\b", re.IGNORECASE)
#: (filter v32) ASCII named as the text's characters, codes or values: not "a special ASCII format"
#: (HumanEval/17's notation of notes, whose letters the probe turns into letters past ASCII: read as
#: ASCII text, a wrong program there was accepted, red-team a41_ascii_part_wrong_17)
_ASCII_TEXT_WORDS = re.compile(
    r"\bASCII\s+(?:characters?|codes?|values?|letters?|text|strings?)\b|\bEnglish letters?\b"
    r"|\balphabetical characters?\b",
    re.IGNORECASE,
)
#: "the character fill", "a single character c": an argument the statement calls one character
_CHARACTER_OF = re.compile(r"\bchar(?:acter)?\s+`?([A-Za-z_]\w*)`?", re.IGNORECASE)
#: (filter v32) argument names that say one character
_CHARACTER_NAMES = frozenset({"letter", "char", "character", "ch"})
#: (filter v32) and "the single letter c" (library/is_vowel, whose reference answers the probe's 'ou'
#: and '' as a substring test: a correct frozenset lookup was rejected, f41c_ok_set_is_vowel)
_LETTER_OF = re.compile(r"\b(?:char(?:acter)?|letter)\s+`?([A-Za-z_]\w*)`?", re.IGNORECASE)
#: words by which a statement makes the rows of a list one width (a grid, a matrix, rectangular)
_RECTANGULAR_WORDS = re.compile(r"\brectangular\b|\bgrids?\b|\bmatri(?:x|ces)\b", re.IGNORECASE)


def _strings(value: object, depth: int = 0) -> list[str]:
    """The strings in a plain value (its containers read to a depth of 8, a dict's keys and values)."""
    if isinstance(value, str):
        return [value]
    if depth > 8:
        return []
    if isinstance(value, dict):
        return [t for k, v in value.items() for x in (k, v) for t in _strings(x, depth + 1)]
    if isinstance(value, list | tuple | set | frozenset):
        return [t for v in value for t in _strings(v, depth + 1)]
    return []


@dataclass(frozen=True)
class AsciiText:
    """(filter v31) The statement keeps its text to ASCII: no string in the arguments holds a
    character past it."""

    def admits(self, args: tuple[object, ...]) -> bool:
        return all(text.isascii() for text in _strings(args))

    def carried(self, args: tuple[object, ...], answer: object) -> bool:
        """Whether ``answer`` (the reference's, to ``args``) holds every character past ASCII of
        ``args``: the reference left them as text it does not read, which is what the statement's
        ASCII makes of them, so a program reading it so answers as the reference does and the input
        is judged (HumanEval/89's rotation leaves 'À' as it is; a program turning it into a letter of
        the alphabet turns 'A' and ' ' into letters too)."""
        wide = {c for text in _strings(args) for c in text if not c.isascii()}
        held = {c for text in _strings(answer) for c in text}
        return bool(wide) and wide <= held


@dataclass(frozen=True)
class OneCharacter:
    """(filter v31) Argument ``arg`` is a string the statement calls a character: one long."""

    arg: int

    def admits(self, args: tuple[object, ...]) -> bool:
        value = args[self.arg] if self.arg < len(args) else None
        return not isinstance(value, str) or len(value) == 1


@dataclass(frozen=True)
class Rectangular:
    """(filter v31) Argument ``arg`` is a list of rows the statement calls a grid or a matrix: its rows
    (strings, lists, tuples) are of one length."""

    arg: int

    def admits(self, args: tuple[object, ...]) -> bool:
        rows = args[self.arg] if self.arg < len(args) else None
        if not isinstance(rows, list | tuple):
            return True
        lengths = {len(r) for r in rows if isinstance(r, str | list | tuple)}
        return len(lengths) <= 1


@dataclass(frozen=True)
class StatedForms:
    """(filter v31) What a statement says in words of its arguments' forms: its text is ASCII, the
    arguments (by position) it calls a character, and whether it speaks of a grid or a matrix. Which of
    them bound the probe's inputs is left to the cases (``streams.noise.probe.stated_forms``)."""

    ascii: bool = False
    characters: tuple[int, ...] = ()
    rectangular: bool = False


def stated_forms(prompt: str, entry_point: str, *, letters: bool = False) -> StatedForms:
    """(filter v31) The forms the entry point's docstring states outside its examples. Under
    ``letters`` (filter v32) an argument it calls a letter, or one named a letter or a character
    (``letter``, ``char``, ``ch``), is one character too, and ASCII bounds the text only where it names
    the text's ASCII characters, codes or values."""
    found = _signature(prompt, entry_point, wider=True)
    if found is None:
        return StatedForms()
    names, doc = found
    prose = "\n".join(_prose(doc))
    characters = {m.group(1) for m in (_LETTER_OF if letters else _CHARACTER_OF).finditer(prose)}
    if letters:
        # an argument named a letter or a character (library/count_words_starting_with's ``letter``,
        # whose reference's startswith answers the probe's 'cand' where a correct first-character test
        # does not: f42c_ok_first_char_words_starting_with)
        characters |= {name for name in names if name in _CHARACTER_NAMES}
    return StatedForms(
        ascii=(_ASCII_TEXT_WORDS if letters else _ASCII_WORDS).search(prose) is not None,
        characters=tuple(i for i, name in enumerate(names) if name in characters),
        rectangular=_RECTANGULAR_WORDS.search(prose) is not None,
    )


# ------------------------------------------------------ (filter v34) preconditions stated between arguments
#: words by which a statement gives what follows as a precondition: "Assume n > 1", "it is assumed that
#: its start is less or equal its end", "where low <= high", "it is guaranteed that", "given that"
_GIVEN_WORDS = re.compile(
    r"\bassum(?:e|es|ed|ing)\b|\bguarantee[ds]?\b|\bgiven\s+that\b|\bprovided\s+that\b|\bwhere\b"
    r"|\bsuch\s+that\b|\bpromised\b",
    re.IGNORECASE,
)
#: words by which a statement tests what follows rather than gives it ("Return True if a < b"): a
#: comparison after one of them, with no given word between, is a condition the task decides on
_TESTED_WORDS = re.compile(
    r"\bif\b|\bwhether\b|\bunless\b|\bwhen(?:ever)?\b|\bcheck\b|\btrue\b|\bfalse\b|\botherwise\b",
    re.IGNORECASE,
)
#: a chain of comparisons as :data:`_CHAIN` reads it, which may open a parenthesised aside: "(low <= high)"
_RELATION_CHAIN = re.compile(
    rf"(?<![\w.\[+\-*/])({_TERM})\s*({_OP})\s*({_TERM})(?:\s*({_OP})\s*({_TERM}))?(?![\w(\[+\-*/])"
)
_COMPARE_OPS = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "≤": "<=", "≥": ">="}
_FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}
#: a comparison in words between two names: "its start is less or equal its end", "low is at most high"
_RELATION_WORDS = re.compile(
    r"\b(?:(?:its|the|their|each)\s+)?(?P<left>[A-Za-z_]\w*)\s+(?:is|are)\s+"
    r"(?P<rel>(?:less|smaller|lower|greater|larger|bigger|higher)(?:\s+than)?\s+or\s+equal(?:\s+(?:to|than))?"
    r"|(?:less|smaller|lower|greater|larger|bigger|higher)\s+than"
    r"|not\s+(?:less|smaller|lower|greater|larger|bigger|higher|more)\s+than"
    r"|no\s+(?:less|smaller|lower|greater|larger|bigger|higher|more)\s+than"
    r"|at\s+(?:most|least))"
    r"\s+(?:(?:its|the|their)\s+)?(?P<right>[A-Za-z_]\w*)\b",
    re.IGNORECASE,
)
#: a tuple of named fields: "interval = (start, end)", "a range (low, high)"
_FIELDS = re.compile(r"\b([A-Za-z_]\w*)\s*(?:=\s*)?\(\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)+)\s*\)")
#: a property stated of an argument: "n is not a prime", "Assume n > 1 and is not a prime", "k is even"
_PROPERTY = re.compile(
    r"\b(?P<subject>[A-Za-z_]\w*)\s+(?:is|are)\s+(?P<neg>not\s+)?(?:(?:a|an)\s+)?"
    r"(?P<what>prime|composite|even|odd|positive|negative|non-?negative|non-?zero)(?:\s+numbers?|\s+integers?)?\b",
    re.IGNORECASE,
)
_PROPERTY_NAMES = {"non-negative": "nonnegative", "non-zero": "nonzero", "composite": "prime"}


def _is_prime(n: int) -> bool:
    """Whether ``n`` is a prime (Miller-Rabin on the first twelve primes: exact below 3.3 * 10**24, and
    a composite past it that passes all twelve is yet to be found)."""
    if n < 2:
        return False
    small = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)
    for p in small:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in small:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def operand_value(args: tuple[object, ...], arg: int, field: int | None) -> float | int | None:
    """The number argument ``arg`` (its field ``field`` where one is named) holds, or None: another kind
    of value, a missing argument or field, a bool or NaN."""
    if arg >= len(args):
        return None
    value = args[arg]
    if field is not None:
        if not isinstance(value, list | tuple) or field >= len(value):
            return None
        value = value[field]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


@dataclass(frozen=True)
class Relation:
    """(filter v34) A comparison the statement gives between two arguments (``low <= high``) or two
    named fields of one argument (each interval's ``start <= end``): ``left op right``, each side an
    argument's position and, where the statement names the argument's fields, the field's position."""

    left: tuple[int, int | None]
    op: str
    right: tuple[int, int | None]

    def admits(self, args: tuple[object, ...]) -> bool:
        """Whether ``args`` keep it (a side that is no number keeps it: only a plain break counts)."""
        a, b = operand_value(args, *self.left), operand_value(args, *self.right)
        if a is None or b is None:
            return True
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[self.op]


@dataclass(frozen=True)
class Property:
    """(filter v34) A property the statement gives an integer argument: ``what`` is one of prime, even,
    odd, positive, negative, nonnegative, nonzero; ``holds`` False where it says the argument is not so
    ("Assume n > 1 and is not a prime")."""

    arg: int
    what: str
    holds: bool

    def admits(self, args: tuple[object, ...]) -> bool:
        value = args[self.arg] if self.arg < len(args) else None
        if isinstance(value, bool) or not isinstance(value, int):
            return True
        return _has(value, self.what) == self.holds


def _has(value: int, what: str) -> bool:
    if what == "prime":
        return _is_prime(value)
    if what in ("even", "odd"):
        return value % 2 == (0 if what == "even" else 1)
    if what == "positive":
        return value > 0
    if what == "negative":
        return value < 0
    if what == "nonnegative":
        return value >= 0
    return value != 0


def _sentences(doc: str) -> list[str]:
    """A docstring's prose as sentences: its example lines left out, an example written inline cut, the
    rest joined and cut at a full stop that ends a sentence (one followed by a space or the end)."""
    lines = [line for line in _prose(doc) if "==>" not in line and "=>" not in line and "->" not in line]
    text = re.sub(r"\s+", " ", " ".join(lines))
    return [s.strip() for s in re.split(r"(?<=[.;!?])\s+|\n", text) if s.strip()]


def _given_at(sentence: str, start: int) -> bool:
    """Whether the words before ``start`` in ``sentence`` give what follows as a precondition: a given
    word before it, and no word that tests what follows between the last given word and it."""
    before = sentence[:start]
    given = list(_GIVEN_WORDS.finditer(before))
    if not given:
        return False
    return _TESTED_WORDS.search(before[given[-1].end() :]) is None


def _aside_at(sentence: str, start: int, end: int) -> bool:
    """Whether the text from ``start`` to ``end`` is the whole of a parenthesised aside: "(low <= high)"
    after a word or a comma, and then the sentence goes on or ends; not a part of an expression
    ("Return (a < b) and a != 0": an aside follows no verb or operator and no operator follows it)."""
    opened = re.search(r"(\S*)\s*\(\s*$", sentence[:start])
    closed = re.match(r"\s*\)\s*(\S*)", sentence[end:])
    if opened is None or closed is None:
        return False
    before, after = opened.group(1).lower(), closed.group(1).lower()
    if before in ("", "return", "returns", "is", "if", "and", "or", "not") or re.search(
        r"[=<>+\-*/%(]$", before
    ):
        return False
    return re.match(r"(?:and|or|not|if|else)\b|[=<>+\-*/%]", after) is None


def _fields(sentences: list[str], names: list[str]) -> dict[str, list[tuple[int, int]]]:
    """The fields the statement names of its arguments: "interval = (start, end)" names fields 0 and 1 of
    every argument called ``interval``, or ``interval`` and a number (``interval1``, ``interval2``).
    A field name that is an argument's own name, or one given two places, is left out."""
    out: dict[str, list[tuple[int, int]]] = {}
    clash: set[str] = set()
    for sentence in sentences:
        for m in _FIELDS.finditer(sentence):
            word = m.group(1)
            fields = [f.strip() for f in m.group(2).split(",")]
            owners = [k for k, name in enumerate(names) if re.fullmatch(rf"{re.escape(word)}_?\d*", name)]
            if not owners or len(set(fields)) != len(fields):
                continue
            for i, f in enumerate(fields):
                if f in names:
                    continue
                places = [(k, i) for k in owners]
                if f in out and out[f] != places:
                    clash.add(f)
                out[f] = places
    return {f: p for f, p in out.items() if f not in clash}


def _sides(
    left: str, right: str, names: list[str], fields: dict[str, list[tuple[int, int]]]
) -> list[tuple[tuple[int, int | None], tuple[int, int | None]]]:
    """The pairs of operands two names make: two arguments, or two fields of each argument they are
    both fields of (each interval's start and end)."""
    if left in names and right in names and left != right:
        return [((names.index(left), None), (names.index(right), None))]
    if left in fields and right in fields and left != right:
        owners = {k for k, _ in fields[left]} & {k for k, _ in fields[right]}
        lf, rf = dict(fields[left]), dict(fields[right])
        return [((k, lf[k]), (k, rf[k])) for k in sorted(owners)]
    return []


def _word_op(rel: str) -> str | None:
    rel = re.sub(r"\s+", " ", rel.lower())
    low = re.match(r"(less|smaller|lower)", rel) is not None
    high = re.match(r"(greater|larger|bigger|higher)", rel) is not None
    if " or equal" in rel:
        return "<=" if low else ">=" if high else None
    if rel.startswith(("not ", "no ")):
        word = rel.split()[1]
        return ">=" if word in ("less", "smaller", "lower") else "<="
    if rel == "at most":
        return "<="
    if rel == "at least":
        return ">="
    return "<" if low else ">" if high else None


def stated_preconditions(prompt: str, entry_point: str) -> tuple[Relation | Property, ...]:
    """(filter v34) The preconditions the entry point's docstring gives outside its examples, in a
    sentence that gives them ("assume", "it is guaranteed", "given that", "where", ...: a given word
    before them with no word that tests between, :func:`_given_at`) or as a whole parenthesised aside
    ("(low <= high)"):

    - a comparison between two arguments (``low <= high``, "low is at most high"), or two named fields
      of an argument ("interval = (start, end)" ... "its start is less or equal its end": each argument
      named ``interval`` or ``interval`` and a number);
    - a property of an integer argument: prime, even, odd, positive, negative, non-negative, non-zero,
      or not so ("Assume n > 1 and is not a prime": the subject of "and is" is the argument the
      sentence named last before it).

    A comparison with a number is a bound (:func:`stated_bounds`), not read here."""
    found = _signature(prompt, entry_point, wider=True)
    if found is None:
        return ()
    names, doc = found
    if not names:
        return ()
    sentences = _sentences(doc)
    fields = _fields(sentences, names)
    out: list[Relation | Property] = []
    for sentence in sentences:
        for m in _RELATION_CHAIN.finditer(sentence):
            terms: list[str] = [t for t in m.groups() if t is not None]
            if not (_given_at(sentence, m.start()) or _aside_at(sentence, m.start(), m.end())):
                continue
            for i in range(0, len(terms) - 2, 2):
                left, op, right = terms[i].strip(), _COMPARE_OPS[terms[i + 1]], terms[i + 2].strip()
                for a, b in _sides(left, right, names, fields):
                    out.append(Relation(a, op, b))
        for m in _RELATION_WORDS.finditer(sentence):
            worded = _word_op(m.group("rel"))
            if worded is None or not _given_at(sentence, m.start()):
                continue
            for a, b in _sides(m.group("left"), m.group("right"), names, fields):
                out.append(Relation(a, worded, b))
        for m in _PROPERTY.finditer(sentence):
            if not _given_at(sentence, m.start()):
                continue
            subject = m.group("subject")
            if subject.lower() == "and":
                since = sentence[: m.start()]
                last = _GIVEN_WORDS.search(since)
                words = re.findall(r"[A-Za-z_]\w*", since[last.end() :] if last else "")
                named = [w for w in words if w in names]
                subject = named[-1] if named else ""
            if subject not in names:
                continue
            what = m.group("what").lower()
            holds = m.group("neg") is None
            if what == "composite":
                holds = not holds
            out.append(Property(names.index(subject), _PROPERTY_NAMES.get(what, what), holds))
    return tuple(dict.fromkeys(out))


#: what the statement bounds the probe's inputs by
Stated = Bound | Distinct | AsciiText | OneCharacter | Rectangular | Relation | Property


def outside_statement(bounds: tuple[Stated, ...], args: tuple[object, ...]) -> bool:
    """Whether arguments ``args`` break a bound the statement states."""
    return any(not b.admits(args) for b in bounds)


# ------------------------------------------------------------------------- (p9/c9) the domain stated
#: words by which a statement makes its numbers whole (named so, or given a property only integers have:
#: parity, primality, digits, divisors): an argument it speaks of so gets no float where its cases pass
#: ints, whatever its annotation (none) admits
_INTEGER_WORDS = re.compile(
    r"\bint(?:eger)?s?\b|\bwhole\b|\bnatural\b|\bdigits?\b|\bindex|\beven\b|\bodd\b|prime|divis|"
    r"\bmultiples?\b|factor|fibonacci|modul|remainder",
    re.IGNORECASE,
)
#: words by which a statement calls the elements of a list numbers: a bare ``list`` says nothing of its
#: elements, and one spoken of only as elements holds what its cases show (a correct program may read
#: them as ints: ``np.array(l, dtype=np.int64)`` on HumanEval/34's "sorted unique elements")
_NUMBER_WORDS = re.compile(r"\bnumbers?\b|numeric|\breal\b|\bfloat|decimal", re.IGNORECASE)
#: the word by which a statement says its argument is an integer of any sign, zero among them (a
#: "number n" of a task about divisors or digits is a count more often than not: HumanEval/24's
#: reference answers None for 0, /44's '' where a correct program answers '0')
_ZERO_WORDS = re.compile(r"\bintegers?\b", re.IGNORECASE)
#: words by which a statement says its numbers are not zero (a bound on the argument aside)
_POSITIVE_WORDS = re.compile(
    r"positive|natural|non-?zero|greater than (?:0|zero)|at least 1\b", re.IGNORECASE
)
#: words by which a statement speaks of letter case: the other case of a letter is then not admitted
#: unless a case shows it (a task about case says what case it takes)
_CASE_WORDS = re.compile(r"case|upper|lower|capital|small letter", re.IGNORECASE)


@dataclass(frozen=True)
class Admits:
    """What a task states one argument (or the elements of a flat list there) admits beyond what its
    cases show, read from the entry point's annotation and its docstring, never from a program:

    - ``floats``: a float where the cases pass ints (annotated ``float``, or not annotated at all and
      no integer named in the statement);
    - ``float_items``: the same for the elements of a flat list (``List[float]``, or a bare or untyped
      list whose elements the statement calls numbers and no integer);
    - ``ints``: an int where the cases pass floats (``float`` admits an int by the numeric tower);
    - ``zero``: zero where the cases pass other ints (an int admitted, the statement speaking of
      integers, and nothing stating them positive: no such word, no bound above zero);
    - ``case``: a letter in the other case (a string admitted, and the statement silent on case)."""

    floats: bool = False
    float_items: bool = False
    ints: bool = False
    zero: bool = False
    case: bool = False


#: the annotations whose leaves (the value itself, or a flat list's elements) are known: None, untyped
_SCALARS = {"int": frozenset({"int"}), "float": frozenset({"int", "float"}), "str": frozenset({"str"})}
_LISTS = frozenset({"list", "List", "Sequence", "Iterable"})


def _leaf_kinds(node: ast.expr | None) -> frozenset[str] | None:
    """The kinds of leaf an annotation admits (None: any, where none is written or a list's elements
    are untyped; empty: unknown, which admits nothing more than the cases show)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            return _leaf_kinds(ast.parse(node.value, mode="eval").body)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return frozenset()
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    if name in _SCALARS:
        return _SCALARS[name]
    if name in _LISTS:
        return None  # a list of anything
    if isinstance(node, ast.Subscript):
        outer = node.value
        outer_name = (
            outer.id
            if isinstance(outer, ast.Name)
            else outer.attr
            if isinstance(outer, ast.Attribute)
            else None
        )
        if outer_name in _LISTS:
            inner = _leaf_kinds(node.slice)
            # a list of lists is no flat list: its leaves are left as the cases show them
            return inner if inner is None or inner <= {"int", "float", "str"} else frozenset()
        if outer_name in ("Union", "Optional"):
            parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            kinds = [_leaf_kinds(p) for p in parts if not (isinstance(p, ast.Constant) and p.value is None)]
            if any(k is None for k in kinds):
                return frozenset()
            return frozenset().union(*kinds)  # type: ignore[arg-type]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _leaf_kinds(node.left), _leaf_kinds(node.right)
        return frozenset() if left is None or right is None else left | right
    return frozenset()


def _entry_prose(prompt: str, entry_point: str) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, str] | None:
    """The entry point's definition in the prompt and its docstring's prose (None where the prompt
    does not parse or does not define it). Only the prose: an example's values are cases, not words."""
    try:
        with pyast.LOCK:
            tree = ast.parse(prompt)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    node = next(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == entry_point
        ),
        None,
    )
    if node is None:
        return None
    doc = ast.get_docstring(node) or ""
    return node, "\n".join(line for line in doc.splitlines() if not line.strip().startswith(">>>"))


#: (p23/c23) a decimal number written in a statement's prose: a threshold, a table's bounds
_PROSE_DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")


def stated_numbers(prompt: str, entry_point: str) -> tuple[float, ...]:
    """(p23/c23) The decimal numbers the entry point's statement writes in its prose (its examples' lines
    aside), once each, in order: HumanEval/81's table of GPAs ("> 3.7  A"), where a program reading a
    bound as "from" answers otherwise only at the bound itself."""
    found = _entry_prose(prompt, entry_point)
    if found is None:
        return ()
    return tuple(dict.fromkeys(float(m.group()) for m in _PROSE_DECIMAL.finditer(found[1])))


def stated_admits(prompt: str, entry_point: str) -> tuple[Admits, ...]:
    """Per positional argument of the entry point, what its statement admits beyond its cases (none
    where the prompt does not define the entry point)."""
    found = _entry_prose(prompt, entry_point)
    if found is None:
        return ()
    node, prose = found
    integers = bool(_INTEGER_WORDS.search(prose))
    numbers_named = bool(_NUMBER_WORDS.search(prose))
    signed = bool(_ZERO_WORDS.search(prose)) and not _POSITIVE_WORDS.search(prose)
    cased = bool(_CASE_WORDS.search(prose))
    params = [*node.args.posonlyargs, *node.args.args]
    names = [a.arg for a in params]
    above_zero = {
        b.arg
        for b in stated_bounds(prompt, entry_point)
        if not b.length
        and isinstance(b.limit, float)
        and ((not b.upper and (b.limit > 0 or (b.limit == 0 and b.strict))) or (b.upper and b.limit <= 0))
    }
    out: list[Admits] = []
    for k, param in enumerate(params):
        kinds = _leaf_kinds(param.annotation)
        untyped = kinds is None
        numbers = untyped or bool(kinds and kinds & {"int", "float"})
        typed_float = kinds is not None and "float" in kinds
        out.append(
            Admits(
                floats=(untyped and not integers) or typed_float,
                float_items=(untyped and numbers_named and not integers) or typed_float,
                ints=untyped or (kinds is not None and "int" in kinds),
                zero=numbers and signed and k not in above_zero and names[k] not in ("self", "cls"),
                case=(untyped or (kinds is not None and "str" in kinds)) and not cased,
            )
        )
    return tuple(out)


# ------------------------------------------------------------------- (p16/c16) the signs stated
#: words by which a statement puts a convention on zero or on a negative value of its numbers: a divisor,
#: a prime, a factor, a modulus, a remainder, a logarithm or a base is defined for positive numbers in
#: the reading most programs take (HumanEval/24's largest divisor of 0, /13's gcd of a negative), so a
#: correct program may answer such an input otherwise than the reference and owes nothing there
_CONVENTION_WORDS = re.compile(
    r"divi[sd]|prime|factor|modul|remainder|\blog|fibonacci|factorial", re.IGNORECASE
)
#: words by which a statement puts a convention on a negative number besides: its digits (the minus sign
#: one or not: HumanEval/122's ``len(str(x)) <= 2``), its representation in a base (HumanEval/44)
_NEGATIVE_CONVENTION_WORDS = re.compile(r"\bdigits?\b|\bbase\b|binary|\bbits?\b", re.IGNORECASE)
#: (p16/c16) the word by which a statement admits negative numbers (not "non-negative" or "not negative")
_NEGATIVE_WORD = re.compile(r"(?<!non-)(?<!non)(?<!not )(?<!no )\bnegative", re.IGNORECASE)
#: words by which a statement says its numbers are not below zero
_NON_NEGATIVE_WORDS = re.compile(
    r"non-?negative|not negative|no negative|positive|natural|unsigned", re.IGNORECASE
)


@dataclass(frozen=True)
class Signs:
    """(p16/c16) What a task's statement admits of one numeric argument's sign beyond its cases:

    - ``zero``: zero where every case's number there is another: an int admitted (annotated ``int`` or
      a list of them; an untyped one where the statement speaks of integers), nothing stating it
      positive (no such word, no bound above zero), no convention at zero (:data:`_CONVENTION_WORDS`).
      Through p15 (:attr:`Admits.zero`) the statement had to speak of *integers*: ``depth(n: int)``,
      "sum of 1..n", and HumanEval/44's "input number x" (whose reference answers ``'0'`` since its
      erratum) had no zero drawn at all;
    - ``negative``: a negative number where every case's is at least zero: the statement says
      "negative" of its numbers, or speaks of integers with no word stating them positive, non-negative
      or natural; or the argument is annotated ``float`` (a real number's sign is no convention) with no
      such word; in either case no convention word and no bound at or above zero."""

    zero: bool = False
    negative: bool = False


#: (p23/c23) a sign the statement tests rather than states: "Return True if every number is greater than
#: zero" decides on zero and below, it does not say its numbers are positive (library/all_positive's
#: ``x >= 0`` was never shown a zero: red-team a45_zero_greater_than_all_positive)
_TESTED_POSITIVE = re.compile(
    r"\b(?:if|whether|unless)\b[^.;]*?\b(?:is|are)\s+(?:all\s+|each\s+)?"
    r"(?:positive|greater than (?:0|zero)|non-?zero|at least 1\b)",
    re.IGNORECASE,
)
#: (p23/c23) the words of :data:`_CONVENTION_WORDS` that put a convention on zero itself: a divisor, a
#: factor, a prime, a logarithm, a Fibonacci number or a factorial of 0 (HumanEval/24's "the largest
#: number that divides n") is read otherwise by programs,
#: but 0 is divisible by every number and leaves remainder 0 under every convention (library/fizzbuzz_word's
#: "divisible by 3 and 5" and library/remainder_by_seven's "remainder of x divided by 7" were never shown
#: a zero: red-team a45_zero_divisible_fizzbuzz, a45_zero_remainder_by_seven)
_ZERO_CONVENTION_WORDS = re.compile(
    r"divisors?\b|\bdivides\b|factor|prime|\blog|fibonacci|factorial", re.IGNORECASE
)


def stated_signs(prompt: str, entry_point: str, *, tested: bool = False) -> tuple[Signs, ...]:
    """(p16/c16) Per positional argument of the entry point, the signs its statement admits beyond its
    cases (none where the prompt does not define the entry point). Under ``tested`` (p23/c23) a
    positive word in a condition the statement tests (:data:`_TESTED_POSITIVE`) states nothing, and
    only a convention at zero itself (:data:`_ZERO_CONVENTION_WORDS`) keeps zero out: a convention on
    negative numbers alone (a remainder, divisibility) keeps out negatives only."""
    found = _entry_prose(prompt, entry_point)
    if found is None:
        return ()
    node, full = found
    prose = _TESTED_POSITIVE.sub(" ", full) if tested else full
    convention = bool(_CONVENTION_WORDS.search(prose))
    at_zero = bool(_ZERO_CONVENTION_WORDS.search(prose)) if tested else convention
    positive = bool(_POSITIVE_WORDS.search(prose)) or bool(_NON_NEGATIVE_WORDS.search(prose))
    integers = bool(_ZERO_WORDS.search(prose))
    negative_said = bool(_NEGATIVE_WORD.search(prose.replace("non-negative", "").replace("nonnegative", "")))
    params = [*node.args.posonlyargs, *node.args.args]
    names = [a.arg for a in params]
    bounds = [b for b in stated_bounds(prompt, entry_point) if not b.length and isinstance(b.limit, float)]
    # a lower bound at zero or above, or an upper one at zero or below
    limits = [(b.arg, b.upper, float(b.limit), b.strict) for b in bounds]  # type: ignore[arg-type]
    above_zero = {
        arg
        for arg, upper, limit, strict in limits
        if (not upper and (limit > 0 or (limit == 0 and strict))) or (upper and limit <= 0)
    }
    not_negative = {arg for arg, upper, limit, _ in limits if not upper and limit >= 0}
    out: list[Signs] = []
    for k, param in enumerate(params):
        kinds = _leaf_kinds(param.annotation)
        if names[k] in ("self", "cls") or at_zero or (kinds is not None and not kinds & {"int", "float"}):
            out.append(Signs())
            continue
        typed_int = kinds is not None and "int" in kinds
        typed_float = kinds is not None and "float" in kinds
        zero = (typed_int or integers) and not _POSITIVE_WORDS.search(prose) and k not in above_zero
        negative = (
            not convention
            and not _NEGATIVE_CONVENTION_WORDS.search(prose)
            and (
                negative_said
                or (integers and not positive)
                or (typed_float and not positive)
                # (p23/c23) a statement testing its numbers' sign decides on negatives too
                or (tested and typed_int and not positive and _TESTED_POSITIVE.search(full) is not None)
            )
            and k not in not_negative
            and k not in above_zero
        )
        out.append(Signs(zero=zero, negative=negative))
    return tuple(out)


# ------------------------------------------------------------- (p24/c24) the statement's own inputs
def stated_calls(prompt: str, entry_point: str) -> tuple[tuple[object, ...], ...]:
    """(p24/c24) The arguments of every call of the entry point the statement writes with literal
    arguments only, in its prose or its examples ("fib4(2) -> 2", ">>> closest_integer('-14.5')"), once
    each, in order. The statement's own inputs are the task's: HumanEval/46 writes fib4(0) to fib4(3),
    and a program wrong only at n = 2 answered every drawn input (no case and no near draw is below 5)."""
    found = _entry_prose(prompt, entry_point)
    if found is None:
        return ()
    doc = ast.get_docstring(found[0]) or ""
    out: dict[str, tuple[object, ...]] = {}
    for m in re.finditer(rf"(?<![\w.]){re.escape(entry_point)}\s*\(", doc):
        text = _balanced(doc, m.end() - 1)
        if text is None:
            continue
        try:
            with pyast.LOCK:
                node = ast.parse(f"f{text}", mode="eval").body
            if not isinstance(node, ast.Call) or node.keywords:
                continue
            args = tuple(ast.literal_eval(a) for a in node.args)
        except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
            continue
        out.setdefault(repr(args), args)
    return tuple(out.values())


def _balanced(text: str, start: int) -> str | None:
    """The parenthesised text opening at ``text[start]`` (its quotes respected), or None where it does
    not close within the line's reach (400 characters)."""
    depth, quote, i = 0, "", start
    end = min(len(text), start + 400)
    while i < end:
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    return None


#: (p24/c24) number words a statement bounds its integers with ("at most two digits")
_COUNT_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20, "hundred": 100, "thousand": 1000,
}  # fmt: skip
_COUNT = r"(?:\d+|" + "|".join(_COUNT_WORDS) + r")"
#: (p24/c24) an integer the prose compares with, or bounds a range by: "at most 5", "less than 100",
#: "not higher than 29", "between 1 and 1000", "up to 12", "x >= 3", "1 <= n <= 50"
_COMPARED_INTEGER = re.compile(
    r"(?:\b(?:at\s+(?:most|least)|(?:less|fewer|smaller|lower|greater|more|larger|bigger|higher)\s+th[ae]n|"
    r"up\s+to|exceeds?|exceeding|under|over|below|above|equal\s+to|(?:between|from)(?=\s+-?\w+\s+(?:and|to)\s))\s+|"
    r"(?:<=?|(?<![-=])>=?|≤|≥)\s*)"
    rf"(-?{_COUNT})\b(?![.,]\d|-\w)"
    rf"|(?<![\w.])(-?\d+)\s*(?:<=?|≤)",
    re.IGNORECASE,
)
#: (p24/c24) the upper end of a range "between 1 and 1000", "from 0 to 9"
_RANGE_END = re.compile(
    rf"\b(?:between|from)\s+-?{_COUNT}\s+(?:and|to)\s+(-?{_COUNT})\b(?![.,]\d)", re.IGNORECASE
)
#: (p24/c24) a count of digits: "at most two digits", "a 3-digit number", "two-digit"
_DIGIT_COUNT = re.compile(rf"\b({_COUNT})[\s-]+digits?\b", re.IGNORECASE)


def _count(text: str) -> int | None:
    word = text.lower().lstrip("-")
    value = _COUNT_WORDS.get(word, int(word) if word.isdigit() else None)
    if value is None:
        return None
    return -value if text.startswith("-") else value


def stated_integers(prompt: str, entry_point: str) -> tuple[int, ...]:
    """(p24/c24) The integers the entry point's statement compares its values with or bounds them by in
    its prose (its examples' lines aside), each with its neighbours (N - 1, N, N + 1), and the bounds a
    count of digits sets (k digits: 10**(k-1) - 1, 10**(k-1), 10**k - 1, 10**k): where a program reading
    the bound the other way ('<' as '<=', three digits for two) answers otherwise, and nowhere else.
    HumanEval/122's "at most two digits" (100 was never drawn), library tasks' "at most 5". Once each, in
    order."""
    found = _entry_prose(prompt, entry_point)
    if found is None:
        return ()
    prose = "\n".join(_INLINE_EXAMPLE.sub("", line) for line in found[1].splitlines())
    out: dict[int, None] = {}
    for m in _DIGIT_COUNT.finditer(prose):
        k = _count(m.group(1))
        if k is not None and 1 <= k <= 18:
            for n in (10 ** (k - 1) - 1, 10 ** (k - 1), 10**k - 1, 10**k):
                out.setdefault(n)
    found_integers = [next(g for g in m.groups() if g is not None) for m in _COMPARED_INTEGER.finditer(prose)]
    for text in (*found_integers, *(m.group(1) for m in _RANGE_END.finditer(prose))):
        n = _count(text)
        if n is not None and abs(n) <= 10**18:
            for x in (n - 1, n, n + 1):
                out.setdefault(x)
    return tuple(out)


#: (p24/c24) words by which a statement keeps its text to letters: "contains English letter only",
#: "consists of lowercase letters", "only letters"
_LETTERS_ONLY = re.compile(
    r"\bletters?\s+only\b|\bonly\s+(?:\w+\s+)?letters?\b|\bconsists?\s+(?:only\s+)?of\s+(?:\w+\s+)?letters?\b",
    re.IGNORECASE,
)


def stated_letters_only(prompt: str, entry_point: str) -> bool:
    """(p24/c24) Whether the entry point's statement keeps its text to letters in its prose (HumanEval/118's
    "You may assume that the given string contains English letter only"): a symbol there is outside the
    task, and a correct program may read it as it likes."""
    found = _entry_prose(prompt, entry_point)
    return found is not None and _LETTERS_ONLY.search(found[1]) is not None
