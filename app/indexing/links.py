"""Where the names a file uses are defined: import-aware links, computed at index time.

``file_links`` reads one file's syntax tree and returns one ``Link`` per distinct
(line, name, target): a name the code on that line uses, and where that name's
definition lives, as far as the file itself can tell:

- Python: ``import a.b as x`` and ``from .m import f as g`` (relative and absolute),
  ``x.f`` through an imported module, ``self.f``/``cls.f`` in a class, and calls of
  functions defined in the same file.
- Go: package-qualified names through the file's imports, same-package names (any file
  of the directory), and methods through the method's receiver.
- TypeScript/JavaScript: ES ``import`` (named, default, namespace) of relative modules,
  ``this.m`` in a class, and same-file functions.
- Everything else, and names no rule resolves: the bare name, at low confidence.

A target is not a row id but a place: a file, a module path suffix, a directory, a Go
import path. Retrieval joins it to ``code_chunks`` by symbol name, so a link follows its
target when the target's file is re-indexed, and only the file that holds a link must be
re-read when the link changes. Pure: no I/O.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from app.indexing.chunker import IGNORED_REFERENCES
from app.indexing.languages import LanguageSpec

#: Bump when the rules change: files indexed by an older version are re-read on the next run.
LINK_VERSION = 4

IMPORTED = 1.0  # a name bound by an import of a module resolved to files of this repository
LOCAL = 0.9  # defined in the same file, or a method of the enclosing class
PACKAGE = 0.8  # Go: same package, another file
RECEIVER_GUESS = 0.5  # a method called on some value, looked up in the same package
NAME_ONLY = 0.3  # the bare name: any definition of it anywhere

MAX_LINKS_PER_FILE = 4000
_TS_EXTENSIONS = re.compile(r"(/index)?\.(d\.)?[cm]?[jt]sx?$")


@dataclass(frozen=True, slots=True)
class Link:
    """``name`` is used on ``line`` (1-based) and defined at ``target`` (per ``match``)."""

    line: int
    name: str
    # how ``target`` selects files (the SQL is ``app/retrieval/links.py`` ``_resolves``):
    # "file" (a path), "module" (a path suffix), "stem" (a JS/TS path without extension),
    # "dir" (a Go package directory), "package" (a Go import path), "name" (anywhere)
    match: str
    target: str | None
    qualifier: str | None  # the class (methods) or Go package name the definition is in
    confidence: float
    # "use"; "type": only in a type position (an annotation, a declared type); "import":
    # an import or re-export line (``name`` may be ``*``)
    kind: str = "use"


def file_links(path: str, root: Node, spec: LanguageSpec | None) -> list[Link]:
    """Every link of one parsed file, in line order; names of other languages by name only."""
    extractor = _EXTRACTORS.get(spec.name if spec else "", _NameOnly)
    found = extractor(path, root).run()
    unique = sorted(set(found), key=lambda k: (k.line, k.name, -k.confidence, k.match))
    return unique[:MAX_LINKS_PER_FILE]


def links_in(links: list[Link], segments: tuple[tuple[int, int], ...]) -> tuple[Link, ...]:
    """The links on the lines of ``segments``."""
    return tuple(k for k in links if any(s <= k.line <= e for s, e in segments))


def stem_of(path: str) -> str:
    """A JS/TS module's path as an import names it: no extension, no ``/index``."""
    return _TS_EXTENSIONS.sub("", path)


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _enclosing(node: Node, types: frozenset[str]) -> Node | None:
    parent = node.parent
    while parent is not None and parent.type not in types:
        parent = parent.parent
    return parent


class _Extractor:
    """Shared state of one file's pass: its path, directory and the links found."""

    def __init__(self, path: str, root: Node) -> None:
        self.path, self.root = path, root
        self.dir = posixpath.dirname(path)
        self.links: list[Link] = []
        self.defined: set[str] = set()

    def run(self) -> list[Link]:
        raise NotImplementedError

    def add(
        self,
        node: Node,
        name: str,
        match: str,
        target: str | None,
        confidence: float,
        qualifier: str | None = None,
        kind: str = "use",
    ) -> None:
        if len(name) > 1 or name == "*":
            line = node.start_point.row + 1
            self.links.append(Link(line, name, match, target, qualifier, confidence, kind))

    def name_only(self, node: Node, name: str, kind: str = "use") -> None:
        self.add(node, name, "name", None, NAME_ONLY, kind=kind)


class _NameOnly(_Extractor):
    """Languages without import rules: called and constructed names, by name."""

    CALLS = frozenset(
        {"call_expression", "call", "method_invocation", "object_creation_expression"}
    )

    def run(self) -> list[Link]:
        for node in _walk(self.root):
            if node.type in self.CALLS:
                callee = node.child_by_field_name("function") or node.child_by_field_name("name")
                if callee is None:
                    callee = node.child_by_field_name("type")
                if callee is not None:
                    last = callee.children[-1] if callee.children else callee
                    if last.type.endswith("identifier"):
                        self.name_only(last, _text(last))
        return self.links


# -- Python ---------------------------------------------------------------------------


class _Python(_Extractor):
    def run(self) -> list[Link]:
        self.imports: dict[str, tuple[list[str], str | None]] = {}  # local -> (files, name)
        self.submodules: dict[str, list[str]] = {}  # local -> files, if it is a submodule
        nodes = list(_walk(self.root))
        for node in nodes:
            if node.type == "import_statement":
                self._import(node)
            elif node.type == "import_from_statement":
                self._import_from(node)
            elif node.type in {"function_definition", "class_definition"}:
                self.defined.add(_text(node.child_by_field_name("name")))
        for node in nodes:
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
                module = _text(child)
                # `import a.b` binds `a`; `a.b.f` is resolved in _attribute through the full path
                self.imports[module.split(".")[0]] = (self._files(module.split(".")[0], 0), None)
                self.imports[module] = (self._files(module, 0), None)
            elif child.type == "aliased_import":
                module = _text(child.child_by_field_name("name"))
                alias = _text(child.child_by_field_name("alias"))
                self.imports[alias] = (self._files(module, 0), None)

    def _import_from(self, node: Node) -> None:
        source = node.child_by_field_name("module_name")
        if source is None:
            return
        level, module = 0, _text(source)
        if source.type == "relative_import":
            dots = _text(source).split()[0] if _text(source) else ""
            level = len(dots) - len(dots.lstrip("."))
            module = module[level:]
        files = self._files(module, level)
        for child in node.named_children:
            if child.type == "wildcard_import":
                for file in files:
                    self.add(child, "*", "module", file, IMPORTED, kind="import")
        for child in node.children_by_field_name("name"):
            if child.type == "dotted_name":
                name = _text(child)
                local = name
            elif child.type == "aliased_import":
                name = _text(child.child_by_field_name("name"))
                local = _text(child.child_by_field_name("alias"))
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
        name = _text(node)
        kind = "type" if _enclosing(node, _PYTHON_TYPES) is not None else "use"
        if name in self.imports:
            files, imported = self.imports[name]
            for file in files if imported is not None else ():  # not a module import
                self.add(node, imported or name, "module", file, IMPORTED, kind=kind)
        elif name in self.defined:
            self.add(node, name, "file", self.path, LOCAL, kind=kind)
        elif parent.type == "call":
            self.name_only(node, name)

    def _attribute(self, node: Node) -> None:
        obj = node.child_by_field_name("object")
        attr = node.child_by_field_name("attribute")
        if obj is None or attr is None:
            return
        name, receiver = _text(attr), _text(obj)
        if receiver in {"self", "cls"}:
            cls = _enclosing(node, frozenset({"class_definition"}))
            owner = _text(cls.child_by_field_name("name")) if cls is not None else None
            self.add(attr, name, "file", self.path, LOCAL, owner)
            return
        if receiver in self.imports:
            files, imported = self.imports[receiver]
            for file in files:
                # a module's function, or (for `from m import Cls`) a class's method
                self.add(attr, name, "module", file, IMPORTED, imported)
            for file in self.submodules.get(receiver, ()):  # `from . import mod`: mod.f
                self.add(attr, name, "module", file, IMPORTED)
            return
        parent = node.parent
        if parent is not None and parent.type == "call":
            self.name_only(attr, name)


_PYTHON_TYPES = frozenset({"type"})  # annotations: `x: T`, `-> T`


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


# -- Go -------------------------------------------------------------------------------


class _Go(_Extractor):
    def run(self) -> list[Link]:
        self.imports: dict[str, str] = {}  # local package name -> import path
        nodes = list(_walk(self.root))
        for node in nodes:
            if node.type == "import_spec":
                self._import(node)
        for node in nodes:
            if node.type == "selector_expression":
                self._selector(node)
            elif node.type == "qualified_type":
                package = _text(node.child_by_field_name("package"))
                name_node = node.child_by_field_name("name")
                if package in self.imports and name_node is not None:
                    self._qualified(name_node, package, _go_kind(node))
            elif node.type in {"identifier", "type_identifier"}:
                self._bare(node)
        return self.links

    def _import(self, node: Node) -> None:
        path = _text(node.child_by_field_name("path")).strip('"`')
        alias = node.child_by_field_name("name")
        local = _text(alias) if alias is not None else _go_package_name(path)
        if local not in {"_", "."}:
            self.imports[local] = path

    def _qualified(self, name_node: Node, package: str, kind: str = "use") -> None:
        self.add(
            name_node,
            _text(name_node),
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
        receiver = _text(operand)
        if operand.type == "identifier" and receiver in self.imports:
            self._qualified(field, receiver)
            return
        variable, owner = _receiver(_enclosing(node, frozenset({"method_declaration"})))
        if owner and operand.type == "identifier" and receiver == variable:
            self.add(field, _text(field), "dir", self.dir, LOCAL, owner)
        elif node.parent is not None and node.parent.type == "call_expression":
            # a method of a value whose type this file does not name: this package's
            # method of that name, else any namesake
            self.add(field, _text(field), "dir", self.dir, RECEIVER_GUESS)
            self.name_only(field, _text(field))

    def _bare(self, node: Node) -> None:
        parent = node.parent
        if parent is None:
            return
        if node.type == "identifier":
            if parent.type != "call_expression" or parent.child_by_field_name("function") != node:
                return
        elif parent.type in {"type_spec", "qualified_type"}:
            return
        name = _text(node)
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


def _receiver(method: Node | None) -> tuple[str | None, str | None]:
    """A Go method's receiver variable and type name: ``(c *Command)`` -> (c, Command)."""
    receiver = method.child_by_field_name("receiver") if method is not None else None
    variable = kind = None
    for node in _walk(receiver) if receiver is not None else ():
        if node.type == "parameter_declaration" and variable is None:
            variable = _text(node.child_by_field_name("name")) or None
        elif node.type == "type_identifier" and kind is None:
            kind = _text(node)
    return variable, kind


# -- TypeScript and JavaScript -----------------------------------------------------------


class _EcmaScript(_Extractor):
    CLASSES = frozenset({"class_declaration", "class", "abstract_class_declaration"})
    DEFINITIONS = CLASSES | {
        "function_declaration",
        "generator_function_declaration",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
        "variable_declarator",
    }

    def run(self) -> list[Link]:
        self.imports: dict[str, tuple[str | None, str | None]] = {}  # local -> (stem, name)
        nodes = list(_walk(self.root))
        for node in nodes:
            if node.type == "import_statement":
                self._import(node)
            elif node.type == "export_statement" and node.child_by_field_name("source"):
                self._reexport(node)
            elif node.type in self.DEFINITIONS and _top_level(node):
                self.defined.add(_text(node.child_by_field_name("name")))
        for node in nodes:
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

    def _import(self, node: Node) -> None:
        source = node.child_by_field_name("source")
        stem = self._module(_text(source).strip("'\"`")) if source is not None else None
        for child in _walk(node):
            if child.type == "import_specifier":
                name = _text(child.child_by_field_name("name"))
                alias = child.child_by_field_name("alias")
                self.imports[_text(alias) if alias is not None else name] = (stem, name)
                if stem is not None:
                    self.add(child, name, "stem", stem, IMPORTED, kind="import")
            elif child.type == "namespace_import":
                for ident in child.named_children:
                    self.imports[_text(ident)] = (stem, None)
            elif child.type == "import_clause":
                for ident in child.named_children:
                    if ident.type == "identifier":  # default import: the module's default
                        self.imports[_text(ident)] = (stem, "default")

    def _reexport(self, node: Node) -> None:
        """``export { a } from './m'`` and ``export * from './m'``: import links to follow."""
        source = node.child_by_field_name("source")
        stem = self._module(_text(source).strip("'\"`"))
        if stem is None:
            return
        specifiers = [c for c in _walk(node) if c.type == "export_specifier"]
        for spec in specifiers:
            name = spec.child_by_field_name("name")
            self.add(spec, _text(name), "stem", stem, IMPORTED, kind="import")
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
        }:
            return
        if parent.child_by_field_name("name") == node and parent.type != "call_expression":
            return
        name = _text(node)
        kind = "type" if node.type == "type_identifier" else "use"
        if name in self.imports:
            stem, imported = self.imports[name]
            if imported is None:
                return
            target = imported if imported != "default" else name
            if stem is not None:
                self.add(node, target, "stem", stem, IMPORTED, kind=kind)
            self.name_only(node, target, kind)
            return
        called = parent.type in {"call_expression", "new_expression"}
        if name in self.defined:
            self.add(node, name, "file", self.path, LOCAL, kind=kind)
        elif called or node.type == "type_identifier":
            self.name_only(node, name, kind)

    def _member(self, node: Node) -> None:
        obj = node.child_by_field_name("object")
        prop = node.child_by_field_name("property")
        if obj is None or prop is None:
            return
        name = _text(prop)
        if obj.type == "this":
            cls = _enclosing(node, self.CLASSES)
            owner = _text(cls.child_by_field_name("name")) if cls is not None else None
            self.add(prop, name, "file", self.path, LOCAL, owner)
            return
        receiver = _text(obj)
        if obj.type == "identifier" and receiver in self.imports:
            stem, imported = self.imports[receiver]
            if stem is not None:
                self.add(prop, name, "stem", stem, IMPORTED, imported)
            return
        parent = node.parent
        if parent is not None and parent.type == "call_expression":
            self.name_only(prop, name)


def _top_level(node: Node) -> bool:
    """A declaration of the module (maybe exported), not a local of some function."""
    parent = node.parent
    if node.type == "variable_declarator" and parent is not None:
        parent = parent.parent  # the lexical_declaration or variable_declaration
    while parent is not None and parent.type == "export_statement":
        parent = parent.parent
    return parent is None or parent.type == "program"


_EXTRACTORS: dict[str, type[_Extractor]] = {
    "python": _Python,
    "go": _Go,
    "typescript": _EcmaScript,
    "tsx": _EcmaScript,
    "javascript": _EcmaScript,
}
