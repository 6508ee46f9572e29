"""The product's side of the retrieval benchmarks: index a commit, mine the history up
to it, read a diff as ``reviewbot context`` does, and return every candidate with its
evidence, once; each retriever (all signals, one signal left out, one alone) is then
that list re-scored, ranked and packed, which is what running the product with those
signals does (a candidate no remaining signal found scores 0 and is dropped).

Candidates are also written out (``dump``) for ``bench/fit_ranking.py``.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from app.config import MAX_CHUNKS_PER_FILE
from app.db.vector_policy import VectorIndexPolicy
from app.retrieval.evidence import SIGNAL_NAMES, cleared
from bench.recall_cases import Item, git_bytes

#: The string-hashing seed the benchmarks run under (``repeatable``).
HASH_SEED = "0"


def repeatable() -> None:
    """Run the benchmark under a fixed string-hashing seed: this process again, with
    ``PYTHONHASHSEED`` set, unless the caller set one. Python hashes strings with a seed
    drawn per process, and some step of the retrieval depends on a set's order: unseeded,
    two runs of the same code and cases differed in 5 of 240 rows of one repository,
    seeded they were identical (bench/RESULTS.md, "Run to run"). A caller who sets the
    variable, to any value, keeps it."""
    if "PYTHONHASHSEED" not in os.environ:
        env = {**os.environ, "PYTHONHASHSEED": HASH_SEED}
        os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)


#: The signals, as the product registers them (``app/retrieval/evidence.py``).
SIGNALS = SIGNAL_NAMES


def _alone() -> Any:
    from app.retrieval.weights import RankingWeights

    return RankingWeights(
        link=1.0,
        cochange=1.0,
        sibling=1.0,
        lexical=1.0,
        vector=1.0,
        words=1.0,
        coupled_words=0.0,
        removed=1.0,
        shared=0.0,
    )


#: A signal on its own is ranked by its own evidence, every weight 1 (the relevance model
#: was fitted on all the signals together, not on one alone).
ALONE = _alone()


def retrievers() -> dict[str, tuple[str, ...]]:
    """All signals, each left out, and each alone."""
    found = {"reviewbot": SIGNALS}
    for signal in SIGNALS:
        found[f"without {signal}"] = tuple(s for s in SIGNALS if s != signal)
    for signal in SIGNALS:
        found[f"{signal} only"] = (signal,)
    return found


@dataclass(frozen=True)
class Candidate:
    """A candidate as the fitting script needs it: where, how big, and its evidence."""

    path: str
    start: int
    end: int
    chunk_type: str
    cost: int  # ceil(chars / 4) of its whole code (dumps before ``shown`` packed by it)
    secondary: bool
    evidence: dict[str, Any]
    window_from: int = 0  # a window under its definition's signature: its own first line
    shown: int = 0  # ceil(chars / 4) of what is shown (its excerpt, ``excerpts``): the budget
    #: ceil(chars / 4) of the line ranges it is reported as (``span_cost`` of each of
    #: ``ContextChunk.shown_parts``)
    lines: int = 0


def masked(evidence: Any, signals: Sequence[str]) -> Any:
    """The evidence with the fields of signals not in ``signals`` cleared (a signal on
    its own also loses the count of functions that found the chunk, which other signals
    may have made)."""
    kept = cleared(evidence, signals)
    return replace(kept, found_for=1) if len(signals) == 1 else kept


#: Vector search exact at every size: an ivfflat index is built from a random sample and
#: kept or declined by a timed race with an exact scan (``app/db/vector_policy.py``), so
#: with it two runs of the same cases differed, more under different machine load
#: (bench/RESULTS.md, "Run to run"). The product's index, calibrated to find 0.99 of the
#: exact neighbours, is measured on its own (``bench/vector_scale_bench.py``).
EXACT_VECTORS = VectorIndexPolicy(exact_max_rows=2**62)


class ProductRunner:
    """One embedded database and embedder for a whole benchmark run."""

    def __init__(self, engine: Any, embedder: Any, history: bool = True) -> None:
        from app.config import Settings

        self.engine, self.embedder, self.history = engine, embedder, history
        self.settings = Settings()
        self.timings: dict[str, list[float]] = {"database_s": [], "database_s_without_words": []}
        self.touched: list[str] = []  # the files of the last diff (``candidates``)

    def index(self, repo: str, git_dir: str, commit: str) -> None:
        from app.git import LocalRepo
        from app.indexing.archive import ArchiveLimits, GitArchiveSource
        from app.indexing.history import mine_history
        from app.indexing.indexer import Indexer, IndexOptions

        source = GitArchiveSource(git_dir, commit, None, ArchiveLimits())
        options = IndexOptions(vector_policy=EXACT_VECTORS)
        Indexer(self.engine, repo, source, embedder=self.embedder, options=options).run()
        if self.history:
            mine_history(self.engine, repo, LocalRepo(Path(git_dir)), commit)

    def candidates(
        self, repo: str, git_dir: str, parent: str, commit: str, paths: Sequence[str] = ()
    ) -> list[Any]:
        """Every candidate for the diff parent..commit (only ``paths``, when given)."""
        from app.diff.changed import changed_functions
        from app.diff.parse import parse_diff
        from app.git import LocalRepo
        from app.retrieval.retrieve import ContextResult, retrieval_candidates

        diffs = parse_diff(git_bytes(git_dir, "diff", parent, commit, "--", *paths))
        self.touched = [d.path for d in diffs]  # what the relevance model is told
        local = LocalRepo(Path(git_dir))
        sides = {"old": parent, "new": commit}
        changed = changed_functions(diffs, lambda path, side: local.read(sides[side], path))
        result = ContextResult(changed, [], 0, 0, "")
        chunks = retrieval_candidates(
            self.engine, repo, diffs, changed, self.embedder, self.settings, result
        )
        self.timings["database_s"].append(result.timings["database_s"])
        # the same retrieval without the words signal, for its cost
        signals = tuple(s for s in self.settings.retrieval_signals if s != "words")
        without = self.settings.model_copy(update={"retrieval_signals": signals})
        retrieval_candidates(self.engine, repo, diffs, changed, self.embedder, without, result)
        self.timings["database_s_without_words"].append(result.timings["database_s"])
        return chunks


def ranked(
    chunks: Sequence[Any],
    signals: Sequence[str],
    touched: Sequence[str],
    tokens: bool = False,
    span: Callable[[str, int, int], int] | None = None,
) -> list[Item]:
    """The benchmark items of ``chunks`` re-scored with only ``signals``, ranked and
    de-duplicated as the product does (everything packed: the budget is applied when
    scoring); with ``tokens``, each with its rendered block's exact token count. Ranked by
    the relevance model (told the ``touched`` files), a signal alone by its own evidence;
    with ``span``, each also costed by its whole line range (``Item.span``). A chunk shown
    as two stretches of lines (a window under its definition's head) is two items, as it
    is two entries of ``context --json``."""
    from app.llm.tokens import token_counter
    from app.retrieval.ranking import rank_context
    from app.retrieval.relevance import DIFF_RELEVANCE, scored
    from app.review.context_blocks import render_context_block

    rescored = []
    for chunk in chunks:
        evidence = masked(chunk.evidence, signals)
        if evidence.signals:
            rescored.append(replace(chunk, evidence=evidence, score=ALONE.score(evidence)))
    if len(signals) > 1:
        rescored = scored(rescored, touched, DIFF_RELEVANCE)
    count = token_counter().count
    items = []
    for c in rank_context(rescored, MAX_CHUNKS_PER_FILE):
        # one item per entry of ``context --json``: per stretch of lines shown
        shown = c.shown_parts(c.shown_tokens)  # what is shown (``excerpts``), before packing
        exact = c.shown_parts(count(render_context_block(c)) + 1 if tokens else 0)
        items += [
            Item(
                c.file_path,
                part.start_line,
                part.end_line,
                c.chunk_type,
                part.tokens,
                rendered.tokens,
                span(c.file_path, part.start_line, part.end_line) if span else 0,
            )
            for part, rendered in zip(shown, exact, strict=True)
        ]
    return items


def dump(
    chunks: Sequence[Any], span: Callable[[str, int, int], int] | None = None
) -> list[dict[str, Any]]:
    """Candidates as JSON-ready dictionaries (``Candidate``); with ``span``, each costed by
    its whole line range too."""
    return [
        asdict(
            Candidate(
                c.file_path,
                c.start_line,
                c.end_line,
                c.chunk_type,
                math.ceil(len(c.code) / 4),
                c.secondary,
                {f.name: getattr(c.evidence, f.name) for f in fields(c.evidence)},
                c.window_from,
                c.shown_tokens,
                sum(span(c.file_path, p.start_line, p.end_line) for p in c.shown_parts(0))
                if span
                else 0,
            )
        )
        for c in chunks
    ]


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else 0.0


def print_timings(timings: Mapping[str, Sequence[float]]) -> None:
    """Each timing's median and p90 per case, in milliseconds."""
    for name, values in timings.items():
        if values:
            print(
                f"\n{name} per case: median {statistics.median(values) * 1000:.1f} ms,"
                f" p90 {percentile(values, 0.9) * 1000:.1f} ms"
            )
