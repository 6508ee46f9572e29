"""Vector search judged on real embeddings (issue 34, goal 3): recall@10 against exact
search, and latency, for ivfflat (the product's rule: lists by size, probes calibrated)
and HNSW, at several sizes of one repository.

The vectors are real: a repository indexed with the ``local`` MiniLM embedder over its
heuristic summaries (384 dimensions, stored at that width), kept in a database outside
the repository (``--data-dir``; made once by ``--index TREE``, which takes about 40
chunks a second on two cores). ``--queries`` of its chunks are held out as queries: the
vector of a function described elsewhere in the code, as a review's query is. Each size
is a repository of that many of the other rows (a spread of them, by hash).

    python -W ignore -m bench.real_vector_bench --data-dir /tmp/realvec/db \\
        --sizes 10000,25000,50000   # in .venv-local (the local embedder)
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, text

from bench.retrieval_runner import percentile

SOURCE = "real/minilm"
K = 10


def copy_rows(conn: Connection, source: int, name: str, rows: int, held_out: Sequence[int]) -> int:
    """A new repository holding ``rows`` of the source's rows (not the held-out ones)."""
    from app.db.queries.repositories import repository_id

    target = repository_id(conn, name)
    conn.execute(text("DELETE FROM code_chunks WHERE repository_id = :r"), {"r": target})
    columns = [
        c
        for c in conn.execute(
            text(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_name = 'code_chunks' AND is_generated = 'NEVER'"
                " AND column_name NOT IN ('id', 'repository_id') ORDER BY ordinal_position"
            )
        ).scalars()
    ]
    listed = ", ".join(f'"{c}"' for c in columns)
    conn.execute(
        text(
            f"INSERT INTO code_chunks (repository_id, {listed}) SELECT :t, {listed}"
            " FROM code_chunks WHERE repository_id = :s AND NOT (id = ANY(:held))"
            " ORDER BY md5(id::text) LIMIT :n"
        ),
        {"t": target, "s": source, "held": list(held_out), "n": rows},
    )
    conn.execute(text("ANALYZE code_chunks"))
    return target


def timed_search(
    conn: Connection, repo: int, queries: Sequence[str], width: int
) -> tuple[list[list[int]], list[float]]:
    from app.db.vector_sql import cosine_distance, of_width

    distance = cosine_distance("c.embedding", "CAST(:q AS text)", width)
    statement = text(
        f"SELECT c.id FROM code_chunks c WHERE c.repository_id = :r"
        f" AND {of_width('c.embedding', width)} ORDER BY {distance} LIMIT :k"
    )
    found, seconds = [], []
    for query in queries:
        began = time.perf_counter()
        found.append(list(conn.execute(statement, {"r": repo, "q": query, "k": K}).scalars()))
        seconds.append(time.perf_counter() - began)
    return found, seconds


def recall(found: Sequence[Sequence[int]], exact: Sequence[Sequence[int]]) -> float:
    hits = sum(len(set(f) & set(e)) for f, e in zip(found, exact, strict=True))
    return hits / max(1, sum(len(e) for e in exact))


def measure(
    engine: Engine,
    repo: int,
    queries: Sequence[str],
    width: int,
    setup: Callable[[Connection], Any],
) -> tuple[list[list[int]], list[float]]:
    with engine.begin() as conn:
        conn.execute(text("SET LOCAL plan_cache_mode = force_custom_plan"))
        setup(conn)
        timed_search(conn, repo, queries[:20], width)  # warm the pages
        return timed_search(conn, repo, queries, width)


def row(label: str, found: list[list[int]], seconds: list[float], exact: list[list[int]]) -> str:
    return (
        f"| {label} | {recall(found, exact):.3f} | {statistics.median(seconds) * 1000:.2f} ms"
        f" | {percentile(seconds, 0.95) * 1000:.2f} ms |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/realvec/db"))
    parser.add_argument("--sizes", default="10000,25000,50000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--source", default=SOURCE, help="the repository the vectors are in")
    args = parser.parse_args()

    from app.config import Settings
    from app.db import vector_index
    from app.db.engine import open_database
    from app.db.vector_calibration import calibrate_if_needed
    from app.db.vector_sql import at_width, of_width

    with open_database(Settings(data_dir=args.data_dir)) as db:
        engine = db.engine
        with engine.begin() as conn:
            source = conn.execute(
                text("SELECT id FROM repositories WHERE full_name = :n"), {"n": args.source}
            ).scalar_one()
            held = conn.execute(
                text(
                    "SELECT id, embedding::text FROM code_chunks WHERE repository_id = :r"
                    " AND embedding IS NOT NULL ORDER BY md5(id::text || 'q') LIMIT :n"
                ),
                {"r": source, "n": args.queries},
            ).all()
            width = conn.execute(
                text("SELECT vector_dims(embedding) FROM code_chunks WHERE id = :i"),
                {"i": held[0][0]},
            ).scalar_one()
        queries = [vector for _, vector in held]
        print(f"{len(queries)} held-out queries, {width} dimensions\n")
        print("| rows | method | recall@10 | p50 | p95 |\n|---|---|---|---|---|")
        for size in [int(s) for s in args.sizes.split(",")]:
            with engine.begin() as conn:
                repo = copy_rows(conn, source, f"real/size{size}", size, [i for i, _ in held])

            def exact_setup(conn: Connection) -> None:
                conn.execute(text("SET LOCAL enable_indexscan = off"))

            exact, exact_s = measure(engine, repo, queries, width, exact_setup)
            print(row(f"{size:,} | exact", exact, exact_s, exact))
            with engine.begin() as conn:
                lists = vector_index.rebuild_if_needed(conn, repo)
            with engine.begin() as conn:
                probes = calibrate_if_needed(conn, repo)
            with engine.begin() as conn:
                lists_now = vector_index.rebuild_if_needed(conn, repo)  # a declined one goes
            if lists_now is not None:
                for each in sorted({probes or 1, 2 * (probes or 1), max(1, lists_now // 10)}):

                    def ivf(conn: Connection, p: int = each) -> None:
                        conn.execute(text(f"SET LOCAL ivfflat.probes = {p}"))
                        conn.execute(text("SET LOCAL ivfflat.iterative_scan = relaxed_order"))

                    found, seconds = measure(engine, repo, queries, width, ivf)
                    label = f"{size:,} | ivfflat lists {lists_now}, probes {each}"
                    label += " (calibrated)" if each == probes else ""
                    print(row(label, found, seconds, exact))
            else:
                print(f"| {size:,} | ivfflat: declined by the rule (lists {lists}) | | | |")
            with engine.begin() as conn:
                vector_index.rebuild_if_needed(conn, repo)
                conn.execute(text(f"DROP INDEX IF EXISTS {vector_index.index_name(repo)}"))
                began = time.perf_counter()
                conn.execute(text("SET LOCAL maintenance_work_mem = '512MB'"))
                conn.execute(
                    text(
                        f"CREATE INDEX real_hnsw_{repo} ON code_chunks USING hnsw"
                        f" ({at_width('embedding', width)} halfvec_cosine_ops)"
                        f" WHERE repository_id = {repo} AND {of_width('embedding', width)}"
                    )
                )
                conn.execute(text("ANALYZE code_chunks"))
                built = time.perf_counter() - began
            for ef in (40, 100, 200):

                def hnsw(conn: Connection, ef: int = ef) -> None:
                    conn.execute(text(f"SET LOCAL hnsw.ef_search = {ef}"))
                    conn.execute(text("SET LOCAL hnsw.iterative_scan = relaxed_order"))

                found, seconds = measure(engine, repo, queries, width, hnsw)
                label = f"{size:,} | HNSW m 16, ef_search {ef} (built in {built:.0f} s)"
                print(row(label, found, seconds, exact), flush=True)
            with engine.begin() as conn:
                conn.execute(text(f"DROP INDEX real_hnsw_{repo}"))


if __name__ == "__main__":
    main()
