"""The words of each chunk's code, for BM25 over code (the ``words`` signal,
``app/retrieval/signals.py``): ``code_chunks.code_tsv``, a stored generated tsvector of
``raw_code`` (``app/db/code_words.py`` at this revision) kept in the row (``STORAGE
MAIN``), with a GIN index per repository; ``repositories.code_avg_words``, its average length; and
``repository_code_words``, the code words in more than 20 of a repository's chunks, for
the repositories whose words are counted.

Adding a stored generated column rewrites ``code_chunks`` (every row and index): about a
minute per 100,000 chunks on two cores. The app does not serve while it migrates.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from reviewbot_migrations.build_memory import allow_ivfflat_builds, largest_lists

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

STORED_MIN = 20  # app/db/word_counts.py at this revision
#: app/db/code_words.py at this revision
CODE_WORDS = (
    "to_tsvector('simple'::regconfig,"
    " translate(regexp_replace(left(raw_code, 100000), '[^A-Za-z0-9_]+', ' ', 'g'), '_', '')"
    " || ' ' || regexp_replace(regexp_replace(left(raw_code, 100000),"
    " '([a-z0-9])([A-Z])|([A-Z])([A-Z][a-z])', '\\1\\3 \\2\\4', 'g'), '[^A-Za-z0-9]+', ' ', 'g'))"
)


def upgrade() -> None:
    # the rewrite rebuilds every index, the repositories' ivfflat ones too
    allow_ivfflat_builds(op.get_bind(), largest_lists(op.get_bind()))
    # in the row (as search_tsv since 0011): a PR's statement reads it three times a
    # chunk, and from TOAST that took 179 against 157 ms on colinhacks/zod
    op.execute(
        f"ALTER TABLE code_chunks ADD COLUMN code_tsv tsvector GENERATED ALWAYS AS ({CODE_WORDS})"
        " STORED, ALTER COLUMN code_tsv SET STORAGE MAIN"
    )
    op.create_index(
        "ix_code_chunks_repository_id_code_tsv",
        "code_chunks",
        ["repository_id", "code_tsv"],
        postgresql_using="gin",
    )
    op.add_column(
        "repositories",
        sa.Column("code_avg_words", sa.Float(), server_default="0", nullable=False),
    )
    op.create_table(
        "repository_code_words",
        sa.Column(
            "repository_id",
            sa.BigInteger(),
            sa.ForeignKey("repositories.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("word", sa.Text(), primary_key=True),
        sa.Column("chunks", sa.Integer(), nullable=False),
    )
    op.execute(
        "UPDATE repositories r SET code_avg_words = coalesce((SELECT avg(length(c.code_tsv))"
        " FROM code_chunks c WHERE c.repository_id = r.id), 0)"
    )
    op.execute(
        "INSERT INTO repository_code_words (repository_id, word, chunks)"
        " SELECT r.id, s.word, s.ndoc FROM repositories r CROSS JOIN LATERAL ts_stat("
        "  format('SELECT code_tsv FROM code_chunks WHERE repository_id = %s', r.id)) s"
        f" WHERE r.words_counted_at > 0 AND s.ndoc > {STORED_MIN}"
    )


def downgrade() -> None:
    op.drop_table("repository_code_words")
    op.drop_column("repositories", "code_avg_words")
    op.drop_index("ix_code_chunks_repository_id_code_tsv", table_name="code_chunks")
    op.drop_column("code_chunks", "code_tsv")
