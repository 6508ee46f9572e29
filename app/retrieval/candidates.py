"""The database part of a review's retrieval: every signal for every searched function,
each in a constant number of statements (not one per function), turned into one
``Evidence`` record per candidate chunk, and the candidates' rows."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import pathspec
from sqlalchemy import Connection, Engine, text

from app.db.chunk_types import ChunkType
from app.db.word_counts import word_counts
from app.diff.changed import ChangedFunction
from app.diff.parse import FileDiff
from app.retrieval.cochange import cochanged
from app.retrieval.context_chunk import ContextChunk
from app.retrieval.evidence import Evidence, merge_evidence
from app.retrieval.full_text import (
    CODE_HITS,
    QUESTION_LIMITS,
    code_word_scores,
    lexical_scores,
    question_terms,
)
from app.retrieval.hierarchy import overridden, overriding
from app.retrieval.links import LinkHit, linked_callers, linked_definitions
from app.retrieval.natural_queries import RetrievalQuery
from app.retrieval.removed import removed_names, still_using
from app.retrieval.siblings import SiblingHit, sibling_chunks
from app.retrieval.vector_search import indexed_repository
from app.retrieval.vector_signal import Scored, vector_scores
from app.retrieval.weights import RankingWeights
from app.retrieval.window_heads import Window, headed_code, window_definitions, window_segments

#: Links are bounded by what a function uses and who calls it, and their confidence orders
#: them, so the structural signal keeps more than a search signal's top k.
LINKS_PER_SIGNAL_HIT = 3
#: What a changed test, doc or example finds ranks below what changed code finds.
SECONDARY_CHANGE_WEIGHT = 0.5


@dataclass(frozen=True)
class SearchInput:
    """What the signals search with: the functions, their queries and query vectors."""

    searched: Sequence[ChangedFunction]
    queries: Sequence[RetrievalQuery]
    vectors: Sequence[Sequence[float]]
    model: str  # the embedding model the vectors came from
    diffs: Sequence[FileDiff] = ()


def candidate_chunks(
    engine: Engine,
    repo: str,
    changed: Sequence[ChangedFunction],
    diffs: Sequence[FileDiff],
    search: SearchInput,
    signals: Collection[str],
    k: int,
    secondary_patterns: Sequence[str],
) -> list[ContextChunk]:
    """Every signal in ``signals`` for the searched functions, merged, and the
    candidates' rows, leaving out what the diff makes stale (unscored: the relevance
    model scores them, ``retrieve.retrieval_candidates``)."""
    secondary = secondary_paths(secondary_patterns)
    with engine.begin() as conn:
        repo_id = indexed_repository(conn, repo, search.model)
        exclude = stale_chunk_ids(conn, repo_id, changed, diffs)
        found = function_evidence(conn, repo_id, search, exclude, signals, k, engine)
        per_function = [
            {cid: e.scaled(SECONDARY_CHANGE_WEIGHT) for cid, e in evidence.items()}
            if secondary(function.file_path)
            else evidence
            for function, evidence in zip(search.searched, found, strict=True)
        ]
        return load_candidates(conn, merge_evidence(per_function), secondary)


def secondary_paths(patterns: Sequence[str]) -> Callable[[str], bool]:
    """``is_secondary(path)`` for gitignore-style ``patterns``, each path matched once: a
    PR's candidates come from fewer files than rows, and matching the default patterns
    takes microseconds a path (bench/RESULTS.md)."""
    return functools.cache(_spec(tuple(patterns)).match_file)


@functools.lru_cache(maxsize=8)
def _spec(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """The compiled patterns, once per process."""
    return pathspec.GitIgnoreSpec.from_lines(patterns)


def function_evidence(
    conn: Connection,
    repo_id: int,
    search: SearchInput,
    exclude: Sequence[int],
    signals: Collection[str],
    k: int,
    engine: Engine | None = None,
) -> list[dict[int, Evidence]]:
    """For each searched function, what every signal found, as evidence per chunk. With
    ``engine``, the vector, lexical and words statements run on connections of their own
    while the others run on ``conn``: each takes about as long as the rest together
    (bench/RESULTS.md, "A PR's database time")."""
    functions = search.searched
    terms = [lexical_terms(f, search.queries) for f in functions] if "lexical" in signals else []
    depth = k * LINKS_PER_SIGNAL_HIT
    vectors = search.vectors if "vector" in signals else []
    codes, paths, owners = (
        word_queries(functions, search.diffs) if "words" in signals else ([], [], [])
    )
    words_k = max(k, CODE_HITS)
    with ThreadPoolExecutor(max_workers=3) as pool:
        lexical: Future[Scored] | None = None
        nearest: Future[Scored] | None = None
        same_words: Future[Scored] | None = None
        if engine is not None and "lexical" in signals:
            lexical = pool.submit(_lexical_apart, engine, repo_id, terms, exclude, k)
        if engine is not None and codes:
            same_words = pool.submit(_words_apart, engine, repo_id, codes, paths, exclude, words_k)
        if engine is not None and vectors:
            nearest = pool.submit(_vector_apart, engine, repo_id, search, exclude, k)
        found: list[_Found] = [{} for _ in functions]
        if "structural" in signals:
            callees = linked_definitions(conn, repo_id, functions, exclude, depth)
            _add_links(found, callees, "callee")
            _add_links(found, overriding(conn, repo_id, callees, exclude, depth), "callee")
            declared = overridden(conn, repo_id, functions)
            callers = linked_callers(conn, repo_id, functions, exclude, depth, declared)
            _add_links(found, callers, "caller")
        if "history" in signals:
            coupled = cochanged(conn, repo_id, functions, exclude, depth)
            for evidence, hits in zip(found, coupled, strict=True):
                for hit in hits:
                    _add(evidence, hit.chunk_id, cochange=hit.score, together=hit.together)
        if "siblings" in signals:
            _add_siblings(found, sibling_chunks(conn, repo_id, functions, exclude, depth))
        if "removed" in signals:
            names = [removed_names(f, search.diffs) for f in functions]
            total = word_counts(conn, repo_id, ()).documents
            _add_relative(found, still_using(conn, repo_id, names, exclude, total, k), "removed")
        if vectors:
            scored_vectors = (
                nearest.result()
                if nearest is not None
                else vector_scores(conn, repo_id, vectors, search.model, exclude, k)
            )
            _add_relative(found, scored_vectors, "vector")
        if "lexical" in signals:
            scored = (
                lexical.result()
                if lexical is not None
                else lexical_scores(conn, repo_id, terms, exclude, k)
            )
            _add_relative(found, scored, "lexical")
        if codes:
            scored = (
                same_words.result()
                if same_words is not None
                else code_word_scores(conn, repo_id, codes, exclude, words_k, paths=paths)
            )
            _add_summed(found, scored, "words", owners)
    return [_evidence(f) for f in found]


#: A file's diff as a words query is cut at this many characters (a generated or
#: vendored file's diff says nothing more past it).
DIFF_QUERY_CHARS = 20_000


def word_queries(
    functions: Sequence[ChangedFunction], diffs: Sequence[FileDiff]
) -> tuple[list[str], list[str], list[list[int]]]:
    """The words signal's queries: each searched function's code, then each touched
    file's diff (added, removed and context lines: the imports, the names taken out and
    the code around), and the file each query leaves out. Returns (queries, their files,
    for each query the searched functions its hits are recorded for: a file's diff, for
    every searched function of that file). Pure."""
    codes = [f.chunk.raw_code for f in functions]
    paths = [f.file_path for f in functions]
    owners = [[i] for i in range(len(functions))]
    for diff in diffs:
        mine = [i for i, f in enumerate(functions) if f.file_path == diff.path]
        body = diff.text[:DIFF_QUERY_CHARS]
        if mine and body.strip():
            codes.append(body)
            paths.append(diff.path)
            owners.append(mine)
    return codes, paths, owners


def question_evidence(
    conn: Connection,
    repo_id: int,
    question: str,
    vectors: Sequence[Sequence[float]],
    model: str,
    signals: Collection[str],
    k: int,
) -> dict[int, Evidence]:
    """What the search signals (vector, lexical, words) find for a question asked in
    words: its words keep the question's share of a repository's chunks (``QUESTION_LIMITS``)."""
    found: list[_Found] = [{}]
    terms = question_terms(question)
    if "vector" in signals and vectors:
        _add_relative(found, vector_scores(conn, repo_id, vectors, model, [], k), "vector")
    if "lexical" in signals:
        scored = lexical_scores(conn, repo_id, [[terms]], [], k, QUESTION_LIMITS)
        _add_relative(found, scored, "lexical")
    if "words" in signals:
        scored = code_word_scores(conn, repo_id, [terms], [], k, QUESTION_LIMITS)
        _add_relative(found, scored, "words")
    return _evidence(found[0])


def _vector_apart(
    engine: Engine, repo_id: int, search: SearchInput, exclude: Sequence[int], k: int
) -> Scored:
    with engine.begin() as conn:  # the search's settings are SET LOCAL
        return vector_scores(conn, repo_id, search.vectors, search.model, exclude, k)


def _words_apart(
    engine: Engine,
    repo_id: int,
    codes: list[str],
    paths: list[str],
    exclude: Sequence[int],
    k: int,
) -> Scored:
    with engine.connect() as conn:
        return code_word_scores(conn, repo_id, codes, exclude, k, paths=paths)


def _lexical_apart(
    engine: Engine, repo_id: int, terms: list[list[str]], exclude: Sequence[int], k: int
) -> Scored:
    with engine.connect() as conn:
        return lexical_scores(conn, repo_id, terms, exclude, k)


#: What the signals found so far for one function: chunk id -> Evidence's fields. Built
#: up in plain dictionaries and made into ``Evidence`` once (``_evidence``): a frozen
#: dataclass replaced on each hit took a sixth of a PR's retrieval (bench/RESULTS.md).
_Found = dict[int, dict[str, float | str]]


def _evidence(found: _Found) -> dict[int, Evidence]:
    return {chunk_id: Evidence(**values) for chunk_id, values in found.items()}  # type: ignore[arg-type]


def _add(found: _Found, chunk_id: int, **values: float | str) -> None:
    """Record what one signal found for one chunk (the best value of each number)."""
    known = found.setdefault(chunk_id, {})
    for name, value in values.items():
        old = known.get(name)
        if isinstance(old, int | float) and isinstance(value, int | float):
            known[name] = max(old, value)
        else:
            known[name] = value


def _add_relative(found: list[_Found], scored: Scored, field: str) -> None:
    """A search signal's hits, each as a share of its query's best score."""
    for evidence, hits in zip(found, scored, strict=True):
        best = max((score for _, score in hits), default=0.0)
        for chunk_id, score in hits:
            if best > 0 and score > 0:
                _add(evidence, chunk_id, **{field: score / best})


def _add_summed(
    found: list[_Found], scored: Scored, field: str, owners: Sequence[Sequence[int]]
) -> None:
    """A search signal of the whole change: each chunk's scores summed over the queries
    that found it, as a share of the best chunk's sum, recorded for each of those
    queries. (Each query's best as 1.0 ranks a one-line function's best match with the
    main function's; summed, BM25 over the changed code's words ranks as one query of
    them all does: bench/RESULTS.md.)"""
    totals: dict[int, float] = {}
    for hits in scored:
        for chunk_id, score in hits:
            if score > 0:
                totals[chunk_id] = totals.get(chunk_id, 0.0) + score
    best = max(totals.values(), default=0.0)
    for hits, mine in zip(scored, owners, strict=True):
        for chunk_id, score in hits:
            if score > 0:
                for index in mine:
                    _add(found[index], chunk_id, **{field: totals[chunk_id] / best})


def _add_links(found: list[_Found], hits: list[list[LinkHit]], field: str) -> None:
    for evidence, linked in zip(found, hits, strict=True):
        for hit in linked:
            _add(evidence, hit.chunk_id, **{field: hit.score})


def _add_siblings(found: list[_Found], hits: list[list[SiblingHit]]) -> None:
    for evidence, siblings in zip(found, hits, strict=True):
        for hit in siblings:
            if hit.score > float(evidence.get(hit.chunk_id, {}).get("sibling", 0.0)):
                _add(evidence, hit.chunk_id, sibling=hit.score, sibling_kind=hit.kind)


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


def load_candidates(
    conn: Connection,
    merged: dict[int, Evidence],
    secondary: Callable[[str], bool],
    weights: RankingWeights | None = None,
) -> list[ContextChunk]:
    """The candidates' rows as context chunks with their evidence (scored by ``weights``,
    when given); later windows headed by their signature, in stretches (``window_heads``)."""
    if not merged:
        return []
    rows = conn.execute(
        text(
            "SELECT id, repository_id, file_path, start_line, end_line, segments, symbol_name,"
            " qualified_name, chunk_type, language, nl_summary, raw_code, signature"
            " FROM code_chunks WHERE id = ANY(CAST(:ids AS bigint[]))"
        ),
        {"ids": list(merged)},
    ).all()
    windows = {
        r.id: Window(r.file_path, r.qualified_name, r.start_line, r.end_line)
        for r in rows
        if r.chunk_type == ChunkType.WINDOW and r.signature
    }
    signatures = {r.id: r.signature for r in rows if r.id in windows}
    definitions = window_definitions(
        conn, rows[0].repository_id if rows else 0, windows, signatures
    )
    chunks = []
    for row in rows:
        evidence = merged[row.id]
        start, code, window_from, head_end = row.start_line, row.raw_code, 0, 0
        definition = definitions.get(row.id)
        if definition is not None and definition.start < start:
            start, window_from = definition.start, row.start_line
            head_end = min(definition.head_end, window_from - 1)
            code = headed_code(code, row.signature, start, row.start_line)
        chunks.append(
            ContextChunk(
                chunk_id=row.id,
                file_path=row.file_path,
                start_line=start,
                end_line=row.end_line,
                symbol_name=row.symbol_name,
                qualified_name=row.qualified_name,
                chunk_type=row.chunk_type,
                language=row.language,
                summary=row.nl_summary,
                code=code,
                score=weights.score(evidence) if weights else 0.0,
                evidence=evidence,
                secondary=row.language is None or secondary(row.file_path),
                window_from=window_from,
                head_end=head_end,
                definition_code=definition.code if definition is not None else "",
                segments=window_segments(row.chunk_type, row.segments),
            )
        )
    return chunks
