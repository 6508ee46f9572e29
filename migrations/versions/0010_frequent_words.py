"""Each repository's most common full-text words, left out of lexical queries.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "repositories",
        sa.Column(
            "frequent_words", postgresql.ARRAY(sa.Text()), server_default="{}", nullable=False
        ),
    )
    # the chunk count they were counted at (0: never); the next index run counts them
    op.add_column(
        "repositories",
        sa.Column("frequent_words_chunks", sa.Integer(), server_default="0", nullable=False),
    )


def downgrade() -> None:
    op.drop_column("repositories", "frequent_words_chunks")
    op.drop_column("repositories", "frequent_words")
