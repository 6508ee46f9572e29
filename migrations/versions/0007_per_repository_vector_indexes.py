"""Vectors as float16, in the row, and indexed per repository.

* ``code_chunks.embedding`` becomes ``halfvec(1536)`` with ``STORAGE MAIN``: half the
  bytes, and kept in the row instead of TOAST, so an exact scan of a repository's rows
  does not fetch each vector from the TOAST table. Existing vectors are converted.
* The one ivfflat index over every repository's vectors gives way to a partial ivfflat
  index for each repository above ``app.db.vector_index.EXACT_MAX_ROWS`` chunks; smaller
  repositories are searched exactly. Existing large repositories get their index here.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence

from alembic import op

from app.db.vector_index import index_repositories

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

GLOBAL_INDEX = "ix_code_chunks_embedding_ivfflat"


def upgrade() -> None:
    op.execute(f"DROP INDEX IF EXISTS {GLOBAL_INDEX}")
    op.execute(
        "ALTER TABLE code_chunks ALTER COLUMN embedding TYPE halfvec(1536)"
        " USING embedding::halfvec(1536), ALTER COLUMN embedding SET STORAGE MAIN"
    )
    # not declined: the column that records it comes with 0012
    index_repositories(op.get_bind(), decline=False)


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
