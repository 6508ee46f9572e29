"""Measuring a repository's ivfflat index on its own vectors: the probes it needs
(``calibrate``), whether it beats an exact scan, and a trial on a sample before a large
build (``decline_by_trial``). What an index that does no better than a scan leads to is
the policy's (``app/db/vector_policy.py``): it is declined, and the repository searched
exactly until it doubles."""

from __future__ import annotations

import itertools
import logging
import statistics
import time

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from app.db.engine import first_line
from app.db.queries.chunks import embedded_rows, vector_width
from app.db.queries.repositories import (
    record_vector_index_declined,
    vector_index_declined_rows,
)
from app.db.vector_index import current_lists, index_comment, index_name
from app.db.vector_policy import (
    DEFAULT_POLICY,
    Calibration,
    VectorIndexPolicy,
    nearest_found,
    smallest_probes,
)
from app.db.vector_sql import at_width, cosine_distance, of_width, vector_text
from app.logs import kv

log = logging.getLogger(__name__)


def calibrate_probes(
    conn: Connection,
    repo_id: int,
    lists: int,
    limit: int | None = None,
    policy: VectorIndexPolicy = DEFAULT_POLICY,
) -> Calibration:
    """Find and store (as the index's comment) the probes the repository's index needs
    (``calibrate``)."""
    found = calibrate(conn, "code_chunks", lists, repo_id, limit, policy)
    conn.execute(text(f"COMMENT ON INDEX {index_name(repo_id)} IS '{found.comment()}'"))
    return found


def calibrate(
    conn: Connection,
    table: str,
    lists: int,
    repo_id: int | None = None,
    limit: int | None = None,
    policy: VectorIndexPolicy = DEFAULT_POLICY,
) -> Calibration:
    """``smallest_probes`` for the ivfflat index over ``table`` (the repository's rows of
    it, with ``repo_id``), over the exact neighbours of the policy's
    ``calibration_samples`` queries made from its rows, and the median time of a query by
    exact scan and through the index at those probes. A query is a row pulled towards
    another (``calibration_query``): a review's query is near the code it is about, not
    on it, and a row searched for itself needs fewer probes than such queries. In a
    transaction."""
    where = "embedding IS NOT NULL" + ("" if repo_id is None else " AND repository_id = :r")
    width = conn.execute(
        text(f"SELECT vector_dims(embedding) FROM {table} WHERE {where} LIMIT 1"), {"r": repo_id}
    ).scalar_one_or_none()
    if width is None:
        return Calibration(1, 0.0, 0.0)
    if repo_id is not None:  # the repository index's predicate (a trial's table has one width)
        where += f" AND {of_width('embedding', width)}"
    rows = conn.execute(
        text(f"SELECT embedding::text FROM {table} WHERE {where} ORDER BY md5(id::text) LIMIT :n"),
        {"r": repo_id, "n": policy.calibration_samples + 1},
    ).scalars()
    vectors = [_parse(v) for v in rows]
    queries = [
        calibration_query(a, b, policy.calibration_pull) for a, b in itertools.pairwise(vectors)
    ]
    distance = cosine_distance("embedding", "CAST(:q AS text)", width)
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
    probes = smallest_probes(lists, recall_at, policy.calibration_recall, limit)
    if probes >= lists or (limit is not None and probes > limit):
        # every list reads what a scan reads, and a declined one needs no time: not timed
        return Calibration(probes, exact_s, exact_s)
    conn.execute(text(f"SET LOCAL ivfflat.probes = {probes}"))
    _, index_s = search_all()  # timed apart: the last try may not have been at ``probes``
    return Calibration(probes, index_s, exact_s)


def calibration_query(row: list[float], other: list[float], pull: float) -> str:
    """``row`` pulled towards ``other`` (weight ``pull``), as vector text (as a review's
    queries are sent). Pure."""
    return vector_text([a + pull * b for a, b in zip(row, other, strict=True)])


def _parse(vector: str) -> list[float]:
    return [float(x) for x in vector.strip("[]").split(",")]


def calibrate_if_needed(
    conn: Connection, repo_id: int, policy: VectorIndexPolicy = DEFAULT_POLICY
) -> int | None:
    """Calibrate the repository's index if it is not yet (just built, built before
    calibration existed, or calibrated before calibration was timed: its probes serve
    until then); return its probes (None: no index). Run it in a transaction of its own
    after the build: it takes seconds, and a transactional build's locks on
    ``code_chunks`` should not be held through it.

    When the index is no better than a scan (``Calibration.declines``), the repository's
    size is recorded as declined, and the next ``rebuild_if_needed`` drops the index."""
    found = index_comment(conn, repo_id)
    if found is None:
        return None
    lists, probes, timed = found
    if probes is None or not timed:
        calibration = calibrate_probes(conn, repo_id, lists, policy.decline_limit(lists), policy)
        probes = calibration.probes
        declined = calibration.declines(lists, policy)
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
            record_vector_index_declined(conn, repo_id, embedded_rows(conn, repo_id))
    return probes


def decline_by_trial(
    conn: Connection, repo_id: int, policy: VectorIndexPolicy = DEFAULT_POLICY
) -> bool:
    """Before the rule builds the repository an index of more lists than one over the
    policy's ``trial_rows``: build that smaller index over a sample of its rows (a
    temporary table), and when it needs more than ``decline_share`` of its lists, record
    the repository as declined, so the build is not made. True when declined. In a
    transaction; a trial that fails is logged and skipped, and the build goes ahead.

    Only when the sample holds at least half the rows: a sparse sample thins out every
    neighbourhood and looks like noise."""
    current = current_lists(conn, repo_id)
    rows = embedded_rows(conn, repo_id)
    lists = policy.wanted_lists(current, rows, vector_index_declined_rows(conn, repo_id))
    trial = policy.ideal_lists(policy.trial_rows)
    if lists is None or lists == current or lists <= trial or rows > 2 * policy.trial_rows:
        return False
    try:
        with conn.begin_nested():
            declined = _trial_declines(conn, repo_id, trial, policy)
    except DBAPIError as exc:  # only a shortcut: the rule goes on without it
        log.warning(kv("vector_index.trial_failed", repository_id=repo_id, error=first_line(exc)))
        return False
    if declined:
        record_vector_index_declined(conn, repo_id, rows)
    return declined


def _trial_declines(conn: Connection, repo_id: int, lists: int, policy: VectorIndexPolicy) -> bool:
    width = vector_width(conn, repo_id) or 0
    conn.execute(text("DROP TABLE IF EXISTS vector_trial"))
    conn.execute(
        text(
            "CREATE TEMPORARY TABLE vector_trial ON COMMIT DROP AS SELECT id, embedding"
            " FROM code_chunks WHERE id IN (SELECT id FROM code_chunks WHERE repository_id = :r"
            f" AND embedding IS NOT NULL AND {of_width('embedding', width)}"
            " ORDER BY md5(id::text) LIMIT :n)"
        ),
        {"r": repo_id, "n": policy.trial_rows},
    )
    conn.execute(text(f"SET LOCAL maintenance_work_mem = '{policy.build_memory_mb(lists)}MB'"))
    conn.execute(
        text(
            f"CREATE INDEX ON vector_trial USING ivfflat ({at_width('embedding', width)}"
            f" halfvec_cosine_ops) WITH (lists = {lists})"
        )
    )
    conn.execute(text("ANALYZE vector_trial"))
    limit = policy.decline_limit(lists)
    # lists only: a sample's scan is faster than the repository's, so times say nothing
    declined = calibrate(conn, "vector_trial", lists, limit=limit, policy=policy).probes > limit
    conn.execute(text("DROP TABLE vector_trial"))
    return declined
