"""initial projection tables

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-30 07:30:53.882952
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "applied_offsets",
        sa.Column("projector", sa.String(), nullable=False),
        sa.Column("topic", sa.String(), nullable=False),
        sa.Column("partition", sa.Integer(), nullable=False),
        sa.Column("next_offset", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("projector", "topic", "partition"),
    )
    op.create_table(
        "executions",
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("run_index", sa.Integer(), nullable=False),
        sa.Column("backend", sa.String(), nullable=False),
        sa.Column("backend_reason", sa.Text(), nullable=False),
        sa.Column("mode", sa.String(), nullable=False),
        sa.Column("cases", sa.JSON(), nullable=False),
        sa.Column("cases_total", sa.Integer(), nullable=False),
        sa.Column("cases_ok", sa.Integer(), nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("timed_out", sa.Boolean(), nullable=False),
        sa.Column("memory_exceeded", sa.Boolean(), nullable=False),
        sa.Column("violation", sa.Text(), nullable=True),
        sa.Column("infra_error", sa.Text(), nullable=True),
        sa.Column("duration_s", sa.Float(), nullable=False),
        sa.Column("cache_hit", sa.Boolean(), nullable=False),
        sa.Column("runtime_hash", sa.String(), nullable=False),
        sa.Column("executed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
    )
    op.create_index(op.f("ix_executions_run_id"), "executions", ["run_id"], unique=False)
    op.create_index(op.f("ix_executions_sample_id"), "executions", ["sample_id"], unique=False)
    op.create_table(
        "experience_samples",
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("reward", sa.Float(), nullable=False),
        sa.Column("advantage", sa.Float(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("group_id", "sample_id"),
    )
    op.create_index(op.f("ix_experience_samples_run_id"), "experience_samples", ["run_id"], unique=False)
    op.create_index("ix_experience_samples_sample_id", "experience_samples", ["sample_id"], unique=False)
    op.create_table(
        "experiences",
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("group_size", sa.Integer(), nullable=False),
        sa.Column("samples", sa.Integer(), nullable=False),
        sa.Column("partial", sa.Boolean(), nullable=False),
        sa.Column("masked", sa.Integer(), nullable=False),
        sa.Column("rejected", sa.Integer(), nullable=False),
        sa.Column("std_normalised", sa.Boolean(), nullable=False),
        sa.Column("assembled_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("group_id"),
    )
    op.create_index(op.f("ix_experiences_run_id"), "experiences", ["run_id"], unique=False)
    op.create_table(
        "groups",
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("group_size", sa.Integer(), nullable=False),
        sa.Column("tenant", sa.String(), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("temperature", sa.Float(), nullable=False),
        sa.Column("top_p", sa.Float(), nullable=False),
        sa.Column("max_tokens", sa.Integer(), nullable=False),
        sa.Column("requested_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("group_id"),
    )
    op.create_index(op.f("ix_groups_run_id"), "groups", ["run_id"], unique=False)
    op.create_index(op.f("ix_groups_task_id"), "groups", ["task_id"], unique=False)
    op.create_table(
        "pass_at_k",
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("n", sa.Integer(), nullable=False),
        sa.Column("c", sa.Integer(), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "task_id", "policy_version", "k"),
    )
    op.create_table(
        "policy_trained_samples",
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("group_id", sa.String(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "policy_version", "sample_id"),
    )
    op.create_index(
        op.f("ix_policy_trained_samples_group_id"), "policy_trained_samples", ["group_id"], unique=False
    )
    op.create_index(
        "ix_policy_trained_samples_sample_id", "policy_trained_samples", ["sample_id"], unique=False
    )
    op.create_table(
        "policy_versions",
        sa.Column("run_id", sa.String(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("checkpoint_uri", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("consumed", sa.JSON(), nullable=False),
        sa.Column("metrics", sa.JSON(), nullable=False),
        sa.Column("trained_samples", sa.Integer(), nullable=False),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "policy_version"),
    )
    op.create_table(
        "reviews",
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("verdict", sa.String(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("reviewer", sa.String(), nullable=False),
        sa.Column("automated_verdict", sa.String(), nullable=True),
        sa.Column("automated_reasons", sa.JSON(), nullable=False),
        sa.Column("verdict_event_id", sa.String(), nullable=True),
        sa.Column("supersedes", sa.String(), nullable=True),
        sa.Column("reviewed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("log_partition", sa.Integer(), nullable=False),
        sa.Column("log_offset", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
    )
    op.create_index(op.f("ix_reviews_run_id"), "reviews", ["run_id"], unique=False)
    op.create_index(op.f("ix_reviews_sample_id"), "reviews", ["sample_id"], unique=False)
    op.create_table(
        "reward_components",
        sa.Column("reward_event_id", sa.String(), nullable=False),
        sa.Column("name", sa.String(), nullable=False),
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("value", sa.Float(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=True),
        sa.PrimaryKeyConstraint("reward_event_id", "name"),
    )
    op.create_index(op.f("ix_reward_components_sample_id"), "reward_components", ["sample_id"], unique=False)
    op.create_table(
        "rewards",
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("execution_event_id", sa.String(), nullable=False),
        sa.Column("reference_event_id", sa.String(), nullable=True),
        sa.Column("reward_fn", sa.String(), nullable=False),
        sa.Column("reward_version", sa.String(), nullable=False),
        sa.Column("total", sa.Float(), nullable=False),
        sa.Column("passed", sa.Integer(), nullable=False),
        sa.Column("total_cases", sa.Integer(), nullable=False),
        sa.Column("correct", sa.Boolean(), nullable=False),
        sa.Column("details", sa.JSON(), nullable=False),
        sa.Column("scored_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
    )
    op.create_index(op.f("ix_rewards_run_id"), "rewards", ["run_id"], unique=False)
    op.create_index(op.f("ix_rewards_sample_id"), "rewards", ["sample_id"], unique=False)
    op.create_table(
        "samples",
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("sample_index", sa.Integer(), nullable=False),
        sa.Column("policy_version", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(), nullable=False),
        sa.Column("prompt_text", sa.Text(), nullable=False),
        sa.Column("completion_text", sa.Text(), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("extraction", sa.String(), nullable=False),
        sa.Column("finish_reason", sa.String(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("temperature", sa.Float(), nullable=False),
        sa.Column("duration_s", sa.Float(), nullable=False),
        sa.Column("trace_id", sa.String(), nullable=True),
        sa.Column("generated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("sample_id"),
    )
    op.create_index(op.f("ix_samples_group_id"), "samples", ["group_id"], unique=False)
    op.create_index(op.f("ix_samples_run_id"), "samples", ["run_id"], unique=False)
    op.create_index(op.f("ix_samples_task_id"), "samples", ["task_id"], unique=False)
    op.create_table(
        "skipped_records",
        sa.Column("projector", sa.String(), nullable=False),
        sa.Column("topic", sa.String(), nullable=False),
        sa.Column("partition", sa.Integer(), nullable=False),
        sa.Column("offset", sa.BigInteger(), nullable=False),
        sa.Column("error", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("projector", "topic", "partition", "offset"),
    )
    op.create_table(
        "tasks",
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("prompt", sa.Text(), nullable=False),
        sa.Column("entry_point", sa.String(), nullable=False),
        sa.Column("visible_cases", sa.Integer(), nullable=False),
        sa.Column("hidden_cases", sa.Integer(), nullable=False),
        sa.Column("has_check", sa.Boolean(), nullable=False),
        sa.Column("reference", sa.Text(), nullable=True),
        sa.Column("tenant", sa.String(), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("timeout_s", sa.Float(), nullable=False),
        sa.Column("memory_mb", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(), nullable=True),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("task_id"),
    )
    op.create_table(
        "verdict_reasons",
        sa.Column("verdict_event_id", sa.String(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("code", sa.String(), nullable=False),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("verdict_event_id", "position"),
    )
    op.create_index(op.f("ix_verdict_reasons_sample_id"), "verdict_reasons", ["sample_id"], unique=False)
    op.create_table(
        "verdicts",
        sa.Column("event_id", sa.String(), nullable=False),
        sa.Column("run_id", sa.String(), nullable=True),
        sa.Column("sample_id", sa.String(), nullable=False),
        sa.Column("group_id", sa.String(), nullable=False),
        sa.Column("task_id", sa.String(), nullable=False),
        sa.Column("reward_event_id", sa.String(), nullable=False),
        sa.Column("verdict", sa.String(), nullable=False),
        sa.Column("reward", sa.Float(), nullable=False),
        sa.Column("filter_version", sa.String(), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("event_id"),
    )
    op.create_index(op.f("ix_verdicts_run_id"), "verdicts", ["run_id"], unique=False)
    op.create_index(op.f("ix_verdicts_sample_id"), "verdicts", ["sample_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_verdicts_sample_id"), table_name="verdicts")
    op.drop_index(op.f("ix_verdicts_run_id"), table_name="verdicts")
    op.drop_table("verdicts")
    op.drop_index(op.f("ix_verdict_reasons_sample_id"), table_name="verdict_reasons")
    op.drop_table("verdict_reasons")
    op.drop_table("tasks")
    op.drop_table("skipped_records")
    op.drop_index(op.f("ix_samples_task_id"), table_name="samples")
    op.drop_index(op.f("ix_samples_run_id"), table_name="samples")
    op.drop_index(op.f("ix_samples_group_id"), table_name="samples")
    op.drop_table("samples")
    op.drop_index(op.f("ix_rewards_sample_id"), table_name="rewards")
    op.drop_index(op.f("ix_rewards_run_id"), table_name="rewards")
    op.drop_table("rewards")
    op.drop_index(op.f("ix_reward_components_sample_id"), table_name="reward_components")
    op.drop_table("reward_components")
    op.drop_index(op.f("ix_reviews_sample_id"), table_name="reviews")
    op.drop_index(op.f("ix_reviews_run_id"), table_name="reviews")
    op.drop_table("reviews")
    op.drop_table("policy_versions")
    op.drop_index("ix_policy_trained_samples_sample_id", table_name="policy_trained_samples")
    op.drop_index(op.f("ix_policy_trained_samples_group_id"), table_name="policy_trained_samples")
    op.drop_table("policy_trained_samples")
    op.drop_table("pass_at_k")
    op.drop_index(op.f("ix_groups_task_id"), table_name="groups")
    op.drop_index(op.f("ix_groups_run_id"), table_name="groups")
    op.drop_table("groups")
    op.drop_index(op.f("ix_experiences_run_id"), table_name="experiences")
    op.drop_table("experiences")
    op.drop_index("ix_experience_samples_sample_id", table_name="experience_samples")
    op.drop_index(op.f("ix_experience_samples_run_id"), table_name="experience_samples")
    op.drop_table("experience_samples")
    op.drop_index(op.f("ix_executions_sample_id"), table_name="executions")
    op.drop_index(op.f("ix_executions_run_id"), table_name="executions")
    op.drop_table("executions")
    op.drop_table("applied_offsets")
