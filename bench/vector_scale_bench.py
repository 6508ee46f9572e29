"""Vector search and per-PR retrieval at a million chunks, in the two shapes teams have.

* ``--shape A``: all chunks in one repository.
* ``--shape B``: the same number across 1,000 repositories of long-tailed sizes (most under
  2,000 chunks, five over 50,000).

Vectors are synthetic but clustered like summary embeddings (see ``Corpus``): a shared
direction every text has, a direction per repository, one of 4,096 topics and one of 32,768
sub-topics, plus noise. Two chunks of one sub-topic have cosine ~0.65, of one repository
~0.25, of different repositories ~0.15. A query is a chunk of the repository plus as much
noise again, as a change description is near, not on, the code it is about.

Phases (each reuses what the previous left in ``--data-dir``):

    python -m bench.vector_scale_bench --shape A --data-dir /tmp/vb-A load
    python -m bench.vector_scale_bench --shape A --data-dir /tmp/vb-A index
    python -m bench.vector_scale_bench --shape A --data-dir /tmp/vb-A query

``load`` fills the app's own schema (code_chunks, source_files, chunk_links) by COPY;
``index`` builds the vector indexes with the app's own rule (``app.db.vector_index``) and
reports time, sizes and the server's peak RSS; ``query`` runs the app's filtered vector
search (``vector_scores``, its set-up included) for single queries and measures
recall@10 against an exact scan, then the app's whole per-PR database path as a review
times it (``candidate_chunks``: the repository's model checked, stale rows found, the
vector, lexical and link signals for 20 changed functions, the candidates loaded) and
reports p50/p95.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import statistics
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from pgvector import HalfVector
from pgvector.psycopg import register_vector
from sqlalchemy import Connection, Engine, text

from app.config import Settings
from app.db import vector_index
from app.db.engine import open_database
from app.db.models import EMBEDDING_DIMS
from app.db.vector_calibration import calibrate_if_needed, decline_by_trial
from app.db.vector_index import rebuild_if_needed
from app.db.vector_policy import DEFAULT_POLICY, VectorIndexPolicy
from app.db.word_counts import refresh_word_counts
from app.diff.changed import ChangedFunction
from app.diff.parse import FileDiff, FileStatus
from app.indexing.chunks import Chunk
from app.indexing.links import Link
from app.retrieval.candidates import SearchInput, candidate_chunks, lexical_terms
from app.retrieval.full_text import lexical_scores
from app.retrieval.natural_queries import RetrievalQuery
from app.retrieval.vector_signal import ids, vector_scores

MODEL = "bench-synthetic"
TOPICS = 4096
SUBTOPICS = 8  # per topic
VOCABULARY = 20_000
CHUNKS_PER_FILE = 20
BATCH = 5_000


def repo_sizes(shape: str, rows: int, seed: int) -> list[int]:
    """Chunks per repository: one repository (A), or 1,000 with a long tail (B)."""
    if shape == "A":
        return [rows]
    rng = np.random.default_rng(seed)
    large = [max(1, x * rows // 1_000_000) for x in (80_000, 70_000, 60_000, 55_000, 51_000)]
    small = rng.lognormal(mean=6.0, sigma=1.2, size=1000 - len(large))
    small = np.minimum(small, 20_000)
    small *= (rows - sum(large)) / small.sum()
    sizes = [*large, *(max(1, int(s)) for s in small)]
    sizes[-1] = max(1, sizes[-1] + rows - sum(sizes))
    return sizes


@dataclass
class Corpus:
    """Deterministic clustered unit vectors: shared + repository + topic + sub-topic + noise."""

    seed: int
    dims: int = EMBEDDING_DIMS

    def __post_init__(self) -> None:
        rng = np.random.default_rng(self.seed)
        self.shared = _unit(rng.standard_normal(self.dims, dtype=np.float32))
        self.topics = _unit(rng.standard_normal((TOPICS, self.dims), dtype=np.float32))
        self.sub = _unit(rng.standard_normal((TOPICS * SUBTOPICS, self.dims), dtype=np.float32))

    def repo_direction(self, repo: int) -> np.ndarray:
        rng = np.random.default_rng((self.seed, repo))
        return _unit(rng.standard_normal(self.dims, dtype=np.float32))

    def repo_topics(self, repo: int, size: int) -> np.ndarray:
        rng = np.random.default_rng((self.seed, repo, 1))
        return rng.choice(TOPICS, size=min(TOPICS, 8 + size // 250), replace=False)

    def chunks(self, repo: int, size: int, start: int, count: int) -> np.ndarray:
        """Vectors ``start .. start + count`` of repository ``repo`` (deterministic)."""
        rng = np.random.default_rng((self.seed, repo, 2, start))
        topics = self.repo_topics(repo, size)
        topic = rng.choice(topics, size=count)
        sub = topic * SUBTOPICS + rng.integers(0, SUBTOPICS, size=count)
        noise = _unit(rng.standard_normal((count, self.dims), dtype=np.float32))
        x = (
            0.3 * self.shared
            + 0.3 * self.repo_direction(repo)
            + 0.45 * self.topics[topic]
            + 0.45 * self.sub[sub]
            + 0.6 * noise
        )
        return _unit(x)

    def queries(self, repo: int, size: int, count: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng((self.seed, repo, 3, seed))
        base = np.stack(
            [self.chunks(repo, size, int(i), 1)[0] for i in rng.integers(0, size, size=count)]
        )
        noise = _unit(rng.standard_normal((count, self.dims), dtype=np.float32))
        return _unit(base + 0.8 * noise)


def _unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


# -- load ------------------------------------------------------------------------------


def load(engine: Engine, sizes: list[int], corpus: Corpus) -> dict[str, float]:
    """Repositories, files, chunks and links by COPY, secondary indexes built afterwards."""
    started = time.perf_counter()
    with engine.begin() as conn:
        definitions = _drop_chunk_indexes(conn)
    raw = engine.raw_connection()
    try:
        pg = raw.driver_connection
        assert pg is not None
        register_vector(pg)
        for n, size in enumerate(sizes):
            _load_repository(pg, n, size, corpus)
            pg.commit()
            if n % 100 == 0 or size > 10_000:
                print(f"  repo {n}: {size} chunks, {time.perf_counter() - started:.0f} s")
    finally:
        raw.close()
    loaded = time.perf_counter() - started
    with engine.begin() as conn:
        for definition in definitions:
            conn.execute(text(definition))
        conn.execute(text("ANALYZE"))
    return {
        "load_s": round(loaded, 1),
        "secondary_indexes_s": round(time.perf_counter() - started - loaded, 1),
    }


def _drop_chunk_indexes(conn: Connection) -> list[str]:
    rows = conn.execute(
        text(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename IN"
            " ('code_chunks', 'chunk_links') AND indexname NOT LIKE 'pk_%'"
            " AND indexdef NOT LIKE '%ivfflat%'"
        )
    ).all()
    for name, _ in rows:
        conn.execute(text(f"DROP INDEX {name}"))
    return [definition for _, definition in rows]


def _load_repository(pg: Any, n: int, size: int, corpus: Corpus) -> None:
    rng = np.random.default_rng((corpus.seed, n, 4))
    cur = pg.cursor()
    repo_id = cur.execute(
        "INSERT INTO repositories (full_name) VALUES (%s) RETURNING id", (f"bench/repo-{n}",)
    ).fetchone()[0]
    files = math.ceil(size / CHUNKS_PER_FILE)
    with cur.copy(
        "COPY source_files (repository_id, path, content_hash, language, size_bytes) FROM STDIN"
    ) as copy:
        for f in range(files):
            copy.write_row((repo_id, _path(f), f"{f:064x}", "python", 1000))
    file_ids = dict(
        cur.execute(
            "SELECT path, id FROM source_files WHERE repository_id = %s", (repo_id,)
        ).fetchall()
    )
    columns = (
        "repository_id, source_file_id, file_path, start_line, end_line, symbol_name,"
        " qualified_name, chunk_type, language, raw_code, content_hash, embedding,"
        " embedding_model, search_text, token_count"
    )
    for start in range(0, size, BATCH):
        count = min(BATCH, size - start)
        vectors = corpus.chunks(n, size, start, count)
        words = rng.zipf(1.3, size=(count, 8)) % VOCABULARY
        with cur.copy(f"COPY code_chunks ({columns}) FROM STDIN WITH (FORMAT BINARY)") as copy:
            copy.set_types(
                [
                    "int8",
                    "int8",
                    "text",
                    "int4",
                    "int4",
                    "text",
                    "text",
                    "varchar",
                    "varchar",
                    "text",
                    "varchar",
                    "halfvec",
                    "varchar",
                    "text",
                    "int4",
                ]
            )
            for i in range(count):
                c = start + i
                path = _path(c // CHUNKS_PER_FILE)
                line = (c % CHUNKS_PER_FILE) * 10 + 1
                symbol = f"fn_{c}"
                copy.write_row(
                    (
                        repo_id,
                        file_ids[path],
                        path,
                        line,
                        line + 8,
                        symbol,
                        symbol,
                        "function",
                        "python",
                        f"def {symbol}():\n    return {c}\n",
                        f"{c:064x}",
                        HalfVector(vectors[i]),
                        MODEL,
                        " ".join(f"w{w}" for w in words[i]) + f" {symbol}",
                        60,
                    )
                )
    # every chunk uses one name defined elsewhere in its repository
    callee = rng.integers(0, size, size=size)
    with cur.copy(
        "COPY chunk_links (repository_id, source_file_id, file_path, line, name, match,"
        " target, qualifier, confidence, kind) FROM STDIN"
    ) as copy:
        for c in range(size):
            path = _path(c // CHUNKS_PER_FILE)
            copy.write_row(
                (
                    repo_id,
                    file_ids[path],
                    path,
                    (c % CHUNKS_PER_FILE) * 10 + 2,
                    f"fn_{callee[c]}",
                    "name",
                    None,
                    None,
                    0.6,
                    "use",
                )
            )


def _path(f: int) -> str:
    return f"pkg/mod_{f // 50}/file_{f}.py"


# -- index -----------------------------------------------------------------------------


def build_indexes(engine: Engine) -> dict[str, object]:
    started = time.perf_counter()
    with engine.begin() as conn:
        pid = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        built = index_repositories(conn)
        calibrated = {r: (vector_index.index_settings(conn, r) or (0, None))[1] for r in built}
        rss = _peak_rss_mb(pid)
    elapsed = time.perf_counter() - started
    words_s = count_words(engine)
    with engine.connect() as conn:
        sizes = conn.execute(
            text(
                "SELECT pg_total_relation_size('code_chunks'),"
                " (SELECT coalesce(sum(pg_relation_size(indexrelid)), 0) FROM pg_index i"
                "  JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname LIKE"
                "  'ix_code_chunks_embedding%')"
            )
        ).one()
    return {
        "indexes_built": len(built),
        "lists": sorted(built.values(), reverse=True)[:8],
        "calibrated_probes": [calibrated[r] for r in sorted(built, key=lambda r: -built[r])][:8],
        "build_s": round(elapsed, 1),
        "table_gb": round(int(sizes[0]) / 2**30, 2),
        "vector_indexes_gb": round(int(sizes[1]) / 2**30, 2),
        "backend_peak_rss_mb": rss,
        "word_counts_s": words_s,
    }


def count_words(engine: Engine) -> float:
    """What the app's index run does last: count each repository's words."""
    started = time.perf_counter()
    with engine.begin() as conn:
        totals = conn.execute(
            text("SELECT repository_id, count(*) FROM code_chunks GROUP BY 1")
        ).all()
        for repo_id, total in totals:
            refresh_word_counts(conn, repo_id, total)
    return round(time.perf_counter() - started, 1)


def _peak_rss_mb(pid: int) -> int | None:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return None


# -- query -----------------------------------------------------------------------------


def measure_queries(
    engine: Engine, sizes: list[int], corpus: Corpus, queries: int, prs: int
) -> dict[str, object]:
    """Recall@10 against an exact scan and latency of single filtered queries, by
    repository size, then per-PR database time."""
    repos = _query_repositories(sizes, queries)
    by_size: dict[str, list[tuple[float, float]]] = {}
    with engine.connect() as conn:
        repo_ids = _repo_ids(conn)
        first = _first_chunk_ids(conn, repo_ids, sizes)
        conn.rollback()
        for n, count in repos.items():
            bucket = _bucket(sizes[n])
            asked = corpus.queries(n, sizes[n], count, seed=0)
            for q, exact in zip(asked, _exact(corpus, n, sizes[n], asked), strict=True):
                with conn.begin():  # the search and its set-up (probes)
                    began = time.perf_counter()
                    found = ids(vector_scores(conn, repo_ids[n], [q], MODEL, [], 10))[0]
                    elapsed = time.perf_counter() - began
                truth = {first[n] + offset for offset in exact}
                recall = len(set(found) & truth) / len(truth)
                by_size.setdefault(bucket, []).append((recall, elapsed))
        if prs:  # unmeasured: the pool's second connection and the backends' caches
            _one_pr(engine, conn, repo_ids, sizes, corpus, 0, warm_up=True)
        pr_times = [_one_pr(engine, conn, repo_ids, sizes, corpus, i) for i in range(prs)]
    every = [m for ms in by_size.values() for m in ms]
    return {
        "queries": _summary(every),
        "by_repository_size": {b: _summary(ms) for b, ms in sorted(by_size.items())},
        "pr_20_functions": {}
        if not pr_times
        else {
            "prs": len(pr_times),
            **{
                f"{name}_{p}_ms": round(_pct([t[i] for t in pr_times], p) * 1000, 1)
                for i, name in enumerate(("whole", "vector_alone", "full_text_alone"))
                for p in (50, 95)
            },
        },
    }


def _bucket(size: int) -> str:
    for limit in (2_000, 10_000, 50_000):
        if size <= limit:
            return f"<= {limit}"
    return "> 50000"


def _summary(measures: list[tuple[float, float]]) -> dict[str, float]:
    recalls = [r for r, _ in measures]
    latencies = [t for _, t in measures]
    return {
        "n": len(measures),
        "recall_at_10": round(statistics.fmean(recalls), 4),
        "recall_min": round(min(recalls), 2),
        "p50_ms": round(_pct(latencies, 50) * 1000, 1),
        "p95_ms": round(_pct(latencies, 95) * 1000, 1),
    }


def _query_repositories(sizes: list[int], queries: int) -> dict[int, int]:
    """Which repositories are queried, how often: every large one, and a spread of the tail."""
    if len(sizes) == 1:
        return {0: queries}
    order = _largest(sizes)
    picked = order[:5] + order[5::20]
    return {n: max(1, queries // len(picked)) for n in picked}


def _largest(sizes: list[int]) -> list[int]:
    """Repository numbers, largest first."""
    return sorted(range(len(sizes)), key=lambda n: -sizes[n])


def _repo_ids(conn: Connection) -> dict[int, int]:
    rows = conn.execute(
        text("SELECT full_name, id FROM repositories WHERE full_name LIKE 'bench/%'")
    )
    return {int(name.rsplit("-", 1)[1]): rid for name, rid in rows}


def _first_chunk_ids(conn: Connection, ids: dict[int, int], sizes: list[int]) -> dict[int, int]:
    """Each repository's first chunk id; COPY gave its chunks consecutive ids."""
    rows = conn.execute(
        text("SELECT repository_id, min(id), max(id), count(*) FROM code_chunks GROUP BY 1")
    )
    by_repo = {r: (lo, hi, count) for r, lo, hi, count in rows}
    first = {}
    for n, repo_id in ids.items():
        lo, hi, count = by_repo[repo_id]
        assert hi - lo + 1 == count == sizes[n], f"repository {n}: ids are not consecutive"
        first[n] = lo
    return first


_EXACT: dict[tuple[int, int, int], list[list[int]]] = {}


def _exact(corpus: Corpus, n: int, size: int, queries: np.ndarray) -> list[list[int]]:
    """The true 10 nearest chunks (offsets in the repository) of each query, by cosine
    over the float32 vectors the database holds as float16, computed in numpy."""
    key = (n, size, len(queries))
    if key not in _EXACT:
        _EXACT[key] = _nearest(corpus, n, size, queries)
    return _EXACT[key]


def _nearest(corpus: Corpus, n: int, size: int, queries: np.ndarray) -> list[list[int]]:
    best_scores = np.full((len(queries), 10), -np.inf, dtype=np.float32)
    best = np.zeros((len(queries), 10), dtype=np.int64)
    for start in range(0, size, BATCH):
        vectors = corpus.chunks(n, size, start, min(BATCH, size - start))
        scores = queries @ vectors.T
        merged_scores = np.concatenate([best_scores, scores], axis=1)
        merged = np.concatenate(
            [best, np.broadcast_to(np.arange(start, start + len(vectors)), scores.shape)], axis=1
        )
        top = np.argsort(-merged_scores, axis=1)[:, :10]
        best_scores = np.take_along_axis(merged_scores, top, axis=1)
        best = np.take_along_axis(merged, top, axis=1)
    return [list(map(int, row[: min(10, size)])) for row in best]


def _one_pr(
    engine: Engine,
    conn: Connection,
    ids: dict[int, int],
    sizes: list[int],
    corpus: Corpus,
    pr: int,
    *,
    warm_up: bool = False,
) -> tuple[float, float, float]:
    """The app's per-PR database work for 20 changed functions of one repository, as a
    review times it (``candidate_chunks``: the repository and its model checked, stale
    rows found, every signal, the full-text statement on a connection of its own, the
    candidates loaded), then its vector statement and its full-text statement each
    alone: seconds for the three. A ``warm_up`` PR is in the sixth largest repository,
    which no measured PR touches (in shape A, the one repository)."""
    largest = _largest(sizes)
    # the largest repositories, in turn
    n = largest[min(5, len(sizes) - 1)] if warm_up else largest[pr % min(5, len(sizes))]
    repo_id = ids[n]
    rows = conn.execute(
        text(
            "SELECT c.id, c.file_path, c.symbol_name, c.start_line, c.end_line, c.search_text,"
            " l.name FROM code_chunks c JOIN chunk_links l ON l.source_file_id = c.source_file_id"
            " AND l.line = c.start_line + 1 WHERE c.repository_id = :r ORDER BY c.id"
            " OFFSET :o LIMIT 20"
        ),
        {"r": repo_id, "o": (pr * 7919) % max(1, sizes[n] - 20)},
    ).all()
    conn.rollback()
    functions = [_changed(row) for row in rows]
    vectors = list(corpus.queries(n, sizes[n], len(functions), seed=100 + pr))
    queries = [
        RetrievalQuery(f, view, f"{f.symbol_name} {row.search_text}")
        for f, row in zip(functions, rows, strict=True)
        for view in ("hyde", "change")
    ]
    settings = Settings()
    paths = sorted({f.file_path for f in functions})
    diffs = [FileDiff(path, path, FileStatus.MODIFIED, False, ()) for path in paths]
    began = time.perf_counter()
    candidate_chunks(
        engine,
        f"bench/repo-{n}",
        functions,
        diffs,
        SearchInput(functions, queries, vectors, MODEL, diffs),
        settings.retrieval_signals,
        settings.retrieval_per_signal,
        settings.retrieval_secondary_paths,
    )
    whole = time.perf_counter() - began
    k = settings.retrieval_per_signal
    with conn.begin():  # each of the two costliest statements again, on its own
        began = time.perf_counter()
        vector_scores(conn, repo_id, vectors, MODEL, [], k)
        vector = time.perf_counter() - began
        terms = [lexical_terms(f, queries) for f in functions]
        began = time.perf_counter()
        lexical_scores(conn, repo_id, terms, [], k)
        lexical = time.perf_counter() - began
    return whole, vector, lexical


def _changed(row: Any) -> ChangedFunction:
    chunk = Chunk(
        file_path=row.file_path,
        language="python",
        chunk_type="function",
        symbol_name=row.symbol_name,
        qualified_name=row.symbol_name,
        start_line=row.start_line,
        end_line=row.end_line,
        raw_code="",
        segments=((row.start_line, row.end_line),),
        signature=None,
        docstring=None,
        references=(row.name,),
        content_hash="",
    )
    use = Link(row.start_line + 1, row.name, "name", None, None, 0.6)
    return ChangedFunction(row.file_path, "modified", chunk, (row.start_line + 1,), (), uses=(use,))


def _text(v: np.ndarray) -> str:
    return "[" + ",".join(f"{x:.6f}" for x in v) + "]"


def _pct(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(p / 100 * len(ordered)) - 1)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("phase", choices=("load", "index", "query", "all"))
    parser.add_argument("--shape", choices=("A", "B"), required=True)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--prs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--probes",
        type=int,
        nargs="*",
        default=[],
        help="query: also measure with these fixed probes (the app's calibrated probes always are)",
    )
    args = parser.parse_args(argv)
    os.environ.pop("DATABASE_URL", None)
    sizes = repo_sizes(args.shape, args.rows, args.seed)
    corpus = Corpus(args.seed)
    settings = Settings(data_dir=args.data_dir)
    result: dict[str, object] = {
        "shape": args.shape,
        "rows": sum(sizes),
        "repositories": len(sizes),
    }
    with open_database(settings) as db:
        for phase in _phases(args.phase):
            print(f"{phase} ...", flush=True)
            if phase == "load":
                result |= load(db.engine, sizes, corpus)
            elif phase == "index":
                result |= build_indexes(db.engine)
            else:
                result |= measure_queries(db.engine, sizes, corpus, args.queries, args.prs)
                for probes in args.probes:
                    with _fixed_probes(probes):
                        fixed = measure_queries(db.engine, sizes, corpus, args.queries, 0)
                    result[f"probes={probes}"] = fixed["by_repository_size"]
            print(json.dumps(result), flush=True)
    result["bench_peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(json.dumps(result, indent=2))


@contextlib.contextmanager
def _fixed_probes(probes: int) -> Iterator[None]:
    """The app's search with ``ivfflat.probes`` fixed, instead of its calibrated value."""
    settings = vector_index.index_settings

    def fixed(conn: Connection, repo_id: int) -> tuple[int, int | None] | None:
        found = settings(conn, repo_id)
        return (found[0], min(found[0], probes)) if found else None

    vector_index.index_settings = fixed
    try:
        yield
    finally:
        vector_index.index_settings = settings


def _phases(phase: str) -> Iterator[str]:
    yield from (("load", "index", "query") if phase == "all" else (phase,))


if __name__ == "__main__":
    main()


def index_repositories(
    conn: Connection, policy: VectorIndexPolicy = DEFAULT_POLICY
) -> dict[int, int]:
    """The app's vector-index rule applied to every repository at once, in the caller's
    transaction; repository id -> lists of those indexed."""
    built = {}
    for repo_id in conn.execute(text("SELECT id FROM repositories ORDER BY id")).scalars():
        decline_by_trial(conn, repo_id, policy)
        rebuild_if_needed(conn, repo_id, policy=policy)
        calibrate_if_needed(conn, repo_id, policy)
        lists = rebuild_if_needed(conn, repo_id, policy=policy)  # drops a declined index
        if lists is not None:
            built[repo_id] = lists
    return built
