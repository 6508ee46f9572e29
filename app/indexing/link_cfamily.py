"""Links of C and C++ files. A header declares what a source file of the same name
defines (``db/db_impl.h`` -> ``db_impl.cc``), so a function called here and not defined
here is linked to the files named as the headers this file includes (``cstem``: a path's
file name without its extension), and by name. In C++ a method goes by its class:
``this->f()``, ``f()`` in a method (``A::g`` defined out of class too), ``T::f()``,
``ns::f()``, and ``x.f()`` / ``x->f()`` through ``x``'s declared type (a parameter, a
local, a field); ``new T`` is the class; base classes are extends links."""

from __future__ import annotations

import posixpath

from tree_sitter import Node

from app.indexing.identifiers import IGNORED_REFERENCES
from app.indexing.link_model import (
    LOCAL,
    PACKAGE,
    Extractor,
    Link,
    enclosing,
    node_text,
    walk,
)

_CLASSES = frozenset({"class_specifier", "struct_specifier"})
_FUNCTIONS = frozenset({"function_definition", "lambda_expression"})
_USES = frozenset({"call_expression", "new_expression", "base_class_clause"})
_DECLARATORS = frozenset(
    {"pointer_declarator", "reference_declarator", "init_declarator", "array_declarator"}
)


def header_stem(path: str) -> str:
    """A path's file name without its extension: what ``cstem`` links match."""
    return posixpath.splitext(posixpath.basename(path))[0]


class CFamilyLinks(Extractor):
    BY_NAME_TOO = True

    def run(self) -> list[Link]:
        self.headers = sorted(
            {
                header_stem(node_text(path).strip('"'))
                for node in self.nodes(frozenset({"preproc_include"}))
                if (path := node.child_by_field_name("path")) is not None
                and path.type == "string_literal"
            }
            - {header_stem(self.path)}
        )
        self.defined = {
            node_text(name)
            for node in self.nodes(frozenset({"function_definition"}))
            if (name := _declared_name(node.child_by_field_name("declarator"))) is not None
        }
        self.declared: dict[int, dict[str, str]] = {}  # scope node id -> variable -> type
        for node in self.nodes(_USES, scoped=True):
            if node.type == "call_expression":
                self._call(node)
            elif node.type == "new_expression":
                created = _type_name(node.child_by_field_name("type"))
                if created is not None:
                    self.name_only(created, node_text(created))
            else:
                for base in node.named_children:
                    found = _type_name(base)
                    if found is not None:
                        self.name_only(found, node_text(found), kind="extends")
        return self.links

    def _call(self, node: Node) -> None:
        function = node.child_by_field_name("function")
        if function is not None and function.type == "template_function":
            function = function.child_by_field_name("name")
        if function is None:
            return
        if function.type == "identifier":
            self._bare(function)
        elif function.type == "qualified_identifier":  # T::f(), ns::f()
            name = function.child_by_field_name("name")
            scope = function.child_by_field_name("scope")
            if name is not None and name.type == "template_function":
                name = name.child_by_field_name("name")
            if name is not None and scope is not None and name.type == "identifier":
                owner = _type_name(scope) or scope
                self.add(name, node_text(name), "name", None, PACKAGE, node_text(owner))
        elif function.type == "field_expression":  # x.f(), x->f(), this->f()
            field = function.child_by_field_name("field")
            argument = function.child_by_field_name("argument")
            if field is None or argument is None:
                return
            if argument.type == "this":
                receiver = self._own_class(node)
            elif argument.type == "identifier":
                receiver = self._variables(node).get(node_text(argument))
            else:
                receiver = None
            if receiver is not None:
                confidence = LOCAL if argument.type == "this" else PACKAGE
                self.add(field, node_text(field), "name", None, confidence, receiver)
            else:
                self.name_only(field, node_text(field))

    def _bare(self, node: Node) -> None:
        """``f()``: this file's, the enclosing class's (C++), an included header's
        namesake file's, or by name."""
        name = node_text(node)
        if name in IGNORED_REFERENCES:
            return
        if name in self.defined:
            self.add(node, name, "file", self.path, LOCAL)
            return
        owner = self._own_class(node)
        if owner is not None:
            self.add(node, name, "name", None, LOCAL, owner)
        for header in self.headers:
            self.add(node, name, "cstem", header, PACKAGE)
        self.name_only(node, name)

    def _own_class(self, node: Node) -> str | None:
        """The class of the method around ``node``: the class it is written in, or the
        scope of its qualified name (``void A::f() {...}`` -> A)."""
        owner = enclosing(node, _CLASSES)
        if owner is not None:
            name = owner.child_by_field_name("name")
            return node_text(name) if name is not None else None
        function = enclosing(node, frozenset({"function_definition"}))
        declarator = function.child_by_field_name("declarator") if function is not None else None
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        inner = declarator.child_by_field_name("declarator") if declarator is not None else None
        if inner is not None and inner.type == "qualified_identifier":
            scope = inner.child_by_field_name("scope")
            return node_text(_type_name(scope) or scope) if scope is not None else None
        return None

    def _variables(self, node: Node) -> dict[str, str]:
        """Variable -> declared type name: the function's parameters and locals, and the
        fields of the class around it."""
        found: dict[str, str] = {}
        for scope in (enclosing(node, _FUNCTIONS), enclosing(node, _CLASSES)):
            if scope is None:
                continue
            if scope.id not in self.declared:
                self.declared[scope.id] = _declarations(scope)
            for name, type_name in self.declared[scope.id].items():
                found.setdefault(name, type_name)
        return found


def _declarations(scope: Node) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in walk(scope):
        if node.type not in {"parameter_declaration", "declaration", "field_declaration"}:
            continue
        type_node = _type_name(node.child_by_field_name("type"))
        if type_node is None:
            continue
        for declarator in node.children_by_field_name("declarator"):
            name = _declared_name(declarator)
            if name is not None and name.type in {"identifier", "field_identifier"}:
                found.setdefault(node_text(name), node_text(type_node))
    return found


def _declared_name(node: Node | None) -> Node | None:
    """The name a declarator declares: ``*x``, ``&x``, ``x = 1``, ``f(...)``, ``A::f``."""
    while node is not None and node.type in _DECLARATORS | {"function_declarator"}:
        node = node.child_by_field_name("declarator")
    if node is not None and node.type == "qualified_identifier":
        node = node.child_by_field_name("name")
    return node


def _type_name(node: Node | None) -> Node | None:
    """The identifier of a type: ``T``, ``ns::T``, ``T<U>``, ``const T``."""
    while node is not None:
        if node.type in {"type_identifier", "namespace_identifier"}:
            return node
        if node.type in {"qualified_identifier", "template_type"}:
            node = node.child_by_field_name("name")
        else:
            return None
    return None
