"""How the ivfflat index follows the table, following pgvector's advice.

The rule (also in README):

* ``lists`` = rows / 1000 up to 1M rows, sqrt(rows) above; never below 1.
* The index is rebuilt only after data is loaded, and only when the ideal ``lists`` is at
  least twice or at most half the current one, so steady growth does not rebuild on
  every run.
* ``probes`` = sqrt(lists), at least 1, set per query (``SET LOCAL``).
"""

from __future__ import annotations

import math

from sqlalchemy import Connection, text

INDEX_NAME = "ix_code_chunks_embedding_ivfflat"
REBUILD_FACTOR = 2


def ideal_lists(rows: int) -> int:
    """pgvector's recommended ``lists`` for a table of ``rows`` rows."""
    if rows <= 1_000_000:
        return max(1, rows // 1000)
    return math.isqrt(rows)


def build_memory_mb(lists: int, dims: int = 1536) -> int:
    """``maintenance_work_mem`` an ivfflat build with ``lists`` lists needs, with headroom."""
    samples = lists * 50
    return min(4096, max(128, math.ceil(samples * dims * 4 * 1.5 / 2**20)))


def probes_for(lists: int) -> int:
    """How many lists a query scans: sqrt(lists), at least one."""
    return max(1, round(math.sqrt(lists)))


def needs_rebuild(current_lists: int, rows: int) -> bool:
    """True when ``current_lists`` is off the ideal by ``REBUILD_FACTOR`` or more."""
    ideal = ideal_lists(rows)
    return ideal >= current_lists * REBUILD_FACTOR or ideal * REBUILD_FACTOR <= current_lists


def current_lists(conn: Connection) -> int:
    """The ``lists`` the index was built with (1 when the option is absent)."""
    options = conn.execute(
        text("SELECT reloptions FROM pg_class WHERE relname = :name"), {"name": INDEX_NAME}
    ).scalar_one_or_none()
    for option in options or []:
        key, _, value = option.partition("=")
        if key == "lists":
            return int(value)
    return 1


def rebuild_if_needed(conn: Connection) -> int | None:
    """Rebuild the index when the row count has moved past the rule; return the new lists.

    Runs in the caller's transaction: readers keep the old index until commit.
    """
    rows = conn.execute(
        text("SELECT count(*) FROM code_chunks WHERE embedding IS NOT NULL")
    ).scalar_one()
    if not needs_rebuild(current_lists(conn), rows):
        return None
    lists = ideal_lists(rows)
    # k-means samples ~50 vectors a list; the default 64 MB is too little past ~200 lists.
    conn.execute(text(f"SET LOCAL maintenance_work_mem = '{build_memory_mb(lists)}MB'"))
    conn.execute(text(f"DROP INDEX IF EXISTS {INDEX_NAME}"))
    conn.execute(
        text(
            f"CREATE INDEX {INDEX_NAME} ON code_chunks "
            f"USING ivfflat (embedding vector_cosine_ops) WITH (lists = {lists})"
        )
    )
    # Fresh statistics, or the planner costs the new index from an empty table's numbers.
    conn.execute(text("ANALYZE code_chunks"))
    return lists


def set_probes(conn: Connection) -> int:
    """``SET LOCAL ivfflat.probes`` for the current transaction from the index's lists."""
    probes = probes_for(current_lists(conn))
    conn.execute(text(f"SET LOCAL ivfflat.probes = {probes}"))
    return probes
