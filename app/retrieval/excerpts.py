"""Look-alike context shown as an excerpt. Pure.

A chunk that no call links to the change (found by the search signals, by history or as
a sibling) is offered so that the reviewer can ask "should this have changed too?". For
that it needs the chunk's signature and the lines that hold the names the change
touched, not the whole body. So such a chunk of ``MIN_LINES`` lines or more is shown as
its first ``HEAD_LINES`` lines, then each line holding a name of the diff's changed
lines with ``CONTEXT`` lines either side, and a marker for every run of lines left out.
A name on most of the chunk's lines (the variable every line touches) tells nothing, so
it keeps no line. A chunk the excerpt would barely shorten is shown whole. A definition
the change calls or that calls it is always shown whole: its body is what the change
relies on.

A chunk is ranked by its probability per token shown and packed by what is shown, so
more of the candidates fit one budget. Measured on both benchmarks (bench/RESULTS.md,
"Look-alike context as excerpts").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from app.db.chunk_types import ChunkType
from app.indexing.chunks import segments_of
from app.retrieval.context_chunk import ContextChunk
from app.retrieval.edited_names import IDENTIFIER

#: Shorter chunks are shown whole: an excerpt would save a few lines at most.
MIN_LINES = 12
#: The signature (and a window's header, ``window_heads.headed_code``).
HEAD_LINES = 3
#: Lines kept either side of a line holding a changed name.
CONTEXT = 1
#: An excerpt keeping more of the lines than this is not worth the gaps: shown whole.
MAX_KEPT_SHARE = 0.6
#: A changed name on more of the chunk's lines than this (the list every line touches)
#: does not tell which lines matter.
EVERYWHERE_SHARE = 0.25


def excerpt(code: str, changed_names: frozenset[str] | set[str]) -> str:
    """``code`` cut to its head and the lines around ``changed_names``, or '' when it is
    better shown whole (short, or most of it would stay)."""
    cut = _cut(code, changed_names)
    return cut[0] if cut else ""


def _cut(code: str, changed_names: frozenset[str] | set[str]) -> tuple[str, list[int]] | None:
    """The excerpt and the indices of the code's lines it shows, in order; None when the
    code is better shown whole."""
    lines = code.split("\n")
    if len(lines) < MIN_LINES:
        return None
    held = [changed_names.intersection(IDENTIFIER.findall(line)) for line in lines]
    on_lines = Counter(n for found in held for n in found)
    telling = {n for n, count in on_lines.items() if count <= len(lines) * EVERYWHERE_SHARE}
    keep = set(range(HEAD_LINES))
    for i in range(HEAD_LINES, len(lines)):
        if not held[i].isdisjoint(telling):
            keep.update(range(i - CONTEXT, min(len(lines), i + CONTEXT + 1)))
    # a single line left out costs what its marker would: it is shown instead
    keep.update(i for i in range(1, len(lines) - 1) if i - 1 in keep and i + 1 in keep)
    if len(keep) > MAX_KEPT_SHARE * len(lines):
        return None
    shown: list[str] = []
    previous = -1
    for i in sorted(keep):
        if i > previous + 1:
            shown.append(_gap(lines[i], i - previous - 1))
        shown.append(lines[i])
        previous = i
    if previous < len(lines) - 1:
        shown.append(_gap(lines[previous], len(lines) - 1 - previous))
    return "\n".join(shown), sorted(keep)


def _gap(beside: str, count: int) -> str:
    """The marker of ``count`` lines left out, indented like the line ``beside`` it."""
    indent = beside[: len(beside) - len(beside.lstrip())]
    return f"{indent}... ({count} line{'s' if count > 1 else ''} not shown)"


def with_excerpts(
    chunks: Sequence[ContextChunk], changed_names: frozenset[str] | set[str]
) -> list[ContextChunk]:
    """``chunks`` with an ``excerpt`` for each one no call links to the change (class
    chunks already show only their header and members' signatures). An excerpt returns
    the lines it shows: its ``segments`` are the stretches of the file it keeps and its
    ``end_line`` the last of them (the marker of the lines left out after it stays, so
    the reader knows the code goes on)."""
    return [
        _excerpted(c, changed_names)
        if not c.evidence.link and c.chunk_type != ChunkType.CLASS and not c.segments
        else c
        for c in chunks
    ]


def _excerpted(chunk: ContextChunk, changed_names: frozenset[str] | set[str]) -> ContextChunk:
    cut = _cut(chunk.code, changed_names)
    if cut is None:
        return chunk
    text, kept = cut
    whole = math.ceil(len(chunk.code) / 4)
    lines = file_lines(chunk)
    if lines is None:  # code that is not its lines (never written so): one stretch, as is
        return replace(chunk, excerpt=text, whole_tokens=whole)
    # a window's header (its definition's signature and the marker of the lines between)
    # is shown as the head's stretch (``ContextChunk.shown_parts``), not as its own lines
    header = chunk.code.count("\n") + 1 - len(lines)
    shown = [lines[i - header] for i in kept if i >= header]
    if not shown:  # the header alone: the window's first line ends it, as before
        first = chunk.window_from or chunk.start_line
        return replace(chunk, excerpt=text, end_line=first, whole_tokens=whole, segments=())
    return replace(
        chunk,
        excerpt=text,
        end_line=shown[-1],
        whole_tokens=whole,
        segments=segments_of(shown),
    )


def file_lines(chunk: ContextChunk) -> list[int] | None:
    """The file line of each of the chunk's own lines of code (after a window's header),
    through its stretches; None when the code is not those lines (fewer, or more with no
    window's header to account for them). Pure."""
    lines = [n for start, end in chunk.own_stretches for n in range(start, end + 1)]
    header = chunk.code.count("\n") + 1 - len(lines)
    if header < 0 or (header and not chunk.window_from):
        return None
    return lines
