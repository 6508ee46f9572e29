"""Change history: which files and functions each commit of the default branch's
first-parent line changed (``app/indexing/history.py``), for the co-change signal; and
each repository's chunk count and average distinct words per chunk, for BM25.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("repositories", sa.Column("history_commit", sa.String(64), nullable=True))
    op.add_column(
        "repositories",
        sa.Column("search_chunks", sa.Integer(), server_default="0", nullable=False),
    )
    op.add_column(
        "repositories",
        sa.Column("search_avg_words", sa.Float(), server_default="0", nullable=False),
    )
    op.execute(
        "UPDATE repositories r SET search_chunks = s.n, search_avg_words = s.avg FROM"
        " (SELECT repository_id, count(*) AS n, coalesce(avg(length(search_tsv)), 0) AS avg"
        "  FROM code_chunks GROUP BY repository_id) s WHERE s.repository_id = r.id"
    )
    op.create_table(
        "history_commits",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column(
            "repository_id",
            sa.BigInteger(),
            sa.ForeignKey(
                "repositories.id",
                ondelete="CASCADE",
                name="fk_history_commits_repository_id_repositories",
            ),
            nullable=False,
        ),
        sa.Column("sha", sa.String(64), nullable=False),
        sa.Column("committed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("symbols", sa.Integer(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_history_commits"),
        sa.UniqueConstraint("repository_id", "sha", name="uq_history_commits_repository_id_sha"),
    )
    op.create_index(
        "ix_history_commits_repository_id_committed_at",
        "history_commits",
        ["repository_id", "committed_at"],
    )
    op.create_table(
        "history_changes",
        sa.Column("id", sa.BigInteger(), primary_key=True),
        sa.Column(
            "commit_id",
            sa.BigInteger(),
            sa.ForeignKey(
                "history_commits.id",
                ondelete="CASCADE",
                name="fk_history_changes_commit_id_history_commits",
            ),
            nullable=False,
        ),
        sa.Column("repository_id", sa.BigInteger(), nullable=False),
        sa.Column("file_path", sa.Text(), nullable=False),
        sa.Column("qualified_name", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_history_changes"),
    )
    op.create_index(
        "ix_history_changes_repository_id_file_path_qualified_name",
        "history_changes",
        ["repository_id", "file_path", "qualified_name"],
    )
    op.create_index("ix_history_changes_commit_id", "history_changes", ["commit_id"])
    op.create_table(
        "history_symbols",
        sa.Column(
            "repository_id",
            sa.BigInteger(),
            sa.ForeignKey(
                "repositories.id",
                ondelete="CASCADE",
                name="fk_history_symbols_repository_id_repositories",
            ),
            nullable=False,
        ),
        sa.Column("file_path", sa.Text(), nullable=False),
        sa.Column("qualified_name", sa.Text(), nullable=False),
        sa.Column("weight", sa.Float(), nullable=False),
        sa.Column("commits", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint(
            "repository_id", "file_path", "qualified_name", name="pk_history_symbols"
        ),
    )


def downgrade() -> None:
    op.drop_table("history_symbols")
    op.drop_table("history_changes")
    op.drop_table("history_commits")
    op.drop_column("repositories", "search_avg_words")
    op.drop_column("repositories", "search_chunks")
    op.drop_column("repositories", "history_commit")
