"""task levels and the curriculum: the difficulty and tags of tasks; the level moves of each run

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 18:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # tasks projected before the gradient existed are ungraded, with no tags
    op.add_column("tasks", sa.Column("difficulty", sa.Integer(), nullable=True))
    op.add_column("tasks", sa.Column("tags", sa.JSON(), nullable=True))
    op.create_table(
        "curriculum_moves",
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("from_level", sa.Integer(), nullable=True),
        sa.Column("to_level", sa.Integer(), nullable=False),
        sa.Column("reason", sa.String(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=True),
        sa.Column("pass_at_1", sa.Float(), nullable=True),
        sa.Column("threshold", sa.Float(), nullable=True),
        sa.Column("tasks", sa.Integer(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("moved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("log_offset", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
    )
    op.create_index(op.f("ix_curriculum_moves_run_id"), "curriculum_moves", ["run_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_curriculum_moves_run_id"), table_name="curriculum_moves")
    op.drop_table("curriculum_moves")
    op.drop_column("tasks", "tags")
    op.drop_column("tasks", "difficulty")
