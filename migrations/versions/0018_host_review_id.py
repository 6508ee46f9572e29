"""A review's id on its code host: a GitHub review's id, or the id of the summary note of
a GitLab review. The column was named for GitHub alone.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-03
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.alter_column("reviews", "github_review_id", new_column_name="host_review_id")


def downgrade() -> None:
    op.alter_column("reviews", "host_review_id", new_column_name="github_review_id")
