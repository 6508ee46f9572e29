"""From a diff to the functions it changes, in the new and the old version of each file."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from app.diff.parse import FileDiff
from app.indexing.chunks import Chunk
from app.indexing.files import FileChunks, changed_chunks, chunk_file
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
    new counterpart (deleted or rewritten away), in diff order. The file versions are
    read concurrently, ``READ_CONCURRENCY`` at a time (``read`` must be thread-safe)."""
    diffs = [d for d in diffs if not (d.binary or d.mode_only)]
    wanted = [(d.path, "new") for d in diffs if d.status != "deleted"]
    wanted += [(d.old_path, "old") for d in diffs if d.status != "added"]
    with ThreadPoolExecutor(max_workers=max(1, min(READ_CONCURRENCY, len(wanted)))) as pool:
        versions = dict(zip(wanted, pool.map(lambda key: read(*key), wanted), strict=True))
    found: list[ChangedFunction] = []
    for diff in diffs:
        new = versions.get((diff.path, "new")) if diff.status != "deleted" else None
        old = versions.get((diff.old_path, "old")) if diff.status != "added" else None
        found.extend(_in_file(diff, new, old))
    return found


def _chunked(path: str, data: bytes | None, links: bool = True) -> FileChunks:
    return chunk_file(path, data, links=links) if data is not None else FileChunks(path, None, ())


def _in_file(diff: FileDiff, new: bytes | None, old: bytes | None) -> list[ChangedFunction]:
    new_file = _chunked(diff.path, new)
    # the old version's links serve only deleted functions: found when there are some
    old_file = _chunked(diff.old_path, old, links=False)
    new_chunks, old_chunks = list(new_file.chunks), list(old_file.chunks)
    result = _changed_in(diff, new_chunks, old_chunks)
    if any(c.status == "deleted" for c in result):
        old_file = _chunked(diff.old_path, old)
    return [
        replace(
            c,
            uses=links_in(
                list(old_file.links if c.status == "deleted" else new_file.links),
                whole_function(old_chunks if c.status == "deleted" else new_chunks, c.chunk),
            ),
        )
        for c in result
    ]


def whole_function(chunks: list[Chunk], chunk: Chunk) -> tuple[tuple[int, int], ...]:
    """The lines of the function ``chunk`` belongs to: a window of a long function stands
    for all of it, since a change anywhere in a function may rely on any of its callees."""
    if chunk.chunk_type != "window" or chunk.symbol_name is None:
        return chunk.segments
    windows = [
        c for c in chunks if c.chunk_type == "window" and c.qualified_name == chunk.qualified_name
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
    return tuple(sorted(n for n in lines if chunk.contains_line(n)))
