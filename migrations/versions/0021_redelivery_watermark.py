"""How far back the redelivery pass has read GitHub's delivery log: the id of the newest
delivery attempt it has examined with nothing older left to revisit. The next pass reads
back to it, however many pages that is, instead of a fixed number of pages.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-04
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "redelivery_watermarks",
        sa.Column("hook", sa.String(64), primary_key=True),
        sa.Column("attempt_id", sa.BigInteger(), nullable=False),
        sa.Column(
            "updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False
        ),
    )


def downgrade() -> None:
    op.drop_table("redelivery_watermarks")
