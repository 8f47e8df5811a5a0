"""The database side of the projections: engines, Alembic migrations, and applying a folded batch
together with its offsets in ONE transaction.

A batch either commits whole (its rows, its pass@k recomputations and the next offsets of every
partition it read) or not at all, so after any crash the stored offsets say exactly which records the
tables contain, and the projector resumes there: exactly-once by construction.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import Connection, Engine, create_engine, delete, event, inspect, select, text, tuple_
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import (
    ArgumentError,
    IntegrityError,
    NoSuchModuleError,
    OperationalError,
    ProgrammingError,
    SQLAlchemyError,
)
from sqlalchemy.orm import Session

from consumers.evaluation import SampleOutcome, TaskResult, task_result, version_result
from consumers.projections.fold import Batch, PassKey, primary_key
from consumers.projections.models import (
    PROJECTED,
    AppliedOffset,
    Base,
    PassAtK,
    Reward,
    RewardComponent,
    Sample,
    SplitPassAtK,
    SplitSummary,
    table_of,
)
from schemas.errors import DependencyError, RlstreamError, UsageError
from streams.reward.passk import pass_at_k

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite files get WAL (readers never block the projector) and a busy
    timeout, and their folder is created."""
    try:
        engine = create_engine(url, future=True, pool_pre_ping=True)
    except (ArgumentError, NoSuchModuleError) as exc:
        raise UsageError(
            f"projection database URL {url!r}: {exc}",
            hint="e.g. sqlite:////path/projections.sqlite or postgresql+psycopg://user@host:5432/db",
        ) from None
    if engine.dialect.name == "sqlite":
        database = engine.url.database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()

    elif engine.dialect.name != "postgresql":
        raise UsageError(
            f"projection database {engine.dialect.name!r} is not supported",
            hint="use SQLite (the default) or PostgreSQL (postgresql+psycopg://...)",
        )
    return engine


@contextlib.contextmanager
def open_session(url_or_engine: str | Engine) -> Iterator[Session]:
    """A read session on the projection database (the caller's queries run inside it)."""
    engine = make_engine(url_or_engine) if isinstance(url_or_engine, str) else url_or_engine
    try:
        with Session(engine) as session:
            yield session
    finally:
        if isinstance(url_or_engine, str):
            engine.dispose()


def alembic_config(connection: Connection) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    # the connection travels as an attribute, never through the ini (URLs may hold '%')
    cfg.attributes["connection"] = connection
    return cfg


#: the advisory lock key PostgreSQL serialises migrations of the projection schema with
_MIGRATION_LOCK = 0x726C7374  # "rlst"
#: the advisory lock key the pass@k refreshes of several projector instances take turns with
_PASS_AT_K_LOCK = 0x726C7370  # "rlsp"


def migrate(engine: Engine, revision: str = "head") -> str | None:
    """Upgrade the schema to ``revision`` (idempotent); returns the revision now in force."""
    try:
        for attempt in range(3):
            try:
                with engine.begin() as conn:
                    if conn.dialect.name == "postgresql":
                        # instances starting together migrate one after the other, not into each other
                        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _MIGRATION_LOCK})
                    command.upgrade(alembic_config(conn), revision)
                break
            except (IntegrityError, ProgrammingError, OperationalError):
                # SQLite has no such lock: a concurrent first migration wins, and this one, tried again,
                # finds the schema in place
                if attempt == 2 or engine.dialect.name == "postgresql":
                    raise
                time.sleep(0.5)
        with engine.connect() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    except OperationalError as exc:
        raise DependencyError(
            f"projection database {engine.url.render_as_string(hide_password=True)}: {exc.orig}",
            hint="check the database is running and the URL (setting projections.database_url)",
        ) from None


def drop_all(engine: Engine) -> None:
    """Remove every projection table and the migration marker (a rebuild into the same URL)."""
    with engine.begin() as conn:
        Base.metadata.drop_all(conn)
        conn.execute(text("DROP TABLE IF EXISTS alembic_version"))


def is_empty(engine: Engine) -> bool:
    """No projected row and no stored offset (a fresh database, migrated or not)."""
    names = set(inspect(engine).get_table_names())
    models: tuple[type[Base], ...] = (*PROJECTED, AppliedOffset)
    with engine.connect() as conn:
        for model in models:
            if model.__tablename__ in names and conn.execute(select(model).limit(1)).first() is not None:
                return False
    return True


def stored_offsets(engine: Engine, projector: str) -> dict[tuple[str, int], int]:
    """(topic, partition) -> next offset to read, as last committed with the rows."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(AppliedOffset.topic, AppliedOffset.partition, AppliedOffset.next_offset).where(
                AppliedOffset.projector == projector
            )
        )
        return {(t, p): o for t, p, o in rows}


def _insert(conn: Connection, model: type[Base]) -> Any:
    table = table_of(model)
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)


def upsert(conn: Connection, model: type[Base], rows: Sequence[dict[str, Any]]) -> None:
    """Insert ``rows``, replacing the non-key columns of rows whose key exists (one statement,
    executemany). ``rows`` must not repeat a key (a Batch keeps one row per key)."""
    if not rows:
        return
    pk = primary_key(model)
    stmt = _insert(conn, model)
    rest = [c.name for c in table_of(model).columns if c.name not in pk]
    if rest:
        stmt = stmt.on_conflict_do_update(index_elements=list(pk), set_={c: stmt.excluded[c] for c in rest})
    else:
        stmt = stmt.on_conflict_do_nothing(index_elements=list(pk))
    conn.execute(stmt, list(rows))


class StaleBatch(RlstreamError):
    """The database is already past a partition of the batch: another instance applied those records
    (the partition moved while this one held its batch). Nothing of the batch was written."""

    def __init__(self, partitions: dict[tuple[str, int], int]) -> None:
        self.partitions = partitions
        where = ", ".join(f"{t}[{p}] at {o}" for (t, p), o in sorted(partitions.items()))
        super().__init__(f"batch is behind the stored offsets of {where}")


def apply(engine: Engine, batch: Batch, *, projector: str, ks: Sequence[int]) -> None:
    """Commit ``batch``: its rows, the pass@k rows they change and the next offsets, atomically.

    Several projector instances share the partitions of one database; a partition they hand over
    between them is applied once because the batch is refused (:class:`StaleBatch`, nothing written)
    when the stored offset of any of its partitions is already past the batch's first record there.
    The offset rows are locked for the check (PostgreSQL; SQLite serialises its writers)."""
    if not batch:
        return
    with engine.begin() as conn:
        stale = _ahead_of(conn, batch, projector)
        if stale:
            raise StaleBatch(stale)
        keys = set(batch.passk_keys)
        samples = batch.rows.get(Sample)
        if samples:
            # the keys these samples have before this batch: a sample written again under another
            # policy version (a generator killed mid-group on the at-least-once runtime generates it
            # anew after loading a newer version) leaves its old key, whose pass@k must lose it
            keys |= _keys_of_samples(conn, {str(row["sample_id"]) for row in samples.values()})
        for model in PROJECTED:
            rows = batch.rows.get(model)
            if rows:
                upsert(conn, model, list(rows.values()))
        if batch.passk_samples:
            keys |= _keys_of_samples(conn, batch.passk_samples)
        if keys:
            refresh_pass_at_k(conn, keys, ks)
        upsert(
            conn,
            AppliedOffset,
            [
                {"projector": projector, "topic": t, "partition": p, "next_offset": o}
                for (t, p), o in sorted(batch.offsets.items())
            ],
        )


def _ahead_of(conn: Connection, batch: Batch, projector: str) -> dict[tuple[str, int], int]:
    """The batch's partitions whose stored next offset is past the batch's first record there."""
    query = select(AppliedOffset.topic, AppliedOffset.partition, AppliedOffset.next_offset).where(
        AppliedOffset.projector == projector,
        AppliedOffset.topic.in_(sorted({t for t, _ in batch.first})),
    )
    if conn.dialect.name == "postgresql":
        query = query.with_for_update()
    stored = {(t, p): o for t, p, o in conn.execute(query)}
    return {tp: stored[tp] for tp, first in batch.first.items() if stored.get(tp, 0) > first}


def _chunks(items: Sequence[Any], size: int = 500) -> Iterator[Sequence[Any]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _keys_of_samples(conn: Connection, sample_ids: set[str]) -> set[PassKey]:
    keys: set[PassKey] = set()
    for chunk in _chunks(sorted(sample_ids)):
        for run_id, task_id, version in conn.execute(
            select(Sample.run_id, Sample.task_id, Sample.policy_version).where(Sample.sample_id.in_(chunk))
        ):
            if run_id is not None:
                keys.add((run_id, task_id, version))
    return keys


@dataclass
class _Scored:
    split: str
    correct: bool = False
    #: the sample's newest reward: (scored_at, event_id, total)
    newest: tuple[Any, str, float] | None = None
    similarity: float | None = None


def refresh_pass_at_k(conn: Connection, keys: set[PassKey], ks: Sequence[int]) -> None:
    """Recompute the pass@k rows of ``keys`` from the samples and their rewards as they stand now:
    a sample counts once it is scored, and is correct when its (run 0) reward passed every case. The
    split tables (per task and, per run x split x version, the mean with its interval) follow."""
    if conn.dialect.name == "postgresql":
        # projector instances applying other partitions refresh the same runs' rows (a task's groups, and
        # a run's summaries, span partitions): one refresh at a time, each reading what the one before it
        # committed, or two would insert the same summary row (seen: split_summary_pkey violated)
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _PASS_AT_K_LOCK})
    outcomes: dict[PassKey, dict[str, _Scored]] = {k: {} for k in keys}
    summaries: set[tuple[str, str, int]] = set()
    ordered = sorted(keys)
    reward_of: dict[str, tuple[PassKey, str]] = {}
    for chunk in _chunks(ordered, 300):
        key_cols = tuple_(Sample.run_id, Sample.task_id, Sample.policy_version)
        q = (
            select(
                Sample.run_id,
                Sample.task_id,
                Sample.policy_version,
                Sample.sample_id,
                Sample.split,
                Reward.correct,
                Reward.scored_at,
                Reward.event_id,
                Reward.total,
            )
            .join(Reward, Reward.sample_id == Sample.sample_id)
            .where(key_cols.in_(list(chunk)))
        )
        for run_id, task_id, version, sample_id, split, correct, at, event_id, total in conn.execute(q):
            key = (str(run_id), task_id, version)
            scored = outcomes[key].setdefault(sample_id, _Scored(split))
            # several rewards of one sample (other reward versions) share its execution's outcome
            scored.correct = scored.correct or bool(correct)
            if scored.newest is None or (at, event_id) > scored.newest[:2]:
                scored.newest = (at, event_id, total)
        conn.execute(
            delete(PassAtK).where(
                tuple_(PassAtK.run_id, PassAtK.task_id, PassAtK.policy_version).in_(list(chunk))
            )
        )
        split_key = tuple_(SplitPassAtK.run_id, SplitPassAtK.task_id, SplitPassAtK.policy_version)
        # the summaries these rows fed: one whose last task leaves it (its samples moved to another
        # version) must be refreshed too, though no sample names it any more
        summaries.update(
            (str(run_id), split, version)
            for run_id, split, version in conn.execute(
                select(SplitPassAtK.run_id, SplitPassAtK.split, SplitPassAtK.policy_version)
                .where(split_key.in_(list(chunk)))
                .distinct()
            )
        )
        conn.execute(delete(SplitPassAtK).where(split_key.in_(list(chunk))))
    for key, per_sample in outcomes.items():
        for sample_id, scored in per_sample.items():
            if scored.newest is not None:
                reward_of[scored.newest[1]] = (key, sample_id)
    for chunk in _chunks(sorted(reward_of)):
        similar = select(RewardComponent.reward_event_id, RewardComponent.value).where(
            RewardComponent.name == "similarity", RewardComponent.reward_event_id.in_(chunk)
        )
        for reward_id, value in conn.execute(similar):
            key, sample_id = reward_of[reward_id]
            outcomes[key][sample_id].similarity = value
    rows: list[dict[str, object]] = []
    split_rows: list[dict[str, object]] = []
    for (run_id, task_id, version), per_sample in sorted(outcomes.items()):
        n, c = len(per_sample), sum(s.correct for s in per_sample.values())
        rows.extend(
            {
                "run_id": run_id,
                "task_id": task_id,
                "policy_version": version,
                "k": k,
                "n": n,
                "c": c,
                "value": pass_at_k(n, c, k),
            }
            for k in sorted(set(ks))
            if 1 <= k <= n
        )
        by_split: dict[str, list[SampleOutcome]] = {}
        for s in per_sample.values():
            by_split.setdefault(s.split, []).append(
                SampleOutcome(
                    s.split,
                    version,
                    task_id,
                    s.correct,
                    s.newest[2] if s.newest is not None else None,
                    s.similarity,
                )
            )
        for split, samples in sorted(by_split.items()):
            result = task_result(split, version, task_id, samples, ks)
            summaries.add((run_id, split, version))
            split_rows.extend(
                {
                    "run_id": run_id,
                    "split": split,
                    "policy_version": version,
                    "task_id": task_id,
                    "k": k,
                    "n": result.n,
                    "c": result.c,
                    "value": value,
                    "reward_mean": result.reward_mean,
                    "similarity_mean": result.similarity_mean,
                }
                for k, value in sorted(result.pass_at.items())
            )
    if rows:
        conn.execute(table_of(PassAtK).insert(), rows)
    if split_rows:
        conn.execute(table_of(SplitPassAtK).insert(), split_rows)
    _refresh_summaries(conn, summaries)


def _refresh_summaries(conn: Connection, keys: set[tuple[str, str, int]]) -> None:
    """The per run x split x version means (with their bootstrap intervals) of ``keys``, from the
    per-task rows as they stand now."""
    for run_id, split, version in sorted(keys):
        where = (
            SplitPassAtK.run_id == run_id,
            SplitPassAtK.split == split,
            SplitPassAtK.policy_version == version,
        )
        per_task: dict[str, dict[str, Any]] = {}
        for task_id, k, n, c, value, reward, similarity in conn.execute(
            select(
                SplitPassAtK.task_id,
                SplitPassAtK.k,
                SplitPassAtK.n,
                SplitPassAtK.c,
                SplitPassAtK.value,
                SplitPassAtK.reward_mean,
                SplitPassAtK.similarity_mean,
            ).where(*where)
        ):
            row = per_task.setdefault(task_id, {"n": n, "c": c, "r": reward, "s": similarity, "at": {}})
            row["at"][k] = value
        conn.execute(
            delete(SplitSummary).where(
                SplitSummary.run_id == run_id,
                SplitSummary.split == split,
                SplitSummary.policy_version == version,
            )
        )
        if not per_task:
            continue
        summary = version_result(
            [
                TaskResult(split, version, task_id, r["n"], r["c"], r["at"], r["r"], r["s"])
                for task_id, r in sorted(per_task.items())
            ]
        )
        conn.execute(
            table_of(SplitSummary).insert(),
            [
                {
                    "run_id": run_id,
                    "split": split,
                    "policy_version": version,
                    "k": k,
                    "tasks": summary.tasks_at[k],
                    "samples": summary.samples,
                    "value": value,
                    "ci_low": summary.ci[k][0],
                    "ci_high": summary.ci[k][1],
                    "reward_mean": summary.reward_mean,
                    "similarity_mean": summary.similarity_mean,
                }
                for k, value in sorted(summary.pass_at.items())
            ],
        )


def describe(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=True)


def check_reachable(engine: Engine) -> None:
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        raise DependencyError(
            f"projection database {describe(engine)} is not reachable: {exc}",
            hint="check the URL (setting projections.database_url) and that the server runs",
        ) from None
