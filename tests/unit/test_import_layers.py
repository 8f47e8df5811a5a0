"""The layers' rule, read from the source: imports point down. The benches and the tests share what drives
whole runs through ``harness`` and never import each other; ``harness`` imports neither of them; the
packages that ship (``rlstream`` and below) import none of the three.

Every module's imports are parsed with :mod:`ast`, so an import inside a function or under
``TYPE_CHECKING`` counts as much as one at the top."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: the packages that ship (pyproject's wheel)
RUNTIME = ("rlstream", "schemas", "producers", "streams", "consumers", "learner", "infra")
#: package -> the top-level packages of ours it must never import
FORBIDDEN: dict[str, frozenset[str]] = {
    "tests": frozenset({"bench"}),
    "bench": frozenset({"tests"}),
    "harness": frozenset({"tests", "bench"}),
    **{name: frozenset({"tests", "bench", "harness"}) for name in RUNTIME},
}


def _modules(package: str) -> Iterator[Path]:
    for path in sorted((ROOT / package).rglob("*.py")):
        # a local environment or cache inside a package (infra/gpu/.venv) is not the project's source
        if not any(part.startswith(".") for part in path.relative_to(ROOT).parts):
            yield path


def _imported(source: str, filename: str = "<module>") -> Iterator[tuple[int, str]]:
    """(line, module name) of every absolute import in ``source``. A relative import is left out: every
    package of the rule is a top-level one, so a relative import never leaves the package it is in."""
    for node in ast.walk(ast.parse(source, filename)):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def _violations(package: str) -> list[str]:
    forbidden = FORBIDDEN[package]
    return [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in _modules(package)
        for line, name in _imported(path.read_text(encoding="utf-8"), str(path))
        if name.split(".")[0] in forbidden
    ]


def test_every_package_of_the_rule_is_here_with_its_modules() -> None:
    for package in FORBIDDEN:
        assert (ROOT / package / "__init__.py").is_file(), package
        assert any(_modules(package)), package


def test_the_tests_never_import_the_benches() -> None:
    assert _violations("tests") == []


def test_the_benches_never_import_the_tests() -> None:
    assert _violations("bench") == []


def test_the_harness_imports_neither_the_tests_nor_the_benches() -> None:
    assert _violations("harness") == []


def test_the_shipped_packages_import_none_of_tests_benches_or_harness() -> None:
    assert [v for package in RUNTIME for v in _violations(package)] == []


def test_the_reader_sees_every_kind_of_import() -> None:
    # the check itself: an import it cannot see would let every test above pass vacuously
    source = (
        "import json, bench.load as load\n"
        "from . import sibling\n"
        "from harness.faults import Run\n"
        "if TYPE_CHECKING:\n"
        "    from tests.cli_support import cli\n"
        "def f():\n"
        "    import bench.recovery\n"
    )
    assert sorted(_imported(source)) == [
        (1, "bench.load"),
        (1, "json"),
        (3, "harness.faults"),
        (5, "tests.cli_support"),
        (7, "bench.recovery"),
    ]
