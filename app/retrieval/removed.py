"""The removed signal: code that still uses what a change removed. When a change stops
calling a function or naming a type (a migration from one API to another, a rename, a
removed helper), the other places that call it are where the same change is likely due,
or was forgotten. Only rare names count (a name in more than ``RARE_SHARE`` of the
repository's chunks is everywhere and says nothing); each scores by its inverse document
frequency. One statement for all the changed functions, through the GIN index on
``code_chunks.references``."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, text

from app.diff.changed import ChangedFunction
from app.diff.parse import FileDiff
from app.retrieval.natural_queries import diff_identifiers

#: Removed names searched for per function, at most.
MAX_NAMES = 20
#: A name in more chunks than this share (and more than ``RARE_MIN``) is not rare.
RARE_SHARE = 0.01
RARE_MIN = 3


def removed_names(function: ChangedFunction, diffs: Sequence[FileDiff]) -> list[str]:
    """The identifiers on the function's removed lines that its added lines no longer
    have."""
    diff = next((d for d in diffs if d.path == function.file_path), None)
    if diff is None:
        return []
    _, removed = diff_identifiers(function, diff)
    return removed[:MAX_NAMES]


def still_using(
    conn: Connection,
    repo_id: int,
    names: Sequence[Sequence[str]],
    exclude: Sequence[int],
    chunks_total: int,
    k: int,
) -> list[list[tuple[int, float]]]:
    """For each function's removed ``names``, the chunks that still use the rare ones,
    best first (summed inverse document frequency)."""
    pairs = [(fn, name) for fn, found in enumerate(names) for name in dict.fromkeys(found)]
    result: list[list[tuple[int, float]]] = [[] for _ in names]
    if not pairs:
        return result
    limit = max(RARE_MIN, int(RARE_SHARE * chunks_total))
    rows = conn.execute(
        text(
            """
WITH q AS (
  SELECT * FROM unnest(CAST(:fns AS int[]), CAST(:names AS text[])) AS q(fn, name)
), used AS (
  SELECT n.name, m.id FROM (SELECT DISTINCT name FROM q) n CROSS JOIN LATERAL (
    SELECT c.id FROM code_chunks c
    WHERE c.repository_id = :r AND c."references" @> ARRAY[n.name]
      AND NOT (c.id = ANY(CAST(:ex AS bigint[])))
    LIMIT :over
  ) m
), rare AS (
  SELECT name, count(*) AS n FROM used GROUP BY name HAVING count(*) <= :limit
)
SELECT q.fn, u.id, sum(ln(1 + CAST(:total AS float8) / r.n)) AS score
FROM q JOIN rare r ON r.name = q.name JOIN used u ON u.name = q.name
GROUP BY q.fn, u.id ORDER BY q.fn, score DESC, u.id
"""
        ),
        {
            "r": repo_id,
            "fns": [fn for fn, _ in pairs],
            "names": [name for _, name in pairs],
            "ex": list(exclude),
            "limit": limit,
            "over": limit + 1,
            "total": max(chunks_total, 1),
        },
    ).all()
    for fn, chunk_id, score in rows:
        if len(result[fn]) < k:
            result[fn].append((chunk_id, float(score)))
    return result
