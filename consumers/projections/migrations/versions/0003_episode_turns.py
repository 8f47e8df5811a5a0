"""episode turns: every turn of an episode (sample_turns) and how it ended (turn_ends); the turn of
executions, rewards and verdicts; the max_turns of samples

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 18:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # rows projected before episodes existed were one-turn samples: their only turn is turn 0
    for table in ("executions", "rewards", "verdicts"):
        op.add_column(table, sa.Column("turn", sa.Integer(), nullable=False, server_default="0"))
    op.add_column("samples", sa.Column("max_turns", sa.Integer(), nullable=False, server_default="1"))
    op.create_table(
        "sample_turns",
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("completion_text", sa.Text(), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("feedback_event_id", sa.String(), nullable=True),
        sa.Column("generated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("sample_id", "turn"),
    )
    op.create_index(op.f("ix_sample_turns_run_id"), "sample_turns", ["run_id"], unique=False)
    op.create_index(op.f("ix_sample_turns_group_id"), "sample_turns", ["group_id"], unique=False)
    op.create_table(
        "turn_ends",
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("turn", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("max_turns", sa.Integer(), nullable=False),
        sa.Column("outcome", sa.String(), nullable=False),
        sa.Column("reason", sa.String(), nullable=False),
        sa.Column("visible_passed", sa.Integer(), nullable=False),
        sa.Column("visible_total", sa.Integer(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("generation_event_id", sa.String(), nullable=False),
        sa.Column("execution_event_id", sa.String(), nullable=False),
        sa.Column("feedback_version", sa.String(), nullable=True),
        sa.Column("feedback", sa.Text(), nullable=True),
        sa.Column("ended_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("sample_id", "turn"),
    )
    op.create_index(op.f("ix_turn_ends_run_id"), "turn_ends", ["run_id"], unique=False)
    op.create_index(op.f("ix_turn_ends_group_id"), "turn_ends", ["group_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_turn_ends_group_id"), table_name="turn_ends")
    op.drop_index(op.f("ix_turn_ends_run_id"), table_name="turn_ends")
    op.drop_table("turn_ends")
    op.drop_index(op.f("ix_sample_turns_group_id"), table_name="sample_turns")
    op.drop_index(op.f("ix_sample_turns_run_id"), table_name="sample_turns")
    op.drop_table("sample_turns")
    op.drop_column("samples", "max_turns")
    for table in ("verdicts", "rewards", "executions"):
        op.drop_column(table, "turn")
