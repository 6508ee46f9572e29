"""Context for a diff: queries per changed function, signals, ranking, packing."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import openai
from sqlalchemy import Engine

from app.config import Settings
from app.db.queries.repositories import enrich_pending, find_repository
from app.diff.changed import ChangedFunction
from app.diff.parse import FileDiff
from app.indexing.embedder import Embedder, EmbeddingError, EmbeddingUsage
from app.indexing.stale import configured_progress
from app.llm.client import make_openai_client
from app.llm.tokens import token_counter
from app.logs import kv
from app.retrieval.candidates import (
    SearchInput,
    candidate_chunks,
    load_candidates,
    question_evidence,
    secondary_paths,
)
from app.retrieval.context_chunk import ContextChunk
from app.retrieval.edited_names import EditedNames, with_edited_names
from app.retrieval.excerpts import with_excerpts
from app.retrieval.natural_queries import (
    RetrievalQuery,
    describe_change_with_llm,
    heuristic_queries,
)
from app.retrieval.ranking import pack, rank_context
from app.retrieval.relevance import DIFF_RELEVANCE, RelevanceModel, scored
from app.retrieval.vector_search import SearchHit, indexed_repository
from app.retrieval.weights import (
    QUESTION_DEPTH,
    QUESTION_MAX_PER_FILE,
    QUESTION_WEIGHTS,
    RankingWeights,
    question_score,
)

log = logging.getLogger(__name__)


@dataclass
class ContextResult:
    """Retrieved context; ``as_json`` is the ``reviewbot context --json`` contract."""

    changed: list[ChangedFunction]
    context: list[ContextChunk]
    tokens_used: int
    budget: int
    token_counter: str
    timings: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(("embedding_s", "database_s", "total_s"), 0.0)
    )
    embedding_usage: EmbeddingUsage = field(default_factory=EmbeddingUsage)
    skipped: list[str] = field(default_factory=list)  # diff files the index does not hold
    notes: list[str] = field(default_factory=list)  # what the search had to leave out, and why

    def as_json(self) -> dict[str, object]:
        return {
            "changed": [c.as_json() for c in self.changed],
            "skipped": self.skipped,
            "notes": self.notes,
            "context": [part for i, c in enumerate(self.context) for part in c.as_json(i)],
            "tokens_used": self.tokens_used,
            "budget": self.budget,
            "token_counter": self.token_counter,
            "timings": {k: round(v, 4) for k, v in sorted(self.timings.items())},
        }


def build_queries(
    changed: Sequence[ChangedFunction],
    diffs: Sequence[FileDiff],
    llm: openai.OpenAI | None = None,
    model: str | None = None,
    max_tokens: int = 300,
) -> list[RetrievalQuery]:
    """Two views per changed function; the ``change`` view from the LLM when one is given."""
    by_path = {d.path: d for d in diffs}
    queries: list[RetrievalQuery] = []
    for function in changed:
        diff = by_path[function.file_path]
        views = heuristic_queries(function, diff)
        if llm is not None and model:
            described = describe_change_with_llm(llm, model, function, diff, max_tokens)
            if described:
                views = [
                    v if v.view != "change" else RetrievalQuery(function, "change", described)
                    for v in views
                ]
        queries.extend(views)
    return queries


def retrieve_context(
    engine: Engine,
    repo: str,
    diffs: Sequence[FileDiff],
    changed: Sequence[ChangedFunction],
    embedder: Embedder,
    settings: Settings,
    *,
    render: Callable[[ContextChunk], str],
    llm: openai.OpenAI | None = None,
    budget: int | None = None,
    model: RelevanceModel = DIFF_RELEVANCE,
) -> ContextResult:
    """Search, rank and pack context for ``changed`` under the token budget: each
    candidate ranked by ``model``'s probability per token, and costed as ``render`` (the
    prompt's) shows it. ``llm`` describes the changes for search when
    ``retrieval_llm_queries`` is on (default: the summaries' endpoint)."""
    begun = time.perf_counter()
    budget = budget or settings.context_token_budget
    counter = token_counter()
    result = ContextResult(list(changed), [], 0, budget, counter.name)
    if not changed:
        return result
    chunks = retrieval_candidates(
        engine, repo, diffs, changed, embedder, settings, result, llm=llm, model=model
    )
    ranked = rank_context(chunks, settings.max_chunks_per_file)
    result.context, result.tokens_used = pack(
        ranked, counter.usable(budget), block_cost(render, counter.count)
    )
    result.timings["total_s"] = time.perf_counter() - begun
    return result


def block_cost(
    render: Callable[[ContextChunk], str], count: Callable[[str], int]
) -> Callable[[ContextChunk], int]:
    """What a chunk costs in the prompt: its rendered block's tokens and the blank line
    that separates it from the next."""
    return lambda chunk: count(render(chunk)) + 1


def retrieval_candidates(
    engine: Engine,
    repo: str,
    diffs: Sequence[FileDiff],
    changed: Sequence[ChangedFunction],
    embedder: Embedder,
    settings: Settings,
    result: ContextResult,
    *,
    llm: openai.OpenAI | None = None,
    model: RelevanceModel = DIFF_RELEVANCE,
) -> list[ContextChunk]:
    """Every candidate chunk of every signal, given its excerpt (``excerpts``) and scored
    by ``model`` (probability per token shown), before ranking and packing (the timings
    and embedding usage go to ``result``). When the query embedding fails, the other
    signals still run: a warning, not an error."""
    searched = most_changed([c for c in changed if searchable(c)], settings.retrieval_max_functions)
    queries = build_queries(
        searched,
        diffs,
        _describer(llm, settings),
        settings.summary_model,
        settings.query_max_tokens,
    )
    signals = set(settings.retrieval_signals)
    started = time.perf_counter()
    vectors: list[list[float]] = []
    if "vector" in signals and (pending := _enrichment_note(engine, repo, embedder, settings)):
        signals.discard("vector")
        result.notes.append(pending)
    if "vector" in signals:
        embedded = _embedded(
            embedder, vector_texts(searched, queries), result.embedding_usage, repo
        )
        if embedded is None:
            signals.discard("vector")
            result.notes.append("Semantic search was left out: the embedding endpoint failed.")
        vectors = embedded or []
    result.timings["embedding_s"] = time.perf_counter() - started
    started = time.perf_counter()
    chunks = candidate_chunks(
        engine,
        repo,
        changed,
        diffs,
        SearchInput(searched, queries, vectors, embedder.model, diffs),
        signals,
        settings.retrieval_per_signal,
        settings.retrieval_secondary_paths,
    )
    result.timings["database_s"] = time.perf_counter() - started
    edited = EditedNames.of(diffs, {f.file_path for f in searched})
    shown = with_excerpts(with_edited_names(chunks, edited), edited.edited)
    return scored(shown, [d.path for d in diffs], model)


def searchable(function: ChangedFunction) -> bool:
    """Code is searched for; prose, config and unparsed text stay in the diff only."""
    return function.chunk.language is not None


def most_changed(changed: Sequence[ChangedFunction], limit: int) -> list[ChangedFunction]:
    """The ``limit`` functions with the most changed lines (diff order kept): a release-sized
    diff gains nothing from hundreds of searches for a few thousand tokens of context."""
    if len(changed) <= limit:
        return list(changed)
    ranked = sorted(
        range(len(changed)),
        key=lambda i: -(len(changed[i].added_lines) + len(changed[i].removed_lines)),
    )
    keep = set(ranked[:limit])
    return [c for i, c in enumerate(changed) if i in keep]


def vector_texts(
    searched: Sequence[ChangedFunction], queries: Sequence[RetrievalQuery]
) -> list[str]:
    """One vector query per function: its views (what it is, what changed) in one text.
    One search instead of one per view halves the vector signal's database time and the
    query embeddings; the recall held (bench/RESULTS.md)."""
    return ["\n".join(q.text for q in queries if q.function is function) for function in searched]


def retrieve_for_question(
    engine: Engine,
    repo: str,
    question: str,
    embedder: Embedder,
    settings: Settings,
    *,
    render: Callable[[ContextChunk], str],
    weights: RankingWeights = QUESTION_WEIGHTS,
) -> list[ContextChunk]:
    """Context for a question asked in a PR (``ranked_for_question``), packed like a
    review's context (costed as ``render`` shows it)."""
    counter = token_counter()
    ranked = ranked_for_question(engine, repo, question, embedder, settings, weights)
    usable = counter.usable(settings.context_token_budget)
    packed, _ = pack(ranked, usable, block_cost(render, counter.count))
    return packed


def search_question(
    engine: Engine, repo: str, question: str, embedder: Embedder, settings: Settings, k: int
) -> list[SearchHit]:
    """``reviewbot search`` and the dashboard's search: the ``k`` best chunks for a
    question, ranked as ``/ask`` ranks them (code before tests and docs)."""
    deeper = settings.model_copy(
        update={"retrieval_per_signal": max(k, settings.retrieval_per_signal)}
    )
    ranked = ranked_for_question(engine, repo, question, embedder, deeper)
    return [
        SearchHit(
            c.chunk_id,
            c.file_path,
            c.start_line,
            c.end_line,
            c.symbol_name,
            c.qualified_name,
            c.chunk_type,
            c.score,
            c.summary,
        )
        for c in ranked[:k]
    ]


def ranked_for_question(
    engine: Engine,
    repo: str,
    question: str,
    embedder: Embedder,
    settings: Settings,
    weights: RankingWeights = QUESTION_WEIGHTS,
) -> list[ContextChunk]:
    """A question in words is the query of the search signals (vector, lexical, words),
    fused by ``weights`` (outlines discounted: ``question_score``), code before tests and
    docs, de-duplicated, at most ``QUESTION_MAX_PER_FILE`` look-alikes of a file; best
    first."""
    signals = {"vector", "lexical", "words"} & set(settings.retrieval_signals)
    vectors: list[list[float]] = []
    if "vector" in signals and _enrichment_note(engine, repo, embedder, settings):
        signals.discard("vector")
    if "vector" in signals:
        vectors = _embedded(embedder, [question], EmbeddingUsage(), repo) or []
    k = max(settings.retrieval_per_signal, QUESTION_DEPTH)
    with engine.begin() as conn:
        repo_id = indexed_repository(conn, repo, embedder.model)
        found = question_evidence(conn, repo_id, question, vectors, embedder.model, signals, k)
        chunks = load_candidates(conn, found, secondary_paths(settings.retrieval_secondary_paths))
    scored = [replace(c, score=question_score(weights, c.evidence, c.chunk_type)) for c in chunks]
    return rank_context(scored, QUESTION_MAX_PER_FILE)


def _describer(llm: openai.OpenAI | None, settings: Settings) -> openai.OpenAI | None:
    """The client that describes changes for search (``retrieval_llm_queries``): the one
    given, else the summaries' endpoint (a cheap model's job, wherever it is served)."""
    if not settings.retrieval_llm_queries:
        return None
    if llm is None and settings.model_configured("summary"):
        return make_openai_client(settings, "summary")
    return llm


def _enrichment_note(
    engine: Engine, repo: str, embedder: Embedder, settings: Settings
) -> str | None:
    """Why the vector signal is left out, while the repository's summaries and vectors are
    still being made in the background (``app/flows/enrich.py``); else None."""
    with engine.connect() as conn:
        if not enrich_pending(conn, repo):
            return None
        repo_id = find_repository(conn, repo)
        if repo_id is None:
            return None
        done, total = configured_progress(conn, repo_id, settings, embedder.model)
    return (
        "Semantic search was left out: this repository's summaries and embeddings are "
        f"still being made ({done:,} of {total:,} chunks done); related code was found by "
        "links, history, siblings and full-text search."
    )


def _embedded(
    embedder: Embedder, texts: list[str], usage: EmbeddingUsage, repo: str
) -> list[list[float]] | None:
    """The texts' vectors; None when the embedder failed (the other signals still find
    context, so the failure is a warning)."""
    try:
        return embedder.embed(texts, usage)
    except EmbeddingError as exc:
        log.warning(kv("retrieval.vector_skipped", repo=repo, error=exc))
        return None
