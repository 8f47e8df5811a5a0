"""Secrets of the other stores: the projection database's password from a file (the URL in the settings
carries none) and the OTLP exporter's auth headers from a file; neither shows in a message."""

from __future__ import annotations

from pathlib import Path

import pytest

from consumers.projections.store import check_reachable, make_engine
from infra.telemetry.tracing import export_headers
from rlstream.settings import Settings
from schemas.errors import DependencyError, UsageError

SECRET = "db-pa55-never-shown"


def test_the_database_password_comes_from_its_file_and_never_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pw").write_text(SECRET + "\n")
    # a port nothing listens on: the connection fails, and the error must not carry the password
    monkeypatch.setenv(
        "RLSTREAM_PROJECTIONS__DATABASE_URL", "postgresql+psycopg://rl@127.0.0.1:9/rl?connect_timeout=2"
    )
    monkeypatch.setenv("RLSTREAM_PROJECTIONS__DATABASE_PASSWORD_FILE", str(tmp_path / "pw"))
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    engine = make_engine(settings.projections_url)
    assert engine.url.password == SECRET and SECRET not in str(engine.url)
    with pytest.raises(DependencyError) as refused:
        check_reachable(engine)
    assert SECRET not in str(refused.value) and SECRET not in repr(settings)


def test_an_unreadable_password_file_names_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RLSTREAM_PROJECTIONS__DATABASE_URL", "postgresql+psycopg://rl@db/rl")
    monkeypatch.setenv("RLSTREAM_PROJECTIONS__DATABASE_PASSWORD_FILE", str(tmp_path / "missing"))
    with pytest.raises(UsageError, match="DATABASE_PASSWORD_FILE: cannot read"):
        _ = Settings(_env_file=None).projections_url  # type: ignore[call-arg]


def test_otlp_headers_come_from_a_file_and_a_bad_line_is_named_without_its_value(tmp_path: Path) -> None:
    path = tmp_path / "headers"
    path.write_text(f"# the collector's token\nAuthorization=Bearer {SECRET}\n\nX-Tenant = rl\n")
    assert export_headers(path) == {"authorization": f"Bearer {SECRET}", "x-tenant": "rl"}
    path.write_text(f"Authorization Bearer {SECRET}\n")
    with pytest.raises(UsageError) as bad:
        export_headers(path)
    assert f"{path}:1" in str(bad.value) and SECRET not in str(bad.value)
