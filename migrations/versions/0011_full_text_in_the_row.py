"""Full-text vectors kept in the row, not in TOAST.

Since 0007 a row holds its 3 KB float16 vector inline (``STORAGE MAIN``), so a row is
always over the TOAST threshold and the toaster moved every other long-able column out,
``search_tsv`` included. The full-text statement then read each match from TOAST (about
five buffer reads a row): on an 80,000-chunk repository one query of 5,174 matches took
57 ms, and 23 ms with ``search_tsv`` in the row (bench/RESULTS.md). ``STORAGE MAIN`` keeps
it in the row unless the row would not fit on a page.

Only the column's setting changes here, so the upgrade is instant: a chunk's row moves
when it is next written, that is when its code changes. Rewriting every row here took about
13 minutes at a million chunks (each row re-inserted into every index, the ivfflat ones
included), and the app does not serve while it migrates.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-02
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE code_chunks ALTER COLUMN search_tsv SET STORAGE MAIN")


def downgrade() -> None:
    op.execute("ALTER TABLE code_chunks ALTER COLUMN search_tsv SET STORAGE EXTENDED")
