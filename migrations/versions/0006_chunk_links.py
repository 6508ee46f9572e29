"""Import-aware links (``chunk_links``): which names each line of a file uses, and where
they are defined. ``source_files.link_version`` records which resolver wrote a file's
links; files indexed before this migration have version 0 and are re-read (not
re-summarised or re-embedded: their chunks match by content hash) on the next index run.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "source_files",
        sa.Column("link_version", sa.Integer(), server_default="0", nullable=False),
    )
    op.create_table(
        "chunk_links",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("repository_id", sa.BigInteger(), nullable=False),
        sa.Column("source_file_id", sa.BigInteger(), nullable=False),
        sa.Column("file_path", sa.Text(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("name", sa.Text(), nullable=False),
        sa.Column("match", sa.String(length=16), nullable=False),
        sa.Column("target", sa.Text(), nullable=True),
        sa.Column("qualifier", sa.Text(), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.Column("kind", sa.String(length=8), server_default="use", nullable=False),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["repositories.id"],
            name=op.f("fk_chunk_links_repository_id_repositories"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_file_id"],
            ["source_files.id"],
            name=op.f("fk_chunk_links_source_file_id_source_files"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chunk_links")),
    )
    op.create_index("ix_chunk_links_repository_id_name", "chunk_links", ["repository_id", "name"])
    op.create_index("ix_chunk_links_source_file_id", "chunk_links", ["source_file_id"])


def downgrade() -> None:
    op.drop_index("ix_chunk_links_source_file_id", table_name="chunk_links")
    op.drop_index("ix_chunk_links_repository_id_name", table_name="chunk_links")
    op.drop_table("chunk_links")
    op.drop_column("source_files", "link_version")
