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
from app.indexing.languages import BY_NAME, LANGUAGES
from app.retrieval.evidence import SiblingKind
from app.retrieval.go_interfaces import implementations
from app.retrieval.links import resolves
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


#: Languages whose qualified names join their parts with ``::`` (``Shop::Cart::total``).
DOUBLE_COLON = sorted(spec.name for spec in LANGUAGES if spec.separator == "::")


def separator(language: str | None) -> str:
    """What joins a qualified name's parts in ``language``. Pure."""
    spec = BY_NAME.get(language or "")
    return spec.separator if spec is not None else "."


@dataclass(frozen=True)
class _Method:
    fn: int
    path: str
    owner: str  # the qualified name of the class or type it belongs to
    name: str
    language: str

    @property
    def qualified(self) -> str:
        return f"{self.owner}{separator(self.language)}{self.name}"


def method_of(function: ChangedFunction) -> _Method | None:
    """The changed function as a method of a class or type, if it is one."""
    chunk = function.chunk
    name, qualified = chunk.symbol_name, chunk.qualified_name
    if not name or not qualified or chunk.chunk_type not in {ChunkType.METHOD, ChunkType.WINDOW}:
        return None
    owner, _, last = qualified.rpartition(separator(chunk.language))
    if not owner or last != name:
        return None
    if chunk.language == "go" and "." not in owner:  # pkg.Func is a function, not a method
        return None
    return _Method(0, function.file_path, owner, name, chunk.language or "")


def sibling_chunks(
    conn: Connection,
    repo_id: int,
    functions: Sequence[ChangedFunction],
    exclude: Sequence[int],
    k: int,
) -> list[list[SiblingHit]]:
    """For each function, its siblings, best first."""
    found: list[dict[int, SiblingHit]] = [{} for _ in functions]
    methods = []
    for fn, function in enumerate(functions):
        method = method_of(function)
        if method is not None:
            methods.append(_Method(fn, method.path, method.owner, method.name, method.language))
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


_METHODS = """
  SELECT DISTINCT ON (c.file_path, c.qualified_name) c.id, c.file_path, c.qualified_name
  FROM code_chunks c
  WHERE c.repository_id = :r AND c.symbol_name = {name} AND c.chunk_type IN ('method', 'window')
    -- the chunk's language's separator (``:colons``: ``DOUBLE_COLON``)
    AND c.qualified_name = {owner}
      || (CASE WHEN c.language = ANY(CAST(:colons AS text[])) THEN '::' ELSE '.' END)
      || c.symbol_name
  ORDER BY c.file_path, c.qualified_name, c.start_line
"""


def _relatives(
    conn: Connection, repo_id: int, methods: Sequence[_Method]
) -> list[tuple[int, int, SiblingKind, float]]:
    """(function, chunk id, kind, score): the same method in the base classes of each
    method's class, in the classes extending it, and in the classes extending the same
    bases; then, when none of those exist, in other classes of the same directory."""
    rows = conn.execute(
        text(
            f"""
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
), bases AS (
  SELECT fn, method, path, owner, owner_name, lang, 1.0 AS confidence, 'child' AS rel FROM owner
  UNION ALL
  SELECT fn, method, path, owner, owner_name, lang, confidence, 'sibling' FROM parents
), extending AS (
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
), related AS (
  SELECT fn, method, 'parent' AS rel, path, owner, confidence FROM parents
  UNION ALL SELECT fn, method, rel, path, owner, confidence FROM extending
)
SELECT r.fn, r.rel, r.confidence, m.id, m.file_path, m.qualified_name
FROM related r CROSS JOIN LATERAL ({_METHODS.format(name="r.method", owner="r.owner")}) m
"""
        ),
        {
            "r": repo_id,
            "fns": [m.fn for m in methods],
            "paths": [m.path for m in methods],
            "owners": [m.owner for m in methods],
            "names": [m.name for m in methods],
            "langs": [m.language for m in methods],
            "colons": DOUBLE_COLON,
        },
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
    conn: Connection, repo_id: int, methods: Sequence[_Method]
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
