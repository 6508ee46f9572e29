"""The structural signal: link joins over ``chunk_links`` and ``code_chunks``.

Definitions: the chunks a changed function's links (``ChangedFunction.uses``, computed
from its new version) resolve to. Callers: the chunks whose stored links resolve to the
changed function. Both in one statement each, scored by the link's confidence divided by
the square root of how many definitions the link matched, so an import resolved to one
file outweighs a bare method name defined in twenty places.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text

from app.diff.changed import ChangedFunction
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


@dataclass(frozen=True)
class LinkHit:
    chunk_id: int
    score: float
    relation: str  # "definition" | "caller"


def linked_definitions(
    conn: Connection, repo_id: int, function: ChangedFunction, exclude: Sequence[int], k: int
) -> list[LinkHit]:
    """The definitions the changed function's links resolve to, best first."""
    uses = function.uses
    if not uses:
        return []
    rows = conn.execute(
        text(
            "WITH l AS (SELECT DISTINCT * FROM unnest(CAST(:names AS text[]),"
            " CAST(:matches AS text[]), CAST(:targets AS text[]), CAST(:quals AS text[]),"
            " CAST(:confs AS float8[])) AS l(name, match, target, qualifier, confidence))"
            " SELECT c.id, l.name, l.match, l.target, l.qualifier, l.confidence"
            " FROM l JOIN code_chunks c ON c.repository_id = :r AND c.symbol_name = l.name"
            " AND c.chunk_type NOT IN ('module', 'window')"
            " AND NOT (c.id = ANY(CAST(:ex AS bigint[])))"
            f" WHERE {_resolves('c.file_path', 'c.qualified_name', 'c.language')}"
        ),
        {
            "r": repo_id,
            "names": [u.name for u in uses],
            "matches": [u.match for u in uses],
            "targets": [u.target for u in uses],
            "quals": [u.qualifier for u in uses],
            "confs": [u.confidence for u in uses],
            "ex": list(exclude),
        },
    ).all()
    matched: dict[tuple[object, ...], list[int]] = {}
    for row in rows:
        matched.setdefault(tuple(row[1:]), []).append(row[0])
    best: dict[int, float] = {}
    for link, ids in matched.items():
        confidence = float(link[-1])  # type: ignore[arg-type]
        if confidence <= NAME_ONLY and len(set(ids)) > MAX_NAME_ONLY_MATCHES:
            continue
        score = confidence / math.sqrt(len(set(ids)))
        for chunk_id in ids:
            best[chunk_id] = max(best.get(chunk_id, 0.0), score)
    ranked = sorted(best.items(), key=lambda item: (-item[1], item[0]))[:k]
    return [LinkHit(chunk_id, score, "definition") for chunk_id, score in ranked]


_PATH, _QUALIFIED, _LANGUAGE = (
    "CAST(:path AS text)",
    "CAST(:qualified AS text)",
    "CAST(:language AS text)",
)


def linked_callers(
    conn: Connection, repo_id: int, function: ChangedFunction, exclude: Sequence[int], k: int
) -> list[LinkHit]:
    """The chunks in other files whose links resolve to the changed function, best first
    (most confident link, then most uses)."""
    chunk = function.chunk
    if not chunk.symbol_name or chunk.chunk_type in {"module", "window"}:
        return []
    namesakes = conn.execute(
        text(
            "SELECT count(*) FROM code_chunks WHERE repository_id = :r AND symbol_name = :name"
            " AND chunk_type NOT IN ('module', 'window')"
        ),
        {"r": repo_id, "name": chunk.symbol_name},
    ).scalar_one()
    rows = conn.execute(
        text(
            "SELECT c.id, max(l.confidence) AS confidence, count(*) AS uses FROM chunk_links l"
            " JOIN LATERAL (SELECT c.id FROM code_chunks c WHERE c.source_file_id"
            " = l.source_file_id AND c.start_line <= l.line AND l.line <= c.end_line"
            " ORDER BY c.end_line - c.start_line, c.id LIMIT 1) c ON true"
            " WHERE l.repository_id = :r AND l.name = :name AND l.file_path <> :path"
            " AND NOT (c.id = ANY(CAST(:ex AS bigint[])))"
            f" AND {_resolves(_PATH, _QUALIFIED, _LANGUAGE)}"
            " GROUP BY c.id ORDER BY max(l.confidence) DESC, count(*) DESC, c.id LIMIT :k"
        ),
        {
            "r": repo_id,
            "name": chunk.symbol_name,
            "path": function.file_path,
            "qualified": chunk.qualified_name or chunk.symbol_name,
            "language": chunk.language or "",
            "ex": list(exclude),
            "k": k,
        },
    ).all()
    hits = []
    for row in rows:
        confidence = float(row.confidence)
        if confidence <= NAME_ONLY:  # `x.name(...)`: which of the namesakes is unknown
            if namesakes > MAX_NAME_ONLY_MATCHES:
                continue
            confidence /= math.sqrt(max(1, namesakes))
        hits.append(LinkHit(row.id, confidence * (1 + 0.05 * min(row.uses - 1, 4)), "caller"))
    return hits
