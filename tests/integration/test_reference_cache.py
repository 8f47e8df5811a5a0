"""A reward or filter worker's reference runs stay bounded on a long backlog: the evaluator keeps the
most recently used ones (per task and backend, and per probe seed, which is one per group), and runs an
evicted one again when it is needed."""

from __future__ import annotations

from producers.ingest.synthetic import synthetic_tasks
from streams.noise.config import NoiseConfig
from streams.reward.evaluate import Evaluator
from streams.reward.function import get_reward_function
from streams.sandbox.config import SandboxConfig
from streams.sandbox.service import Sandbox


def test_reference_runs_are_kept_for_the_most_recent_tasks_and_seeds_only() -> None:
    tasks = synthetic_tasks(5)
    sandbox = Sandbox(SandboxConfig(backend="wasm"))
    evaluator = Evaluator(sandbox, get_reward_function("code-v3"), NoiseConfig(), cache_entries=2)
    first = evaluator.reference(tasks[0], "wasm")
    assert first is not None and evaluator.reference(tasks[0], "wasm") is first  # cached
    for task in tasks[1:]:
        assert evaluator.reference(task, "wasm") is not None
    assert len(evaluator._references) == 2
    again = evaluator.reference(tasks[0], "wasm")  # evicted: run again, same answers
    assert again is not None and again is not first
    assert [c.result_repr for c in again.cases] == [c.result_repr for c in first.cases]
    for seed in ("a" * 32, "b" * 32, "c" * 32):  # one probe plan per group's seed
        evaluator.reference_probe(tasks[1], "wasm", seed)
    assert len(evaluator._probe_references) == 2
