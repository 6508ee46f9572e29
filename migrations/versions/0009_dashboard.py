"""The operator's dashboard: what a review cost and took, model usage per day, admin
sessions (hashes only) and failed sign-ins.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _at(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(
        name,
        sa.DateTime(timezone=True),
        server_default=None if nullable else sa.func.now(),
        nullable=nullable,
    )


def upgrade() -> None:
    op.add_column("reviews", _at("finished_at", nullable=True))
    op.add_column(
        "reviews", sa.Column("comment_count", sa.Integer(), server_default="0", nullable=False)
    )
    op.add_column("reviews", sa.Column("model", sa.String(length=128), nullable=True))
    op.add_column(
        "reviews", sa.Column("prompt_tokens", sa.BigInteger(), server_default="0", nullable=False)
    )
    op.add_column(
        "reviews",
        sa.Column("completion_tokens", sa.BigInteger(), server_default="0", nullable=False),
    )
    op.execute(
        "UPDATE reviews SET comment_count = cardinality(comment_fingerprints),"
        " finished_at = updated_at WHERE status IN ('posted', 'skipped', 'failed')"
    )
    op.create_index(op.f("ix_reviews_created_at"), "reviews", ["created_at"])
    op.create_index(op.f("ix_reviews_repository_id_id"), "reviews", ["repository_id", "id"])
    op.create_table(
        "model_usage",
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("repository_id", sa.BigInteger(), nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("model", sa.String(length=128), nullable=False),
        sa.Column("calls", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("input_tokens", sa.BigInteger(), server_default="0", nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), server_default="0", nullable=False),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["repositories.id"],
            name=op.f("fk_model_usage_repository_id_repositories"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "day", "repository_id", "purpose", "model", name=op.f("pk_model_usage")
        ),
    )
    # what index runs already spent, so the chart does not start empty after an upgrade
    op.execute(
        "INSERT INTO model_usage (day, repository_id, purpose, model, calls, input_tokens,"
        " output_tokens)"
        " SELECT started_at::date, repository_id, 'summary', summary_model, sum(summary_calls),"
        " sum(summary_prompt_tokens), sum(summary_completion_tokens) FROM index_runs"
        " WHERE summary_model IS NOT NULL AND summary_calls > 0 GROUP BY 1, 2, 4"
        " UNION ALL SELECT started_at::date, repository_id, 'embedding', embedding_model,"
        " sum(embedding_calls), sum(embedding_tokens), 0 FROM index_runs"
        " WHERE embedding_model IS NOT NULL AND embedding_calls > 0 GROUP BY 1, 2, 4"
    )
    op.create_index(op.f("ix_model_usage_day"), "model_usage", ["day"])
    op.create_table(
        "admin_sessions",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        _at("created_at"),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_admin_sessions")),
    )
    op.create_table(
        "admin_sign_in_failures",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("client", sa.String(length=64), nullable=False),
        _at("failed_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_admin_sign_in_failures")),
    )
    op.create_index(
        op.f("ix_admin_sign_in_failures_client_failed_at"),
        "admin_sign_in_failures",
        ["client", "failed_at"],
    )


def downgrade() -> None:
    op.drop_table("admin_sign_in_failures")
    op.drop_table("admin_sessions")
    op.drop_table("model_usage")
    op.drop_index(op.f("ix_reviews_repository_id_id"), table_name="reviews")
    op.drop_index(op.f("ix_reviews_created_at"), table_name="reviews")
    for column in ("completion_tokens", "prompt_tokens", "model", "comment_count", "finished_at"):
        op.drop_column("reviews", column)
