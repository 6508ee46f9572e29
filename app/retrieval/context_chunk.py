"""``ContextChunk``: a chunk of the repository offered to the reviewer as context, with
its evidence (why it was found), its score and what of it is shown. Pure data."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from app.retrieval.evidence import Evidence


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
    #: a window's whole definition (every window of it), for the names it uses
    #: (``edited_names``); '' for any other chunk
    definition_code: str = ""
    #: what the reviewer is shown instead of ``code``: its head and the lines holding the
    #: change's names (``excerpts``); '' to show it whole
    excerpt: str = ""
    #: the whole code's estimated tokens, when it is shown as an excerpt (0 otherwise)
    whole_tokens: int = 0

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

    def as_json(self) -> dict[str, object]:
        return {
            "file_path": self.file_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "symbol_name": self.symbol_name,
            "chunk_type": self.chunk_type,
            "score": round(self.score, 6),
            "relevance": round(self.relevance, 6),
            "tokens": self.tokens,
            "signals": list(self.signals),
            "why": self.evidence.reasons(),
            "excerpt": bool(self.excerpt),
        }
