"""A link's kind as wide as its match: C#'s extension methods are stored as kind
"extension" (``app/indexing/link_csharp.py``). Widening a varchar rewrites no rows.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.alter_column(
        "chunk_links",
        "kind",
        type_=sa.String(16),
        existing_type=sa.String(8),
        existing_nullable=False,
    )


def downgrade() -> None:
    op.execute("DELETE FROM chunk_links WHERE length(kind) > 8")
    op.alter_column(
        "chunk_links",
        "kind",
        type_=sa.String(8),
        existing_type=sa.String(16),
        existing_nullable=False,
    )
