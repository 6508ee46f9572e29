"""Recall benchmark cases from real commit histories, with the benchmark's own resolver.

Deliberately independent of the product: its own tree-sitter node tables, its own name
resolution, nothing imported from ``app``. A case is a first-parent commit (a merge:
against its first parent, the merged pull request's whole change) that modifies 1-4
functions in 1-3 source files of one language (tests, docs and examples excluded). Its
targets, all in files the commit does not touch and outside tests/docs/examples:

- callees: definitions of the names the changed functions call, when the name has at
  most two definitions in the repository (so the target is unambiguous);
- callers: up to five functions (by path) that call a changed function, when that
  function's name has at most two definitions in the repository.

Cases with no target or more than 15 are dropped.
"""

from __future__ import annotations

import functools
import importlib
import re
import subprocess
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from tree_sitter import Language, Node, Parser


@dataclass(frozen=True)
class Item:
    """What a retriever returns: a definition's place, kind and what it costs."""

    path: str
    start: int
    end: int
    chunk_type: str
    cost: int
    tokens: int = 0  # the rendered block's exact token count (the product's items only)
    #: ceil(chars / 4) of every line from ``start`` to ``end`` (0: ``cost``): what the item
    #: costs to a reader of its line range rather than of what the product shows of it
    span: int = 0


@dataclass(frozen=True)
class Lang:
    name: str
    module: str
    entry: str
    extensions: tuple[str, ...]
    definitions: dict[str, str]  # node type -> field holding its name
    calls: dict[str, str]  # call node type -> field holding the callee
    #: definitions only where the node's field holds a function: `const f = () => ..`,
    #: `exports.f = function () {..}` (node type -> that field)
    values: dict[str, str] = field(default_factory=dict)


#: What makes a ``Lang.values`` definition one: a function as its value.
_FUNCTION_VALUES = frozenset(
    {"arrow_function", "function_expression", "function", "generator_function"}
)

LANGS = {
    "python": Lang(
        "python",
        "tree_sitter_python",
        "language",
        (".py",),
        {"function_definition": "name", "class_definition": "name"},
        {"call": "function"},
    ),
    "go": Lang(
        "go",
        "tree_sitter_go",
        "language",
        (".go",),
        {"function_declaration": "name", "method_declaration": "name", "type_spec": "name"},
        {"call_expression": "function", "composite_literal": "type"},
    ),
    "typescript": Lang(
        "typescript",
        "tree_sitter_typescript",
        "language_typescript",
        (".ts", ".mts", ".cts"),
        {
            "function_declaration": "name",
            "method_definition": "name",
            "class_declaration": "name",
            "abstract_class_declaration": "name",
            "interface_declaration": "name",
            "type_alias_declaration": "name",
        },
        {"call_expression": "function", "new_expression": "constructor"},
    ),
    # JavaScript, added 2026-12-06 (twelfth session) before any JavaScript repository was
    # looked at: a function is also one bound to a name or assigned to a property (the
    # CommonJS `exports.f = function`, `Proto.prototype.f = function`), as JavaScript
    # code defines most of its functions so
    "javascript": Lang(
        "javascript",
        "tree_sitter_javascript",
        "language",
        (".js", ".mjs", ".cjs", ".jsx"),
        {
            "function_declaration": "name",
            "generator_function_declaration": "name",
            "method_definition": "name",
            "class_declaration": "name",
            "variable_declarator": "name",
            "assignment_expression": "left",
        },
        {"call_expression": "function", "new_expression": "constructor"},
        {"variable_declarator": "value", "assignment_expression": "right"},
    ),
    "java": Lang(
        "java",
        "tree_sitter_java",
        "language",
        (".java",),
        {
            "method_declaration": "name",
            "constructor_declaration": "name",
            "class_declaration": "name",
            "interface_declaration": "name",
            "enum_declaration": "name",
            "record_declaration": "name",
        },
        {"method_invocation": "name", "object_creation_expression": "type"},
    ),
    "rust": Lang(
        "rust",
        "tree_sitter_rust",
        "language",
        (".rs",),
        {
            "function_item": "name",
            "struct_item": "name",
            "enum_item": "name",
            "trait_item": "name",
        },
        {"call_expression": "function"},
    ),
    "kotlin": Lang(
        "kotlin",
        "tree_sitter_kotlin",
        "language",
        (".kt",),
        {"function_declaration": "name", "class_declaration": "name", "object_declaration": "name"},
        {"call_expression": ""},
    ),
    "csharp": Lang(
        "csharp",
        "tree_sitter_c_sharp",
        "language",
        (".cs",),
        {
            "method_declaration": "name",
            "constructor_declaration": "name",
            "class_declaration": "name",
            "interface_declaration": "name",
            "struct_declaration": "name",
            "record_declaration": "name",
            "enum_declaration": "name",
        },
        {"invocation_expression": "function", "object_creation_expression": "type"},
    ),
    "ruby": Lang(
        "ruby",
        "tree_sitter_ruby",
        "language",
        (".rb",),
        {"method": "name", "singleton_method": "name", "class": "name", "module": "name"},
        {"call": "method"},
    ),
    "php": Lang(
        "php",
        "tree_sitter_php",
        "language_php",
        (".php",),
        {
            "function_definition": "name",
            "method_declaration": "name",
            "class_declaration": "name",
            "interface_declaration": "name",
            "trait_declaration": "name",
        },
        {
            "function_call_expression": "function",
            "member_call_expression": "name",
            "scoped_call_expression": "name",
            "object_creation_expression": "",
        },
    ),
    "c": Lang(
        "c",
        "tree_sitter_c",
        "language",
        (".c", ".h"),
        {"function_definition": "declarator", "struct_specifier": "name"},
        {"call_expression": "function"},
    ),
    "cpp": Lang(
        "cpp",
        "tree_sitter_cpp",
        "language",
        (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".h"),
        {
            "function_definition": "declarator",
            "class_specifier": "name",
            "struct_specifier": "name",
        },
        {"call_expression": "function", "new_expression": "type"},
    ),
}
SECONDARY = re.compile(
    r"(^|/)(tests?|testing|__tests__|spec|testdata|docs?|examples?|_examples|benchmarks?|"
    r"scripts|fixtures)/|(^|/)test_[^/]*\.py$|_test\.(py|go)$|\.(test|spec|bench)\.[cm]?[jt]sx?$"
    r"|(^|/)conftest\.py$|\.d\.ts$|(^|/)benches/.*\.rs$"
    # the languages of issue 52 (anchored at their extensions: the other pins stay as mined;
    # `Acme.UnitTests/` since the thirteenth session, which changed no pinned case)
    r"|(^|/)\w*Tests?/.*\.(cs|kt|java)$|[.]\w*Tests?/.*\.cs$|_test\.(cc|cpp|c)$|_spec\.rb$"
    # PHP's: a Symfony component's Tests/, and PHPUnit's FooTest.php beside its code
    r"|(^|/)\w*Tests?/.*\.php$|Test\.php$"
)
MAX_NAME_DEFINITIONS = 2
MAX_CALLERS = 5


@dataclass(frozen=True)
class Definition:
    path: str
    name: str
    start: int  # 1-based, the definition's own first line
    end: int
    kind: str = ""  # its syntax node type


@dataclass
class Case:
    repo: str
    language: str
    parent: str
    commit: str
    changed: list[str] = field(default_factory=list)  # "path:name"
    targets: list[Definition] = field(default_factory=list)
    query_code: str = ""  # the changed functions' new code (BM25's query)


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args],
        check=True,
        capture_output=True,
        text=True,
        errors="replace",
    ).stdout


def git_bytes(git_dir: str, *args: str) -> bytes:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], check=True, capture_output=True
    ).stdout


@functools.cache
def _parser(lang: str) -> Parser:
    spec = LANGS[lang]
    return Parser(Language(getattr(importlib.import_module(spec.module), spec.entry)()))


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _name(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _field(node: Node, name: str) -> Node | None:
    """The child in field ``name``; "": the first named child (a grammar without fields)."""
    if name:
        return node.child_by_field_name(name)
    return node.named_children[0] if node.named_children else None


#: C and C++ declarators around a function's name: `*f(...)`, `A::f`, `&f`.
_DECLARATORS = frozenset(
    {
        "function_declarator",
        "pointer_declarator",
        "reference_declarator",
        "parenthesized_declarator",
        "qualified_identifier",
    }
)


def _declared(node: Node | None) -> Node | None:
    """The name a (C or C++) declarator declares; any other node as it is."""
    while node is not None and node.type in _DECLARATORS:
        key = "name" if node.type == "qualified_identifier" else "declarator"
        inner = node.child_by_field_name(key)
        if inner is None and node.type == "parenthesized_declarator" and node.named_children:
            inner = node.named_children[0]
        node = inner
    return node


@dataclass
class ParsedFile:
    definitions: list[Definition]
    calls: list[tuple[int, str]]  # (1-based line, called name)


def parse(lang: str, path: str, data: bytes) -> ParsedFile:
    spec = LANGS[lang]
    root = _parser(lang).parse(data).root_node
    defs: list[Definition] = []
    calls: list[tuple[int, str]] = []
    for node in _walk(root):
        if node.type in spec.definitions:
            if node.type.endswith("_specifier") and node.child_by_field_name("body") is None:
                continue  # `struct s *p`: a use, not a definition
            if node.type in spec.values:
                value = node.child_by_field_name(spec.values[node.type])
                if value is None or value.type not in _FUNCTION_VALUES:
                    continue  # a value bound, not a function
            named = _field(node, spec.definitions[node.type])
            if named is not None and named.type == "member_expression":
                named = named.child_by_field_name("property")  # `a.b.f = function`
            name = _name(_declared(named))
            if name:
                defs.append(
                    Definition(
                        path, name, node.start_point.row + 1, node.end_point.row + 1, node.type
                    )
                )
        elif node.type in spec.calls:
            callee = _field(node, spec.calls[node.type])
            if callee is None:
                continue
            # the last identifier of `f`, `a.f`, `pkg.F`, `this.f`, `a.b.f`
            for key in ("attribute", "field", "property", "name"):
                inner = callee.child_by_field_name(key)
                if inner is not None:
                    callee = inner
                    break
            if callee.type == "navigation_expression" and callee.named_children:  # Kotlin
                callee = callee.named_children[-1]
            if callee.type.endswith("identifier") or callee.type == "name":
                calls.append((callee.start_point.row + 1, _name(callee)))
    return ParsedFile(defs, calls)


class Snapshot:
    """All source files of one language at one commit, parsed (cached by blob id)."""

    _cache: ClassVar[dict[str, ParsedFile]] = {}

    def __init__(self, git_dir: str, commit: str, lang: str) -> None:
        self.files: dict[str, ParsedFile] = {}
        listing = git(git_dir, "ls-tree", "-r", commit)
        wanted = []
        for line in listing.splitlines():
            meta, path = line.split("\t", 1)
            _, kind, blob = meta.split()
            if kind == "blob" and path.endswith(LANGS[lang].extensions):
                wanted.append((path, blob))
        missing = [(p, b) for p, b in wanted if b not in self._cache]
        if missing:
            batch = subprocess.run(
                ["git", "--git-dir", git_dir, "cat-file", "--batch"],
                input="".join(f"{b}\n" for _, b in missing).encode(),
                capture_output=True,
                check=True,
            ).stdout
            offset = 0
            for path, blob in missing:
                header_end = batch.index(b"\n", offset)
                size = int(batch[offset:header_end].split()[2])
                data = batch[header_end + 1 : header_end + 1 + size]
                offset = header_end + 1 + size + 1
                self._cache[blob] = parse(lang, path, data)
        for path, blob in wanted:
            parsed = self._cache[blob]
            self.files[path] = ParsedFile(
                [Definition(path, d.name, d.start, d.end, d.kind) for d in parsed.definitions],
                parsed.calls,
            )
        self.by_name: dict[str, list[Definition]] = defaultdict(list)
        for parsed in self.files.values():
            for d in parsed.definitions:
                self.by_name[d.name].append(d)


def _added_lines(git_dir: str, parent: str, commit: str, path: str) -> set[int]:
    diff = git(git_dir, "diff", "-U0", parent, commit, "--", path)
    lines: set[int] = set()
    for match in re.finditer(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", diff, re.MULTILINE):
        start, count = int(match.group(1)), int(match.group(2) or "1")
        lines.update(range(start, start + count))
    return lines


def mine(
    git_dir: str, repo: str, lang: str, limit: int, scan: int = 1500, head: str = "HEAD"
) -> list[Case]:
    """Up to ``limit`` cases from the newest ``scan`` first-parent commits of ``head``,
    oldest first.

    A merge on the first-parent line is taken against its first parent: the whole change
    of the pull request it merged, which is what a review sees."""
    spec = LANGS[lang]
    commits = git(git_dir, "rev-list", "--first-parent", f"-n{scan}", head)
    cases: list[Case] = []
    for commit in commits.split():
        parents = git(git_dir, "rev-list", "--parents", "-n1", commit).split()[1:]
        if not parents:
            continue
        case = _case(git_dir, repo, spec, parents[0], commit)
        if case is not None:
            cases.append(case)
            if len(cases) >= limit:
                break
    return list(reversed(cases))


def _case(git_dir: str, repo: str, spec: Lang, parent: str, commit: str) -> Case | None:
    status = git(git_dir, "diff", "--name-status", "--no-renames", parent, commit).splitlines()
    touched = [line.split("\t")[-1] for line in status]
    code = [
        line.split("\t")[1]
        for line in status
        if line.startswith("M\t")
        and line.endswith(spec.extensions)
        and not SECONDARY.search(line.split("\t")[1])
    ]
    numstat = git(git_dir, "diff", "--numstat", parent, commit, "--", *code) if code else ""
    changed_lines = sum(
        int(a) + int(b) for a, b, _ in (r.split("\t") for r in numstat.splitlines()) if a != "-"
    )
    if not 1 <= len(code) <= 3 or changed_lines > 120:
        return None
    changed: list[tuple[str, Definition, ParsedFile]] = []
    for path in code:
        new = parse(spec.name, path, git_bytes(git_dir, "show", f"{commit}:{path}"))
        added = _added_lines(git_dir, parent, commit, path)
        functions = [d for d in new.definitions if any(d.start <= n <= d.end for n in added)]
        innermost = [
            d
            for d in functions
            if not any(o is not d and d.start <= o.start and o.end <= d.end for o in functions)
        ]
        changed += [(path, d, new) for d in innermost]
    if not 1 <= len(changed) <= 4:
        return None
    before = Snapshot(git_dir, parent, spec.name)
    excluded = set(touched)
    targets: dict[tuple[str, int], Definition] = {}
    own_names = {d.name for _, d, _ in changed}
    for _path, function, new in changed:
        called = {name for line, name in new.calls if function.start <= line <= function.end}
        for name in sorted(called - own_names):
            found = before.by_name.get(name, [])
            local = [d for d in new.definitions if d.name == name]
            if local or not 1 <= len(found) <= MAX_NAME_DEFINITIONS:
                continue
            for d in found:
                if d.path not in excluded and not SECONDARY.search(d.path):
                    targets[(d.path, d.start)] = d
        if len(before.by_name.get(function.name, [])) > MAX_NAME_DEFINITIONS:
            continue
        callers = []
        for other, parsed in sorted(before.files.items()):
            if other in excluded or SECONDARY.search(other):
                continue
            lines = [line for line, name in parsed.calls if name == function.name]
            for d in parsed.definitions:
                if any(d.start <= line <= d.end for line in lines):
                    inner = [
                        o
                        for o in parsed.definitions
                        if o is not d
                        and d.start <= o.start
                        and o.end <= d.end
                        and any(o.start <= line <= o.end for line in lines)
                    ]
                    if not inner:
                        callers.append(d)
        for d in callers[:MAX_CALLERS]:
            targets[(d.path, d.start)] = d
    if not 1 <= len(targets) <= 15:
        return None
    query = "\n".join(
        "\n".join(
            git(git_dir, "show", f"{commit}:{path}").split("\n")[function.start - 1 : function.end]
        )
        for path, function, _ in changed
    )
    return Case(
        repo,
        spec.name,
        parent,
        commit,
        [f"{p}:{d.name}" for p, d, _ in changed],
        sorted(targets.values(), key=lambda d: (d.path, d.start)),
        query,
    )
