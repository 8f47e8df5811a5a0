"""The steps of one WASM execution, from the marks ``WasmBackend.spans`` collects while it is set.

``python -m bench.sandbox --breakdown`` reports them; the sandbox's tests check that they tile a run.
"""

from __future__ import annotations

import itertools


def steps_of(marks: list[tuple[str, str, float]], start: float, end: float) -> dict[str, dict[str, float]]:
    """ms per stretch, per role (``host``, ``candidate``, ``check``), from one execution's marks
    between ``start`` and ``end``. A guest's stretches run on its own thread; in check mode the two
    guests overlap in time, so their stretches add up to more than the execution's wall time."""
    out: dict[str, dict[str, float]] = {}
    by_role: dict[str, list[tuple[str, float]]] = {}
    for role, what, t in marks:
        by_role.setdefault(role, []).append((what, t))
    host = dict(by_role.pop("host", []))
    first_run = min(seq[0][1] for seq in by_role.values())
    last_joined = max(t for seq in by_role.values() for what, t in seq if what == "joined")
    steps = {"encoded": host["encoded"] - start, "run": first_run - host["encoded"]}
    if "thread joined" in host:
        steps["thread joined"] = host["thread joined"] - last_joined
        last_joined = host["thread joined"]
    steps["done"] = end - last_joined
    out["host"] = {k: 1000 * v for k, v in steps.items()}
    for role, seq in by_role.items():
        steps = out.setdefault(role, {})
        phase = "start"
        for (_, t0), (what, t1) in itertools.pairwise(seq):
            if what.startswith("door "):
                kind = what[5:]
                key = f"door {kind}" if kind in ("J", "P", "A") else "door"
            elif what.startswith("guest "):
                kind = what[6:]
                key = "start" if kind in ("P", "J") or phase == "start" else phase
                if kind == "J":
                    phase = "load"
                elif kind in ("N", "L", "A", "D", "R"):
                    phase = "calls"
            else:
                key = what
            steps[key] = steps.get(key, 0.0) + 1000 * (t1 - t0)
    return out
