"""The tests' PostgreSQL cluster (:mod:`harness.postgres`), one for the session: a test that needs it
FAILS when it cannot start, naming the set-up step (never skipped).

Use it from a test module with ``from tests.integration.postgres import postgres_cluster  # noqa: F401``
and request ``postgres_cluster`` (a :class:`harness.postgres.PostgresCluster`).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.postgres import PostgresCluster, start_cluster
from schemas.errors import RlstreamError


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    try:
        cluster = start_cluster()
    except RlstreamError as exc:
        pytest.fail(f"the PostgreSQL tests need a cluster: {exc}", pytrace=False)
    try:
        yield cluster
    finally:
        cluster.close()
