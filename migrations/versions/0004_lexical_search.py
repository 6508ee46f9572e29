"""Full-text search over chunk identifiers and summaries (the lexical retrieval signal).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("code_chunks", sa.Column("search_text", sa.Text(), nullable=True))
    op.add_column(
        "code_chunks",
        sa.Column(
            "search_tsv",
            postgresql.TSVECTOR(),
            sa.Computed(
                "to_tsvector('simple'::regconfig, coalesce(search_text, ''))", persisted=True
            ),
            nullable=True,
        ),
    )
    op.create_index(
        "ix_code_chunks_search_tsv", "code_chunks", ["search_tsv"], postgresql_using="gin"
    )


def downgrade() -> None:
    op.drop_index("ix_code_chunks_search_tsv", table_name="code_chunks")
    op.drop_column("code_chunks", "search_tsv")
    op.drop_column("code_chunks", "search_text")
