"""The structural signal: link joins over ``chunk_links`` and ``code_chunks``.

Definitions: the chunks a changed function's links (``ChangedFunction.uses``, computed
from its new version) resolve to. Callers: the chunks whose stored links resolve to the
changed function. Both follow re-exports for up to ``MAX_HOPS`` statements more, and
are scored by the link's confidence divided by the square root of how many definitions
the link matched, so an import resolved to one file outweighs a bare method name
defined in twenty places.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Row, text

from app.diff.changed import ChangedFunction
from app.indexing.chunks import Chunk
from app.indexing.links import NAME_ONLY

#: A name-only link that matches more definitions than this says nothing.
MAX_NAME_ONLY_MATCHES = 6

_DIR = r"regexp_replace({path}, '/?[^/]*$', '')"
_STEM = r"regexp_replace({path}, '(/index)?\.(d\.)?[cm]?[jt]sx?$', '')"


def _resolves(path: str, qualified: str, language: str) -> str:
    """SQL: link ``l`` resolves to a definition at ``path`` named ``qualified``."""
    directory = _DIR.format(path=path)
    return f"""(CASE l.match
        WHEN 'file' THEN {path} = l.target
        WHEN 'module' THEN {path} = l.target
            OR right({path}, length(l.target) + 1) = '/' || l.target
        WHEN 'stem' THEN {_STEM.format(path=path)} = l.target
        WHEN 'dir' THEN {directory} = l.target AND {language} = 'go'
        WHEN 'package' THEN {language} = 'go' AND (CASE WHEN {directory} = ''
            THEN {qualified} LIKE l.qualifier || '.%'
            ELSE l.target = {directory}
                OR right(l.target, length({directory}) + 1) = '/' || {directory}
            END)
        ELSE true END)
    AND (l.qualifier IS NULL OR l.match = 'package' OR {qualified} = l.qualifier || '.' || l.name
         OR right({qualified}, length(l.qualifier) + length(l.name) + 2)
            = '.' || l.qualifier || '.' || l.name)"""


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


#: Re-exports followed (``from .m import x`` in ``__init__.py``, ``export * from``).
MAX_HOPS = 2
HOP_DECAY = 0.95
_UNNEST = (
    "unnest(CAST(:names AS text[]), CAST(:matches AS text[]), CAST(:targets AS text[]),"
    " CAST(:quals AS text[]), CAST(:confs AS float8[])) AS l(name, match, target, qualifier,"
    " confidence)"
)
_LinkKey = tuple[str, str, str | None, str | None, float]


def _params(links: Sequence[_LinkKey]) -> dict[str, object]:
    return {
        "names": [k[0] for k in links],
        "matches": [k[1] for k in links],
        "targets": [k[2] for k in links],
        "quals": [k[3] for k in links],
        "confs": [k[4] for k in links],
    }


def linked_definitions(
    conn: Connection, repo_id: int, function: ChangedFunction, exclude: Sequence[int], k: int
) -> list[LinkHit]:
    """The definitions the changed function's links resolve to, best first. A link to a
    module that only re-exports the name is followed to where it is defined."""
    uses = Counter((u.name, u.match, u.target, u.qualifier, u.confidence) for u in function.uses)
    called = {
        (u.name, u.match, u.target, u.qualifier, u.confidence)
        for u in function.uses
        if u.kind != "type"
    }
    links = list(uses)
    # link -> {definition (path, name): (first line, chunk id)}
    matched: dict[_LinkKey, dict[tuple[str, str], tuple[int, int]]] = {}
    origin: dict[_LinkKey, _LinkKey] = {}  # a followed re-export -> the link it came from
    for _ in range(MAX_HOPS + 1):
        if not links:
            break
        rows = conn.execute(
            text(
                f"WITH l AS (SELECT DISTINCT * FROM {_UNNEST})"
                " SELECT c.id, c.file_path, coalesce(c.qualified_name, ''), c.start_line,"
                " l.name, l.match, l.target, l.qualifier, l.confidence"
                " FROM l JOIN code_chunks c ON c.repository_id = :r AND c.symbol_name = l.name"
                " AND c.chunk_type <> 'module'"
                " AND NOT (c.id = ANY(CAST(:ex AS bigint[])))"
                f" WHERE {_resolves('c.file_path', 'c.qualified_name', 'c.language')}"
            ),
            {"r": repo_id, "ex": list(exclude), **_params(links)},
        ).all()
        for row in rows:
            # a definition cut into windows: its first window, which holds its signature
            first = matched.setdefault(tuple(row[4:]), {})
            definition = (row[1], row[2])
            if definition not in first or (row[3], row[0]) < first[definition]:
                first[definition] = (row[3], row[0])
        followed = _reexported(conn, repo_id, [k for k in links if k not in matched])
        for hop in followed:
            origin.setdefault(hop, next(k for k in links if k[0] == hop[0]))
        links = followed
    best: dict[int, float] = {}
    for link, definitions in matched.items():
        confidence = link[-1]
        if confidence <= NAME_ONLY and len(definitions) > MAX_NAME_ONLY_MATCHES:
            continue
        source = link
        while source in origin:
            source = origin[source]
        score = confidence / math.sqrt(len(definitions)) * usage_bonus(uses[source])
        if source not in called:  # only named as a type: its shape, not behaviour it runs
            score *= TYPE_ONLY_WEIGHT
        for (path, _), (_, chunk_id) in definitions.items():
            weight = SAME_FILE_WEIGHT if path == function.file_path else 1.0
            best[chunk_id] = max(best.get(chunk_id, 0.0), score * weight)
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]
    return [LinkHit(chunk_id, score) for chunk_id, score in ranked]


def _reexported(conn: Connection, repo_id: int, unresolved: Sequence[_LinkKey]) -> list[_LinkKey]:
    """For links into a module that does not define the name: that module's own import
    links of the name (or ``*``), as links of the original name, a little less confident."""
    followable = [k for k in unresolved if k[1] in {"module", "stem"}]
    if not followable:
        return []
    rows = conn.execute(
        text(
            f"WITH l AS (SELECT DISTINCT * FROM {_UNNEST})"
            " SELECT DISTINCT l.name, i.match, i.target, l.confidence FROM l JOIN chunk_links i"
            " ON i.repository_id = :r AND i.kind = 'import' AND i.name IN (l.name, '*')"
            " WHERE CASE l.match"
            "  WHEN 'module' THEN i.file_path = l.target"
            "   OR right(i.file_path, length(l.target) + 1) = '/' || l.target"
            f"  ELSE {_STEM.format(path='i.file_path')} = l.target END"
        ),
        {"r": repo_id, **_params(followable)},
    ).all()
    return list({(r.name, r.match, r.target, None, r.confidence * HOP_DECAY): None for r in rows})


_PATH, _QUALIFIED, _LANGUAGE = (
    "CAST(:path AS text)",
    "CAST(:qualified AS text)",
    "CAST(:language AS text)",
)


def linked_callers(
    conn: Connection, repo_id: int, function: ChangedFunction, exclude: Sequence[int], k: int
) -> list[LinkHit]:
    """The chunks in other files whose links resolve to the changed function, best first
    (most confident link, then most uses), also through modules that re-export it."""
    chunk = function.chunk
    if not chunk.symbol_name or chunk.chunk_type == "module":
        return []
    name = chunk.symbol_name
    namesakes = conn.execute(
        text(
            "SELECT count(DISTINCT (file_path, qualified_name)) FROM code_chunks"
            " WHERE repository_id = :r AND symbol_name = :name AND chunk_type <> 'module'"
        ),
        {"r": repo_id, "name": name},
    ).scalar_one()
    found: dict[int, tuple[float, int]] = {}  # chunk id -> (best confidence, uses)
    places = [(function.file_path, 1.0)]
    seen = {function.file_path}
    for _ in range(MAX_HOPS + 1):
        next_places: list[tuple[str, float]] = []
        for path, decay in places:
            for row in _links_to(conn, repo_id, name, path, chunk):
                if row.kind == "import":
                    if row.file_path not in seen and len(seen) < 8:
                        seen.add(row.file_path)
                        next_places.append((row.file_path, decay * HOP_DECAY))
                    continue
                confidence = float(row.confidence) * decay
                if row.confidence <= NAME_ONLY:  # `x.name(...)`: which namesake is unknown
                    if namesakes > MAX_NAME_ONLY_MATCHES:
                        continue
                    confidence /= math.sqrt(max(1, namesakes))
                best, uses = found.get(row.id, (0.0, 0))
                found[row.id] = (max(best, confidence), uses + 1)
        places = next_places
    hits = [
        LinkHit(cid, confidence * usage_bonus(uses))
        for cid, (confidence, uses) in found.items()
        if cid not in exclude
    ]
    return sorted(hits, key=lambda h: (-h.score, h.chunk_id))[:k]


def _links_to(
    conn: Connection,
    repo_id: int,
    name: str,
    path: str,
    chunk: Chunk,
) -> Sequence[Row[Any]]:
    """Links in other files than ``path`` that resolve to ``name`` defined at ``path``,
    each with the most specific chunk holding its line."""
    return conn.execute(
        text(
            "SELECT c.id, l.kind, l.file_path, l.confidence FROM chunk_links l"
            " JOIN LATERAL (SELECT c.id FROM code_chunks c WHERE c.source_file_id"
            " = l.source_file_id AND c.start_line <= l.line AND l.line <= c.end_line"
            " ORDER BY c.end_line - c.start_line, c.id LIMIT 1) c ON true"
            " WHERE l.repository_id = :r AND l.name IN (:name, '*') AND l.file_path <> :path"
            f" AND {_resolves(_PATH, _QUALIFIED, _LANGUAGE)}"
            " LIMIT 2000"
        ),
        {
            "r": repo_id,
            "name": name,
            "path": path,
            "qualified": chunk.qualified_name or name,
            "language": chunk.language or "",
        },
    ).all()
