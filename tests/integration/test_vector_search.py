"""Real vectors through the real ivfflat index: the nearest rows come back."""

import random

from pgvector.sqlalchemy import Vector
from sqlalchemy import Engine, bindparam, text

from app.db.models import EMBEDDING_DIMS
from app.db.vector_index import INDEX_NAME, current_lists, rebuild_if_needed, set_probes

CLUSTERS = 12
PER_CLUSTER = 250


def _unit(v: list[float]) -> list[float]:
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def _near(center: list[float], rng: random.Random, spread: float) -> list[float]:
    return _unit([c + rng.gauss(0, spread) for c in center])


def _seed_rows(engine: Engine, rng: random.Random) -> dict[int, list[float]]:
    """3,000 clustered vectors; returns id -> vector."""
    centers = [_unit([rng.gauss(0, 1) for _ in range(EMBEDDING_DIMS)]) for _ in range(CLUSTERS)]
    vectors = [_near(c, rng, 0.02) for c in centers for _ in range(PER_CLUSTER)]
    insert = text(
        "INSERT INTO code_chunks (repository_id, source_file_id, file_path, start_line, end_line,"
        " chunk_type, raw_code, content_hash, embedding, embedding_model)"
        " VALUES (:repo, :file, :path, 1, 1, 'function', 'pass', :hash, :embedding, 'test')"
    ).bindparams(bindparam("embedding", type_=Vector(EMBEDDING_DIMS)))
    with engine.begin() as conn:
        repo = conn.execute(
            text("INSERT INTO repositories (full_name) VALUES ('o/r') RETURNING id")
        ).scalar_one()
        file = conn.execute(
            text(
                "INSERT INTO source_files (repository_id, path, content_hash, size_bytes)"
                " VALUES (:r, 'a.py', 'h', 1) RETURNING id"
            ),
            {"r": repo},
        ).scalar_one()
        conn.execute(
            insert,
            [
                {"repo": repo, "file": file, "path": f"f{i}.py", "hash": str(i), "embedding": v}
                for i, v in enumerate(vectors)
            ],
        )
        ids = conn.execute(text("SELECT id FROM code_chunks ORDER BY id")).scalars().all()
    return dict(zip(ids, vectors, strict=True))


def _search(engine: Engine, query: list[float], k: int, exact: bool) -> list[int]:
    sql = text(
        "SELECT id FROM code_chunks WHERE embedding_model = 'test'"
        " ORDER BY embedding <=> :q LIMIT :k"
    ).bindparams(bindparam("q", type_=Vector(EMBEDDING_DIMS)))
    with engine.begin() as conn:
        if exact:
            conn.execute(text("SET LOCAL enable_indexscan = off"))
        else:
            set_probes(conn)
            conn.execute(text("SET LOCAL enable_seqscan = off"))
            conn.execute(text("SET LOCAL ivfflat.iterative_scan = relaxed_order"))
        return list(conn.execute(sql, {"q": query, "k": k}).scalars())


def test_cosine_search_through_ivfflat_returns_nearest_rows(engine: Engine) -> None:
    rng = random.Random(7)
    rows = _seed_rows(engine, rng)
    with engine.begin() as conn:
        assert rebuild_if_needed(conn) == 3  # 3,000 rows -> 3 lists
        assert current_lists(conn) == 3

    ids = list(rows)
    hits = 0
    for target in rng.sample(ids, 10):
        query = _near(rows[target], rng, 0.001)
        approx = _search(engine, query, 10, exact=False)
        exact = _search(engine, query, 10, exact=True)
        assert approx[0] == target
        assert exact[0] == target
        hits += len(set(approx) & set(exact))
    assert hits / 100 >= 0.9  # recall@10 against exact search


def test_cosine_distance_is_served_by_the_ivfflat_index(engine: Engine) -> None:
    """The index's opclass matches ``<=>``; with L2 ops the planner could not use it.

    At 3,000 rows a sequential scan is cheaper, so it is switched off to ask the question.
    """
    rng = random.Random(3)
    rows = _seed_rows(engine, rng)
    query = next(iter(rows.values()))
    with engine.begin() as conn:
        rebuild_if_needed(conn)
        set_probes(conn)
        conn.execute(text("SET LOCAL enable_seqscan = off"))
        plan = "\n".join(
            conn.execute(
                text(
                    "EXPLAIN SELECT id FROM code_chunks ORDER BY embedding <=> :q LIMIT 5"
                ).bindparams(bindparam("q", type_=Vector(EMBEDDING_DIMS))),
                {"q": query},
            ).scalars()
        )
    assert INDEX_NAME in plan
