"""Repositories' ivfflat indexes in the catalog: their names, what they were built and
calibrated with, their creation, swap and removal, and the search settings they imply.
The rule they follow is ``app/db/vector_policy.py``; calibration and the trial before a
large build are ``app/db/vector_calibration.py``.

Index runs build, swap and drop indexes ``CONCURRENTLY`` after their commit, one at a
time (``build_lock``), so no other repository waits for a build.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, text

from app.db.queries import release_session_lock, take_session_lock
from app.db.queries.chunks import embedded_rows, vector_width
from app.db.queries.repositories import vector_index_declined_rows
from app.db.vector_policy import DEFAULT_POLICY, VectorIndexPolicy
from app.db.vector_sql import at_width, of_width

INDEX_PREFIX = "ix_code_chunks_embedding_r"
#: An index's comment: its calibrated probes, and since calibration was timed, the times.
_PROBES_COMMENT = re.compile(r"^probes=(\d+)( index_ms=[\d.]+ exact_ms=[\d.]+)?$")
#: The width an index was built for, in its definition (``CREATE INDEX ... halfvec(384)``).
_INDEX_WIDTH = re.compile(r"halfvec\((\d+)\)")
#: The advisory lock that lets one concurrent build (or statistics refresh) run at a time.
BUILD_LOCK = "reviewbot:vector-index-build"
#: How long a build waits for that lock, and for older transactions to end.
BUILD_WAIT_SECONDS = 900


def index_name(repo_id: int) -> str:
    return f"{INDEX_PREFIX}{int(repo_id)}"


def building_name(repo_id: int) -> str:
    """The name a rebuilt index has until it replaces the old one."""
    return f"{index_name(repo_id)}_new"


def current_lists(conn: Connection, repo_id: int) -> int | None:
    """The ``lists`` of the repository's index, or None when it has none."""
    found = index_settings(conn, repo_id)
    return found[0] if found else None


def index_settings(conn: Connection, repo_id: int) -> tuple[int, int | None] | None:
    """The repository's index: its ``lists`` and calibrated ``probes`` (None: not yet
    calibrated), or None when it has no index. Between a concurrent rebuild's two steps
    (the old index dropped, the new one not yet renamed) the new one is the index."""
    found = index_comment(conn, repo_id)
    return None if found is None else found[:2]


def index_comment(conn: Connection, repo_id: int) -> tuple[int, int | None, bool] | None:
    """``index_settings``, and whether its calibration was timed."""
    row = conn.execute(
        text(
            "SELECT coalesce(c.reloptions, '{}'), obj_description(c.oid, 'pg_class')"
            " FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
            " WHERE c.relname IN (:name, :building) AND i.indisvalid"
            " ORDER BY c.relname = :name DESC LIMIT 1"
        ),
        {"name": index_name(repo_id), "building": building_name(repo_id)},
    ).one_or_none()
    if row is None:
        return None
    options, comment = row
    lists = 1
    for option in options:
        key, _, value = option.partition("=")
        if key == "lists":
            lists = int(value)
    calibrated = _PROBES_COMMENT.match(comment or "")
    if calibrated is None:
        return lists, None, False
    return lists, int(calibrated.group(1)), calibrated.group(2) is not None


@contextmanager
def build_lock(
    conn: Connection, wait_seconds: float = BUILD_WAIT_SECONDS, poll_seconds: float = 0.5
) -> Iterator[None]:
    """On an autocommit ``conn``: hold ``BUILD_LOCK``, waiting at most ``wait_seconds``
    for it (then ``TimeoutError``, which a job retries), and as long for any lock the
    work inside waits on (``lock_timeout``).

    A concurrent build waits for every transaction older than it. Another build, or an
    ``ANALYZE`` of ``code_chunks``, waiting for the build's table lock is such a
    transaction, and PostgreSQL ends one of the two as a deadlock; so builds and the index
    run's statistics refresh take turns. The lock is polled with ``pg_try_advisory_lock``
    rather than waited for, since a statement waiting on it is such a transaction too
    (the deadlock the tests caught). A transaction left open longer than the wait fails
    the build instead of wedging it; the next index run builds again."""
    deadline = time.monotonic() + wait_seconds
    while not take_session_lock(conn, BUILD_LOCK, wait_seconds=0):
        if time.monotonic() >= deadline:
            raise TimeoutError(
                f"another vector index build kept the database busy for {wait_seconds:g} s"
            )
        time.sleep(poll_seconds)
    try:
        conn.execute(
            text("SELECT set_config('lock_timeout', :t, false)"), {"t": f"{wait_seconds}s"}
        )
        yield
    finally:
        conn.execute(text("RESET lock_timeout"))
        release_session_lock(conn, BUILD_LOCK)


def rebuild_if_needed(
    conn: Connection,
    repo_id: int,
    *,
    concurrently: bool = False,
    policy: VectorIndexPolicy = DEFAULT_POLICY,
) -> int | None:
    """Create, rebuild or drop the repository's index as ``policy`` says; return its lists
    (None: searched exactly). The new index is built under ``building_name``, then takes
    the old one's place, so searches keep an index throughout.

    ``concurrently`` (``conn`` in autocommit, as an index run uses it, inside
    ``build_lock``): every step is ``CONCURRENTLY``, so no other repository's searches or
    writes wait for the build, which takes minutes at a million rows. Otherwise it runs in
    the caller's transaction: the build blocks writes to ``code_chunks``, and from the
    drop of the old index to commit, reads too."""
    name, building = index_name(repo_id), building_name(repo_id)
    valid: dict[str, bool] = dict(
        conn.execute(
            text(
                "SELECT c.relname, i.indisvalid FROM pg_class c"
                " JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname IN (:name, :building)"
            ),
            {"name": name, "building": building},
        ).all()
    )
    if valid.get(building) and name not in valid:  # a swap cut short (the process died)
        conn.execute(text(f"ALTER INDEX {building} RENAME TO {name}"))
    width = vector_width(conn, repo_id)
    current = current_lists(conn, repo_id)
    lists = policy.wanted_lists(
        current, embedded_rows(conn, repo_id), vector_index_declined_rows(conn, repo_id)
    )
    if width is None:
        lists = None
    if lists == current and (current is None or index_width(conn, repo_id) == width):
        return current
    how = " CONCURRENTLY" if concurrently else ""
    conn.execute(text(f"DROP INDEX{how} IF EXISTS {building}"))  # a failed build's remains
    if lists is not None:
        # k-means samples ~50 vectors a list; the default 64 MB is too little past ~200 lists.
        memory = f"'{policy.build_memory_mb(lists, width or 0)}MB'"
        conn.execute(text(f"SET{'' if concurrently else ' LOCAL'} maintenance_work_mem = {memory}"))
        try:
            conn.execute(text(create_statement(building, repo_id, lists, width or 0, how)))
        finally:
            if concurrently:
                conn.execute(text("RESET maintenance_work_mem"))
    # Fresh statistics, or the planner costs the index from an empty table's numbers.
    conn.execute(text("ANALYZE code_chunks"))
    conn.execute(text(f"DROP INDEX{how} IF EXISTS {name}"))
    if lists is not None:
        conn.execute(text(f"ALTER INDEX {building} RENAME TO {name}"))
    return lists


def create_statement(name: str, repo_id: int, lists: int, width: int, how: str = "") -> str:
    """SQL: the repository's ivfflat index over its vectors of ``width`` dimensions, cast
    as searches cast them (``app/db/vector_sql.py``), so the planner matches the two. Pure."""
    return (
        f"CREATE INDEX{how} {name} ON code_chunks"
        f" USING ivfflat ({at_width('embedding', width)} halfvec_cosine_ops)"
        f" WITH (lists = {int(lists)})"
        f" WHERE repository_id = {int(repo_id)} AND {of_width('embedding', width)}"
    )


def index_width(conn: Connection, repo_id: int) -> int | None:
    """The width the repository's index was built for (None: no index)."""
    definition = conn.execute(
        text(
            "SELECT pg_get_indexdef(c.oid) FROM pg_class c JOIN pg_index i"
            " ON i.indexrelid = c.oid WHERE c.relname = :name AND i.indisvalid"
        ),
        {"name": index_name(repo_id)},
    ).scalar_one_or_none()
    found = _INDEX_WIDTH.search(definition or "")
    return int(found.group(1)) if found else None


def set_probes(
    conn: Connection, repo_id: int, policy: VectorIndexPolicy = DEFAULT_POLICY
) -> int | None:
    """Per transaction: ``ivfflat.probes`` for the repository's index (its policy's
    ``serving_probes``), and plans made for its id (a generic plan could not use a
    partial index). None: searched exactly."""
    conn.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
    found = index_settings(conn, repo_id)
    if found is None:
        return None
    lists, calibrated = found
    probes = policy.serving_probes(lists, calibrated)
    conn.execute(text(f"SET LOCAL ivfflat.probes = {probes}"))
    return probes
