"""Model tokens per pull request, for the per-PR budget and the cost shown on the PR, and
the last budget note posted on it (so it is posted once).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "pr_usage",
        sa.Column(
            "repository_id",
            sa.BigInteger(),
            sa.ForeignKey(
                "repositories.id", ondelete="CASCADE", name="fk_pr_usage_repository_id_repositories"
            ),
            nullable=False,
        ),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("budget_note", sa.Text(), nullable=True),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False
        ),
        sa.PrimaryKeyConstraint("repository_id", "pr_number", name="pk_pr_usage"),
    )


def downgrade() -> None:
    op.drop_table("pr_usage")
