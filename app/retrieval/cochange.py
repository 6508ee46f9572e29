"""The history signal: code that changed together with a changed function before.

For each changed function, the commits that changed it (or, when it has no history of
its own, its file) and the definitions in other files those commits changed too
(logical coupling). A commit counts more the newer it is and the fewer definitions it
changed (its stored weight, ``app/db/queries/history.py``: a commit of 40 changes says
less about each pair than one of 3). The score is the weighted count of shared commits
over the geometric mean of each side's own weighted count (``history_symbols``): code
that always changes with the function scores 1, code that changed with it once among
many changes of its own scores little. One statement for all the functions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text

from app.db.chunk_types import ChunkType
from app.diff.changed import ChangedFunction

#: The newest commits of a function or file that are looked at.
MAX_OWN_COMMITS = 200
#: A coupling through the file rather than the function itself counts for this much.
FILE_LEVEL_WEIGHT = 0.5
#: Pairs scored per function, at most (times the signal's depth): the most shared
#: weight first.
PAIRS_SCORED = 2


@dataclass(frozen=True)
class CoChangeHit:
    chunk_id: int
    score: float
    together: int  # commits that changed both
    exact: bool  # coupled to the function itself, not only to its file


_STATEMENT = f"""
WITH q AS (
  SELECT * FROM unnest(CAST(:fns AS int[]), CAST(:paths AS text[]), CAST(:names AS text[]))
    AS q(fn, path, name)
), own AS (
  SELECT q.fn, q.path, o.commit_id, o.exact, o.w
  FROM q CROSS JOIN LATERAL (
    SELECT h.commit_id, bool_or(h.qualified_name = q.name) AS exact, max(c.weight) AS w
    FROM history_changes h JOIN history_commits c ON c.id = h.commit_id
    WHERE h.repository_id = :r AND h.file_path = q.path AND h.qualified_name IN (q.name, '')
    GROUP BY h.commit_id ORDER BY max(c.committed_at) DESC LIMIT {MAX_OWN_COMMITS}
  ) o
), totals AS (
  SELECT fn, sum(w) FILTER (WHERE exact) AS fn_w, sum(w) AS file_w FROM own GROUP BY fn
), pairs AS (
  SELECT own.fn, o.file_path, o.qualified_name,
    sum(own.w) FILTER (WHERE own.exact) AS with_fn, count(*) FILTER (WHERE own.exact) AS n_fn,
    sum(own.w) AS with_file, count(*) AS n_file
  FROM own JOIN history_changes o ON o.commit_id = own.commit_id
    AND o.qualified_name <> '' AND o.file_path <> own.path
  GROUP BY own.fn, o.file_path, o.qualified_name
), ranked AS (
  SELECT *, row_number() OVER (PARTITION BY fn
    ORDER BY coalesce(with_fn, 0) DESC, with_file DESC, file_path COLLATE "C",
      qualified_name COLLATE "C") AS n
  FROM pairs
), kept AS MATERIALIZED (
  SELECT * FROM ranked WHERE n <= :keep
), chunk AS (
  SELECT DISTINCT ON (c.file_path COLLATE "C", c.qualified_name COLLATE "C")
    c.id, c.file_path, c.qualified_name
  FROM code_chunks c
  WHERE c.repository_id = :r AND c.file_path IN (SELECT DISTINCT file_path FROM kept)
    AND c.chunk_type <> 'module' AND NOT (c.id = ANY(CAST(:ex AS bigint[])))
  ORDER BY c.file_path COLLATE "C", c.qualified_name COLLATE "C", c.start_line
)
SELECT p.fn, chunk.id, p.with_fn, p.n_fn, p.with_file, p.n_file, t.fn_w, t.file_w, s.weight
FROM kept p JOIN totals t ON t.fn = p.fn
JOIN history_symbols s ON s.repository_id = :r AND s.file_path = p.file_path
  AND s.qualified_name = p.qualified_name
JOIN chunk ON chunk.file_path = p.file_path AND chunk.qualified_name = p.qualified_name
"""


def cochanged(
    conn: Connection,
    repo_id: int,
    functions: Sequence[ChangedFunction],
    exclude: Sequence[int],
    k: int,
) -> list[list[CoChangeHit]]:
    """For each function, the ``k`` chunks that most often changed with it, best first."""
    named = [
        (fn, f.file_path, f.qualified_name or "")
        for fn, f in enumerate(functions)
        if f.chunk.chunk_type != ChunkType.MODULE
    ]
    found: list[list[CoChangeHit]] = [[] for _ in functions]
    if not named:
        return found
    rows = conn.execute(
        text(_STATEMENT),
        {
            "r": repo_id,
            "fns": [fn for fn, _, _ in named],
            "paths": [path for _, path, _ in named],
            "names": [name for _, _, name in named],
            "ex": list(exclude),
            "keep": k * PAIRS_SCORED,
        },
    ).all()
    for fn, chunk_id, with_fn, n_fn, with_file, n_file, fn_w, file_w, other_w in rows:
        hit = coupling(with_fn, n_fn, with_file, n_file, fn_w, file_w, other_w)
        if hit is not None:
            found[fn].append(CoChangeHit(chunk_id, *hit))
    return [sorted(hits, key=lambda h: (-h.score, h.chunk_id))[:k] for hits in found]


def coupling(
    with_fn: float | None,
    n_fn: int,
    with_file: float,
    n_file: int,
    fn_w: float | None,
    file_w: float,
    other_w: float | None,
) -> tuple[float, int, bool] | None:
    """(score, commits together, exact) of one pair; None when there is nothing. Pure."""
    other = float(other_w or 0.0)
    if other <= 0:
        return None
    if n_fn and with_fn and fn_w:
        return float(with_fn) / math.sqrt(float(fn_w) * other), n_fn, True
    if n_file and file_w:
        score = FILE_LEVEL_WEIGHT * float(with_file) / math.sqrt(float(file_w) * other)
        return score, n_file, False
    return None
