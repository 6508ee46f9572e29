"""Sibling detection per language, on small real-looking repositories indexed for real:
overrides and sibling classes (Python bases, TypeScript ``extends``/``implements``),
implementations of one Go interface (exported or not), and the other half of a pair."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from sqlalchemy import Engine, text

from app.diff.changed import ChangedFunction, changed_functions
from app.diff.parse import parse_diff
from app.retrieval.candidates import stale_chunk_ids
from app.retrieval.hierarchy import overridden, overriding
from app.retrieval.links import linked_callers, linked_definitions
from app.retrieval.siblings import sibling_chunks
from tests.gitrepo import GitRepo
from tests.support.indexing import index_tree

PY_BASE = '''import abc


class Transport(abc.ABC):
    @abc.abstractmethod
    def handle_request(self, request):
        """Send one request."""
'''
PY_HTTP = """from .base import Transport


class HTTPTransport(Transport):
    def handle_request(self, request):
        return self.pool.send(request)

    def close(self):
        self.pool.close()
"""
PY_MOCK = """from transports.base import Transport


class MockTransport(Transport):
    def handle_request(self, request):
        return self.handler(request)
"""
PY_CODEC = """def encode_user(user):
    return {"name": user.name}


def decode_user(data):
    return User(data["name"])
"""
GO_CORE = """package zapcore

type Encoder interface {
	Clone() Encoder
	EncodeEntry(Entry) (string, error)
}
"""
GO_JSON = """package zapcore

type jsonEncoder struct{ spaced bool }

func (enc *jsonEncoder) Clone() Encoder { return enc }

func (enc *jsonEncoder) EncodeEntry(ent Entry) (string, error) {
	return "{" + ent.Message + "}", nil
}
"""
GO_CONSOLE = """package zapcore

type consoleEncoder struct{ *jsonEncoder }

func (c consoleEncoder) Clone() Encoder { return c }

func (c consoleEncoder) EncodeEntry(ent Entry) (string, error) {
	return ent.Message, nil
}
"""
GO_OTHER = """package zapcore

type levelFilter struct{}

func (l levelFilter) EncodeEntry(ent Entry) (string, error) { return "", nil }
"""
TS_STORE = """export interface Store {
  get(key: string): string | undefined
  set(key: string, value: string): void
}
"""
TS_MEMORY = """import { Store } from './store'

export class MemoryStore implements Store {
  private data = new Map<string, string>()
  get(key: string) { return this.data.get(key) }
  set(key: string, value: string) { this.data.set(key, value) }
}
"""
TS_DISK = """import { Store } from './store'

export class DiskStore implements Store {
  get(key: string) { return readFile(key) }
  set(key: string, value: string) { writeFile(key, value) }
}
"""


#: A Java project whose calls go through an interface and a base class's hook.
DISPATCH = Path(__file__).parents[1] / "data" / "dispatch" / "java"
ACME = "src/main/java/com/acme/"


def _java(*names: str) -> dict[str, str]:
    """Files of the ``DISPATCH`` project by their paths under com/acme/."""
    return {ACME + name: (DISPATCH / ACME / name).read_text() for name in names}


def _changed(
    engine: Engine, tmp_path: Path, files: dict[str, str], path: str, new: str
) -> tuple[int, list[ChangedFunction], list[int]]:
    """Index ``files``, change ``path`` to ``new``: the repository, what changed, and the
    stale chunks a retrieval leaves out."""
    repo = GitRepo(tmp_path / "repo")
    for name, content in files.items():
        repo.write(name, content)
    repo.commit("Start")
    index_tree(engine, repo.root, "repo")
    repo.write(path, new)
    diffs = parse_diff(repo.diff("HEAD"))
    old = repo.git("show", f"HEAD:{path}")
    changed = changed_functions(
        diffs, lambda p, side: old if side == "old" else (repo.root / p).read_bytes()
    )
    with engine.begin() as conn:
        repo_id = conn.execute(text("SELECT id FROM repositories")).scalar_one()
        exclude = stale_chunk_ids(conn, repo_id, changed, diffs)
    return repo_id, changed, exclude


def _names(engine: Engine) -> dict[int, str]:
    with engine.begin() as conn:
        return dict(conn.execute(text("SELECT id, qualified_name FROM code_chunks")).all())


def _siblings(
    engine: Engine, tmp_path: Path, files: dict[str, str], path: str, new: str
) -> dict[str, str]:
    """The siblings of what changed, as qualified name -> kind."""
    repo_id, changed, exclude = _changed(engine, tmp_path, files, path, new)
    with engine.begin() as conn:
        found = sibling_chunks(conn, repo_id, changed, exclude, 20)
    names = _names(engine)
    return {names[h.chunk_id]: h.kind for hits in found for h in hits}


def _callers(
    engine: Engine, tmp_path: Path, files: dict[str, str], path: str, new: str
) -> tuple[dict[str, float], dict[str, float]]:
    """The callers of what changed (qualified name -> score), through the types its
    class extends or implements, then without them."""
    repo_id, changed, exclude = _changed(engine, tmp_path, files, path, new)
    with engine.begin() as conn:
        declared = overridden(conn, repo_id, changed)
        through = linked_callers(conn, repo_id, changed, exclude, 20, declared)
        direct = linked_callers(conn, repo_id, changed, exclude, 20)
    names = _names(engine)
    return (
        {names[h.chunk_id]: h.score for hits in through for h in hits},
        {names[h.chunk_id]: h.score for hits in direct for h in hits},
    )


def test_python_overrides_and_sibling_classes(engine: Engine, tmp_path: Path) -> None:
    files = {
        "transports/__init__.py": "",
        "transports/base.py": PY_BASE,
        "transports/http.py": PY_HTTP,
        "transports/mock.py": PY_MOCK,
    }
    changed = PY_HTTP.replace("self.pool.send(request)", "self.pool.send(request, timeout=5)")
    found = _siblings(engine, tmp_path, files, "transports/http.py", changed)
    assert found == {
        "Transport.handle_request": "overrides",  # the abstract method it implements
        "MockTransport.handle_request": "namesake",  # the same method of a sibling class
    }


def test_python_the_other_half_of_a_pair(engine: Engine, tmp_path: Path) -> None:
    changed = PY_CODEC.replace('{"name": user.name}', '{"name": user.name, "age": user.age}')
    found = _siblings(engine, tmp_path, {"codec.py": PY_CODEC}, "codec.py", changed)
    assert found == {"decode_user": "pair"}


def test_go_implementations_of_one_interface_exported_or_not(
    engine: Engine, tmp_path: Path
) -> None:
    files = {
        "zapcore/encoder.go": GO_CORE,
        "zapcore/json_encoder.go": GO_JSON,
        "zapcore/console_encoder.go": GO_CONSOLE,
        "zapcore/filter.go": GO_OTHER,
    }
    changed = GO_JSON.replace('"{" + ent.Message + "}"', '"{" + ent.Message + ent.Level + "}"')
    found = _siblings(engine, tmp_path, files, "zapcore/json_encoder.go", changed)
    assert found == {
        "zapcore.consoleEncoder.EncodeEntry": "implements",
        "zapcore.Encoder": "implements",  # the interface itself
        # levelFilter has EncodeEntry but not Clone: not an Encoder, not a sibling
    }


def test_typescript_classes_implementing_one_interface(engine: Engine, tmp_path: Path) -> None:
    files = {"src/store.ts": TS_STORE, "src/memory.ts": TS_MEMORY, "src/disk.ts": TS_DISK}
    changed = TS_DISK.replace("writeFile(key, value)", "writeFile(key, value, 'utf8')")
    found = _siblings(engine, tmp_path, files, "src/disk.ts", changed)
    assert found == {
        "MemoryStore.set": "namesake",  # implements the same interface
        "DiskStore.get": "pair",  # set's other half, in its own class
        "MemoryStore.get": "pair",  # and in a sibling class (weighed less: another file)
    }


RB_BASE = """module Shop
  class Pricing
    def total(items)
      raise NotImplementedError
    end
  end
end
"""
RB_RETAIL = """require_relative "pricing"

module Shop
  class Retail < Pricing
    def total(items)
      items.sum(&:price)
    end
  end
end
"""
RB_WHOLESALE = """require_relative "pricing"

module Shop
  class Wholesale < Pricing
    def total(items)
      items.sum(&:price) * 0.9
    end
  end
end
"""
PHP_RETAIL = """<?php
namespace Shop;

class Retail extends Pricing {
    public function total(array $items): int { return array_sum($items); }
}
"""
PHP_WHOLESALE = """<?php
namespace Shop;

class Wholesale extends Pricing {
    public function total(array $items): int { return intdiv(array_sum($items) * 9, 10); }
}
"""
PHP_BASE = """<?php
namespace Shop;

abstract class Pricing {
    public function total(array $items): int { return 0; }
}
"""
CPP_SHAPES = """#pragma once

namespace geo {

class Shape {
 public:
  virtual double area() const { return 0; }
};

class Square : public Shape {
 public:
  double area() const override { return side * side; }
  double side;
};

class Circle : public Shape {
 public:
  double area() const override { return 3.14 * r * r; }
  double r;
};

}  // namespace geo
"""


def test_ruby_php_and_cpp_methods_in_a_class_hierarchy(engine: Engine, tmp_path: Path) -> None:
    """Languages whose qualified names join with ``::`` (``Shop::Retail::total``) find
    the method they override and the sibling classes' as Python does."""
    ruby = {"lib/pricing.rb": RB_BASE, "lib/retail.rb": RB_RETAIL, "lib/wholesale.rb": RB_WHOLESALE}
    changed = RB_RETAIL.replace("items.sum(&:price)", "items.sum(&:price).round(2)")
    assert _siblings(engine, tmp_path / "rb", ruby, "lib/retail.rb", changed) == {
        "Shop::Pricing::total": "overrides",
        "Shop::Wholesale::total": "namesake",
    }
    php = {
        "src/Pricing.php": PHP_BASE,
        "src/Retail.php": PHP_RETAIL,
        "src/Wholesale.php": PHP_WHOLESALE,
    }
    changed = PHP_RETAIL.replace("return array_sum($items);", "return (int) array_sum($items);")
    found = _siblings(engine, tmp_path / "php", php, "src/Retail.php", changed)
    assert found == {"Shop::Pricing::total": "overrides", "Shop::Wholesale::total": "namesake"}
    changed = CPP_SHAPES.replace("side * side", "side * side * 1.0")
    found = _siblings(
        engine, tmp_path / "cpp", {"geo/shapes.h": CPP_SHAPES}, "geo/shapes.h", changed
    )
    assert found == {"geo::Shape::area": "overrides", "geo::Circle::area": "namesake"}


def _callees(
    engine: Engine, tmp_path: Path, files: dict[str, str], path: str, new: str
) -> tuple[dict[str, float], dict[str, float]]:
    """What the change calls (qualified name -> score), then what overrides or
    implements it."""
    repo_id, changed, exclude = _changed(engine, tmp_path, files, path, new)
    with engine.begin() as conn:
        called = linked_definitions(conn, repo_id, changed, exclude, 20)
        overriders = overriding(conn, repo_id, called, exclude, 20)
    names = _names(engine)
    return (
        {names[h.chunk_id]: h.score for hits in called for h in hits},
        {names[h.chunk_id]: h.score for hits in overriders for h in hits},
    )


def test_a_call_through_an_interface_reaches_its_implementations(
    engine: Engine, tmp_path: Path
) -> None:
    """`store.get(..)` in a changed `Cache.load` calls `Store.get`, and runs an
    implementation of it: each is offered, shared out when there are two."""
    files = _java("store/Store.java", "store/DiskStore.java", "app/Cache.java")
    path = ACME + "app/Cache.java"
    changed = files[path].replace("store.get(key)", "store.get(key.trim())")
    called, overriders = _callees(engine, tmp_path / "one", files, path, changed)
    assert set(overriders) == {"DiskStore.get"}
    # the interface's method as surely as it is linked, times the `implements` link
    assert 0.5 * called["Store.get"] < overriders["DiskStore.get"] <= called["Store.get"]
    files |= _java("store/MemoryStore.java")
    _, two = _callees(engine, tmp_path / "two", files, path, changed)
    assert two == {
        "DiskStore.get": pytest.approx(overriders["DiskStore.get"] / math.sqrt(2)),
        "MemoryStore.get": pytest.approx(overriders["DiskStore.get"] / math.sqrt(2)),
    }


def test_a_call_through_an_interface_or_a_base_class_finds_the_changed_method(
    engine: Engine, tmp_path: Path
) -> None:
    """`store.get(..)` with `store` typed `Store` calls `DiskStore.get` when that is the
    only implementation; `Job.run` calls the `execute` hook `Backup` implements."""
    files = _java(
        "store/Store.java",
        "store/DiskStore.java",
        "app/Cache.java",
        "jobs/Job.java",
        "jobs/Backup.java",
    )
    path = ACME + "store/DiskStore.java"
    changed = files[path].replace("read(key)", "read(key.trim())")
    through, direct = _callers(engine, tmp_path / "one", files, path, changed)
    alone = through["Cache.load"]
    assert alone > 0.5  # as sure as the `implements` and the typed field
    assert direct.get("Cache.load", 0.0) < 0.3  # before: at most a bare name's guess
    hook = ACME + "jobs/Backup.java"
    edited = files[hook].replace("copy()", "copy(true)")
    through, _ = _callers(engine, tmp_path / "hook", files, hook, edited)
    assert through["Job.run"] > 0.5  # the base class's own call to its hook counts

    # with a second implementation, a call through the interface may reach either
    files |= _java("store/MemoryStore.java")
    shared, _ = _callers(engine, tmp_path / "two", files, path, changed)
    assert shared["Cache.load"] == pytest.approx(alone / math.sqrt(2))
