"""Line windows: the size rule every chunk obeys, and the splitter for text without syntax.

A window holds at most ``max_lines`` lines and ``max_chars`` characters (newlines
between its lines count). Consecutive windows overlap by up to ``overlap_lines`` lines.
A single line longer than ``max_chars`` is cut into pieces of ``max_chars``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from app.db.chunk_types import ChunkType
from app.indexing.chunks import Chunk, segments_of

#: (1-based line number, the line's text without its newline)
Line = tuple[int, str]


@dataclass(frozen=True)
class ChunkLimits:
    """Size policy for chunks (README: "Chunking"): a function's chunk holds at most
    ``max_chars`` and ``max_lines``; a longer one is cut into windows that overlap by
    ``overlap_lines``."""

    max_chars: int = 1500
    max_lines: int = 40
    overlap_lines: int = 15

    def __post_init__(self) -> None:
        if self.max_chars < 1 or self.max_lines < 1:
            raise ValueError("max_chars and max_lines must be positive")
        if not 0 <= self.overlap_lines < self.max_lines:
            raise ValueError("overlap_lines must be at least 0 and below max_lines")


def text_size(lines: Sequence[Line]) -> int:
    """Characters of ``lines`` joined with newlines."""
    return sum(len(text) for _, text in lines) + max(0, len(lines) - 1)


def fits(lines: Sequence[Line], limits: ChunkLimits) -> bool:
    return len(lines) <= limits.max_lines and text_size(lines) <= limits.max_chars


def split_windows(lines: Sequence[Line], limits: ChunkLimits) -> list[list[Line]]:
    """Cut ``lines`` into overlapping windows that each fit ``limits``; order is kept."""
    windows: list[list[Line]] = []
    i, n = 0, len(lines)
    while i < n:
        size, j = 0, i
        while j < n and j - i < limits.max_lines:
            grow = len(lines[j][1]) + (1 if j > i else 0)
            if size + grow > limits.max_chars:
                break
            size += grow
            j += 1
        if j == i:  # one line longer than max_chars on its own
            number, text = lines[i]
            windows.extend(
                [(number, text[k : k + limits.max_chars])]
                for k in range(0, len(text), limits.max_chars)
            )
            i += 1
            continue
        windows.append(list(lines[i:j]))
        if j >= n:
            break
        i = max(j - limits.overlap_lines, i + 1)
    return windows


def window_chunks(path: str, text: str, language: str | None, limits: ChunkLimits) -> list[Chunk]:
    """The fallback: non-blank stretches of ``text`` cut into overlapping windows."""
    lines = [(i + 1, line) for i, line in enumerate(text.split("\n"))]
    while lines and not lines[-1][1].strip():
        lines.pop()
    while lines and not lines[0][1].strip():
        lines.pop(0)
    name = PurePosixPath(path).name
    return [
        chunk_from_lines(path, language, ChunkType.WINDOW, name, path, window)
        for window in split_windows(lines, limits)
    ]


def chunk_from_lines(
    path: str,
    language: str | None,
    chunk_type: str,
    symbol: str | None,
    qualified: str | None,
    lines: list[Line],
    segments: tuple[tuple[int, int], ...] | None = None,
    **extra: object,
) -> Chunk:
    """A chunk of ``lines`` (with ``segments``, else the runs of their line numbers)."""
    return Chunk.build(
        file_path=path,
        language=language,
        chunk_type=chunk_type,
        symbol_name=symbol,
        qualified_name=qualified,
        segments=segments or segments_of([n for n, _ in lines]),
        raw_code="\n".join(t for _, t in lines),
        **extra,  # type: ignore[arg-type]
    )
