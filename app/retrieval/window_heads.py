"""A window found is offered under its definition's signature.

A definition too long for one chunk is cut into overlapping ``window`` chunks
(``app/indexing/windows.py``); only the first holds the signature. When a later window
is what a signal found (the lines sharing the change's words, say), the reviewer is
shown it headed by the definition's signature and its lines counted from the
definition's first line, as a class chunk spans its members' elided bodies: the item
names the function that may have to change, not an anonymous stretch of its body (on
the co-change benchmark, some targets are reached only through such a window:
bench/RESULTS.md). Since every window of a definition then starts at its first
line, ranking keeps the best of them; other chunks overlap a headed window only where
its own lines are (``ranking._overlap``). The same statement reads the definition's
other windows, so a window is judged by the names of its whole definition
(``edited_names``), and finds where the definition's head (its comments, decorators and
signature) ends, so that the lines shown are reported as the stretches they are
(``ContextChunk.shown_parts``): the head, then the window's own, which for a window of a
class skeleton are several (its own lines and its members' signatures, ``window_segments``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text

from app.db.chunk_types import ChunkType


@dataclass(frozen=True)
class Window:
    """Where a window chunk lies: its file, its definition's name and its lines."""

    file_path: str
    qualified_name: str | None
    start_line: int
    end_line: int


def definition_start(window: Window, siblings: Iterable[Window]) -> int:
    """The first line of the definition ``window`` was cut from: back through the windows
    of the same file and name that overlap or touch it, one after the other. Pure."""
    start = window.start_line
    spans = sorted(
        (
            (s.start_line, s.end_line)
            for s in siblings
            if s.file_path == window.file_path and s.qualified_name == window.qualified_name
        ),
        reverse=True,
    )
    for first, last in spans:
        if first < start <= last + 1:
            start = first
    return start


def headed_code(code: str, signature: str, definition_line: int, window_start: int) -> str:
    """A later window's code under its definition's signature, saying which lines are left
    out. Pure."""
    left_out = f"lines {definition_line}-{window_start - 1}"
    return f"{signature}\n... ({left_out} not shown; the window follows)\n{code}"


_SPACE = re.compile(r"\s+")
#: A signature running past its first window is known by its first characters.
SIGNATURE_PREFIX = 40


def head_length(first_window: str, signature: str) -> int:
    """How many of a definition's first lines hold its head: the comments and decorators
    above it and its ``signature`` (stored whitespace-collapsed, as the chunker writes it,
    and starting where the definition's node does: after ``export const`` for an arrow
    function), read from the code of its first window: all of it when the signature runs
    past it, 1 when the signature is not found there. Pure."""
    wanted = _SPACE.sub(" ", signature).strip()
    if not wanted:
        return 1
    joined, ends = "", []  # the window's lines collapsed as the signature is, and where each ends
    for line in first_window.split("\n"):
        text = _SPACE.sub(" ", line).strip()
        if text:
            joined = f"{joined} {text}" if joined else text
        ends.append(len(joined))
    found = joined.find(wanted)
    if found < 0:
        # a signature longer than the first window (attributes, a long parameter list)
        return len(ends) if joined.find(wanted[:SIGNATURE_PREFIX]) >= 0 else 1
    last = found + len(wanted)
    return next(i for i, end in enumerate(ends) if end >= last) + 1


@dataclass(frozen=True)
class Definition:
    """The definition a window was cut from."""

    start: int  # its first line (``definition_start``)
    code: str  # every window of it, in line order: the names it uses (``edited_names``)
    head_end: int = 0  # the last line of its head (``head_length``)


def window_definitions(
    conn: Connection, repo_id: int, windows: Mapping[int, Window], signatures: Mapping[int, str]
) -> dict[int, Definition]:
    """Each window's definition (by chunk id), from the repository's windows of the same
    files and names (one statement); its head found by the window's ``signatures``."""
    if not windows:
        return {}
    keys = sorted({(w.file_path, w.qualified_name or "") for w in windows.values()})
    rows = conn.execute(
        text(
            "SELECT c.file_path, c.qualified_name, c.start_line, c.end_line, c.raw_code"
            " FROM code_chunks c"
            " JOIN unnest(CAST(:files AS text[]), CAST(:names AS text[])) AS k(f, n)"
            " ON c.file_path = k.f AND coalesce(c.qualified_name, '') = k.n"
            " WHERE c.repository_id = :r AND c.chunk_type = 'window'"
            " ORDER BY c.file_path, c.start_line"
        ),
        {"r": repo_id, "files": [f for f, _ in keys], "names": [n for _, n in keys]},
    )
    by_file: dict[str, list[tuple[Window, str]]] = defaultdict(list)
    for path, name, start, end, code in rows:
        by_file[path].append((Window(path, name, start, end), code))
    found = {}
    for cid, w in windows.items():
        same = [
            (s, code) for s, code in by_file[w.file_path] if s.qualified_name == w.qualified_name
        ]
        start = definition_start(w, [s for s, _ in same])
        first = next((code for s, code in same if s.start_line == start), "")
        head = head_length(first, signatures.get(cid, ""))
        found[cid] = Definition(start, "\n".join(code for _, code in same), start + head - 1)
    return found


def window_segments(chunk_type: str, flat: Sequence[int] | None) -> tuple[tuple[int, int], ...]:
    """A window's stretches of lines from ``code_chunks.segments``, so that what it shows is
    reported as the stretches it is (``ContextChunk.shown_parts``). A class chunk keeps
    its one range, as it is named: the class, its members' bodies elided. Pure."""
    if chunk_type != ChunkType.WINDOW or not flat:
        return ()
    return tuple(zip(flat[::2], flat[1::2], strict=True))
