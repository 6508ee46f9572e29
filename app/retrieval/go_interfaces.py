"""Go interfaces and the types that implement them, found in the index: an interface's
methods are ``declares`` links (``app/indexing/link_go.py``), and a type implements it
when the index holds a method of that type for each of them (Go's rule, less embedded
interfaces and promoted methods, which the index does not expand). The types of one
package share a directory, so a type is a (directory, qualified name) pair."""

from __future__ import annotations

import math
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text

#: (function index, file path, qualified name of its type ``pkg.T``, method name)
GoMethod = tuple[int, str, str, str]
#: An interface with more implementations than this is a common shape (``Stringer``):
#: its implementations say nothing in particular.
MAX_IMPLEMENTATIONS = 20


@dataclass(frozen=True)
class Interface:
    path: str
    name: str
    methods: frozenset[str]
    chunk_id: int | None  # its type declaration's chunk


def implementations(
    conn: Connection, repo_id: int, methods: Sequence[GoMethod]
) -> list[tuple[int, int, float]]:
    """(function, chunk id, score) for each Go method: the same method of every other
    type implementing an interface that declares it and that its own type implements,
    and that interface's declaration. Two statements for all the methods."""
    if not methods:
        return []
    interfaces = declaring(conn, repo_id, sorted({name for *_, name in methods}))
    if not interfaces:
        return []
    wanted = sorted({m for i in interfaces for m in i.methods})
    types = go_methods(conn, repo_id, wanted)
    found = []
    for fn, path, owner, name in methods:
        own = (posixpath.dirname(path), owner)
        for interface in interfaces:
            if name not in interface.methods:
                continue
            if not interface.methods <= types.get(own, {}).keys() | {name}:
                continue
            others = [t for t in implementers(interface, types) if t != own]
            if not others or len(others) > MAX_IMPLEMENTATIONS:
                continue
            share = max(1 / math.sqrt(len(others)), 0.3)
            found += [(fn, types[t][name], share) for t in others]
            if interface.chunk_id is not None:
                found.append((fn, interface.chunk_id, 1.0))
    return found


def implementers(
    interface: Interface, types: dict[tuple[str, str], dict[str, int]]
) -> list[tuple[str, str]]:
    """The types with a method for each of the interface's. Pure."""
    return sorted(t for t, methods in types.items() if interface.methods <= methods.keys())


def declaring(conn: Connection, repo_id: int, names: Sequence[str]) -> list[Interface]:
    """The interfaces that declare any of ``names``, with all their methods."""
    rows = conn.execute(
        text(
            """
WITH d AS (
  SELECT DISTINCT source_file_id, file_path, qualifier FROM chunk_links
  WHERE repository_id = :r AND kind = 'declares' AND name = ANY(CAST(:names AS text[]))
)
SELECT d.file_path, d.qualifier, array_agg(DISTINCT l.name),
  (SELECT c.id FROM code_chunks c WHERE c.source_file_id = d.source_file_id
   AND c.symbol_name = d.qualifier AND c.chunk_type = 'class' ORDER BY c.start_line LIMIT 1)
FROM d JOIN chunk_links l ON l.source_file_id = d.source_file_id AND l.kind = 'declares'
  AND l.qualifier = d.qualifier
GROUP BY d.source_file_id, d.file_path, d.qualifier
ORDER BY d.file_path, d.qualifier
"""
        ),
        {"r": repo_id, "names": list(names)},
    ).all()
    return [Interface(path, name, frozenset(methods), cid) for path, name, methods, cid in rows]


def go_methods(
    conn: Connection, repo_id: int, names: Sequence[str]
) -> dict[tuple[str, str], dict[str, int]]:
    """(directory, type) -> {method name: chunk id} for the Go methods named ``names``
    (a long method: its first window)."""
    rows = conn.execute(
        text(
            "SELECT DISTINCT ON (file_path, qualified_name) id, file_path, qualified_name,"
            " symbol_name FROM code_chunks WHERE repository_id = :r AND language = 'go'"
            " AND chunk_type IN ('method', 'window') AND symbol_name = ANY(CAST(:n AS text[]))"
            " ORDER BY file_path, qualified_name, start_line"
        ),
        {"r": repo_id, "n": list(names)},
    ).all()
    types: dict[tuple[str, str], dict[str, int]] = {}
    for chunk_id, path, qualified, name in rows:
        owner, _, last = qualified.rpartition(".")
        if owner.count(".") != 1 or last != name:  # pkg.T.M
            continue
        types.setdefault((posixpath.dirname(path), owner), {})[name] = chunk_id
    return types
