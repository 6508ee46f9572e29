"""Trees read from tar streams, member by member, with nothing unpacked to disk.

``git archive`` output (local reviews) and GitHub's tarballs (the App, spooled to a
temporary file as they download) both reach the indexer through ``archive_files``. Only
regular files are offered; links, devices and names that would leave the tree
(absolute, ``..``) are reported as skipped. Every archive is bounded: a member larger
than the index's ``max_file_bytes`` is skipped without being read, a GNU long name or a
pax header longer than ``MAX_HEADER_BYTES`` is refused before it is read (``tarfile``
would read it whole into memory), a sparse member is refused before its map is read,
and going over the total uncompressed size or the
member count raises ``ArchiveTooLarge`` before any more is decompressed. Every error of
``tarfile``, also one met while a member is read later, is an ``ArchiveError``.
"""

from __future__ import annotations

import posixpath
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from app.config import Settings
from app.errors import ReviewbotError
from app.git import LocalRepo
from app.git_archive import archive_as_committed, oversized_blobs
from app.indexing.source_tree import RepoConfig, TreeFile, pruned, repo_config_from

GIB = 1024**3
#: The longest GNU long name or pax header read: names are at most a few KiB in any
#: real repository, and tarfile reads these whole into memory.
MAX_HEADER_BYTES = 1024 * 1024


class ArchiveError(ReviewbotError):
    """The archive cannot be read."""


class ArchiveTooLarge(ArchiveError):
    """The archive is over a size or member-count limit."""


@dataclass(frozen=True)
class ArchiveLimits:
    """Caps on one archive (settings ``archive_max_bytes`` and ``archive_max_members``)."""

    max_total_bytes: int = 4 * GIB
    max_members: int = 500_000


def archive_limits(settings: Settings) -> ArchiveLimits:
    """The limits ``REVIEWBOT_ARCHIVE_MAX_BYTES`` and ``_MAX_MEMBERS`` set."""
    return ArchiveLimits(settings.archive_max_bytes, settings.archive_max_members)


@dataclass
class ArchiveStats:
    """What one pass over an archive saw; ``commit`` comes from git's pax header."""

    members: int = 0
    total_bytes: int = 0
    commit: str | None = None


class BoundedTarInfo(tarfile.TarInfo):
    """A tar header whose long-name and pax extensions are refused over
    ``MAX_HEADER_BYTES``, before ``tarfile`` reads them."""

    def _proc_gnulong(self, tarfile: tarfile.TarFile) -> tarfile.TarInfo:
        _refuse_long(self)
        return super()._proc_gnulong(tarfile)  # type: ignore[misc]

    def _proc_pax(self, tarfile: tarfile.TarFile) -> tarfile.TarInfo:
        _refuse_long(self)
        return super()._proc_pax(tarfile)  # type: ignore[misc]

    # Sparse members (old GNU and the three pax GNU.sparse formats): tarfile reads their
    # maps without a bound (one old-GNU extension block after another, or a 1.0 map of
    # any length), and no source tree has a sparse file. Refused before anything is read.
    def _proc_sparse(self, tarfile: tarfile.TarFile) -> tarfile.TarInfo:
        raise _sparse(self.name)

    def _proc_gnusparse_00(self, next: tarfile.TarInfo, *args: object) -> None:
        raise _sparse(next.name)

    def _proc_gnusparse_01(self, next: tarfile.TarInfo, *args: object) -> None:
        raise _sparse(next.name)

    def _proc_gnusparse_10(self, next: tarfile.TarInfo, *args: object) -> None:
        raise _sparse(next.name)


def _sparse(name: str) -> ArchiveError:
    return ArchiveError(
        f"the archive's member {name!r} is a sparse file, which no source tree holds;"
        " nothing more was read"
    )


def _refuse_long(header: tarfile.TarInfo) -> None:
    if header.size > MAX_HEADER_BYTES:
        raise ArchiveTooLarge(
            f"the archive has a {header.size}-byte long-name or pax header"
            f" (at most {MAX_HEADER_BYTES} are read); nothing more was read"
        )


def member_path(name: str, strip_top: bool) -> str | None:
    """The tree-relative POSIX path of a member name, or None when it is unsafe
    (absolute, or with a ``..`` part) or names the archive's top folder itself."""
    if name.startswith("/") or "\\" in name:
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        return None
    if strip_top:
        parts = parts[1:]
    return posixpath.join(*parts) if parts else None


def _kind(member: tarfile.TarInfo) -> str | None:
    if member.isreg():
        return None
    if member.issym() or member.islnk():
        return "link"
    return "special file"


def archive_files(
    stream: IO[bytes],
    config: RepoConfig,
    limits: ArchiveLimits,
    *,
    strip_top: bool = False,
    stats: ArchiveStats | None = None,
) -> Iterator[TreeFile]:
    """The files of the tar (optionally compressed) read from ``stream``, in order.

    Raises ``ArchiveTooLarge`` past a limit and ``ArchiveError`` for a broken archive.
    """
    stats = stats if stats is not None else ArchiveStats()
    last: str | None = None  # the member read last, to say where an archive broke
    try:
        with tarfile.open(fileobj=stream, mode="r|*", tarinfo=BoundedTarInfo) as tar:
            for member in tar:
                last = member.name
                if stats.commit is None:
                    stats.commit = _commit(tar)
                if member.isdir():
                    continue
                _count(stats, member, limits)
                entry = _entry(tar, member, config, strip_top)
                if entry is not None:
                    yield entry
    except _BROKEN as exc:
        where = f"after member {last!r}" if last is not None else "at its first member"
        raise _unreadable(exc, where) from None


#: What a broken or truncated archive raises while it is read (tarfile lets an
#: IndexError or a KeyError out of some truncated headers).
_BROKEN = (tarfile.TarError, EOFError, OSError, zlib.error, ValueError, IndexError, KeyError)


def _unreadable(exc: BaseException, where: str) -> ArchiveError:
    return ArchiveError(f"the archive cannot be read {where}: {type(exc).__name__}: {exc}")


def _count(stats: ArchiveStats, member: tarfile.TarInfo, limits: ArchiveLimits) -> None:
    stats.members += 1
    stats.total_bytes += max(member.size, 0)
    if stats.members > limits.max_members:
        raise ArchiveTooLarge(
            f"the archive has more than {limits.max_members} members "
            "(REVIEWBOT_ARCHIVE_MAX_MEMBERS); nothing more was read"
        )
    if stats.total_bytes > limits.max_total_bytes:
        raise ArchiveTooLarge(
            f"the archive expands to more than {limits.max_total_bytes} bytes "
            "(REVIEWBOT_ARCHIVE_MAX_BYTES); nothing more was read"
        )


def _entry(
    tar: tarfile.TarFile, member: tarfile.TarInfo, config: RepoConfig, strip_top: bool
) -> TreeFile | None:
    path = member_path(member.name, strip_top)
    mtime_ns = int(member.mtime) * 1_000_000_000

    if path is None:
        return TreeFile(member.name, 0, mtime_ns, _unread, skipped="unsafe path")
    if pruned(tuple(path.split("/")[:-1])) or not config.wants(path):
        return None
    kind = _kind(member)
    if kind is not None:
        return TreeFile(path, 0, mtime_ns, _unread, skipped=kind)
    if member.size > config.max_file_bytes:
        reason = _too_large(member.size, config)
        return TreeFile(path, member.size, mtime_ns, _unread, skipped=reason)

    def read() -> bytes:
        try:
            handle = tar.extractfile(member)
            return handle.read() if handle is not None else b""
        except _BROKEN as exc:  # read later, outside archive_files' own loop
            raise _unreadable(exc, f"in member {member.name!r}") from None

    return TreeFile(path, member.size, mtime_ns, read)


def _unread() -> bytes:
    return b""


def _too_large(size: int, config: RepoConfig) -> str:
    return f"too large ({size} bytes > {config.max_file_bytes})"


def _commit(tar: tarfile.TarFile) -> str | None:
    """git archive and GitHub put the commit id in the pax global header's comment."""
    comment = (tar.pax_headers or {}).get("comment", "")
    return comment if len(comment) in (40, 64) and comment.isalnum() else None


@dataclass
class GitArchiveSource:
    """A commit of a local git repository, streamed from ``git archive`` as committed
    (``app/git_archive.py``: files marked ``export-ignore`` are indexed too)."""

    git_dir: str
    rev: str
    config_bytes: bytes | None
    limits: ArchiveLimits

    @property
    def label(self) -> str:
        return f"{self.git_dir}@{self.rev[:12]}"

    def config(self) -> RepoConfig:
        return repo_config_from(self.config_bytes, f"{self.rev[:12]}:.reviewbot.toml")

    def files(self, config: RepoConfig) -> Iterator[TreeFile]:
        """The commit's files; those over ``config.max_file_bytes`` (or whose object the
        clone lacks) are reported skipped from the tree's listing, never archived."""
        commit = LocalRepo(Path(self.git_dir)).resolve(self.rev)
        oversized = oversized_blobs(self.git_dir, commit, config.max_file_bytes)
        for path, size in oversized.items():
            if not pruned(tuple(path.split("/")[:-1])) and config.wants(path):
                reason = "object missing" if size is None else _too_large(size, config)
                yield TreeFile(path, size or 0, 0, _unread, skipped=reason)
        with archive_as_committed(self.git_dir, commit, leave_out=list(oversized)) as proc:
            assert proc.stdout is not None and proc.stderr is not None
            try:
                yield from archive_files(proc.stdout, config, self.limits)
            except ArchiveError:
                if proc.wait() != 0:
                    said = proc.stderr.read().decode("utf-8", "replace").strip().splitlines()
                    raise ArchiveError(
                        f"git archive {self.rev} failed: {said[-1] if said else proc.returncode}"
                    ) from None
                raise
            finally:
                proc.kill()
                proc.stdout.close()
                proc.stderr.close()

    def commit(self) -> str:
        return self.rev

    def removed_paths(self) -> None:
        return None


@dataclass
class TarballSource:
    """A compressed tarball (GitHub's, spooled to a temporary file), whose top folder is
    stripped; read from the start each time ``files`` is called."""

    name: str
    stream: IO[bytes]
    config_bytes: bytes | None
    limits: ArchiveLimits
    stats: ArchiveStats | None = None

    @property
    def label(self) -> str:
        return self.name

    def config(self) -> RepoConfig:
        return repo_config_from(self.config_bytes, f"{self.name}:.reviewbot.toml")

    def files(self, config: RepoConfig) -> Iterator[TreeFile]:
        self.stats = ArchiveStats()
        self.stream.seek(0)
        yield from archive_files(self.stream, config, self.limits, strip_top=True, stats=self.stats)

    def commit(self) -> str | None:
        return self.stats.commit if self.stats else None

    def removed_paths(self) -> None:
        return None
