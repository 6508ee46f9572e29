"""Links of TypeScript and JavaScript files: ES imports of relative modules (named,
default, namespace), re-exports, ``this`` members and same-file functions."""

from __future__ import annotations

import posixpath

from tree_sitter import Node

from app.indexing.link_model import (
    IMPORTED,
    LOCAL,
    Extractor,
    Link,
    enclosing,
    node_text,
    stem_of,
    walk,
)


class EcmaScriptLinks(Extractor):
    CLASSES = frozenset({"class_declaration", "class", "abstract_class_declaration"})
    DEFINITIONS = CLASSES | {
        "function_declaration",
        "generator_function_declaration",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
        "variable_declarator",
    }
    DECLARATIONS = DEFINITIONS | {"import_statement", "export_statement"}
    USES = frozenset({"identifier", "type_identifier", "member_expression"})

    def run(self) -> list[Link]:
        self.imports: dict[str, tuple[str | None, str | None]] = {}  # local -> (stem, name)
        for node in self.nodes(self.DECLARATIONS):
            if node.type == "import_statement":
                self._import(node)
            elif node.type == "export_statement" and node.child_by_field_name("source"):
                self._reexport(node)
            elif node.type in self.DEFINITIONS and _top_level(node):
                self.defined.add(node_text(node.child_by_field_name("name")))
        for node in self.nodes(self.USES, scoped=True):
            if node.type in {"identifier", "type_identifier"}:
                self._identifier(node)
            elif node.type == "member_expression":
                self._member(node)
        return self.links

    def _module(self, specifier: str) -> str | None:
        """The stem of a relative import, or None for a package."""
        if not specifier.startswith("."):
            return None
        joined = posixpath.normpath(posixpath.join(self.dir, specifier))
        return stem_of(joined)

    def _import(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        stem = self._module(node_text(source).strip("'\"`")) if source is not None else None
        for child in walk(node):
            if child.type == "import_specifier":
                name = node_text(child.child_by_field_name("name"))
                alias = child.child_by_field_name("alias")
                self.imports[node_text(alias) if alias is not None else name] = (stem, name)
                if stem is not None:
                    self.add(child, name, "stem", stem, IMPORTED, kind="import")
            elif child.type == "namespace_import":
                for ident in child.named_children:
                    self.imports[node_text(ident)] = (stem, None)
            elif child.type == "import_clause":
                for ident in child.named_children:
                    if ident.type == "identifier":  # default import: the module's default
                        self.imports[node_text(ident)] = (stem, "default")

    def _reexport(self, node: Node) -> None:
        """``export { a } from './m'`` and ``export * from './m'``: import links to follow."""
        source = node.child_by_field_name("source")
        stem = self._module(node_text(source).strip("'\"`"))
        if stem is None:
            return
        specifiers = [c for c in walk(node) if c.type == "export_specifier"]
        for spec in specifiers:
            name = spec.child_by_field_name("name")
            self.add(spec, node_text(name), "stem", stem, IMPORTED, kind="import")
        if not specifiers:
            self.add(node, "*", "stem", stem, IMPORTED, kind="import")

    def _identifier(self, node: Node) -> None:
        parent = node.parent
        if parent is None or parent.type in {
            "import_specifier",
            "namespace_import",
            "import_clause",
            "formal_parameters",
            "required_parameter",
            "optional_parameter",
        }:
            return
        if parent.child_by_field_name("name") == node and parent.type != "call_expression":
            return
        name = node_text(node)
        kind = "type" if node.type == "type_identifier" else "use"
        if _heritage(node):
            kind = "extends"
        if name in self.imports:
            stem, imported = self.imports[name]
            if imported is None:
                return
            target = imported if imported != "default" else name
            if stem is not None:
                self.add(node, target, "stem", stem, IMPORTED, kind=kind)
            self.name_only(node, target, kind)
            return
        called = parent.type in {"call_expression", "new_expression"}
        if name in self.defined:
            self.add(node, name, "file", self.path, LOCAL, kind=kind)
        elif called or node.type == "type_identifier" or kind == "extends":
            self.name_only(node, name, kind)

    def _member(self, node: Node) -> None:
        obj = node.child_by_field_name("object")
        prop = node.child_by_field_name("property")
        if obj is None or prop is None:
            return
        name = node_text(prop)
        if obj.type == "this":
            cls = enclosing(node, self.CLASSES)
            owner = node_text(cls.child_by_field_name("name")) if cls is not None else None
            self.add(prop, name, "file", self.path, LOCAL, owner)
            return
        receiver = node_text(obj)
        if obj.type == "identifier" and receiver in self.imports:
            stem, imported = self.imports[receiver]
            if stem is not None:
                self.add(prop, name, "stem", stem, IMPORTED, imported)
            return
        parent = node.parent
        if parent is not None and parent.type == "call_expression":
            self.name_only(prop, name)


_HERITAGE = frozenset({"extends_clause", "implements_clause", "extends_type_clause"})


def _heritage(node: Node) -> bool:
    """Whether ``node`` names what a class or interface extends or implements (not a
    type argument of it): ``class C extends B implements I``, ``interface K extends L``."""
    parent = node.parent
    while parent is not None and parent.type in {"nested_type_identifier", "member_expression"}:
        parent = parent.parent
    return parent is not None and parent.type in _HERITAGE


def _top_level(node: Node) -> bool:
    """A declaration of the module (maybe exported), not a local of some function."""
    parent = node.parent
    if node.type == "variable_declarator" and parent is not None:
        parent = parent.parent  # the lexical_declaration or variable_declaration
    while parent is not None and parent.type == "export_statement":
        parent = parent.parent
    return parent is None or parent.type == "program"
