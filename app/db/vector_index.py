"""Which repositories get an ivfflat index, and how it follows their size.

Every repository's chunks live in one ``code_chunks`` table; vector search is always
filtered to one repository. Measured at a million chunks (bench/RESULTS.md, "Vector
search at a million chunks"), one index over all repositories served that filter badly
(approximate search among other repositories' vectors), so the rule is per repository:

* A repository with at most ``EXACT_MAX_ROWS`` embedded chunks has no vector index: an
  exact scan of its rows (found through the ``repository_id`` b-tree) has recall 1 and is
  as fast or faster at that size. With the rule below, a query probes 2/sqrt(rows/1000)
  of the lists (45% at 20,000 rows), and queries land in lists two to four times the
  mean, so below about 20,000 rows the index reads as many vectors as a scan: on zod's
  12,131 chunks a scan took 22 ms and the index (7 of 12 lists) 39 ms; in 51,000 to 80,000
  chunk repositories the index was 2.5 times faster (104-171 ms against 267-467 ms).
* A larger repository gets its own partial ivfflat cosine index (``WHERE repository_id =
  N``), so a query scans only its own vectors. It is dropped again below half the
  threshold, so a repository near the line does not flap.
* ``lists`` = rows / 1000 up to 1M rows, sqrt(rows) above (pgvector's advice); an index is
  rebuilt only after data is loaded, and only when the ideal ``lists`` is at least twice or
  at most half the current one.
* ``probes`` is calibrated on the repository's own vectors when its index is built: the
  fewest with which the index finds ``CALIBRATION_RECALL`` of the exact 10 nearest
  neighbours of queries made from a sample of its rows, at most ``PROBES_FACTOR`` x
  sqrt(lists) (pgvector's sqrt(lists) alone measured recall@10 0.973 in 50k+
  repositories, twice that 1.0). The value is the index's comment, so it lives and dies
  with the index; an index without one (built before) uses the upper bound until its
  next index run calibrates it. How many probes recall needs depends on the data: at
  100,000 clustered chunks 4 of 100 lists found what 20 did; at 1M, 8 of 1,000 lists
  found 0.85 (bench/RESULTS.md).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable

from sqlalchemy import Connection, text

from app.db.models import EMBEDDING_DIMS

INDEX_PREFIX = "ix_code_chunks_embedding_r"
#: How vectors are stored, indexed and compared: float16 (migration 0007 says why).
SEARCH_TYPE = f"halfvec({EMBEDDING_DIMS})"
REBUILD_FACTOR = 2
#: Repositories up to this many embedded chunks are searched exactly (no index).
EXACT_MAX_ROWS = 20_000
PROBES_FACTOR = 2
#: The recall@10 against exact search a calibrated ``probes`` must reach on the sample.
CALIBRATION_RECALL = 0.99
#: Queries made from the repository's rows to calibrate ``probes``.
CALIBRATION_SAMPLES = 16
#: How far a calibration query is pulled from its row towards another row.
CALIBRATION_PULL = 0.8
_PROBES_COMMENT = re.compile(r"^probes=(\d+)$")


def cosine_distance(column: str, query: str) -> str:
    """SQL: the cosine distance the indexes serve, between a column and a query vector."""
    return f"({column} <=> ({query})::{SEARCH_TYPE})"


def index_name(repo_id: int) -> str:
    return f"{INDEX_PREFIX}{int(repo_id)}"


def ideal_lists(rows: int) -> int:
    """pgvector's recommended ``lists`` for an index over ``rows`` rows."""
    if rows <= 1_000_000:
        return max(1, rows // 1000)
    return math.isqrt(rows)


def build_memory_mb(lists: int, dims: int = 1536) -> int:
    """``maintenance_work_mem`` an ivfflat build with ``lists`` lists needs, with headroom."""
    samples = lists * 50
    return min(4096, max(128, math.ceil(samples * dims * 4 * 1.5 / 2**20)))


def probes_for(lists: int) -> int:
    """How many lists a query scans: ``PROBES_FACTOR`` x sqrt(lists), within 1 .. lists."""
    return min(lists, max(1, round(PROBES_FACTOR * math.sqrt(lists))))


def wanted_lists(current: int | None, rows: int) -> int | None:
    """The lists a repository's index should have now: ``current`` (None: no index) kept
    unless ``rows`` crossed the threshold or moved the ideal by ``REBUILD_FACTOR``."""
    if current is None:
        return ideal_lists(rows) if rows > EXACT_MAX_ROWS else None
    if rows < EXACT_MAX_ROWS // 2:
        return None
    ideal = ideal_lists(rows)
    if ideal >= current * REBUILD_FACTOR or ideal * REBUILD_FACTOR <= current:
        return ideal
    return current


def current_lists(conn: Connection, repo_id: int) -> int | None:
    """The ``lists`` of the repository's index, or None when it has none."""
    found = index_settings(conn, repo_id)
    return found[0] if found else None


def index_settings(conn: Connection, repo_id: int) -> tuple[int, int | None] | None:
    """The repository's index: its ``lists`` and calibrated ``probes`` (None: not yet
    calibrated), or None when it has no index."""
    row = conn.execute(
        text(
            "SELECT coalesce(reloptions, '{}'), obj_description(oid, 'pg_class') FROM pg_class"
            " WHERE relname = :name"
        ),
        {"name": index_name(repo_id)},
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
    return lists, int(calibrated.group(1)) if calibrated else None


def smallest_probes(lists: int, recall_at: Callable[[int], float], target: float) -> int:
    """The fewest probes, up to ``probes_for(lists)``, whose ``recall_at`` reaches
    ``target`` (recall grows with probes); the upper bound when none does. Pure."""
    low, high = 1, probes_for(lists)
    if recall_at(high) < target:
        return high
    while low < high:
        middle = (low + high) // 2
        if recall_at(middle) >= target:
            high = middle
        else:
            low = middle + 1
    return low


def calibrate_probes(conn: Connection, repo_id: int, lists: int) -> int:
    """Find and store (as the index's comment) the probes the repository's index needs:
    ``smallest_probes`` over the exact neighbours of ``CALIBRATION_SAMPLES`` queries made
    from its rows. A query is a row pulled towards another (``calibration_query``): a
    review's query is near the code it is about, not on it, and a row searched for itself
    needed fewer probes than such queries (recall 0.95 on shape B at what it chose)."""
    rows = conn.execute(
        text(
            "SELECT embedding::text FROM code_chunks WHERE repository_id = :r"
            " AND embedding IS NOT NULL ORDER BY md5(id::text) LIMIT :n"
        ),
        {"r": repo_id, "n": CALIBRATION_SAMPLES + 1},
    ).scalars()
    vectors = [_parse(v) for v in rows]
    queries = [calibration_query(a, b) for a, b in itertools.pairwise(vectors)]
    conn.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
    conn.execute(text("SET LOCAL ivfflat.iterative_scan = relaxed_order"))
    conn.execute(text("SET LOCAL enable_indexscan = off"))
    exact = [_neighbours(conn, repo_id, q) for q in queries]
    conn.execute(text("SET LOCAL enable_indexscan = on"))

    def recall_at(probes: int) -> float:
        conn.execute(text(f"SET LOCAL ivfflat.probes = {int(probes)}"))
        found = [_neighbours(conn, repo_id, q) for q in queries]
        hits = sum(len(set(f) & set(e)) for f, e in zip(found, exact, strict=True))
        return hits / max(1, sum(len(e) for e in exact))

    probes = smallest_probes(lists, recall_at, CALIBRATION_RECALL) if queries else 1
    conn.execute(text(f"COMMENT ON INDEX {index_name(repo_id)} IS 'probes={probes}'"))
    return probes


def calibration_query(row: list[float], other: list[float]) -> str:
    """``row`` pulled towards ``other`` (weight ``CALIBRATION_PULL``), as vector text. Pure."""
    return (
        "["
        + ",".join(f"{a + CALIBRATION_PULL * b:.5g}" for a, b in zip(row, other, strict=True))
        + "]"
    )


def _parse(vector: str) -> list[float]:
    return [float(x) for x in vector.strip("[]").split(",")]


def _neighbours(conn: Connection, repo_id: int, query: str) -> list[int]:
    """The 10 rows nearest ``query``."""
    return list(
        conn.execute(
            text(
                "SELECT id FROM code_chunks WHERE repository_id = :r AND embedding IS NOT NULL"
                f" ORDER BY {cosine_distance('embedding', 'CAST(:q AS text)')} LIMIT 10"
            ),
            {"r": repo_id, "q": query},
        ).scalars()
    )


def rebuild_if_needed(conn: Connection, repo_id: int) -> int | None:
    """Create, rebuild or drop the repository's index as the rule says; return its lists
    (None: searched exactly). Runs in the caller's transaction: readers keep the old index
    until commit."""
    rows = conn.execute(
        text("SELECT count(*) FROM code_chunks WHERE repository_id = :r AND embedding IS NOT NULL"),
        {"r": repo_id},
    ).scalar_one()
    current = current_lists(conn, repo_id)
    lists = wanted_lists(current, rows)
    if lists == current:
        return current
    name = index_name(repo_id)
    conn.execute(text(f"DROP INDEX IF EXISTS {name}"))
    if lists is not None:
        # k-means samples ~50 vectors a list; the default 64 MB is too little past ~200 lists.
        conn.execute(text(f"SET LOCAL maintenance_work_mem = '{build_memory_mb(lists)}MB'"))
        conn.execute(
            text(
                f"CREATE INDEX {name} ON code_chunks USING ivfflat (embedding halfvec_cosine_ops)"
                f" WITH (lists = {lists}) WHERE repository_id = {int(repo_id)}"
            )
        )
    # Fresh statistics, or the planner costs the index from an empty table's numbers.
    conn.execute(text("ANALYZE code_chunks"))
    return lists


def calibrate_if_needed(conn: Connection, repo_id: int) -> int | None:
    """Calibrate the repository's index if it has none yet (just built, or built before
    calibration existed); return its probes (None: no index). Run it in a transaction of
    its own after the build's: the build's holds a lock on ``code_chunks`` that keeps
    other repositories' index runs waiting."""
    found = index_settings(conn, repo_id)
    if found is None:
        return None
    lists, calibrated = found
    return calibrated if calibrated is not None else calibrate_probes(conn, repo_id, lists)


def index_repositories(conn: Connection) -> dict[int, int]:
    """Apply the rule to every repository; return repository id -> lists of those indexed."""
    built = {}
    for repo_id in conn.execute(text("SELECT id FROM repositories ORDER BY id")).scalars():
        lists = rebuild_if_needed(conn, repo_id)
        calibrate_if_needed(conn, repo_id)
        if lists is not None:
            built[repo_id] = lists
    return built


def set_probes(conn: Connection, repo_id: int) -> int | None:
    """Per transaction: ``ivfflat.probes`` for the repository's index (calibrated, else
    the upper bound), and plans made for its id (a generic plan could not use a partial
    index). None: searched exactly."""
    conn.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
    found = index_settings(conn, repo_id)
    if found is None:
        return None
    lists, calibrated = found
    probes = calibrated or probes_for(lists)
    conn.execute(text(f"SET LOCAL ivfflat.probes = {probes}"))
    return probes
