"""Real vectors through real per-repository ivfflat indexes: the nearest rows come back,
only from the repository asked about, exactly for small repositories."""

import random
import re
import threading
import time
from dataclasses import dataclass

import pytest
from pgvector.sqlalchemy import Vector
from sqlalchemy import Connection, Engine, bindparam, event, text
from sqlalchemy.exc import DBAPIError

from app.db import vector_index
from app.db.models import EMBEDDING_DIMS
from app.db.vector_calibration import calibrate_if_needed, decline_by_trial
from app.db.vector_index import (
    current_lists,
    index_name,
    index_settings,
    rebuild_if_needed,
    set_probes,
)
from app.db.vector_policy import DEFAULT_POLICY, VectorIndexPolicy
from app.db.vector_sql import cosine_distance, of_width
from app.retrieval.vector_search import prepare_vector_search
from app.retrieval.vector_signal import OnePass, ids, vector_scores
from tests.chunk_rows import new_repository
from tests.statements import recorded_statements

CLUSTERS = 12
PER_CLUSTER = 250
LISTS = 30  # 3,000 rows at ROWS_PER_LIST = 100
#: Calibration that keeps every index fast enough to search: whether the index is
#: ``min_speedup`` times as fast as a scan is a timing, which a loaded machine can turn
#: (once it declined the index of a test about what follows calibration, so the
#: rebuild it tested never ran); tests of the verdict itself set their own policy.
TIMING_FREE = VectorIndexPolicy(min_speedup=0.0)


def _unit(v: list[float]) -> list[float]:
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def _near(center: list[float], rng: random.Random, spread: float) -> list[float]:
    return _unit([c + rng.gauss(0, spread) for c in center])


def _seed_repo(
    engine: Engine, rng: random.Random, name: str, vectors: list[list[float]] | None = None
) -> tuple[int, dict[int, list[float]]]:
    """3,000 clustered vectors (or ``vectors``) in a new repository; returns its id and
    id -> vector."""
    if vectors is None:
        centers = [_unit([rng.gauss(0, 1) for _ in range(EMBEDDING_DIMS)]) for _ in range(CLUSTERS)]
        vectors = [_near(c, rng, 0.02) for c in centers for _ in range(PER_CLUSTER)]
    insert = text(
        "INSERT INTO code_chunks (repository_id, source_file_id, file_path, start_line, end_line,"
        " chunk_type, raw_code, content_hash, embedding, embedding_model)"
        " VALUES (:repo, :file, :path, 1, 1, 'function', 'pass', :hash, :embedding, 'test')"
    ).bindparams(bindparam("embedding", type_=Vector()))  # at the vectors' own width
    with engine.begin() as conn:
        repo, file = new_repository(conn, name)
        conn.execute(
            insert,
            [
                {"repo": repo, "file": file, "path": f"f{i}.py", "hash": str(i), "embedding": v}
                for i, v in enumerate(vectors)
            ],
        )
        ids = conn.execute(
            text("SELECT id FROM code_chunks WHERE repository_id = :r ORDER BY id"), {"r": repo}
        ).scalars()
        return repo, dict(zip(ids, vectors, strict=True))


def _exact(conn: Connection, repo: int, query: list[float], k: int) -> list[int]:
    conn.execute(text("SET LOCAL enable_indexscan = off"))
    sql = text(
        "SELECT id FROM code_chunks WHERE repository_id = :r ORDER BY embedding <=> :q LIMIT :k"
    ).bindparams(bindparam("q", type_=Vector(EMBEDDING_DIMS)))
    return list(conn.execute(sql, {"r": repo, "q": query, "k": k}).scalars())


def _app_search(engine: Engine, repo: int, query: list[float], k: int) -> list[int]:
    with engine.begin() as conn:
        return ids(vector_scores(conn, repo, [query], "test", [], k))[0]


def _plan(engine: Engine, repo: int, query: list[float], width: int = EMBEDDING_DIMS) -> str:
    with engine.begin() as conn:
        prepare_vector_search(conn, repo)
        # at 3,000 rows sorting them all is cheaper: ask whether the index can serve
        for scan in ("seqscan", "bitmapscan", "sort"):
            conn.execute(text(f"SET LOCAL enable_{scan} = off"))
        sql = text(
            "EXPLAIN SELECT id FROM code_chunks c WHERE c.repository_id = :r"
            f" AND {of_width('c.embedding', width)} ORDER BY"
            f" {cosine_distance('c.embedding', 'CAST(:q AS vector)', width)} LIMIT 5"
        )
        return "\n".join(conn.execute(sql, {"r": repo, "q": str(query).replace(" ", "")}).scalars())


def test_a_small_repository_gets_no_index_and_exact_answers(engine: Engine) -> None:
    rng = random.Random(5)
    repo, rows = _seed_repo(engine, rng, "o/small")
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo, policy=VectorIndexPolicy(exact_max_rows=3_000)) is None
        assert current_lists(conn, repo) is None
    for target in rng.sample(list(rows), 5):
        query = _near(rows[target], rng, 0.001)
        with engine.begin() as conn:
            exact = _exact(conn, repo, query, 10)
        assert _app_search(engine, repo, query, 10) == exact


def _exact_filtered(
    conn: Connection, repo: int, query: list[float], k: int, exclude: list[int]
) -> list[int]:
    """The exact nearest rows the app may return (its model, not excluded), ties by path."""
    sql = text(
        "SELECT id FROM code_chunks WHERE repository_id = :r AND embedding_model = 'test'"
        " AND NOT (id = ANY(:ex)) ORDER BY"
        f" {cosine_distance('embedding', 'CAST(:q AS text)', len(query))}, file_path LIMIT :k"
    )
    return list(
        conn.execute(
            sql, {"r": repo, "q": str(query).replace(" ", ""), "k": k, "ex": exclude}
        ).scalars()
    )


@pytest.mark.parametrize("sample_rows", [10, 400, 5_000])
def test_a_large_repository_without_an_index_is_searched_exactly_in_one_pass(
    engine: Engine, sample_rows: int
) -> None:
    # 3,000 rows over the one-pass threshold, with no index; a sample of as few rows as a
    # query returns (k), of some, and of every row (its bounds are the exact k-th distances)
    one_pass = OnePass(rows=1_000, sample_rows=sample_rows)
    rng = random.Random(23)
    repo, rows = _seed_repo(engine, rng, "o/declined")
    targets = rng.sample(list(rows), 6)
    queries = [_near(rows[t], rng, 0.01) for t in targets]
    exclude = [targets[0], *rng.sample(list(rows), 200)]
    with engine.begin() as conn:  # rows of another model nearer than any: never returned
        conn.execute(
            text(
                "INSERT INTO code_chunks (repository_id, source_file_id, file_path, start_line,"
                " end_line, chunk_type, raw_code, content_hash, embedding, embedding_model)"
                " SELECT repository_id, source_file_id, 'other.py', 1, 1, 'function', 'pass',"
                " '0', embedding, 'other-model' FROM code_chunks WHERE id = ANY(:ids)"
            ),
            {"ids": targets},
        )
        other_model = set(
            conn.execute(
                text("SELECT id FROM code_chunks WHERE embedding_model = 'other-model'")
            ).scalars()
        )
    statements = recorded_statements(engine)
    with engine.begin() as conn:
        assert index_settings(conn, repo) is None
        found = ids(vector_scores(conn, repo, queries, "test", exclude, 10, one_pass))
        expected = [_exact_filtered(conn, repo, q, 10, exclude) for q in queries]
    assert found == expected
    assert all(len(ids) == 10 for ids in found)
    assert targets[0] not in found[0] and targets[1] == found[1][0]
    assert not other_model & {i for ids in found for i in ids}
    assert sum("row_number()" in s for s in statements) == 1  # one pass for all six


def test_a_one_pass_search_over_fewer_rows_than_asked_for_returns_them_all(
    engine: Engine,
) -> None:
    statements = recorded_statements(engine)
    rng = random.Random(29)
    repo, rows = _seed_repo(engine, rng, "o/few")
    keep = rng.sample(list(rows), 7)
    exclude = [i for i in rows if i not in keep]  # 7 rows left to search
    queries = [_near(rows[keep[0]], rng, 0.01), _near(rows[keep[1]], rng, 0.01)]
    with engine.begin() as conn:
        found = ids(vector_scores(conn, repo, queries, "test", exclude, 10, OnePass(rows=1_000)))
        expected = [_exact_filtered(conn, repo, q, 10, exclude) for q in queries]
    assert found == expected
    assert [len(ids) for ids in found] == [7, 7] and found[0][0] == keep[0]
    assert sum("row_number()" in s for s in statements) == 1  # it was the one pass


def test_a_large_repository_gets_its_own_index_and_nearest_rows_come_back(
    engine: Engine,
) -> None:
    rng = random.Random(7)
    repo, rows = _seed_repo(engine, rng, "o/large")
    other, others = _seed_repo(engine, rng, "o/other")
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo) == LISTS
        assert current_lists(conn, repo) == LISTS
        definition = conn.execute(
            text("SELECT indexdef FROM pg_indexes WHERE indexname = :n"), {"n": index_name(repo)}
        ).scalar_one()
    assert "USING ivfflat" in definition and "halfvec_cosine_ops" in definition
    assert f"WHERE ((repository_id = {repo}) AND (vector_dims(embedding) = 1536))" in definition

    hits = 0
    for target in rng.sample(list(rows), 10):
        query = _near(rows[target], rng, 0.001)
        approx = _app_search(engine, repo, query, 10)
        with engine.begin() as conn:
            exact = _exact(conn, repo, query, 10)
        assert approx[0] == target == exact[0]
        assert set(approx) <= set(rows)  # never another repository's rows
        hits += len(set(approx) & set(exact))
    assert hits / 100 >= 0.9  # recall@10 against exact search

    query = next(iter(others.values()))
    assert index_name(repo) in _plan(engine, repo, query)
    assert index_name(repo) not in _plan(engine, other, query)  # the other is scanned exactly
    assert set(_app_search(engine, other, query, 10)) <= set(others)


def test_a_narrower_models_vectors_are_indexed_and_searched_at_their_own_width(
    engine: Engine,
) -> None:
    """MiniLM's 384 dimensions are stored, indexed and compared at 384; a repository whose
    vectors change width (another model) gets its index again at the new width."""
    rng = random.Random(41)
    centers = [_unit([rng.gauss(0, 1) for _ in range(384)]) for _ in range(CLUSTERS)]
    vectors = [_near(c, rng, 0.02) for c in centers for _ in range(PER_CLUSTER)]
    repo, rows = _seed_repo(engine, rng, "o/minilm", vectors)
    wide, _ = _seed_repo(engine, rng, "o/changes-model")
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo) == LISTS
        assert vector_index.index_width(conn, repo) == 384
        assert rebuild_if_needed(conn, wide) == LISTS
        assert vector_index.index_width(conn, wide) == EMBEDDING_DIMS
        widths = conn.execute(
            text(
                "SELECT DISTINCT vector_dims(embedding) FROM code_chunks WHERE repository_id = :r"
            ),
            {"r": repo},
        ).scalars()
        assert list(widths) == [384]
    for target in rng.sample(list(rows), 5):
        query = _near(rows[target], rng, 0.001)
        assert _app_search(engine, repo, query, 10)[0] == target
    assert index_name(repo) in _plan(engine, repo, query, 384)

    with engine.begin() as conn:  # re-embedded by a 384-wide model
        conn.execute(
            text(
                "UPDATE code_chunks SET embedding = subvector(embedding, 1, 384)"
                " WHERE repository_id = :r"
            ),
            {"r": wide},
        )
        assert rebuild_if_needed(conn, wide) == LISTS  # the same lists, built again
        assert vector_index.index_width(conn, wide) == 384


def test_the_index_goes_when_the_repository_shrinks_below_half_the_threshold(
    engine: Engine,
) -> None:
    repo, rows = _seed_repo(engine, random.Random(3), "o/shrinks")
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo) == LISTS
        conn.execute(
            text("DELETE FROM code_chunks WHERE id = ANY(:ids)"), {"ids": list(rows)[:2_100]}
        )
        assert rebuild_if_needed(conn, repo) is None
        assert current_lists(conn, repo) is None


def test_probes_are_calibrated_on_the_repositorys_own_vectors_and_used(
    engine: Engine,
) -> None:
    rng = random.Random(11)
    repo, rows = _seed_repo(engine, rng, "o/calibrated")
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo) == LISTS
        assert index_settings(conn, repo) == (LISTS, None)  # calibrated after the build commits
    with engine.begin() as conn:
        probes = calibrate_if_needed(conn, repo, TIMING_FREE)
        assert probes is not None and 1 <= probes < LISTS
        assert index_settings(conn, repo) == (LISTS, probes)
    with engine.begin() as conn:
        serving = DEFAULT_POLICY.serving_probes(LISTS, probes)  # at least a twelfth
        assert set_probes(conn, repo) == serving == max(probes, 3)
        assert conn.execute(text("SHOW ivfflat.probes")).scalar_one() == str(serving)
        assert probes <= DEFAULT_POLICY.decline_share * LISTS  # clusters: the index is kept
        assert rebuild_if_needed(conn, repo) == LISTS
    # the recall it was calibrated for, on queries near the repository's rows
    hits = 0
    for target in rng.sample(list(rows), 10):
        query = _near(rows[target], rng, 0.001)
        with engine.begin() as conn:
            exact = _exact(conn, repo, query, 10)
        hits += len(set(_app_search(engine, repo, query, 10)) & set(exact))
    assert hits / 100 >= DEFAULT_POLICY.calibration_recall - 0.05

    # an index built before calibration existed gets calibrated by the next run
    with engine.begin() as conn:
        conn.execute(text(f"COMMENT ON INDEX {index_name(repo)} IS NULL"))
        assert index_settings(conn, repo) == (LISTS, None)
        assert set_probes(conn, repo) == DEFAULT_POLICY.probes_for(LISTS)  # meanwhile
        assert rebuild_if_needed(conn, repo) == LISTS  # the index is kept
        assert calibrate_if_needed(conn, repo, TIMING_FREE) == probes
        assert index_settings(conn, repo) == (LISTS, probes)

    # one calibrated before calibration was timed serves its probes until the next run
    # times it (and may decline it); a timed one is not calibrated again
    with engine.begin() as conn:
        conn.execute(text(f"COMMENT ON INDEX {index_name(repo)} IS 'probes=7'"))
        assert index_settings(conn, repo) == (LISTS, 7)
        assert set_probes(conn, repo) == 7
    with engine.begin() as conn:
        assert calibrate_if_needed(conn, repo, TIMING_FREE) == probes
        comment = conn.execute(
            text("SELECT obj_description(CAST(:i AS regclass), 'pg_class')"),
            {"i": index_name(repo)},
        ).scalar_one()
        assert re.fullmatch(rf"probes={probes} index_ms=[\d.]+ exact_ms=[\d.]+", comment)
    sent = recorded_statements(engine)
    with engine.begin() as conn:
        assert calibrate_if_needed(conn, repo, TIMING_FREE) == probes
    assert not [s for s in sent if "COMMENT ON INDEX" in s]  # not calibrated again


def _autocommit(engine: Engine) -> Connection:
    return engine.connect().execution_options(isolation_level="AUTOCOMMIT")


def _wait_for_a_waiting_build(engine: Engine, timeout: float = 30.0) -> None:
    """Until a CREATE INDEX waits on a lock (for a writer to finish)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            waiting = conn.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    " AND query LIKE 'CREATE INDEX%'"
                )
            ).scalar_one()
        if waiting:
            return
        time.sleep(0.05)
    raise AssertionError("the build never waited for the open writer")


def test_a_rebuild_holds_up_no_search_or_write_and_keeps_the_old_index_until_it_is_done(
    engine: Engine,
) -> None:
    rng = random.Random(13)
    repo, rows = _seed_repo(engine, rng, "o/grows")
    _, others = _seed_repo(engine, rng, "o/neighbour")
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo) == LISTS
    finer = VectorIndexPolicy(rows_per_list=50)  # the ideal is now twice LISTS
    with engine.connect() as writer:  # an open write: the concurrent build waits for it
        writer.execute(
            text("UPDATE code_chunks SET token_count = 1 WHERE id = :id"), {"id": min(others)}
        )
        result: list[int | None] = []
        with _autocommit(engine) as conn:
            build = threading.Thread(
                target=lambda: result.append(
                    rebuild_if_needed(conn, repo, concurrently=True, policy=finer)
                )
            )
            build.start()
            try:
                _wait_for_a_waiting_build(engine)
                with engine.begin() as other_conn:
                    other_conn.execute(text("SET LOCAL lock_timeout = '2s'"))
                    # searches and writes of every repository go on; the old index serves
                    assert index_settings(other_conn, repo) == (LISTS, None)
                    other_conn.execute(
                        text("UPDATE code_chunks SET token_count = 2 WHERE id = :id"),
                        {"id": max(others)},
                    )
                query = _near(rows[min(rows)], rng, 0.001)
                assert index_name(repo) in _plan(engine, repo, query)
                assert _app_search(engine, repo, query, 1) == [min(rows)]
            finally:
                writer.rollback()
                build.join(timeout=120)
    assert result == [2 * LISTS]
    with engine.connect() as conn:
        assert index_settings(conn, repo) == (2 * LISTS, None)  # calibrated by the run next
        names = set(conn.execute(text("SELECT indexname FROM pg_indexes")).scalars())
    assert vector_index.building_name(repo) not in names


def test_a_failed_rebuild_leaves_the_old_index_serving_and_the_next_run_finishes_it(
    engine: Engine,
) -> None:
    rng = random.Random(17)
    repo, rows = _seed_repo(engine, rng, "o/fails")
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo) == LISTS
        assert calibrate_if_needed(conn, repo, TIMING_FREE) is not None
    before = _index_settings(engine, repo)
    finer = VectorIndexPolicy(rows_per_list=50)
    starved = VectorIndexPolicy(rows_per_list=50, build_memory_cap_mb=1)
    with _autocommit(engine) as conn, pytest.raises(DBAPIError, match="memory required"):
        rebuild_if_needed(conn, repo, concurrently=True, policy=starved)
    with _autocommit(engine) as conn:  # the session's setting was put back
        assert conn.execute(text("SHOW maintenance_work_mem")).scalar_one() != "1MB"
    assert _index_settings(engine, repo) == before  # the failed build's remains are ignored
    query = _near(rows[max(rows)], rng, 0.001)
    assert _app_search(engine, repo, query, 1) == [max(rows)]

    with _autocommit(engine) as conn:
        assert rebuild_if_needed(conn, repo, concurrently=True, policy=finer) == 2 * LISTS
    assert _index_settings(engine, repo) == (2 * LISTS, None)
    assert _app_search(engine, repo, query, 1) == [max(rows)]


def _index_settings(engine: Engine, repo: int) -> tuple[int, int | None] | None:
    with engine.connect() as conn:
        return index_settings(conn, repo)


def test_builds_take_turns_and_a_build_that_cannot_start_gives_up_after_its_wait(
    engine: Engine,
) -> None:
    rng = random.Random(19)
    repos = [_seed_repo(engine, rng, f"o/turn{i}")[0] for i in range(2)]
    with (
        _autocommit(engine) as holder,
        vector_index.build_lock(holder),
        _autocommit(engine) as conn,
    ):
        began = time.monotonic()
        with (
            pytest.raises(TimeoutError, match="another vector index build"),
            vector_index.build_lock(conn, wait_seconds=1, poll_seconds=0.1),
        ):
            pytest.fail("the lock was held elsewhere")
        assert 1 <= time.monotonic() - began < 10
        assert conn.execute(text("SHOW lock_timeout")).scalar_one() == "0"

    def build(repo: int, results: dict[int, int | None]) -> None:
        with _autocommit(engine) as conn, vector_index.build_lock(conn):
            results[repo] = rebuild_if_needed(conn, repo, concurrently=True)

    results: dict[int, int | None] = {}
    threads = [threading.Thread(target=build, args=(repo, results)) for repo in repos]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert results == {repo: LISTS for repo in repos}
    for repo in repos:
        assert _index_settings(engine, repo) == (LISTS, None)


def test_a_swap_cut_short_between_its_two_steps_is_finished_by_the_next_run(
    engine: Engine,
) -> None:
    rng = random.Random(23)
    repo, _ = _seed_repo(engine, rng, "o/cut-short")
    with engine.begin() as conn:  # the old index dropped, the new one not yet renamed
        building = vector_index.building_name(repo)
        conn.execute(text(vector_index.create_statement(building, repo, LISTS, EMBEDDING_DIMS)))
        assert index_settings(conn, repo) == (LISTS, None)  # searches use it meanwhile
    with _autocommit(engine) as conn, vector_index.build_lock(conn):
        assert rebuild_if_needed(conn, repo, concurrently=True) == LISTS  # kept, not rebuilt
    with engine.begin() as conn:
        names = set(conn.execute(text("SELECT indexname FROM pg_indexes")).scalars())
        assert index_name(repo) in names and vector_index.building_name(repo) not in names
        assert calibrate_if_needed(conn, repo, TIMING_FREE) is not None


def test_an_index_no_better_than_a_scan_is_declined_until_the_repository_doubles(
    engine: Engine,
) -> None:
    # noise has no neighbourhoods, so it needs many lists (13 of 30 when written); the
    # share is lowered so the test does not hang on how many k-means gives this time
    strict = VectorIndexPolicy(decline_share=0.1)
    rng = random.Random(29)
    vectors = [_unit([rng.gauss(0, 1) for _ in range(EMBEDDING_DIMS)]) for _ in range(3_000)]
    repo, _ = _seed_repo(engine, rng, "o/unclustered", vectors)
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo, policy=strict) == LISTS
    with engine.begin() as conn:
        probes = calibrate_if_needed(conn, repo, strict)
        assert probes is not None and probes > strict.decline_share * LISTS
    with _autocommit(engine) as conn, vector_index.build_lock(conn):
        assert rebuild_if_needed(conn, repo, concurrently=True, policy=strict) is None  # dropped
        assert rebuild_if_needed(conn, repo, concurrently=True, policy=strict) is None  # stays
    assert _index_settings(engine, repo) is None
    query = vectors[17]
    assert _app_search(engine, repo, query, 1)[0] == min(_ids(engine, repo)) + 17  # exact

    _seed_more(engine, repo)  # doubled: worth another try
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo, policy=strict) == 2 * LISTS


def test_an_index_not_clearly_faster_than_a_scan_is_declined(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    rng = random.Random(31)
    repo, _ = _seed_repo(engine, rng, "o/clustered-but-slow")  # few probes are enough here
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo) == LISTS
    # as if the scan were barely slower than the index (uneven lists, or a fast scan)
    impatient = VectorIndexPolicy(min_speedup=1e9)
    with caplog.at_level("INFO", logger="app.db.vector_calibration"), engine.begin() as conn:
        probes = calibrate_if_needed(conn, repo, impatient)
        assert probes is not None and probes <= impatient.decline_limit(LISTS)
    calibrated = [
        r.getMessage() for r in caplog.records if "vector_index.calibrated" in r.getMessage()
    ]
    assert len(calibrated) == 1 and "declined=True" in calibrated[0]
    assert "exact_ms=" in calibrated[0] and "index_ms=" in calibrated[0]
    with engine.begin() as conn:
        assert rebuild_if_needed(conn, repo) is None  # dropped
        assert _declined_rows(conn, repo) == 3_000
        assert rebuild_if_needed(conn, repo) is None  # and not rebuilt at this size


def _declined_rows(conn: Connection, repo: int) -> int:
    return int(
        conn.execute(
            text("SELECT vector_index_declined_rows FROM repositories WHERE id = :r"), {"r": repo}
        ).scalar_one()
    )


def _ids(engine: Engine, repo: int) -> list[int]:
    with engine.connect() as conn:
        return list(
            conn.execute(
                text("SELECT id FROM code_chunks WHERE repository_id = :r ORDER BY id"), {"r": repo}
            ).scalars()
        )


def _seed_more(engine: Engine, repo: int) -> None:
    """As many rows again, copies of the repository's own."""
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO code_chunks (repository_id, source_file_id, file_path, start_line,"
                " end_line, chunk_type, raw_code, content_hash, embedding, embedding_model)"
                " SELECT repository_id, source_file_id, file_path || '.copy', 1, 1, 'function',"
                " 'pass', content_hash || 'c', embedding, embedding_model FROM code_chunks"
                " WHERE repository_id = :r"
            ),
            {"r": repo},
        )


def _creates_indexes(engine: Engine) -> list[str]:
    """Every CREATE INDEX the engine sends from now on (a listener on the engine)."""
    sent: list[str] = []

    @event.listens_for(engine, "before_cursor_execute")
    def record(conn, cursor, statement, parameters, context, executemany) -> None:  # type: ignore[no-untyped-def]
        if statement.lstrip().upper().startswith("CREATE INDEX"):
            sent.append(statement)

    return sent


def test_a_large_build_over_vectors_that_do_not_cluster_is_declined_on_a_sample(
    engine: Engine,
) -> None:
    # the share as in the test above; a trial of 15 lists, not 30
    strict = VectorIndexPolicy(decline_share=0.1, trial_rows=1_500)
    rng = random.Random(31)
    vectors = [_unit([rng.gauss(0, 1) for _ in range(EMBEDDING_DIMS)]) for _ in range(3_000)]
    repo, _ = _seed_repo(engine, rng, "o/unclustered-trial", vectors)
    sent = _creates_indexes(engine)
    with engine.begin() as conn:
        assert decline_by_trial(conn, repo, strict)
    with _autocommit(engine) as conn, vector_index.build_lock(conn):
        assert rebuild_if_needed(conn, repo, concurrently=True, policy=strict) is None
    assert [s for s in sent if "vector_trial" in s] and not [s for s in sent if "code_chunks" in s]
    with engine.connect() as conn:
        assert (
            conn.execute(
                text("SELECT vector_index_declined_rows FROM repositories WHERE id = :r"),
                {"r": repo},
            ).scalar_one()
            == 3_000
        )
        assert conn.execute(text("SELECT to_regclass('vector_trial')")).scalar_one() is None


def test_clustered_vectors_pass_the_trial_and_small_builds_skip_it(engine: Engine) -> None:
    trial = VectorIndexPolicy(trial_rows=1_500)
    rng = random.Random(37)
    repo, _ = _seed_repo(engine, rng, "o/clustered-trial")
    sent = _creates_indexes(engine)
    with engine.begin() as conn:
        assert not decline_by_trial(conn, repo, trial)
        assert rebuild_if_needed(conn, repo, policy=trial) == LISTS
        assert len(sent) == 2  # the trial's, then the repository's
        assert not decline_by_trial(conn, repo, trial)  # the index the rule wants: no trial
        conn.execute(text(f"DROP INDEX {index_name(repo)}"))
    with engine.begin() as conn:  # a trial as large as the build
        assert not decline_by_trial(conn, repo, VectorIndexPolicy(trial_rows=3_000))
    with engine.begin() as conn:  # a third of the rows: too sparse
        assert not decline_by_trial(conn, repo, VectorIndexPolicy(trial_rows=1_000))
    assert len(sent) == 2


@dataclass(frozen=True)
class _StarvedTrials(VectorIndexPolicy):
    """Too little memory for a trial's k-means (15 lists), enough for the build's (30)."""

    def build_memory_mb(self, lists: int, dims: int = 1536) -> int:
        return 1 if lists <= 15 else super().build_memory_mb(lists, dims)


def test_a_trial_that_fails_is_skipped_and_the_build_goes_ahead(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    starved = _StarvedTrials(trial_rows=1_500)
    repo, _ = _seed_repo(engine, random.Random(41), "o/trial-fails")
    with engine.begin() as conn:
        assert not decline_by_trial(conn, repo, starved)
        assert rebuild_if_needed(conn, repo, policy=starved) == LISTS  # the transaction goes on
    assert "action=vector_index.trial_failed" in caplog.text
    assert "memory required" in caplog.text
