"""Links of PHP files. A name is resolved as PHP resolves it: ``use`` imports a class (or,
with ``use function``, a function) by its fully qualified name, an alias renames it, and
any other unqualified class or function name is in the file's namespace. A chunk's
qualified name holds its namespace (``GuzzleHttp\\Handler::CurlHandler::send``), so a link
is the name qualified by its namespace and class, wherever the file is. Members go
through ``$this``, ``self::``, ``static::`` and ``parent::``, a typed property or
parameter, or ``$x = new T()``; ``extends``, ``implements`` and a class's ``use Trait``
are extends links (siblings). Code written before PHP 7.4 types its properties and
parameters in docblocks (``@var T``, ``@param T $x``) or by what the constructor assigns
(``$this->p = new T()``, ``$this->p = $typed``): both count as declared, a written type
first. ``$this->m()`` is of the type the class's own ``m`` declares it returns."""

from __future__ import annotations

import re

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

_CLASSES = frozenset(
    {"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"}
)
_FUNCTIONS = frozenset(
    {"method_declaration", "function_definition", "anonymous_function", "arrow_function"}
)
_USES = frozenset(
    {
        "member_call_expression",
        "nullsafe_member_call_expression",
        "scoped_call_expression",
        "function_call_expression",
        "object_creation_expression",
        "named_type",
        "base_clause",
        "class_interface_clause",
        "use_declaration",
    }
)
#: Names PHP itself defines: never a repository's class.
_BUILTIN_TYPES = frozenset({"self", "static", "parent", "array", "callable", "iterable"})


class PhpLinks(Extractor):
    BY_NAME_TOO = True

    def run(self) -> list[Link]:
        namespace = self.nodes(frozenset({"namespace_definition"}))
        self.namespace = node_text(namespace[0].child_by_field_name("name")) if namespace else ""
        self.classes: dict[str, str] = {}  # alias -> fully qualified class name
        self.functions: dict[str, str] = {}  # alias -> fully qualified function name
        for node in self.nodes(frozenset({"namespace_use_declaration"})):
            self._use(node)
        self.declared: dict[int, dict[str, str]] = {}  # function node id -> $var -> class
        self.returned: dict[int, dict[str, str]] = {}  # class node id -> method -> class
        for node in self.nodes(_USES, scoped=True):
            self._node(node)
        return self.links

    def _use(self, node: Node) -> None:
        functions = any(c.type == "function" for c in node.children)
        prefix = ""
        group = next((c for c in node.named_children if c.type == "namespace_name"), None)
        if group is not None:  # use A\B\{C, D as E}
            prefix = node_text(group) + "\\"
        for clause in (n for n in walk(node) if n.type == "namespace_use_clause"):
            names = [c for c in clause.named_children if c.type in {"qualified_name", "name"}]
            if not names:
                continue
            full = (prefix + node_text(names[0])).lstrip("\\")
            local = node_text(names[1]) if len(names) > 1 else full.rsplit("\\", 1)[-1]
            function = functions or any(c.type == "function" for c in clause.children)
            (self.functions if function else self.classes)[local] = full

    def _class_name(self, written: str) -> tuple[str, str] | None:
        """(namespace, class) of a class name as written here, as PHP resolves it."""
        if written.lower() in _BUILTIN_TYPES or not written:
            return None
        if written.startswith("\\"):
            full = written[1:]
        else:
            head, _, rest = written.partition("\\")
            if head in self.classes:
                full = self.classes[head] + ("\\" + rest if rest else "")
            else:
                full = f"{self.namespace}\\{written}" if self.namespace else written
        namespace, _, name = full.rpartition("\\")
        return namespace, name

    def _class_link(self, node: Node, written: str, kind: str) -> None:
        resolved = self._class_name(written)
        if resolved is None:
            return
        namespace, name = resolved
        confidence = IMPORTED if written.split("\\", 1)[0] in self.classes else PACKAGE
        self.add(node, name, "name", None, confidence, namespace or None, kind)

    def _member(self, node: Node, written_class: str, confidence: float) -> None:
        resolved = self._class_name(written_class)
        if resolved is None:
            return
        namespace, name = resolved
        owner = f"{namespace}.{name}" if namespace else name
        self.add(node, node_text(node), "name", None, confidence, owner)

    def _node(self, node: Node) -> None:
        if node.type in {"member_call_expression", "nullsafe_member_call_expression"}:
            name = node.child_by_field_name("name")
            if name is None or name.type != "name":
                return
            target = node.child_by_field_name("object")
            owner = self._object_class(target)
            if owner is None:
                self.name_only(name, node_text(name))
            elif target is not None and node_text(target) == "$this":
                self._own_member(node, name)
            else:
                self._member(name, owner, PACKAGE)
        elif node.type == "scoped_call_expression":
            name = node.child_by_field_name("name")
            scope = node.child_by_field_name("scope")
            if name is None or scope is None or name.type != "name":
                return
            if scope.type == "relative_scope" and node_text(scope).lower() in {"self", "static"}:
                self._own_member(node, name)
                return
            owner = self._scope_class(node, scope)
            if owner is not None:
                self._member(name, owner, IMPORTED)
        elif node.type == "function_call_expression":
            self._function_call(node.child_by_field_name("function"))
        elif node.type == "object_creation_expression":
            created = _created(node)
            if created is not None:
                self._class_link(created, node_text(created), "use")
        else:
            kind = "type" if node.type == "named_type" else "extends"
            for written in (c for c in node.named_children if c.type in {"name", "qualified_name"}):
                self._class_link(written, node_text(written), kind)

    def _function_call(self, function: Node | None) -> None:
        if function is None or function.type not in {"name", "qualified_name"}:
            return
        written = node_text(function)
        name = written.rsplit("\\", 1)[-1]
        if written in self.functions:
            namespace = self.functions[written].rpartition("\\")[0]
            self.add(
                function,
                self.functions[written].rsplit("\\", 1)[-1],
                "name",
                None,
                IMPORTED,
                namespace or None,
            )
        elif self.namespace and "\\" not in written:
            # this namespace's function, or (PHP's fallback) a global one
            self.add(function, name, "name", None, PACKAGE, self.namespace)

    def _own_member(self, node: Node, name: Node) -> None:
        """``$this->m()``, ``self::m()``: the class's own method, or its traits' or
        parent's."""
        owner = enclosing(node, _CLASSES)
        if owner is None:
            return
        self._member(name, node_text(owner.child_by_field_name("name")), LOCAL)
        for part in owner.named_children:
            if part.type == "declaration_list":
                uses = [c for c in part.named_children if c.type == "use_declaration"]
                family = [n for use in uses for n in use.named_children]
            elif part.type == "base_clause":
                family = list(part.named_children)
            else:
                continue
            for written in (n for n in family if n.type in {"name", "qualified_name"}):
                self._member(name, node_text(written), PACKAGE)

    def _own_class(self, node: Node) -> str | None:
        owner = enclosing(node, _CLASSES)
        return node_text(owner.child_by_field_name("name")) if owner is not None else None

    def _scope_class(self, node: Node, scope: Node) -> str | None:
        """The class ``self::``, ``static::``, ``parent::`` or ``T::`` names."""
        if scope.type == "relative_scope":
            word = node_text(scope).lower()
            if word in {"self", "static"}:
                return self._own_class(node)
            owner = enclosing(node, _CLASSES)
            base = owner.child_by_field_name("base_clause") if owner is not None else None
            if base is None and owner is not None:
                base = next((c for c in owner.named_children if c.type == "base_clause"), None)
            parent = next((c for c in base.named_children), None) if base is not None else None
            return node_text(parent) if parent is not None else None
        if scope.type in {"name", "qualified_name"}:
            return node_text(scope)
        return None

    def _object_class(self, target: Node | None) -> str | None:
        """The class of ``$this``, of a typed ``$this->prop``, of a typed parameter or a
        ``$x = new T()``."""
        if target is None:
            return None
        if target.type == "variable_name":
            variable = node_text(target).lstrip("$")
            if variable == "this":
                return self._own_class(target)
            return self._variables(target).get(variable)
        member = _of_this(target)
        if member is None:
            return None
        if target.type == "member_access_expression":
            return self._properties(target).get(member)
        return (
            self._returns(target).get(member) if target.type == "member_call_expression" else None
        )

    def _variables(self, node: Node) -> dict[str, str]:
        function = enclosing(node, _FUNCTIONS)
        if function is None:
            return {}
        if function.id not in self.declared:
            found: dict[str, str] = {}
            for candidate in walk(function):
                if candidate.type in {"simple_parameter", "property_promotion_parameter"}:
                    _typed(candidate, found)
                elif candidate.type == "comment":  # /** @var T $x */ before a statement
                    found.update((v, t) for t, v in _DOC_VARIABLE.findall(node_text(candidate)))
                elif candidate.type == "assignment_expression":
                    left = candidate.child_by_field_name("left")
                    created = _created(candidate.child_by_field_name("right"))
                    if left is not None and created is not None:
                        found.setdefault(node_text(left).lstrip("$"), node_text(created))
            for written, variable in _DOC_PARAM.findall(_docblock(function)):
                found.setdefault(variable, written)
            self.declared[function.id] = found
        return self.declared[function.id]

    def _properties(self, node: Node) -> dict[str, str]:
        """A class's typed properties, and those its constructor promotes."""
        owner = enclosing(node, _CLASSES)
        if owner is None:
            return {}
        if owner.id not in self.declared:
            found: dict[str, str] = {}
            assigned: list[Node] = []
            for candidate in walk(owner):
                if candidate.type == "property_declaration":
                    written = _type_of(candidate) or _doc_type(_docblock(candidate))
                    for element in (
                        c for c in candidate.named_children if c.type == "property_element"
                    ):
                        if written is not None:
                            found.setdefault(
                                node_text(element.child_by_field_name("name")).lstrip("$"), written
                            )
                elif candidate.type == "property_promotion_parameter":
                    _typed(candidate, found)
                elif candidate.type == "assignment_expression":
                    assigned.append(candidate)
            self.declared[owner.id] = found
            for assignment in assigned:  # after every written type, which comes first
                self._assigned(assignment, found)
        return self.declared[owner.id]

    def _assigned(self, assignment: Node, found: dict[str, str]) -> None:
        """``$this->p = new T()`` or ``$this->p = $x`` of a typed ``$x``: ``p`` is a T."""
        left = assignment.child_by_field_name("left")
        right = assignment.child_by_field_name("right")
        if left is None or right is None or left.type != "member_access_expression":
            return
        prop, created = _of_this(left), _created(right)
        written = node_text(created) if created is not None else None
        if right.type == "variable_name":
            written = self._variables(right).get(node_text(right).lstrip("$"))
        if prop is not None and written is not None:
            found.setdefault(prop, written)

    def _returns(self, node: Node) -> dict[str, str]:
        """What the class's own methods return (``self`` and ``static``: the class)."""
        owner = enclosing(node, _CLASSES)
        if owner is None:
            return {}
        if owner.id not in self.returned:
            found: dict[str, str] = {}
            own = node_text(owner.child_by_field_name("name"))
            for method in (n for n in walk(owner) if n.type == "method_declaration"):
                name = method.child_by_field_name("name")
                returned = method.child_by_field_name("return_type")
                written = _type_of_node(returned) if returned is not None else None
                if written is None:
                    written = _doc_type(_docblock(method), "return")
                if written is not None and written.lower() in {"self", "static"}:
                    written = own
                if name is not None and written is not None:
                    found.setdefault(node_text(name), written)
            self.returned[owner.id] = found
        return self.returned[owner.id]


def _created(node: Node | None) -> Node | None:
    """The class ``new T(..)`` names (none for ``new $class``, ``new class {..}``)."""
    if node is None or node.type != "object_creation_expression":
        return None
    return next((c for c in node.named_children if c.type in {"name", "qualified_name"}), None)


def _of_this(node: Node) -> str | None:
    """``p`` of ``$this->p`` (or of ``$this->p()``)."""
    inner, member = node.child_by_field_name("object"), node.child_by_field_name("name")
    if inner is None or member is None or node_text(inner) != "$this":
        return None
    return node_text(member)


def _typed(parameter: Node, found: dict[str, str]) -> None:
    written = _type_of(parameter)
    name = parameter.child_by_field_name("name")
    if written is not None and name is not None:
        found.setdefault(node_text(name).lstrip("$"), written)


#: A docblock's class: ``@var Foo``, ``@param ?Foo $x``, ``@return Foo|null`` (not
#: ``Foo[]``, a scalar, or a type whose name is not a class's).
_CLASS = r"\??(\\?[A-Z][\w\\]*)(?![\w\\\[])"
_DOC_PARAM = re.compile(rf"@param\s+{_CLASS}[|\w\\]*\s+(?:\.\.\.)?\$(\w+)")
_DOC_VARIABLE = re.compile(rf"@var\s+{_CLASS}[|\w\\]*\s+\$(\w+)")


def _docblock(node: Node) -> str:
    """The ``/** .. */`` right before a declaration, or after its attributes."""
    leading = [node.prev_named_sibling] + [
        c for c in node.named_children if c.type in {"comment", "attribute_list"}
    ]
    for comment in (c for c in leading if c is not None and c.type == "comment"):
        if node_text(comment).startswith("/**"):
            return node_text(comment)
    return ""


def _doc_type(docblock: str, tag: str = "var") -> str | None:
    found = re.search(rf"@{tag}\s+{_CLASS}", docblock)
    return found.group(1) if found else None


def _type_of(node: Node) -> str | None:
    """The class a declaration's type names (``?Foo`` and ``Foo|null`` too)."""
    declared = node.child_by_field_name("type")
    if declared is None:
        declared = next((c for c in node.named_children if c.type.endswith("_type")), None)
    return _type_of_node(declared) if declared is not None else None


def _type_of_node(declared: Node) -> str | None:
    for candidate in walk(declared):
        if candidate.type == "named_type":
            written = next(
                (c for c in candidate.named_children if c.type in {"name", "qualified_name"}), None
            )
            return node_text(written) if written is not None else None
    return None
