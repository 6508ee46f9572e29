"""The memory a migration must allow itself before it builds the repositories' ivfflat
indexes, or rewrites ``code_chunks`` (which rebuilds every index on it).

pgvector refuses an ivfflat build whose k-means does not fit in ``maintenance_work_mem``
("memory required is 99 MB, maintenance_work_mem is 64 MB": a repository of 66,000
chunks, 660 lists, under PostgreSQL's default), so without this a migration failed on
exactly the databases worth keeping. The rule is ``app/db/vector_policy.py``'s
``build_memory_mb`` as it stood at 0020; migrations use this copy, never the app's.
"""

from __future__ import annotations

import math

import sqlalchemy as sa
from sqlalchemy import Connection

#: the most a build is given (``VectorIndexPolicy.build_memory_cap_mb``)
CAP_MB = 4096
WIDEST = 1536  # the widest vector a row holds


def build_memory_mb(lists: int, dims: int = WIDEST) -> int:
    """``maintenance_work_mem`` (MB) an ivfflat build of ``lists`` lists needs, with
    headroom: 50 sample vectors a list and a float per sample and list."""
    samples = lists * 50
    needed = samples * (dims * 4 + lists * 4) + lists * lists * 4
    return min(CAP_MB, max(128, math.ceil(needed * 1.2 / 2**20)))


def largest_lists(bind: Connection) -> int:
    """The most lists of any ivfflat index on ``code_chunks`` (0: none)."""
    options = bind.execute(
        sa.text(
            "SELECT coalesce(c.reloptions, '{}') FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam"
            " WHERE i.indrelid = 'code_chunks'::regclass AND a.amname = 'ivfflat'"
        )
    ).scalars()
    found = [int(o.split("=", 1)[1]) for opts in options for o in opts if o.startswith("lists=")]
    return max(found, default=0)


def allow_ivfflat_builds(bind: Connection, lists: int) -> None:
    """Raise ``maintenance_work_mem`` for the rest of the migration's transaction to what
    a build of ``lists`` lists needs; never lower it."""
    if lists <= 0:
        return
    needed = build_memory_mb(lists)
    current_kb = bind.execute(
        sa.text("SELECT setting::bigint FROM pg_settings WHERE name = 'maintenance_work_mem'")
    ).scalar_one()
    if needed * 1024 > current_kb:
        bind.execute(sa.text(f"SET LOCAL maintenance_work_mem = '{int(needed)}MB'"))
