"""The index pipeline against the real database and a real OpenAI-compatible server."""

from __future__ import annotations

import io
import os
import shutil
import tarfile
import threading
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from app.config import Settings
from app.indexing.archive import ArchiveLimits, ArchiveTooLarge, TarballSource
from app.indexing.embedder import EmbeddingUsage, HashEmbedder, select_embedder
from app.indexing.indexer import IndexBusy, IndexReport
from tests.fakes.openai_server import CHAT, EMBEDDINGS, FakeOpenAI
from tests.support.indexing import index_tree

SAMPLES = Path(__file__).parents[1] / "unit" / "chunker_samples"
REPO = "acme/shop"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A small multi-language source tree with the awkward files real trees have."""
    root = tmp_path / "shop"
    shutil.copytree(SAMPLES, root / "src")
    (root / "assets").mkdir()
    (root / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    (root / "src" / "broken.py").write_text("def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("def generated():\n    pass\n")
    (root / "debug.log").write_text("noise\n")
    return root


def rows(engine: Engine) -> dict[int, tuple[object, ...]]:
    with engine.connect() as conn:
        result = conn.execute(
            text(
                "SELECT id, file_path, start_line, end_line, content_hash, nl_summary, summarizer,"
                " embedding_model, embedding IS NOT NULL, updated_at FROM code_chunks ORDER BY id"
            )
        )
        return {r[0]: tuple(r[1:]) for r in result}


def test_full_index_stores_llm_summaries_and_vectors(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tree: Path
) -> None:
    report = index_tree(engine, repo=REPO, settings=llm_settings, root=tree)

    assert report.files_skipped == {"binary": 1}
    assert report.files_changed == 16  # 15 samples + broken.py; build/ and *.log ignored
    stored = rows(engine)
    assert len(stored) == report.chunks_added == report.chunks_total > 60
    paths = {r[0] for r in stored.values()}
    assert "build/out.py" not in paths and "debug.log" not in paths
    assert all(r[5] == "llm" and r[6] == "text-embedding-3-small" and r[7] for r in stored.values())
    with engine.connect() as conn:
        summary = conn.execute(
            text("SELECT nl_summary FROM code_chunks WHERE qualified_name = 'cache.Store.Get'")
        ).scalar_one()
        run = conn.execute(
            text(
                "SELECT status, summary_calls, summary_prompt_tokens, embedding_calls"
                " FROM index_runs"
            )
        ).one()
        broken = (
            conn.execute(
                text("SELECT qualified_name FROM code_chunks WHERE file_path = 'src/broken.py'")
            )
            .scalars()
            .all()
        )
    assert summary == "Summary of cache.Store.Get: it does what cache.Store.Get says."
    assert run.status == "succeeded"
    assert run.summary_calls == fake_openai.calls(CHAT) > 0
    assert run.summary_prompt_tokens > 0
    assert run.embedding_calls == fake_openai.calls(EMBEDDINGS) > 0
    assert "ok" in broken  # a syntax error elsewhere in the file does not lose `ok`
    with engine.connect() as conn:  # what the dashboard's spend chart adds up
        usage = conn.execute(
            text("SELECT purpose, model, calls FROM model_usage ORDER BY purpose")
        ).all()
    assert [tuple(u) for u in usage] == [
        ("embedding", "text-embedding-3-small", run.embedding_calls),
        ("summary", llm_settings.summary_model, run.summary_calls),
    ]


def test_reindex_without_changes_makes_no_model_calls(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tree: Path
) -> None:
    index_tree(engine, repo=REPO, settings=llm_settings, root=tree)
    before = rows(engine)
    fake_openai.reset()

    report = index_tree(engine, repo=REPO, settings=llm_settings, root=tree)
    assert fake_openai.requests == []
    assert report.files_changed == 0 and report.files_unchanged == 16
    assert rows(engine) == before

    for path in tree.rglob("*.go"):  # new mtime, same content: read and hashed, nothing else
        os.utime(path, ns=(1, 1))
    report = index_tree(engine, repo=REPO, settings=llm_settings, root=tree)
    assert fake_openai.requests == []
    assert report.files_unchanged == 16
    assert rows(engine) == before


def test_editing_one_function_costs_one_summary_and_one_embedding(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tree: Path
) -> None:
    index_tree(engine, repo=REPO, settings=llm_settings, root=tree)
    before = rows(engine)
    fake_openai.reset()
    source = tree / "src" / "sample.go"
    source.write_text(source.read_text().replace("return e.Value, true", "return e.Value, ok"))

    report = index_tree(engine, repo=REPO, settings=llm_settings, root=tree)

    assert fake_openai.calls(CHAT) == 1 and fake_openai.calls(EMBEDDINGS) == 1
    [chat] = fake_openai.bodies(CHAT)
    assert "cache.Store.Get" in chat["messages"][0]["content"]
    assert "cache.Store.Len" not in chat["messages"][0]["content"]
    after = rows(engine)
    removed, added = set(before) - set(after), set(after) - set(before)
    assert len(removed) == len(added) == 1
    assert {k: v for k, v in before.items() if k not in removed} == {
        k: v for k, v in after.items() if k not in added
    }
    assert (report.chunks_added, report.chunks_deleted, report.chunks_updated) == (1, 1, 0)


def test_rename_reuses_summaries_and_vectors_and_delete_removes_rows(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tree: Path
) -> None:
    index_tree(engine, repo=REPO, settings=llm_settings, root=tree)
    fake_openai.reset()
    (tree / "src" / "sample.rs").rename(tree / "src" / "config_parser.rs")
    (tree / "src" / "sample.java").unlink()

    report = index_tree(engine, repo=REPO, settings=llm_settings, root=tree)

    assert fake_openai.requests == []
    assert report.files_deleted == 2 and report.files_changed == 1
    paths = {r[0] for r in rows(engine).values()}
    assert "src/config_parser.rs" in paths
    assert "src/sample.rs" not in paths and "src/sample.java" not in paths
    with engine.connect() as conn:
        summaries = (
            conn.execute(
                text(
                    "SELECT DISTINCT summarizer FROM code_chunks"
                    " WHERE file_path = 'src/config_parser.rs'"
                )
            )
            .scalars()
            .all()
        )
    assert summaries == ["llm"]


def test_rate_limited_llm_is_retried(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tree: Path
) -> None:
    settings = llm_settings.model_copy(update={"summary_concurrency": 1})
    fake_openai.fail_next(CHAT, [429])
    report = index_tree(engine, repo=REPO, settings=settings, root=tree)
    assert fake_openai.calls(CHAT, ok_only=False) == fake_openai.calls(CHAT) + 1
    assert report.summaries_heuristic == 0
    assert report.errors == []


def test_llm_down_falls_back_to_heuristic_and_a_later_run_upgrades(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tree: Path
) -> None:
    fake_openai.down = True
    report = index_tree(engine, repo=REPO, settings=llm_settings, root=tree)
    assert report.summaries_llm == 0 and report.summaries_heuristic == report.chunks_added
    assert any("HTTP 503" in e for e in report.errors)
    with engine.connect() as conn:
        kinds = conn.execute(text("SELECT DISTINCT summarizer FROM code_chunks")).scalars().all()
        missing = conn.execute(
            text("SELECT count(*) FROM code_chunks WHERE embedding IS NULL")
        ).scalar_one()
    assert kinds == ["heuristic"]
    assert missing == report.chunks_added  # embeddings failed too; rows kept

    fake_openai.reset()
    upgrade = index_tree(engine, repo=REPO, settings=llm_settings, root=tree)
    assert upgrade.files_changed == 0
    assert upgrade.chunks_updated == report.chunks_added
    with engine.connect() as conn:
        kinds = conn.execute(text("SELECT DISTINCT summarizer FROM code_chunks")).scalars().all()
        missing = conn.execute(
            text("SELECT count(*) FROM code_chunks WHERE embedding IS NULL")
        ).scalar_one()
    assert kinds == ["llm"] and missing == 0


def test_estimate_makes_no_calls_and_writes_nothing(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tree: Path
) -> None:
    report = index_tree(engine, repo=REPO, settings=llm_settings, root=tree, estimate=True)
    assert fake_openai.requests == []
    assert rows(engine) == {}
    assert report.summary_usage.calls > 0 and report.summary_usage.prompt_tokens > 0
    assert report.embedding_usage.calls > 0 and report.embedding_usage.tokens > 0


def test_secrets_in_code_never_reach_the_model(
    engine: Engine, llm_settings: Settings, fake_openai: FakeOpenAI, tree: Path
) -> None:
    (tree / "src" / "settings.py").write_text(
        'GITHUB_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"\n'
        'def connect():\n    return open_db(password="hunter2-hunter2")\n'
    )
    index_tree(engine, repo=REPO, settings=llm_settings, root=tree)
    sent = str(fake_openai.bodies(CHAT))
    assert "ghp_abcdefghijklmnopqrstuvwxyz0123456789" not in sent
    assert "hunter2-hunter2" not in sent
    assert "[REDACTED]" in sent


def test_one_run_per_repository_at_a_time(engine: Engine, settings: Settings, tree: Path) -> None:
    held = threading.Event()
    release = threading.Event()

    def hold_lock() -> None:
        with engine.connect() as conn:
            conn.execute(
                text("SELECT pg_advisory_lock(hashtext(:k))"), {"k": f"reviewbot:index:{REPO}"}
            )
            held.set()
            release.wait(10)
            conn.execute(text("SELECT pg_advisory_unlock_all()"))

    holder = threading.Thread(target=hold_lock)
    holder.start()
    held.wait(10)
    try:
        with pytest.raises(IndexBusy, match="another indexing run for acme/shop"):
            index_tree(engine, repo=REPO, settings=settings, root=tree)
    finally:
        release.set()
        holder.join()
    assert index_tree(engine, repo=REPO, settings=settings, root=tree).chunks_added > 0


def test_repo_config_filters_files(engine: Engine, settings: Settings, tree: Path) -> None:
    (tree / ".reviewbot.toml").write_text(
        '[index]\ninclude = ["src/**"]\nexclude = ["**/*.rb"]\nlanguages = ["go", "ruby", "rust"]\n'
    )
    index_tree(engine, repo=REPO, settings=settings, root=tree)
    paths = {r[0] for r in rows(engine).values()}
    assert paths == {"src/sample.go", "src/sample.rs"}


def test_hash_embedder_without_llm(engine: Engine, settings: Settings, tree: Path) -> None:
    assert isinstance(select_embedder(settings), HashEmbedder)
    report = index_tree(engine, repo=REPO, settings=settings, root=tree)
    assert report.embedding_model == "hash-v1"
    assert report.summaries_heuristic == report.chunks_added
    assert all(r[5] == "heuristic" and r[6] == "hash-v1" and r[7] for r in rows(engine).values())
    # the vector index's upkeep is timed apart from the rows' writes
    assert report.timings["vector_index"] > 0 and report.timings["db_write"] > 0
    assert "vector_index" in report.as_json()["timings"]  # type: ignore[operator]


def test_embedding_dimensions_are_asked_of_the_endpoint(
    llm_settings: Settings, fake_openai: FakeOpenAI
) -> None:
    settings = llm_settings.model_copy(update={"embedding_dimensions": 256})
    embedder = select_embedder(settings)
    [vector] = embedder.embed(["apply a discount"], EmbeddingUsage())
    assert [b.get("dimensions") for b in fake_openai.bodies(EMBEDDINGS)] == [256]
    assert len(vector) == 256


def _tarball(files: dict[str, bytes], commit: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(
        fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT, pax_headers={"comment": commit}
    ) as tar:
        for name, body in files.items():
            info = tarfile.TarInfo(f"acme-shop-{commit[:7]}/{name}")
            info.size, info.mtime = len(body), 1_700_000_000
            tar.addfile(info, io.BytesIO(body))
    return buffer.getvalue()


def test_tarball_is_indexed_streamed_and_an_over_limit_one_fails_whole(
    engine: Engine, settings: Settings
) -> None:
    good = "a" * 40
    files = {f"shop/m{i}.py": f"def f{i}(x):\n    return x + {i}\n".encode() for i in range(6)}

    def index(data: bytes, limits: ArchiveLimits) -> IndexReport:
        source = TarballSource("acme/shop@main", io.BytesIO(data), None, limits)
        return index_tree(engine, source, REPO)

    first = index(_tarball(files, good), ArchiveLimits())
    assert (first.files_changed, first.chunks_added, first.commit) == (6, 6, good)
    files["shop/m0.py"] = b"def f0(x):\n    return x - 1\n"
    with pytest.raises(ArchiveTooLarge):
        index(_tarball(files, "b" * 40), ArchiveLimits(max_members=3))
    with engine.connect() as conn:
        runs = conn.execute(text("SELECT status, error FROM index_runs ORDER BY id")).all()
        indexed = conn.execute(text("SELECT last_indexed_commit FROM repositories")).scalar()
        paths = conn.execute(text("SELECT count(DISTINCT file_path) FROM code_chunks")).scalar()
    assert [r.status for r in runs] == ["succeeded", "failed"]
    assert "more than 3 members" in runs[1].error
    assert indexed == good  # the failed run did not mark its commit indexed...
    assert paths == 6  # ...and deleted nothing
