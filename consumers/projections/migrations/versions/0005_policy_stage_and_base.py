"""policy versions' stage, base and algorithm: the stage that made each version, the version its run
started from and an RL version's objective

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-02 20:15:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    # versions projected before stages were recorded came from the learner's RL steps, from no base
    op.add_column("policy_versions", sa.Column("stage", sa.String(), server_default="rl", nullable=False))
    op.add_column("policy_versions", sa.Column("base", sa.String(), nullable=True))
    op.add_column("policy_versions", sa.Column("algorithm", sa.String(), nullable=True))
    # and their objective was GRPO's
    op.execute("UPDATE policy_versions SET algorithm = 'grpo' WHERE stage = 'rl'")


def downgrade() -> None:
    op.drop_column("policy_versions", "algorithm")
    op.drop_column("policy_versions", "base")
    op.drop_column("policy_versions", "stage")
