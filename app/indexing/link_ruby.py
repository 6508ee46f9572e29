"""Links of Ruby files. Ruby reopens classes and resolves constants at run time, so a link
is a name qualified by the constants it belongs to (``Rack::Utils.escape`` -> ``escape`` of
``Utils``), wherever that is defined: a chunk's qualified name ends so
(``Rack::Utils::escape``). A bare or ``self.`` call is a method of the enclosing class or
module, of what it ``include``s or ``extend``s, or of its superclass (``super``: the
last two's method of the enclosing method's name); ``Const.new`` is the class;
``require_relative`` and ``require`` are import links to the files they load;
superclasses and mixins are extends links (siblings)."""

from __future__ import annotations

import posixpath

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

_SCOPES = frozenset({"class", "module"})
#: Kernel and Module methods called bare everywhere: never a repository's method.
_KERNEL = frozenset(
    "require require_relative include extend prepend attr_reader attr_writer attr_accessor"
    " private protected public module_function raise puts print p lambda proc loop"
    " define_method alias_method freeze new block_given? respond_to? is_a? kind_of?"
    " instance_variable_get instance_variable_set send public_send format sprintf".split()
)
_MIXINS = frozenset({"include", "extend", "prepend"})


class RubyLinks(Extractor):
    BY_NAME_TOO = True

    def run(self) -> list[Link]:
        self.mixins: dict[int, list[str]] = {}  # class/module node id -> constants mixed in
        for node in self.nodes(frozenset({"call"})):
            self._require_or_mixin(node)
        self.assigned: dict[int, dict[str, str]] = {}  # method node id -> local -> constant
        for node in self.nodes(frozenset({"call", "superclass", "super"}), scoped=True):
            if node.type == "call":
                self._call(node)
            elif node.type == "super":
                self._super(node)
            elif node.type == "superclass":
                for constant in node.named_children:
                    self._constant(constant, "extends")
        return self.links

    def _require_or_mixin(self, node: Node) -> None:
        method = node_text(node.child_by_field_name("method"))
        if node.child_by_field_name("receiver") is not None:
            return
        arguments = node.child_by_field_name("arguments")
        first = arguments.named_children[0] if arguments and arguments.named_children else None
        if first is None:
            return
        if method in {"require", "require_relative"} and first.type == "string":
            loaded = node_text(first).strip("'\"")
            if not loaded or "#{" in loaded:
                return
            if method == "require_relative":
                path = posixpath.normpath(posixpath.join(self.dir, loaded))
                target = path if path.endswith(".rb") else f"{path}.rb"
                self.add(node, "*", "file", target, IMPORTED, kind="import")
            else:
                self.add(node, "*", "module", f"{loaded}.rb", IMPORTED, kind="import")
        elif method in _MIXINS:
            scope = enclosing(node, _SCOPES)
            for constant in arguments.named_children if arguments is not None else ():
                if constant.type in {"constant", "scope_resolution"}:
                    if scope is not None:
                        self.mixins.setdefault(scope.id, []).append(_dotted(constant))
                    self._constant(constant, "extends")  # kept on the lines asked for

    def _constant(self, node: Node, kind: str) -> None:
        """A class or module named by a constant (``Foo`` or ``A::Foo``)."""
        if node.type not in {"constant", "scope_resolution"}:
            return
        dotted = _dotted(node)
        owner, _, name = dotted.rpartition(".")
        name_node = node.child_by_field_name("name") if node.type == "scope_resolution" else node
        self.add(name_node or node, name, "name", None, PACKAGE, owner or None, kind)

    def _call(self, node: Node) -> None:
        method_node = node.child_by_field_name("method")
        if method_node is None or method_node.type != "identifier":
            return
        method = node_text(method_node)
        receiver = node.child_by_field_name("receiver")
        if receiver is None or receiver.type == "self":
            if method not in _KERNEL:
                self._own_method(node, method_node, method)
            return
        if receiver.type in {"constant", "scope_resolution"}:
            if method == "new":  # Const.new: the class (its initialize)
                self._constant(receiver, "use")
                self.add(method_node, "initialize", "name", None, PACKAGE, _dotted(receiver))
            else:
                self.add(method_node, method, "name", None, PACKAGE, _dotted(receiver))
            return
        if receiver.type == "identifier":
            constant = self._locals(node).get(node_text(receiver))
            if constant is not None:
                self.add(method_node, method, "name", None, PACKAGE, constant)
                return
        self.name_only(method_node, method)

    def _super(self, node: Node) -> None:
        """``super`` (with arguments or without): the method of the same name that the
        enclosing class's mixins or superclass define."""
        method = enclosing(node, frozenset({"method", "singleton_method"}))
        name = node_text(method.child_by_field_name("name")) if method is not None else ""
        if name:
            self._own_method(node, node, name, inherited_only=True)

    def _own_method(
        self, node: Node, method_node: Node, method: str, *, inherited_only: bool = False
    ) -> None:
        """A bare call: the enclosing class's method (wherever the class is reopened),
        its mixins', its superclass's (``inherited_only``: those two); outside any class,
        by name."""
        scope = enclosing(node, _SCOPES)
        if scope is None:
            self.name_only(method_node, method)
            return
        if not inherited_only:
            self.add(method_node, method, "name", None, LOCAL, _qualified(scope))
        for mixin in self.mixins.get(scope.id, []):
            self.add(method_node, method, "name", None, PACKAGE, mixin)
        superclass = scope.child_by_field_name("superclass")
        base = superclass.named_children[0] if superclass and superclass.named_children else None
        if base is not None and base.type in {"constant", "scope_resolution"}:
            self.add(method_node, method, "name", None, PACKAGE, _dotted(base))

    def _locals(self, node: Node) -> dict[str, str]:
        """``x = Const.new(...)`` in the method around ``node``: x -> Const."""
        method = enclosing(node, frozenset({"method", "singleton_method"}))
        if method is None:
            return {}
        if method.id not in self.assigned:
            found: dict[str, str] = {}
            stack = [method]
            while stack:
                current = stack.pop()
                stack.extend(current.named_children)
                if current.type != "assignment":
                    continue
                left, right = (
                    current.child_by_field_name("left"),
                    current.child_by_field_name("right"),
                )
                if (
                    left is None
                    or right is None
                    or left.type != "identifier"
                    or right.type != "call"
                ):
                    continue
                receiver = right.child_by_field_name("receiver")
                if (
                    node_text(right.child_by_field_name("method")) == "new"
                    and receiver is not None
                    and receiver.type in {"constant", "scope_resolution"}
                ):
                    found.setdefault(node_text(left), _dotted(receiver))
            self.assigned[method.id] = found
        return self.assigned[method.id]


def _dotted(node: Node) -> str:
    """``A::B`` -> ``A.B`` (``::A`` -> ``A``): as qualified names are compared."""
    return node_text(node).replace("::", ".").strip(".")


def _qualified(scope: Node) -> str:
    """A class's or module's name with those around it: ``Rack.Request``."""
    names = []
    current: Node | None = scope
    while current is not None:
        name = current.child_by_field_name("name")
        names.append(_dotted(name) if name is not None else "")
        current = enclosing(current, _SCOPES)
    return ".".join(n for n in reversed(names) if n)
