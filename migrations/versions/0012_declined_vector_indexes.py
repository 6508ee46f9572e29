"""Remember a vector index that did no better than an exact scan.

``repositories.vector_index_declined_rows``: the embedded chunks at which the
repository's index needed more than half its lists to find what an exact scan finds
(vectors that do not cluster, as the offline hash embedder's do not); the repository is
searched exactly until it has twice as many (``app/db/vector_index.py``).

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "repositories",
        sa.Column("vector_index_declined_rows", sa.Integer(), server_default="0", nullable=False),
    )


def downgrade() -> None:
    op.drop_column("repositories", "vector_index_declined_rows")
