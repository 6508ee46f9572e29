"""Vectors as float16, in the row, and indexed per repository.

* ``code_chunks.embedding`` becomes ``halfvec(1536)`` with ``STORAGE MAIN``: half the
  bytes, and kept in the row instead of TOAST, so an exact scan of a repository's rows
  does not fetch each vector from the TOAST table. Existing vectors are converted.
* The one ivfflat index over every repository's vectors gives way to a partial ivfflat
  index for each repository above 2,000 embedded chunks (the rule of the day, frozen
  here: a migration does not import the application); smaller repositories are searched
  exactly. Existing large repositories get their index here, 100 rows a list, at most
  1,000 lists; the next index run of each calibrates it (``app/db/vector_index.py``).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from reviewbot_migrations.build_memory import allow_ivfflat_builds

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GLOBAL_INDEX = "ix_code_chunks_embedding_ivfflat"
EXACT_MAX_ROWS, ROWS_PER_LIST, MAX_LISTS = 2_000, 100, 1_000


def upgrade() -> None:
    op.execute(f"DROP INDEX IF EXISTS {GLOBAL_INDEX}")
    op.execute(
        "ALTER TABLE code_chunks ALTER COLUMN embedding TYPE halfvec(1536)"
        " USING embedding::halfvec(1536), ALTER COLUMN embedding SET STORAGE MAIN"
    )
    sizes = op.get_bind().execute(
        sa.text(
            "SELECT repository_id, count(*) FROM code_chunks WHERE embedding IS NOT NULL"
            " GROUP BY repository_id HAVING count(*) > :n ORDER BY repository_id"
        ),
        {"n": EXACT_MAX_ROWS},
    )
    wanted = [(repo_id, max(1, min(MAX_LISTS, rows // ROWS_PER_LIST))) for repo_id, rows in sizes]
    allow_ivfflat_builds(op.get_bind(), max((lists for _, lists in wanted), default=0))
    for repo_id, lists in wanted:
        op.execute(
            f"CREATE INDEX ix_code_chunks_embedding_r{int(repo_id)} ON code_chunks"
            f" USING ivfflat (embedding halfvec_cosine_ops) WITH (lists = {lists})"
            f" WHERE repository_id = {int(repo_id)}"
        )


def downgrade() -> None:
    op.execute(
        "DO $$ DECLARE name text; BEGIN FOR name IN SELECT indexname FROM pg_indexes"
        " WHERE tablename = 'code_chunks' AND indexname LIKE 'ix\\_code\\_chunks\\_embedding\\_r%'"
        " LOOP EXECUTE format('DROP INDEX %I', name); END LOOP; END $$"
    )
    op.execute(
        "ALTER TABLE code_chunks ALTER COLUMN embedding TYPE vector(1536)"
        " USING embedding::vector(1536), ALTER COLUMN embedding SET STORAGE EXTERNAL"
    )
    op.execute(
        f"CREATE INDEX {GLOBAL_INDEX} ON code_chunks"
        " USING ivfflat (embedding vector_cosine_ops) WITH (lists = 1)"
    )
