"""``ContextChunk``: a chunk of the repository offered to the reviewer as context, with
its evidence (why it was found), its score and what of it is shown. Pure data."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from app.retrieval.evidence import Evidence


@dataclass(frozen=True)
class ShownPart:
    """A stretch of a file's lines that a context item shows, and its share of the item's
    tokens."""

    start_line: int
    end_line: int
    tokens: int


@dataclass(frozen=True)
class ContextChunk:
    """A chunk offered to the reviewer, with why it was chosen."""

    chunk_id: int
    file_path: str
    start_line: int
    end_line: int
    symbol_name: str | None
    qualified_name: str | None
    chunk_type: str
    language: str | None
    summary: str | None
    code: str
    #: what it is ranked by: ``RelevanceModel.rank_score`` for a diff's context,
    #: ``RankingWeights.score`` of the evidence for a question's
    score: float = 0.0
    relevance: float = 0.0  # RelevanceModel.probability: how likely the reviewer needs it
    evidence: Evidence = field(default_factory=Evidence)
    tokens: int = 0
    secondary: bool = False  # tests, docs, examples, CI, config: ranked after code
    #: a window under its definition's signature (``window_heads``): ``start_line`` is
    #: the definition's first line, and this the first line of the window itself
    window_from: int = 0
    #: a window under its definition's signature: the last line of that definition's head
    #: in the file (the signature shown above the window, and the comments and decorators
    #: over it), so ``start_line``-``head_end`` is the head's stretch; 0 otherwise
    head_end: int = 0
    #: a window's whole definition (every window of it), for the names it uses
    #: (``edited_names``); '' for any other chunk
    definition_code: str = ""
    #: what the reviewer is shown instead of ``code``: its head and the lines holding the
    #: change's names (``excerpts``); '' to show it whole
    excerpt: str = ""
    #: the whole code's estimated tokens, when it is shown as an excerpt (0 otherwise)
    whole_tokens: int = 0
    #: a window of several stretches of lines (a window of a class skeleton: its own lines
    #: and its members' signatures, not their bodies): each one's first and last line;
    #: () for one stretch, ``window_from`` or ``start_line`` to ``end_line``
    segments: tuple[tuple[int, int], ...] = ()

    @property
    def signals(self) -> tuple[str, ...]:
        return self.evidence.signals

    @property
    def shown_tokens(self) -> int:
        """The tokens of what the reviewer is shown: the count itself once packed, else a
        quarter of the characters of its excerpt or code (the benchmarks' measure)."""
        return self.tokens or math.ceil(len(self.excerpt or self.code) / 4)

    @property
    def link_score(self) -> float:
        return self.evidence.link

    def shown_parts(self, tokens: int | None = None) -> tuple[ShownPart, ...]:
        """The stretches of the file the reviewer is shown, each with its share of
        ``tokens`` (the packed count by default): the chunk's own stretches (one, save for
        a window of a class skeleton, ``segments``), and before them, for a window under
        its definition's head, the head's lines, the lines between not shown (the
        window's share is a quarter of its characters, the head's the rest: the item's
        name, reasons and signature). A window's share is split over its stretches by
        their lines. Pure."""
        total = self.tokens if tokens is None else tokens
        own = self.segments or ((self.window_from or self.start_line, self.end_line),)
        if not self.window_from or not self.head_end or self.head_end >= self.window_from - 1:
            # no head apart: the first stretch starts at the item's first line
            return _split(((self.start_line, own[0][1]), *own[1:]), total)
        # the shown code is the signature, the marker of the lines left out, the window
        parts = (self.excerpt or self.code).split("\n", 2)
        window = min(total, math.ceil(len(parts[2]) / 4)) if len(parts) == 3 else 0
        return (ShownPart(self.start_line, self.head_end, total - window), *_split(own, window))

    def as_json(self, item: int = 0) -> list[dict[str, object]]:
        """The ``context --json`` entries of the ``item``-th chunk packed: one per
        stretch of lines shown (``shown_parts``), so that every entry's range is the
        lines it returns."""
        common = {
            "symbol_name": self.symbol_name,
            "chunk_type": self.chunk_type,
            "score": round(self.score, 6),
            "relevance": round(self.relevance, 6),
            "signals": list(self.signals),
            "why": self.evidence.reasons(),
            "excerpt": bool(self.excerpt),
            "item": item,
        }
        return [
            {
                "file_path": self.file_path,
                "start_line": part.start_line,
                "end_line": part.end_line,
                "tokens": part.tokens,
                **common,
            }
            for part in self.shown_parts()
        ]


def _split(stretches: tuple[tuple[int, int], ...], tokens: int) -> tuple[ShownPart, ...]:
    """``tokens`` shared over ``stretches`` by their lines, the rounding on the last."""
    lines = sum(end - start + 1 for start, end in stretches)
    parts, given = [], 0
    for i, (start, end) in enumerate(stretches):
        share = tokens - given if i == len(stretches) - 1 else tokens * (end - start + 1) // lines
        parts.append(ShownPart(start, end, share))
        given += share
    return tuple(parts)
