"""Import-aware links per language, on code shaped like the projects it was built for."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from app.diff.changed import changed_functions
from app.diff.parse import parse_diff
from app.indexing.chunker import parse_source
from app.indexing.files import chunk_file, parse_file
from app.indexing.languages import BY_NAME
from app.indexing.links import NAME_ONLY, RECEIVER_GUESS, Link, file_links, links_in, stem_of

FIXTURES = Path(__file__).parents[1] / "data" / "links"


def _links(path: str, source: str) -> list[Link]:
    return list(chunk_file(path, source.encode()).links)


def _targets(links: list[Link], name: str, kind: str = "use") -> set[tuple[str, str | None]]:
    return {(k.match, k.target) for k in links if k.name == name and k.kind == kind}


PYTHON = """\
from __future__ import annotations

import typing
import httpx._exceptions as exc
from ._utils import to_bytes, guess_content_type as guess
from .. import config
from ._models import Request


class Client(BaseClient):
    def send(self, request: Request) -> None:
        body = to_bytes(request.content)
        kind = guess(request.url)
        self._transport.handle(request)
        config.load_settings()
        self.build_request(kind)
        raise exc.TransportError(body)

    def build_request(self, kind):
        return helper(kind)


def helper(value):
    return value.strip()
"""


def test_python_imports_relative_aliased_and_self() -> None:
    links = _links("httpx/_client.py", PYTHON)
    # `from ._utils import to_bytes`: the sibling module, as file or package
    assert ("module", "httpx/_utils.py") in _targets(links, "to_bytes")
    # aliased: the link names the definition, not the alias
    assert ("module", "httpx/_utils.py") in _targets(links, "guess_content_type")
    assert not _targets(links, "guess")
    # `from .. import config`: config may be a module of the parent package, whose
    # load_settings is a module-level function (no class qualifier)
    load = {(k.target, k.qualifier) for k in links if k.name == "load_settings"}
    assert ("config.py", None) in load and ("__init__.py", "config") in load
    # `import httpx._exceptions as exc`: absolute, matched by path suffix
    assert _targets(links, "TransportError") == {
        ("module", "httpx/_exceptions.py"),
        ("module", "httpx/_exceptions/__init__.py"),
    }
    # `self.build_request`: this file, in the enclosing class
    build = [k for k in links if k.name == "build_request" and k.kind == "use"]
    assert [(k.match, k.target, k.qualifier) for k in build] == [
        ("file", "httpx/_client.py", "Client")
    ]
    # a same-file function; a method on an unknown value only by name
    assert _targets(links, "helper") == {("file", "httpx/_client.py")}
    assert {k.confidence for k in links if k.name == "strip"} == {NAME_ONLY}
    # import lines are import links, which retrieval follows through re-exports
    assert ("module", "httpx/_utils.py") in _targets(links, "to_bytes", kind="import")


INHERITING = """\
from .base import Base
from . import mixins


class Local:
    def helper(self):
        pass


class Child(Base, mixins.Audit, Local):
    def own(self):
        return 1

    def run(self):
        self.own()
        self.closing
        self.helper()
        return super().own()
"""


def test_python_inherited_and_super_calls_reach_the_base_classes() -> None:
    links = _links("pkg/child.py", INHERITING)

    def places(name: str) -> set[tuple[str | None, str | None]]:
        return {(k.target, k.qualifier) for k in links if k.name == name and k.match != "name"}

    # `self.helper()`, which Child does not define: its own class's, or each base's where
    # the file imports or defines it (`mixins.Audit`: the package's, or its submodule's)
    assert places("helper") == {
        ("pkg/child.py", "Child"),
        ("pkg/base.py", "Base"),
        ("pkg/base/__init__.py", "Base"),
        ("pkg/__init__.py", "Audit"),
        ("pkg/mixins.py", "Audit"),
        ("pkg/mixins/__init__.py", "Audit"),
        ("pkg/child.py", "Local"),
    }
    # `self.own()` on line 15, which Child defines: its own only; `super().own()` on line
    # 18: the bases' only, and its bare name (a base the file cannot place)
    assert {(k.target, k.qualifier) for k in links if k.name == "own" and k.line == 15} == {
        ("pkg/child.py", "Child")
    }
    supers = {(k.target, k.qualifier) for k in links if k.name == "own" and k.line == 18}
    assert ("pkg/base.py", "Base") in supers and (None, None) in supers
    assert ("pkg/child.py", "Child") not in supers
    # an attribute read, not a call: the class's own only
    assert places("closing") == {("pkg/child.py", "Child")}


def test_ecmascript_inherited_and_super_calls_reach_the_class_it_extends() -> None:
    typescript = _links(
        "src/child.ts",
        'import { Base } from "./base";\n'
        "class Local { helper() {} }\n"
        "class Child extends Base implements Shape {\n"
        "  run() { this.run(); this.save(); super.close(); this.size; }\n"
        "}\n"
        "class Third extends Local { go() { this.helper(); } }\n",
    )

    def places(links: list[Link], name: str) -> set[tuple[str | None, str | None]]:
        return {(k.target, k.qualifier) for k in links if k.name == name and k.match != "name"}

    # `this.save()`, which Child does not define: the imported base's too
    assert places(typescript, "save") == {("src/child.ts", "Child"), ("src/base", "Base")}
    # `super.close()`: the base's only, and by name; `this.run()`: Child's own only
    assert places(typescript, "close") == {("src/base", "Base")}
    assert places(typescript, "run") == {("src/child.ts", "Child")}
    # a base defined in the file; a property read is no call
    assert ("src/child.ts", "Local") in places(typescript, "helper")
    assert places(typescript, "size") == {("src/child.ts", "Child")}
    javascript = _links(
        "lib/child.js",
        'const { Base } = require("./base");\n'
        "class Child extends Base { run() { return super.close(); } }\n",
    )
    assert places(javascript, "close") == {("lib/base", "Base")}


def test_python_links_of_a_chunk_are_those_on_its_lines() -> None:
    result = chunk_file("httpx/_client.py", PYTHON.encode())
    send = next(c for c in result.chunks if c.qualified_name == "Client.send")
    names = {k.name for k in links_in(list(result.links), send.segments)}
    assert {"to_bytes", "guess_content_type", "handle", "build_request"} <= names
    assert "strip" not in names  # helper's body, not send's


GO = """\
package cobra

import (
	"fmt"
	"strings"

	flag "github.com/spf13/pflag"
	"github.com/spf13/cobra/internal/cc"
)

func (c *Command) InitDefaultHelpCmd() {
	if !c.HasSubCommands() {
		return
	}
	fmt.Println(strings.TrimSpace(c.Name()))
	CheckErr(cc.Helper(c.Flags()))
	var fs *flag.FlagSet
	other.Method()
	_ = Completion{}
}
"""


def test_go_packages_same_package_and_receivers() -> None:
    links = _links("command.go", GO)
    # a method through the receiver: this package, type Command
    has_sub = [k for k in links if k.name == "HasSubCommands"]
    assert [(k.match, k.target, k.qualifier) for k in has_sub] == [("dir", "", "Command")]
    # same package, any file of the directory
    assert _targets(links, "CheckErr") == {("dir", "")}
    assert _targets(links, "Completion") == {("dir", "")}
    # package-qualified through the import, aliased or not
    assert _targets(links, "Helper") == {("package", "github.com/spf13/cobra/internal/cc")}
    assert _targets(links, "FlagSet", kind="type") == {("package", "github.com/spf13/pflag")}
    assert _targets(links, "TrimSpace") == {("package", "strings")}
    # a method on another value: guessed in this package at lower confidence, and any
    # namesake at the lowest
    method = sorted((k.match, k.confidence) for k in links if k.name == "Method")
    assert method == [("dir", RECEIVER_GUESS), ("name", NAME_ONLY)]


TYPESCRIPT = """\
import { HTTPError } from '../errors/HTTPError.js';
import { mergeHeaders as merge } from './merge';
import * as constants from '../core/constants';
import type { Options } from '../types/options';
import ky from 'ky';

export class Ky {
  async fetch(options: Options): Promise<Response> {
    const headers = merge(options.headers);
    if (!this.isRetriable(constants.retryStatus)) {
      throw new HTTPError(headers);
    }
    return ky.get(normalize(options));
  }

  isRetriable(status: number): boolean {
    return status > 0;
  }
}

function normalize(options: Options) {
  return options;
}
"""


def test_typescript_es_imports_this_and_packages() -> None:
    links = _links("source/core/Ky.ts", TYPESCRIPT)
    # a relative import with a .js extension names the .ts module: matched by stem
    assert ("stem", "source/errors/HTTPError") in _targets(links, "HTTPError")
    assert ("stem", "source/utils/merge") not in _targets(links, "mergeHeaders")
    assert ("stem", "source/core/merge") in _targets(links, "mergeHeaders")
    assert ("stem", "source/core/constants") in _targets(links, "retryStatus")
    assert ("stem", "source/types/options") in _targets(links, "Options", kind="type")
    retriable = [k for k in links if k.name == "isRetriable" and k.kind == "use"]
    assert [(k.match, k.qualifier) for k in retriable] == [("file", "Ky")]
    assert _targets(links, "normalize") == {("file", "source/core/Ky.ts")}
    # a package import resolves to nothing in the repository
    assert not [k for k in links if k.name == "get" and k.match == "stem"]


PAGE = """\
import { Button } from './Button';
import * as UI from './ui';
import Card from './Card';

export function Page({ items }: { items: string[] }) {
  return (
    <div className="page">
      <Card title="x">
        {items.map((i) => <Button key={i} label={i} />)}
      </Card>
      <UI.Modal open>
        <Local />
      </UI.Modal>
    </div>
  );
}

const Local = () => <span>local</span>;
"""


def test_jsx_renders_components_as_calls() -> None:
    links = _links("src/Page.tsx", PAGE)
    # `<Button />` and `<Card>` of imported components, by the imports
    assert ("stem", "src/Button") in _targets(links, "Button")
    assert ("stem", "src/Card") in _targets(links, "Card")
    # `<UI.Modal>`: the namespace import's member, once (not again by `</UI.Modal>`)
    assert [(k.line, k.target) for k in links if k.name == "Modal"] == [(11, "src/ui")]
    # `<Local />`: this file's component
    assert _targets(links, "Local") == {("file", "src/Page.tsx")}
    # `<div>` and `<span>` are the platform's elements, linked to nothing
    assert not [k for k in links if k.name in {"div", "span"}]
    # a closing tag is no second use
    assert [k.line for k in links if k.name == "Card" and k.match == "stem"] == [8]


def test_typescript_reexports_are_import_links() -> None:
    links = _links(
        "src/index.ts",
        "export { ZodError, flatten } from './errors';\nexport * from './types';\n",
    )
    assert _targets(links, "ZodError", kind="import") == {("stem", "src/errors")}
    assert _targets(links, "*", kind="import") == {("stem", "src/types")}


def test_typescript_locals_are_not_module_definitions() -> None:
    source = (
        "export const limit = 10;\n"
        "function run(items: string[]) {\n"
        "  const response = fetchAll(items);\n"
        "  return response.slice(0, limit);\n"
        "}\n"
    )
    links = _links("src/run.ts", source)
    assert _targets(links, "limit") == {("file", "src/run.ts")}  # exported, top level
    assert not _targets(links, "response")  # a local of run()


def test_a_changed_window_uses_what_its_whole_function_uses() -> None:
    """A long function is cut into windows; a change in its last window still relies on
    the helpers its first lines call."""
    body = "".join(f"    step_{i} = {i}\n" for i in range(120))
    source = (
        "from .helpers import prepare, finish\n\n\n"
        f"def long_job(x):\n    prepare(x)\n{body}    return finish(x)\n"
    )
    new = source.replace("return finish(x)", "return finish(x, strict=True)")
    diff = "".join(
        line + "\n"
        for line in [
            "diff --git a/pkg/job.py b/pkg/job.py",
            "--- a/pkg/job.py",
            "+++ b/pkg/job.py",
            "@@ -126,1 +126,1 @@",
            "-    return finish(x)",
            "+    return finish(x, strict=True)",
        ]
    )
    sides = {"old": source.encode(), "new": new.encode()}
    changed = changed_functions(parse_diff(diff.encode()), lambda path, side: sides[side])
    windows = [c for c in changed if c.symbol_name == "long_job"]
    assert windows and all(c.chunk.chunk_type == "window" for c in windows)
    assert all(c.chunk.start_line > 5 for c in windows)  # prepare() is not in them
    for window in windows:
        assert {"prepare", "finish"} <= {k.name for k in window.uses}


def test_names_only_in_type_positions_are_type_links() -> None:
    python = _links(
        "pkg/a.py",
        "from .m import Basket, make\n\n\ndef f(b: Basket) -> Basket:\n    return make(b)\n",
    )
    assert {k.kind for k in python if k.name == "Basket"} == {"type", "import"}
    assert {k.kind for k in python if k.name == "make"} == {"use", "import"}
    go = _links(
        "pkg/a.go",
        "package pkg\n\nfunc F(c *Config) Result {\n\treturn Result{}\n}\n",
    )
    assert {k.kind for k in go if k.name == "Config"} == {"type"}
    assert {k.kind for k in go if k.name == "Result"} == {"type", "use"}  # T{} builds one
    ts = _links(
        "src/a.ts",
        "import { Opts, run } from './m';\nexport function f(o: Opts) { return run(o); }\n",
    )
    assert {k.kind for k in ts if k.name == "Opts" and k.match == "stem"} == {"type", "import"}
    assert {k.kind for k in ts if k.name == "run" and k.match == "stem"} == {"use", "import"}


def test_stems_drop_extension_and_index() -> None:
    assert stem_of("src/a/index.ts") == "src/a"
    assert stem_of("src/a/b.tsx") == "src/a/b"
    assert stem_of("src/a/b.d.ts") == "src/a/b"
    assert stem_of("src/a/b.mjs") == "src/a/b"


def test_a_language_without_rules_links_called_names_only() -> None:
    # every language the chunker knows has rules now; one added without them still links
    spec = replace(BY_NAME["c"], name="c-without-rules")
    source = b"int main(void) {\n    int x = parse_config(1);\n}\n"
    links = file_links("src/main.c", parse_source(source.decode(), spec), spec)
    assert [(k.name, k.match, k.confidence) for k in links] == [("parse_config", "name", NAME_ONLY)]


def test_files_without_a_grammar_have_no_links() -> None:
    assert _links("notes.txt", "call_me(1)\n") == []


def test_every_chunk_range_holds_exactly_its_code() -> None:
    lines = PYTHON.split("\n")
    for chunk in chunk_file("httpx/_client.py", PYTHON.encode()).chunks:
        if chunk.chunk_type == "class":  # header and member signatures: one line each
            assert chunk.raw_code.split("\n") == [
                lines[n - 1] for s, e in chunk.segments for n in range(s, e + 1)
            ]
            continue
        assert len(chunk.segments) == 1, chunk
        assert chunk.raw_code == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from("a.py a.go a.ts a.js a.tsx a.rs a.java a.kt a.cs a.rb a.php a.c a.cc".split()),
    st.lists(
        st.sampled_from(
            [
                *"abfmx_(){}.\"'#/*=,;:<>$\\ \n\t",
                *("import ", "from ", "self.", "this.", "use ", "using ", "namespace "),
                *("class ", "new ", "::", "->", "<?php ", '#include "', "require ", "extends "),
                *("mod ", "package ", "static "),
            ]
        ),
        max_size=300,
    ).map("".join),
)
def test_links_of_arbitrary_text_are_well_formed(path: str, source: str) -> None:
    lines = source.count("\n") + 1
    for link in _links(path, source):
        assert 1 <= link.line <= lines
        assert link.name and (len(link.name) > 1 or link.name == "*")
        assert 0 < link.confidence <= 1
        assert link.kind in {"use", "type", "import", "extends"}
        assert (link.target is None) == (link.match == "name")


SAMPLES = {
    "httpx/_client.py": PYTHON,
    "cmd/serve/main.go": GO,
    "src/client.ts": TYPESCRIPT,
    "src/main.rs": "fn main() {\n    let x = parse_config(1);\n    run(x)\n}\n",
    "src/cart.rs": (FIXTURES / "rust" / "src" / "cart.rs").read_text(),
    **{
        path: (FIXTURES / language / path).read_text()
        for language, path in [
            ("java", "src/main/java/com/acme/shop/Cart.java"),
            ("kotlin", "src/main/kotlin/com/acme/shop/Cart.kt"),
            ("csharp", "src/Acme.Shop/Cart.cs"),
            ("php", "src/Shop/Cart.php"),
            ("ruby", "lib/acme/shop/cart.rb"),
            ("c", "src/cart.c"),
            ("cpp", "src/cart.cc"),
        ]
    },
}


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(sorted(SAMPLES)),
    st.lists(st.tuples(st.integers(1, 60), st.integers(0, 12)), min_size=1, max_size=3),
)
def test_links_within_lines_are_the_whole_files_links_on_them(
    path: str, spans: list[tuple[int, int]]
) -> None:
    """A review looks for links only on its changed functions' lines; it must find exactly
    what the whole file's pass finds there (imports are still read from the whole file)."""
    parsed = parse_file(path, SAMPLES[path].encode())
    within = tuple(sorted((start, start + length) for start, length in spans))
    assert list(parsed.links(within)) == list(links_in(list(parsed.links()), within))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(1, 80), max_size=40),
    st.lists(st.tuples(st.integers(1, 80), st.integers(0, 20)), max_size=3),
)
def test_links_in_keeps_exactly_the_links_on_the_segments(
    lines: list[int], spans: list[tuple[int, int]]
) -> None:
    links = [Link(line, f"n{i}", "name", None, None, NAME_ONLY) for i, line in enumerate(lines)]
    segments = tuple((start, start + length) for start, length in spans)
    expected = tuple(k for k in links if any(s <= k.line <= e for s, e in segments))
    assert links_in(links, segments) == expected


def test_a_review_finds_links_only_on_its_changed_functions_lines() -> None:
    before, after = "body = to_bytes(request.content)", "body = to_bytes(request.content, 8)"
    new = PYTHON.replace(before, after)
    line = PYTHON.split("\n").index(f"        {before}") + 1
    diff = (
        "diff --git a/httpx/_client.py b/httpx/_client.py\n--- a/httpx/_client.py\n"
        f"+++ b/httpx/_client.py\n@@ -{line},1 +{line},1 @@\n"
        f"-        {before}\n+        {after}\n"
    )
    sides = {"old": PYTHON.encode(), "new": new.encode()}
    [changed] = changed_functions(parse_diff(diff.encode()), lambda path, side: sides[side])
    whole = list(parse_file("httpx/_client.py", new.encode()).links())
    assert changed.uses == links_in(whole, changed.chunk.segments)
    assert changed.symbol_name == "send"
    assert {"to_bytes", "guess_content_type", "build_request"} <= {k.name for k in changed.uses}
    assert "helper" not in {k.name for k in changed.uses}  # used by another function


def test_a_deleted_function_still_knows_what_it_used() -> None:
    old = (
        "from pkg.tax import vat\n\n\ndef price(x):\n    return vat(x)\n\n\n"
        "def keep():\n    return 1\n"
    )
    new = "def keep():\n    return 1\n"
    diff = (
        "diff --git a/shop.py b/shop.py\n--- a/shop.py\n+++ b/shop.py\n@@ -1,9 +1,2 @@\n"
        + "".join(f"-{line}\n" for line in old.splitlines()[:7])
        + " def keep():\n     return 1\n"
    )
    sides = {"old": old.encode(), "new": new.encode()}
    changed = changed_functions(parse_diff(diff.encode()), lambda path, side: sides[side])
    [deleted] = [c for c in changed if c.symbol_name == "price"]
    assert deleted.status == "deleted"
    assert "vat" in {k.name for k in deleted.uses}  # the old side's links, found on demand


def test_file_versions_are_read_concurrently_and_each_once() -> None:
    files = [f"m{n}.py" for n in range(12)]
    diff = "".join(
        f"diff --git a/{f} b/{f}\n--- a/{f}\n+++ b/{f}\n@@ -1,2 +1,2 @@\n"
        " def f():\n-    return 1\n+    return 2\n"
        for f in files
    )
    active, most, reads = 0, 0, []
    lock = threading.Lock()

    def read(path: str, side: str) -> bytes:
        nonlocal active, most
        with lock:
            active += 1
            most = max(most, active)
            reads.append((path, side))
        time.sleep(0.02)  # a GitHub request
        with lock:
            active -= 1
        return f"def f():\n    return {2 if side == 'new' else 1}\n".encode()

    changed = changed_functions(parse_diff(diff.encode()), read)
    assert [c.file_path for c in changed] == files  # in diff order
    assert sorted(reads) == sorted({(f, s) for f in files for s in ("old", "new")})
    assert most > 1


def test_base_classes_and_implemented_interfaces_are_extends_links() -> None:
    python = _links(
        "httpx/_client.py",
        "from ._base import BaseClient\nimport abc\n\n\n"
        "class Client(BaseClient, abc.ABC, metaclass=Meta):\n    pass\n",
    )
    assert _targets(python, "BaseClient", "extends") == {
        ("module", "httpx/_base.py"),
        ("module", "httpx/_base/__init__.py"),
    }
    assert _targets(python, "ABC", "extends")
    assert not _targets(python, "Meta", "extends")  # a keyword, not a base
    typescript = _links(
        "src/disk.ts",
        "import { BaseStore } from './base'\n"
        "export class DiskStore extends BaseStore<string> implements Store {}\n"
        "interface Cache extends Store {}\n",
    )
    assert ("stem", "src/base") in _targets(typescript, "BaseStore", "extends")
    assert _targets(typescript, "Store", "extends") == {("name", None)}
    assert not _targets(typescript, "string", "extends")  # a type argument


def test_go_interfaces_declare_their_methods_and_types_embed() -> None:
    links = _links(
        "zapcore/core.go",
        'package zapcore\n\nimport "go.uber.org/zap/internal/pool"\n\n'
        "type Core interface {\n\tLevelEnabler\n\tWrite(Entry, []Field) error\n"
        "\tSync() error\n}\n\n"
        'type ioCore struct {\n\tpool.Pooled\n\tLevelEnabler\n\tout WriteSyncer `json:"o"`\n}\n',
    )
    declared = {(k.name, k.qualifier) for k in links if k.kind == "declares"}
    assert declared == {("Write", "Core"), ("Sync", "Core")}
    assert _targets(links, "LevelEnabler", "extends") == {("dir", "zapcore")}
    assert _targets(links, "Pooled", "extends") == {("package", "go.uber.org/zap/internal/pool")}
    assert not _targets(links, "WriteSyncer", "extends")  # a named field


def test_go_calls_through_a_parameter_of_an_imported_type_link_to_its_package() -> None:
    links = _links(
        "middleware/logger.go",
        'package middleware\n\nimport "github.com/labstack/echo/v4"\n\n'
        "func Logger(next echo.HandlerFunc) echo.HandlerFunc {\n"
        "\treturn func(c echo.Context) error {\n\t\treq := c.Request()\n"
        "\t\treturn next(c)\n\t}\n}\n\n"
        "func bind(c *Context) { c.Bind(nil) }\n",
    )
    # c is an echo.Context: its Request is echo's (the interface's implementations)
    assert _targets(links, "Request") == {("package", "github.com/labstack/echo/v4")}
    # a parameter of this package's type: this package's Bind, not a guess
    bind = [k for k in links if k.name == "Bind"]
    assert [(k.match, k.target, k.confidence) for k in bind] == [("dir", "middleware", 0.8)]
