"""Similarity of a program to its task's reference solution: CodeBLEU (Ren et al., 2020).

The score is the mean of four parts, each in [0, 1], computed by the pinned ``codebleu`` package on
whitespace tokens, as its authors define them:

* ``ngram``: BLEU-4 of the program's tokens against the reference's;
* ``weighted_ngram``: the same with Python keywords weighing 5x other tokens;
* ``syntax``: the share of the reference's syntax subtrees (tree-sitter) found in the program;
* ``dataflow``: the share of the reference's data-flow edges (which variable comes from which, names
  normalised) found in the program.

Two deviations from the package's ``calc_codebleu``, both where it would give credit for nothing: a
reference without any data flow (``return x > 0``) leaves the data-flow part out and the other three
are averaged (the package counts it as a full match), and a program that matches none of the
reference's data flow scores 0 there (the package counts a 0 as a full match too). Identical programs
(after stripping surrounding whitespace) score exactly 1.

Consistently renamed identifiers keep the syntax and data-flow parts whole and lose n-grams, so they
score well above an unrelated program (``tests/unit/test_similarity.py`` has hand-computed pairs).
A task without a reference has no similarity: ``None``, shown as "n/a", never 0.

Bounded like every host-side reading of a program: the package renders each syntax subtree as text
with a recursive C routine (tree-sitter's ``ts_node_string``), which overflows the C stack past ~25,000
levels and kills the process (a ``1+1+...`` chain does it). A program nested deeper than
``MAX_SYNTAX_DEPTH`` or longer than ``MAX_CHARS`` is measured by nothing but its own text and scores 0
in every part: it shares nothing measurable with a reference, and the host stays up.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

LANG = "python"
#: syntax-tree depth past which the package's recursive walks are not run (real programs stay < 100)
MAX_SYNTAX_DEPTH = 500
#: characters past which a program is not compared (the subtree texts grow with size x depth)
MAX_CHARS = 200_000


@dataclass(frozen=True)
class Similarity:
    score: float
    ngram: float
    weighted_ngram: float
    syntax: float
    #: None when the reference has no data flow to match
    dataflow: float | None


@lru_cache(maxsize=1)
def _toolkit() -> tuple[Any, ...]:
    # imported on first use: the reward processor pays for tree-sitter only when it scores similarity
    from codebleu import bleu, dataflow_match, syntax_match, weighted_ngram_match
    from codebleu.codebleu import PACKAGE_DIR
    from codebleu.utils import get_tree_sitter_language
    from tree_sitter import Parser

    language = get_tree_sitter_language(LANG)
    parser = Parser()
    parser.language = language
    keywords = frozenset(
        line.strip() for line in (PACKAGE_DIR / "keywords" / f"{LANG}.txt").read_text().splitlines()
    )
    return bleu, weighted_ngram_match, syntax_match, dataflow_match, language, parser, keywords


def _dataflow(reference: str, program: str) -> float | None:
    _, _, _, dfm, _, parser, _ = _toolkit()
    pair = [parser, dfm.dfg_function[LANG]]

    def flows(code: str) -> list[Any]:
        with contextlib.suppress(Exception):  # the package's own fallback: keep the text as it is
            code = dfm.remove_comments_and_docstrings(code, LANG)
        return list(dfm.normalize_dataflow(dfm.get_data_flow(code, pair)))

    wanted, have = flows(reference), flows(program)
    if not wanted:
        return None
    matched = 0
    for edge in wanted:
        if edge in have:
            matched += 1
            have.remove(edge)
    return matched / len(wanted)


def syntax_depth(code: str, limit: int = MAX_SYNTAX_DEPTH) -> int:
    """Depth of ``code``'s tree-sitter syntax tree, walked with a cursor (no recursion), stopping
    once it passes ``limit``."""
    *_, parser, _ = _toolkit()
    cursor = parser.parse(code.encode("utf-8", "surrogatepass")).walk()  # lone surrogates: see measurable
    depth = deepest = 0
    while deepest <= limit:
        if cursor.goto_first_child():
            depth += 1
            deepest = max(deepest, depth)
            continue
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return deepest
            depth -= 1
    return deepest


def measurable(code: str) -> bool:
    """Whether the package can compare ``code`` without exhausting the host (see the module docstring);
    text that is not valid UTF-8 (a lone surrogate) is not: the package encodes it strictly."""
    try:
        code.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return len(code) <= MAX_CHARS and syntax_depth(code) <= MAX_SYNTAX_DEPTH


def code_similarity(reference: str, program: str) -> Similarity:
    """CodeBLEU of ``program`` against ``reference`` (see the module docstring)."""
    ref, hyp = reference.strip(), program.strip()
    if ref == hyp:
        return Similarity(1.0, 1.0, 1.0, 1.0, 1.0)
    if not (measurable(ref) and measurable(hyp)):
        return Similarity(0.0, 0.0, 0.0, 0.0, None)
    bleu, wbleu, sm, _, language, _, keywords = _toolkit()
    ref_tokens, hyp_tokens = ref.split(), hyp.split()
    ngram = float(bleu.corpus_bleu([[ref_tokens]], [hyp_tokens]))
    weights = {t: 1 if t in keywords else 0.2 for t in ref_tokens}
    weighted = float(wbleu.corpus_bleu([[[ref_tokens, weights]]], [hyp_tokens]))
    syntax = float(sm.corpus_syntax_match([[ref]], [hyp], LANG, tree_sitter_language=language))
    dataflow = _dataflow(ref, hyp)
    parts = [ngram, weighted, syntax] + ([dataflow] if dataflow is not None else [])
    score = sum(parts) / len(parts)
    return Similarity(min(max(score, 0.0), 1.0), ngram, weighted, syntax, dataflow)
