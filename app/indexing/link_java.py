"""Links of Java files: imported types (single, on-demand and static imports), types of the
same package, constructors, base classes and interfaces, and methods through the declared
type of their receiver (a local variable, a parameter or a field), the class they are
called on, or the base class ``super`` names. A type only named in a declaration is not
linked (``_type_position``)."""

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
)

#: Packages outside any repository: a type imported from them links nothing.
PLATFORM_PACKAGES = ("java.", "javax.", "jdk.", "sun.", "com.sun.", "android.", "kotlin.")
#: ``java.lang`` types, visible without an import: never a repository's own.
JAVA_LANG = frozenset(
    "Boolean Byte Character CharSequence Class Comparable Deprecated Double Enum Error"
    " Exception Float FunctionalInterface IllegalArgumentException IllegalStateException"
    " IndexOutOfBoundsException Integer Iterable Long Math NullPointerException Number Object"
    " Override Runnable RuntimeException SafeVarargs Short String StringBuilder"
    " SuppressWarnings System Thread Throwable UnsupportedOperationException Void".split()
)
_TYPES = frozenset(
    {
        "class_declaration",
        "interface_declaration",
        "enum_declaration",
        "record_declaration",
        "annotation_type_declaration",
    }
)
_SCOPES = frozenset({"method_declaration", "constructor_declaration", "lambda_expression"})
#: Where a variable is visible: a method, a lambda, a class body (its fields).
_VARIABLE_SCOPES = _SCOPES | frozenset({"class_body"})
_USES = frozenset(
    {"method_invocation", "object_creation_expression", "type_identifier", "method_reference"}
)
#: A type resolved: (match, target, confidence) for each place it may be defined.
Places = list[tuple[str, str, float]]


class JvmLinks(Extractor):
    """What Java and Kotlin files share: a package, imports (by name, on demand, of
    static members or top-level functions) and where a simple type name is defined."""

    BY_NAME_TOO = True

    #: names every file of the language sees without an import
    IMPLICIT: frozenset[str] = frozenset()
    types: set[str]  # the types this file declares

    def start(self, package: str | None) -> None:
        self.package = package.replace(".", "/") if package else self.dir
        self.imported: dict[str, Places] = {}  # simple type name -> where it is defined
        self.external: set[str] = set()  # names imported from the platform
        self.on_demand: list[str] = []  # package directories of `import a.b.*`
        # local name -> (package, owner, name) of each import naming it (Java's static
        # imports may name one method of two classes: both are candidates)
        self.members: dict[str, list[tuple[str, str | None, str]]] = {}
        self.member_classes: list[tuple[str, str]] = []  # `import static a.B.*`
        self.aliases: dict[str, str] = {}  # Kotlin's `import a.B as C`: C -> B

    def register(self, dotted: str, *, wildcard: bool, member: bool, alias: str | None) -> None:
        """One import: ``member`` when it names a member (Java's ``import static``, a
        Kotlin import of a function); ``alias``: the local name (Kotlin's ``as``)."""
        if dotted.startswith(PLATFORM_PACKAGES):
            if not wildcard:
                self.external.add(alias or dotted.rsplit(".", 1)[-1])
            return
        parts = dotted.split(".")
        if member and wildcard:  # import static a.b.C.*
            self.member_classes.append(_package_and_class(parts))
        elif member and len(parts) > 1:  # import static a.b.C.m; Kotlin: import a.b.f
            owner_parts = parts[:-1]
            named: tuple[str, str | None, str] = ("/".join(owner_parts), None, parts[-1])
            if any(p[:1].isupper() for p in owner_parts):
                package, owner = _package_and_class(owner_parts)
                named = (package, owner, parts[-1])
            self.members.setdefault(alias or parts[-1], []).append(named)
        elif wildcard:  # import a.b.*
            self.on_demand.append("/".join(parts))
        else:  # import a.b.C (or a.b.C.Inner)
            package, _ = _package_and_class(parts)
            self.imported[alias or parts[-1]] = [("pkgdir", package, IMPORTED)]
            if alias:
                self.aliases[alias] = parts[-1]

    def _places(self, type_name: str) -> Places:
        """Where a simple type name is defined, as this file can tell."""
        if type_name in self.imported:
            return self.imported[type_name]
        if type_name in self.types:
            return [("file", self.path, LOCAL)]
        if type_name in self.external or type_name in self.IMPLICIT:
            return []
        return [("pkgdir", self.package, PACKAGE)] + [
            ("pkgdir", package, PACKAGE) for package in self.on_demand
        ]

    def _type(
        self, node: Node, type_name: str, qualifier: str | None = None, kind: str = "type"
    ) -> None:
        """Links of ``type_name`` (or, with ``qualifier``, of the member ``node`` names of
        type ``qualifier``) to where the type is defined."""
        name = node_text(node)
        if qualifier is None:
            name = self.aliases.get(name, name)
        owner = self.aliases.get(qualifier, qualifier) if qualifier is not None else None
        for match, target, confidence in self._places(type_name):
            self.add(node, name, match, target, confidence, owner, kind)

    def _member(self, name: Node, method: str) -> bool:
        """A member called by its bare name that an import names (True if one does)."""
        for package, owner, original in self.members.get(method, ()):
            self.add(name, original, "pkgdir", package, IMPORTED, owner)
        return method in self.members


class JavaLinks(JvmLinks):
    IMPLICIT = JAVA_LANG

    def run(self) -> list[Link]:
        found = self.nodes_by_type(_FILE_FACTS)
        package = found["package_declaration"]
        self.start(_dotted(package[0]) if package else None)
        for node in found["import_declaration"]:
            self.register(
                _dotted(node),
                wildcard=any(c.type == "asterisk" for c in node.children),
                member=any(c.type == "static" for c in node.children),
                alias=None,
            )
        self.types = {
            node_text(n.child_by_field_name("name")) for kind in _TYPES for n in found[kind]
        }
        self.methods = {
            node_text(n.child_by_field_name("name")) for n in found["method_declaration"]
        }
        # scope node id -> variable -> type
        self.declared: dict[int, dict[str, str]] = {}
        for declaration in (n for kind in _DECLARATIONS for n in found[kind]):
            self._declare(declaration)
        for node in self.nodes(_USES, scoped=True):
            if node.type == "method_invocation":
                self._invocation(node)
            elif node.type == "object_creation_expression":
                created = _type_node(node.child_by_field_name("type"))
                if created is not None:
                    self._type(created, node_text(created), kind="use")
            elif node.type == "method_reference":
                self._reference(node)
            else:
                self._type_position(node)
        return self.links

    def _type_position(self, node: Node) -> None:
        parent = node.parent
        if parent is None or parent.type in {"scoped_type_identifier"}:
            return
        creation = parent.type == "object_creation_expression" or (
            parent.type == "generic_type"
            and parent.parent is not None
            and parent.parent.type == "object_creation_expression"
        )
        if creation:
            return  # the creation's own link
        name = node_text(node)
        if name == "var":  # `var x = ...`: a keyword read as a type
            return
        # a base class or interface only: Java names a type in every declaration, and
        # linking those put whole classes before the callees (bench/RESULTS.md, "Links
        # for every language we chunk")
        extends = enclosing(
            node, frozenset({"superclass", "super_interfaces", "extends_interfaces"})
        )
        if extends is not None:
            self._type(node, name, kind="extends")

    def _invocation(self, node: Node) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        method = node_text(name)
        receiver = node.child_by_field_name("object")
        if receiver is None or receiver.type == "this":
            self._own_method(name, method)
            return
        owner = _base_class(node) if receiver.type == "super" else self._receiver_type(receiver)
        if owner is not None:
            self._type(name, owner, qualifier=owner, kind="use")
        elif receiver.type != "super":  # `super.m()` of no base class: Object's
            self.name_only(name, method)

    def _own_method(self, name: Node, method: str) -> None:
        """``m()`` or ``this.m()``: a method of this file's classes, a statically imported
        one, or one inherited (by name)."""
        if self._member(name, method):
            return
        if method in self.methods:
            self.add(name, method, "file", self.path, LOCAL)
        else:
            for package, owner in self.member_classes:
                self.add(name, method, "pkgdir", package, PACKAGE, owner)
            self.name_only(name, method)

    def _receiver_type(self, receiver: Node) -> str | None:
        """The simple type name of a method's receiver, where the file declares it: a
        variable, parameter or field (``x.m()``, ``this.x.m()``), or a type (``T.m()``)."""
        if receiver.type == "field_access":
            target = receiver.child_by_field_name("object")
            if target is None or target.type != "this":
                return None
            receiver = receiver.child_by_field_name("field") or receiver
            return self._variables(receiver).get(node_text(receiver))
        if receiver.type != "identifier":
            return None
        variable = node_text(receiver)
        declared = self._variables(receiver).get(variable)
        if declared is not None:
            return declared
        return variable if variable[:1].isupper() else None

    def _declare(self, declaration: Node) -> None:
        scope = enclosing(declaration, _VARIABLE_SCOPES)
        type_name = _simple_type(declaration.child_by_field_name("type"))
        if type_name == "var":
            type_name = _created_type(declaration)
        if scope is None or type_name is None:
            return
        for variable in _declared_names(declaration):
            self.declared.setdefault(scope.id, {}).setdefault(variable, type_name)

    def _variables(self, node: Node) -> dict[str, str]:
        """Variable -> declared simple type, of the method and classes around ``node``."""
        found: dict[str, str] = {}
        scope = enclosing(node, _VARIABLE_SCOPES)
        while scope is not None:
            for name, type_name in self.declared.get(scope.id, {}).items():
                found.setdefault(name, type_name)
            scope = enclosing(scope, _VARIABLE_SCOPES)
        return found

    def _reference(self, node: Node) -> None:
        """``Type::method``: the type's method."""
        parts = [c for c in node.named_children if c.type in {"identifier", "type_identifier"}]
        if len(parts) == 2 and node_text(parts[0])[:1].isupper():
            owner = node_text(parts[0])
            self._type(parts[1], owner, qualifier=owner, kind="use")


_DECLARATIONS = frozenset(
    {
        "local_variable_declaration",
        "formal_parameter",
        "spread_parameter",
        "catch_formal_parameter",
        "enhanced_for_statement",
        "resource",
        "field_declaration",
    }
)


#: What one pass over the file reads before the uses: package, imports, declarations.
_FILE_FACTS = (
    frozenset({"package_declaration", "import_declaration", "method_declaration"})
    | _TYPES
    | _DECLARATIONS
)


def _base_class(node: Node) -> str | None:
    """The simple name of the class ``super`` means at ``node``: the ``extends`` of the
    class around it, or the type an anonymous class around it is created from."""
    body = enclosing(node, frozenset({"class_body"}))
    holder = body.parent if body is not None else None
    if holder is None:
        return None
    if holder.type == "class_declaration":
        base = holder.child_by_field_name("superclass")
        return _simple_type(base.named_children[0]) if base and base.named_children else None
    if holder.type == "object_creation_expression":
        return _simple_type(holder.child_by_field_name("type"))
    return None


def _declared_names(declaration: Node) -> list[str]:
    name = declaration.child_by_field_name("name")
    if name is not None:
        return [node_text(name)]
    return [
        node_text(d.child_by_field_name("name"))
        for d in declaration.children_by_field_name("declarator")
        if d.child_by_field_name("name") is not None
    ]


def _created_type(declaration: Node) -> str | None:
    """``var x = new T(...)``: T."""
    for declarator in declaration.children_by_field_name("declarator"):
        value = declarator.child_by_field_name("value")
        if value is not None and value.type == "object_creation_expression":
            return _simple_type(value.child_by_field_name("type"))
    return None


def _type_node(node: Node | None) -> Node | None:
    """The identifier of a type's simple name: ``List<Foo>`` -> List, ``a.b.C`` -> C,
    ``Foo[]`` -> Foo."""
    while node is not None and node.type in {"generic_type", "array_type", "annotated_type"}:
        node = next(
            (c for c in node.named_children if c.type.endswith(("type_identifier", "_type"))),
            None,
        )
    if node is not None and node.type == "scoped_type_identifier":
        node = node.named_children[-1] if node.named_children else None
    return node if node is not None and node.type == "type_identifier" else None


def _simple_type(node: Node | None) -> str | None:
    found = _type_node(node)
    return node_text(found) if found is not None else None


def _dotted(node: Node) -> str:
    """The dotted name a package or import declaration names."""
    name = next((c for c in node.named_children if "identifier" in c.type), None)
    return node_text(name)


def _package_and_class(parts: list[str]) -> tuple[str, str]:
    """``a.b.C`` or ``a.b.C.Inner`` -> ("a/b", "C" or "Inner"): the package is the names
    before the first capitalised one (Java's naming convention)."""
    first_type = next((i for i, p in enumerate(parts) if p[:1].isupper()), len(parts) - 1)
    return "/".join(parts[:first_type]), parts[-1]
