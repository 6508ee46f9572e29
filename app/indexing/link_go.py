"""Links of Go files: package-qualified names through the imports, same-package names,
and methods through their receiver."""

from __future__ import annotations

import re

from tree_sitter import Node

from app.indexing.identifiers import IGNORED_REFERENCES
from app.indexing.link_model import (
    IMPORTED,
    LOCAL,
    PACKAGE,
    RECEIVER_GUESS,
    Extractor,
    Link,
    enclosing,
    node_text,
    walk,
)

_USES = frozenset({"selector_expression", "qualified_type", "identifier", "type_identifier"})


class GoLinks(Extractor):
    def run(self) -> list[Link]:
        self.imports: dict[str, str] = {}  # local package name -> import path
        for node in self.nodes(frozenset({"import_spec"})):
            self._import(node)
        if self.within is None:  # what types declare: the whole file's, at index time
            for node in self.nodes(frozenset({"type_spec"})):
                self._type_facts(node)
        for node in self.nodes(_USES, scoped=True):
            if node.type == "selector_expression":
                self._selector(node)
            elif node.type == "qualified_type":
                package = node_text(node.child_by_field_name("package"))
                name_node = node.child_by_field_name("name")
                if package in self.imports and name_node is not None:
                    self._qualified(name_node, package, _go_kind(node))
            elif node.type in {"identifier", "type_identifier"}:
                self._bare(node)
        return self.links

    def _import(self, node: Node) -> None:
        path = node_text(node.child_by_field_name("path")).strip('"`')
        alias = node.child_by_field_name("name")
        local = node_text(alias) if alias is not None else _go_package_name(path)
        if local not in {"_", "."}:
            self.imports[local] = path

    def _type_facts(self, spec: Node) -> None:
        """An interface's methods (``declares``, qualified by the interface) and the types
        an interface or struct embeds (``extends``): what siblings are found by."""
        name = node_text(spec.child_by_field_name("name"))
        body = spec.child_by_field_name("type")
        if not name or body is None or body.type not in {"interface_type", "struct_type"}:
            return
        for node in walk(body):
            if node.type == "method_elem":
                method = node.child_by_field_name("name")
                if method is not None:
                    self.add(method, node_text(method), "file", self.path, LOCAL, name, "declares")
            elif node.type in {"type_elem", "field_declaration"}:
                if node.child_by_field_name("name") is not None:
                    continue  # a named field, not an embedded type
                embedded = node.child_by_field_name("type") or (
                    node.named_children[0] if node.named_children else None
                )
                if embedded is not None and embedded.type == "qualified_type":
                    package = node_text(embedded.child_by_field_name("package"))
                    type_name = embedded.child_by_field_name("name")
                    if package in self.imports and type_name is not None:
                        self._qualified(type_name, package, "extends")
                elif embedded is not None and embedded.type == "type_identifier":
                    embedded_name = node_text(embedded)
                    self.add(embedded, embedded_name, "dir", self.dir, PACKAGE, kind="extends")

    def _qualified(self, name_node: Node, package: str, kind: str = "use") -> None:
        self.add(
            name_node,
            node_text(name_node),
            "package",
            self.imports[package],
            IMPORTED,
            _go_package_name(self.imports[package]),
            kind,
        )

    def _selector(self, node: Node) -> None:
        operand = node.child_by_field_name("operand")
        field = node.child_by_field_name("field")
        if operand is None or field is None:
            return
        receiver = node_text(operand)
        if operand.type == "identifier" and receiver in self.imports:
            self._qualified(field, receiver)
            return
        variable, owner = _receiver(enclosing(node, frozenset({"method_declaration"})))
        if owner and operand.type == "identifier" and receiver == variable:
            self.add(field, node_text(field), "dir", self.dir, LOCAL, owner)
            return
        declared = _parameter_type(node, receiver) if operand.type == "identifier" else None
        if declared is not None and declared.type == "qualified_type":
            package = node_text(declared.child_by_field_name("package"))
            if package in self.imports:  # c echo.Context: c.Bind is echo's Bind
                self._qualified(field, package)
                return
        if declared is not None and declared.type == "type_identifier":
            self.add(field, node_text(field), "dir", self.dir, PACKAGE)  # c Context
        elif node.parent is not None and node.parent.type == "call_expression":
            # a method of a value whose type this file does not name: this package's
            # method of that name, else any namesake
            self.add(field, node_text(field), "dir", self.dir, RECEIVER_GUESS)
            self.name_only(field, node_text(field))

    def _bare(self, node: Node) -> None:
        parent = node.parent
        if parent is None:
            return
        if node.type == "identifier":
            if parent.type != "call_expression" or parent.child_by_field_name("function") != node:
                return
        elif parent.type in {"type_spec", "qualified_type"}:
            return
        name = node_text(node)
        if name[:1].isalpha() and name not in IGNORED_REFERENCES and name not in _GO_BUILTINS:
            kind = _go_kind(node) if node.type == "type_identifier" else "use"
            self.add(node, name, "dir", self.dir, PACKAGE, kind=kind)


_GO_BUILTINS = frozenset(
    "append cap clear close complex copy delete imag len make max min new panic print println"
    " real recover any comparable".split()
)


def _go_kind(type_node: Node) -> str:
    """A type named to build a value (``T{...}``) is a use; anywhere else, a type."""
    parent = type_node.parent
    return "use" if parent is not None and parent.type == "composite_literal" else "type"


def _go_package_name(import_path: str) -> str:
    """The package name an import path binds by default: its last element, without a
    major-version suffix (``/v2``) or a ``.vN`` (gopkg.in) suffix."""
    parts = import_path.split("/")
    last = parts[-1]
    if re.fullmatch(r"v\d+", last) and len(parts) > 1:
        last = parts[-2]
    return re.sub(r"\.v\d+$", "", last).replace("-", "_")


_FUNCTIONS = frozenset({"function_declaration", "method_declaration", "func_literal"})


def _parameter_type(node: Node, name: str) -> Node | None:
    """The declared type of parameter ``name`` of a function enclosing ``node`` (through
    a pointer), or None: ``func h(c echo.Context)`` -> ``echo.Context``."""
    function = enclosing(node, _FUNCTIONS)
    while function is not None:
        parameters = function.child_by_field_name("parameters")
        for declaration in parameters.named_children if parameters is not None else ():
            names = declaration.children_by_field_name("name")
            if any(node_text(n) == name for n in names):
                declared = declaration.child_by_field_name("type")
                while declared is not None and declared.type == "pointer_type":
                    declared = declared.named_children[0] if declared.named_children else None
                return declared
        function = enclosing(function, _FUNCTIONS)
    return None


def _receiver(method: Node | None) -> tuple[str | None, str | None]:
    """A Go method's receiver variable and type name: ``(c *Command)`` -> (c, Command)."""
    receiver = method.child_by_field_name("receiver") if method is not None else None
    variable = kind = None
    for node in walk(receiver) if receiver is not None else ():
        if node.type == "parameter_declaration" and variable is None:
            variable = node_text(node.child_by_field_name("name")) or None
        elif node.type == "type_identifier" and kind is None:
            kind = node_text(node)
    return variable, kind
