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


def _cut(code: str, changed_names: frozenset[str] | set[str]) -> tuple[str, int] | None:
    """The excerpt and how many of the code's last lines it leaves out after its last line
    shown; None when the code is better shown whole."""
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
    return "\n".join(shown), len(lines) - 1 - previous


def _gap(beside: str, count: int) -> str:
    """The marker of ``count`` lines left out, indented like the line ``beside`` it."""
    indent = beside[: len(beside) - len(beside.lstrip())]
    return f"{indent}... ({count} line{'s' if count > 1 else ''} not shown)"


def with_excerpts(
    chunks: Sequence[ContextChunk], changed_names: frozenset[str] | set[str]
) -> list[ContextChunk]:
    """``chunks`` with an ``excerpt`` for each one no call links to the change (class
    chunks already show only their header and members' signatures). An excerpt's
    ``end_line`` is its last line shown (the marker of the lines left out after it stays,
    so the reader knows the code goes on); its one range still includes the runs left
    out inside it (reporting its stretches instead was measured and not kept:
    bench/RESULTS.md, "An excerpt's stretches")."""
    return [
        _excerpted(c, changed_names)
        if not c.evidence.link and c.chunk_type != ChunkType.CLASS
        else c
        for c in chunks
    ]


def _excerpted(chunk: ContextChunk, changed_names: frozenset[str] | set[str]) -> ContextChunk:
    cut = _cut(chunk.code, changed_names)
    if cut is None:
        return chunk
    text, hidden_tail = cut
    # the hidden tail lies in the body: never above a window's own first line
    last_shown = max(chunk.window_from or chunk.start_line, chunk.end_line - hidden_tail)
    whole = math.ceil(len(chunk.code) / 4)
    return replace(chunk, excerpt=text, end_line=last_shown, whole_tokens=whole)
