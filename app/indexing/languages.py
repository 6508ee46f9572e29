"""Which languages the chunker understands, and how each one spells a definition.

One ``LanguageSpec`` per language: its grammar wheel, the file names that select it,
the node types that are functions, classes and name scopes, and a tree-sitter query
for the names a chunk calls or uses. Adding a language means adding one entry here
(and a test file under tests/unit/chunker_samples/).
"""

from __future__ import annotations

import functools
import importlib
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from tree_sitter import Language, Parser, Query

from app.indexing.assigned_names import FUNCTION_VALUES

C_COMMENTS = ("//", "/*", "*")


@dataclass(frozen=True)
class LanguageSpec:
    """How one language's syntax tree maps onto chunks."""

    name: str
    module: str  # the grammar wheel's module
    entry: str  # its function returning the language pointer
    extensions: tuple[str, ...]
    functions: frozenset[str]  # node types of functions and methods
    classes: frozenset[str]  # classes, structs, interfaces, traits, enums, records
    references: str  # query: @name captures of called and used names
    scopes: frozenset[str] = frozenset()  # qualify names but are no chunk: namespace, impl
    member_scopes: frozenset[str] = frozenset()  # scopes whose functions are methods: impl
    wrappers: frozenset[str] = frozenset()  # take a definition's place: decorators, export
    bound_functions: frozenset[str] = frozenset()  # `const f = () => ...` declarators
    function_values: frozenset[str] = frozenset()  # value types that make a bound function
    # lines starting so, right above a definition, belong to it (doc comments, attributes)
    leading: tuple[str, ...] = C_COMMENTS
    file_scopes: frozenset[str] = frozenset()  # `package x` statements that qualify the file
    separator: str = "."
    filenames: tuple[str, ...] = ()
    interpreters: tuple[str, ...] = ()  # shebang program names

    @functools.cached_property
    def language(self) -> Language:
        return Language(getattr(importlib.import_module(self.module), self.entry)())

    @functools.cached_property
    def query(self) -> Query:
        """One query for a single pass over the tree: ``@def`` definitions, ``@name`` references."""
        kinds = sorted(self.functions | self.classes | self.scopes | self.bound_functions)
        definitions = "[" + " ".join(f"({k})" for k in kinds) + "] @def"
        return Query(self.language, definitions + "\n" + self.references)

    def parser(self) -> Parser:
        return Parser(self.language)


_JS_FUNCTIONS = frozenset(
    {"function_declaration", "generator_function_declaration", "method_definition"}
)
_JS_REFERENCES = """
(call_expression function: [(identifier) @name (member_expression property: (property_identifier) @name)])
(new_expression constructor: [(identifier) @name (member_expression property: (property_identifier) @name)])
"""
_TS_REFERENCES = _JS_REFERENCES + "(type_identifier) @name\n"
_JS_WRAPPERS = frozenset({"export_statement"})
_TS_BOUND = frozenset({"variable_declarator", "public_field_definition"})
_TS_CLASSES = frozenset(
    {
        "class_declaration",
        "abstract_class_declaration",
        "interface_declaration",
        "enum_declaration",
        "type_alias_declaration",
    }
)

LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        name="python",
        module="tree_sitter_python",
        entry="language",
        extensions=(".py", ".pyi", ".pyw"),
        functions=frozenset({"function_definition"}),
        classes=frozenset({"class_definition"}),
        wrappers=frozenset({"decorated_definition"}),
        leading=("#",),
        references="""
        (call function: [(identifier) @name (attribute attribute: (identifier) @name)])
        (type (identifier) @name)
        """,
        filenames=("SConstruct", "SConscript"),
        interpreters=("python", "python3", "python2", "pypy", "pypy3"),
    ),
    LanguageSpec(
        name="javascript",
        module="tree_sitter_javascript",
        entry="language",
        extensions=(".js", ".jsx", ".mjs", ".cjs"),
        classes=frozenset({"class_declaration"}),
        references=_JS_REFERENCES,
        interpreters=("node", "nodejs", "deno", "bun"),
        functions=_JS_FUNCTIONS,
        wrappers=_JS_WRAPPERS,
        # `exports.f = function`, `Router.prototype.f = function`: CommonJS defines so
        bound_functions=frozenset(
            {"variable_declarator", "field_definition", "assignment_expression"}
        ),
        function_values=FUNCTION_VALUES,
    ),
    LanguageSpec(
        name="typescript",
        module="tree_sitter_typescript",
        entry="language_typescript",
        extensions=(".ts", ".mts", ".cts"),
        classes=_TS_CLASSES,
        scopes=frozenset({"internal_module", "module"}),
        references=_TS_REFERENCES,
        interpreters=("ts-node", "tsx"),
        functions=_JS_FUNCTIONS,
        wrappers=_JS_WRAPPERS,
        bound_functions=_TS_BOUND,
        function_values=FUNCTION_VALUES,
    ),
    LanguageSpec(
        name="tsx",
        module="tree_sitter_typescript",
        entry="language_tsx",
        extensions=(".tsx",),
        classes=_TS_CLASSES,
        scopes=frozenset({"internal_module", "module"}),
        references=_TS_REFERENCES,
        functions=_JS_FUNCTIONS,
        wrappers=_JS_WRAPPERS,
        bound_functions=_TS_BOUND,
        function_values=FUNCTION_VALUES,
    ),
    LanguageSpec(
        name="go",
        module="tree_sitter_go",
        entry="language",
        extensions=(".go",),
        functions=frozenset({"function_declaration", "method_declaration"}),
        classes=frozenset({"type_declaration"}),
        file_scopes=frozenset({"package_clause"}),
        references="""
        (call_expression function: [(identifier) @name (selector_expression field: (field_identifier) @name)])
        (type_identifier) @name
        """,
    ),
    LanguageSpec(
        name="java",
        module="tree_sitter_java",
        entry="language",
        extensions=(".java",),
        functions=frozenset({"method_declaration", "constructor_declaration"}),
        classes=frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "enum_declaration",
                "record_declaration",
                "annotation_type_declaration",
            }
        ),
        references="""
        (method_invocation name: (identifier) @name)
        (type_identifier) @name
        """,
    ),
    LanguageSpec(
        name="rust",
        module="tree_sitter_rust",
        entry="language",
        extensions=(".rs",),
        functions=frozenset({"function_item", "function_signature_item"}),
        classes=frozenset({"struct_item", "enum_item", "trait_item", "union_item"}),
        scopes=frozenset({"impl_item", "mod_item"}),
        member_scopes=frozenset({"impl_item"}),
        leading=(*C_COMMENTS, "#["),
        separator="::",
        references="""
        (call_expression function: [(identifier) @name
                                    (field_expression field: (field_identifier) @name)
                                    (scoped_identifier name: (identifier) @name)])
        (macro_invocation macro: (identifier) @name)
        (type_identifier) @name
        """,
    ),
    LanguageSpec(
        name="ruby",
        module="tree_sitter_ruby",
        entry="language",
        extensions=(".rb", ".rake", ".gemspec", ".ru"),
        functions=frozenset({"method", "singleton_method"}),
        classes=frozenset({"class", "module", "singleton_class"}),
        separator="::",
        leading=("#",),
        references="""
        (call method: (identifier) @name)
        (scope_resolution name: (constant) @name)
        (superclass (constant) @name)
        """,
        filenames=("Rakefile", "Gemfile", "Guardfile", "Vagrantfile"),
        interpreters=("ruby",),
    ),
    LanguageSpec(
        name="c",
        module="tree_sitter_c",
        entry="language",
        extensions=(".c", ".h"),
        functions=frozenset({"function_definition"}),
        classes=frozenset({"struct_specifier", "union_specifier", "enum_specifier"}),
        separator="::",
        references="""
        (call_expression function: [(identifier) @name (field_expression field: (field_identifier) @name)])
        (type_identifier) @name
        """,
    ),
    LanguageSpec(
        name="cpp",
        module="tree_sitter_cpp",
        entry="language",
        extensions=(".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp"),
        functions=frozenset({"function_definition"}),
        classes=frozenset(
            {"class_specifier", "struct_specifier", "union_specifier", "enum_specifier"}
        ),
        scopes=frozenset({"namespace_definition"}),
        wrappers=frozenset({"template_declaration"}),
        separator="::",
        references="""
        (call_expression function: [(identifier) @name
                                    (field_expression field: (field_identifier) @name)
                                    (qualified_identifier name: (identifier) @name)])
        (type_identifier) @name
        """,
    ),
    LanguageSpec(
        name="csharp",
        module="tree_sitter_c_sharp",
        entry="language",
        extensions=(".cs",),
        functions=frozenset(
            {"method_declaration", "constructor_declaration", "local_function_statement"}
        ),
        classes=frozenset(
            {
                "class_declaration",
                "interface_declaration",
                "struct_declaration",
                "record_declaration",
                "enum_declaration",
            }
        ),
        scopes=frozenset({"namespace_declaration"}),
        file_scopes=frozenset({"file_scoped_namespace_declaration"}),
        references="""
        (invocation_expression function: [(identifier) @name (member_access_expression name: (identifier) @name)])
        (object_creation_expression type: (identifier) @name)
        (base_list (identifier) @name)
        """,
    ),
    LanguageSpec(
        name="php",
        module="tree_sitter_php",
        entry="language_php",
        extensions=(".php", ".phtml"),
        functions=frozenset({"function_definition", "method_declaration"}),
        classes=frozenset(
            {"class_declaration", "interface_declaration", "trait_declaration", "enum_declaration"}
        ),
        file_scopes=frozenset({"namespace_definition"}),
        separator="::",
        leading=(*C_COMMENTS, "#"),
        references="""
        (function_call_expression function: (name) @name)
        (member_call_expression name: (name) @name)
        (scoped_call_expression name: (name) @name)
        (object_creation_expression (name) @name)
        """,
        interpreters=("php",),
    ),
    LanguageSpec(
        name="kotlin",
        module="tree_sitter_kotlin",
        entry="language",
        extensions=(".kt", ".kts"),
        functions=frozenset({"function_declaration"}),
        classes=frozenset({"class_declaration", "object_declaration", "companion_object"}),
        file_scopes=frozenset({"package_header"}),
        references="""
        (call_expression (identifier) @name)
        (user_type (identifier) @name)
        """,
    ),
)

BY_NAME: dict[str, LanguageSpec] = {spec.name: spec for spec in LANGUAGES}
_BY_EXTENSION: dict[str, LanguageSpec] = {
    ext: spec for spec in LANGUAGES for ext in spec.extensions
}
_BY_FILENAME: dict[str, LanguageSpec] = {n: spec for spec in LANGUAGES for n in spec.filenames}
_BY_INTERPRETER: dict[str, LanguageSpec] = {
    i: spec for spec in LANGUAGES for i in spec.interpreters
}


#: C++ in a ``.h`` file: what C never writes at a line's start (a namespace, a template,
#: a class with a body, an access label) or on a line that is not a comment (``std::``).
#: A C header written for C++ callers (``extern "C"``), or one whose comments name C++'s
#: library, stays C.
_CPP_IN_HEADER = re.compile(
    rb"^[ \t]*(?:namespace\b[\w: \t]*\{|template[ \t]*<|class[ \t]+\w[^;]*?\{"
    rb"|(?:public|protected|private)[ \t]*:(?!:))"
    rb"|^(?![ \t]*(?://|/\*|\*))[^\n]*?\bstd::",
    re.MULTILINE,
)
#: How much of a file ``detect_language`` reads: a ``#!`` line, a ``.h`` file's C++.
HEAD_BYTES = 64 * 1024


def detect_language(path: str, head: bytes = b"") -> LanguageSpec | None:
    """The language of ``path``: by extension (a ``.h`` file is C++ when ``head``, the
    file's first ``HEAD_BYTES``, holds what only C++ writes), well-known name, then
    ``#!`` line in ``head``."""
    pure = PurePosixPath(path)
    suffix = pure.suffix.lower()
    if suffix == ".h" and _CPP_IN_HEADER.search(head[:HEAD_BYTES]):
        return BY_NAME["cpp"]
    spec = _BY_EXTENSION.get(suffix) or _BY_FILENAME.get(pure.name)
    if spec is not None or not head.startswith(b"#!"):
        return spec
    return _BY_INTERPRETER.get(_shebang_program(head))


def _shebang_program(head: bytes) -> str:
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words:
        return ""
    program = PurePosixPath(words[0]).name
    if program == "env":
        rest = [w for w in words[1:] if not w.startswith("-")]
        program = rest[0] if rest else ""
    return program.rstrip("0123456789.") if program.startswith("python") else program
