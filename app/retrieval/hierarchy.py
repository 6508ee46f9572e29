"""A method's place in the declared class hierarchy, read from the ``extends`` links
(``app/indexing/links.py``): the types its class extends or implements and the classes
extending it, as SQL the siblings signal (``siblings.py``) builds on, and the two
relations the structural signal follows through them:

- **overriding**: the methods that override or implement what a change calls. A call to
  ``Store.get`` runs ``DiskStore.get`` when that is the only implementation;
- **overridden**: the same method declared in a type the changed method's class extends
  or implements. A call through that type may run the changed method, so its callers
  are the changed method's too (``links.linked_callers`` follows them).

Each is weighed by the ``extends`` link's confidence and shared out among the classes
that may answer the call. Three statements for a whole PR: one for ``overridden``, two
for ``overriding`` (the callees' names, then their overriders).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text

from app.db.chunk_types import ChunkType
from app.diff.changed import ChangedFunction
from app.indexing.languages import BY_NAME, LANGUAGES
from app.retrieval.link_resolution import resolves
from app.retrieval.links import Declaration, LinkHit

#: Languages whose qualified names join their parts with ``::`` (``Shop::Cart::total``).
DOUBLE_COLON = sorted(spec.name for spec in LANGUAGES if spec.separator == "::")


def separator(language: str | None) -> str:
    """What joins a qualified name's parts in ``language``. Pure."""
    spec = BY_NAME.get(language or "")
    return spec.separator if spec is not None else "."


@dataclass(frozen=True)
class Method:
    """A method at index ``fn`` of what is looked up."""

    fn: int
    path: str
    owner: str  # the qualified name of the class or type it belongs to
    name: str
    language: str

    @property
    def qualified(self) -> str:
        return f"{self.owner}{separator(self.language)}{self.name}"


def method_of(function: ChangedFunction, fn: int = 0) -> Method | None:
    """The changed function (at index ``fn``) as a method of a class or type, if it is
    one."""
    chunk = function.chunk
    return _as_method(
        fn,
        function.file_path,
        chunk.chunk_type,
        chunk.symbol_name,
        chunk.qualified_name,
        chunk.language,
    )


def methods_of(functions: Sequence[ChangedFunction]) -> list[Method]:
    """The changed functions that are methods, each with its index."""
    return [m for fn, f in enumerate(functions) if (m := method_of(f, fn)) is not None]


def _as_method(
    fn: int,
    path: str,
    chunk_type: str,
    name: str | None,
    qualified: str | None,
    language: str | None,
) -> Method | None:
    """A chunk as a method of a class or type, if it is one. Pure."""
    if not name or not qualified or chunk_type not in {ChunkType.METHOD, ChunkType.WINDOW}:
        return None
    owner, _, last = qualified.rpartition(separator(language))
    if not owner or last != name:
        return None
    if language == "go" and "." not in owner:  # pkg.Func is a function, not a method
        return None
    return Method(fn, path, owner, name, language or "")


#: The method named ``{name}`` of the class or type ``{owner}`` (SQL expressions), one
#: chunk for each place it is defined.
SAME_METHOD = """
  SELECT DISTINCT ON (c.file_path, c.qualified_name) c.id, c.file_path, c.qualified_name
  FROM code_chunks c
  WHERE c.repository_id = :r AND c.symbol_name = {name} AND c.chunk_type IN ('method', 'window')
    -- the chunk's language's separator (``:colons``: ``DOUBLE_COLON``)
    AND c.qualified_name = {owner}
      || (CASE WHEN c.language = ANY(CAST(:colons AS text[])) THEN '::' ELSE '.' END)
      || c.symbol_name
  ORDER BY c.file_path, c.qualified_name, c.start_line
"""


#: The methods (``:fns``.. ``:langs``, ``method_params``), their classes, and the
#: classes and interfaces those extend or implement (``parents``: each one's place, name
#: and the ``extends`` link's confidence).
PARENTS = f"""
WITH q AS (
  SELECT * FROM unnest(CAST(:fns AS int[]), CAST(:paths AS text[]), CAST(:owners AS text[]),
    CAST(:names AS text[]), CAST(:langs AS text[])) AS q(fn, path, owner, method, lang)
), owner AS (
  SELECT q.*, c.source_file_id, c.start_line, c.end_line, c.symbol_name AS owner_name
  FROM q JOIN code_chunks c ON c.repository_id = :r AND c.file_path = q.path
    AND c.qualified_name = q.owner AND c.chunk_type = 'class'
), parents AS (
  SELECT DISTINCT o.fn, o.method, p.file_path AS path, p.qualified_name AS owner,
    p.symbol_name AS owner_name, p.language AS lang, l.confidence
  FROM owner o JOIN chunk_links l ON l.source_file_id = o.source_file_id
    AND l.kind = 'extends' AND l.line BETWEEN o.start_line AND o.end_line
  JOIN code_chunks p ON p.repository_id = :r AND p.symbol_name = l.name
    AND p.chunk_type = 'class' AND NOT (p.file_path = o.path AND p.qualified_name = o.owner)
  WHERE {resolves("p.file_path", "p.qualified_name", "p.language")}
)"""


#: The classes extending each of ``bases`` (``fn``, ``method``, ``rel``, its place and
#: name, ``confidence``), with the confidence of the weaker link.
EXTENDING = f""", extending AS (
  SELECT DISTINCT b.fn, b.method, b.rel, h.file_path AS path, h.qualified_name AS owner,
    least(b.confidence, l.confidence) AS confidence
  FROM bases b JOIN chunk_links l ON l.repository_id = :r AND l.kind = 'extends'
    AND l.name = b.owner_name
  CROSS JOIN LATERAL (
    SELECT c.file_path, c.qualified_name FROM code_chunks c
    WHERE c.source_file_id = l.source_file_id AND c.chunk_type = 'class'
      AND c.start_line <= l.line AND l.line <= c.end_line
    ORDER BY c.end_line - c.start_line LIMIT 1
  ) h
  WHERE {resolves("b.path", "b.owner", "b.lang")}
)"""


def method_params(repo_id: int, methods: Sequence[Method]) -> dict[str, object]:
    return {
        "r": repo_id,
        "fns": [m.fn for m in methods],
        "paths": [m.path for m in methods],
        "owners": [m.owner for m in methods],
        "names": [m.name for m in methods],
        "langs": [m.language for m in methods],
        "colons": DOUBLE_COLON,
    }


def overridden(
    conn: Connection, repo_id: int, functions: Sequence[ChangedFunction]
) -> list[list[Declaration]]:
    """For each changed function that is a method, the same method declared in the
    classes and interfaces its class extends or implements: a call through one of those
    types may run the changed method (``links.linked_callers`` follows them). Each is
    weighed by the ``extends`` link's confidence, shared out among the classes extending
    that type: a call through an interface with one implementation reaches it, one
    through a base of twenty most likely reaches another."""
    methods = methods_of(functions)
    found: list[list[Declaration]] = [[] for _ in functions]
    if not methods:
        return found
    rows = conn.execute(
        text(
            f"""
{PARENTS}
SELECT p.fn, m.file_path, m.qualified_name, p.confidence, (
  SELECT count(DISTINCT l.source_file_id) FROM chunk_links l
  WHERE l.repository_id = :r AND l.kind = 'extends' AND l.name = p.owner_name
    AND {resolves("p.path", "p.owner", "p.lang")}) AS extending
FROM parents p CROSS JOIN LATERAL ({SAME_METHOD.format(name="p.method", owner="p.owner")}) m
ORDER BY p.fn, m.file_path, m.qualified_name
"""
        ),
        method_params(repo_id, methods),
    ).all()
    for fn, path, qualified, confidence, extending in rows:
        weight = float(confidence) / math.sqrt(max(int(extending), 1))
        found[fn].append(Declaration(path, qualified, weight))
    return found


def overriding(
    conn: Connection,
    repo_id: int,
    callees: Sequence[Sequence[LinkHit]],
    exclude: Sequence[int],
    k: int,
) -> list[list[LinkHit]]:
    """For each changed function, the methods that override or implement a method it
    calls (``callees``): a call to ``Store.get`` runs ``DiskStore.get`` when that is the
    only implementation. Each scored as the call, times the ``extends`` link's
    confidence, shared out among the overriders of the method called."""
    called = [(fn, hit) for fn, hits in enumerate(callees) for hit in hits]
    found: list[list[LinkHit]] = [[] for _ in callees]
    if not called:
        return found
    rows = conn.execute(
        text(
            "SELECT id, file_path, chunk_type, symbol_name, qualified_name, language"
            " FROM code_chunks WHERE id = ANY(CAST(:ids AS bigint[]))"
        ),
        {"ids": sorted({hit.chunk_id for _, hit in called})},
    ).all()
    chunks = {row[0]: row[1:] for row in rows}
    methods = [
        method
        for index, (_, hit) in enumerate(called)
        if hit.chunk_id in chunks
        for method in [_as_method(index, *chunks[hit.chunk_id])]
        if method is not None
    ]
    if not methods:
        return found
    rows = conn.execute(
        text(
            f"""
{PARENTS}, bases AS (
  SELECT fn, method, path, owner, owner_name, lang, 1.0 AS confidence, 'child' AS rel
  FROM owner
){EXTENDING}
SELECT e.fn, e.confidence, m.id
FROM extending e CROSS JOIN LATERAL ({SAME_METHOD.format(name="e.method", owner="e.owner")}) m
"""
        ),
        method_params(repo_id, methods),
    ).all()
    shared: dict[int, list[tuple[int, float]]] = {}
    for index, confidence, chunk_id in rows:
        shared.setdefault(index, []).append((chunk_id, float(confidence)))
    excluded = set(exclude)
    best: list[dict[int, float]] = [{} for _ in callees]
    for index, overriders in shared.items():
        fn, hit = called[index]
        for chunk_id, confidence in overriders:
            score = hit.score * confidence / math.sqrt(len(overriders))
            if chunk_id not in excluded and score > best[fn].get(chunk_id, 0.0):
                best[fn][chunk_id] = score
    return [
        sorted(
            (LinkHit(cid, score) for cid, score in scores.items()),
            key=lambda h: (-h.score, h.chunk_id),
        )[:k]
        for scores in best
    ]
