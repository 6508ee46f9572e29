"""The average length of a repository's code counts every occurrence of a word, as the
words signal's BM25 now measures a chunk (``app/db/code_words.occurrences_sql``); it was
the average number of distinct words.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-05
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_AVERAGE = """
UPDATE repositories r SET code_avg_words = coalesce(a.code, 0)
FROM (SELECT c.repository_id, avg({length}) AS code FROM code_chunks c
      GROUP BY c.repository_id) a
WHERE a.repository_id = r.id
"""
_REPEATS = (
    "(SELECT coalesce(sum(coalesce(array_length(o.positions, 1), 1)), 0) FROM unnest(c.code_tsv) o)"
)


def upgrade() -> None:
    # the expression is written out: a migration does not change when the app's code does
    op.execute(_AVERAGE.format(length=_REPEATS))


def downgrade() -> None:
    op.execute(_AVERAGE.format(length="length(c.code_tsv)"))
