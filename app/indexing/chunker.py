"""Cut one source text into chunks: functions, methods, classes, module code, windows.

Pure: text in, chunks out; no I/O. Policy (README "Chunking"):

* functions and methods are chunks of their own, with their decorators, annotations and
  leading doc comments;
* a class chunk holds its header, fields and member signatures, not member bodies;
* lines that belong to no definition become ``module`` chunks;
* nested functions stay in their parent, unless the parent is too big and is split into
  overlapping ``window`` chunks, which keep its name and carry its signature;
* every chunk fits ``ChunkLimits``; text in an unknown language is cut into windows.

Tree-sitter recovers from syntax errors, so broken files still yield chunks.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from tree_sitter import Node, QueryCursor

from app.indexing.assigned_names import assigned_name, bound_value
from app.indexing.chunks import Chunk, segments_of
from app.indexing.identifiers import IGNORED_REFERENCES
from app.indexing.languages import LanguageSpec
from app.indexing.windows import (
    ChunkLimits,
    Line,
    chunk_from_lines,
    fits,
    split_windows,
    window_chunks,
)

BODY_TYPES = frozenset(
    "block body_statement class_body compound_statement constructor_body declaration_list"
    " enum_body enum_class_body field_declaration_list function_body interface_body"
    " statement_block".split()
)
MAX_SIGNATURE = 300
MAX_REFERENCES = 64
_SPACE = re.compile(r"\s+")
_COMMENT_MARKS = re.compile(r"^\s*(?:/\*\*?|\*/|\*|//[/!]?|#|--)\s?|\s*\*/\s*$", re.MULTILINE)


@dataclass
class _Def:
    node: Node  # the definition itself (no wrapper)
    kind: str  # "function" | "class" | "scope"
    children: list[_Def] = field(default_factory=list)


def chunk_text(
    path: str,
    text: str,
    spec: LanguageSpec | None,
    limits: ChunkLimits | None = None,
    root: Node | None = None,
) -> list[Chunk]:
    """All chunks of ``text`` (the content of ``path``), in line order. ``root`` is the
    file's syntax tree when the caller has parsed it already (``parse_source``)."""
    limits = limits or ChunkLimits()
    if spec is None:
        return window_chunks(path, text, None, limits)
    return _SyntaxChunker(path, text, spec, limits).run(root)


def parse_source(text: str, spec: LanguageSpec) -> Node:
    """The root of ``text``'s syntax tree, encoded as the chunker reads it."""
    return spec.parser().parse(text.encode("utf-8", "surrogatepass")).root_node


class _SyntaxChunker:
    """One pass over one file; holds the state that the recursive walk shares."""

    def __init__(self, path: str, text: str, spec: LanguageSpec, limits: ChunkLimits) -> None:
        self.path, self.text, self.spec, self.limits = path, text, spec, limits
        self.source = text.encode("utf-8", "surrogatepass")
        self.lines = text.split("\n")
        self.chunks: list[Chunk] = []
        self.covered: set[int] = set()

    # -- the walk ---------------------------------------------------------------------

    def run(self, root: Node | None = None) -> list[Chunk]:
        if root is None:
            root = self.spec.parser().parse(self.source).root_node
        captures = QueryCursor(self.spec.query).captures(root)
        self._index_references(captures.get("name", []))
        roots = self._definition_tree(captures.get("def", []))
        prefix = self._file_scope(root)
        for definition in roots:
            self._emit(definition, prefix, in_class=False)
        self._emit_module_chunks()
        self.chunks.sort(key=lambda c: (c.start_line, c.end_line, c.chunk_type))
        return self.chunks

    def _emit(self, d: _Def, qualifier: list[str], in_class: bool) -> None:
        if d.kind == "scope":
            inner = [*qualifier, self._scope_name(d.node)]
            members = d.node.type in self.spec.member_scopes
            for child in d.children:
                self._emit(child, inner, in_class=members)
        elif d.kind == "class":
            self._emit_class(d, qualifier)
        else:
            self._emit_function(d, qualifier, in_class)

    def _emit_function(self, d: _Def, qualifier: list[str], in_class: bool) -> None:
        name, owner = self._function_name(d.node)
        method = in_class or owner is not None
        qualified = self._qualify([*qualifier, *(owner or [])], name)
        start, end = self._extent(d.node)
        lines = self._lines(range(start, end + 1))
        signature = self._signature(d.node)
        if fits(lines, self.limits):
            self._add("method" if method else "function", name, qualified, lines, d.node, signature)
            return
        for window in split_windows(lines, self.limits):
            self._add("window", name, qualified, window, None, signature)
        for child in d.children:  # the parent is split: its nested definitions stand alone
            self._emit(child, [*qualifier, *(owner or []), name], in_class=False)

    def _emit_class(self, d: _Def, qualifier: list[str]) -> None:
        if d.node.type == "singleton_class" and qualifier:
            # Ruby's `class << self` is the class itself: its outline and methods go by the
            # class's name (`Cart.empty`), as `def self.empty` does
            *qualifier, name = qualifier
        else:
            name = self._plain_name(d.node)
        qualified = self._qualify(qualifier, name)
        start, end = self._extent(d.node)
        hidden: set[int] = set()
        for child in d.children:
            child_start, child_end = self._extent(child.node)
            keep_until = self._signature_end_row(child.node)
            hidden.update(range(max(keep_until, child_start) + 1, child_end + 1))
        rows = [r for r in range(start, end + 1) if r not in hidden]
        lines = self._lines(rows)
        signature = self._signature(d.node)
        if fits(lines, self.limits):
            self._add("class", name, qualified, lines, d.node, signature)
        else:
            for window in split_windows(lines, self.limits):
                self._add("window", name, qualified, window, None, signature)
        inner = [*qualifier, name]
        for child in d.children:
            self._emit(child, inner, in_class=True)

    def _emit_module_chunks(self) -> None:
        rows = [
            r for r in range(len(self.lines)) if r not in self.covered and self.lines[r].strip()
        ]
        if not rows:
            return
        name = PurePosixPath(self.path).stem
        for run in self._runs(rows):
            for window in split_windows(self._lines(run), self.limits):
                self._add("module", name, self.path, window, None, None, cover=False)

    def _runs(self, rows: list[int]) -> list[list[int]]:
        """Module rows cut where a definition lies between them, so each module chunk is
        one contiguous stretch of the file and its line range is exactly what it holds."""
        runs: list[list[int]] = []
        for row in rows:
            between = range(runs[-1][-1] + 1, row) if runs else range(0)
            if runs and not any(r in self.covered for r in between):
                runs[-1].extend([*between, row])  # blank lines inside a stretch belong to it
            else:
                runs.append([row])
        return runs

    def _add(
        self,
        chunk_type: str,
        name: str,
        qualified: str,
        lines: list[Line],
        node: Node | None,
        signature: str | None,
        cover: bool = True,
    ) -> None:
        segments = segments_of([n for n, _ in lines])
        if cover:
            for start, end in segments:
                self.covered.update(range(start - 1, end))
        self.chunks.append(
            chunk_from_lines(
                self.path,
                self.spec.name,
                chunk_type,
                name,
                qualified,
                lines,
                segments,
                signature=signature,
                docstring=self._docstring(node) if node is not None else None,
                references=self._references_in(segments, name),
            )
        )

    # -- finding definitions -------------------------------------------------------------

    def _definition_tree(self, captured: list[Node]) -> list[_Def]:
        defs = [d for d in (self._as_def(n) for n in captured) if d is not None]
        defs.sort(key=lambda d: (d.node.start_byte, -d.node.end_byte))
        roots: list[_Def] = []
        stack: list[_Def] = []
        for d in defs:
            while stack and stack[-1].node.end_byte <= d.node.start_byte:
                stack.pop()
            (stack[-1].children if stack else roots).append(d)
            stack.append(d)
        return roots

    def _as_def(self, node: Node) -> _Def | None:
        spec, kind = self.spec, node.type
        if kind in spec.bound_functions:
            value = bound_value(node)
            return _Def(node, "function") if value and value.type in spec.function_values else None
        if kind in spec.functions:
            return _Def(node, "function")
        if kind in spec.classes:
            # `struct point *p` names a type; only a specifier with a body defines one.
            if kind.endswith("_specifier") and node.child_by_field_name("body") is None:
                return None
            return _Def(node, "class")
        return _Def(node, "scope")

    def _outer(self, node: Node) -> Node:
        """The node whose range the definition takes: declaration statement, wrappers."""
        parent = node.parent
        if (
            node.type in self.spec.bound_functions
            and parent is not None
            and parent.type in {"lexical_declaration", "variable_declaration"}
            and parent.named_child_count == 1
        ):
            node = parent
        while node.parent is not None and node.parent.type in self.spec.wrappers:
            node = node.parent
        return node

    def _extent(self, node: Node) -> tuple[int, int]:
        """0-based first and last row of a definition, with the comments right above it."""
        outer = self._outer(node)
        start = outer.start_point.row
        while start > 0 and self.lines[start - 1].lstrip().startswith(self.spec.leading):
            start -= 1
        return start, _last_row(outer)

    # -- names -------------------------------------------------------------------------------

    def _text(self, node: Node | None) -> str:
        if node is None:
            return ""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "replace")

    def _plain_name(self, node: Node) -> str:
        named = node.child_by_field_name("name") or node.child_by_field_name("property")
        if named is None and node.type == "type_declaration":
            spec_node = next((c for c in node.named_children if c.type == "type_spec"), None)
            named = spec_node.child_by_field_name("name") if spec_node else None
        if named is None and node.type == "companion_object":
            return "Companion"
        if named is None and node.parent is not None and node.parent.type == "type_definition":
            declared = node.parent.child_by_field_name("declarator")  # typedef struct {..} T;
            if declared is not None and declared.type == "type_identifier":
                named = declared
        if named is None:
            named = next((c for c in node.named_children if "identifier" in c.type), None)
        return self._text(named) or "<anonymous>"

    def _function_name(self, node: Node) -> tuple[str, list[str] | None]:
        """The function's name, and the owner type for methods defined outside their class."""
        if node.type == "assignment_expression":
            return assigned_name(node, self._text)
        if node.type == "method_declaration" and self.spec.name == "go":
            receiver = node.child_by_field_name("receiver")
            owner = re.sub(r"[\s*&]|\[.*\]", "", self._receiver_type(receiver))
            return self._plain_name(node), [owner] if owner else None
        declarator = node.child_by_field_name("declarator")
        if declarator is None:
            return self._plain_name(node), None
        while declarator is not None and declarator.type != "function_declarator":
            declarator = declarator.child_by_field_name("declarator")
        target = declarator.child_by_field_name("declarator") if declarator else None
        text = self._text(target) or "<anonymous>"
        if target is not None and target.type == "qualified_identifier":
            parts = text.split("::")
            return parts[-1], parts[:-1]
        return text, None

    def _receiver_type(self, receiver: Node | None) -> str:
        if receiver is None:
            return ""
        param = next(
            (c for c in receiver.named_children if c.type == "parameter_declaration"), None
        )
        return self._text(param.child_by_field_name("type")) if param else ""

    def _scope_name(self, node: Node) -> str:
        if node.type == "impl_item":
            kind = re.sub(r"<.*>", "", self._text(node.child_by_field_name("type")))
            trait = node.child_by_field_name("trait")
            return f"impl {self._text(trait)} for {kind}" if trait else f"impl {kind}"
        return self._plain_name(node)

    def _file_scope(self, root: Node) -> list[str]:
        for child in root.named_children:
            if child.type in self.spec.file_scopes and child.child_by_field_name("body") is None:
                named = child.child_by_field_name("name") or (
                    child.named_children[0] if child.named_children else None
                )
                text = self._text(named).strip()
                return [text] if text else []
        return []

    def _qualify(self, qualifier: list[str], name: str) -> str:
        return self.spec.separator.join([*qualifier, name]) if qualifier else name

    # -- signature, docstring, references ------------------------------------------------

    def _body(self, node: Node) -> Node | None:
        if node.type in self.spec.bound_functions:
            value = bound_value(node)
            return value.child_by_field_name("body") if value is not None else None
        body = node.child_by_field_name("body")
        if body is None:
            body = next((c for c in node.named_children if c.type in BODY_TYPES), None)
        return body

    def _signature_end_row(self, node: Node) -> int:
        """Last row of a definition's signature: what a class chunk keeps of a member."""
        body = self._body(node)
        if body is None:
            return node.start_point.row
        before = body.prev_sibling
        while before is not None and before.is_extra:  # a comment between `:` and the block
            before = before.prev_sibling
        return before.end_point.row if before is not None else body.start_point.row

    def _signature(self, node: Node) -> str:
        body = self._body(node)
        end = body.start_byte if body is not None else node.end_byte
        head = self.source[node.start_byte : end].decode("utf-8", "replace")
        if body is None:
            head = head.split("\n", 1)[0]
        return _SPACE.sub(" ", head).strip()[:MAX_SIGNATURE]

    def _docstring(self, node: Node) -> str | None:
        body = self._body(node)
        if self.spec.name == "python" and body is not None and body.named_child_count:
            first = body.named_children[0]
            if first.type == "expression_statement" and first.named_children:
                literal = first.named_children[0]
                if literal.type == "string":
                    parts = [c for c in literal.named_children if c.type == "string_content"]
                    return "".join(self._text(c) for c in parts).strip() or None
        outer = self._outer(node)
        start, _ = self._extent(node)
        comments = "\n".join(
            line
            for line in self.lines[start : outer.start_point.row]
            if not line.lstrip().startswith(("#[", "@"))
        )
        return _COMMENT_MARKS.sub("", comments).strip() or None

    def _index_references(self, found: list[Node]) -> None:
        pairs = sorted((n.start_point.row, self._text(n)) for n in found)
        self._ref_rows = [row for row, _ in pairs]
        self._ref_names = [name for _, name in pairs]

    def _references_in(
        self, segments: tuple[tuple[int, int], ...], own_name: str
    ) -> tuple[str, ...]:
        names: set[str] = set()
        for start, end in segments:
            lo = bisect.bisect_left(self._ref_rows, start - 1)
            hi = bisect.bisect_right(self._ref_rows, end - 1)
            names.update(self._ref_names[lo:hi])
        names.discard(own_name)
        names.difference_update(IGNORED_REFERENCES)
        return tuple(sorted(n for n in names if len(n) > 1)[:MAX_REFERENCES])

    def _lines(self, rows: Iterator[int] | range | list[int]) -> list[Line]:
        return [(r + 1, self.lines[r]) for r in rows if r < len(self.lines)]


def _last_row(node: Node) -> int:
    """A node's last row; some grammars end a node at column 0 of the next row."""
    end = node.end_point
    return end.row - 1 if end.column == 0 and end.row > node.start_point.row else end.row
