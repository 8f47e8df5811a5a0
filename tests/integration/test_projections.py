"""SQL projections against a real broker and real databases (SQLite file and PostgreSQL): a run's events
land in every table, re-delivery changes nothing, and a projector killed with SIGKILL in the middle of
a backlog, once restarted, holds exactly the tables a rebuild from offset 0 builds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from sqlalchemy import Engine, delete, func, select, update

from consumers.projections import queries as q
from consumers.projections.config import ProjectionConfig
from consumers.projections.diff import compare
from consumers.projections.models import AppliedOffset, Reward, Sample, SkippedRecord
from consumers.projections.projector import Projector
from consumers.projections.store import make_engine, open_session, stored_offsets
from harness.postgres import PostgresCluster
from harness.projections import Planned, run_stream
from infra.kafka.producer import EventProducer
from schemas.topics import EVENT_TOPICS, topic_for
from streams.reward.passk import pass_at_k
from tests.integration.postgres import postgres_cluster  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", "postgresql"])
def new_db(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], str]:
    """Make fresh, empty projection databases of the parametrised backend."""
    engines: list[str] = []

    def make() -> str:
        if request.param == "sqlite":
            url = f"sqlite:///{tmp_path / f'proj-{len(engines)}.sqlite'}"
        else:
            cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
            url = cluster.new_database()
        engines.append(url)
        return url

    return make


@dataclass
class Topics:
    """Event topics of this test only (so nothing else on the session broker is projected)."""

    by_default: dict[str, str]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.by_default.values())

    def of(self, planned: Planned) -> str:
        return self.by_default[topic_for(type(planned.event).__name__).name]


@pytest.fixture
def topics(new_topic: Callable[..., str]) -> Topics:
    return Topics({t.name: new_topic(partitions=t.partitions or 3, prefix="proj") for t in EVENT_TOPICS})


def publish(bootstrap: str, topics: Topics, run_id: str, events: list[Planned]) -> None:
    with EventProducer(bootstrap, source="test", run_id=run_id) as producer:
        for p in events:
            producer.publish(p.event, topic=topics.of(p), causation_id=p.causation_id)
        producer.flush()


def end_offsets(bootstrap: str, topics: Topics) -> dict[tuple[str, int], int]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"ends.{uuid.uuid4().hex}"})
    try:
        out = {}
        for name in topics.names:
            for p in consumer.list_topics(name, 30).topics[name].partitions:
                out[(name, p)] = consumer.get_watermark_offsets(TopicPartition(name, p), 30)[1]
        return out
    finally:
        consumer.close()


def project(bootstrap: str, url: str, topics: Topics, batch_size: int = 2000) -> tuple[int, float]:
    engine = make_engine(url)
    try:
        config = ProjectionConfig(topics=topics.names, batch_size=batch_size)
        t0 = time.monotonic()
        stats = Projector(bootstrap, engine, config).catch_up()
        return stats.consumed, time.monotonic() - t0
    finally:
        engine.dispose()


def differences(url_a: str, url_b: str) -> list[str]:
    a, b = make_engine(url_a), make_engine(url_b)
    try:
        return [str(d) for _, diffs in compare(a, b) for d in diffs]
    finally:
        a.dispose()
        b.dispose()


def test_the_migrations_create_exactly_the_tables_of_the_models(new_db: Callable[[], str]) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.migration import MigrationContext

    from consumers.projections.models import Base
    from consumers.projections.store import migrate

    engine = make_engine(new_db())
    try:
        assert migrate(engine) == migrate(engine)  # idempotent
        with engine.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    finally:
        engine.dispose()


def test_a_run_lands_in_every_table_and_the_queries_answer_from_it(
    kafka_catalog: str, topics: Topics, new_db: Callable[[], str]
) -> None:
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    events, expected = run_stream(run_id, tasks=3, epochs=4, group_size=4)
    publish(kafka_catalog, topics, run_id, events)
    # one record nobody can decode: skipped and counted, its offset still moves on
    raw = Producer({"bootstrap.servers": kafka_catalog})
    raw.produce(topics.by_default["rl.generations"], key=b"x", value=b"not json", partition=0)
    assert raw.flush(30) == 0
    del raw
    url = new_db()
    consumed, took = project(kafka_catalog, url, topics)
    assert consumed == len(events) + 1
    print(
        f"\nprojected {consumed} events in {took:.2f}s: {consumed / took:.0f} events/s ({url.split(':')[0]})"
    )

    with open_session(url) as s:
        summary = q.run_summary(s, run_id)
        assert (summary.tasks, summary.groups, summary.samples) == (
            expected.tasks,
            expected.groups,
            expected.samples,
        )
        assert (summary.executions, summary.rewards) == (expected.executions, expected.rewards)
        assert summary.verdicts == expected.verdicts
        assert summary.experiences == expected.experiences
        assert summary.policy_versions == expected.policy_versions
        assert summary.trained_samples == len(expected.trained)
        assert summary.reviews == 2
        assert [r.run_id for r in q.runs(s)] == [run_id]

        # the checkpoints a sample was trained into
        sid, versions = next(iter(expected.trained.items()))
        assert [v for _, v, _ in q.checkpoints_of(s, sid)] == versions
        lineage = q.sample_lineage(s, sid)
        assert lineage is not None
        assert lineage.task is not None and lineage.group is not None
        assert lineage.executions and lineage.executions[0]["cases"][0]["index"] == 0
        assert set(lineage.rewards[0]["components"]) == {"correctness", "quality"}
        assert lineage.verdicts[0]["verdict"] == "accept"
        assert lineage.experience is not None and lineage.experience["in_gradient"]
        assert [p["policy_version"] for p in lineage.trained_into] == versions

        # pass@k per task x policy version from the group's correctness results
        rows = {(r.task_id, r.policy_version, r.k): r for r in q.pass_at_k_by_task(s, run_id)}
        for (task_id, version), (n, c) in expected.passk.items():
            assert rows[(task_id, version, 1)].value == pytest.approx(c / n)
            assert rows[(task_id, version, 4)].value == pytest.approx(pass_at_k(n, c, 4))
            assert (rows[(task_id, version, 1)].n, rows[(task_id, version, 1)].c) == (n, c)
        means = q.pass_at_k(s, run_id)
        assert {m.k for m in means} >= {1, 2, 4}

        by_version = q.reward_by_policy_version(s, run_id)
        assert sum(d.n for d in by_version) == expected.rewards
        assert sum(d.n for d in q.reward_by_step(s, run_id)) == len(expected.trained)
        reasons = {(r.verdict, r.code): r.samples for r in q.verdict_reasons(s, run_id)}
        assert reasons[("reject", "hack.forced_exit")] == expected.verdicts["reject"]
        assert reasons[("mask", "flaky.disagree")] == expected.verdicts["mask"]
        lags = q.staleness_histogram(q.staleness(s, run_id))
        assert sum(lags.values()) == sum(len(v) for v in expected.trained.values())
        assert min(lags) >= 0
        backends = q.backend_mix(s, run_id)
        assert sum(b.executions for b in backends) == expected.executions
        assert {b.backend for b in backends} <= {"wasm", "container"}
        (pair,) = q.review_agreement(s, run_id)
        assert (pair.reviewed, pair.reviewer, pair.reviews) == ("reject", "bob", 2)
        skipped = s.scalars(select(SkippedRecord)).all()
        assert [(r.topic, r.partition) for r in skipped] == [(topics.by_default["rl.generations"], 0)]


def test_redelivered_and_reapplied_events_change_nothing(
    kafka_catalog: str, topics: Topics, new_db: Callable[[], str]
) -> None:
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    events, expected = run_stream(run_id, tasks=2, epochs=3)
    # every event twice on the log (a producer retried after a lost acknowledgement)
    publish(kafka_catalog, topics, run_id, events)
    publish(kafka_catalog, topics, run_id, events)
    url = new_db()
    consumed, _ = project(kafka_catalog, url, topics, batch_size=37)
    assert consumed == 2 * len(events)
    # a second catch-up starts where the database says: nothing left to apply
    assert project(kafka_catalog, url, topics)[0] == 0
    engine = make_engine(url)
    try:
        with open_session(engine) as s:
            assert s.scalar(select(func.count()).select_from(Sample)) == expected.samples
            assert q.run_summary(s, run_id).rewards == expected.rewards
        # forget the offsets: every event is applied a second time on top of the rows
        with engine.begin() as conn:
            conn.execute(delete(AppliedOffset))
    finally:
        engine.dispose()
    assert project(kafka_catalog, url, topics, batch_size=501)[0] == 2 * len(events)
    fresh = new_db()
    project(kafka_catalog, fresh, topics)
    assert differences(url, fresh) == []


def _worker_env(bootstrap: str, url: str, topics: Topics, home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "RLSTREAM_KAFKA__BOOTSTRAP_SERVERS": bootstrap,
        "RLSTREAM_HOME": str(home),
        "RLSTREAM_PROJECTIONS__DATABASE_URL": url,
        "RLSTREAM_PROJECTIONS__TOPICS": json.dumps(list(topics.names)),
        "RLSTREAM_PROJECTIONS__BATCH_SIZE": "25",
        "OMP_NUM_THREADS": "1",
    }


def _applied(engine: Engine) -> int:
    return sum(stored_offsets(engine, "projector").values())


def test_projectors_sharing_a_backlog_one_killed_resume_to_the_tables_of_a_rebuild(
    kafka_catalog: str, topics: Topics, new_db: Callable[[], str], tmp_path: Path
) -> None:
    """Two instances of the projection share the partitions (one consumer group per database); one is
    killed mid-backlog, the other takes its partitions over at the stored offsets, the killed one comes
    back and gets some again: every record is applied once, as a rebuild from offset 0 shows."""
    run_id = f"run-{uuid.uuid4().hex[:8]}"
    events, expected = run_stream(run_id, tasks=12, epochs=8, group_size=4, groups_per_version=3)
    publish(kafka_catalog, topics, run_id, events)
    ends = end_offsets(kafka_catalog, topics)
    total = sum(ends.values())
    live = new_db()
    env = _worker_env(kafka_catalog, live, topics, tmp_path / "home")
    logs = {name: tmp_path / f"projector-{name}.log" for name in ("a", "b")}

    def start(name: str) -> subprocess.Popen[bytes]:
        with logs[name].open("ab") as log:
            return subprocess.Popen(
                [sys.executable, "-m", "rlstream.cli", "worker", "projector", "--instance", name],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def tail(name: str) -> str:
        return logs[name].read_text()[-3000:]

    engine = make_engine(live)
    procs = {"a": start("a"), "b": start("b")}
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and procs["a"].poll() is None:
            try:
                if _applied(engine) > total // 4:
                    break
            except Exception:  # tables not migrated yet
                pass
            time.sleep(0.05)
        assert procs["a"].poll() is None, tail("a")
        procs["a"].send_signal(signal.SIGKILL)
        procs["a"].wait(30)
        at_kill = _applied(engine)
        assert 0 < at_kill < total, f"the kill came too late to test anything: {at_kill}/{total} applied"

        took_before = logs["a"].read_text().count("took")
        procs["a"] = start("a")
        deadline = time.monotonic() + 300
        # until the backlog is applied and the instance that came back holds partitions again (the other
        # may finish the backlog before it has even started)
        while time.monotonic() < deadline and (
            _applied(engine) < total or logs["a"].read_text().count("took") == took_before
        ):
            for name, proc in procs.items():
                assert proc.poll() is None, tail(name)
            time.sleep(0.2)
        assert _applied(engine) == total
        for proc in procs.values():
            proc.send_signal(signal.SIGTERM)
        assert [proc.wait(60) for proc in procs.values()] == [0, 0]
        # both instances held partitions: the backlog was shared, not served by one of them
        assert all("took" in logs[name].read_text() for name in logs), tail("a") + tail("b")
        with open_session(engine) as s:
            assert q.run_summary(s, run_id).samples == expected.samples
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
        engine.dispose()

    rebuilt = new_db()
    cli = [sys.executable, "-m", "rlstream.cli", "project"]
    done = subprocess.run(
        [*cli, "rebuild", "--url", rebuilt], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "caught up" in done.stderr
    same = subprocess.run([*cli, "diff", live, rebuilt], cwd=ROOT, env=env, capture_output=True, text=True)
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.strip().endswith("identical")

    # a changed row is named by table and key, exit 1
    engine = make_engine(rebuilt)
    try:
        with engine.begin() as conn:
            event_id = conn.execute(select(Reward.event_id).limit(1)).scalar_one()
            conn.execute(update(Reward).where(Reward.event_id == event_id).values(total=42.0))
    finally:
        engine.dispose()
    changed = subprocess.run([*cli, "diff", live, rebuilt], cwd=ROOT, env=env, capture_output=True, text=True)
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert f"rewards [{event_id}]: column total: " in changed.stdout
    assert "B=42.0" in changed.stdout
