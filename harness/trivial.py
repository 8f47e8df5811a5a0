"""The trivial task the pipeline benches run (``bench.pipeline``) and the tests of what a sample costs
judge: the cheapest plan, execution and judging there is, so what is measured on it is the system's own
cost per sample."""

from __future__ import annotations

from schemas.task import TaskPublished, TestCase

TASK = TaskPublished(
    task_id="bench/identity",
    prompt='def ident(x):\n    """Return x."""\n',
    entry_point="ident",
    tests=(TestCase(input="(1,)", output="1"),),
    hidden_tests=(TestCase(input="('a',)", output="'a'"), TestCase(input="([2, 3],)", output="[2, 3]")),
    reference="def ident(x):\n    return x\n",
)


def program(i: int) -> str:
    """A correct program for :data:`TASK`, different text for each ``i`` (so no cache answers it)."""
    return f"def ident(x):\n    # sample {i}\n    return x\n"
