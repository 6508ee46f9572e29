"""Index a large real source tree with the hash embedder; time full, no-op and one-file runs,
and, in the same run, a bare tree-sitter parse of the same files (issue 34's yardstick:
the full index within 3x of it) and the index's chunking alone, with and without links
(what an index run cannot go below on one core).

Default tree: the site-packages of the running interpreter (inside .venv: ~13k files of
real Python, C and data from the project's dependencies), copied to a temporary folder.
The database is a fresh embedded PostgreSQL in a temporary data directory (or
DATABASE_URL). Summaries are heuristic (no LLM), so the figures are the pipeline's own.

Usage: python bench/index_bench.py [TREE]
"""

from __future__ import annotations

import argparse
import logging
import resource
import shutil
import sysconfig
import tempfile
import time
from pathlib import Path

from app.config import Settings
from app.db.engine import open_database
from app.indexing.embedder import HashEmbedder
from app.indexing.indexer import Indexer, IndexReport
from bench.chunker_bench import code_files, time_chunk, time_parse


def run(engine: object, root: Path) -> tuple[float, IndexReport]:
    start = time.perf_counter()
    report = Indexer(engine, "bench/tree", root, embedder=HashEmbedder()).run()  # type: ignore[arg-type]
    return time.perf_counter() - start, report


def main() -> None:
    # the index rule's calibration (probes, index and exact-scan times, declined or not)
    calibration = logging.getLogger("app.db.vector_index")
    calibration.setLevel(logging.INFO)
    calibration.addHandler(logging.StreamHandler())
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "tree", nargs="?", type=Path, default=Path(sysconfig.get_paths()["purelib"])
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        shutil.copytree(
            args.tree, root, ignore=shutil.ignore_patterns("__pycache__"), symlinks=True
        )
        files = [
            (str(p.relative_to(root)), p.read_bytes())
            for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()
        ]
        code = code_files(files)
        parse_s = time_parse(code)
        chunks_s, _, _ = time_chunk(code, links=False)
        linked_s, _, _ = time_chunk(code)
        del files, code
        settings = Settings(data_dir=Path(tmp) / "data")
        with open_database(settings) as db:
            full_s, full = run(db.engine, root)
            noop_s, noop = run(db.engine, root)
            victim = sorted(root.rglob("*.py"))[len(list(root.rglob("*.py"))) // 2]
            victim.write_text(victim.read_text() + "\n\ndef bench_added(x):\n    return x + 1\n")
            one_s, one = run(db.engine, root)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t = full.timings
    accounted = sum(t.values())
    print(
        f"tree: {args.tree} ({full.files_seen} files, {full.files_changed} indexed, "
        f"skipped {dict(full.files_skipped)})"
    )
    print(
        f"full index : {full_s:.1f} s, {full.files_seen / full_s:.0f} files/s, "
        f"{full.chunks_added} chunks = {full.chunks_added / full_s:.0f} chunks/s"
    )
    print(
        f"bare parse : {parse_s:.1f} s (tree-sitter Parser.parse of the same files);"
        f" full index / bare parse = {full_s / parse_s:.2f}x"
    )
    print(
        f"chunking   : {chunks_s:.1f} s without links, {linked_s:.1f} s with them"
        f" (= {linked_s / parse_s:.2f}x the bare parse), the same files, inline"
    )
    shares = ", ".join(
        f"{k} {100 * v / full_s:.0f}%" for k, v in sorted(t.items(), key=lambda kv: -kv[1])
    )
    print(f"time shares: {shares}, other {100 * (full_s - accounted) / full_s:.0f}%")
    print(
        f"no-op      : {noop_s:.2f} s = {100 * noop_s / full_s:.2f}% of full "
        f"({noop.files_unchanged} unchanged)"
    )
    print(
        f"one file   : {one_s:.2f} s = {100 * one_s / full_s:.2f}% of full "
        f"(+{one.chunks_added} -{one.chunks_deleted} chunks in {victim.relative_to(root)})"
    )
    print(f"peak RSS   : {peak_mb:.0f} MB")
    lists = full.ivfflat_lists
    print(f"vector index: {f'{lists} lists' if lists else 'none (searched exactly)'}")


if __name__ == "__main__":
    main()
