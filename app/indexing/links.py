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
- Java: single, on-demand and static imports, same-package types, constructors, bases, and
  methods through their receiver's declared type (``link_java.py``).
- Kotlin: imported types and functions (aliases too), the package's own, companion
  members and methods through their receiver's declared type (``link_kotlin.py``).
- C#: by name, qualified by the namespaces the file is in and uses (aliases, ``using
  static``, and the repository's ``global using`` directives, read at retrieval), members
  through their receiver's declared type, extension methods through the namespaces in
  scope (``link_csharp.py``).
- PHP: ``use`` (classes, functions, aliases, groups) and the file's namespace, members
  through ``$this``, ``self::``/``parent::`` and typed properties (``link_php.py``).
- Ruby: ``require``/``require_relative``, constants' methods (``Utils.escape``), bare
  calls through the class, its mixins and superclass (``link_ruby.py``).
- Rust: ``use`` paths to module files, ``pub use`` re-exports, ``Type::f`` and methods
  through their receiver's type (``link_rust.py``).
- C and C++: the files named as the included headers (``cstem``), this file's functions,
  and in C++ methods through their class, scope or receiver's type (``link_cfamily.py``).
- Everything else, and names no rule resolves: the bare name, at low confidence.

A target is not a row id but a place: a file, a module path suffix, a directory, a Go
import path. Retrieval joins it to ``code_chunks`` by symbol name, so a link follows its
target when the target's file is re-indexed, and only the file that holds a link must be
re-read when the link changes. Pure: no I/O.
"""

from __future__ import annotations

from tree_sitter import Node

from app.indexing.languages import LanguageSpec
from app.indexing.link_cfamily import CFamilyLinks
from app.indexing.link_csharp import EXTENSION, GLOBAL, GLOBAL_USING, CSharpLinks
from app.indexing.link_ecmascript import EcmaScriptLinks
from app.indexing.link_go import GoLinks
from app.indexing.link_java import JavaLinks
from app.indexing.link_kotlin import KotlinLinks
from app.indexing.link_model import (
    IMPORTED,
    LINK_VERSION,
    LOCAL,
    MAX_LINKS_PER_FILE,
    NAME_ONLY,
    PACKAGE,
    RECEIVER_GUESS,
    Extractor,
    Link,
    NameOnly,
    Segments,
    links_in,
    stem_of,
    with_bare_names,
)
from app.indexing.link_php import PhpLinks
from app.indexing.link_python import PythonLinks
from app.indexing.link_ruby import RubyLinks
from app.indexing.link_rust import RustLinks

__all__ = [
    "EXTENSION",
    "GLOBAL",
    "GLOBAL_USING",
    "IMPORTED",
    "LINK_VERSION",
    "LOCAL",
    "NAME_ONLY",
    "PACKAGE",
    "RECEIVER_GUESS",
    "Link",
    "Segments",
    "file_links",
    "links_in",
    "stem_of",
]

_EXTRACTORS: dict[str, type[Extractor]] = {
    "python": PythonLinks,
    "go": GoLinks,
    "typescript": EcmaScriptLinks,
    "tsx": EcmaScriptLinks,
    "javascript": EcmaScriptLinks,
    "java": JavaLinks,
    "rust": RustLinks,
    "kotlin": KotlinLinks,
    "csharp": CSharpLinks,
    "php": PhpLinks,
    "ruby": RubyLinks,
    "c": CFamilyLinks,
    "cpp": CFamilyLinks,
}


def file_links(
    path: str, root: Node, spec: LanguageSpec, within: Segments | None = None
) -> list[Link]:
    """Every link of one parsed file (or on the lines ``within``), in line order; names of
    other languages by name only."""
    extractor = _EXTRACTORS.get(spec.name, NameOnly)
    found = extractor(path, root, spec.language, within).run()
    if extractor.BY_NAME_TOO:  # never less than the bare names found before the rules
        found = with_bare_names(found) + NameOnly(path, root, spec.language, within).run()
    if within is not None:
        found = list(links_in(found, within))
    unique = sorted(
        set(found),
        key=lambda k: (
            k.line,
            k.name,
            -k.confidence,
            k.match,
            k.target or "",
            k.qualifier or "",
            k.kind,
        ),
    )  # a total order: the same links in the same order on every run
    return unique[:MAX_LINKS_PER_FILE]
