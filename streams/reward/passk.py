"""pass@k with the unbiased estimator of Chen et al. (2021), per task and per policy version.

pass@k = 1 - C(n-c, k) / C(n, k), computed in the numerically stable product form
1 - prod_{i=n-c+1}^{n} (1 - k/i), and exactly 1 when n - c < k.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from schemas.errors import InputError


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k samples drawn without replacement from n (c correct) passes."""
    if n < 1 or not 0 <= c <= n or k < 1:
        raise InputError(f"pass@k needs n >= 1, 0 <= c <= n and k >= 1 (got n={n}, c={c}, k={k})")
    if k > n:
        raise InputError(f"pass@{k} needs at least {k} samples per task, got n={n}")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


@dataclass(frozen=True)
class PassAtK:
    task_id: str
    policy_version: int
    n: int
    c: int
    values: dict[int, float]


def pass_at_k_table(
    outcomes: Iterable[tuple[str, int, bool]], ks: Sequence[int] = (1, 5, 10)
) -> list[PassAtK]:
    """pass@k per (task, policy version) from ``(task_id, policy_version, passed)`` outcomes. A k
    larger than the samples a task has is left out for that task rather than guessed."""
    counts: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for task_id, version, passed in outcomes:
        nc = counts[(task_id, version)]
        nc[0] += 1
        nc[1] += int(bool(passed))
    out = []
    for (task_id, version), (n, c) in sorted(counts.items()):
        out.append(PassAtK(task_id, version, n, c, {k: pass_at_k(n, c, k) for k in ks if k <= n}))
    return out


def mean_pass_at_k(rows: Iterable[PassAtK]) -> dict[int, dict[int, float]]:
    """policy_version -> k -> mean pass@k over the tasks that have at least k samples."""
    acc: dict[int, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        for k, v in r.values.items():
            acc[r.policy_version][k].append(v)
    return {
        ver: {k: sum(vs) / len(vs) for k, vs in sorted(by_k.items())} for ver, by_k in sorted(acc.items())
    }
