import random
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Engine, inspect, text
from sqlalchemy.engine import URL

from app.db import migrate, vector_index
from app.db.engine import DatabaseTarget, make_engine
from app.db.migrate import include_object
from app.db.models import EMBEDDING_DIMS, Base
from app.db.vector_sql import cosine_distance, of_width, vector_text
from tests.chunk_rows import new_repository

OUR_TABLES = {
    "repositories",
    "source_files",
    "code_chunks",
    "summary_cache",
    "embedding_cache",
    "webhook_deliveries",
    "reviews",
    "conversations",
    "review_feedback",
}


def _tables(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names())


def test_upgrade_is_idempotent_and_creates_everything(empty_database_url: URL) -> None:
    engine = make_engine(DatabaseTarget(empty_database_url, False))
    migrate.upgrade(engine)
    migrate.upgrade(engine)
    assert migrate.current_revision(engine) == migrate.head_revision()
    tables = _tables(engine)
    assert tables >= OUR_TABLES
    assert {"procrastinate_jobs", "procrastinate_events", "procrastinate_workers"} <= tables
    engine.dispose()


def test_downgrade_to_base_then_upgrade_again(empty_database_url: URL) -> None:
    engine = make_engine(DatabaseTarget(empty_database_url, False))
    migrate.upgrade(engine)
    migrate.downgrade(engine, "base")
    assert migrate.current_revision(engine) is None
    assert _tables(engine) == {"alembic_version"}
    with engine.connect() as conn:
        leftovers = conn.execute(
            text("SELECT count(*) FROM pg_proc WHERE proname LIKE 'procrastinate%'")
        ).scalar_one()
    assert leftovers == 0
    migrate.upgrade(engine)
    assert _tables(engine) >= OUR_TABLES | {"procrastinate_jobs"}
    engine.dispose()


def test_models_and_migrations_do_not_drift(engine: Engine) -> None:
    with engine.connect() as conn:
        context = MigrationContext.configure(
            conn, opts={"compare_type": True, "include_object": include_object}
        )
        assert compare_metadata(context, Base.metadata) == []


def _seed_repositories(engine: Engine, sizes: dict[str, int], vector: str) -> list[int]:
    """Repositories with ``sizes[name]`` chunks of one vector each; their ids in order."""
    repos = []
    with engine.begin() as conn:
        for name, rows in sizes.items():
            repo, file = new_repository(conn, name)
            conn.execute(
                text(
                    "INSERT INTO code_chunks (repository_id, source_file_id, file_path,"
                    " start_line, end_line, chunk_type, raw_code, content_hash, embedding)"
                    " SELECT :r, :f, 'a.py', 1, 1, 'function', 'pass', g::text,"
                    " CAST(:v AS vector) FROM generate_series(1, :n) g"
                ),
                {"r": repo, "f": file, "v": vector, "n": rows},
            )
            repos.append(repo)
    return repos


def _index_names(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(text("SELECT indexname FROM pg_indexes")).scalars())


def test_migration_0007_gives_large_existing_repositories_their_own_index(
    empty_database_url: URL,
) -> None:
    """0007's own frozen rule: an index for each repository over 2,000 embedded chunks,
    left for the next index run to calibrate."""
    engine = make_engine(DatabaseTarget(empty_database_url, False))
    migrate.upgrade(engine, "0006")
    vector = "[" + ",".join(["0.5"] * 4 + ["0"] * (EMBEDDING_DIMS - 4)) + "]"
    repos = _seed_repositories(engine, {"o/large": 2_500, "o/small": 20}, vector)
    migrate.upgrade(engine)
    names = _index_names(engine)
    assert vector_index.index_name(repos[0]) in names
    assert vector_index.index_name(repos[1]) not in names
    assert "ix_code_chunks_embedding_ivfflat" not in names
    with engine.connect() as conn:
        assert vector_index.index_settings(conn, repos[0]) == (25, None)  # not calibrated yet
    migrate.downgrade(engine, "0006")
    names = _index_names(engine)
    assert "ix_code_chunks_embedding_ivfflat" in names
    assert vector_index.index_name(repos[0]) not in names
    engine.dispose()


def test_migration_0011_keeps_full_text_vectors_of_rows_written_after_it_out_of_toast(
    empty_database_url: URL,
) -> None:
    engine = make_engine(DatabaseTarget(empty_database_url, False))
    migrate.upgrade(engine, "0010")
    rng = random.Random(5)  # a vector that does not compress, like a real one
    vector = "[" + ",".join(f"{rng.uniform(-1, 1):.4f}" for _ in range(EMBEDDING_DIMS)) + "]"
    words = " ".join(f"word{i}" for i in range(40))
    external = text(
        "SELECT count(*) FROM code_chunks WHERE repository_id = :r"
        " AND pg_column_toast_chunk_id(search_tsv) IS NOT NULL"
    )
    search = text(
        "SELECT count(*) FROM code_chunks WHERE repository_id = :r"
        " AND search_tsv @@ to_tsquery('simple', 'word7 & word39')"
    )

    def seed(name: str) -> int:
        (repo,) = _seed_repositories(engine, {name: 50}, vector)
        with engine.begin() as conn:
            conn.execute(
                text("UPDATE code_chunks SET search_text = :t WHERE repository_id = :r"),
                {"t": words, "r": repo},
            )
        return repo

    before = seed("o/before")
    with engine.connect() as conn:
        assert conn.execute(external, {"r": before}).scalar_one() == 50  # pushed out by the vector
    migrate.upgrade(engine, "0019")  # 0020 rewrites every row (a generated column)
    after = seed("o/after")
    with engine.connect() as conn:
        storage = conn.execute(
            text(
                "SELECT attstorage FROM pg_attribute"
                " WHERE attrelid = 'code_chunks'::regclass AND attname = 'search_tsv'"
            )
        ).scalar_one()
        assert storage == "m"
        assert conn.execute(external, {"r": after}).scalar_one() == 0
        assert conn.execute(external, {"r": before}).scalar_one() == 50  # moved when rewritten
        assert conn.execute(search, {"r": after}).scalar_one() == 50
        assert conn.execute(search, {"r": before}).scalar_one() == 50
    migrate.downgrade(engine, "0010")
    engine.dispose()


def test_migration_0013_counts_the_words_of_repositories_counted_before(
    empty_database_url: URL,
) -> None:
    engine = make_engine(DatabaseTarget(empty_database_url, False))
    migrate.upgrade(engine, "0012")
    vector = "[" + ",".join(["0.5"] * 4 + ["0"] * (EMBEDDING_DIMS - 4)) + "]"
    counted, uncounted = _seed_repositories(engine, {"o/counted": 60, "o/new": 60}, vector)
    with engine.begin() as conn:
        conn.execute(
            text(
                "UPDATE code_chunks SET search_text = CASE WHEN start_line + id % 2 = 1"
                " THEN 'ledger shared' ELSE 'shared' END"
            )
        )
        conn.execute(
            text(
                "UPDATE repositories SET frequent_words = '{shared}', frequent_words_chunks = 60"
                " WHERE id = :r"
            ),
            {"r": counted},
        )
    migrate.upgrade(engine)
    with engine.connect() as conn:
        stored = conn.execute(
            text("SELECT repository_id, word, chunks FROM repository_words ORDER BY 1, 2")
        ).all()
        assert [tuple(row) for row in stored] == [(counted, "ledger", 30), (counted, "shared", 60)]
        assert conn.execute(
            text("SELECT words_counted_at FROM repositories ORDER BY id")
        ).scalars().all() == [60, 0]
    migrate.downgrade(engine, "0012")
    with engine.connect() as conn:
        assert conn.execute(
            text("SELECT frequent_words FROM repositories WHERE id = :r"), {"r": counted}
        ).scalar_one() == ["ledger", "shared"]
        assert (
            conn.execute(
                text("SELECT frequent_words_chunks FROM repositories WHERE id = :r"),
                {"r": uncounted},
            ).scalar_one()
            == 0
        )
    engine.dispose()


def test_no_migration_imports_the_application() -> None:
    """Migrations are frozen: what they do cannot change when the application does."""
    import ast

    versions = Path(__file__).resolve().parents[2] / "migrations" / "versions"
    for path in sorted(versions.glob("*.py")):
        tree = ast.parse(path.read_text())
        imported = [
            n.module if isinstance(n, ast.ImportFrom) else a.name
            for n in ast.walk(tree)
            if isinstance(n, ast.Import | ast.ImportFrom)
            for a in (n.names if isinstance(n, ast.Import) else [n])  # type: ignore[attr-defined]
        ]
        assert not [m for m in imported if m and m.split(".")[0] == "app"], path.name


def _widths(engine: Engine, repo: int) -> set[int]:
    with engine.connect() as conn:
        return set(
            conn.execute(
                text(
                    "SELECT DISTINCT vector_dims(embedding) FROM code_chunks"
                    " WHERE repository_id = :r"
                ),
                {"r": repo},
            ).scalars()
        )


def test_migration_0019_stores_vectors_at_their_models_width_and_keeps_the_indexes(
    empty_database_url: URL,
) -> None:
    """Zero-padded vectors lose their padding where the model's width is known (MiniLM's,
    or the cache's), the hash embedder's stay 1536 wide, a repository's index is made
    again over its width with its calibrated probes, and a downgrade pads them again."""
    engine = make_engine(DatabaseTarget(empty_database_url, False))
    migrate.upgrade(engine, "0018")
    minilm = [round(0.01 * ((i % 7) - 3), 2) for i in range(384)]
    padded = "[" + ",".join(str(x) for x in minilm + [0.0] * (EMBEDDING_DIMS - 384)) + "]"
    api_vector = "[" + ",".join(["0.25"] * 256 + ["0"] * (EMBEDDING_DIMS - 256)) + "]"
    wide = "[" + ",".join(["0.5"] * EMBEDDING_DIMS) + "]"
    local, hashed, api = _seed_repositories(
        engine, {"o/local": 2_500, "o/hash": 30, "o/api": 20}, padded
    )
    with engine.begin() as conn:
        for repo, model, vector in (
            (local, "local:all-MiniLM-L6-v2", padded),
            (hashed, "hash-v1", wide),
            (api, "text-embedding-3-small", api_vector),
        ):
            conn.execute(
                text(
                    "UPDATE code_chunks SET embedding_model = :m, embedding = CAST(:v AS vector)"
                    " WHERE repository_id = :r"
                ),
                {"m": model, "v": vector, "r": repo},
            )
        conn.execute(
            text(
                "INSERT INTO embedding_cache (text_hash, model, embedding, dims)"
                " VALUES ('k', 'text-embedding-3-small', CAST(:v AS vector), 256)"
            ),
            {"v": api_vector},
        )
        name = vector_index.index_name(local)
        conn.execute(
            text(
                f"CREATE INDEX {name} ON code_chunks USING ivfflat (embedding halfvec_cosine_ops)"
                f" WITH (lists = 25) WHERE repository_id = {local}"
            )
        )
        conn.execute(text(f"COMMENT ON INDEX {name} IS 'probes=3'"))

    migrate.upgrade(engine)
    assert _widths(engine, local) == {384}
    assert _widths(engine, hashed) == {EMBEDDING_DIMS}
    assert _widths(engine, api) == {256}
    with engine.connect() as conn:
        stored = conn.execute(
            text("SELECT embedding::text FROM code_chunks WHERE repository_id = :r LIMIT 1"),
            {"r": local},
        ).scalar_one()
        assert [float(x) for x in stored.strip("[]").split(",")] == pytest.approx(minilm, abs=1e-3)
        assert (
            conn.execute(text("SELECT vector_dims(embedding) FROM embedding_cache")).scalar() == 256
        )
        assert vector_index.index_settings(conn, local) == (25, 3)  # its probes kept
        assert vector_index.index_width(conn, local) == 384
    with engine.begin() as conn:  # the search at the model's width uses the index
        vector_index.set_probes(conn, local)
        query = vector_text(minilm)
        plan = "\n".join(
            conn.execute(
                text(
                    "EXPLAIN SELECT id FROM code_chunks c WHERE c.repository_id = :r"
                    f" AND {of_width('c.embedding', 384)}"
                    f" ORDER BY {cosine_distance('c.embedding', 'CAST(:q AS text)', 384)} LIMIT 5"
                ),
                {"r": local, "q": query},
            ).scalars()
        )
        assert f"Index Scan using {vector_index.index_name(local)}" in plan

    migrate.downgrade(engine, "0018")
    assert _widths(engine, local) == {EMBEDDING_DIMS}
    assert _widths(engine, api) == {EMBEDDING_DIMS}
    with engine.connect() as conn:
        assert vector_index.index_settings(conn, local) == (25, 3)
        stored = conn.execute(
            text("SELECT embedding::text FROM code_chunks WHERE repository_id = :r LIMIT 1"),
            {"r": local},
        ).scalar_one()
        values = [float(x) for x in stored.strip("[]").split(",")]
        assert values[:384] == pytest.approx(minilm, abs=1e-3) and not any(values[384:])
    engine.dispose()


def test_migration_0020_gives_existing_chunks_the_words_of_their_code(
    empty_database_url: URL,
) -> None:
    """Rows written before 0020 get their code's words (whole identifiers and their
    parts), their repository its average, and a counted repository its common code
    words; the downgrade takes them away again."""
    engine = make_engine(DatabaseTarget(empty_database_url, False))
    migrate.upgrade(engine, "0019")
    with engine.begin() as conn:
        counted, file = new_repository(conn, "o/counted")
        conn.execute(
            text(
                "INSERT INTO code_chunks (repository_id, source_file_id, file_path, start_line,"
                " end_line, chunk_type, raw_code, content_hash) SELECT :r, :f, 'a.py', g, g,"
                " 'function', CASE WHEN g % 2 = 0 THEN 'def encode_ticket(): return parseHTTP()'"
                " ELSE 'x = shared' END, g::text FROM generate_series(1, 50) g"
            ),
            {"r": counted, "f": file},
        )
        conn.execute(
            text("UPDATE repositories SET words_counted_at = 50 WHERE id = :r"), {"r": counted}
        )
    migrate.upgrade(engine)
    with engine.connect() as conn:
        words = conn.execute(
            text(
                "SELECT array_agg(u.lexeme ORDER BY u.lexeme)"
                " FROM code_chunks c, unnest(c.code_tsv) u WHERE c.start_line = 2"
            )
        ).scalar_one()
        assert words == [
            "def",
            "encode",
            "encodeticket",
            "http",
            "parse",
            "parsehttp",
            "return",
            "ticket",
        ]
        storage = conn.execute(
            text(
                "SELECT attstorage FROM pg_attribute"
                " WHERE attrelid = 'code_chunks'::regclass AND attname = 'code_tsv'"
            )
        ).scalar_one()
        assert storage == "m"  # in the row, as search_tsv
        average = conn.execute(text("SELECT code_avg_words FROM repositories")).scalar_one()
        assert average == pytest.approx((8 + 2) / 2)  # "x", "shared" in the other half
        stored = conn.execute(
            text("SELECT word, chunks FROM repository_code_words WHERE word IN ('shared', 'parse')")
        ).all()
        assert sorted(map(tuple, stored)) == [("parse", 25), ("shared", 25)]
    migrate.downgrade(engine, "0019")
    with engine.connect() as conn:
        columns = {c["name"] for c in inspect(conn).get_columns("code_chunks")}
        assert "code_tsv" not in columns
        assert "repository_code_words" not in inspect(conn).get_table_names()
    engine.dispose()


def test_migrations_that_build_vector_indexes_allow_themselves_the_memory(
    empty_database_url: URL,
) -> None:
    """pgvector refuses an ivfflat build whose k-means does not fit in
    ``maintenance_work_mem``; 0007 and 0019 build the repositories' indexes and 0020
    rewrites the table (every index is built again), so each raises it for itself. Here
    the server allows 1 MB and a 25-list build needs about 8."""
    engine = make_engine(DatabaseTarget(empty_database_url, False))
    migrate.upgrade(engine, "0006")
    rng = random.Random(7)
    repo = _seed_repositories(engine, {"o/large": 2_500}, "[" + ",".join(["0.5"] * 1536) + "]")[0]
    with engine.begin() as conn:
        conn.execute(  # vectors apart, so k-means has something to do
            text("UPDATE code_chunks SET embedding = CAST(:v AS vector) WHERE id % 7 = :k"),
            [
                {"v": "[" + ",".join(f"{rng.random():.3f}" for _ in range(1536)) + "]", "k": k}
                for k in range(7)
            ],
        )
        conn.execute(
            text(
                f"ALTER DATABASE \"{empty_database_url.database}\" SET maintenance_work_mem = '1MB'"
            )
        )
    engine.dispose()
    for revision in ("0007", "0019", "0020"):
        migrate.upgrade(engine, revision)
        with engine.connect() as conn:
            assert conn.execute(text("SHOW maintenance_work_mem")).scalar_one() == "1MB"
            assert vector_index.index_settings(conn, repo) == (25, None), revision
    engine.dispose()
