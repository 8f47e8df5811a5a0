"""splits and evaluation: the split of tasks, groups and samples; pass@k per run x split x version x
task; per run x split x version the mean over tasks with its bootstrap interval

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 16:30:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # rows projected before splits existed were all training rows
    for table in ("tasks", "groups", "samples"):
        op.add_column(table, sa.Column("split", sa.String(), nullable=False, server_default="train"))
    op.create_index(op.f("ix_samples_split"), "samples", ["split"], unique=False)
    op.create_table(
        "split_pass_at_k",
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("split", sa.String(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("c", sa.Integer(), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("reward_mean", sa.Float(), nullable=True),
        sa.Column("similarity_mean", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("run_id", "split", "policy_version", "task_id", "k"),
    )
    op.create_table(
        "split_summary",
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("split", sa.String(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("tasks", sa.Integer(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("ci_low", sa.Float(), nullable=False),
        sa.Column("ci_high", sa.Float(), nullable=False),
        sa.Column("reward_mean", sa.Float(), nullable=True),
        sa.Column("similarity_mean", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("run_id", "split", "policy_version", "k"),
    )


def downgrade() -> None:
    op.drop_table("split_summary")
    op.drop_table("split_pass_at_k")
    op.drop_index(op.f("ix_samples_split"), table_name="samples")
    for table in ("samples", "groups", "tasks"):
        op.drop_column(table, "split")
