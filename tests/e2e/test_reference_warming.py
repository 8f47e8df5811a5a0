"""On the real broker: a run whose filter warms the reference's runs of each group's probe plan when the
group's first probe run arrives gives the verdicts of a run whose filter runs them when the first verdict
needs them (the setting off), and ``rlstream replay --verify`` re-judges both from the log alone to the
same verdicts."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

from consumers.audit import Audit, Resolver
from consumers.verify import verify_log
from infra.kafka.producer import EventProducer
from rlstream.settings import get_settings
from schemas.reference import ReferenceExecuted
from schemas.rollout import NoiseVerdict
from tests.e2e.conftest import Workers, add_task, hand_written, read_topic

PROGRAMS = (
    "def {f}(x):\n    return x + {i}\n",
    "def {f}(x):\n    return x\n",
    # answers served in the order the cases are asked: passes its run, not the probe's other order
    "_N = [0]\n\ndef {f}(x):\n    _N[0] += 1\n    return [1 + {i}, 10 + {i}, {i} - 3][(_N[0] - 1) % 3]\n",
    "def {f}(x):\n    t = 0\n    for k in range(20000):\n        t += k % 2\n    return x + {i} + t * 0\n",
)


def _run(bootstrap: str, workers: Callable[..., Workers], warm: bool) -> dict[str, tuple[str, list[str]]]:
    """One run of the sandbox, reward and filter (one process) over two groups; its verdicts by
    ``<task>/<sample index>``, once replay re-judged every one of them the same."""
    run_id = f"warm-{warm}-{uuid.uuid4().hex[:8]}"
    w = workers(run_id, RLSTREAM_PIPELINE__WARM_PROBE_REFERENCES=str(warm).lower())
    tasks = [add_task("warm", i) for i in (1, 2)]
    w.start("sandbox,reward,filter")
    with EventProducer(bootstrap, source="test/warm", run_id=run_id) as producer:
        for t in tasks:
            producer.publish(t)
        for t in tasks:
            for g in hand_written(run_id, t, PROGRAMS):
                producer.publish(g)
    want = len(tasks) * len(PROGRAMS)
    deadline = time.monotonic() + 600
    verdicts: list[NoiseVerdict] = []
    while len(verdicts) < want:
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(verdicts)}/{want} verdicts\n{w.log_tail('sandbox,reward,filter')}")
        time.sleep(2)
        verdicts = [
            e
            for _, e in read_topic(bootstrap, "rl.verdicts")
            if isinstance(e, NoiseVerdict) and e.group_id.startswith(run_id)
        ]
    w.stop_all()
    assert len({v.sample_id for v in verdicts}) == want  # each sample judged once
    # each group's plan: its reference runs published once, and named by its probed samples' verdicts
    refs = {
        e.event_id() for _, e in read_topic(bootstrap, "rl.references") if isinstance(e, ReferenceExecuted)
    }
    named = {v.probe_reference_event_id for v in verdicts} - {None}
    assert len(named) == len(tasks) and named <= refs
    # replay re-judges every verdict of the run from the log alone: the same
    settings = get_settings()
    report = verify_log(
        bootstrap, Audit(Resolver(settings.reward), noise=settings.noise), run_id=run_id
    ).report
    assert report.ok and report.differences == [] and report.unverifiable == [], report
    assert report.verdicts == want
    return {
        v.sample_id.removeprefix(run_id + "/"): (v.verdict, sorted(r.code for r in v.reasons))
        for v in verdicts
    }


def test_warmed_reference_runs_give_the_same_verdicts_and_replay_to_them(
    kafka_catalog: str, workers: Callable[..., Workers]
) -> None:
    cold = _run(kafka_catalog, workers, warm=False)
    warm = _run(kafka_catalog, workers, warm=True)
    assert warm == cold
    assert {k: v for k, (v, _) in warm.items()} == {
        f"warm/add{i}/0/{n}": verdict
        for i in (1, 2)
        for n, verdict in enumerate(("accept", "accept", "reject", "accept"))
    }
