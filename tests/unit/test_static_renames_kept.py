"""Whether a program may rebind its ``__name__`` is scanned once per syntax tree and kept: every later
question about the same tree gets the scan's answer, and another tree (even one at a reused address)
is scanned anew."""

from __future__ import annotations

import ast

from streams.reward import static

PROGRAMS = {
    "def f(x):\n    return x\n": False,
    "__name__ = '__main__'\ndef f(x):\n    return x\n": True,
    "globals()['__name__'] = '__main__'\ndef f(x):\n    return x\n": True,
    "import sys\nsys.modules[__name__].__name__ = '__main__'\n": True,
    "if __name__ == '__main__':\n    print(1)\ndef f(x):\n    return x\n": False,
}


def test_the_kept_answer_is_the_scans_for_every_tree() -> None:
    static._RENAMES.clear()
    for _ in range(2):
        for code, renames in PROGRAMS.items():
            tree = ast.parse(code)
            assert static._scan_renames(tree) is renames
            assert static._renames_module(tree) is renames
            assert static._renames_module(tree) is renames  # kept


def test_a_new_tree_is_scanned_anew_and_the_store_is_bounded() -> None:
    static._RENAMES.clear()
    for i in range(static.RENAMES_KEPT * 3):
        code = list(PROGRAMS)[i % len(PROGRAMS)]
        # a fresh tree each time: its address may be a freed one's, its answer is its own
        assert static._renames_module(ast.parse(code)) is PROGRAMS[code]
    assert len(static._RENAMES) <= static.RENAMES_KEPT


def test_analyses_of_a_renaming_program_still_count_its_main_block() -> None:
    guarded = "if __name__ == '__main__':\n    T = {1: 2}\ndef f(x):\n    return x\n"
    renamed = "__name__ = '__main__'\n" + guarded
    assert 2 not in static.analyse(guarded, "f").literals
    assert 2 in static.analyse(renamed, "f").literals
