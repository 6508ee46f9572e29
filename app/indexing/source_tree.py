"""Which files of a source tree are indexed: .gitignore, .reviewbot.toml, size limits.

A tree reaches the indexer as a ``FileSource``: a directory on disk (``DirectorySource``)
or a tar stream (``app.indexing.archive``). Either yields ``TreeFile`` entries whose
bytes are read on demand, so a streamed archive is never written to disk.

``.reviewbot.toml`` (optional, at the tree's root)::

    [index]
    include = ["src/**", "lib/**"]     # only these (default: everything)
    exclude = ["docs/**", "**/*.snap"] # never these
    languages = ["python", "go"]       # only files in these languages (default: all)
    max_file_bytes = 500000            # default 1,000,000
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pathspec

from app.errors import ConfigError
from app.git import GitError, run_git
from app.indexing.files import DEFAULT_MAX_FILE_BYTES, VENDORED_DIRS
from app.indexing.languages import BY_NAME, detect_language

CONFIG_FILE = ".reviewbot.toml"
ALWAYS_PRUNED = frozenset({".git", ".hg", ".svn", "__pycache__", ".venv", ".tox", ".mypy_cache"})


@dataclass(frozen=True)
class RepoConfig:
    """The ``[index]`` table of ``.reviewbot.toml``."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    languages: frozenset[str] = frozenset()
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    _include_spec: pathspec.PathSpec | None = field(default=None, compare=False, repr=False)
    _exclude_spec: pathspec.PathSpec | None = field(default=None, compare=False, repr=False)

    def wants(self, path: str, head: bytes = b"") -> bool:
        """True when ``path`` passes include, exclude and language filters."""
        if self._include_spec is not None and not self._include_spec.match_file(path):
            return False
        if self._exclude_spec is not None and self._exclude_spec.match_file(path):
            return False
        if self.languages:
            spec = detect_language(path, head)
            # a ``.h`` file is C or C++ by its content, which a tree's walk has not read
            either = {"c", "cpp"} if path.lower().endswith(".h") and not head else set()
            return spec is not None and not self.languages.isdisjoint({spec.name} | either)
        return True


def config_table(text: str, source: str, name: str, keys: frozenset[str]) -> dict[str, object]:
    """One table of a ``.reviewbot.toml`` (empty when absent); ``ConfigError`` for invalid
    TOML, a table that is not one, or keys it does not know."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: invalid TOML ({exc})") from None
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: [{name}] must be a table")
    unknown = sorted(set(table) - keys)
    if unknown:
        raise ConfigError(f"{source}: unknown keys in [{name}]: {', '.join(unknown)}")
    return table


INDEX_KEYS = frozenset({"include", "exclude", "languages", "max_file_bytes"})


def parse_repo_config(text: str, source: str = CONFIG_FILE) -> RepoConfig:
    """Parse ``.reviewbot.toml``; raise ``ConfigError`` naming the problem."""
    table = config_table(text, source, "index", INDEX_KEYS)
    include = _string_list(table, "include", source)
    exclude = _string_list(table, "exclude", source)
    languages = _string_list(table, "languages", source)
    bad = sorted(set(languages) - set(BY_NAME))
    if bad:
        raise ConfigError(f"{source}: unknown languages {bad}; known: {sorted(BY_NAME)}")
    max_bytes = table.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)
    if not isinstance(max_bytes, int) or max_bytes <= 0:
        raise ConfigError(f"{source}: max_file_bytes must be a positive integer")
    return RepoConfig(
        include=include,
        exclude=exclude,
        languages=frozenset(languages),
        max_file_bytes=max_bytes,
        _include_spec=pathspec.GitIgnoreSpec.from_lines(include) if include else None,
        _exclude_spec=pathspec.GitIgnoreSpec.from_lines(exclude) if exclude else None,
    )


def _string_list(table: dict[str, object], key: str, source: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{source}: {key} must be a list of strings")
    return tuple(value)


def load_repo_config(root: Path) -> RepoConfig:
    path = root / CONFIG_FILE
    if not path.is_file():
        return RepoConfig()
    return parse_repo_config(path.read_text(encoding="utf-8"), str(path))


def repo_config_from(data: bytes | None, source: str) -> RepoConfig:
    """``.reviewbot.toml`` from its bytes (None: the file does not exist)."""
    if data is None:
        return RepoConfig()
    return parse_repo_config(data.decode("utf-8", errors="replace"), source)


@dataclass(frozen=True)
class TreeFile:
    """A file found in the tree: its POSIX path relative to the root, size and mtime.

    ``read`` returns its bytes; for a streamed archive it is valid only until the next
    entry is taken. ``skipped`` names why an entry is not a file to index (a link, a
    device, an unsafe path, too large to read): such entries have nothing to read.
    """

    path: str
    size: int
    mtime_ns: int
    read: Callable[[], bytes] = field(compare=False, repr=False)
    skipped: str | None = None


class FileSource(Protocol):
    """Where an index run reads a tree from."""

    @property
    def label(self) -> str:
        """What the report calls the tree (a folder, ``repo@sha``)."""
        ...

    def config(self) -> RepoConfig:
        """The tree's ``.reviewbot.toml``, or the defaults."""
        ...

    def files(self, config: RepoConfig) -> Iterable[TreeFile]:
        """The tree's files; an iterator is closed by the caller when it stops early."""
        ...

    def commit(self) -> str | None:
        """The commit the tree is at, when known (after ``files`` was consumed)."""
        ...

    def removed_paths(self) -> Sequence[str] | None:
        """None for a whole tree: a known file it does not list was deleted. A partial
        tree (the files a push changed) names its deletions instead (after ``files``)."""
        ...


@dataclass(frozen=True)
class DirectorySource:
    """A folder on disk (the CLI's ``reviewbot index DIR``)."""

    root: Path

    @property
    def label(self) -> str:
        return str(self.root)

    def config(self) -> RepoConfig:
        return load_repo_config(self.root)

    def files(self, config: RepoConfig) -> list[TreeFile]:
        return list(walk_tree(self.root, config))

    def commit(self) -> str | None:
        return git_head(self.root)

    def removed_paths(self) -> None:
        return None


def git_head(root: Path) -> str | None:
    """The commit checked out at ``root``, when it is a git work tree."""
    try:
        sha = run_git(root, "rev-parse", "HEAD", timeout=10).decode().strip()
    except GitError:
        return None
    return sha if len(sha) in (40, 64) else None


def pruned(parts: tuple[str, ...]) -> bool:
    """True for paths inside VCS, cache or vendored folders (never indexed)."""
    return any(p in ALWAYS_PRUNED or p in VENDORED_DIRS for p in parts)


def walk_tree(root: Path, config: RepoConfig) -> Iterator[TreeFile]:
    """Files under ``root`` that are not ignored, in sorted order.

    Honours every ``.gitignore`` in the tree (each applies to its own folder and below),
    skips VCS folders and vendored folders, and applies ``config``'s filters. Symbolic
    links are not followed.
    """
    ignores: list[tuple[str, pathspec.PathSpec]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        ignores = [(base, spec) for base, spec in ignores if rel_dir.startswith(base)]
        gitignore = Path(dirpath) / ".gitignore"
        if gitignore.is_file():
            lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
            ignores.append((rel_dir, pathspec.GitIgnoreSpec.from_lines(lines)))
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in ALWAYS_PRUNED
            and d not in VENDORED_DIRS
            and not os.path.islink(os.path.join(dirpath, d))
            and not _ignored(ignores, rel_dir + d + "/")
        )
        for name in sorted(filenames):
            rel = rel_dir + name
            full = Path(dirpath) / name
            if full.is_symlink() or _ignored(ignores, rel) or not config.wants(rel):
                continue
            stat = full.stat()
            yield TreeFile(rel, stat.st_size, stat.st_mtime_ns, full.read_bytes)


def _ignored(ignores: list[tuple[str, pathspec.PathSpec]], rel: str) -> bool:
    return any(spec.match_file(rel[len(base) :]) for base, spec in ignores)
