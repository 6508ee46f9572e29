"""Initial schema: repositories, files, chunks with pgvector, caches, deliveries, reviews.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

NOW = sa.text("now()")


def _timestamps(*names: str) -> list[sa.Column]:
    return [
        sa.Column(n, sa.DateTime(timezone=True), server_default=NOW, nullable=False) for n in names
    ]


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "repositories",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("full_name", sa.String(length=255), nullable=False),
        sa.Column("installation_id", sa.BigInteger(), nullable=True),
        sa.Column("default_branch", sa.String(length=255), nullable=True),
        sa.Column("last_indexed_commit", sa.String(length=64), nullable=True),
        *_timestamps("created_at", "updated_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_repositories")),
        sa.UniqueConstraint("full_name", name=op.f("uq_repositories_full_name")),
    )
    op.create_table(
        "source_files",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("repository_id", sa.BigInteger(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("language", sa.String(length=32), nullable=True),
        sa.Column("size_bytes", sa.BigInteger(), nullable=False),
        sa.Column("decoded_leniently", sa.Boolean(), server_default="false", nullable=False),
        *_timestamps("indexed_at"),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["repositories.id"],
            name=op.f("fk_source_files_repository_id_repositories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_source_files")),
        sa.UniqueConstraint(
            "repository_id", "path", name=op.f("uq_source_files_repository_id_path")
        ),
    )
    op.create_table(
        "code_chunks",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("repository_id", sa.BigInteger(), nullable=False),
        sa.Column("source_file_id", sa.BigInteger(), nullable=False),
        sa.Column("file_path", sa.Text(), nullable=False),
        sa.Column("start_line", sa.Integer(), nullable=False),
        sa.Column("end_line", sa.Integer(), nullable=False),
        sa.Column("symbol_name", sa.Text(), nullable=True),
        sa.Column("qualified_name", sa.Text(), nullable=True),
        sa.Column("chunk_type", sa.String(length=16), nullable=False),
        sa.Column("language", sa.String(length=32), nullable=True),
        sa.Column("raw_code", sa.Text(), nullable=False),
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("nl_summary", sa.Text(), nullable=True),
        sa.Column("summarizer", sa.String(length=16), nullable=True),
        sa.Column("summary_model", sa.String(length=128), nullable=True),
        sa.Column("embedding", Vector(dim=1536), nullable=True),
        sa.Column("embedding_model", sa.String(length=128), nullable=True),
        sa.Column("token_count", sa.Integer(), server_default="0", nullable=False),
        *_timestamps("updated_at"),
        sa.CheckConstraint(
            "chunk_type IN ('function', 'method', 'class', 'module', 'window')",
            name=op.f("ck_code_chunks_chunk_type"),
        ),
        sa.CheckConstraint(
            "start_line >= 1 AND end_line >= start_line", name=op.f("ck_code_chunks_line_range")
        ),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["repositories.id"],
            name=op.f("fk_code_chunks_repository_id_repositories"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_file_id"],
            ["source_files.id"],
            name=op.f("fk_code_chunks_source_file_id_source_files"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_code_chunks")),
    )
    # pgvector builds ivfflat centroids from the rows present at build time; with none,
    # one list is right. app/db/vector_index.py rebuilds it as the table grows.
    op.create_index(
        "ix_code_chunks_embedding_ivfflat",
        "code_chunks",
        ["embedding"],
        postgresql_using="ivfflat",
        postgresql_with={"lists": 1},
        postgresql_ops={"embedding": "vector_cosine_ops"},
    )
    op.create_index(
        "ix_code_chunks_repository_id_file_path", "code_chunks", ["repository_id", "file_path"]
    )
    op.create_index(
        "ix_code_chunks_repository_id_content_hash",
        "code_chunks",
        ["repository_id", "content_hash"],
    )
    op.create_index(
        "ix_code_chunks_repository_id_symbol_name", "code_chunks", ["repository_id", "symbol_name"]
    )
    op.create_index("ix_code_chunks_source_file_id", "code_chunks", ["source_file_id"])
    op.create_table(
        "summary_cache",
        sa.Column("content_hash", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("summarizer", sa.String(length=16), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), server_default="0", nullable=False),
        sa.Column("completion_tokens", sa.Integer(), server_default="0", nullable=False),
        *_timestamps("created_at"),
        sa.PrimaryKeyConstraint("content_hash", "model", name=op.f("pk_summary_cache")),
    )
    op.create_table(
        "embedding_cache",
        sa.Column("text_hash", sa.String(length=64), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("embedding", Vector(dim=1536), nullable=False),
        sa.Column("dims", sa.Integer(), nullable=False),
        sa.Column("tokens", sa.Integer(), server_default="0", nullable=False),
        *_timestamps("created_at"),
        sa.PrimaryKeyConstraint("text_hash", "model", name=op.f("pk_embedding_cache")),
    )
    op.create_table(
        "webhook_deliveries",
        sa.Column("delivery_id", sa.String(length=64), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=32), server_default="received", nullable=False),
        sa.Column("repository_full_name", sa.String(length=255), nullable=True),
        sa.Column("installation_id", sa.BigInteger(), nullable=True),
        *_timestamps("received_at"),
        sa.Column("processed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("delivery_id", name=op.f("pk_webhook_deliveries")),
    )
    op.create_table(
        "reviews",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("repository_id", sa.BigInteger(), nullable=False),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("base_sha", sa.String(length=64), nullable=False),
        sa.Column("head_sha", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=32), server_default="pending", nullable=False),
        sa.Column("github_review_id", sa.BigInteger(), nullable=True),
        sa.Column(
            "comment_fingerprints",
            postgresql.ARRAY(sa.String(length=64)),
            server_default="{}",
            nullable=False,
        ),
        *_timestamps("created_at", "updated_at"),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["repositories.id"],
            name=op.f("fk_reviews_repository_id_repositories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_reviews")),
        sa.UniqueConstraint(
            "repository_id",
            "pr_number",
            "head_sha",
            name=op.f("uq_reviews_repository_id_pr_number_head_sha"),
        ),
    )


def downgrade() -> None:
    for table in (
        "reviews",
        "webhook_deliveries",
        "embedding_cache",
        "summary_cache",
        "code_chunks",
        "source_files",
        "repositories",
    ):
        op.drop_table(table)
    # The vector extension stays: other schemas in this database may use it.
