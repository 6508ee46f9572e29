"""``history_commits`` and ``history_changes``: what each mined commit changed."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Connection, text

#: A commit's weight doubles for every this many days it is newer: a fixed origin instead
#: of "now", so weights can be stored; the co-change score is a ratio of weight sums, in
#: which the origin cancels out.
HALF_LIFE_DAYS = 365.0
_ORIGIN = datetime(2000, 1, 1, tzinfo=UTC)


def commit_weight(committed_at: int, symbols: int) -> float:
    """What one commit counts for: more the newer it is, less the more it changed."""
    days = (datetime.fromtimestamp(committed_at, UTC) - _ORIGIN).total_seconds() / 86400
    return float(2 ** (days / HALF_LIFE_DAYS) / math.log(2 + symbols))


@dataclass(frozen=True)
class ChangeSet:
    """What one commit changed: files (``qualified_name`` '') and the definitions in
    them, as ``(path, qualified name)``."""

    sha: str
    committed_at: int  # unix seconds
    changes: tuple[tuple[str, str], ...]

    @property
    def symbols(self) -> int:
        return sum(1 for _, name in self.changes if name)


def history_head(conn: Connection, repo_id: int) -> str | None:
    """The newest commit mined, or None."""
    return conn.execute(
        text("SELECT history_commit FROM repositories WHERE id = :r"), {"r": repo_id}
    ).scalar()


def newest_mined(conn: Connection, repo: str) -> datetime | None:
    """When the newest mined commit of ``repo`` was made, or None."""
    return conn.execute(
        text(
            "SELECT max(h.committed_at) FROM history_commits h JOIN repositories r"
            " ON r.id = h.repository_id WHERE r.full_name = :n"
        ),
        {"n": repo},
    ).scalar()


def set_history_head(conn: Connection, repo_id: int, sha: str | None) -> None:
    conn.execute(
        text("UPDATE repositories SET history_commit = :s WHERE id = :r"),
        {"r": repo_id, "s": sha},
    )


def forget_history(conn: Connection, repo_id: int) -> None:
    """Drop the repository's mined history (its changes go by cascade)."""
    conn.execute(text("DELETE FROM history_commits WHERE repository_id = :r"), {"r": repo_id})
    conn.execute(text("DELETE FROM history_symbols WHERE repository_id = :r"), {"r": repo_id})
    set_history_head(conn, repo_id, None)


def store_change_sets(conn: Connection, repo_id: int, sets: Sequence[ChangeSet]) -> int:
    """Record commits not recorded yet, with their changes; how many were new. A commit
    already there (a run that was interrupted and started again) is left as it is."""
    if not sets:
        return 0
    rows = conn.execute(
        text(
            "INSERT INTO history_commits (repository_id, sha, committed_at, symbols, weight)"
            " SELECT :r, s.sha, s.at, s.n, s.w FROM unnest(CAST(:shas AS text[]),"
            " CAST(:ats AS timestamptz[]), CAST(:ns AS int[]), CAST(:ws AS float8[]))"
            " AS s(sha, at, n, w)"
            " ON CONFLICT (repository_id, sha) DO NOTHING RETURNING id, sha"
        ),
        {
            "r": repo_id,
            "shas": [s.sha for s in sets],
            "ats": [datetime.fromtimestamp(s.committed_at, UTC) for s in sets],
            "ns": [s.symbols for s in sets],
            "ws": [commit_weight(s.committed_at, s.symbols) for s in sets],
        },
    ).all()
    ids = {sha: commit_id for commit_id, sha in rows}
    new = [s for s in sets if s.sha in ids]
    dbapi = conn.connection.driver_connection
    assert dbapi is not None
    with (
        dbapi.cursor() as cur,
        cur.copy(
            "COPY history_changes (commit_id, repository_id, file_path, qualified_name) FROM STDIN"
        ) as copy,
    ):
        for change_set in new:
            for path, name in change_set.changes:
                copy.write_row((ids[change_set.sha], repo_id, path, name))
    return len(new)


def prune_history(conn: Connection, repo_id: int, keep: int) -> int:
    """Keep the newest ``keep`` commits; how many older ones were dropped."""
    return conn.execute(
        text(
            "DELETE FROM history_commits WHERE repository_id = :r AND id NOT IN"
            " (SELECT id FROM history_commits WHERE repository_id = :r"
            "  ORDER BY committed_at DESC, id DESC LIMIT :k)"
        ),
        {"r": repo_id, "k": keep},
    ).rowcount


def refresh_symbol_totals(conn: Connection, repo_id: int) -> None:
    """Each file's and definition's summed commit weight and count, over the history
    kept (a few thousand rows: rebuilt whole after each mine)."""
    conn.execute(text("DELETE FROM history_symbols WHERE repository_id = :r"), {"r": repo_id})
    conn.execute(
        text(
            "INSERT INTO history_symbols (repository_id, file_path, qualified_name, weight,"
            " commits) SELECT :r, h.file_path, h.qualified_name, sum(c.weight), count(*)"
            " FROM history_changes h JOIN history_commits c ON c.id = h.commit_id"
            " WHERE h.repository_id = :r GROUP BY h.file_path, h.qualified_name"
        ),
        {"r": repo_id},
    )


def analyze_history(conn: Connection) -> None:
    """Fresh planner statistics for the history tables (a first mine fills them from
    nothing: without them every join is planned for one row)."""
    conn.execute(text("ANALYZE history_commits, history_changes, history_symbols"))
