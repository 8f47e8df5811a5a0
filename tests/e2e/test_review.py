"""Human validation end to end, on the real broker with every processor its own process: the review
queue shows flagged and drawn samples with their lineage, a review is published on rl.reviews (once,
however often the command is retried), overrides recorded before training change what the learner
trains, a review after training is kept and shown as too late, and lineage and replay show who
changed what, when."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from consumers.review import is_flagged
from infra.kafka.producer import EventProducer
from learner.service import read_training_log
from producers.ingest.synthetic import SAMPLING, synthetic_tasks
from schemas.rollout import ExperienceReady, NoiseVerdict
from tests.cli_support import run_cli
from tests.e2e.conftest import Workers, read_topic

UPSTREAM = ("scheduler", "generator", "sandbox", "reward", "filter")
TASKS, GROUP = 3, 8


def cli(w: Workers, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=w.env)


def ok_json(w: Workers, *args: str) -> Any:
    done = cli(w, *args)
    assert done.returncode == 0, f"rlstream {' '.join(args)}: {done.returncode}\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


def wait(cond: Callable[[], bool], timeout_s: float, what: str, w: Workers) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(2)
    tails = "\n".join(f"--- {n}\n{w.log_tail(n)}" for n in w.procs)
    raise AssertionError(f"timed out waiting for {what}\n{tails}")


def of_run(bootstrap: str, topic: str, run_id: str) -> list[Any]:
    return [
        e for _, e in read_topic(bootstrap, topic) if str(getattr(e, "group_id", "")).startswith(run_id + "/")
    ]


@pytest.mark.timeout(2400)  # a dozen CLI runs and a learner on shared CPUs
def test_reviews_override_the_filter_before_training_and_are_audited(
    kafka_catalog: str, workers: Callable[..., Workers], tmp_path: Path
):
    run_id = f"review-{uuid.uuid4().hex[:8]}"
    w = workers(
        run_id,
        RLSTREAM_PIPELINE__SCHEDULER__GROUP_SIZE=str(GROUP),
        RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__MAX_TOKENS=str(SAMPLING.max_tokens),
        RLSTREAM_PIPELINE__SCHEDULER__SAMPLING__TEMPERATURE=str(SAMPLING.temperature),
        RLSTREAM_LEARNER__BACKEND="torch",
        RLSTREAM_LEARNER__ACCELERATOR="cpu",
        RLSTREAM_LEARNER__TOKEN_BUDGET="4096",
        RLSTREAM_REVIEW__REVIEWER="alice",
        # the tiny model's unparsable output is masked here (by default it is trained as a failure), so
        # the run has masked samples to review
        RLSTREAM_NOISE__DEGENERATE_VERDICT="mask",
    )
    for name in UPSTREAM:
        w.start(name)
    with EventProducer(kafka_catalog, source="e2e", run_id=run_id) as producer:
        for task in synthetic_tasks(TASKS):
            producer.publish(task)
    n = TASKS * GROUP
    wait(lambda: len(of_run(kafka_catalog, "rl.verdicts", run_id)) >= n, 600, f"{n} verdicts", w)

    # -- the queue: every flagged sample, a seeded draw of accepted ones, each with its lineage
    queue = ok_json(w, "review", "next", "--run", run_id, "--accepted-sample", "3", "--seed", "1", "--json")
    verdicts = {
        v.sample_id: v for v in of_run(kafka_catalog, "rl.verdicts", run_id) if isinstance(v, NoiseVerdict)
    }
    flagged = {s for s, v in verdicts.items() if is_flagged(v)}
    items = {i["sample_id"]: i for i in queue["items"]}
    assert {s for s, i in items.items() if i["why"] == "flagged"} == flagged
    drawn = [s for s, i in items.items() if i["why"] == "accepted sample"]
    assert len(drawn) == 3 and all(verdicts[s].verdict == "accept" for s in drawn)
    for sid, item in items.items():
        assert item["lineage"]["generation"]["code"], sid
        assert item["lineage"]["verdict"]["verdict"] == verdicts[sid].verdict
    masked = sorted(s for s in flagged if verdicts[s].verdict == "mask")
    assert masked, f"no masked sample among {n}: {[v.verdict for v in verdicts.values()]}"

    # -- reviews before the group is assembled: reject an accepted sample, accept a masked one
    x1, m = drawn[0], masked[0]
    first = ok_json(w, "review", "record", x1, "--verdict", "reject", "--note", "answers by luck", "--json")
    assert first["event"]["reviewer"] == "alice" and first["event"]["automated_verdict"] == "accept"
    assert first["already_recorded"] is False
    retried = ok_json(w, "review", "record", x1, "--verdict", "reject", "--note", "answers by luck", "--json")
    assert retried["already_recorded"] is True and retried["event_id"] == first["event_id"]
    ok_json(
        w,
        "review",
        "record",
        m,
        "--verdict",
        "accept",
        "--note",
        "a fair failure",
        "--reviewer",
        "bob",
        "--json",
    )
    unknown = cli(w, "review", "record", f"{run_id}/nope/0/7", "--verdict", "accept", "--note", "x")
    assert unknown.returncode == 2 and "no sample" in unknown.stderr

    # -- the groups are assembled with the overrides in force
    w.start("experience")
    wait(lambda: len(of_run(kafka_catalog, "rl.experiences", run_id)) >= TASKS, 300, "experiences", w)
    experiences = [
        e for e in of_run(kafka_catalog, "rl.experiences", run_id) if isinstance(e, ExperienceReady)
    ]
    in_gradient = {s.sample_id for e in experiences for s in e.samples}
    assert x1 not in in_gradient and m in in_gradient

    # -- a review after assembly, before training: the learner keeps the sample out
    # an accepted sample (a rejected one is in the gradient too, trained as a failure)
    x2 = sorted(s for s in in_gradient - {m} if verdicts[s].verdict == "accept")[0]
    ok_json(
        w,
        "review",
        "record",
        x2,
        "--verdict",
        "mask",
        "--note",
        "prints noise",
        "--reviewer",
        "carol",
        "--json",
    )
    w.start("learner")
    train_log = Path(w.env["RLSTREAM_HOME"]) / "runs" / run_id / "learner" / "training.jsonl"
    expected = in_gradient - {x2}

    def trained() -> set[str]:
        if not train_log.exists():
            return set()
        return {s for e in read_training_log(train_log) if e["kind"] == "publish" for s in e["sample_ids"]}

    wait(lambda: expected <= trained(), 900, "the learner to train the run", w)
    entries = read_training_log(train_log)
    dropped = {s for e in entries if e["kind"] == "drop" for s in e["sample_ids"]}
    assert x2 in dropped and x2 not in trained() and x1 not in trained() and m in trained()

    # -- lineage: who changed what, when, and what it did
    lin_x2 = ok_json(w, "lineage", x2, "--json")
    assert lin_x2["trained_into"] == []
    assert [(r["reviewer"], r["verdict"], r["outcome"]) for r in lin_x2["reviews"]] == [
        ("carol", "mask", "in force: not trained on")
    ]
    lin_m = ok_json(w, "lineage", m, "--json")
    assert lin_m["experience"]["in_gradient"] is True and lin_m["trained_into"]
    assert lin_m["reviews"][0]["outcome"].startswith("in force: trained into v")

    # -- a review after training is recorded, and says it came too late
    late_sample = sorted(s for s in expected - {m} if verdicts[s].verdict == "accept")[0]
    late = ok_json(w, "review", "record", late_sample, "--verdict", "reject", "--note", "too late", "--json")
    assert late["outcome"].startswith("too late: trained into v"), late

    # -- the audit: replay of rl.reviews shows every review of the run once, with who and what
    done = cli(w, "replay", "--topic", "rl.reviews")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    mine = [r["event"] for r in lines if r["event"]["group_id"].startswith(run_id + "/")]
    assert sorted(
        (r["sample_id"], r["reviewer"], r["automated_verdict"], r["verdict"]) for r in mine
    ) == sorted(
        [
            (x1, "alice", "accept", "reject"),
            (m, "bob", "mask", "accept"),
            (x2, "carol", "accept", "mask"),
            (late_sample, "alice", "accept", "reject"),
        ]
    )

    # -- reviewed samples leave the queue; agreement counts them
    after = ok_json(w, "review", "next", "--run", run_id, "--accepted-sample", "0", "--json")
    assert not {x1, m, x2, late_sample} & {i["sample_id"] for i in after["items"]}
    assert after["agreement"]["reviewed"] == 4 and after["agreement"]["agreed"] == 0
