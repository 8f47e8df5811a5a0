"""Whether a task forbids a call to change its arguments (read from its prompt), and the probe job that
carries it: a probe run's calls are made as a caller makes them, every other job is as it was."""

from __future__ import annotations

import pytest

from schemas.task import TaskPublished, TestCase
from streams.probe.caller import keeps_arguments
from streams.sandbox.jobs import job_for, probe_job_for
from streams.sandbox.limits import Limits
from streams.sandbox.result import Job


def _task(prompt: str) -> TaskPublished:
    cases = [TestCase(input=f"([{i}, 2, {i + 3}],)", output=str(i + 3)) for i in range(4)]
    return TaskPublished(
        task_id="t",
        prompt=prompt,
        entry_point="f",
        tests=cases,
        reference="def f(xs):\n    return max(xs)\n",
    )


@pytest.mark.parametrize(
    ("prompt", "keeps"),
    [
        ("Return a sorted copy.\n    Note:\n    * don't change the given array.\n", True),
        ("Return the largest element. Do not modify the input list.", True),
        ("Sort without mutating the list passed in.", True),
        ("Must not alter the original dictionary.", True),
        ("Return the largest element of the list.", False),
        ("Sort the list in place; do not change the other list.", False),  # asks for a change
        ("Don't change the order of equal words.", False),  # an order, not an argument
        ("Return the list with its even elements doubled.", False),
    ],
)
def test_a_prompt_that_forbids_changing_an_argument(prompt: str, keeps: bool) -> None:
    assert keeps_arguments(_task(prompt)) is keeps


def test_only_a_probe_job_calls_as_a_caller() -> None:
    task = _task("Return the largest element. Do not modify the input list.")
    first, _ = job_for(task, task.reference or "", Limits())
    assert (first.caller, first.keep_args) == (False, False)
    found = probe_job_for(task, task.reference or "", Limits(), seed="0" * 32)
    assert found is not None
    probe, plan = found
    assert (probe.caller, probe.keep_args, probe.inputs) == (True, True, plan.inputs)
    other = probe_job_for(_task("Return the largest element."), "", Limits(), seed="0" * 32)
    assert other is not None and (other[0].caller, other[0].keep_args) == (True, False)


def test_a_job_that_is_no_caller_keeps_its_cache_key() -> None:
    job = Job(mode="cases", code="def f(x): return x", entry_point="f", inputs=("(1,)",))
    key = job.cache_key("wasm", "h")
    assert key == Job(mode="cases", code=job.code, entry_point="f", inputs=job.inputs).cache_key("wasm", "h")
    as_caller = Job(mode="cases", code=job.code, entry_point="f", inputs=job.inputs, caller=True)
    assert len({key, as_caller.cache_key("wasm", "h")}) == 2
    keeping = Job(mode="cases", code=job.code, entry_point="f", inputs=job.inputs, caller=True)
    keeping = Job(**{**keeping.__dict__, "keep_args": True})
    assert keeping.cache_key("wasm", "h") != as_caller.cache_key("wasm", "h")
