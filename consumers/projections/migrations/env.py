"""Alembic environment of the projections: runs on the connection the caller hands over
(``config.attributes["connection"]``, see ``consumers.projections.store.migrate``), or on
``sqlalchemy.url`` when run by the alembic command line."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from consumers.projections.models import Base

config = context.config
target_metadata = Base.metadata


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()
        return
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("no connection and no sqlalchemy.url to migrate")
    engine = create_engine(url)
    with engine.begin() as conn:
        context.configure(connection=conn, target_metadata=target_metadata)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    raise RuntimeError("the projections are migrated online only (rlstream project migrate)")
run_migrations_online()
