"""The structural signal: link joins over ``chunk_links`` and ``code_chunks``.

Definitions: the chunks a changed function's links (``ChangedFunction.uses``, computed
from its new version) resolve to. Callers: the chunks whose stored links resolve to the
changed function. Both follow re-exports for up to ``MAX_HOPS`` statements more, and
are scored by the link's confidence divided by the square root of how many definitions
the link matched (each overload of a method counts), so an import resolved to one file
outweighs a bare method name defined in twenty places (``link_score``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Row, text

from app.db.chunk_types import ChunkType
from app.diff.changed import ChangedFunction
from app.indexing.links import NAME_ONLY, Link
from app.retrieval.link_resolution import RUST_STEM, STEM, resolves

#: A name-only link that matches more definitions than this says nothing.
MAX_NAME_ONLY_MATCHES = 6
#: A bare name (``NAME_ONLY``) that one definition in the repository bears is most
#: likely that definition: scored between a receiver's guess and a same-package name.
UNIQUE_NAME = 0.6


def link_score(confidence: float, matches: int) -> float:
    """What a link matching ``matches`` definitions says of each: its confidence divided
    by the square root of its matches. A bare name is scored from ``UNIQUE_NAME``, not
    from the ``NAME_ONLY`` it is stored with: in sample, a bare name borne once was the
    callee about as often as a name resolved through an import, Go aside
    (bench/RESULTS.md, "A bare name borne once")."""
    if confidence <= NAME_ONLY:
        confidence *= UNIQUE_NAME / NAME_ONLY
    return confidence / math.sqrt(max(matches, 1))


#: A definition in the changed function's own file: the diff shows part of that file
#: already, so what it uses from other files is worth more to a reviewer.
SAME_FILE_WEIGHT = 0.5


#: A definition the changed function only names as a type (annotations, declared types)
#: ranks after what it calls or constructs, at equal confidence.
TYPE_ONLY_WEIGHT = 0.8


def usage_bonus(uses: int) -> float:
    """A name used on several lines matters more: +5% per further line, up to +20%."""
    return 1 + 0.05 * min(max(uses, 1) - 1, 4)


@dataclass(frozen=True)
class LinkHit:
    chunk_id: int
    score: float


@dataclass(frozen=True)
class Declaration:
    """Where else a changed function is declared: the same method in a type its class
    extends or implements (``hierarchy.overridden``). A call through that type may run
    it, so its callers are the function's too, weighed by ``weight``."""

    path: str
    qualified: str
    weight: float


#: Re-exports followed (``from .m import x`` in ``__init__.py``, ``export * from``).
MAX_HOPS = 2
HOP_DECAY = 0.95
_UNNEST = (
    "unnest(CAST(:fns AS int[]), CAST(:names AS text[]), CAST(:matches AS text[]),"
    " CAST(:targets AS text[]), CAST(:quals AS text[]), CAST(:confs AS float8[]))"
    " AS l(fn, name, match, target, qualifier, confidence)"
)
#: name, match, target, qualifier, confidence
_LinkKey = tuple[str, str, str | None, str | None, float]
#: a link of the function at this index of the batch
_FnLink = tuple[int, _LinkKey]


def _params(links: Sequence[_FnLink]) -> dict[str, object]:
    return {
        "fns": [fn for fn, _ in links],
        "names": [k[0] for _, k in links],
        "matches": [k[1] for _, k in links],
        "targets": [k[2] for _, k in links],
        "quals": [k[3] for _, k in links],
        "confs": [k[4] for _, k in links],
    }


def _link_key(use: Link) -> _LinkKey:
    return (use.name, use.match, use.target, use.qualifier, use.confidence)


#: A definition a link resolved to, (path, qualified name), and its bodies: each overload
#: by its first line, a definition cut into windows once ("window": its first window).
_Bodies = dict[int | str, tuple[int, int]]  # body -> (first line, chunk id)
_Matched = dict[_LinkKey, dict[tuple[str, str], _Bodies]]


@dataclass
class _Resolved:
    """What one function's links resolved to (``_Matched``), and each followed re-export
    -> the link it came from."""

    matched: _Matched = field(default_factory=dict)
    origin: dict[_LinkKey, _LinkKey] = field(default_factory=dict)


def linked_definitions(
    conn: Connection,
    repo_id: int,
    functions: Sequence[ChangedFunction],
    exclude: Sequence[int],
    k: int,
) -> list[list[LinkHit]]:
    """For each changed function, the definitions its links resolve to, best first. A link
    to a module that only re-exports the name is followed to where it is defined. All the
    functions' links go in each statement: at most ``MAX_HOPS + 1`` joins and ``MAX_HOPS``
    re-export lookups, however many functions."""
    resolved = [_Resolved() for _ in functions]
    links: list[_FnLink] = [
        (fn, key) for fn, f in enumerate(functions) for key in dict.fromkeys(map(_link_key, f.uses))
    ]
    for _ in range(MAX_HOPS + 1):
        if not links:
            break
        rows = conn.execute(
            text(
                f"WITH l AS (SELECT DISTINCT * FROM {_UNNEST})"
                " SELECT c.id, c.file_path, coalesce(c.qualified_name, ''), c.start_line,"
                " c.chunk_type = 'window',"
                " l.fn, l.name, l.match, l.target, l.qualifier, l.confidence"
                " FROM l JOIN code_chunks c ON c.repository_id = :r AND c.symbol_name = l.name"
                " AND c.chunk_type <> 'module'"
                " AND NOT (c.id = ANY(CAST(:ex AS bigint[])))"
                f" WHERE {resolves('c.file_path', 'c.qualified_name', 'c.language')}"
            ),
            {"r": repo_id, "ex": list(exclude), **_params(links)},
        ).all()
        for row in rows:
            definitions = resolved[row[5]].matched.setdefault(tuple(row[6:]), {})
            bodies = definitions.setdefault((row[1], row[2]), {})
            # a definition cut into windows: its first window, which holds its signature;
            # overloads (one qualified name, several bodies): each of them
            body = "window" if row[4] else row[3]
            if body not in bodies or (row[3], row[0]) < bodies[body]:
                bodies[body] = (row[3], row[0])
        unresolved = [(fn, key) for fn, key in links if key not in resolved[fn].matched]
        followed = _reexported(conn, repo_id, unresolved)
        for fn, hop in followed:
            came_from = next(key for f, key in links if f == fn and key[0] == hop[0])
            resolved[fn].origin.setdefault(hop, came_from)
        links = followed
    return [
        score_definitions(function, found.matched, found.origin, k)
        for function, found in zip(functions, resolved, strict=True)
    ]


def score_definitions(
    function: ChangedFunction, matched: _Matched, origin: dict[_LinkKey, _LinkKey], k: int
) -> list[LinkHit]:
    """The ``k`` best definitions of one function's resolved links. A link's matches are
    the bodies it may reach: each overload of a method counts (the call is to one of
    them), a definition cut into windows once. Pure."""
    uses = Counter(map(_link_key, function.uses))
    called = {_link_key(u) for u in function.uses if u.kind == "use"}
    best: dict[int, float] = {}
    for link, definitions in matched.items():
        confidence = link[-1]
        if confidence <= NAME_ONLY and len(definitions) > MAX_NAME_ONLY_MATCHES:
            continue
        source = link
        while source in origin:
            source = origin[source]
        bodies = sum(len(found) for found in definitions.values())
        score = link_score(confidence, bodies) * usage_bonus(uses[source])
        if source not in called:  # only named as a type: its shape, not behaviour it runs
            score *= TYPE_ONLY_WEIGHT
        for (path, _), found in definitions.items():
            weight = SAME_FILE_WEIGHT if path == function.file_path else 1.0
            for _, chunk_id in found.values():
                best[chunk_id] = max(best.get(chunk_id, 0.0), score * weight)
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]
    return [LinkHit(chunk_id, score) for chunk_id, score in ranked]


def _reexported(conn: Connection, repo_id: int, unresolved: Sequence[_FnLink]) -> list[_FnLink]:
    """For links into a module that does not define the name: that module's own import
    links of the name (or ``*``), as links of the original name, a little less confident."""
    followable = [(fn, key) for fn, key in unresolved if key[1] in {"module", "stem", "rsmod"}]
    if not followable:
        return []
    rows = conn.execute(
        text(
            f"WITH l AS (SELECT DISTINCT * FROM {_UNNEST})"
            " SELECT DISTINCT l.fn, l.name, i.match, i.target, l.confidence FROM l"
            " JOIN chunk_links i"
            " ON i.repository_id = :r AND i.kind = 'import' AND i.name IN (l.name, '*')"
            " WHERE CASE l.match"
            "  WHEN 'module' THEN i.file_path = l.target"
            "   OR right(i.file_path, length(l.target) + 1) = '/' || l.target"
            f"  WHEN 'rsmod' THEN {RUST_STEM.format(path='i.file_path')} = l.target"
            f"  ELSE {STEM.format(path='i.file_path')} = l.target END"
            " ORDER BY l.fn, l.name, i.match, i.target"
        ),
        {"r": repo_id, **_params(followable)},
    ).all()
    hops = ((r.fn, (r.name, r.match, r.target, None, r.confidence * HOP_DECAY)) for r in rows)
    return list(dict.fromkeys(hops))


def linked_callers(
    conn: Connection,
    repo_id: int,
    functions: Sequence[ChangedFunction],
    exclude: Sequence[int],
    k: int,
    declared: Sequence[Sequence[Declaration]] = (),
) -> list[list[LinkHit]]:
    """For each changed function, the chunks in other files whose links resolve to it,
    or to where else it is ``declared`` (a call through an interface it implements),
    best first (most confident link, then most uses), also through modules that re-export
    it. One count of namesakes and at most ``MAX_HOPS + 1`` link joins, however many
    functions."""
    targets = [
        fn
        for fn, f in enumerate(functions)
        if f.chunk.symbol_name and f.chunk.chunk_type != ChunkType.MODULE
    ]
    found: list[dict[int, tuple[float, int]]] = [{} for _ in functions]  # id -> (conf, uses)
    if not targets:
        return [[] for _ in functions]
    namesakes = _namesakes(conn, repo_id, [functions[fn].chunk.symbol_name or "" for fn in targets])
    places = [
        _Place(fn, functions[fn].file_path, functions[fn].chunk.qualified_name, 1.0)
        for fn in targets
    ] + [
        # the declaring type's own calls count (a base class calling its hook)
        _Place(fn, d.path, d.qualified, d.weight, skip=functions[fn].file_path)
        for fn in targets
        if fn < len(declared)
        for d in declared[fn]
    ]
    seen = {fn: {functions[fn].file_path} for fn in targets}
    for _ in range(MAX_HOPS + 1):
        next_places: list[_Place] = []
        for row in _links_to(conn, repo_id, functions, places):
            fn, decay = row.fn, row.decay
            if row.file_path == functions[fn].file_path:  # its own file is no other file
                continue
            if row.kind == "import":
                if row.file_path not in seen[fn] and len(seen[fn]) < 8:
                    seen[fn].add(row.file_path)
                    next_places.append(_Place(fn, row.file_path, row.qualified, decay * HOP_DECAY))
                continue
            confidence = float(row.confidence) * decay
            # `x.name(...)`: which namesake is unknown. Not raised as ``link_score`` raises
            # a bare-named callee: a bare name calling the changed function measured weaker
            # (bench/RESULTS.md, "A bare name borne once")
            if row.confidence <= NAME_ONLY:
                same_name = namesakes.get(functions[fn].chunk.symbol_name or "", 0)
                if same_name > MAX_NAME_ONLY_MATCHES:
                    continue
                confidence /= math.sqrt(max(1, same_name))
            best, uses = found[fn].get(row.id, (0.0, 0))
            found[fn][row.id] = (max(best, confidence), uses + 1)
        places = next_places
        if not places:
            break
    excluded = set(exclude)
    return [
        sorted(
            (
                LinkHit(cid, confidence * usage_bonus(uses))
                for cid, (confidence, uses) in callers.items()
                if cid not in excluded
            ),
            key=lambda h: (-h.score, h.chunk_id),
        )[:k]
        for callers in found
    ]


def _namesakes(conn: Connection, repo_id: int, names: Sequence[str]) -> dict[str, int]:
    """How many distinct definitions carry each name."""
    rows = conn.execute(
        text(
            "SELECT n.name, (SELECT count(DISTINCT (c.file_path, c.qualified_name))"
            "  FROM code_chunks c WHERE c.repository_id = :r AND c.symbol_name = n.name"
            "  AND c.chunk_type <> 'module')"
            " FROM (SELECT DISTINCT unnest(CAST(:names AS text[]))) AS n(name)"
        ),
        {"r": repo_id, "names": list(names)},
    )
    return {name: count for name, count in rows}


@dataclass(frozen=True)
class _Place:
    """Where callers of function ``fn`` are looked for: links to ``qualified`` (its name,
    or a declaration of it) defined at ``path``, weighed by ``decay``, outside file
    ``skip`` (``path`` unless given)."""

    fn: int
    path: str
    qualified: str | None
    decay: float
    skip: str = ""


def _links_to(
    conn: Connection,
    repo_id: int,
    functions: Sequence[ChangedFunction],
    places: Sequence[_Place],
) -> Sequence[Row[Any]]:
    """For each place: links outside its ``skip`` file that resolve to its qualified
    name defined at its path (the function's name), each with the most specific chunk
    holding its line (at most 2000 per place)."""
    chunks = [functions[p.fn].chunk for p in places]
    return conn.execute(
        text(
            "SELECT p.fn, p.decay, p.qualified, hit.* FROM unnest(CAST(:fns AS int[]),"
            " CAST(:names AS text[]), CAST(:paths AS text[]), CAST(:qualified AS text[]),"
            " CAST(:languages AS text[]), CAST(:decays AS float8[]), CAST(:skips AS text[]))"
            " AS p(fn, name, path, qualified, language, decay, skip)"
            " CROSS JOIN LATERAL (SELECT c.id, l.kind, l.file_path, l.confidence"
            "  FROM chunk_links l"
            "  JOIN LATERAL (SELECT c.id FROM code_chunks c WHERE c.source_file_id"
            "  = l.source_file_id AND c.start_line <= l.line AND l.line <= c.end_line"
            "  ORDER BY c.end_line - c.start_line, c.id LIMIT 1) c ON true"
            "  WHERE l.repository_id = :r AND l.name IN (p.name, '*') AND l.file_path <> p.skip"
            f"  AND {resolves('p.path', 'p.qualified', 'p.language')}"
            "  ORDER BY l.id LIMIT 2000) hit"
            " ORDER BY p.fn, hit.file_path, hit.id"
        ),
        {
            "r": repo_id,
            "fns": [p.fn for p in places],
            "names": [c.symbol_name for c in chunks],
            "paths": [p.path for p in places],
            "skips": [p.skip or p.path for p in places],
            "qualified": [
                p.qualified or c.symbol_name for p, c in zip(places, chunks, strict=True)
            ],
            "languages": [c.language or "" for c in chunks],
            "decays": [p.decay for p in places],
        },
    ).all()
