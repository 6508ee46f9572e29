"""Links of C# files. A C# namespace is not a directory, but a chunk's qualified name
holds its namespace (``Acme.Shop.Cart.Total``), so a type is linked by name, qualified by
each namespace it may be in: the file's own and those around it, those ``using`` brings
in, an alias's (``using M = Acme.Money.Money``), a ``using static`` class's members. A
``global using`` of one file is in force in every file: the file that holds it stores it
(``GLOBAL_USING``), and every file's names are also qualified by ``GLOBAL``, which
retrieval reads as "a namespace a ``global using`` of the repository brings in"
(``app/retrieval/links.py`` ``resolves``); editing either file re-reads that file only.
A type's members go by the same rule (``Acme.Money.Money.Plus``), which also finds a
partial class's methods in its other files; calls go through the receiver's declared
type (a local, a parameter, a field or property, ``var x = new T()``), ``base.M()``
through the types of the class's base list; ``x?.M()`` and ``x.M<T>()`` are calls as
``x.M()`` is. ``x.M()`` may also call an extension method (a
static method whose first parameter is ``this T``) of a static class in a namespace the
file has in scope: the method's file stores it as such (kind ``EXTENSION``), and the call
is linked to it (match ``EXTENSION``), whatever ``x``'s type. A type is linked where it
is created or extended, not where a declaration only names it (as in Java:
bench/RESULTS.md, "Links for every language we chunk")."""

from __future__ import annotations

from tree_sitter import Node

from app.indexing.link_model import (
    IMPORTED,
    LOCAL,
    PACKAGE,
    Extractor,
    Link,
    enclosing,
    node_text,
    walk,
)

#: The name under which a file stores each namespace its ``global using`` brings in (the
#: namespace is the link's target; kind "global"): no symbol can bear it.
GLOBAL_USING = "global using"
#: The namespace qualifier meaning "one a ``global using`` somewhere brings in".
GLOBAL = "?"
#: The kind of the row an extension method's file stores of it (``target``: its
#: namespace; ``qualifier``: its class), and the match of a call ``x.M()`` that may be one
#: (``target``: the namespaces the calling file has in scope, ``|`` around each, the
#: global one as the empty name: ``||Acme|Acme.Shop|``).
EXTENSION = "extension"
#: Namespaces of the platform: a type found only there links nothing.
PLATFORM_NAMESPACES = ("System", "Microsoft")
_TYPE_DECLARATIONS = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "struct_declaration",
        "record_declaration",
        "enum_declaration",
    }
)
_NAMESPACES = frozenset({"namespace_declaration", "file_scoped_namespace_declaration"})
_USES = frozenset({"base_list", "invocation_expression", "object_creation_expression"})
_SCOPES = frozenset(
    {
        "method_declaration",
        "constructor_declaration",
        "local_function_statement",
        "lambda_expression",
        "declaration_list",
    }
)


class CSharpLinks(Extractor):
    BY_NAME_TOO = True

    def run(self) -> list[Link]:
        self.aliases: dict[str, tuple[str, str]] = {}  # alias -> (namespace, type)
        self.statics: list[str] = []  # `using static A.B.C`: "A.B.C"
        self.using_nodes: list[tuple[Node, str]] = []  # a namespace `using` brings in
        for node in self.nodes(frozenset({"using_directive"})):
            self._using(node)
        self.usings = [dotted for _, dotted in self.using_nodes]  # as written
        self.file_scoped = self.nodes(frozenset({"file_scoped_namespace_declaration"}))
        self.file_namespaces = [
            ".".join(parts[:n])
            for declared in self.file_scoped
            for parts in [node_text(declared.child_by_field_name("name")).split(".")]
            for n in range(len(parts), 0, -1)
        ]
        self.type_parameters = {
            node_text(n.child_by_field_name("name"))
            for n in self.nodes(frozenset({"type_parameter"}))
        }
        self.declared: dict[int, dict[str, str]] = {}  # scope node id -> variable -> type
        used = [
            f"{outer}.{dotted}" if outer else dotted
            for node, dotted in self.using_nodes
            for outer in ["", *_outer(self._using_namespace(node))]
        ]
        self.in_scope = _scope_list([self._namespace_of(n) for n in self.nodes(_NAMESPACES)], used)
        if self.within is None:  # what the file declares: stored, never a review's use
            for node in self.nodes(frozenset({"method_declaration"})):
                self._extension(node)
        for node in self.nodes(_USES, scoped=True):
            if node.type == "invocation_expression":
                self._invocation(node)
            elif node.type == "object_creation_expression":
                self._type_node(node.child_by_field_name("type"), "use")
            elif node.type == "base_list":
                for child in node.named_children:
                    self._type_node(child, "extends")
        return self.links

    def _using(self, node: Node) -> None:
        alias = node.child_by_field_name("name")
        target = next(
            (
                c
                for c in node.named_children
                if c.type in {"qualified_name", "identifier"} and c != alias
            ),
            None,
        )
        dotted = node_text(target)
        if not dotted:
            return
        if alias is not None:
            namespace, _, type_name = dotted.rpartition(".")
            self.aliases[node_text(alias)] = (namespace, type_name)
        elif any(c.type == "static" for c in node.children):
            self.statics.append(dotted)
        elif not _platform(dotted):
            self.using_nodes.append((node, dotted))
            if any(c.type == "global" for c in node.children):
                self.add(node, GLOBAL_USING, "name", dotted, IMPORTED, kind="global")

    def _namespaces(self, node: Node) -> list[tuple[str, float]]:
        """The namespaces a simple name used at ``node`` may be in, each with its
        confidence: the enclosing ones (innermost first), then the used ones."""
        scope = enclosing(node, _NAMESPACES)
        if scope is None:  # a file-scoped namespace is a sibling of what it holds
            around = self.file_namespaces
        else:  # nested blocks join: `namespace A { namespace B {` is A.B, then A
            around = list(reversed(_outer(self._namespace_of(scope))))
        return [(namespace, PACKAGE) for namespace in [*around, *self.usings]]

    def _qualifiers(self, node: Node, type_name: str) -> list[tuple[str, float]]:
        """The qualified names a simple type name may have where ``node`` uses it: in
        the namespaces it sees, or in one a ``global using`` of the repository brings in
        (``GLOBAL``)."""
        if type_name in self.aliases:
            namespace, real = self.aliases[type_name]
            return [] if _platform(namespace) else [(f"{namespace}.{real}", IMPORTED)]
        if type_name in self.type_parameters:
            return []
        seen = [*self._namespaces(node), (GLOBAL, PACKAGE)]
        return [(f"{namespace}.{type_name}", c) for namespace, c in seen]

    def _type_node(self, node: Node | None, kind: str) -> None:
        found = _simple(node)
        if found is None:
            return
        name = node_text(found)
        if node is not None and node.type == "qualified_name":  # Acme.Money.Money: as written
            namespace = node_text(node.child_by_field_name("qualifier"))
            if not _platform(namespace):
                self.add(found, name, "name", None, IMPORTED, namespace, kind)
            return
        real = self.aliases[name][1] if name in self.aliases else name
        for qualified, confidence in self._qualifiers(found, name):
            namespace = qualified.rpartition(".")[0]
            self.add(found, real, "name", None, confidence, namespace, kind)

    def _member(self, node: Node, owner: str) -> None:
        """A member ``node`` names of the type ``owner`` names (possibly an alias)."""
        for qualified, confidence in self._qualifiers(node, owner):
            self.add(node, node_text(node), "name", None, confidence, qualified)

    def _invocation(self, node: Node) -> None:
        function = node.child_by_field_name("function")
        if function is None:
            return
        if function.type in {"identifier", "generic_name"}:  # M(), M<T>()
            own = _method_name(function)
            if own is not None:
                self._own_method(own)
            return
        if function.type == "member_access_expression":  # x.M()
            name = _method_name(function.child_by_field_name("name"))
            receiver = function.child_by_field_name("expression")
        elif function.type == "conditional_access_expression":  # x?.M()
            binding = function.named_children[-1] if function.named_children else None
            if binding is None or binding.type != "member_binding_expression":
                return
            name = _method_name(binding.child_by_field_name("name"))
            receiver = function.child_by_field_name("condition")
        else:
            return
        if name is None:
            return
        if receiver is None or receiver.type in {"this", "this_expression"}:  # this.M()
            self._own_method(name)
            return
        if receiver.type == "base":  # base.M(): a member of the class's bases
            for base in _bases(receiver):
                self._member(name, base)
            return
        owner = self._receiver_type(receiver)
        if owner is not None:
            self._member(name, owner)
        else:  # an extension method, or a value of a type not declared here
            self.name_only(name, node_text(name))
        if owner is None or owner != node_text(receiver):  # a value's, not `Type.M()`
            self.add(name, node_text(name), EXTENSION, self.in_scope, PACKAGE)

    def _extension(self, node: Node) -> None:
        """Stores ``node`` as an extension method when its first parameter is ``this T``."""
        name = node.child_by_field_name("name")
        parameters = node.child_by_field_name("parameters")
        listed = parameters.named_children if parameters is not None else []
        first = next((p for p in listed if p.type == "parameter"), None)
        owner = enclosing(node, _TYPE_DECLARATIONS)
        if name is None or first is None or owner is None:
            return
        if not any(c.type == "modifier" and node_text(c) == "this" for c in first.children):
            return
        namespace = self._namespace_of(owner)
        qualified = ".".join([namespace, *_owners(owner)] if namespace else _owners(owner))
        self.add(name, node_text(name), "name", namespace, IMPORTED, qualified, EXTENSION)

    def _namespace_of(self, node: Node) -> str:
        """The whole name of the namespace ``node`` is in (or declares): its blocks' names,
        outermost first, or the file-scoped namespace's; the global one is empty."""
        names = []
        scope = node if node.type in _NAMESPACES else enclosing(node, _NAMESPACES)
        while scope is not None:
            names.append(node_text(scope.child_by_field_name("name")))
            scope = enclosing(scope, _NAMESPACES)
        if not names:
            return self.file_namespaces[0] if self.file_namespaces else ""
        return ".".join(reversed(names))

    def _using_namespace(self, node: Node) -> str:
        """The namespace a ``using`` is inside, whose names it may name relative to it
        (``namespace Acme; using Money;``: Acme.Money), or "" at the file's top."""
        if enclosing(node, _NAMESPACES) is not None:
            return self._namespace_of(node)
        for declared in self.file_scoped:
            if declared.start_byte < node.start_byte:
                return self._namespace_of(declared)
        return ""

    def _own_method(self, name: Node) -> None:
        """``M()``: a method of the enclosing class (any of its partial files), or of a
        ``using static`` class."""
        method = node_text(name)
        owner = enclosing(name, _TYPE_DECLARATIONS)
        if owner is not None:
            qualified = ".".join(_owners(owner))
            for namespace, _ in self._namespaces(name)[:1]:
                qualified = f"{namespace}.{qualified}"
            self.add(name, method, "name", None, LOCAL, qualified)
        for static in self.statics:
            self.add(name, method, "name", None, IMPORTED, static)
        if owner is None and not self.statics:
            self.name_only(name, method)

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
            if scope.id not in self.declared:
                self.declared[scope.id] = _declared_in(scope)
            for name, type_name in self.declared[scope.id].items():
                found.setdefault(name, type_name)
            scope = enclosing(scope, _SCOPES)
        return found


def _declared_in(scope: Node) -> dict[str, str]:
    """Variable -> declared simple type: a class body's fields and properties; a
    method's parameters and locals (``var x = new T()``: T)."""
    if scope.type == "declaration_list":
        nodes = [
            c
            for member in scope.named_children
            if member.type in {"field_declaration", "property_declaration"}
            for c in ([member] if member.type == "property_declaration" else member.named_children)
            if c.type in {"variable_declaration", "property_declaration"}
        ]
    else:
        nodes = [n for n in walk(scope) if n.type in {"variable_declaration", "parameter"}]
    declared: dict[str, str] = {}
    for node in nodes:
        type_node = node.child_by_field_name("type")
        if node.type != "variable_declaration":
            found = _simple(type_node)
            name = node_text(node.child_by_field_name("name"))
            if found is not None and name:
                declared.setdefault(name, node_text(found))
            continue
        for declarator in (c for c in node.named_children if c.type == "variable_declarator"):
            found = _simple(type_node)
            value = declarator.named_children[-1] if declarator.named_children else None
            if found is None and value is not None and value.type == "object_creation_expression":
                found = _simple(value.child_by_field_name("type"))  # `var x = new T()`
            if found is not None:
                declared.setdefault(
                    node_text(declarator.child_by_field_name("name")), node_text(found)
                )
    return declared


def _scope_list(declared: list[str], used: list[str]) -> str:
    """``EXTENSION``'s ``target``: the namespaces declared and those around them (code in
    ``A.B`` sees ``A``'s), the global one (empty), and those ``used``."""
    seen = {"", *used}
    for namespace in declared:
        seen.update(_outer(namespace))
    return "|" + "|".join(sorted(seen)) + "|"


def _outer(namespace: str) -> list[str]:
    """``A.B.C`` -> A, A.B, A.B.C."""
    parts = namespace.split(".") if namespace else []
    return [".".join(parts[:n]) for n in range(1, len(parts) + 1)]


def _method_name(node: Node | None) -> Node | None:
    """The identifier a call names: ``M`` of ``M`` and of ``M<T>``."""
    if node is not None and node.type == "generic_name":
        node = next((c for c in node.named_children if c.type == "identifier"), None)
    return node if node is not None and node.type == "identifier" else None


def _bases(node: Node) -> list[str]:
    """The simple names in the base list of the type declaration around ``node``."""
    owner = enclosing(node, _TYPE_DECLARATIONS)
    listed = (
        next((c for c in owner.named_children if c.type == "base_list"), None) if owner else None
    )
    found = [_simple(c) for c in listed.named_children] if listed is not None else []
    return [node_text(f) for f in found if f is not None]


def _simple(node: Node | None) -> Node | None:
    """The identifier of a type's simple name: ``List<Item>`` -> List, ``A.B.C`` -> C,
    ``Item[]`` and ``Item?`` -> Item; None for ``int``, ``var``."""
    while node is not None and node.type in {
        "nullable_type",
        "array_type",
        "qualified_name",
        "generic_name",
    }:
        if node.type == "qualified_name":
            node = node.child_by_field_name("name")
        elif node.type == "generic_name":
            node = next((c for c in node.named_children if c.type == "identifier"), None)
        else:
            node = node.child_by_field_name("type")
    return node if node is not None and node.type == "identifier" else None


def _owners(node: Node) -> list[str]:
    """A type's name with those of the types around it: ``Outer.Inner``."""
    names = []
    current: Node | None = node
    while current is not None:
        names.append(node_text(current.child_by_field_name("name")))
        current = enclosing(current, _TYPE_DECLARATIONS)
    return names[::-1]


def _platform(namespace: str) -> bool:
    return namespace.split(".", 1)[0] in PLATFORM_NAMESPACES
