"""Context for a diff: queries per changed function, signals, fusion, ranking, packing."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import openai
import pathspec
from sqlalchemy import Connection, Engine, text

from app.config import Settings
from app.diff.changed import ChangedFunction
from app.diff.parse import FileDiff
from app.indexing.embedder import Embedder, EmbeddingError, EmbeddingUsage
from app.llm.tokens import token_counter
from app.logs import kv
from app.retrieval.fusion import interleave, reciprocal_rank_fusion
from app.retrieval.links import LinkHit, linked_callers, linked_definitions
from app.retrieval.queries import RetrievalQuery, describe_change_with_llm, heuristic_queries
from app.retrieval.ranking import (
    Candidate,
    ContextChunk,
    FunctionScores,
    merge_function_scores,
    pack,
    rank_context,
)
from app.retrieval.search import indexed_repository
from app.retrieval.signals import lexical_signals, vector_signals

log = logging.getLogger(__name__)

#: Weights of the fill signals in fusion. The vector signal searches once per function,
#: with both views of it in one query (``vector_texts``), and weighs what its two
#: searches, one per view, weighed before. Links, twice as strong, are not fused: they
#: rank first on their own (``rank_key``).
SIGNAL_WEIGHTS = {"vector": 2.0, "lexical": 1.0}
#: A question asked in a PR is one query, searched once by each signal: equal weights.
QUESTION_WEIGHTS = {"vector": 1.0, "lexical": 1.0}
#: Links are bounded by what a function uses and who calls it, and their confidence orders
#: them, so the structural signal keeps more than a search signal's top k.
LINKS_PER_SIGNAL_HIT = 3
#: What a changed test, doc or example links to ranks below what changed code links to.
SECONDARY_CHANGE_WEIGHT = 0.5


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

    def as_json(self) -> dict[str, object]:
        return {
            "changed": [c.as_json() for c in self.changed],
            "context": [c.as_json() for c in self.context],
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
    llm: openai.OpenAI | None = None,
    budget: int | None = None,
) -> ContextResult:
    """Search, fuse, rank and pack context for ``changed`` under the token budget."""
    begun = time.perf_counter()
    budget = budget or settings.context_token_budget
    counter = token_counter()
    result = ContextResult(list(changed), [], 0, budget, counter.name)
    if not changed:
        return result
    searched = most_changed([c for c in changed if searchable(c)], settings.retrieval_max_functions)
    queries = build_queries(
        searched,
        diffs,
        llm if settings.retrieval_llm_queries else None,
        settings.summary_model,
        settings.query_max_tokens,
    )
    signals = set(settings.retrieval_signals)
    started = time.perf_counter()
    vectors: list[list[float]] = []
    if "vector" in signals:
        texts = vector_texts(searched, queries)
        embedded = _embedded(embedder, texts, result.embedding_usage, repo)
        if embedded is None:
            signals.discard("vector")
            settings = settings.model_copy(update={"retrieval_signals": tuple(sorted(signals))})
        vectors = embedded or []
    result.timings["embedding_s"] = time.perf_counter() - started

    started = time.perf_counter()
    chunks = candidate_chunks(
        engine, repo, embedder.model, changed, diffs, searched, queries, vectors, settings
    )
    result.timings["database_s"] = time.perf_counter() - started
    ranked = rank_context(chunks, settings.max_chunks_per_file)
    result.context, result.tokens_used = pack(ranked, counter.usable(budget), counter.count)
    result.timings["total_s"] = time.perf_counter() - begun
    return result


def candidate_chunks(
    engine: Engine,
    repo: str,
    model: str,
    changed: Sequence[ChangedFunction],
    diffs: Sequence[FileDiff],
    searched: Sequence[ChangedFunction],
    queries: Sequence[RetrievalQuery],
    vectors: Sequence[Sequence[float]],
    settings: Settings,
) -> list[ContextChunk]:
    """The database part of a review's retrieval (``timings["database_s"]``): every
    signal for the ``searched`` functions, merged, and the candidates' rows, leaving out
    what the diff makes stale."""
    secondary = secondary_paths(settings.retrieval_secondary_paths)
    with engine.begin() as conn:
        repo_id = indexed_repository(conn, repo, model)
        exclude = stale_chunk_ids(conn, repo_id, changed, diffs)
        scores = _function_scores(
            conn, repo_id, searched, queries, vectors, model, exclude, settings, engine
        )
        per_function = [
            found.weighted(SECONDARY_CHANGE_WEIGHT if secondary(function.file_path) else 1.0)
            for function, found in zip(searched, scores, strict=True)
        ]
        return _load(conn, merge_function_scores(per_function), secondary)


def secondary_paths(patterns: Sequence[str]) -> Callable[[str], bool]:
    """``is_secondary(path)`` for gitignore-style ``patterns``, each path matched once: a
    PR's candidates come from fewer files than rows, and matching the 33 default patterns
    takes about 15 microseconds a path (11 ms for a PR's 750 candidates, bench/RESULTS.md)."""
    return functools.cache(_spec(tuple(patterns)).match_file)


@functools.lru_cache(maxsize=8)
def _spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """The compiled patterns (2.7 ms for the defaults), once per process."""
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def searchable(function: ChangedFunction) -> bool:
    """Code is searched for; prose, config and unparsed text stay in the diff only."""
    return function.chunk.language is not None


def _function_scores(
    conn: Connection,
    repo_id: int,
    searched: Sequence[ChangedFunction],
    queries: Sequence[RetrievalQuery],
    vectors: Sequence[Sequence[float]],
    model: str,
    exclude: Sequence[int],
    settings: Settings,
    engine: Engine | None = None,
) -> list[FunctionScores]:
    """Every signal for every searched function, each signal in a constant number of
    statements (not one per function). With ``engine``, the full-text statement runs on a
    connection of its own while the vector and link statements run on ``conn``: on zod it
    took as long as the other two together (bench/RESULTS.md)."""
    k = settings.retrieval_per_signal
    signals = settings.retrieval_signals
    terms = [lexical_terms(f, queries) for f in searched] if "lexical" in signals else []
    rankings: list[dict[str, list[int]]] = [{} for _ in searched]
    links: list[list[LinkHit]] = [[] for _ in searched]
    with ThreadPoolExecutor(max_workers=1) as pool:
        lexical = (
            pool.submit(_lexical_apart, engine, repo_id, terms, exclude, k)
            if "lexical" in signals and engine is not None
            else None
        )
        if "vector" in signals:
            found = vector_signals(conn, repo_id, vectors, model, exclude, k)
            for ranking, ids in zip(rankings, found, strict=True):
                ranking["vector"] = ids
        if "structural" in signals:
            depth = k * LINKS_PER_SIGNAL_HIT
            definitions = linked_definitions(conn, repo_id, searched, exclude, depth)
            callers = linked_callers(conn, repo_id, searched, exclude, depth)
            links = [d + c for d, c in zip(definitions, callers, strict=True)]
        if "lexical" in signals:
            found = (
                lexical.result()
                if lexical is not None
                else lexical_signals(conn, repo_id, terms, exclude, k)
            )
            for ranking, ids in zip(rankings, found, strict=True):
                ranking["lexical"] = ids
    return [_scores(r, hits, settings) for r, hits in zip(rankings, links, strict=True)]


def _lexical_apart(
    engine: Engine, repo_id: int, terms: list[list[str]], exclude: Sequence[int], k: int
) -> list[list[int]]:
    with engine.connect() as conn:
        return lexical_signals(conn, repo_id, terms, exclude, k)


def _scores(
    rankings: dict[str, list[int]],
    links: Sequence[LinkHit],
    settings: Settings,
    weights: Mapping[str, float] = SIGNAL_WEIGHTS,
) -> FunctionScores:
    """One function's fused fill signals and its links. Pure."""
    found = FunctionScores()
    found.fused = (
        reciprocal_rank_fusion(rankings, weights=weights)
        if settings.retrieval_fusion == "rrf"
        else interleave(rankings)
    )
    for name, ids in rankings.items():
        for cid in ids:
            found.signals.setdefault(cid, set()).add(name.split(":")[0])
    for hit in links:
        found.links[hit.chunk_id] = max(found.links.get(hit.chunk_id, 0.0), hit.score)
        found.signals.setdefault(hit.chunk_id, set()).add("structural")
    return found


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
    query embeddings; the fused recall held (bench/RESULTS.md)."""
    return ["\n".join(q.text for q in queries if q.function is function) for function in searched]


def lexical_terms(function: ChangedFunction, queries: Sequence[RetrievalQuery]) -> list[str]:
    """What the lexical signal searches for: the change view, the name, the references."""
    terms = [q.text for q in queries if q.function is function and q.view == "change"]
    return [*terms, function.qualified_name or "", *function.chunk.references]


def stale_chunk_ids(
    conn: Connection, repo_id: int, changed: Sequence[ChangedFunction], diffs: Sequence[FileDiff]
) -> list[int]:
    """Rows that must not come back as context: the changed functions' indexed versions and
    every row of a touched file whose content is not in the file's new version."""
    paths = sorted({d.path for d in diffs} | {d.old_path for d in diffs})
    fresh = {(c.file_path, c.chunk.content_hash) for c in changed if c.status != "deleted"}
    changed_names = {(c.file_path, c.qualified_name) for c in changed} | {
        (d.old_path, c.qualified_name) for c in changed for d in diffs if d.path == c.file_path
    }
    rows = conn.execute(
        text(
            "SELECT id, file_path, qualified_name, content_hash FROM code_chunks"
            " WHERE repository_id = :r AND file_path = ANY(CAST(:p AS text[]))"
        ),
        {"r": repo_id, "p": paths},
    )
    deleted = {d.path for d in diffs if d.status == "deleted"}
    stale = []
    for chunk_id, path, name, content in rows:
        touched = (path, name) in changed_names or path in deleted
        if touched and (path, content) not in fresh:
            stale.append(chunk_id)
    return stale


def _load(
    conn: Connection, merged: dict[int, Candidate], secondary: Callable[[str], bool]
) -> list[ContextChunk]:
    if not merged:
        return []
    rows = conn.execute(
        text(
            "SELECT id, file_path, start_line, end_line, symbol_name, qualified_name, chunk_type,"
            " language, nl_summary, raw_code FROM code_chunks"
            " WHERE id = ANY(CAST(:ids AS bigint[]))"
        ),
        {"ids": list(merged)},
    )
    chunks = []
    for row in rows:
        candidate = merged[row.id]
        chunks.append(
            ContextChunk(
                chunk_id=row.id,
                file_path=row.file_path,
                start_line=row.start_line,
                end_line=row.end_line,
                symbol_name=row.symbol_name,
                qualified_name=row.qualified_name,
                chunk_type=row.chunk_type,
                language=row.language,
                summary=row.nl_summary,
                code=row.raw_code,
                score=candidate.score,
                signals=tuple(sorted(candidate.signals)),
                found_for=candidate.found_for,
                link_score=candidate.link_score,
                secondary=row.language is None or secondary(row.file_path),
            )
        )
    return chunks


def retrieve_for_question(
    engine: Engine,
    repo: str,
    question: str,
    embedder: Embedder,
    settings: Settings,
) -> list[ContextChunk]:
    """Context for a question asked in a PR: the question itself is the query of the
    vector and lexical signals, fused, ranked and packed like a review's context."""
    counter = token_counter()
    signals = set(settings.retrieval_signals)
    vectors: list[list[float]] = []
    if "vector" in signals:
        vectors = _embedded(embedder, [question], EmbeddingUsage(), repo) or []
    k = settings.retrieval_per_signal
    with engine.begin() as conn:
        repo_id = indexed_repository(conn, repo, embedder.model)
        rankings: dict[str, list[int]] = {}
        if vectors:
            rankings["vector"] = vector_signals(conn, repo_id, vectors, embedder.model, [], k)[0]
        if "lexical" in signals:
            rankings["lexical"] = lexical_signals(conn, repo_id, [[question]], [], k)[0]
        merged = merge_function_scores([_scores(rankings, [], settings, QUESTION_WEIGHTS)])
        chunks = _load(conn, merged, secondary_paths(settings.retrieval_secondary_paths))
    ranked = rank_context(chunks, settings.max_chunks_per_file)
    packed, _ = pack(ranked, counter.usable(settings.context_token_budget), counter.count)
    return packed


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
