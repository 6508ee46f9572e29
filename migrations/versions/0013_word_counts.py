"""Each repository's common words with the chunks they occur in, instead of a list of
its frequent ones: a full-text query keeps its rarest words up to a number of matches
(``app/db/word_counts.py``, ``app/retrieval/signals.py``).

``repository_words`` holds the words in more than 20 chunks; ``words_counted_at`` (was
``frequent_words_chunks``) the chunk count they were counted at. Repositories counted
before are counted again here, from their chunks, so their queries stay bounded without
waiting for an index run (about a second per 100,000 chunks).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STORED_MIN = 20  # app/db/word_counts.py at this revision
FREQUENT_SHARE = 0.05  # app/retrieval/signals.py at this revision


def upgrade() -> None:
    op.create_table(
        "repository_words",
        sa.Column(
            "repository_id",
            sa.BigInteger(),
            sa.ForeignKey("repositories.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("word", sa.Text(), primary_key=True),
        sa.Column("chunks", sa.Integer(), nullable=False),
    )
    op.alter_column("repositories", "frequent_words_chunks", new_column_name="words_counted_at")
    op.execute(
        sa.text(
            "INSERT INTO repository_words (repository_id, word, chunks)"
            " SELECT r.id, s.word, s.ndoc FROM repositories r CROSS JOIN LATERAL ts_stat("
            "  format('SELECT search_tsv FROM code_chunks WHERE repository_id = %s', r.id)) s"
            f" WHERE r.words_counted_at > 0 AND s.ndoc > {STORED_MIN}"
        )
    )
    op.drop_column("repositories", "frequent_words")


def downgrade() -> None:
    op.add_column(
        "repositories",
        sa.Column(
            "frequent_words", postgresql.ARRAY(sa.Text()), server_default="{}", nullable=False
        ),
    )
    op.alter_column("repositories", "words_counted_at", new_column_name="frequent_words_chunks")
    op.execute(
        sa.text(
            "UPDATE repositories r SET frequent_words = ARRAY(SELECT w.word"
            "  FROM repository_words w WHERE w.repository_id = r.id"
            f"  AND w.chunks > {FREQUENT_SHARE} * r.frequent_words_chunks ORDER BY w.word)"
        )
    )
    op.drop_table("repository_words")
