"""Links of TypeScript and JavaScript files: ES imports of relative modules (named,
default, namespace), CommonJS ``require`` of them (the module, or names destructured
from it), re-exports, ``this`` and ``exports`` members (a base class's, for ``this.m()`` the
class does not define and ``super.m()``), same-file functions, and the components JSX
renders (``<Button />``)."""

from __future__ import annotations

import posixpath

from tree_sitter import Node

from app.indexing.assigned_names import FUNCTION_VALUES, MODULE_EXPORTS
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
    #: a function assigned to a property of the module: ``exports.f = function``
    ASSIGNMENTS = frozenset({"assignment_expression"})
    #: ``exports.f``, ``module.exports.f``: this file's own exports
    EXPORTS = frozenset({"exports", "module.exports"})

    def run(self) -> list[Link]:
        self.imports: dict[str, Imported] = {}  # local -> (stem, name)
        # a `require` in a function binds its name in that function (by the node's id)
        self.scoped: dict[int, dict[str, Imported]] = {}
        self.class_members: dict[int, set[str]] = {}  # class node id -> its members
        for node in self.nodes(self.DECLARATIONS | self.ASSIGNMENTS):
            if node.type == "import_statement":
                self._import(node)
            elif node.type == "export_statement" and node.child_by_field_name("source"):
                self._reexport(node)
            elif node.type == "variable_declarator" and (required := _required(node)):
                self._require(node, required, self._bindings(node))
            elif node.type == "assignment_expression":
                self._assigned(node)
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

    def _required_module(self, specifier: str) -> str | None:
        """The stem of a relative ``require``, or None for a package or for data
        (``require('./package.json')`` is no module of code)."""
        return self._module(specifier) if not specifier.endswith(".json") else None

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

    def _bindings(self, node: Node) -> dict[str, Imported]:
        """Where a declaration at ``node`` binds its names: the file's imports, or those of
        the function it is in."""
        function = enclosing(node, _FUNCTIONS)
        return self.imports if function is None else self.scoped.setdefault(function.id, {})

    def _binding(self, node: Node, name: str) -> Imported | None:
        """What ``name`` used at ``node`` is bound to by an import or ``require``: the
        innermost function's ``require`` first, then the file's."""
        parent = node.parent if self.scoped else None
        while parent is not None:
            if parent.type in _FUNCTIONS and name in self.scoped.get(parent.id, {}):
                return self.scoped[parent.id][name]
            parent = parent.parent
        return self.imports.get(name)

    def _require(
        self, node: Node, required: tuple[str, str | None], bindings: dict[str, Imported]
    ) -> None:
        """``const m = require('./m')``: ``m`` is the module (called, its ``module.exports``;
        a member, what it exports); ``const { a, b: c } = require('./m')``: named imports;
        ``const a = require('./m').a``: one (``required``: the specifier and that member).
        Bound in ``bindings``."""
        specifier, member = required
        stem = self._required_module(specifier)
        bound = node.child_by_field_name("name")
        if bound is None:
            return
        if bound.type == "identifier":
            imported = member if member is not None else MODULE
            bindings[node_text(bound)] = (stem, imported)
            if stem is not None and member is not None:
                self.add(bound, member, "stem", stem, IMPORTED, kind="import")
            return
        for child in bound.named_children if bound.type == "object_pattern" else ():
            if child.type == "shorthand_property_identifier_pattern":
                name = local = node_text(child)
            elif child.type == "pair_pattern":
                key, value = child.child_by_field_name("key"), child.child_by_field_name("value")
                if value is None or value.type != "identifier":
                    continue
                name, local = node_text(key), node_text(value)
            else:
                continue
            bindings[local] = (stem, name)
            if stem is not None:
                self.add(child, name, "stem", stem, IMPORTED, kind="import")

    def _assigned(self, node: Node) -> None:
        """``exports.f = function``, a top-level statement: ``f`` is defined here (and
        ``g`` of ``module.exports = function g``). ``module.exports = require('./m')`` and
        ``exports.f = require('./f')``: re-exports, import links to follow."""
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or left.type != "member_expression" or right is None:
            return
        if not _top_level(node):
            return
        required = _require_call(right)
        if required is not None and required[1] is None:
            self._reexported(node, left, required[0])
            return
        if right.type not in FUNCTION_VALUES:
            return
        named = right.child_by_field_name("name")
        if node_text(left) in self.EXPORTS:
            if named is not None:
                self.defined.add(node_text(named))
            return
        self.defined.add(node_text(left.child_by_field_name("property")))

    def _reexported(self, node: Node, left: Node, specifier: str) -> None:
        """The import link a file's ``module.exports = require(..)`` (every name, ``*``)
        or ``exports.f = require(..)`` (``f``) makes."""
        stem = self._required_module(specifier)
        if stem is None:
            return
        if node_text(left) == MODULE:
            self.add(node, "*", "stem", stem, IMPORTED, kind="import")
        elif node_text(left.child_by_field_name("object")) in self.EXPORTS:
            name = node_text(left.child_by_field_name("property"))
            self.add(node, name, "stem", stem, IMPORTED, kind="import")

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
            "pair_pattern",  # `const { a: b } = ..`: b is declared, not used
        }:
            return
        name = node_text(node)
        # `<Button />`, `<Card>`: a component rendered is called; `<div>` is the platform's
        rendered = parent.type in _JSX_ELEMENTS and name[:1].isupper()
        named = parent.child_by_field_name("name") == node
        if named and parent.type != "call_expression" and not rendered:
            return
        kind = "type" if node.type == "type_identifier" else "use"
        if _heritage(node):
            kind = "extends"
        binding = self._binding(node, name)
        if binding is not None:
            stem, imported = binding
            if imported is None or (
                imported == MODULE and _in_field(node, "member_expression", "object")
            ):
                return  # a namespace, or a module whose member the member link reaches
            target = imported if imported not in {"default", MODULE} else name
            if stem is not None:
                self.add(node, target, "stem", stem, IMPORTED, kind=kind)
                if imported == MODULE:  # an anonymous `module.exports = function`
                    self.add(node, MODULE, "stem", stem, IMPORTED, kind=kind)
            self.name_only(node, target, kind)
            return
        called = parent.type in {"call_expression", "new_expression"} or rendered
        if called and name == "require" and "require" not in self.defined:
            return  # CommonJS's loader, not code of this repository
        if name in self.defined:
            self.add(node, name, "file", self.path, LOCAL, kind=kind)
        elif called or node.type == "type_identifier" or kind == "extends":
            self.name_only(node, name, kind)

    def _member(self, node: Node) -> None:
        obj = node.child_by_field_name("object")
        prop = node.child_by_field_name("property")
        if obj is None or prop is None or _in_field(node, "jsx_closing_element", "name"):
            return  # `</UI.Modal>` closes what `<UI.Modal>` linked
        name = node_text(prop)
        parent = node.parent
        called = parent is not None and parent.type == "call_expression"
        if obj.type in {"this", "super"}:
            cls = enclosing(node, self.CLASSES)
            owner = node_text(cls.child_by_field_name("name")) if cls is not None else None
            if obj.type == "this":
                self.add(prop, name, "file", self.path, LOCAL, owner)
            inherited = obj.type == "super" or (
                cls is not None and called and not self._defines(cls, name)
            )
            if cls is not None and called and inherited:
                self._inherited(prop, name, cls)  # not the class's own method: its base's
            if obj.type == "super" and called:  # and by name: a base it cannot place
                self.name_only(prop, name)
            return
        receiver = node_text(obj)
        if receiver in self.EXPORTS:  # this module's own export, unless assigned to here
            if not _in_field(node, "assignment_expression", "left"):
                self.add(prop, name, "file", self.path, LOCAL)
            return
        binding = self._binding(obj, receiver) if obj.type == "identifier" else None
        if binding is not None:
            stem, imported = binding
            if stem is not None:
                owner = None if imported == MODULE else imported
                self.add(prop, name, "stem", stem, IMPORTED, owner)
            return
        if called:
            self.name_only(prop, name)

    def _defines(self, cls: Node, name: str) -> bool:
        """Whether the class's body defines ``name`` (read once a class)."""
        if cls.id not in self.class_members:
            self.class_members[cls.id] = _methods(cls)
        return name in self.class_members[cls.id]

    def _inherited(self, prop: Node, name: str, cls: Node) -> None:
        """``this.m()`` of a method the class does not define, or ``super.m()``: the
        method of the class it ``extends``, where the file imports or defines it."""
        heritage = next((c for c in cls.named_children if c.type == "class_heritage"), None)
        clause = next(
            (
                c
                for c in (heritage.named_children if heritage else [])
                if c.type == "extends_clause"
            ),
            heritage,
        )
        base = next(
            (c for c in (clause.named_children if clause else []) if c.type == "identifier"), None
        )
        if base is None:
            return
        binding = self._binding(base, node_text(base))
        if binding is not None and binding[0] is not None and binding[1] is not None:
            stem, imported = binding
            owner = imported if imported not in {"default", MODULE} else node_text(base)
            self.add(prop, name, "stem", stem, IMPORTED, owner)
        elif binding is None and node_text(base) in self.defined:
            self.add(prop, name, "file", self.path, LOCAL, node_text(base))


def _methods(cls: Node) -> set[str]:
    """The names of the methods and fields a class's body declares."""
    body = cls.child_by_field_name("body")
    members = body.named_children if body is not None else []
    return {
        node_text(m.child_by_field_name("name")) for m in members if m.child_by_field_name("name")
    }


#: JSX that renders a component (the closing tag names it again)
_JSX_ELEMENTS = frozenset({"jsx_opening_element", "jsx_self_closing_element"})
#: what ``require('./m')`` binds a name to: the module itself, not one name it exports
MODULE = MODULE_EXPORTS
#: a module's stem (None: a package) and the name bound (None: a namespace)
Imported = tuple[str | None, str | None]
#: the scopes a `require` in a function binds its names in
_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
        *FUNCTION_VALUES,
    }
)


def _in_field(node: Node, parent_type: str, field: str) -> bool:
    """Whether ``node`` is its parent's ``field`` and the parent a ``parent_type``: the
    object of a member (``m`` of ``m.f``), what an assignment assigns to (``exports.f``)."""
    parent = node.parent
    return (
        parent is not None
        and parent.type == parent_type
        and parent.child_by_field_name(field) == node
    )


def _required(node: Node) -> tuple[str, str | None] | None:
    """A declarator's ``require('spec')`` (the specifier, no member) or
    ``require('spec').name`` (and the name); None for any other value."""
    return _require_call(node.child_by_field_name("value"))


def _require_call(value: Node | None) -> tuple[str, str | None] | None:
    """``require('spec')`` (the specifier, no member) or ``require('spec').name`` (and
    the name); None for any other expression."""
    member = None
    if value is not None and value.type == "member_expression":
        member = node_text(value.child_by_field_name("property"))
        value = value.child_by_field_name("object")
    if value is None or value.type != "call_expression":
        return None
    function = value.child_by_field_name("function")
    arguments = value.child_by_field_name("arguments")
    if node_text(function) != "require" or arguments is None or arguments.named_child_count != 1:
        return None
    argument = arguments.named_children[0]
    if argument.type != "string":
        return None
    return node_text(argument).strip("'\"`"), member


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
    if node.type in {"variable_declarator", "assignment_expression"} and parent is not None:
        parent = parent.parent  # the lexical_declaration, variable_declaration, statement
    while parent is not None and parent.type == "export_statement":
        parent = parent.parent
    return parent is None or parent.type == "program"
