"""Vectors at their model's own width: MiniLM's 384 dimensions cost 384, not 1536.

* ``code_chunks.embedding`` becomes ``halfvec`` with no width (``STORAGE MAIN`` kept),
  and ``embedding_cache.embedding`` ``vector`` with no width. No row is rewritten by the
  change of type; every 1536-wide vector stays valid and searchable.
* Vectors that were zero-padded to 1536 lose the padding (which changed no cosine
  distance), in the rows and in the cache. A model's width is read from its vectors (the
  cache's ``dims`` held the padded width): the smallest of the usual widths (64 ... 1024)
  beyond which every one of the model's vectors, in both tables, is zero. A model with a
  vector that is not zero beyond 1024 (the hash embedder's, OpenAI's 1536) is unchanged.
* Statistics on each row's width (``vector_dims(embedding)``): searches and indexes keep
  to the rows of one width, and without them the planner takes that filter to keep 0.5%
  of a repository's rows, and sorts them rather than use the index.
* The repositories' ivfflat indexes were over the 1536-wide column; each is made again
  with the same lists and comment (its calibrated probes: the distances did not change),
  over the vectors cast to the repository's width, for the rows of that width, as
  ``app/db/vector_index.py`` now builds them.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from reviewbot_migrations.build_memory import allow_ivfflat_builds

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PADDED_WIDTH = 1536
#: The widths a padded vector may have had (MiniLM's 384, text-embedding-3's shortened).
USUAL_WIDTHS = (64, 128, 256, 384, 512, 768, 1024)
INDEX_PATTERN = "ix\\_code\\_chunks\\_embedding\\_r%"
WIDTH_STATISTICS = "st_code_chunks_vector_width"


def _indexes() -> list[tuple[str, int, int, str | None]]:
    """(name, repository id, lists, comment) of each repository's index."""
    rows = op.get_bind().execute(
        sa.text(
            "SELECT c.relname, coalesce(c.reloptions, '{}'), obj_description(c.oid, 'pg_class')"
            " FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
            " WHERE c.relname LIKE :p AND c.relname NOT LIKE '%\\_new' ORDER BY c.relname"
        ),
        {"p": INDEX_PATTERN},
    )
    found = []
    for name, options, comment in rows:
        lists = next((int(o.split("=")[1]) for o in options if o.startswith("lists=")), 1)
        found.append((name, int(name.rsplit("_r", 1)[1]), lists, comment))
    return found


def _needed_width(norm: str) -> str:
    """SQL: the smallest usual width beyond which the row's vector is all zeros (else its
    whole width)."""
    dims = "vector_dims(embedding)"
    cases = " ".join(
        f"WHEN {dims} <= {w} THEN {dims}"
        f" WHEN {norm}(subvector(embedding, {w + 1}, {dims} - {w})) = 0 THEN {w}"
        for w in USUAL_WIDTHS
    )
    return f"CASE {cases} ELSE {dims} END"


def _comment(name: str, comment: str | None) -> None:
    """Put an index's comment (its calibrated probes) back; COMMENT takes no parameters."""
    if comment:
        quoted = comment.replace("'", "''")
        op.execute(f"COMMENT ON INDEX {name} IS '{quoted}'")


def _drop_indexes() -> None:
    op.execute(
        "DO $$ DECLARE name text; BEGIN FOR name IN SELECT indexname FROM pg_indexes"
        f" WHERE tablename = 'code_chunks' AND indexname LIKE '{INDEX_PATTERN}'"
        " LOOP EXECUTE format('DROP INDEX %I', name); END LOOP; END $$"
    )


def upgrade() -> None:
    bind = op.get_bind()
    indexes = _indexes()
    _drop_indexes()
    op.execute(
        "ALTER TABLE code_chunks ALTER COLUMN embedding TYPE halfvec,"
        " ALTER COLUMN embedding SET STORAGE MAIN"
    )
    op.execute("ALTER TABLE embedding_cache ALTER COLUMN embedding TYPE vector")
    op.execute(f"CREATE STATISTICS {WIDTH_STATISTICS} ON (vector_dims(embedding)) FROM code_chunks")
    widths: dict[str, int] = {}
    for table, norm in (("code_chunks", "l2_norm"), ("embedding_cache", "vector_norm")):
        model = "embedding_model" if table == "code_chunks" else "model"
        found = bind.execute(
            sa.text(
                f"SELECT {model}, max({_needed_width(norm)}) FROM {table}"
                f" WHERE embedding IS NOT NULL AND {model} IS NOT NULL GROUP BY {model}"
            )
        )
        for name, width in found.all():
            widths[name] = max(widths.get(name, 0), int(width))
    for model, width in sorted(widths.items()):
        if width >= PADDED_WIDTH:
            continue
        for table, column in (("code_chunks", "embedding_model"), ("embedding_cache", "model")):
            extra = ", dims = :w" if table == "embedding_cache" else ""
            bind.execute(
                sa.text(
                    f"UPDATE {table} SET embedding = subvector(embedding, 1, :w){extra}"
                    f" WHERE {column} = :m AND vector_dims(embedding) > :w"
                ),
                {"m": model, "w": width},
            )
    allow_ivfflat_builds(bind, max((lists for _, _, lists, _ in indexes), default=0))
    for name, repo_id, lists, comment in indexes:
        width = bind.execute(
            sa.text(
                "SELECT vector_dims(embedding) FROM code_chunks WHERE repository_id = :r"
                " AND embedding IS NOT NULL LIMIT 1"
            ),
            {"r": repo_id},
        ).scalar_one_or_none()
        if width is None:
            continue
        op.execute(
            f"CREATE INDEX {name} ON code_chunks"
            f" USING ivfflat (((embedding)::halfvec({int(width)})) halfvec_cosine_ops)"
            f" WITH (lists = {int(lists)})"
            f" WHERE repository_id = {int(repo_id)} AND vector_dims(embedding) = {int(width)}"
        )
        _comment(name, comment)
    op.execute("ANALYZE code_chunks")  # the width statistics, and the indexes' expressions


def downgrade() -> None:
    indexes = _indexes()
    _drop_indexes()
    op.execute(f"DROP STATISTICS IF EXISTS {WIDTH_STATISTICS}")
    for table, kind in (("code_chunks", "halfvec"), ("embedding_cache", "vector")):
        op.execute(
            f"UPDATE {table} SET embedding = CAST(CAST(CAST(embedding AS vector) AS real[])"
            f" || array_fill(CAST(0 AS real), ARRAY[{PADDED_WIDTH} - vector_dims(embedding)])"
            f" AS {kind}) WHERE vector_dims(embedding) < {PADDED_WIDTH}"
        )
    op.execute(
        f"ALTER TABLE code_chunks ALTER COLUMN embedding TYPE halfvec({PADDED_WIDTH}),"
        " ALTER COLUMN embedding SET STORAGE MAIN"
    )
    op.execute(f"ALTER TABLE embedding_cache ALTER COLUMN embedding TYPE vector({PADDED_WIDTH})")
    allow_ivfflat_builds(op.get_bind(), max((lists for _, _, lists, _ in indexes), default=0))
    for name, repo_id, lists, comment in indexes:
        op.execute(
            f"CREATE INDEX {name} ON code_chunks USING ivfflat (embedding halfvec_cosine_ops)"
            f" WITH (lists = {int(lists)}) WHERE repository_id = {int(repo_id)}"
        )
        _comment(name, comment)
