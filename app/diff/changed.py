"""From a diff to the functions it changes, in the new and the old version of each file."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from app.db.chunk_types import ChunkType
from app.diff.parse import FileDiff
from app.indexing.chunks import Chunk
from app.indexing.files import FileChunks, ParsedFile, changed_chunks, parse_file
from app.indexing.links import Link, links_in

#: ``read(path, side)`` -> the file's bytes at the diff's "old" or "new" side, or None.
SourceReader = Callable[[str, str], bytes | None]


@dataclass(frozen=True)
class ChangedFunction:
    """A chunk the diff touches, with the diff lines that fall inside it."""

    file_path: str
    status: str  # "modified" | "added" | "deleted"
    chunk: Chunk  # the new version; the old one for deleted functions
    added_lines: tuple[int, ...]  # new-file line numbers
    removed_lines: tuple[int, ...]  # old-file line numbers
    old_chunk: Chunk | None = None
    uses: tuple[Link, ...] = ()  # where the names this version uses are defined

    @property
    def symbol_name(self) -> str | None:
        return self.chunk.symbol_name

    @property
    def qualified_name(self) -> str | None:
        return self.chunk.qualified_name

    def as_json(self) -> dict[str, object]:
        return {
            "file_path": self.file_path,
            "symbol_name": self.chunk.symbol_name,
            "start_line": self.chunk.start_line,
            "end_line": self.chunk.end_line,
        }


#: File versions read at once: each read is a GitHub request (or a git process).
READ_CONCURRENCY = 8


def changed_functions(diffs: list[FileDiff], read: SourceReader) -> list[ChangedFunction]:
    """Every chunk with added lines (new side) and every chunk whose removed lines have no
    new counterpart (deleted or rewritten away), in diff order. Files are done
    ``READ_CONCURRENCY`` at a time (``read`` must be thread-safe): one file is chunked while
    the versions of others are still being read."""
    diffs = [d for d in diffs if not (d.binary or d.mode_only)]
    if not diffs:
        return []

    def in_file(diff: FileDiff) -> list[ChangedFunction]:
        new = read(diff.path, "new") if diff.status != "deleted" else None
        old = read(diff.old_path, "old") if diff.status != "added" else None
        return _in_file(diff, new, old)

    with ThreadPoolExecutor(max_workers=min(READ_CONCURRENCY, len(diffs))) as pool:
        return [function for found in pool.map(in_file, diffs) for function in found]


def _parsed(path: str, data: bytes | None) -> ParsedFile:
    return parse_file(path, data) if data is not None else ParsedFile(FileChunks(path, None, ()))


def _in_file(diff: FileDiff, new: bytes | None, old: bytes | None) -> list[ChangedFunction]:
    new_file, old_file = _parsed(diff.path, new), _parsed(diff.old_path, old)
    new_chunks, old_chunks = list(new_file.chunked.chunks), list(old_file.chunked.chunks)
    result = _changed_in(diff, new_chunks, old_chunks)
    kept = iter(_with_uses(new_file, new_chunks, [c for c in result if c.status != "deleted"]))
    gone = iter(_with_uses(old_file, old_chunks, [c for c in result if c.status == "deleted"]))
    return [next(gone) if c.status == "deleted" else next(kept) for c in result]


def _with_uses(
    parsed: ParsedFile, chunks: list[Chunk], functions: list[ChangedFunction]
) -> list[ChangedFunction]:
    """``functions`` with the links on their whole functions' lines, found in one pass
    over those lines only: the rest of a file is never searched from."""
    spans = [whole_function(chunks, f.chunk) for f in functions]
    wanted = tuple(sorted({segment for span in spans for segment in span}))
    links = list(parsed.links(wanted)) if wanted else []
    return [
        replace(f, uses=links_in(links, span)) for f, span in zip(functions, spans, strict=True)
    ]


def whole_function(chunks: list[Chunk], chunk: Chunk) -> tuple[tuple[int, int], ...]:
    """The lines of the function ``chunk`` belongs to: a window of a long function stands
    for all of it, since a change anywhere in a function may rely on any of its callees."""
    if chunk.chunk_type != ChunkType.WINDOW or chunk.symbol_name is None:
        return chunk.segments
    windows = [
        c
        for c in chunks
        if c.chunk_type == ChunkType.WINDOW and c.qualified_name == chunk.qualified_name
    ]
    return tuple(sorted({s for c in windows for s in c.segments}))


def _changed_in(
    diff: FileDiff, new_chunks: list[Chunk], old_chunks: list[Chunk]
) -> list[ChangedFunction]:
    old_by_name = {c.qualified_name: c for c in old_chunks}
    new_names = {c.qualified_name for c in new_chunks}
    touched_old = changed_chunks(old_chunks, diff.removed_lines)
    result: list[ChangedFunction] = []
    for chunk in changed_chunks(new_chunks, diff.added_lines):
        old = old_by_name.get(chunk.qualified_name)
        removed = _lines_in(old, diff.removed_lines) if old else ()
        status = "modified" if old is not None else "added"
        result.append(
            ChangedFunction(
                diff.path, status, chunk, _lines_in(chunk, diff.added_lines), removed, old
            )
        )
    done = {(c.chunk.qualified_name) for c in result}
    for old in touched_old:
        if old.qualified_name in done:
            continue
        if old.qualified_name in new_names:  # only lines removed from a function that remains
            new = next(c for c in new_chunks if c.qualified_name == old.qualified_name)
            result.append(
                ChangedFunction(
                    diff.path, "modified", new, (), _lines_in(old, diff.removed_lines), old
                )
            )
        else:
            result.append(
                ChangedFunction(
                    diff.path, "deleted", old, (), _lines_in(old, diff.removed_lines), old
                )
            )
        done.add(old.qualified_name)
    return result


def _lines_in(chunk: Chunk, lines: frozenset[int]) -> tuple[int, ...]:
    """The ``lines`` in ``chunk``, sorted: by walking whichever is shorter, the chunk's
    span or the lines (a diff of a new file has thousands)."""
    found: set[int] = set()
    for start, end in chunk.segments:
        if end - start < len(lines):
            found.update(n for n in range(start, end + 1) if n in lines)
        else:
            found.update(n for n in lines if start <= n <= end)
    return tuple(sorted(found))
