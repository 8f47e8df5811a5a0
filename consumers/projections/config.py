"""Configuration of the SQL projections (composed into the one settings object by ``rlstream.settings``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field


class ProjectionConfig(BaseModel):
    model_config = {"frozen": True}

    #: SQLAlchemy URL of the projection database; unset = a SQLite file under the rlstream home
    #: (``<home>/projections.sqlite``). PostgreSQL: ``postgresql+psycopg://user@host:port/db``
    database_url: str | None = None
    #: the database password, read from this file (a mounted secret) so the URL above carries none;
    #: TLS goes in the URL's query as libpq takes it (``?sslmode=verify-full&sslrootcert=/path/ca.pem``)
    database_password_file: Path | None = None
    #: the name offsets are stored under (two projectors with different names never share offsets)
    name: str = "projector"
    #: records polled and applied in one SQL transaction
    batch_size: int = Field(default=2000, ge=1, le=100_000)
    #: the topics projected; empty = every event topic of the catalog
    topics: tuple[str, ...] = ()
    #: the k of pass@k rows (a k larger than a task's samples at a policy version is left out)
    pass_k: tuple[int, ...] = (1, 2, 4, 8, 16)
