"""Conversations (``/ask`` and replies to the bot's inline comments) and what people
thought of the bot's comments (``review_feedback``).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _repository(table: str) -> list[sa.Column[int] | sa.ForeignKeyConstraint]:
    return [
        sa.Column("repository_id", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["repository_id"],
            ["repositories.id"],
            name=op.f(f"fk_{table}_repository_id_repositories"),
            ondelete="CASCADE",
        ),
    ]


def _created(name: str) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), server_default=sa.func.now(), nullable=False)


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("id", sa.BigInteger(), nullable=False),
        *_repository("conversations"),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("question_id", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("answer_id", sa.BigInteger(), nullable=True),
        _created("created_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversations")),
        sa.UniqueConstraint(
            "repository_id",
            "kind",
            "question_id",
            name=op.f("uq_conversations_repository_id_kind_question_id"),
        ),
    )
    op.create_index(
        op.f("ix_conversations_repository_id_pr_number_created_at"),
        "conversations",
        ["repository_id", "pr_number", "created_at"],
    )
    op.create_table(
        "review_feedback",
        sa.Column("id", sa.BigInteger(), nullable=False),
        *_repository("review_feedback"),
        sa.Column("pr_number", sa.Integer(), nullable=False),
        sa.Column("comment_id", sa.BigInteger(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("title_key", sa.Text(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("thumbs_up", sa.Integer(), nullable=False),
        sa.Column("thumbs_down", sa.Integer(), nullable=False),
        sa.Column("resolved", sa.Boolean(), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        _created("recorded_at"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_review_feedback")),
        sa.UniqueConstraint(
            "repository_id", "comment_id", name=op.f("uq_review_feedback_repository_id_comment_id")
        ),
    )
    op.create_index(
        op.f("ix_review_feedback_repository_id_verdict"),
        "review_feedback",
        ["repository_id", "verdict"],
    )


def downgrade() -> None:
    op.drop_table("review_feedback")
    op.drop_table("conversations")
