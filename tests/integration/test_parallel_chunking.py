"""A large run chunks files in worker processes (``app/indexing/parallel.py``): the rows it
writes are those of a run that chunks them itself, and those of a repository brought to
the same tree by incremental runs."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, text

from app.indexing.chunker import ChunkLimits
from app.indexing.parallel import ChunkJob, Parallelism, chunk_in_order
from tests.support.indexing import index_tree

#: Everything a row is made of but its ids and times.
CHUNK_COLUMNS = (
    "c.file_path, c.start_line, c.end_line, c.symbol_name, c.qualified_name, c.chunk_type,"
    " c.language, c.raw_code, c.signature, c.docstring, c.references, c.content_hash,"
    " c.nl_summary, c.summarizer, c.embedding::text, c.embedding_model, c.token_count,"
    " c.search_text, c.search_tsv::text"
)
LINK_COLUMNS = "file_path, line, name, match, target, qualifier, confidence, kind"


def _write_tree(root: Path, version: int) -> None:
    """Python, Go and TypeScript files that call each other; ``version`` 2 edits, adds
    and deletes some."""
    root.mkdir(parents=True, exist_ok=True)
    for n in range(12):
        body = (
            f"    return helper_{n}(value) + {n}\n" if version == 1 or n % 3 else "    return 0\n"
        )
        (root / f"mod_{n}.py").write_text(
            f"from util import helper_{n}\n\n\ndef handler_{n}(value):\n{body}\n\n"
            f"class Service{n}:\n    def run(self, value):\n        return handler_{n}(value)\n"
        )
    (root / "util.py").write_text(
        "\n\n".join(f"def helper_{n}(value):\n    return value * {n}" for n in range(12)) + "\n"
    )
    (root / "main.go").write_text(
        "package main\n\ntype Store interface{ Get(k string) string }\n\n"
        "type memory struct{}\n\nfunc (m memory) Get(k string) string { return k }\n"
    )
    (root / "app.ts").write_text(
        "export function greet(name: string): string {\n  return `hi ${name}`\n}\n"
    )
    if version == 1:
        (root / "old.py").write_text("def retired():\n    return 1\n")
    else:
        (root / "old.py").unlink(missing_ok=True)
        (root / "new.py").write_text("def added(x):\n    return helper_1(x)\n")


def _index(engine: Engine, repo: str, root: Path, workers: int, after: int) -> None:
    index_tree(engine, root, repo, parallelism=Parallelism(workers=workers, inline_files=after))


def _rows(engine: Engine, repo: str) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with engine.connect() as conn:
        chunks = conn.execute(
            text(
                f"SELECT {CHUNK_COLUMNS} FROM code_chunks c JOIN repositories r"
                " ON r.id = c.repository_id WHERE r.full_name = :n ORDER BY 1, 2, 3, 12"
            ),
            {"n": repo},
        ).all()
        links = conn.execute(
            text(
                f"SELECT {LINK_COLUMNS} FROM chunk_links WHERE repository_id ="
                " (SELECT id FROM repositories WHERE full_name = :n) ORDER BY 1, 2, 3, 5, 6"
            ),
            {"n": repo},
        ).all()
    return [tuple(r) for r in chunks], [tuple(r) for r in links]


def test_files_come_back_in_the_order_they_went_out() -> None:
    jobs = [
        (n, ChunkJob(f"f{n}.py", f"def f{n}():\n    return {n}\n".encode(), ChunkLimits(), 10**6))
        for n in range(9)
    ]
    inline = list(chunk_in_order(jobs, Parallelism(workers=0)))
    pooled = list(chunk_in_order(jobs, Parallelism(workers=2, inline_files=2, window=3)))
    assert [key for key, _ in pooled] == list(range(9))
    assert pooled == inline
    assert [r.chunks[0].symbol_name for _, r in pooled] == [f"f{n}" for n in range(9)]


def test_a_run_chunking_in_processes_writes_what_an_inline_run_and_incremental_runs_write(
    engine: Engine, tmp_path: Path
) -> None:
    final = tmp_path / "final"
    _write_tree(final, 2)
    _index(engine, "o/pooled", final, workers=1, after=0)  # every file through the pool
    _index(engine, "o/inline", final, workers=0, after=0)
    stepwise = tmp_path / "stepwise"
    _write_tree(stepwise, 1)
    _index(engine, "o/stepwise", stepwise, workers=0, after=0)
    _write_tree(stepwise, 2)  # then brought to the same tree incrementally
    _index(engine, "o/stepwise", stepwise, workers=1, after=0)

    pooled_chunks, pooled_links = _rows(engine, "o/pooled")
    assert len(pooled_chunks) > 30 and len(pooled_links) > 10
    assert any(row[0] == "new.py" for row in pooled_chunks)
    assert not any(row[0] == "old.py" for row in pooled_chunks)
    assert _rows(engine, "o/inline") == (pooled_chunks, pooled_links)
    assert _rows(engine, "o/stepwise") == (pooled_chunks, pooled_links)
