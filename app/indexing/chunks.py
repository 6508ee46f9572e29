"""The ``Chunk``: what the index stores and retrieval returns, and its content hash."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from app.db.chunk_types import ChunkType


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of one source file.

    ``raw_code`` is the chunk's lines exactly as in the file (joined with ``\\n``); for a
    class it is the header, fields and member signatures without member bodies, and for
    module chunks the top-level lines that belong to no definition. ``segments`` are the
    1-based inclusive line ranges ``raw_code`` was taken from; ``start_line``/``end_line``
    span them. ``signature`` is the definition's signature, which windows of a split
    definition carry as context. ``references`` are the names the chunk calls or uses.
    """

    file_path: str
    language: str | None
    chunk_type: str
    symbol_name: str | None
    qualified_name: str | None
    start_line: int
    end_line: int
    raw_code: str
    segments: tuple[tuple[int, int], ...]
    signature: str | None
    docstring: str | None
    references: tuple[str, ...]
    content_hash: str

    @classmethod
    def build(
        cls,
        *,
        file_path: str,
        language: str | None,
        chunk_type: str,
        symbol_name: str | None,
        qualified_name: str | None,
        segments: tuple[tuple[int, int], ...],
        raw_code: str,
        signature: str | None = None,
        docstring: str | None = None,
        references: tuple[str, ...] = (),
    ) -> Chunk:
        """A chunk with its span and content hash derived from the other fields."""
        return cls(
            file_path=file_path,
            language=language,
            chunk_type=chunk_type,
            symbol_name=symbol_name,
            qualified_name=qualified_name,
            start_line=segments[0][0],
            end_line=segments[-1][1],
            raw_code=raw_code,
            segments=segments,
            signature=signature,
            docstring=docstring,
            references=references,
            content_hash=content_hash(
                language, chunk_type, _hashed_name(chunk_type, language, qualified_name), raw_code
            ),
        )

    def contains_line(self, line: int) -> bool:
        return any(start <= line <= end for start, end in self.segments)


def _hashed_name(chunk_type: str, language: str | None, qualified_name: str | None) -> str | None:
    """Definitions hash with their name; module code and plain-text windows are named after
    their file, and a renamed file must keep its hashes, so their name does not count."""
    return None if chunk_type == ChunkType.MODULE or language is None else qualified_name


def content_hash(
    language: str | None, chunk_type: str, qualified_name: str | None, raw_code: str
) -> str:
    """sha256 of what a chunk is, not where: no path, no line numbers.

    Identical code under the same name hashes the same in any file or position, so a
    moved or renamed file reuses its cached summaries and embeddings.
    """
    payload = "\0".join((language or "", chunk_type, qualified_name or "", raw_code))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()


def segments_of(line_numbers: list[int]) -> tuple[tuple[int, int], ...]:
    """Collapse sorted line numbers into inclusive ranges: [1,2,3,7] -> ((1,3),(7,7))."""
    if not line_numbers:
        return ()
    first, last = line_numbers[0], line_numbers[-1]
    if last - first + 1 == len(line_numbers):  # contiguous, the common case
        return ((first, last),)
    spans: list[tuple[int, int]] = []
    for number in line_numbers:
        if spans and number <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], number))
        else:
            spans.append((number, number))
    return tuple(spans)
