"""The siblings signal: code that is not called by a change and does not call it, but
has the same job in another place, so it often must change with it.

- **overrides**: the method of the same name in a base class of the changed method's
  class, or in a class that extends it (Python bases, TypeScript ``extends`` and
  ``implements``, Java, Kotlin and C# supertypes, Ruby superclasses and mixins, PHP
  ``extends``, ``implements`` and traits, C++ base classes: ``extends`` links,
  ``app/indexing/links.py``; a qualified name is split as its language joins it,
  ``Shop::Cart::total`` in Ruby, PHP, Rust, C and C++);
- **namesake**: the method of the same name in a sibling class (one that extends the
  same base), or, with nothing declared (duck typing), in another class of the same
  directory;
- **implements**: Go: the same method of the other types that implement an interface
  declaring it (``app/retrieval/go_interfaces.py``), and that interface;
- **pair**: the other half (``app/retrieval/pairs.py``): ``decode`` for ``encode``,
  ``__exit__`` for ``__enter__``, the asynchronous twin.

Scores fall with how many candidates share the relation: one of two implementations
says more than one of twenty. Three statements for a whole PR, plus two for Go.
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text

from app.db.chunk_types import ChunkType
from app.diff.changed import ChangedFunction
from app.retrieval.evidence import SiblingKind
from app.retrieval.go_interfaces import implementations
from app.retrieval.hierarchy import (
    EXTENDING,
    PARENTS,
    SAME_METHOD,
    Method,
    method_params,
    methods_of,
    separator,
)
from app.retrieval.pairs import counterpart_names

#: Strength of each relation before it is shared out among its candidates.
STRENGTH = {
    SiblingKind.OVERRIDES: 1.0,
    SiblingKind.IMPLEMENTS: 0.9,
    SiblingKind.NAMESAKE: 0.8,
    SiblingKind.PAIR: 0.9,
}
#: A namesake with no declared relation (same directory, other class) counts this much.
UNDECLARED = 0.5
#: A pair's strength by where the other half is: the same class, file, directory.
PAIR_PLACE = {"class": 1.0, "file": 0.8, "dir": 0.6, "elsewhere": 0.35}
#: Names defined more often than this find no namesakes (``__init__``, ``String``).
MAX_NAMESAKES = 12


@dataclass(frozen=True)
class SiblingHit:
    chunk_id: int
    score: float
    kind: SiblingKind


def sibling_chunks(
    conn: Connection,
    repo_id: int,
    functions: Sequence[ChangedFunction],
    exclude: Sequence[int],
    k: int,
) -> list[list[SiblingHit]]:
    """For each function, its siblings, best first."""
    found: list[dict[int, SiblingHit]] = [{} for _ in functions]
    methods = methods_of(functions)
    if methods:
        for fn, chunk_id, kind, score in _relatives(conn, repo_id, methods):
            _keep(found[fn], chunk_id, kind, score)
        go = [m for m in methods if m.language == "go"]
        for fn, chunk_id, score in implementations(
            conn, repo_id, [(m.fn, m.path, m.owner, m.name) for m in go]
        ):
            _keep(
                found[fn],
                chunk_id,
                SiblingKind.IMPLEMENTS,
                STRENGTH[SiblingKind.IMPLEMENTS] * score,
            )
    for fn, chunk_id, score in _pairs(conn, repo_id, functions):
        _keep(found[fn], chunk_id, SiblingKind.PAIR, score)
    excluded = set(exclude)
    return [
        sorted(
            (hit for hit in hits.values() if hit.chunk_id not in excluded),
            key=lambda h: (-h.score, h.chunk_id),
        )[:k]
        for hits in found
    ]


def _keep(found: dict[int, SiblingHit], chunk_id: int, kind: SiblingKind, score: float) -> None:
    if score > 0 and (chunk_id not in found or found[chunk_id].score < score):
        found[chunk_id] = SiblingHit(chunk_id, score, kind)


def _relatives(
    conn: Connection, repo_id: int, methods: Sequence[Method]
) -> list[tuple[int, int, SiblingKind, float]]:
    """(function, chunk id, kind, score): the same method in the base classes of each
    method's class, in the classes extending it, and in the classes extending the same
    bases; then, when none of those exist, in other classes of the same directory."""
    rows = conn.execute(
        text(
            f"""
{PARENTS}, bases AS (
  SELECT fn, method, path, owner, owner_name, lang, 1.0 AS confidence, 'child' AS rel FROM owner
  UNION ALL
  SELECT fn, method, path, owner, owner_name, lang, confidence, 'sibling' FROM parents
){EXTENDING}, related AS (
  SELECT fn, method, 'parent' AS rel, path, owner, confidence FROM parents
  UNION ALL SELECT fn, method, rel, path, owner, confidence FROM extending
)
SELECT r.fn, r.rel, r.confidence, m.id, m.file_path, m.qualified_name
FROM related r CROSS JOIN LATERAL ({SAME_METHOD.format(name="r.method", owner="r.owner")}) m
"""
        ),
        method_params(repo_id, methods),
    ).all()
    own = {(m.fn, m.path, m.qualified) for m in methods}
    declared: dict[int, list[tuple[int, SiblingKind, float]]] = {}
    for fn, rel, confidence, chunk_id, path, qualified in rows:
        if (fn, path, qualified) in own:
            continue
        kind = SiblingKind.NAMESAKE if rel == "sibling" else SiblingKind.OVERRIDES
        declared.setdefault(fn, []).append((chunk_id, kind, float(confidence)))
    found = []
    for fn, hits in declared.items():
        share = 1 / math.sqrt(len({cid for cid, _, _ in hits}))
        for chunk_id, kind, confidence in hits:
            found.append((fn, chunk_id, kind, STRENGTH[kind] * confidence * max(share, 0.3)))
    undeclared = [m for m in methods if m.fn not in declared]
    return found + _same_directory(conn, repo_id, undeclared)


def _same_directory(
    conn: Connection, repo_id: int, methods: Sequence[Method]
) -> list[tuple[int, int, SiblingKind, float]]:
    """Methods of the same name in other classes of the same directory (duck typing)."""
    if not methods:
        return []
    rows = conn.execute(
        text(
            """
SELECT q.fn, c.id, c.file_path, c.qualified_name FROM
  unnest(CAST(:fns AS int[]), CAST(:dirs AS text[]), CAST(:names AS text[]),
    CAST(:quals AS text[])) AS q(fn, dir, name, qualified)
CROSS JOIN LATERAL (
  SELECT DISTINCT ON (c.file_path, c.qualified_name) c.id, c.file_path, c.qualified_name
  FROM code_chunks c
  WHERE c.repository_id = :r AND c.symbol_name = q.name AND c.chunk_type IN ('method', 'window')
    AND c.qualified_name <> q.qualified
    AND regexp_replace(c.file_path, '/?[^/]*$', '') = q.dir
  ORDER BY c.file_path, c.qualified_name, c.start_line LIMIT :n
) c
"""
        ),
        {
            "r": repo_id,
            "fns": [m.fn for m in methods],
            "dirs": [posixpath.dirname(m.path) for m in methods],
            "names": [m.name for m in methods],
            "quals": [m.qualified for m in methods],
            "n": MAX_NAMESAKES + 1,
        },
    ).all()
    per_fn: dict[int, list[int]] = {}
    for fn, chunk_id, _, _ in rows:
        per_fn.setdefault(fn, []).append(chunk_id)
    score = STRENGTH[SiblingKind.NAMESAKE] * UNDECLARED
    return [
        (fn, chunk_id, SiblingKind.NAMESAKE, score / math.sqrt(len(ids)))
        for fn, ids in per_fn.items()
        if len(ids) <= MAX_NAMESAKES
        for chunk_id in ids
    ]


def _pairs(
    conn: Connection, repo_id: int, functions: Sequence[ChangedFunction]
) -> list[tuple[int, int, float]]:
    """(function, chunk id, score) of the other halves of each function (and, for a
    method, of its class: ``AsyncClient.send`` for ``Client.send``)."""
    # function, name, qualified name wanted, whether only that qualified name will do
    wanted: list[tuple[int, str, str, bool]] = []
    for fn, function in enumerate(functions):
        chunk = function.chunk
        if not chunk.symbol_name or chunk.chunk_type == ChunkType.MODULE:
            continue
        qualified = chunk.qualified_name or chunk.symbol_name
        sep = separator(chunk.language)
        owner, _, _ = qualified.rpartition(sep)
        for other in counterpart_names(chunk.symbol_name, chunk.language):
            wanted.append((fn, other, f"{owner}{sep}{other}" if owner else other, False))
        if owner and chunk.chunk_type in {ChunkType.METHOD, ChunkType.WINDOW}:
            prefix, _, owner_name = owner.rpartition(sep)
            for twin in counterpart_names(owner_name, chunk.language):
                twin_owner = f"{prefix}{sep}{twin}" if prefix else twin
                wanted.append(
                    (fn, chunk.symbol_name, f"{twin_owner}{sep}{chunk.symbol_name}", True)
                )
    if not wanted:
        return []
    rows = conn.execute(
        text(
            """
SELECT q.fn, q.qualified, c.id, c.file_path, c.qualified_name FROM
  unnest(CAST(:fns AS int[]), CAST(:names AS text[]), CAST(:quals AS text[]),
    CAST(:exact AS bool[])) AS q(fn, name, qualified, exact)
CROSS JOIN LATERAL (
  SELECT DISTINCT ON (c.file_path, c.qualified_name) c.id, c.file_path, c.qualified_name
  FROM code_chunks c
  WHERE c.repository_id = :r AND c.symbol_name = q.name AND c.chunk_type <> 'module'
    AND (NOT q.exact OR c.qualified_name = q.qualified)
  ORDER BY c.file_path, c.qualified_name, c.start_line LIMIT :n
) c
"""
        ),
        {
            "r": repo_id,
            "fns": [fn for fn, _, _, _ in wanted],
            "names": [name for _, name, _, _ in wanted],
            "quals": [qualified for _, _, qualified, _ in wanted],
            "exact": [exact for *_, exact in wanted],
            "n": MAX_NAMESAKES + 1,
        },
    ).all()
    matches: dict[tuple[int, str], list[tuple[int, str, str]]] = {}
    for fn, qualified, chunk_id, path, found_name in rows:
        matches.setdefault((fn, qualified), []).append((chunk_id, path, found_name))
    found = []
    for (fn, qualified), hits in matches.items():
        if len(hits) > MAX_NAMESAKES:
            continue
        path = functions[fn].file_path
        for chunk_id, other_path, other_name in hits:
            place = pair_place(path, qualified, other_path, other_name)
            found.append(
                (
                    fn,
                    chunk_id,
                    STRENGTH[SiblingKind.PAIR] * PAIR_PLACE[place] / math.sqrt(len(hits)),
                )
            )
    return found


def pair_place(path: str, qualified: str, other_path: str, other_qualified: str) -> str:
    """Where the other half is, relative to the changed function. Pure."""
    if other_qualified == qualified and ("." in qualified or "::" in qualified):
        return "class"
    if other_path == path:
        return "file"
    if posixpath.dirname(other_path) == posixpath.dirname(path):
        return "dir"
    return "elsewhere"
