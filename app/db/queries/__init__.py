"""Named queries, one module per table or concern; routes and flows call these
functions rather than writing SQL of their own."""

from __future__ import annotations

from sqlalchemy import Connection, text
from sqlalchemy.exc import OperationalError


def where(*conditions: tuple[bool, str]) -> str:
    """``WHERE`` with the SQL of each condition whose flag is true, joined by ``AND``.

    Optional filters are left out of the statement rather than written as ``:p IS NULL
    OR ...``, which a generic plan cannot use an index for.
    """
    return "WHERE " + (" AND ".join(sql for used, sql in conditions if used) or "TRUE")


def lock_until_commit(conn: Connection, key: str) -> None:
    """Hold the advisory lock named ``key`` until the transaction ends."""
    conn.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": key})


def take_session_lock(conn: Connection, key: str, wait_seconds: float) -> bool:
    """Take the session advisory lock ``key``, waiting up to ``wait_seconds`` (not at all
    when 0); False when another session holds it."""
    if wait_seconds <= 0:
        got = conn.execute(text("SELECT pg_try_advisory_lock(hashtext(:k))"), {"k": key}).scalar()
        conn.commit()
        return bool(got)
    try:
        conn.execute(
            text("SELECT set_config('lock_timeout', :t, false)"),
            {"t": f"{int(wait_seconds * 1000)}ms"},
        )
        conn.execute(text("SELECT pg_advisory_lock(hashtext(:k))"), {"k": key})
        return True
    except OperationalError as exc:
        if getattr(exc.orig, "sqlstate", None) != "55P03":  # lock_not_available
            raise
        conn.rollback()
        return False
    finally:
        if conn.in_transaction():
            conn.commit()
        conn.execute(text("SELECT set_config('lock_timeout', '0', false)"))
        conn.commit()


def release_session_lock(conn: Connection, key: str) -> None:
    conn.execute(text("SELECT pg_advisory_unlock(hashtext(:k))"), {"k": key})
    conn.commit()
