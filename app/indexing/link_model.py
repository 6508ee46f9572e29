"""What a link is (``Link``, its confidences) and what every language's link extractor
shares: finding a syntax tree's nodes by query, and the ``Extractor`` base
(``app/indexing/links.py`` says what links are for). Pure: no I/O."""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from tree_sitter import Language, Node, Query, QueryCursor

#: Bump when the rules change (or the language a file is read as): files indexed by an
#: older version are re-read on the next run (chunked again too: 9 cut JavaScript's
#: assigned functions, `exports.f = function`, into chunks of their own; 10 read PHP's
#: docblock and constructor-assigned types, and C#'s calls `x?.M()` and `M<T>()`; 11
#: names Ruby's `class << self` and its methods as the class's, `Cart.empty` not
#: `Cart::<anonymous>::empty`, and C's `typedef struct {..} T` as T; 12 stores C#'s
#: extension methods and links `x.M()` to them; 13 stores the stretches of lines a
#: class skeleton or its window holds, ``code_chunks.segments``).
LINK_VERSION = 13

IMPORTED = 1.0  # a name bound by an import of a module resolved to files of this repository
LOCAL = 0.9  # defined in the same file, or a method of the enclosing class
PACKAGE = 0.8  # Go: same package, another file
RECEIVER_GUESS = 0.5  # a method called on some value, looked up in the same package
NAME_ONLY = 0.3  # the bare name: any definition of it anywhere

MAX_LINKS_PER_FILE = 4000
#: 1-based, inclusive line ranges: where links are wanted (None: the whole file).
Segments = tuple[tuple[int, int], ...]
TS_EXTENSIONS = re.compile(r"(/index)?\.(d\.)?[cm]?[jt]sx?$")


@dataclass(frozen=True, slots=True)
class Link:
    """``name`` is used on ``line`` (1-based) and defined at ``target`` (per ``match``)."""

    line: int
    name: str
    # how ``target`` selects files (the SQL is ``app/retrieval/links.py`` ``resolves``):
    # "file" (a path), "module" (a path suffix), "stem" (a JS/TS path without extension),
    # "dir" (a Go package directory), "package" (a Go import path), "pkgdir" (a directory
    # ending so: a Java package), "rsmod" (a Rust module, ``rust_stem``), "cstem" (a C or
    # C++ file name without extension: a header's), "extension" (a C# extension method
    # in one of the namespaces ``target`` lists, ``link_csharp.EXTENSION``), "name" (anywhere)
    match: str
    target: str | None
    qualifier: str | None  # the class (methods) or Go package name the definition is in
    confidence: float
    # "use"; "type": only in a type position (an annotation, a declared type); "import":
    # an import or re-export line (``name`` may be ``*``); "extends": a base class, an
    # implemented or embedded interface, an embedded struct; "declares": a method an
    # interface declares (``qualifier``: the interface); "global": a namespace a C#
    # ``global using`` brings into every file (``target``; ``link_csharp.GLOBAL_USING``);
    # "extension": a C# extension method (``link_csharp.EXTENSION``)
    kind: str = "use"


def links_in(links: Sequence[Link], segments: Segments) -> tuple[Link, ...]:
    """The links on the lines of ``segments``, in the order of ``links``."""
    if not segments:
        return ()
    first, last = min(s for s, _ in segments), max(e for _, e in segments)
    if len(segments) == 1:
        return tuple(k for k in links if first <= k.line <= last)
    return tuple(
        k for k in links if first <= k.line <= last and any(s <= k.line <= e for s, e in segments)
    )


def stem_of(path: str) -> str:
    """A JS/TS module's path as an import names it: no extension, no ``/index``."""
    return TS_EXTENSIONS.sub("", path)


def walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def node_text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def enclosing(node: Node, types: frozenset[str]) -> Node | None:
    parent = node.parent
    while parent is not None and parent.type not in types:
        parent = parent.parent
    return parent


class Extractor:
    """Shared state of one file's pass: its path, directory and the links found.

    Nodes are found by tree-sitter queries, matched in C (a walk in Python over every node
    of a file was most of the cost of finding links). With ``within``, uses are looked for
    only on those lines (imports and definitions are still read from the whole file): a
    review needs the links of its changed functions, not of every line it touches.

    ``BY_NAME_TOO``: every use the rules place elsewhere than this file is linked by its
    bare name too (``with_bare_names``), and so is every call ``NameOnly`` links: a
    receiver's type can be wrong (the method is inherited, a trait's, an interface's
    default), a package need not be a directory, and the bare names are what found those
    before the rules existed (with the rules alone, the structural benchmark lost what
    the bare names had found: bench/RESULTS.md, "Links for every language we chunk").
    The rules raise a link's confidence; the bare names keep what was found."""

    BY_NAME_TOO = False

    def __init__(
        self, path: str, root: Node, language: Language, within: Segments | None = None
    ) -> None:
        self.path, self.root, self.language, self.within = path, root, language, within
        self.dir = posixpath.dirname(path)
        self.links: list[Link] = []
        self.defined: set[str] = set()

    def run(self) -> list[Link]:
        raise NotImplementedError

    def nodes(self, kinds: frozenset[str], *, scoped: bool = False) -> list[Node]:
        """The file's nodes of ``kinds`` in document order; ``scoped``: only those
        overlapping the lines ``within``."""
        query = kinds_query(self.language, kinds)
        if query is None:
            return []
        if not scoped or self.within is None:
            return QueryCursor(query).captures(self.root).get("node", [])
        found: dict[int, Node] = {}
        for start, end in self.within:
            cursor = QueryCursor(query)
            cursor.set_point_range((start - 1, 0), (end, 0))
            for node in cursor.captures(self.root).get("node", []):
                found[node.id] = node
        return sorted(found.values(), key=lambda n: (n.start_byte, -n.end_byte))

    def nodes_by_type(self, kinds: frozenset[str]) -> dict[str, list[Node]]:
        """The whole file's nodes of ``kinds``, by type, in one query (one pass over the
        tree; a query a kind costs a pass each)."""
        found: dict[str, list[Node]] = {kind: [] for kind in kinds}
        for node in self.nodes(kinds):
            found[node.type].append(node)
        for nodes in found.values():  # a query of several kinds captures kind by kind
            nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
        return found

    def add(
        self,
        node: Node,
        name: str,
        match: str,
        target: str | None,
        confidence: float,
        qualifier: str | None = None,
        kind: str = "use",
    ) -> None:
        if len(name) > 1 or name == "*":
            line = node.start_point.row + 1
            self.links.append(Link(line, name, match, target, qualifier, confidence, kind))

    def name_only(self, node: Node, name: str, kind: str = "use") -> None:
        self.add(node, name, "name", None, NAME_ONLY, kind=kind)


def with_bare_names(links: Sequence[Link]) -> list[Link]:
    """``links`` and, for each use or base placed outside its own file, the bare-name link
    of the same name on the same line (``Extractor.BY_NAME_TOO``)."""
    bare = [
        Link(k.line, k.name, "name", None, None, NAME_ONLY, k.kind)
        for k in links
        if k.kind in {"use", "extends"} and k.match != "file" and k.name != "*"
    ]
    return [*links, *bare]


@functools.cache
def kinds_query(language: Language, kinds: frozenset[str]) -> Query | None:
    """A query capturing every node of ``kinds`` the grammar has (None: it has none)."""
    known = sorted(k for k in kinds if language.id_for_node_kind(k, True) is not None)
    return Query(language, " ".join(f"({k}) @node" for k in known)) if known else None


class NameOnly(Extractor):
    """Languages without import rules: called and constructed names, by name."""

    CALLS = frozenset(
        {"call_expression", "call", "method_invocation", "object_creation_expression"}
    )

    def run(self) -> list[Link]:
        for node in self.nodes(self.CALLS, scoped=True):
            callee = node.child_by_field_name("function") or node.child_by_field_name("name")
            if callee is None:
                callee = node.child_by_field_name("type")
            if callee is not None:
                last = callee.children[-1] if callee.children else callee
                if last.type.endswith("identifier"):
                    self.name_only(last, node_text(last))
        return self.links
