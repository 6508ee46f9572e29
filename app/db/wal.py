"""The write-ahead log of a database whose folder is saved as files (the CI mode's cache):
kept to a few segments, so what is saved is the data, not a gigabyte of recycled log."""

from __future__ import annotations

from sqlalchemy import Engine, text

#: What the log may keep between checkpoints (PostgreSQL's floor is two segments, 32 MB
#: at the default segment size).
KEPT_WAL = "32MB"


def cap_wal(engine: Engine) -> None:
    """Checkpoint whenever ``KEPT_WAL`` of log is written, and keep no more than that
    (``ALTER SYSTEM``: this server's own setting, kept in its data folder). Set before a
    bulk load: a cap set after it leaves the segments already recycled for reuse. Needs
    a superuser, as the embedded server's is."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for name in ("max_wal_size", "min_wal_size"):
            conn.execute(text(f"ALTER SYSTEM SET {name} = '{KEPT_WAL}'"))
        conn.execute(text("SELECT pg_reload_conf()"))


def checkpoint(engine: Engine) -> None:
    """Write everything to the data files and drop the log segments no longer needed."""
    with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        conn.execute(text("CHECKPOINT"))
