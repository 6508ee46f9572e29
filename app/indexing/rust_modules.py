"""Rust module paths, pure: the module a file is (``rust_stem``), where ``crate::`` starts
(``crate_root``), and the leaves of a ``use`` tree (``use_leaves``)."""

from __future__ import annotations

import posixpath
import re

from tree_sitter import Node

from app.indexing.link_model import node_text

_RUST_STEM = re.compile(r"(/(mod|lib|main))?\.rs$")


def rust_stem(path: str) -> str:
    """The module a Rust file is: ``src/a/mod.rs`` and ``src/a.rs`` -> ``src/a``,
    ``src/lib.rs`` -> ``src`` (the SQL of ``app/retrieval/links.py`` is the same rule)."""
    return _RUST_STEM.sub("", path)


def crate_root(path: str) -> str:
    """The directory ``crate::`` names: the nearest ``src`` above the file, else its own."""
    parts = path.split("/")[:-1]
    if "src" in parts:
        return "/".join(parts[: len(parts) - parts[::-1].index("src")])
    return posixpath.dirname(path)


def use_leaves(node: Node | None, prefix: list[str]) -> list[tuple[list[str], str | None, bool]]:
    """A ``use`` argument's leaves: (path segments, alias, is a glob)."""
    if node is None:
        return []
    if node.type in {"identifier", "self", "crate", "super", "scoped_identifier"}:
        return [(prefix + node_text(node).replace(" ", "").split("::"), None, False)]
    if node.type == "use_as_clause":
        path = node.child_by_field_name("path")
        alias = node.child_by_field_name("alias")
        segments = node_text(path).replace(" ", "").split("::") if path is not None else []
        return [(prefix + segments, node_text(alias) or None, False)]
    if node.type == "use_wildcard":
        inner = node.named_children[0] if node.named_children else None
        segments = node_text(inner).replace(" ", "").split("::") if inner is not None else []
        return [(prefix + segments, None, True)]
    if node.type == "scoped_use_list":
        path = node.child_by_field_name("path")
        head = node_text(path).replace(" ", "").split("::") if path is not None else []
        return use_leaves(node.child_by_field_name("list"), prefix + head)
    if node.type == "use_list":
        return [leaf for child in node.named_children for leaf in use_leaves(child, prefix)]
    return []
