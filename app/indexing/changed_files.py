"""A partial tree: only the files a range of commits changed (a push, read through
GitHub's compare API), fetched one by one, so an update downloads what it changed and
not the whole tree.

Unlike a whole tree, a file it does not list is unchanged, not deleted: deletions are
the ``removed`` paths (and changed paths that no longer exist at the commit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from app.indexing.archive import member_path
from app.indexing.source_tree import RepoConfig, TreeFile, pruned, repo_config_from


@dataclass
class ChangedFilesSource:
    name: str
    commit_sha: str
    changed: Sequence[str]  # added or modified at the commit (a rename's new path)
    removed: Sequence[str]  # deleted by the range (a rename's old path)
    fetch: Callable[[str], bytes | None]  # a file's bytes at the commit; None: not there
    config_bytes: bytes | None
    _missing: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.name

    def config(self) -> RepoConfig:
        return repo_config_from(self.config_bytes, f"{self.name}:.reviewbot.toml")

    def files(self, config: RepoConfig) -> Iterator[TreeFile]:
        for path in self.changed:
            if member_path(path, strip_top=False) != path:
                yield TreeFile(path, 0, 0, _nothing, skipped="unsafe path")
                continue
            if pruned(tuple(path.split("/")[:-1])) or not config.wants(path):
                continue
            data = self.fetch(path)
            if data is None:
                self._missing.append(path)
                continue
            if len(data) > config.max_file_bytes:
                reason = f"too large ({len(data)} bytes > {config.max_file_bytes})"
                yield TreeFile(path, len(data), 0, _nothing, skipped=reason)
                continue
            yield TreeFile(path, len(data), 0, _bytes(data))

    def removed_paths(self) -> list[str]:
        return [*self.removed, *self._missing]

    def commit(self) -> str:
        return self.commit_sha


def _nothing() -> bytes:
    return b""


def _bytes(data: bytes) -> Callable[[], bytes]:
    return lambda: data
