"""Where a report's data comes from: the projection database (the default; its read API in
:mod:`consumers.projections.queries`), or the log itself folded on the spot (``--from-log``, for a
machine where no projector has run). Either way an unknown run id is a usage error that names the
runs there are.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Engine, create_engine, inspect, make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, SQLAlchemyError
from sqlalchemy.orm import Session

from consumers.evaluation import by_level
from consumers.projections import queries as q
from consumers.report.data import RunReportData, Summary
from consumers.report.facts import DEFAULT_KS, PolicyFacts, training_by_version
from consumers.report.fold import ReportFold
from consumers.review import agreement
from infra.kafka.replay import replay
from schemas.errors import DependencyError, InputError, UsageError
from schemas.topics import CURRICULUM, EXECUTIONS, GENERATIONS, POLICY, REVIEWS, REWARDS, TASKS, VERDICTS

Progress = Callable[[str], None]


def _unknown(run_id: str, known: list[str], where: str) -> InputError:
    listed = ", ".join(known[-20:]) if known else "none"
    if len(known) > 20:
        listed += f" (the newest 20 of {len(known)})"
    return InputError(f"no run {run_id!r} in {where}; known run ids: {listed}", location="RUN_ID")


def data_from_session(session: Session, run_id: str, *, source: str = "") -> RunReportData:
    """Every series of the report from the projected tables of one run."""
    s = q.run_summary(session, run_id)
    by_version = {r.policy_version: r.values for r in q.reward_by_policy_version(session, run_id)}
    by_step = {
        (r.step if r.step is not None else r.policy_version): r.values
        for r in q.reward_by_step(session, run_id)
    }
    pass_k: dict[int, dict[int, float]] = {}
    pass_tasks: dict[int, dict[int, int]] = {}
    for m in q.pass_at_k(session, run_id):
        pass_k.setdefault(m.policy_version, {})[m.k] = m.value
        pass_tasks.setdefault(m.policy_version, {})[m.k] = m.tasks
    reasons: dict[str, dict[str, int]] = {}
    for r in q.verdict_reasons(session, run_id):
        reasons.setdefault(r.code, {})[r.verdict] = r.samples
    backends = q.backend_mix(session, run_id)
    pairs = q.review_agreement(session, run_id)
    return RunReportData(
        run_id=run_id,
        source=source,
        generated_at=datetime.now(UTC),
        summary=Summary(
            samples=s.samples,
            tasks=s.tasks,
            rewards=s.rewards,
            reward_mean=s.reward_mean,
            policy_versions=s.policy_versions,
            latest_step=s.latest_step,
            trained_samples=s.trained_samples,
            executions=s.executions,
            reviews=len(pairs),
        ),
        reward_by_version=by_version,
        reward_by_step=dict(sorted(by_step.items())),
        pass_at_k=dict(sorted(pass_k.items())),
        pass_at_k_tasks=dict(sorted(pass_tasks.items())),
        verdicts_by_version=q.verdict_mix_by_policy_version(session, run_id),
        verdict_reasons=dict(sorted(reasons.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))),
        staleness=q.staleness_histogram(q.staleness(session, run_id)),
        backend_executions={b.backend: b.executions for b in backends},
        backend_latency_s={b.backend: b.durations for b in backends},
        agreement=agreement(
            {p.sample_id: p.automated for p in pairs if p.automated is not None},
            {p.sample_id: p.reviewed for p in pairs},
        ),
        evaluation=tuple(q.split_summary(session, run_id)),
        turns=q.turn_success(session, run_id),
        evaluation_by_level=tuple(by_level(q.split_task_results(session, run_id), q.task_levels(session))),
        curriculum=tuple(q.curriculum_moves(session, run_id)),
        training=training_by_version(
            PolicyFacts(p.policy_version, p.step, (), dict(p.metrics), p.stage, p.base, p.algorithm)
            for p in q.policy_training(session, run_id)
        ),
    )


def _no_projections(shown: str) -> DependencyError:
    return DependencyError(
        f"projection database {shown} holds no projections",
        hint="project the log first (rlstream project run --once), or read the log itself: --from-log",
    )


def _engine(url: str) -> Engine:
    """A read-only use of the database at ``url``: a SQLite file that is not there is not created."""
    try:
        parsed = make_url(url)
        file = parsed.database if parsed.get_backend_name() == "sqlite" else None
        if file not in (None, "", ":memory:") and not Path(file or "").is_file():
            raise _no_projections(parsed.render_as_string(hide_password=True))
        return create_engine(parsed)
    except (ArgumentError, NoSuchModuleError) as exc:
        raise UsageError(
            f"projection database URL {url!r}: {exc}",
            hint="e.g. sqlite:////path/projections.sqlite or postgresql+psycopg://user@host:5432/db",
        ) from None


def load_from_db(url: str, run_id: str, progress: Progress = lambda _: None) -> RunReportData:
    engine = _engine(url)
    shown = engine.url.render_as_string(hide_password=True)
    try:
        if "samples" not in inspect(engine).get_table_names():
            raise _no_projections(shown)
        progress(f"reading run {run_id} from {shown}")
        with Session(engine) as session:
            known = [r.run_id for r in q.runs(session)]
            if run_id not in known:
                raise _unknown(run_id, known, shown)
            return data_from_session(session, run_id, source=shown)
    except SQLAlchemyError as exc:
        raise DependencyError(
            f"projection database {shown}: {exc}", hint="check the database is reachable (--db URL)"
        ) from None
    finally:
        engine.dispose()


#: the topics whose events a report is folded from
LOG_TOPICS = (TASKS, GENERATIONS, EXECUTIONS, REWARDS, VERDICTS, POLICY, REVIEWS, CURRICULUM)


def load_from_log(
    bootstrap: str, run_id: str, progress: Progress = lambda _: None, *, ks: tuple[int, ...] = DEFAULT_KS
) -> RunReportData:
    fold = ReportFold(run_id)
    for topic in LOG_TOPICS:
        n = 0
        for item in replay(bootstrap, topic.name, on_undecodable=lambda _msg, _exc: None):
            fold.fold(item.envelope, item.event)
            n += 1
        progress(f"read {n} events from {topic.name}")
    if not fold.known:
        raise _unknown(run_id, sorted(fold.runs_seen), f"the log at {bootstrap}")
    return fold.result(ks=ks, source=f"the log at {bootstrap}")
