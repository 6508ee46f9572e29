"""Index runs (cost accounting) and chunk signature, docstring and references.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("source_files", sa.Column("mtime_ns", sa.BigInteger(), nullable=True))
    op.add_column("code_chunks", sa.Column("signature", sa.Text(), nullable=True))
    op.add_column("code_chunks", sa.Column("docstring", sa.Text(), nullable=True))
    op.add_column(
        "code_chunks",
        sa.Column("references", postgresql.ARRAY(sa.Text()), server_default="{}", nullable=False),
    )
    op.create_index(
        "ix_code_chunks_references", "code_chunks", ["references"], postgresql_using="gin"
    )
    op.create_table(
        "index_runs",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("repository_id", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), server_default="running", nullable=False),
        sa.Column("full", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("commit_sha", sa.String(length=64), nullable=True),
        sa.Column("summary_model", sa.String(length=128), nullable=True),
        sa.Column("embedding_model", sa.String(length=128), nullable=True),
        sa.Column(
            "stats", postgresql.JSONB(astext_type=sa.Text()), server_default="{}", nullable=False
        ),
        sa.Column("summary_calls", sa.Integer(), server_default="0", nullable=False),
        sa.Column("summary_prompt_tokens", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("summary_completion_tokens", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("embedding_calls", sa.Integer(), server_default="0", nullable=False),
        sa.Column("embedding_tokens", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("wall_seconds", sa.Float(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column(
            "started_at",
            sa.DateTime(timezone=True),
            server_default=sa.text("now()"),
            nullable=False,
        ),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["repositories.id"],
            name=op.f("fk_index_runs_repository_id_repositories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_index_runs")),
    )
    op.create_index(
        "ix_index_runs_repository_id_started_at", "index_runs", ["repository_id", "started_at"]
    )


def downgrade() -> None:
    op.drop_index("ix_index_runs_repository_id_started_at", table_name="index_runs")
    op.drop_table("index_runs")
    op.drop_index("ix_code_chunks_references", table_name="code_chunks")
    op.drop_column("code_chunks", "references")
    op.drop_column("code_chunks", "docstring")
    op.drop_column("code_chunks", "signature")
    op.drop_column("source_files", "mtime_ns")
