"""Which repositories get an ivfflat index, and how it follows their size.

Every repository's chunks live in one ``code_chunks`` table; vector search is always
filtered to one repository. Measured at a million chunks (bench/RESULTS.md, "Vector
search at a million chunks"), one index over all repositories served that filter badly
(approximate search among other repositories' vectors), so the rule is per repository:

* A repository with at most ``EXACT_MAX_ROWS`` embedded chunks has no vector index: an
  exact scan of its rows (found through the ``repository_id`` b-tree) has recall 1 and
  took 9 ms p50, 19 ms p95 at 2,000 rows on shape B. Above that a scan grows with the
  repository (28 ms p50, 101 ms p95 at 8,700 rows) and an index does not (5-8 ms).
* A larger repository gets its own partial ivfflat cosine index (``WHERE repository_id =
  N``), so a query scans only its own vectors. It is dropped again below half the
  threshold, so a repository near the line does not flap.
* ``lists`` = rows / ``ROWS_PER_LIST``, at most ``MAX_LISTS``. pgvector advises rows /
  1000, but with probes calibrated small lists win: on an 80,000-chunk repository 80
  lists needed 32 probes (102 ms p50), 283 lists 6 (38 ms) and 800 lists 4 (6.5 ms), all
  at recall@10 >= 0.99. The build costs more (22 s against 7 s there), and past
  ``MAX_LISTS`` the build's k-means and the assignment of every row to a list grow too
  slow for what they save. An index is rebuilt only after data is loaded, and only when
  the ideal ``lists`` is at least twice or at most half the current one.
* ``probes`` is calibrated on the repository's own vectors when its index is built: the
  fewest with which the index finds ``CALIBRATION_RECALL`` of the exact 10 nearest
  neighbours of queries made from a sample of its rows, up to every list (then the index
  reads what an exact scan would, and finds what it finds). The value is the index's
  comment, so it lives and dies with the index; an index without one (built before) uses
  ``PROBES_FACTOR`` x sqrt(lists) until its next index run calibrates it. How many probes
  recall needs depends on the data, so it is measured, not derived from ``lists``.
* An index that needs more than ``DECLINE_SHARE`` of its lists, or whose calibrated search
  is not ``MIN_SPEEDUP`` times as fast as an exact scan (both timed while calibrating),
  does no better than a scan; it is dropped, and the repository searched exactly until it
  doubles (``repositories.vector_index_declined_rows``). A build of up to twice ``TRIAL_ROWS``
  rows is tried on a sample of ``TRIAL_ROWS`` first (``decline_by_trial``), and the
  calibration of a larger one stops as soon as it knows the index will be declined.
* Index runs build, swap and drop indexes ``CONCURRENTLY`` after their commit, one at a
  time (``build_lock``), so no other repository waits for a build.
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import re
import statistics
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from app.db.engine import first_line
from app.db.models import EMBEDDING_DIMS
from app.logs import kv

log = logging.getLogger(__name__)

INDEX_PREFIX = "ix_code_chunks_embedding_r"
#: How vectors are stored, indexed and compared: float16 (migration 0007 says why).
SEARCH_TYPE = f"halfvec({EMBEDDING_DIMS})"
REBUILD_FACTOR = 2
#: Repositories up to this many embedded chunks are searched exactly (no index).
EXACT_MAX_ROWS = 2_000
#: Rows per list of a repository's index, and the most lists an index gets.
ROWS_PER_LIST = 100
MAX_LISTS = 1_000
PROBES_FACTOR = 2
#: The recall@10 against exact search a calibrated ``probes`` must reach on the sample.
CALIBRATION_RECALL = 0.99
#: Queries made from the repository's rows to calibrate ``probes``.
CALIBRATION_SAMPLES = 16
#: How far a calibration query is pulled from its row towards another row.
CALIBRATION_PULL = 0.8
#: An index whose calibrated probes exceed this share of its lists is dropped: a query
#: lands in the big lists, so that share reads most of the index (on shape B, 18 of 80
#: lists read 72% of its pages), and an exact scan does as well.
DECLINE_SHARE = 1 / 3
#: An index is kept only when its calibrated search takes at most this share of an exact
#: scan's time (median per query, both timed while calibrating). Lists can be so uneven
#: that a few probes read most rows: on shape A at a million rows 63 of 1,000 lists read a
#: third of them (2.0 s a query, the scan 1.6 s), and the hash embedder crowds a few lists.
MIN_SPEEDUP = 1.5
#: A build of more lists than an index over this many rows would have is first tried on
#: a sample of that many rows (when that is at least half the rows): when the sample's
#: index is declined, the build is not made.
TRIAL_ROWS = 10_000
#: An index's comment: its calibrated probes, and since calibration was timed, the times.
_PROBES_COMMENT = re.compile(r"^probes=(\d+)( index_ms=[\d.]+ exact_ms=[\d.]+)?$")
#: The advisory lock that lets one concurrent build (or statistics refresh) run at a time.
BUILD_LOCK = "reviewbot:vector-index-build"
#: How long a build waits for that lock, and for older transactions to end.
BUILD_WAIT_SECONDS = 900


def cosine_distance(column: str, query: str) -> str:
    """SQL: the cosine distance the indexes serve, between a column and a query vector."""
    return f"({column} <=> ({query})::{SEARCH_TYPE})"


#: Significant digits a query vector is sent with: float16, which it is cast to, holds
#: about 3.3, so 6 change nothing.
QUERY_DIGITS = 6


@functools.cache
def _vector_format(dims: int) -> str:
    return "[" + ",".join([f"%.{QUERY_DIGITS}g"] * dims) + "]"


def vector_text(values: Sequence[float]) -> str:
    """A query vector as pgvector text, at ``QUERY_DIGITS`` significant digits. Pure.

    One %-format in C: the text of 20 query vectors of 1536 floats took 22 ms through
    ``pgvector.Vector.to_text`` (every float in full), and 7.6 ms so, at half the length."""
    return _vector_format(len(values)) % tuple(values)


def index_name(repo_id: int) -> str:
    return f"{INDEX_PREFIX}{int(repo_id)}"


def building_name(repo_id: int) -> str:
    """The name a rebuilt index has until it replaces the old one."""
    return f"{index_name(repo_id)}_new"


def ideal_lists(rows: int) -> int:
    """The ``lists`` an index over ``rows`` rows gets: ``ROWS_PER_LIST`` rows a list, at
    most ``MAX_LISTS``."""
    return max(1, min(MAX_LISTS, rows // ROWS_PER_LIST))


def build_memory_mb(lists: int, dims: int = 1536) -> int:
    """``maintenance_work_mem`` an ivfflat build with ``lists`` lists needs, with headroom.

    pgvector's k-means holds 50 sample vectors a list and, for Elkan's bounds, a float
    per sample and list, so memory grows with the square of ``lists``: at 2,000 lists it
    asked for 1,097 MB."""
    samples = lists * 50
    needed = samples * (dims * 4 + lists * 4) + lists * lists * 4
    return min(4096, max(128, math.ceil(needed * 1.2 / 2**20)))


def probes_for(lists: int) -> int:
    """How many lists a query scans before the index is calibrated: ``PROBES_FACTOR`` x
    sqrt(lists), within 1 .. lists."""
    return min(lists, max(1, round(PROBES_FACTOR * math.sqrt(lists))))


def wanted_lists(current: int | None, rows: int, declined_rows: int = 0) -> int | None:
    """The lists a repository's index should have now: ``current`` (None: no index) kept
    unless ``rows`` crossed the threshold or moved the ideal by ``REBUILD_FACTOR``. None
    while ``rows`` is under ``REBUILD_FACTOR`` x ``declined_rows`` (an index tried there
    did no better than a scan). Pure."""
    if declined_rows and rows < REBUILD_FACTOR * declined_rows:
        return None
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
    calibrated), or None when it has no index. Between a concurrent rebuild's two steps
    (the old index dropped, the new one not yet renamed) the new one is the index."""
    found = _index_comment(conn, repo_id)
    return None if found is None else found[:2]


def _index_comment(conn: Connection, repo_id: int) -> tuple[int, int | None, bool] | None:
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


def decline_limit(lists: int) -> int:
    """The most probes an index of ``lists`` lists may need and be kept
    (``DECLINE_SHARE`` of them, rounded down). Pure."""
    return math.floor(DECLINE_SHARE * lists)


@dataclass(frozen=True)
class Calibration:
    """What calibrating an index found: the probes it needs, and the median seconds a
    query took through the index at those probes and by an exact scan."""

    probes: int
    index_s: float
    exact_s: float

    def declines(self, lists: int) -> bool:
        """Whether the index is no better than a scan: it needs more than
        ``decline_limit`` of its ``lists``, or is not ``MIN_SPEEDUP`` times as fast. Pure."""
        if lists > 1 and self.probes > decline_limit(lists):
            return True
        return self.index_s * MIN_SPEEDUP > self.exact_s

    def comment(self) -> str:
        """The index's comment, which ``index_settings`` reads back. Pure."""
        return (
            f"probes={self.probes} index_ms={self.index_s * 1000:.2f}"
            f" exact_ms={self.exact_s * 1000:.2f}"
        )


def smallest_probes(
    lists: int, recall_at: Callable[[int], float], target: float, limit: int | None = None
) -> int:
    """The fewest probes, up to ``lists``, whose ``recall_at`` reaches ``target`` (recall
    grows with probes); every list when none does. With ``limit``, every list as soon as
    more than ``limit`` are known to be needed (the index will be declined: how many more
    does not matter, and those are the costly tries). Pure.

    Doubling from 1, then bisecting: the answer is usually a few lists of thousands, and
    each try costs the probes it scans, so large tries are left until they are needed.
    Every list finds what an exact scan finds, so it is never tried."""
    if limit is not None and limit < 1:
        return lists
    low, high = 1, 1
    while high < lists:
        if limit is not None and high > limit:  # try the limit before anything above it
            if recall_at(limit) < target:
                return lists
            high = limit
            break
        if recall_at(high) >= target:
            break
        low, high = high + 1, min(lists, high * 2)
    while low < high:
        middle = (low + high) // 2
        if recall_at(middle) >= target:
            high = middle
        else:
            low = middle + 1
    return low


def calibrate_probes(
    conn: Connection, repo_id: int, lists: int, limit: int | None = None
) -> Calibration:
    """Find and store (as the index's comment) the probes the repository's index needs
    (``calibrate``)."""
    found = calibrate(conn, "code_chunks", lists, repo_id, limit)
    conn.execute(text(f"COMMENT ON INDEX {index_name(repo_id)} IS '{found.comment()}'"))
    return found


def calibrate(
    conn: Connection, table: str, lists: int, repo_id: int | None = None, limit: int | None = None
) -> Calibration:
    """``smallest_probes`` for the ivfflat index over ``table`` (the repository's rows of
    it, with ``repo_id``), over the exact neighbours of ``CALIBRATION_SAMPLES`` queries
    made from its rows, and the median time of a query by exact scan and through the
    index at those probes. A query is a row pulled towards another (``calibration_query``):
    a review's query is near the code it is about, not on it, and a row searched for itself
    needed fewer probes than such queries (recall 0.95 on shape B at what it chose). In a
    transaction."""
    where = "embedding IS NOT NULL" + ("" if repo_id is None else " AND repository_id = :r")
    rows = conn.execute(
        text(f"SELECT embedding::text FROM {table} WHERE {where} ORDER BY md5(id::text) LIMIT :n"),
        {"r": repo_id, "n": CALIBRATION_SAMPLES + 1},
    ).scalars()
    vectors = [_parse(v) for v in rows]
    queries = [calibration_query(a, b) for a, b in itertools.pairwise(vectors)]
    distance = cosine_distance("embedding", "CAST(:q AS text)")
    nearest = text(f"SELECT {distance} FROM {table} WHERE {where} ORDER BY {distance} LIMIT 10")

    def neighbours(query: str) -> list[float]:
        return list(conn.execute(nearest, {"r": repo_id, "q": query}).scalars())

    def search_all() -> tuple[list[list[float]], float]:
        """Every query's neighbours, and the median seconds of one."""
        found, seconds = [], []
        for query in queries:
            began = time.perf_counter()
            found.append(neighbours(query))
            seconds.append(time.perf_counter() - began)
        return found, statistics.median(seconds) if seconds else 0.0

    conn.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
    conn.execute(text("SET LOCAL ivfflat.iterative_scan = relaxed_order"))
    conn.execute(text("SET LOCAL enable_indexscan = off"))
    exact, exact_s = search_all()
    conn.execute(text("SET LOCAL enable_indexscan = on"))

    def recall_at(probes: int) -> float:
        conn.execute(text(f"SET LOCAL ivfflat.probes = {int(probes)}"))
        found, _ = search_all()
        hits = sum(nearest_found(f, e) for f, e in zip(found, exact, strict=True))
        return hits / max(1, sum(len(e) for e in exact))

    if not queries:
        return Calibration(1, 0.0, 0.0)
    probes = smallest_probes(lists, recall_at, CALIBRATION_RECALL, limit)
    if probes >= lists or (limit is not None and probes > limit):
        # every list reads what a scan reads, and a declined one needs no time: not timed
        return Calibration(probes, exact_s, exact_s)
    conn.execute(text(f"SET LOCAL ivfflat.probes = {probes}"))
    _, index_s = search_all()  # timed apart: the last try may not have been at ``probes``
    return Calibration(probes, index_s, exact_s)


def nearest_found(found: Sequence[float], exact: Sequence[float]) -> int:
    """How many of the exact nearest neighbours (their distances, ``exact``) a search
    found (``found``): a row found at most as far as the farthest exact one counts, since
    rows at the same distance are the same answer. Duplicated code embeds identically,
    and counted by id, a tie split differently by the index and by the scan was a miss:
    on 272,915 hash-embedded chunks recall stayed at 0.944 up to 999 of 1,000 lists. Pure."""
    if not exact:
        return 0
    bound = max(exact) + 1e-9
    return min(len(exact), sum(1 for d in found if d <= bound))


def decline_by_trial(conn: Connection, repo_id: int) -> bool:
    """Before the rule builds the repository an index of more lists than one over
    ``TRIAL_ROWS`` rows: build that smaller index over a sample of its rows (a temporary
    table), and when it needs more than ``DECLINE_SHARE`` of its lists, record the
    repository as declined, so the build is not made. True when declined. In a
    transaction; a trial that fails is logged and skipped, and the build goes ahead.

    Only when the sample holds at least half the rows: a sparse sample thins out every
    neighbourhood and looks like noise. On shape A at a million rows, a sample of 10,000
    needed 50 of its 100 lists (the full index needed 59 of 1,000), as much as the hash
    embedder's vectors did (a sample of its 272,915 chunks, whose full index needs 177
    of 1,000)."""
    current = current_lists(conn, repo_id)
    rows = _embedded_rows(conn, repo_id)
    lists = wanted_lists(current, rows, _declined_rows(conn, repo_id))
    trial = ideal_lists(TRIAL_ROWS)
    if lists is None or lists == current or lists <= trial or rows > 2 * TRIAL_ROWS:
        return False
    try:
        with conn.begin_nested():
            declined = _trial_declines(conn, repo_id, trial)
    except DBAPIError as exc:  # only a shortcut: the rule goes on without it
        log.warning(kv("vector_index.trial_failed", repository_id=repo_id, error=first_line(exc)))
        return False
    if declined:
        _record_declined(conn, repo_id, rows)
    return declined


def _trial_declines(conn: Connection, repo_id: int, lists: int) -> bool:
    conn.execute(text("DROP TABLE IF EXISTS vector_trial"))
    conn.execute(
        text(
            "CREATE TEMPORARY TABLE vector_trial ON COMMIT DROP AS SELECT id, embedding"
            " FROM code_chunks WHERE id IN (SELECT id FROM code_chunks WHERE repository_id = :r"
            " AND embedding IS NOT NULL ORDER BY md5(id::text) LIMIT :n)"
        ),
        {"r": repo_id, "n": TRIAL_ROWS},
    )
    conn.execute(text(f"SET LOCAL maintenance_work_mem = '{build_memory_mb(lists)}MB'"))
    conn.execute(
        text(
            "CREATE INDEX ON vector_trial USING ivfflat (embedding halfvec_cosine_ops)"
            f" WITH (lists = {lists})"
        )
    )
    conn.execute(text("ANALYZE vector_trial"))
    limit = decline_limit(lists)
    # lists only: a sample's scan is faster than the repository's, so times say nothing
    declined = calibrate(conn, "vector_trial", lists, limit=limit).probes > limit
    conn.execute(text("DROP TABLE vector_trial"))
    return declined


def calibration_query(row: list[float], other: list[float]) -> str:
    """``row`` pulled towards ``other`` (weight ``CALIBRATION_PULL``), as vector text
    (``vector_text``, as a review's queries are sent). Pure."""
    return vector_text([a + CALIBRATION_PULL * b for a, b in zip(row, other, strict=True)])


def _parse(vector: str) -> list[float]:
    return [float(x) for x in vector.strip("[]").split(",")]


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
    take = text("SELECT pg_try_advisory_lock(hashtext(:k))")
    while not conn.execute(take, {"k": BUILD_LOCK}).scalar_one():
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
        conn.execute(text("SELECT pg_advisory_unlock(hashtext(:k))"), {"k": BUILD_LOCK})


def rebuild_if_needed(conn: Connection, repo_id: int, *, concurrently: bool = False) -> int | None:
    """Create, rebuild or drop the repository's index as the rule says; return its lists
    (None: searched exactly). The new index is built under ``building_name``, then takes
    the old one's place, so searches keep an index throughout.

    ``concurrently`` (``conn`` in autocommit, as an index run uses it, inside
    ``build_lock``): every step is ``CONCURRENTLY``, so no other repository's searches or
    writes wait for the build, which takes minutes at a million rows. Otherwise
    (migrations) it runs in the caller's transaction: the build blocks writes to
    ``code_chunks``, and from the drop of the old index to commit, reads too."""
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
    current = current_lists(conn, repo_id)
    lists = wanted_lists(current, _embedded_rows(conn, repo_id), _declined_rows(conn, repo_id))
    if lists == current:
        return current
    how = " CONCURRENTLY" if concurrently else ""
    conn.execute(text(f"DROP INDEX{how} IF EXISTS {building}"))  # a failed build's remains
    if lists is not None:
        # k-means samples ~50 vectors a list; the default 64 MB is too little past ~200 lists.
        memory = f"'{build_memory_mb(lists)}MB'"
        conn.execute(text(f"SET{'' if concurrently else ' LOCAL'} maintenance_work_mem = {memory}"))
        try:
            conn.execute(
                text(
                    f"CREATE INDEX{how} {building} ON code_chunks"
                    f" USING ivfflat (embedding halfvec_cosine_ops) WITH (lists = {lists})"
                    f" WHERE repository_id = {int(repo_id)}"
                )
            )
        finally:
            if concurrently:
                conn.execute(text("RESET maintenance_work_mem"))
    # Fresh statistics, or the planner costs the index from an empty table's numbers.
    conn.execute(text("ANALYZE code_chunks"))
    conn.execute(text(f"DROP INDEX{how} IF EXISTS {name}"))
    if lists is not None:
        conn.execute(text(f"ALTER INDEX {building} RENAME TO {name}"))
    return lists


def calibrate_if_needed(conn: Connection, repo_id: int) -> int | None:
    """Calibrate the repository's index if it is not yet (just built, built before
    calibration existed, or calibrated before calibration was timed: its probes serve
    until then); return its probes (None: no index). Run it in a transaction of its own
    after the build: it takes seconds, and a transactional build's locks on
    ``code_chunks`` should not be held through it.

    When the index is no better than a scan (``Calibration.declines``: when zod's 121-list
    index needed all 121, reviews took 5.6 s p50 with it and 3.2 s without), the
    repository's size is recorded as declined, and the next ``rebuild_if_needed`` drops
    the index."""
    found = _index_comment(conn, repo_id)
    if found is None:
        return None
    lists, probes, timed = found
    if probes is None or not timed:
        calibration = calibrate_probes(conn, repo_id, lists, decline_limit(lists))
        probes = calibration.probes
        declined = calibration.declines(lists)
        log.info(
            kv(
                "vector_index.calibrated",
                repository_id=repo_id,
                lists=lists,
                probes=probes,
                index_ms=round(calibration.index_s * 1000, 2),
                exact_ms=round(calibration.exact_s * 1000, 2),
                declined=declined,
            )
        )
        if declined:
            _record_declined(conn, repo_id, _embedded_rows(conn, repo_id))
    return probes


def _declined_rows(conn: Connection, repo_id: int) -> int:
    return int(
        conn.execute(
            text("SELECT vector_index_declined_rows FROM repositories WHERE id = :r"),
            {"r": repo_id},
        ).scalar_one()
    )


def _record_declined(conn: Connection, repo_id: int, rows: int) -> None:
    conn.execute(
        text("UPDATE repositories SET vector_index_declined_rows = :n WHERE id = :r"),
        {"n": rows, "r": repo_id},
    )


def _embedded_rows(conn: Connection, repo_id: int) -> int:
    return int(
        conn.execute(
            text(
                "SELECT count(*) FROM code_chunks WHERE repository_id = :r"
                " AND embedding IS NOT NULL"
            ),
            {"r": repo_id},
        ).scalar_one()
    )


def index_repositories(conn: Connection) -> dict[int, int]:
    """Apply the rule to every repository; return repository id -> lists of those indexed."""
    built = {}
    for repo_id in conn.execute(text("SELECT id FROM repositories ORDER BY id")).scalars():
        decline_by_trial(conn, repo_id)
        rebuild_if_needed(conn, repo_id)
        calibrate_if_needed(conn, repo_id)
        lists = rebuild_if_needed(conn, repo_id)  # drops an index that was declined
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
