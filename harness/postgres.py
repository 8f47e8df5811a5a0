"""A throwaway PostgreSQL cluster for the projection tests and bench: initdb + pg_ctl on a free loopback
port in a temporary directory, stopped and removed by :meth:`PostgresCluster.close`.

PostgreSQL refuses to run as root, so under root the cluster runs as the ``postgres`` system user the
Debian package creates (else ``nobody``). Missing binaries raise :class:`DependencyError` naming the
set-up step that installs them (scripts/setup.d/40-postgres.sh); the tests' fixture
(``tests/integration/postgres.py``) fails the tests that need them with it, never skips them.

``new_database()`` gives a fresh URL on a started cluster.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemas.errors import DependencyError, InfraError

SETUP_HINT = "install it with `bash scripts/setup.d/40-postgres.sh` (Debian package postgresql)"


def find_bin(name: str) -> str | None:
    """A PostgreSQL server binary: on PATH, else the newest Debian versioned folder."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=_version_key)
    return candidates[-1] if candidates else None


def _version_key(path: str) -> int:
    part = Path(path).parts[-3]
    return int(part) if part.isdigit() else 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PostgresCluster:
    root: Path
    port: int
    user: str | None
    pg_ctl: str
    superuser: str = "rlstream"

    @property
    def data(self) -> Path:
        return self.root / "data"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.superuser}@127.0.0.1:{self.port}/{database}"

    def new_database(self, prefix: str = "proj") -> str:
        """Create an empty database and return its SQLAlchemy URL."""
        import psycopg

        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(
            host="127.0.0.1", port=self.port, user=self.superuser, dbname="postgres", autocommit=True
        ) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')  # type: ignore[arg-type]
        return self.url(name)

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return _run_as(self.user, [self.pg_ctl, *args], cwd=self.root, check=check)

    def stop(self) -> None:
        self.run("-D", str(self.data), "-m", "fast", "-w", "stop", check=False)

    def close(self) -> None:
        """Stop the server and remove its directory."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


def _run_as(
    user: str | None, cmd: list[str], *, cwd: Path, check: bool = True
) -> subprocess.CompletedProcess[str]:
    kwargs: dict[str, Any] = {}
    if user is not None:
        entry = pwd.getpwnam(user)
        kwargs.update(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[])
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(cwd)}
    result = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, **kwargs)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def _service_user() -> str | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise DependencyError(
        "PostgreSQL cannot run as root and neither a postgres nor a nobody user exists", hint=SETUP_HINT
    )


def start_cluster() -> PostgresCluster:
    initdb, pg_ctl = find_bin("initdb"), find_bin("pg_ctl")
    if initdb is None or pg_ctl is None:
        raise DependencyError("PostgreSQL's initdb and pg_ctl are not installed", hint=SETUP_HINT)
    user = _service_user()
    root = Path(tempfile.mkdtemp(prefix="rlstream-test-pg-"))
    if user is not None:
        entry = pwd.getpwnam(user)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    root.chmod(0o700)
    cluster = PostgresCluster(root=root, port=_free_port(), user=user, pg_ctl=pg_ctl)
    _run_as(
        user,
        [
            initdb,
            "-D",
            str(cluster.data),
            "-U",
            cluster.superuser,
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
        ],
        cwd=root,
    )
    options = (
        f"-p {cluster.port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off "
        "-c synchronous_commit=off -c full_page_writes=off -c max_connections=50"
    )
    try:
        cluster.run("-D", str(cluster.data), "-o", options, "-l", str(root / "server.log"), "-w", "start")
    except RuntimeError as exc:
        log = (root / "server.log").read_text(errors="replace") if (root / "server.log").exists() else ""
        shutil.rmtree(root, ignore_errors=True)
        raise InfraError(f"PostgreSQL did not start: {exc}\n{log[-2000:]}") from exc
    return cluster
