"""Build the task library file: ``python -m producers.ingest.library.build [--check] [--out FILE]``.

Writes one task per line (levels 1-4 from their specs, level 5 derived from HumanEval), sorted by
level then name, and prints how many tasks each level has and which HumanEval tasks were left out and
why. ``--check`` writes nothing and exits 1 when the committed file differs from a fresh build.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from producers.ingest.library import PATH, SOURCE, algorithm, conditional, expression, loop
from producers.ingest.library.derived import derived_tasks
from producers.ingest.library.spec import LEVELS, Spec, SpecError, build_task
from schemas.task import TaskPublished

SPECS: tuple[Spec, ...] = (*expression.SPECS, *conditional.SPECS, *loop.SPECS, *algorithm.SPECS)


def build() -> tuple[list[TaskPublished], list[str]]:
    """Every task of the library and the HumanEval tasks left out (with the reason)."""
    names = Counter(s.name for s in SPECS)
    twice = sorted(n for n, c in names.items() if c > 1)
    if twice:
        raise SpecError(f"task names used twice: {', '.join(twice)}")
    written: list[TaskPublished] = []
    errors: list[str] = []
    for spec in SPECS:
        try:
            written.append(build_task(spec, source=SOURCE))
        except SpecError as exc:
            errors.append(str(exc))
    if errors:
        raise SpecError(f"{len(errors)} spec(s) cannot make a sound task:\n  " + "\n  ".join(errors))
    derived, skipped = derived_tasks(source=SOURCE)
    tasks = sorted([*written, *derived], key=lambda t: (t.difficulty or 0, t.task_id))
    return tasks, skipped


def render(tasks: list[TaskPublished]) -> str:
    lines = [json.dumps(t.model_dump(mode="json"), sort_keys=True, ensure_ascii=False) for t in tasks]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=PATH)
    parser.add_argument("--check", action="store_true", help="exit 1 if the file is not what a build gives")
    args = parser.parse_args(argv)
    tasks, skipped = build()
    text = render(tasks)
    per_level = Counter(t.difficulty for t in tasks)
    summary = ", ".join(f"level {lv} {LEVELS[lv]}: {per_level[lv]}" for lv in sorted(LEVELS))
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        if current != text:
            print(f"{args.out} is stale: run python -m producers.ingest.library.build", file=sys.stderr)
            return 1
        print(f"{args.out} is current ({len(tasks)} tasks; {summary})")
        return 0
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {len(tasks)} tasks to {args.out} ({summary})")
    print(f"{len(skipped)} HumanEval task(s) left out:")
    for reason in skipped:
        print(f"  {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
