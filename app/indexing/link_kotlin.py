"""Links of Kotlin files: imported types and top-level functions (with ``as`` aliases and
on-demand imports), the package's own types and functions, constructors, companion and
object members (``Type.f()``), methods through their receiver's declared type or the
supertypes ``super`` names, extension functions through any receiver, and supertypes; a
type only named in a declaration links by its bare name alone."""

from __future__ import annotations

from tree_sitter import Node

from app.indexing.link_java import JvmLinks
from app.indexing.link_model import LOCAL, PACKAGE, Link, enclosing, node_text, walk

#: Types every Kotlin file sees (``kotlin.*``, ``kotlin.collections.*``), never a
#: repository's own.
KOTLIN_IMPLICIT = frozenset(
    "Any Array Boolean Byte Char CharSequence Comparable Double Enum Exception Float Int"
    " Iterable List Long Map MutableList MutableMap MutableSet Nothing Number Pair"
    " RuntimeException Sequence Set Short String Throwable Triple Unit".split()
)
_TYPES = frozenset({"class_declaration", "object_declaration"})
_SCOPES = frozenset(
    {"function_declaration", "lambda_literal", "class_body", "class_declaration", "source_file"}
)
_USES = frozenset({"call_expression", "user_type", "callable_reference"})


class KotlinLinks(JvmLinks):
    IMPLICIT = KOTLIN_IMPLICIT

    def run(self) -> list[Link]:
        package = self.nodes(frozenset({"package_header"}))
        self.dotted = _dotted(package[0]) if package else None
        self.start(self.dotted)
        for node in self.nodes(frozenset({"import"})):
            self._import(node)
        self.types = {_name(n) for n in self.nodes(_TYPES)} - {""}
        self.functions = {_name(n) for n in self.nodes(frozenset({"function_declaration"}))}
        self.declared: dict[int, dict[str, str]] = {}  # scope node id -> variable -> type
        for node in self.nodes(_USES, scoped=True):
            if node.type == "call_expression":
                self._call(node)
            elif node.type == "user_type":
                self._type_position(node)
            else:
                self._reference(node)
        return self.links

    def _import(self, node: Node) -> None:
        names = [c for c in node.named_children if c.type in {"qualified_identifier", "identifier"}]
        if not names:
            return
        dotted = node_text(names[0])
        alias = node_text(names[1]) if len(names) > 1 else None
        last = dotted.rsplit(".", 1)[-1]
        wildcard = any(c.type == "*" for c in node.children)
        # `import a.b.f`: a top-level function or property (`a.b.*` is a package)
        member = not wildcard and not last[:1].isupper()
        self.register(dotted, wildcard=wildcard, member=member, alias=alias)

    def _type_position(self, node: Node) -> None:
        """A type's name: its last identifier (``a.b.C`` -> C); in the supertypes, an
        ``extends`` link."""
        identifiers = [c for c in node.named_children if c.type == "identifier"]
        if not identifiers:
            return
        supertypes = enclosing(node, frozenset({"delegation_specifiers", "type_arguments"}))
        if supertypes is None or supertypes.type == "type_arguments":
            return  # only named in a declaration: its bare name links it (NameOnly)
        self._type(identifiers[-1], node_text(identifiers[-1]), kind="extends")

    def _call(self, node: Node) -> None:
        callee = node.named_children[0] if node.named_children else None
        if callee is None:
            return
        if callee.type == "identifier":
            self._bare_call(callee)
        elif callee.type == "navigation_expression":
            parts = callee.named_children
            if len(parts) != 2 or parts[1].type != "identifier":
                return
            receiver, name = parts
            if receiver.type == "this_expression":
                self._bare_call(name)
                return
            if receiver.type == "super_expression":  # `super.f()`, `super<Base>.f()`
                for base in _supertypes(receiver):
                    self._type(name, base, qualifier=base, kind="use")
                return
            # an extension function (`type.canonicalize()`) is no member of its
            # receiver's type, which may be the platform's: the import naming it, or a
            # top-level function of the file's package or one imported on demand
            owner = self._receiver_type(receiver)
            named_type = receiver.type == "identifier" and node_text(receiver) == owner
            if not self._member(name, node_text(name)):
                self._extension(name, node_text(name), instance=not named_type)
            if owner is None:
                return
            self._type(name, owner, qualifier=owner, kind="use")
            if named_type:  # `Type.f()`: a companion object's member too
                self._type(name, owner, qualifier=f"{owner}.Companion", kind="use")

    def _extension(self, name: Node, called: str, *, instance: bool) -> None:
        """``x.f()`` where no import names ``f``: on an ``instance`` (not ``Type.f()``),
        an extension function of this package or of one imported on demand (top-level, so
        qualified by its package's name, which no method's qualified name ends in); any
        ``f`` by its bare name."""
        packages = [self.dotted] if self.dotted and instance else []
        if instance:
            packages += [p.replace("/", ".") for p in self.on_demand]
        for package in packages:
            self.add(name, called, "pkgdir", package.replace(".", "/"), PACKAGE, package)
        self.name_only(name, called)

    def _bare_call(self, name: Node) -> None:
        """``f()``: a constructor (``Type()``), an imported or this file's function, or
        one of the package's (any file) or inherited (by name)."""
        called = node_text(name)
        if self._member(name, called):
            return
        if called[:1].isupper():
            self._type(name, called, kind="use")
        elif called in self.functions:
            self.add(name, called, "file", self.path, LOCAL)
        else:
            self.add(name, called, "pkgdir", self.package, PACKAGE)
            for package in self.on_demand:
                self.add(name, called, "pkgdir", package, PACKAGE)
            self.name_only(name, called)

    def _receiver_type(self, receiver: Node) -> str | None:
        if receiver.type != "identifier":
            return None
        variable = node_text(receiver)
        declared = self._variables(receiver).get(variable)
        if declared is not None:
            return declared
        return variable if variable[:1].isupper() else None

    def _variables(self, node: Node) -> dict[str, str]:
        found: dict[str, str] = {}
        scope = enclosing(node, _SCOPES)
        while scope is not None:
            for name, type_name in self._declared_in(scope).items():
                found.setdefault(name, type_name)
            scope = enclosing(scope, _SCOPES)
        return found

    def _declared_in(self, scope: Node) -> dict[str, str]:
        if scope.id in self.declared:
            return self.declared[scope.id]
        declared: dict[str, str] = {}
        if scope.type in {"class_body", "source_file"}:
            candidates = [c for c in scope.named_children if c.type == "property_declaration"]
        elif scope.type == "class_declaration":  # its primary constructor's properties
            candidates = [n for n in walk(scope) if n.type == "class_parameter"]
        else:
            candidates = [n for n in walk(scope) if n.type in {"parameter", "property_declaration"}]
        for declaration in candidates:
            name, type_name = _declaration(declaration)
            if name and type_name:
                declared.setdefault(name, type_name)
        self.declared[scope.id] = declared
        return declared

    def _reference(self, node: Node) -> None:
        """``Type::f``: the type's member."""
        parts = [c for c in node.named_children if c.type in {"identifier", "user_type"}]
        if len(parts) == 2 and node_text(parts[0])[:1].isupper():
            owner = node_text(parts[0]).rsplit(".", 1)[-1]
            self._type(parts[1], owner, qualifier=owner, kind="use")


def _declaration(node: Node) -> tuple[str, str | None]:
    """(name, declared simple type) of a parameter or property: its annotation, or the
    class it is constructed from (``val d = Discount(..)``)."""
    holder = node
    if node.type == "property_declaration":
        holder = next((c for c in node.named_children if c.type == "variable_declaration"), node)
    name = next((c for c in holder.named_children if c.type == "identifier"), None)
    declared = next(
        (c for c in holder.named_children if c.type in {"user_type", "nullable_type"}), None
    )
    type_name = _simple(declared)
    if type_name is None and node.type == "property_declaration":
        value = node.named_children[-1] if node.named_children else None
        callee = value.named_children[0] if value is not None and value.named_children else None
        if value is not None and value.type == "call_expression" and callee is not None:
            built = node_text(callee) if callee.type == "identifier" else ""
            type_name = built if built[:1].isupper() else None
    return node_text(name), type_name


def _supertypes(receiver: Node) -> list[str]:
    """The simple names ``super`` may mean at ``receiver``: the one it names
    (``super<Base>``), or each supertype of the class or object around it."""
    named = next((c for c in receiver.named_children if c.type == "user_type"), None)
    if named is not None:
        return [n for n in [_simple(named)] if n]
    holder = enclosing(
        receiver, frozenset({"class_declaration", "object_declaration", "object_literal"})
    )
    specifiers = next(
        (c for c in (holder.named_children if holder else []) if c.type == "delegation_specifiers"),
        None,
    )
    found = []
    for specifier in specifiers.named_children if specifiers is not None else []:
        invocation = next(
            (c for c in specifier.named_children if c.type == "constructor_invocation"), None
        )
        base = _simple(
            next(
                (c for c in (invocation or specifier).named_children if c.type == "user_type"), None
            )
        )
        if base:
            found.append(base)
    return found


def _simple(node: Node | None) -> str | None:
    if node is not None and node.type == "nullable_type":
        node = next((c for c in node.named_children if c.type == "user_type"), None)
    if node is None:
        return None
    identifiers = [c for c in node.named_children if c.type == "identifier"]
    return node_text(identifiers[-1]) if identifiers else None


def _name(node: Node) -> str:
    name = node.child_by_field_name("name")
    if name is None:
        name = next((c for c in node.named_children if c.type == "identifier"), None)
    return node_text(name)


def _dotted(node: Node) -> str:
    name = next((c for c in node.named_children if c.type == "qualified_identifier"), None)
    return node_text(name)
