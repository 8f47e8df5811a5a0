"""How a library task is written down, and how its cases are generated from its reference.

A :class:`Spec` is a function's signature, a one-paragraph description, a reference body and a
generator of argument tuples. :func:`build_task` draws distinct inputs (fixed edge inputs first, then
seeded random ones), runs the reference on each to get the expected value - so every expected output
is the reference's own - shows the first cases as doctest examples in the prompt (the visible cases)
and keeps the rest hidden. Drawing is seeded by the task's name: the same spec always yields the same
task.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import math
import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from schemas.task import TaskPublished, TestCase

Gen = Callable[[random.Random], Any]

#: difficulty levels of the library, easiest first
LEVELS: dict[int, str] = {
    1: "expression",  # one expression: arithmetic, slicing, comprehensions, builtins
    2: "conditional",  # a branch or two, boolean logic, small string handling
    3: "loop",  # loops with accumulators, counting, building lists and dicts
    4: "algorithm",  # several steps: parsing, searching, recursion, two pointers
    5: "humaneval",  # the HumanEval tasks, cases recomputed with their canonical solutions
}

VISIBLE = 2
HIDDEN = 8
#: fewest cases a task may have (a generator over a small domain yields fewer than VISIBLE + HIDDEN)
MIN_CASES = VISIBLE + 4
#: draws per wanted input before a generator is declared unable to produce distinct inputs
_ATTEMPTS = 60


class SpecError(ValueError):
    """A spec that cannot make a sound task (its reference raises, its cases cannot judge)."""


@dataclass(frozen=True)
class Spec:
    name: str
    level: int
    params: str
    returns: str
    doc: str
    body: str
    #: one generator per parameter, or one generator of whole argument tuples (correlated arguments)
    args: tuple[Gen, ...] | Gen
    tags: tuple[str, ...]
    #: inputs always among the hidden cases (empty strings, zero, ...), as argument tuples
    edge: tuple[tuple[Any, ...], ...] = ()
    #: lines above the function (imports)
    header: str = ""

    @property
    def task_id(self) -> str:
        return f"library/{self.name}"

    def signature(self) -> str:
        return f"def {self.name}({self.params}) -> {self.returns}:\n"

    def reference(self) -> str:
        body = "".join(f"    {line}\n" if line else "\n" for line in self.body.strip("\n").splitlines())
        return f"{self.header}{self.signature()}{body}"


def _literal(value: Any) -> str:
    text = repr(value)
    if isinstance(value, float) and not math.isfinite(value):
        raise SpecError(f"{value!r} is not a finite float")
    try:
        back = ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise SpecError(f"{text[:60]} is not a plain literal") from exc
    if back != value or type(back) is not type(value):
        raise SpecError(f"{text[:60]} does not read back as the same value")
    return text


def _reference_function(spec: Spec) -> Callable[..., Any]:
    scope: dict[str, Any] = {}
    exec(compile(spec.reference(), f"<{spec.task_id}>", "exec"), scope)
    fn: Callable[..., Any] = scope[spec.name]
    return fn


def _rng(name: str) -> random.Random:
    return random.Random(int.from_bytes(hashlib.sha256(f"library|{name}".encode()).digest()[:8], "big"))


def draw_inputs(spec: Spec, count: int) -> list[tuple[Any, ...]]:
    """``count`` distinct argument tuples: the edge inputs first, then seeded random draws."""
    rng = _rng(spec.name)
    seen: set[str] = set()
    drawn: list[tuple[Any, ...]] = []
    for args in spec.edge:
        if repr(args) not in seen:
            seen.add(repr(args))
            drawn.append(args)
    attempts = 0
    while len(drawn) < count:
        attempts += 1
        if attempts > _ATTEMPTS * count:
            if len(drawn) >= MIN_CASES:
                break  # a small input domain, exhausted: every input it has is a case
            raise SpecError(f"{spec.name}: its generator gave only {len(drawn)} distinct inputs")
        args = tuple(g(rng) for g in spec.args) if isinstance(spec.args, tuple) else spec.args(rng)
        if not isinstance(args, tuple):
            raise SpecError(f"{spec.name}: its generator drew {args!r}, not a tuple of arguments")
        if repr(args) not in seen:
            seen.add(repr(args))
            drawn.append(args)
    return drawn[:count]


def _doctest(name: str, case: TestCase) -> str:
    args = case.input[1:-1].rstrip(",") if case.input != "()" else ""
    return f"    >>> {name}({args})\n    {case.output}\n"


def build_task(spec: Spec, *, source: str) -> TaskPublished:
    """The task of ``spec``: cases computed by its reference, the first :data:`VISIBLE` shown in the
    prompt. Raises :class:`SpecError` when the reference fails on an input or the cases cannot tell
    a right program from a constant or identity answer."""
    if spec.level not in LEVELS:
        raise SpecError(f"{spec.name}: level {spec.level} is not one of {sorted(LEVELS)}")
    reference = _reference_function(spec)
    inputs = draw_inputs(spec, VISIBLE + HIDDEN)
    # visible examples: random draws, not the edge inputs (those are what hidden cases are for)
    inputs = (
        inputs[len(spec.edge) :][:VISIBLE] + inputs[: len(spec.edge)] + inputs[len(spec.edge) + VISIBLE :]
    )
    cases: list[TestCase] = []
    outputs: list[Any] = []
    for args in inputs:
        try:
            value = reference(*copy.deepcopy(args))
        except Exception as exc:
            raise SpecError(f"{spec.name}{args!r}: the reference raised {exc!r}") from exc
        outputs.append(value)
        cases.append(TestCase(input=_literal(args), output=_literal(value)))
    if all(repr(o) == repr(outputs[0]) for o in outputs):
        raise SpecError(f"{spec.name}: every case expects {outputs[0]!r}: a constant answer would pass")
    if all(len(a) >= 1 and repr(a[0]) == repr(o) for a, o in zip(inputs, outputs, strict=True)):
        raise SpecError(f"{spec.name}: returning the first argument would pass every case")
    examples = "".join(_doctest(spec.name, c) for c in cases[:VISIBLE])
    prompt = f'{spec.header}{spec.signature()}    """{spec.doc}\n\n{examples}    """\n'
    # a case the description itself spells out (``fibonacci(0) == 0``) is not hidden from the model
    shown = [c for c in cases[VISIBLE:] if f"{spec.name}({c.input[1:-1].rstrip(',')})" in spec.doc]
    visible = (*cases[:VISIBLE], *shown)
    hidden = tuple(c for c in cases[VISIBLE:] if c not in shown)
    return TaskPublished(
        task_id=spec.task_id,
        prompt=prompt,
        entry_point=spec.name,
        tests=visible,
        hidden_tests=hidden,
        reference=spec.reference(),
        source=source,
        difficulty=spec.level,
        tags=tuple(dict.fromkeys((LEVELS[spec.level], *spec.tags))),
    )


# --- argument generators ----------------------------------------------------------------------------

WORDS = (
    "apple",
    "banana",
    "cherry",
    "delta",
    "echo",
    "falcon",
    "garden",
    "harbor",
    "island",
    "jungle",
    "kettle",
    "lemon",
    "mango",
    "nectar",
    "ocean",
    "pepper",
    "quartz",
    "river",
    "sunset",
    "tiger",
    "umbrella",
    "violet",
    "walnut",
    "xenon",
    "yellow",
    "zebra",
    "anchor",
    "breeze",
    "candle",
    "dragon",
    "ember",
    "forest",
    "glacier",
    "honey",
    "ivory",
    "jasper",
    "kiwi",
    "lantern",
    "meadow",
    "nickel",
    "orbit",
    "pebble",
    "quill",
    "rocket",
    "saddle",
    "thunder",
    "velvet",
    "willow",
    "yonder",
    "zephyr",
    "alpha",
    "bravo",
    "comet",
    "dune",
    "fable",
    "grape",
    "hazel",
)


def ints(lo: int, hi: int) -> Gen:
    return lambda r: r.randint(lo, hi)


def floats(lo: float, hi: float, digits: int = 2) -> Gen:
    return lambda r: round(r.uniform(lo, hi), digits)


def choice(values: Sequence[Any]) -> Gen:
    return lambda r: r.choice(list(values))


def letters(lo: int, hi: int, alphabet: str = string.ascii_lowercase) -> Gen:
    return lambda r: "".join(r.choice(alphabet) for _ in range(r.randint(lo, hi)))


def word() -> Gen:
    return lambda r: r.choice(WORDS)


def sentence(lo: int, hi: int) -> Gen:
    return lambda r: " ".join(r.choice(WORDS) for _ in range(r.randint(lo, hi)))


def lists(item: Gen, lo: int, hi: int) -> Gen:
    return lambda r: [item(r) for _ in range(r.randint(lo, hi))]
