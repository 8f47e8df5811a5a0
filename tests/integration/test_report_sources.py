"""The report reads the same run the same way from either source: the SQL projections (a real SQLite
file or PostgreSQL database, migrated and filled by the projector's own fold and store) and the log
folded on the spot."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from consumers.projections.fold import Batch, Position, fold
from consumers.projections.store import apply as apply_batch
from consumers.projections.store import make_engine, migrate
from consumers.report.data import RunReportData
from consumers.report.fold import ReportFold
from consumers.report.load import load_from_db
from consumers.report.write import write_report
from harness.postgres import PostgresCluster
from harness.projections import run_stream
from schemas.envelope import Envelope
from schemas.errors import DependencyError, InputError
from tests.integration.postgres import postgres_cluster  # noqa: F401

KS = (1, 2, 4, 8, 16)


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'projections.sqlite'}"
    cluster: PostgresCluster = request.getfixturevalue("postgres_cluster")
    return cluster.new_database()


def _both(url: str, run_id: str) -> tuple[str, ReportFold]:
    events, _ = run_stream(run_id, tasks=3, epochs=3, group_size=4)
    other, _ = run_stream("another-run", tasks=1, epochs=1, group_size=2)
    batch, log = Batch(), ReportFold(run_id)
    for i, (rid, planned) in enumerate([(run_id, p) for p in events] + [("another-run", p) for p in other]):
        env = Envelope.for_event(planned.event, source="test", run_id=rid, causation_id=planned.causation_id)
        fold(batch, env, planned.event, Position("t", 0, i))  # one partition: one log order
        log.fold(env, planned.event)
    engine = make_engine(url)
    try:
        migrate(engine)
        apply_batch(engine, batch, projector="test", ks=KS)
    finally:
        engine.dispose()
    return url, log


def _comparable(data: RunReportData) -> dict[str, object]:
    out: dict[str, object] = {}
    for f in fields(data):
        if f.name in ("source", "generated_at"):
            continue
        value = getattr(data, f.name)
        if isinstance(value, dict) and value and isinstance(next(iter(value.values())), tuple):
            value = {k: sorted(v) for k, v in value.items()}  # row order is not part of the data
        out[f.name] = value
    return out


def test_projections_and_the_log_give_the_same_report(db_url: str, tmp_path: Path):
    url, log = _both(db_url, "rep-run")
    from_db = load_from_db(url, "rep-run")
    from_log = log.result(ks=KS)
    assert _comparable(from_db) == _comparable(from_log)
    # the stream has every kind of fact but held-out tasks and episodes of several turns (their charts:
    # tests/unit/test_report.py, the e2e learning run, the episode fault test): no other chart is empty
    written = write_report(from_db, tmp_path / "out")
    assert written.no_data == ("held_out", "success_by_turn")
    assert from_db.summary.samples == 36 and from_db.agreement.reviewed > 0


def test_unknown_run_names_the_known_ones_and_a_missing_database_is_not_created(db_url: str, tmp_path: Path):
    url, _ = _both(db_url, "rep-run")
    with pytest.raises(InputError, match=r"RUN_ID: no run 'nope'.*known run ids: .*rep-run") as exc:
        load_from_db(url, "nope")
    assert exc.value.exit_code == 2
    missing = tmp_path / "nowhere" / "p.sqlite"
    with pytest.raises(DependencyError, match="holds no projections"):
        load_from_db(f"sqlite:///{missing}", "rep-run")
    assert not missing.parent.exists()
