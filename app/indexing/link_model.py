"""What a link is (``Link``, its confidences) and what every language's link extractor
shares: the walk over a syntax tree and the ``_Extractor`` base (``app/indexing/links.py``
says what links are for). Pure: no I/O."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

#: Bump when the rules change: files indexed by an older version are re-read on the next run.
LINK_VERSION = 4

IMPORTED = 1.0  # a name bound by an import of a module resolved to files of this repository
LOCAL = 0.9  # defined in the same file, or a method of the enclosing class
PACKAGE = 0.8  # Go: same package, another file
RECEIVER_GUESS = 0.5  # a method called on some value, looked up in the same package
NAME_ONLY = 0.3  # the bare name: any definition of it anywhere

MAX_LINKS_PER_FILE = 4000
TS_EXTENSIONS = re.compile(r"(/index)?\.(d\.)?[cm]?[jt]sx?$")


@dataclass(frozen=True, slots=True)
class Link:
    """``name`` is used on ``line`` (1-based) and defined at ``target`` (per ``match``)."""

    line: int
    name: str
    # how ``target`` selects files (the SQL is ``app/retrieval/links.py`` ``_resolves``):
    # "file" (a path), "module" (a path suffix), "stem" (a JS/TS path without extension),
    # "dir" (a Go package directory), "package" (a Go import path), "name" (anywhere)
    match: str
    target: str | None
    qualifier: str | None  # the class (methods) or Go package name the definition is in
    confidence: float
    # "use"; "type": only in a type position (an annotation, a declared type); "import":
    # an import or re-export line (``name`` may be ``*``)
    kind: str = "use"


def links_in(links: list[Link], segments: tuple[tuple[int, int], ...]) -> tuple[Link, ...]:
    """The links on the lines of ``segments``."""
    return tuple(k for k in links if any(s <= k.line <= e for s, e in segments))


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
    """Shared state of one file's pass: its path, directory and the links found."""

    def __init__(self, path: str, root: Node) -> None:
        self.path, self.root = path, root
        self.dir = posixpath.dirname(path)
        self.links: list[Link] = []
        self.defined: set[str] = set()

    def run(self) -> list[Link]:
        raise NotImplementedError

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


class NameOnly(Extractor):
    """Languages without import rules: called and constructed names, by name."""

    CALLS = frozenset(
        {"call_expression", "call", "method_invocation", "object_creation_expression"}
    )

    def run(self) -> list[Link]:
        for node in walk(self.root):
            if node.type in self.CALLS:
                callee = node.child_by_field_name("function") or node.child_by_field_name("name")
                if callee is None:
                    callee = node.child_by_field_name("type")
                if callee is not None:
                    last = callee.children[-1] if callee.children else callee
                    if last.type.endswith("identifier"):
                        self.name_only(last, node_text(last))
        return self.links
