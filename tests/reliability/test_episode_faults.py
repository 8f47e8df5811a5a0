"""Episodes of up to three turns survive crashes: a whole training run (every processor and the learner its
own process, the real broker and sandbox, the tiny model) with ``RLSTREAM_EPISODES__MAX_TURNS=3`` (what
``rlstream run --max-turns 3`` sets), in which the generator and then the episode step (the processor
that emits feedback) are killed with SIGKILL while episodes are mid-way - a turn's feedback on the log
and its next turn not yet generated - and restarted by their supervisor.

Read afresh from the log afterwards: every group once; every episode's turns 0..f each generated,
executed and ended exactly once (``continue`` before f, ``final`` at f), one reward and one verdict per
episode naming f; no event id twice on any topic; the experiences carry exactly the accepted episodes,
each with all its turns; the learner trained each accepted episode exactly once. ``rlstream replay
--verify`` re-scores every final turn and derives every turn's end and feedback again with no
difference, and ``rlstream lineage`` shows an episode's every turn.
"""

from __future__ import annotations

import json
import time
import uuid
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from harness.faults import FLOW, Follower, Run, Supervised, cli, read_all, worker_env
from infra.kafka.admin import ensure_topics
from infra.kafka.config import KafkaConfig
from infra.kafka.producer import EventProducer
from learner.service import read_training_log, training_account
from producers.ingest.synthetic import feedback_tasks
from schemas.episode import TurnEnded
from schemas.topics import CATALOG, EXECUTIONS, EXPERIENCES, GENERATIONS, TASKS, TURNS

G = 2
EPOCHS = 3
MAX_TURNS = 3
#: each stage's wait, well inside the test's own timeout so that a stuck stage fails with the workers' logs
STAGE_TIMEOUT_S = 300
#: how long the generator is held for an episode to reach mid-way before it runs on for more episodes
HOLD_S = 30.0
WORKERS = ("scheduler", "generator", "sandbox", "episode", "reward", "filter", "experience", "learner")


def _mid_episode(run: Run) -> bool:
    """A turn's feedback is on the log and that episode's next turn is not (yet)."""
    generated = {(s.event.sample_id, s.event.turn) for s in run.follower.events[GENERATIONS.name]}
    return any(
        s.event.outcome == "continue" and (s.event.sample_id, s.event.turn + 1) not in generated
        for s in run.follower.events[TURNS.name]
    )


def _hold_mid_episode(run: Run, what: str) -> None:
    """Stop the generator (SIGSTOP) until an episode is mid-way, and leave it stopped.

    Unheld, an episode is mid-way only between its feedback's transaction and the generator's next one,
    often a few milliseconds: the follower, polling the log every 0.2 s on a loaded machine, can see
    both at once for a whole run and wait for ever. Held, the feedback of the episodes in flight lands
    and their next turns cannot. Should every episode in flight end at its first turn, the generator
    runs on until it has generated more and is held again."""
    deadline = time.monotonic() + STAGE_TIMEOUT_S
    while time.monotonic() < deadline:
        run.workers.pause("generator")
        until = time.monotonic() + HOLD_S
        run.wait(lambda: _mid_episode(run) or time.monotonic() > until, STAGE_TIMEOUT_S, what)  # noqa: B023
        if _mid_episode(run):
            return
        run.workers.resume("generator")
        more = run.follower.count(GENERATIONS.name) + 1
        run.wait(lambda: run.follower.count(GENERATIONS.name) >= more, STAGE_TIMEOUT_S, "more turns")  # noqa: B023
    raise AssertionError(f"no episode reached mid-way in {STAGE_TIMEOUT_S}s\n{run.workers.tails()}")


@pytest.mark.timeout(STAGE_TIMEOUT_S * 5)
def test_episodes_complete_once_with_every_turn_through_kill_9_of_generator_and_episode_step(
    kafka_catalog: str, tmp_path: Path
) -> None:
    bootstrap = kafka_catalog
    ensure_topics(bootstrap, KafkaConfig(), CATALOG)
    run_id = f"episodes-{uuid.uuid4().hex[:8]}"
    home, logs = tmp_path / "home", tmp_path / "logs"
    logs.mkdir(parents=True)
    env = worker_env(
        bootstrap,
        home,
        run_id,
        G,
        RLSTREAM_EPISODES__MAX_TURNS=str(MAX_TURNS),
        RLSTREAM_PIPELINE__SCHEDULER__EPOCHS=str(EPOCHS),
        RLSTREAM_LEARNER__TOKEN_BUDGET="512",
    )
    workers = Supervised(env, logs)
    for name in WORKERS:
        workers.start(name)
    follower = Follower(bootstrap, run_id, (*FLOW, TURNS.name))
    run = Run(bootstrap, run_id, home, G, workers, follower)
    # the family whose first answers are guesses: most episodes need their later turns
    run.tasks = [
        t.model_copy(update={"task_id": f"{run_id}/{t.task_id}", "max_turns": None}) for t in feedback_tasks()
    ]
    try:
        with EventProducer(bootstrap, source="test/episodes", run_id=run_id) as producer:
            for task in run.tasks:
                producer.publish(task, topic=TASKS.name)
        groups = len(run.tasks) * EPOCHS

        run.wait(lambda: follower.count(GENERATIONS.name) > 0, STAGE_TIMEOUT_S, "a first generation")
        _hold_mid_episode(run, "an episode mid-way")
        workers.kill9("generator")  # a stopped process dies of SIGKILL as a running one does
        before = follower.count(GENERATIONS.name)
        run.wait(lambda: follower.count(GENERATIONS.name) > before, STAGE_TIMEOUT_S, "the generator back")
        _hold_mid_episode(run, "another episode mid-way")
        workers.kill9("episode")
        workers.resume("generator")
        before = follower.count(TURNS.name)
        run.wait(lambda: follower.count(TURNS.name) > before, STAGE_TIMEOUT_S, "the episode step back")

        run.wait(
            lambda: follower.count(EXPERIENCES.name) >= groups, STAGE_TIMEOUT_S, "every group's experience"
        )
        run.wait(run.learner_covers_all, STAGE_TIMEOUT_S, "the learner to account for every experience")
        time.sleep(3)  # anything a restarted worker might still write twice would land now
    finally:
        workers.stop()
        follower.close()

    seen = {topic: read_all(bootstrap, topic, run_id) for topic in (*FLOW, TURNS.name)}
    for topic, events in seen.items():
        dupes = [i for i, c in Counter(s.event_id for s in events).items() if c > 1]
        assert not dupes, f"{topic}: event ids twice on the log: {dupes[:3]}"
    requests = Counter(s.event.group_id for s in seen["rl.rollouts.requested"])
    assert len(requests) == groups and set(requests.values()) == {1}, requests
    assert Counter(s.event.group_id for s in seen[EXPERIENCES.name]) == requests

    generated = Counter((s.event.sample_id, s.event.turn) for s in seen[GENERATIONS.name])
    assert set(generated.values()) == {1}, generated.most_common(2)
    runs = Counter((s.event.sample_id, s.event.turn) for s in seen[EXECUTIONS.name] if s.event.run_index == 0)
    assert runs == generated, "every turn executed exactly once"
    ended: dict[str, dict[int, TurnEnded]] = defaultdict(dict)
    for s in seen[TURNS.name]:
        assert s.event.turn not in ended[s.event.sample_id], (
            f"{s.event.sample_id} turn {s.event.turn} ended twice"
        )
        ended[s.event.sample_id][s.event.turn] = s.event
    episodes = {sid for sid, _ in generated}
    assert set(ended) == episodes and len(episodes) == groups * G
    finals: dict[str, int] = {}
    for sid, turns in ended.items():
        final = max(turns)
        assert sorted(turns) == list(range(final + 1)), f"{sid}: turns {sorted(turns)}"
        assert [turns[t].outcome for t in range(final + 1)] == ["continue"] * final + ["final"], sid
        assert {t for (s, t) in generated if s == sid} == set(turns), f"{sid}: a turn generated but not ended"
        finals[sid] = final
    assert max(finals.values()) == MAX_TURNS - 1, "no episode used all its turns"
    for topic in ("rl.rewards", "rl.verdicts"):
        per = Counter(s.event.sample_id for s in seen[topic])
        assert set(per) == episodes and set(per.values()) == {1}, topic
        assert {s.event.sample_id: s.event.turn for s in seen[topic]} == finals, f"{topic} names another turn"

    # trained: accepted episodes with their reward, rejected ones as failures (noise filter v2)
    accepted = {
        v.sample_id
        for s in seen["rl.verdicts"]
        if (v := s.event).verdict == "accept" or (v.verdict == "reject" and v.failure_reward is not None)
    }
    assembled = [x for s in seen[EXPERIENCES.name] for x in s.event.samples]
    assert {x.sample_id for x in assembled} == accepted and len(assembled) == len(accepted)
    for x in assembled:
        assert [t.turn for t in x.turns] == list(range(finals[x.sample_id] + 1)), x.sample_id
    trained_by_version, dropped = training_account(read_training_log(run.training_log))
    trained = [s for ids in trained_by_version.values() for s in ids]
    assert len(trained) == len(set(trained)), "an episode was trained in two published versions"
    assert set(trained) | set(dropped) == accepted
    # the audit re-scores every final turn and derives every turn's end and feedback again, byte for byte
    verified = cli(run, "replay", "--verify", "--run-id", run_id, "--json")
    report = json.loads(verified.stdout)
    assert verified.returncode == 0 and report["ok"], verified.stdout[-3000:] + verified.stderr[-3000:]
    assert report["turns"] == len(generated) and report["rewards"] == len(episodes), report
    # the lineage of an episode that used every turn shows each turn, how it ended and its feedback
    longest = next(sid for sid, f in finals.items() if f == MAX_TURNS - 1)
    shown = cli(run, "lineage", longest, "--json")
    lineage = json.loads(shown.stdout)
    assert [t["turn"] for t in lineage["turns"]] == list(range(MAX_TURNS)), lineage["turns"]
    assert (
        all(t["ended"]["feedback"] for t in lineage["turns"][:-1])
        and lineage["turns"][-1]["ended"]["outcome"] == "final"
    )
    summary = {
        "episodes": len(episodes),
        "turns": len(generated),
        "turns_per_episode": Counter(f + 1 for f in finals.values()),
        "accepted": len(accepted),
        "trained": len(trained),
        "killed": dict(workers.killed),
        "restarts": dict(workers.restarts),
    }
    print(f"\nEPISODES {json.dumps(summary, default=dict)}", flush=True)
