"""Links of Rust files: ``use`` paths (``crate::``, ``self::``, ``super::``, child modules,
lists, globs and aliases) to the module files that define their items, ``pub use``
re-exports (import links, followed by retrieval), associated functions (``Type::new``),
and methods through their receiver's type (``self``, a field of ``self``, a parameter or
a ``let`` with a declared or constructed type).

A module's place is its file's path without ``.rs`` and without a final ``mod.rs``,
``lib.rs`` or ``main.rs`` (``rust_stem``); ``crate::`` starts at the nearest ``src``
directory above the file."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from tree_sitter import Node

from app.indexing.identifiers import IGNORED_REFERENCES
from app.indexing.link_model import (
    IMPORTED,
    LOCAL,
    NAME_ONLY,
    PACKAGE,
    Extractor,
    Link,
    enclosing,
    node_text,
    walk,
)
from app.indexing.rust_modules import crate_root, rust_stem, use_leaves

#: Names every Rust file sees without a ``use`` (the prelude's types and variants).
PRELUDE = frozenset(
    "Box Option Some None Result Ok Err Vec String ToString ToOwned Default Clone Copy Send"
    " Sync Sized Iterator IntoIterator Fn FnMut FnOnce Drop From Into AsRef AsMut PartialEq"
    " Eq PartialOrd Ord Debug Display Hash".split()
)
_GENERICS = re.compile(r"<[^<>]*>")
_USES = frozenset({"call_expression", "struct_expression", "type_identifier"})
_FUNCTIONS = frozenset({"function_item", "closure_expression"})


@dataclass(frozen=True)
class _Bound:
    """A name a ``use`` binds: item ``name`` of the module at ``place`` (None: another
    crate's)."""

    place: str | None
    name: str

    @property
    def module(self) -> str | None:
        """The name read as a module (``use crate::a::b; b::f()``)."""
        return f"{self.place}/{self.name}" if self.place is not None else None


class RustLinks(Extractor):
    BY_NAME_TOO = True

    def run(self) -> list[Link]:
        self.stem, self.crate = rust_stem(self.path), crate_root(self.path)
        self.modules = {
            node_text(n.child_by_field_name("name")) for n in self.nodes(frozenset({"mod_item"}))
        }
        self.bound: dict[str, _Bound] = {}
        self.globs: list[str] = []
        self.variables: dict[int, dict[str, str]] = {}  # function node id -> name -> type
        for node in self.nodes(frozenset({"use_declaration"})):
            self._use(node)
        self.functions = {
            node_text(n.child_by_field_name("name"))
            for n in self.nodes(frozenset({"function_item"}))
            if enclosing(n, frozenset({"impl_item", "trait_item"})) is None
        }
        self.types: set[str] = set()
        self.fields: dict[str, dict[str, str]] = {}  # struct -> field -> type
        for node in self.nodes(
            frozenset({"struct_item", "enum_item", "trait_item", "type_item", "union_item"})
        ):
            name = node_text(node.child_by_field_name("name"))
            self.types.add(name)
            if node.type == "struct_item":
                self.fields[name] = _field_types(node)
        for node in self.nodes(_USES, scoped=True):
            if node.type == "call_expression":
                self._call(node)
            elif node.type == "struct_expression":
                built = node.child_by_field_name("name")
                if built is not None and built.type == "type_identifier":
                    self._type(built, node_text(built), kind="use")
            else:
                self._type_position(node)
        return self.links

    # -- paths -------------------------------------------------------------------------

    def _place(self, segments: list[str], depth: int = 0) -> str | None:
        """The module a path of module names is (``crate::a::b``), or None (another crate).
        ``depth``: inline modules around the path, which ``super`` leaves first."""
        if not segments:
            return self.stem
        first, rest = segments[0], segments[1:]
        if first == "crate":
            base = self.crate
        elif first == "self":
            base = self.stem
        elif first == "super":
            base = self.stem
            while segments and segments[0] == "super":
                if depth:
                    depth -= 1
                elif base != self.crate:
                    base = posixpath.dirname(base)
                segments = segments[1:]
            rest = segments
        elif first in self.modules:
            base, rest = self.stem, segments
        elif first in self.bound:
            base = self.bound[first].module  # type: ignore[assignment]
            if base is None:
                return None
        else:
            return None
        return "/".join([base, *rest]) if rest else base

    def _use(self, node: Node) -> None:
        public = any(c.type == "visibility_modifier" for c in node.children)
        depth = sum(1 for a in _ancestors(node) if a.type == "mod_item")
        argument = node.child_by_field_name("argument")
        for segments, alias, glob in use_leaves(argument, []):
            if glob:
                place = self._place(segments, depth)
                if place is not None:
                    self.globs.append(place)
                    if public:
                        self.add(node, "*", "rsmod", place, IMPORTED, kind="import")
                continue
            if not segments:
                continue
            *path, name = segments
            if name == "self":  # `use a::b::{self}`: b
                if not path:
                    continue
                *path, name = path
            place = self._place(path, depth) if path else self._place([name], depth)
            if not path and place is not None:  # `use crate_module;` (a child module)
                place = posixpath.dirname(place)
            self.bound[alias or name] = _Bound(place, name)
            if public and place is not None:
                self.add(node, name, "rsmod", place, IMPORTED, kind="import")

    # -- uses --------------------------------------------------------------------------

    def _places(self, type_name: str) -> list[tuple[str, str | None, float]]:
        """Where a type (or a function) named so is defined, as this file can tell."""
        if type_name in self.bound:
            place = self.bound[type_name].place
            return [("rsmod", place, IMPORTED)] if place is not None else []
        if type_name in self.types or type_name in self.functions:
            return [("file", self.path, LOCAL)]
        if type_name in PRELUDE or type_name in IGNORED_REFERENCES:
            return []
        return [("rsmod", glob, PACKAGE) for glob in self.globs]

    def _type(
        self, node: Node, type_name: str, qualifier: str | None = None, kind: str = "type"
    ) -> None:
        name = self.bound[type_name].name if type_name in self.bound else type_name
        if qualifier is None:
            for match, target, confidence in self._places(type_name):
                self.add(node, name, match, target, confidence, kind=kind)
            return
        owner = self.bound[qualifier].name if qualifier in self.bound else qualifier
        places = self._places(qualifier)
        for match, target, confidence in places:
            self.add(node, node_text(node), match, target, confidence, owner, kind)
        placed = any(confidence > PACKAGE for _, _, confidence in places)
        if not placed and qualifier not in PRELUDE and qualifier not in self.bound:
            # a type this file does not place for sure (a glob's, a macro's): its method
            # of that name, wherever it is
            self.add(node, node_text(node), "name", None, NAME_ONLY, owner, kind)

    def _own(self, node: Node, owner: str) -> None:
        """``self.m()`` or ``Self::m()``: a method of the impl's type, in whichever file
        implements it."""
        self.add(node, node_text(node), "name", None, LOCAL, owner)

    def _type_position(self, node: Node) -> None:
        parent = node.parent
        if parent is None or parent.type in {
            "struct_item",
            "enum_item",
            "trait_item",
            "type_item",
            "union_item",
            "scoped_type_identifier",
            "struct_expression",
            "type_parameter",
            "type_parameters",
        }:
            return
        self._type(node, node_text(node))

    def _call(self, node: Node) -> None:
        function = node.child_by_field_name("function")
        if function is None:
            return
        if function.type == "identifier":
            self._function(function)
        elif function.type == "scoped_identifier":
            self._path_call(function)
        elif function.type == "field_expression":
            field = function.child_by_field_name("field")
            value = function.child_by_field_name("value")
            if field is None or value is None:
                return
            owner = self._value_type(value)
            if value.type == "self" and owner is not None:
                self._own(field, owner)
            elif owner is not None:
                self._type(field, owner, qualifier=owner, kind="use")
            else:
                self.name_only(field, node_text(field))

    def _function(self, node: Node) -> None:
        name = node_text(node)
        if name in PRELUDE:
            return
        if name in self.bound:
            place = self.bound[name].place
            if place is not None:
                self.add(node, self.bound[name].name, "rsmod", place, IMPORTED)
        elif name in self.functions or name in self.types:
            self.add(node, name, "file", self.path, LOCAL)
        elif self.globs:
            for glob in self.globs:
                self.add(node, name, "rsmod", glob, PACKAGE)
        else:
            self.name_only(node, name)

    def _path_call(self, node: Node) -> None:
        """``Type::f()``, ``module::f()``, ``crate::a::Type::f()``, ``Self::f()``."""
        name = node.child_by_field_name("name")
        path = node.child_by_field_name("path")
        if name is None or path is None:
            return
        if path.type == "bracketed_type":  # <T as Trait>::f
            inner = next((n for n in walk(path) if n.type == "type_identifier"), None)
            segments = [node_text(inner)] if inner is not None else []
        else:
            segments = _GENERICS.sub("", node_text(path)).replace(" ", "").split("::")
        if not segments or not all(segments):
            return
        if segments[-1][:1].isupper():
            *modules, owner = segments
            if owner == "Self":
                own = _impl_type(node)
                if own is not None and not modules:
                    self._own(name, own)
                return
            if not modules:
                self._type(name, owner, qualifier=owner, kind="use")
                return
            place = self._place(modules)
            if place is not None:
                self.add(name, node_text(name), "rsmod", place, IMPORTED, owner)
            return
        place = self._place(segments)
        if place is not None:
            self.add(name, node_text(name), "rsmod", place, IMPORTED)

    def _value_type(self, value: Node) -> str | None:
        """The type of a method call's receiver, where the file declares it."""
        if value.type == "self":
            return _impl_type(value)
        if value.type == "field_expression":
            inner = value.child_by_field_name("value")
            field = value.child_by_field_name("field")
            if inner is not None and inner.type == "self" and field is not None:
                owner = _impl_type(value)
                return self.fields.get(owner or "", {}).get(node_text(field))
            return None
        if value.type == "identifier":
            name = node_text(value)
            function = enclosing(value, _FUNCTIONS)
            while function is not None:
                if function.id not in self.variables:
                    self.variables[function.id] = _variable_types(function)
                if name in self.variables[function.id]:
                    return self.variables[function.id][name]
                function = enclosing(function, _FUNCTIONS)
        return None


def _ancestors(node: Node) -> list[Node]:
    found = []
    parent = node.parent
    while parent is not None:
        found.append(parent)
        parent = parent.parent
    return found


def _field_types(struct: Node) -> dict[str, str]:
    types: dict[str, str] = {}
    body = struct.child_by_field_name("body")
    for field in body.named_children if body is not None else ():
        if field.type == "field_declaration":
            name = field.child_by_field_name("name")
            declared = _type_name(field.child_by_field_name("type"))
            if name is not None and declared is not None:
                types[node_text(name)] = declared
    return types


def _type_name(node: Node | None) -> str | None:
    """The type a declared type names: ``&mut Foo``, ``Box<Foo>``, ``Arc<Foo>``,
    ``Option<&Foo>`` -> Foo; ``a::Foo`` -> Foo."""
    while node is not None:
        if node.type == "type_identifier":
            name = node_text(node)
            return name if name not in PRELUDE else None
        if node.type == "reference_type":
            node = node.child_by_field_name("type")
        elif node.type == "generic_type":
            outer = node_text(node.child_by_field_name("type"))
            if outer.rsplit("::", 1)[-1] not in _WRAPPERS:
                node = node.child_by_field_name("type")
                if node is not None and node.type == "scoped_type_identifier":
                    node = node.child_by_field_name("name")
                continue
            arguments = node.child_by_field_name("type_arguments")
            node = arguments.named_children[0] if arguments and arguments.named_children else None
        elif node.type == "scoped_type_identifier":
            node = node.child_by_field_name("name")
        else:
            return None
    return None


#: Types whose first type argument is what a value of them is used as.
_WRAPPERS = frozenset({"Box", "Rc", "Arc", "Option", "RefCell", "Cell", "Mutex", "RwLock"})


def _impl_type(node: Node) -> str | None:
    impl = enclosing(node, frozenset({"impl_item"}))
    return _type_name(impl.child_by_field_name("type")) if impl is not None else None


def _variable_types(function: Node) -> dict[str, str]:
    """The declared types of a function's parameters and ``let`` bindings: their
    annotation, or the type a value is built from (``T::new()``, ``T { .. }``); the
    first declaration of a name wins."""
    found: dict[str, str] = {}
    for candidate in walk(function):
        if candidate.type not in {"parameter", "let_declaration"}:
            continue
        pattern = candidate.child_by_field_name("pattern")
        if pattern is None or pattern.type != "identifier" or node_text(pattern) in found:
            continue
        declared = _type_name(candidate.child_by_field_name("type"))
        value = candidate.child_by_field_name("value")
        if declared is None and value is not None and value.type == "call_expression":
            callee = value.child_by_field_name("function")
            path = callee.child_by_field_name("path") if callee is not None else None
            if path is not None and path.type == "identifier":
                built = node_text(path)
                declared = built if built[:1].isupper() and built not in PRELUDE else None
        if declared is None and value is not None and value.type == "struct_expression":
            declared = _type_name(value.child_by_field_name("name"))
        if declared is not None:
            found[node_text(pattern)] = declared
    return found
