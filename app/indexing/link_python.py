"""Links of Python files: imports (relative and absolute, with aliases), module attributes,
``self``/``cls`` methods (a base class's, where the class does not define the method, and
``super().m()``'s) and same-file calls."""

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
)

_DECLARATIONS = frozenset(
    {"import_statement", "import_from_statement", "function_definition", "class_definition"}
)
_USES = frozenset({"identifier", "attribute"})


class PythonLinks(Extractor):
    def run(self) -> list[Link]:
        self.imports: dict[str, tuple[list[str], str | None]] = {}  # local -> (files, name)
        self.submodules: dict[str, list[str]] = {}  # local -> files, if it is a submodule
        self.class_members: dict[int, set[str]] = {}  # class node id -> its methods
        for node in self.nodes(_DECLARATIONS):
            if node.type == "import_statement":
                self._import(node)
            elif node.type == "import_from_statement":
                self._import_from(node)
            elif node.type in {"function_definition", "class_definition"}:
                self.defined.add(node_text(node.child_by_field_name("name")))
        for node in self.nodes(_USES, scoped=True):
            if node.type == "identifier":
                self._identifier(node)
            elif node.type == "attribute":
                self._attribute(node)
        return self.links

    def _files(self, module: str, level: int) -> list[str]:
        parts = [p for p in module.split(".") if p]
        if level:
            base = self.dir
            for _ in range(level - 1):
                base = posixpath.dirname(base)
            stem = posixpath.join(base, *parts) if parts else base
            return (
                [f"{stem}.py", posixpath.join(stem, "__init__.py")]
                if parts
                else [posixpath.join(stem, "__init__.py")]
            )
        stem = "/".join(parts)
        return [f"{stem}.py", f"{stem}/__init__.py"]

    def _import(self, node: Node) -> None:
        for child in node.named_children:
            if child.type == "dotted_name":
                module = node_text(child)
                # `import a.b` binds `a`; `a.b.f` is resolved in _attribute through the full path
                self.imports[module.split(".")[0]] = (self._files(module.split(".")[0], 0), None)
                self.imports[module] = (self._files(module, 0), None)
            elif child.type == "aliased_import":
                module = node_text(child.child_by_field_name("name"))
                alias = node_text(child.child_by_field_name("alias"))
                self.imports[alias] = (self._files(module, 0), None)

    def _import_from(self, node: Node) -> None:
        source = node.child_by_field_name("module_name")
        if source is None:
            return
        level, module = 0, node_text(source)
        if source.type == "relative_import":
            dots = node_text(source).split()[0] if node_text(source) else ""
            level = len(dots) - len(dots.lstrip("."))
            module = module[level:]
        files = self._files(module, level)
        for child in node.named_children:
            if child.type == "wildcard_import":
                for file in files:
                    self.add(child, "*", "module", file, IMPORTED, kind="import")
        for child in node.children_by_field_name("name"):
            if child.type == "dotted_name":
                name = node_text(child)
                local = name
            elif child.type == "aliased_import":
                name = node_text(child.child_by_field_name("name"))
                local = node_text(child.child_by_field_name("alias"))
            else:
                continue
            # `from pkg import x` binds a name of pkg, or its submodule x: both are read
            self.imports[local] = (files, name)
            self.submodules[local] = self._files(f"{module}.{name}" if module else name, level)
            for file in files:  # the import line itself: how re-exports are followed
                self.add(child, name, "module", file, IMPORTED, kind="import")

    def _identifier(self, node: Node) -> None:
        parent = node.parent
        if parent is None or not _python_use(node, parent):
            return
        name = node_text(node)
        base = _base_class(node)
        if not (name in self.imports or name in self.defined or parent.type == "call" or base):
            return  # a local, a parameter: no link, and no walk up the tree to type it
        kind = "type" if enclosing(node, _PYTHON_TYPES) is not None else "use"
        if base:
            kind = "extends"
        if name in self.imports:
            files, imported = self.imports[name]
            for file in files if imported is not None else ():  # not a module import
                self.add(node, imported or name, "module", file, IMPORTED, kind=kind)
        elif name in self.defined:
            self.add(node, name, "file", self.path, LOCAL, kind=kind)
        elif parent.type == "call" or kind == "extends":
            self.name_only(node, name, kind)

    def _attribute(self, node: Node) -> None:
        obj = node.child_by_field_name("object")
        attr = node.child_by_field_name("attribute")
        if obj is None or attr is None:
            return
        name, receiver = node_text(attr), node_text(obj)
        if receiver in {"self", "cls", "super()"}:
            cls = enclosing(node, frozenset({"class_definition"}))
            owner = node_text(cls.child_by_field_name("name")) if cls is not None else None
            if receiver != "super()":
                self.add(attr, name, "file", self.path, LOCAL, owner)
            called = node.parent is not None and node.parent.type == "call"
            inherited = receiver == "super()" or (
                cls is not None and called and not self._defines(cls, name)
            )
            if cls is not None and called and inherited:
                self._inherited(attr, name, cls)  # not the class's own method: its bases'
            if receiver == "super()" and called:  # and by name, as before: a base elsewhere
                self.name_only(attr, name)
            return
        kind = "extends" if _base_class(node) else "use"
        if receiver in self.imports:
            files, imported = self.imports[receiver]
            for file in files:
                # a module's function, or (for `from m import Cls`) a class's method
                self.add(attr, name, "module", file, IMPORTED, imported, kind)
            for file in self.submodules.get(receiver, ()):  # `from . import mod`: mod.f
                self.add(attr, name, "module", file, IMPORTED, kind=kind)
            return
        if kind == "extends":
            self.name_only(attr, name, kind)
            return
        parent = node.parent
        if parent is not None and parent.type == "call":
            self.name_only(attr, name)

    def _defines(self, cls: Node, name: str) -> bool:
        """Whether the class's body defines ``name`` (read once a class)."""
        if cls.id not in self.class_members:
            self.class_members[cls.id] = _methods(cls)
        return name in self.class_members[cls.id]

    def _inherited(self, attr: Node, name: str, cls: Node) -> None:
        """``self.m()`` of a method the class does not define, or ``super().m()``: the
        method of each base class, where the file defines or imports it."""
        bases = cls.child_by_field_name("superclasses")
        for base in bases.named_children if bases is not None else []:
            if base.type == "identifier" and node_text(base) in self.defined:
                self.add(attr, name, "file", self.path, LOCAL, node_text(base))
                continue
            module = (
                node_text(base.child_by_field_name("object")) if base.type == "attribute" else ""
            )
            if base.type == "identifier" and node_text(base) in self.imports:
                files, owner = self.imports[node_text(base)]
            elif module in self.imports:  # `mod.Base`: mod's, or its submodule's
                files = self.imports[module][0] + self.submodules.get(module, [])
                owner = node_text(base.child_by_field_name("attribute"))
            else:
                continue
            for file in files if owner is not None else ():
                self.add(attr, name, "module", file, IMPORTED, owner)


def _methods(cls: Node) -> set[str]:
    """The names of the functions a class's body defines (decorated or not)."""
    body = cls.child_by_field_name("body")
    found = set()
    for child in body.named_children if body is not None else []:
        if child.type == "decorated_definition":
            child = child.child_by_field_name("definition") or child
        if child.type == "function_definition":
            found.add(node_text(child.child_by_field_name("name")))
    return found


_PYTHON_TYPES = frozenset({"type"})  # annotations: `x: T`, `-> T`


def _base_class(node: Node) -> bool:
    """Whether ``node`` names a base class: ``class C(Base)``, ``class C(mod.Base)``."""
    parent = node.parent
    return (
        parent is not None
        and parent.type == "argument_list"
        and parent.parent is not None
        and parent.parent.type == "class_definition"
    )


def _python_use(node: Node, parent: Node) -> bool:
    """Whether an identifier is a use of a name: not a definition's own name, a parameter,
    a keyword argument's name, part of an import, or the attribute after a dot."""
    if parent.type == "attribute":
        return parent.child_by_field_name("object") == node
    if parent.type in {"function_definition", "class_definition", "keyword_argument"}:
        return parent.child_by_field_name("name") != node
    return parent.type not in {
        "parameters",
        "import_statement",
        "import_from_statement",
        "dotted_name",
        "aliased_import",
    }
